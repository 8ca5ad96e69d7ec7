"""What makes the model fast on the hardware at hand, for training and for the torch engine alike.

* :mod:`hf_seq2seq.acceleration.cpu_features`: what the CPU can do (bf16/fp16 matmuls, its instruction sets).
* :mod:`hf_seq2seq.acceleration.cuda_graphs`: a training step's forward and backward replayed as CUDA graphs.
* :mod:`hf_seq2seq.acceleration.compilation`: `torch.compile` of the model's repeated layers.
* :mod:`hf_seq2seq.acceleration.attention_kernels`: the attention kernels training may use.
"""

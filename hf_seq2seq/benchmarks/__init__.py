"""Benchmarks: how fast a model trains and translates, measured side by side.

* :mod:`hf_seq2seq.benchmarks.marian`: speed against `MarianMTModel` at identical sizes (`hf-seq2seq benchmark`),
  with :mod:`hf_seq2seq.benchmarks.marian_runs` (what it times), :mod:`hf_seq2seq.benchmarks.peak` (the share
  of the matmul peak) and :mod:`hf_seq2seq.benchmarks.marian_table` (its table);
* :mod:`hf_seq2seq.benchmarks.exports`: a trained model's exports against its own `generate()` and Marian's
  (`hf-seq2seq benchmark --exports`);
* :mod:`hf_seq2seq.benchmarks.training_options`: what `--gradient_checkpointing` and `--torch_compile` give
  (`hf-seq2seq measure-training`);
* :mod:`hf_seq2seq.benchmarks.comparison`: recipes trained side by side (`hf-seq2seq compare`);
* :mod:`hf_seq2seq.benchmarks.measuring`: the tools they share; :mod:`hf_seq2seq.benchmarks.choices`: the sizes
  and dtypes they measure (torch-free, for the command line's parsers).
"""

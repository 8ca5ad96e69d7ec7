"""The engines: what translates sentences with a saved model, behind one interface.

* :mod:`hf_seq2seq.engines.base`: the `Translator` interface every engine implements, and `translate`.
* :mod:`hf_seq2seq.engines.decoding`: the decoding settings all engines share (`Decoding`), batching by length.
* :mod:`hf_seq2seq.engines.scoring`: `Score`, how sure the model is of a translation (`Translator.score`).
* :mod:`hf_seq2seq.engines.alignment`: word alignments from any engine's cross-attention (`align_pairs`).
* :mod:`hf_seq2seq.engines.torch_engine`: the model folder in torch (fp32, bf16, int8), with
  :mod:`~hf_seq2seq.engines.packed_weights` (its faster Linear layers for greedy search).
* :mod:`hf_seq2seq.engines.ctranslate2_engine`, :mod:`hf_seq2seq.engines.onnxruntime_engine`: the exports
  (CTranslate2's without torch or transformers: :mod:`~hf_seq2seq.engines.export_files`).
* :mod:`hf_seq2seq.engines.factory`: `load_translator`, which picks the engine for a folder.
"""

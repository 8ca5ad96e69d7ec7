"""Exports of a saved model folder for other inference engines (`hf-seq2seq export`).

* :mod:`hf_seq2seq.export.ctranslate2`: CTranslate2 (float32, bfloat16, int8).
* :mod:`hf_seq2seq.export.onnx`: ONNX (fp32, int8 weights), the graphs transformers.js and Optimum read;
  :mod:`hf_seq2seq.export.onnx_merge` merges its two decoder graphs into one.
* :mod:`hf_seq2seq.export.metadata`: the one metadata schema of both exports, and the reading of earlier ones.
* :mod:`hf_seq2seq.export.folder`: what the export folders share: their layouts and the one check of an export
  folder (torch-free, for the command line).

The engines that translate with the exports are in :mod:`hf_seq2seq.engines`.
"""

"""Exports of a saved model folder for other inference engines (`hf-seq2seq export`).

* :mod:`hf_seq2seq.export.ctranslate2`: CTranslate2 (float32, bfloat16, int8).
* :mod:`hf_seq2seq.export.onnx`: ONNX (fp32, int8 weights), the graphs transformers.js and Optimum read.
* :mod:`hf_seq2seq.export.folder`: what the export folders share: their metadata file and the check of an
  ONNX export (torch-free, for the command line).

The engines that translate with the exports are in :mod:`hf_seq2seq.engines`.
"""

"""What a Hub folder holds beyond a saved model folder, and the sentence it is checked with.

These names are shared by building the folder (`hf_seq2seq.hub.push`), its model card (`hf_seq2seq.hub.card`),
its offline check (`hf_seq2seq.hub.validation`) and `hf-seq2seq push` (`hf_seq2seq.cli.push`). This module
imports neither torch nor transformers, so that the command line can build its parser without them.
"""

RESULTS_DIR = "results"
"""Folder of the Hub folder that holds the published results, one JSON file each."""

CTRANSLATE2_DIR = "ctranslate2"
"""Folder of the Hub folder that holds the CTranslate2 export (`push --with-ctranslate2`)."""

ONNX_DIR = "onnx"
"""Folder of the Hub folder that holds the ONNX export's graphs and config (`push --with-onnx`)."""

DEFAULT_SENTENCE = "How are you?"
"""Sentence translated by :func:`hf_seq2seq.hub.validation.validate_hub_folder` (and `push --sentence`'s default)."""

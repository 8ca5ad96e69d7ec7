"""The factory of the engines: `load_translator` loads a folder as the `hf_seq2seq.engines.base.Translator`
of the engine it names: `hf_seq2seq.engines.torch_engine.TorchTranslator` (a saved model folder),
`hf_seq2seq.engines.ctranslate2_engine.CTranslate2Translator` (an export of `hf-seq2seq export ctranslate2`) or
`hf_seq2seq.engines.onnxruntime_engine.OnnxTranslator` (an export of `hf-seq2seq export onnx`). A folder's kind,
the engine it is for, is told from its files in one place, `engine_of`, and checked by `check_folder`.

This module imports neither torch nor an engine's package: `load_translator` imports the engine it loads.
"""

from __future__ import annotations

import os
from pathlib import Path

from hf_seq2seq.engines.base import ENGINES, Translator
from hf_seq2seq.export.folder import EXPORT_FILE, SUBFOLDER, check_export, check_onnx_export
from hf_seq2seq.export.metadata import read_metadata


def engine_of(folder: str | os.PathLike[str]) -> str:
    """The engine a folder is for, from its files (what `--engine auto` picks): "torch" for a model folder (its
    safetensors weights; a Hub repository with an export beside the model too), "ctranslate2" for an export of
    `hf-seq2seq export ctranslate2` (its `model.bin` and metadata), "onnxruntime" for an ONNX export (its
    metadata of format onnx, at the top or in onnx/), "torch" for anything else (a Hub id)."""
    folder = Path(folder)
    if any((folder / name).is_file() for name in ("model.safetensors", "model.safetensors.index.json")):
        return "torch"
    if (folder / "model.bin").is_file() and (folder / EXPORT_FILE).is_file():
        return "ctranslate2"
    for place in (folder, folder / SUBFOLDER):
        metadata = read_metadata(place)
        if metadata is not None and metadata.format == "onnx":
            return "onnxruntime"
    return "torch"


def check_folder(folder: str | os.PathLike[str], engine: str = "auto") -> str:
    """The engine `folder` loads with (`engine`; "auto": the one it is for, `engine_of`), once checked that it
    can: a model folder's files (`hf_seq2seq.models.folder.check_model_folder`), an export's
    (`hf_seq2seq.export.folder.check_export`). Raises the `FolderError` naming what is wrong, so that a command
    fails at once rather than when it loads the folder."""
    engine = engine_of(folder) if engine == "auto" else engine
    if engine == "ctranslate2":
        check_export(folder, "ctranslate2")
    elif engine == "onnxruntime":
        check_onnx_export(folder)
    elif engine == "torch":
        from hf_seq2seq.models.folder import check_model_folder

        check_model_folder(folder)
    else:
        raise ValueError(f"engine must be auto or one of {', '.join(ENGINES)}; got {engine!r}")
    return engine


def load_translator(
    folder: str | os.PathLike[str],
    engine: str = "torch",
    precision: str = "fp32",
    trust_remote_code: bool = False,
) -> Translator:
    """The `Translator` of `folder` for `engine` (one of `ENGINES`):

    * "torch": a saved model folder, at `precision` (`hf_seq2seq.engines.base.TORCH_PRECISIONS`; see
      `hf_seq2seq.engines.torch_engine.set_precision`), on cuda if available, else cpu
      (`hf_seq2seq.engines.torch_engine.TorchTranslator`);
    * "ctranslate2": an export of `hf-seq2seq export ctranslate2`
      (`hf_seq2seq.engines.ctranslate2_engine.CTranslate2Translator`), which keeps the weight type it was
      exported with: `precision` is "fp32" (the default, meaning as exported) or the export's quantization;
    * "onnxruntime": an ONNX export, loaded by
      `hf_seq2seq.engines.onnxruntime_engine.OnnxTranslator(folder, precision=...)`.

    "auto" is the engine the folder is for (`engine_of`). `trust_remote_code` is for the torch engine (a Hub
    folder's own code). Raises ValueError for an unknown engine or a precision the engine does not take.
    """
    if engine == "auto":
        engine = engine_of(folder)
    if engine == "torch":
        from hf_seq2seq.engines.base import TORCH_PRECISIONS
        from hf_seq2seq.engines.torch_engine import TorchTranslator, load_model_and_tokenizer

        if precision not in TORCH_PRECISIONS:  # before loading the model
            raise ValueError(f"precision must be one of {', '.join(TORCH_PRECISIONS)}; got {precision!r}")
        model, tokenizer = load_model_and_tokenizer(folder, trust_remote_code=trust_remote_code)
        return TorchTranslator(model, tokenizer, precision)
    if engine == "ctranslate2":
        from hf_seq2seq.engines.ctranslate2_engine import CTranslate2Translator

        # "fp32", the command line's default, keeps the export's weight type, as it always has
        return CTranslate2Translator(folder, precision=None if precision == "fp32" else precision)
    if engine == "onnxruntime":
        from hf_seq2seq.engines.onnxruntime_engine import OnnxTranslator

        return OnnxTranslator(folder, precision=precision)
    raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {engine!r}")

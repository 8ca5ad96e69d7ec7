"""What the export folders share, their layouts and the one check of an export folder (:func:`check_export`).

Both exports (`hf_seq2seq.export.ctranslate2`, `hf_seq2seq.export.onnx`) record what they hold in
:data:`EXPORT_FILE`, in one schema (`hf_seq2seq.export.metadata`), and refuse an output folder as
:func:`check_output_folder` says. :func:`check_export` checks either export for its engine
(`hf_seq2seq.engines.ctranslate2_engine`, `hf_seq2seq.engines.onnxruntime_engine`); :func:`check_onnx_export`
adds what the ONNX graphs need, for that engine and the web page (`hf_seq2seq.apps.webpage`). Only the standard
library is imported here (and `hf_seq2seq.errors`), so that `hf-seq2seq web` runs without torch.

A CTranslate2 export:

    EXPORT_DIR/
      model.bin, config.json, shared_vocabulary.json   CTranslate2's
      hf_seq2seq_export.json          what the export holds (format "ctranslate2", weight type, longest source)
      generation_config.json, tokenizer.json, tokenizer_config.json

An ONNX export:

    EXPORT_DIR/
      config.json                     a Marian-type config, which the runtimes read
      hf_seq2seq_export.json          what the export holds (format "onnx", longest source, parameters)
      generation_config.json, tokenizer.json, tokenizer_config.json
      onnx/encoder_model.onnx, onnx/decoder_model_merged.onnx                  fp32
      onnx/encoder_model_quantized.onnx, onnx/decoder_model_merged_quantized.onnx   int8 ("q8" in transformers.js)
      onnx/cross_attention_model[_quantized].onnx   the decoder's cross-attention, for word alignments (this
                                      package's own graph, which the runtimes ignore; exports before it lack it)
      onnx/config.json, onnx/hf_seq2seq_export.json   copies, so that onnx/ stands on its own

A Hub repository of `hf-seq2seq push --with-onnx` has the PyTorch model at its top and the export's `onnx/`
beside it: its tokenizer and generation config are the model's, its Marian config and metadata those of onnx/.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path

from hf_seq2seq.errors import ExportError
from hf_seq2seq.export.metadata import EXPORT_FILE, ExportMetadata, NotAnExport, read_metadata

QUANTIZATIONS = (
    "int8",
    "int8_float32",
    "bfloat16",
    "float32",
)  # CTranslate2's weight types an export may keep
SUBFOLDER = "onnx"
ENCODER = "encoder_model"
DECODER = "decoder_model_merged"
CROSS_ATTENTION = "cross_attention_model"
QUANTIZED_SUFFIX = "_quantized"
GRAPH_SUFFIXES = {"fp32": "", "int8": QUANTIZED_SUFFIX}  # precision -> the graph files' suffix
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
SHARED_FILES = (*TOKENIZER_FILES, "generation_config.json")  # at the top of every export folder
CTRANSLATE2_FILES = ("model.bin", "config.json", "shared_vocabulary.json")
RUNTIME_MODEL_TYPES = ("marian", "bart", "mbart")  # encoder-decoder types transformers.js and Optimum run


def check_output_folder(model_dir: Path, output_dir: Path, force: bool) -> None:
    """Refuse (`ExportError`) an export folder `output_dir` that is the model folder `model_dir` or contains
    it, or that exists unless `force`."""
    if output_dir.resolve() in (model_dir.resolve(), *model_dir.resolve().parents):
        raise ExportError(f"the export folder {output_dir} must not be the model folder or contain it")
    if output_dir.exists() and not force:
        raise ExportError(f"{output_dir} exists; choose another folder or replace it (--force, force=True)")


def cache_names(kind: str, layers: int) -> list[str]:
    """`{kind}.{i}.decoder.key`, `.decoder.value`, `.encoder.key`, `.encoder.value` for each layer, in order."""
    return [
        f"{kind}.{i}.{part}.{tensor}"
        for i in range(layers)
        for part in ("decoder", "encoder")
        for tensor in ("key", "value")
    ]


NotAnOnnxExport = NotAnExport
"""The name of `NotAnExport` from before both exports had one check."""

_NAMES = {"ctranslate2": "a CTranslate2 export", "onnx": "an ONNX export"}


@dataclass(frozen=True)
class ExportFolder:
    """A checked export: `folder` (tokenizer, generation config) and `place`, where its metadata (read) and its
    engine's files are: `folder`, or `folder/onnx` for an ONNX export in a Hub repository."""

    folder: Path
    place: Path
    metadata: ExportMetadata

    @property
    def top_level(self) -> bool:
        """Whether the export's metadata is at the top of `folder` (an export folder, not a Hub repository)."""
        return self.place == self.folder


def check_export(folder: str | os.PathLike[str], format: str) -> ExportFolder:
    """`folder` as an `ExportFolder` of `format` ("ctranslate2" or "onnx"), or `NotAnExport` naming what is
    missing and how to make the export."""
    folder = Path(folder)
    if not folder.is_dir():
        raise NotAnExport(f"{folder} is not a folder")
    hint = f"make one with: hf-seq2seq export {format} MODEL_DIR {folder}"
    places = (folder, folder / SUBFOLDER) if format == "onnx" else (folder,)
    found = ((place, read_metadata(place)) for place in places)
    place, metadata = next(((p, m) for p, m in found if m is not None and m.format == format), (None, None))
    if place is None:
        if (folder / "config.json").is_file() and not any(
            (folder / name).exists() for name in (SUBFOLDER, EXPORT_FILE, "model.bin")
        ):  # a saved model, most likely
            hint = f"export it with: hf-seq2seq export {format} {folder} {folder}-{format}"
            raise NotAnExport(f"{folder} is a saved model folder, not {_NAMES[format]}; {hint}")
        raise NotAnExport(f"{folder} is not {_NAMES[format]} (no {EXPORT_FILE} of format {format}); {hint}")
    engine_files = CTRANSLATE2_FILES if format == "ctranslate2" else ("config.json",)
    required = [*(place / name for name in engine_files), *(folder / name for name in SHARED_FILES)]
    missing = [str(path.relative_to(folder)) for path in required if not path.is_file()]
    if missing:
        raise NotAnExport(f"{_NAMES[format]} {folder} lacks {', '.join(missing)}; {hint}")
    return ExportFolder(folder, place, metadata)


@dataclass(frozen=True)
class OnnxExport(ExportFolder):
    """A checked ONNX export: an `ExportFolder`, its Marian config (read) and the precisions whose graphs it has."""

    config: dict
    precisions: tuple[str, ...]

    @property
    def max_source_length(self) -> int:
        return self.metadata.max_source_length

    def graphs(self, precision: str) -> tuple[Path, Path]:
        """The encoder and merged decoder files of `precision`; NotAnExport if the export lacks them."""
        if precision not in self.precisions:
            raise NotAnExport(
                f"{self.folder} has no {precision} graphs (it has: {', '.join(self.precisions)})"
                + ("; export with --quantization int8 for them" if precision == "int8" else "")
            )
        suffix = GRAPH_SUFFIXES[precision]
        return tuple(self.folder / SUBFOLDER / f"{graph}{suffix}.onnx" for graph in (ENCODER, DECODER))

    def cross_attention_graph(self, precision: str) -> Path | None:
        """The cross-attention graph of `precision` (word alignments), None in an export made before it."""
        path = self.folder / SUBFOLDER / f"{CROSS_ATTENTION}{GRAPH_SUFFIXES[precision]}.onnx"
        return path if path.is_file() else None


def check_onnx_export(folder: str | os.PathLike[str]) -> OnnxExport:
    """`check_export(folder, "onnx")`, and a Marian-type config and the graphs of a precision: an `OnnxExport`,
    or `NotAnExport` naming what is missing and how to make the export."""
    export = check_export(folder, "onnx")
    folder, place = export.folder, export.place
    hint = f"make one with: hf-seq2seq export onnx MODEL_DIR {folder}"
    config = json.loads((place / "config.json").read_text(encoding="utf-8"))
    if not config.get("is_encoder_decoder") or config.get("model_type") not in RUNTIME_MODEL_TYPES:
        raise NotAnExport(
            f"{place}/config.json declares model_type {config.get('model_type')!r}: the runtimes load this export "
            "as an encoder-decoder (Marian) model; the export writes model_type 'marian'; " + hint
        )
    precisions = tuple(
        precision
        for precision, suffix in GRAPH_SUFFIXES.items()
        if all((folder / SUBFOLDER / f"{graph}{suffix}.onnx").is_file() for graph in (ENCODER, DECODER))
    )
    if not precisions:
        raise NotAnExport(
            f"{folder}/{SUBFOLDER} has neither {ENCODER}.onnx + {DECODER}.onnx nor their {QUANTIZED_SUFFIX} "
            f"versions; {hint}"
        )
    return OnnxExport(folder, place, export.metadata, config, precisions)

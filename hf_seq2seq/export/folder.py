"""What the export folders share, and the layout and the one check of an ONNX export.

Both exports (`hf_seq2seq.export.ctranslate2`, `hf_seq2seq.export.onnx`) record what they hold in
:data:`EXPORT_FILE` and refuse an output folder as :func:`check_output_folder` says. The ONNX export's
layout and its check (:func:`check_onnx_export`) serve the ONNX Runtime engine
(`hf_seq2seq.engines.onnxruntime_engine`) and the web page (`hf_seq2seq.apps.webpage`). Only the standard library is imported here (and
`hf_seq2seq.errors`), so that `hf-seq2seq web` runs without torch.

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

from hf_seq2seq.errors import FolderError

EXPORT_FILE = "hf_seq2seq_export.json"
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
RUNTIME_MODEL_TYPES = ("marian", "bart", "mbart")  # encoder-decoder types transformers.js and Optimum run


def check_output_folder(model_dir: Path, output_dir: Path, force: bool) -> None:
    """Refuse (`ExportError`) an export folder `output_dir` that is the model folder `model_dir` or contains
    it, or that exists unless `force`."""
    # imported here: the rest of this module needs the standard library only (see above)
    from hf_seq2seq.models.folder import ExportError

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


class NotAnOnnxExport(FolderError, ValueError):
    """A folder that is not a usable ONNX export; the message names what is missing and how to make one."""


@dataclass(frozen=True)
class OnnxExport:
    """A checked export: `folder` (tokenizer, generation config), `place` (its config.json and metadata:
    `folder`, or `folder/onnx` in a Hub repository), both read, and the precisions whose graphs it has."""

    folder: Path
    place: Path
    config: dict
    metadata: dict
    precisions: tuple[str, ...]

    @property
    def top_level(self) -> bool:
        """Whether the export's Marian config is at the top of `folder` (an export folder, not a Hub repository)."""
        return self.place == self.folder

    @property
    def max_source_length(self) -> int:
        return int(
            self.metadata.get("max_source_length") or self.config.get("max_position_embeddings") or 512
        )

    def graphs(self, precision: str) -> tuple[Path, Path]:
        """The encoder and merged decoder files of `precision`; NotAnOnnxExport if the export lacks them."""
        if precision not in self.precisions:
            raise NotAnOnnxExport(
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
    """`folder` as an `OnnxExport`, or NotAnOnnxExport naming what is missing and how to make the export."""
    folder = Path(folder)
    if not folder.is_dir():
        raise NotAnOnnxExport(f"{folder} is not a folder")
    hint = f"make one with: hf-seq2seq export onnx MODEL_DIR {folder}"
    place = next((p for p in (folder, folder / SUBFOLDER) if _export_format(p) == "onnx"), None)
    if place is None:
        if (folder / "config.json").is_file() and not (
            folder / SUBFOLDER
        ).is_dir():  # a saved model, most likely
            hint = f"export it with: hf-seq2seq export onnx {folder} {folder}-onnx"
            raise NotAnOnnxExport(f"{folder} is a saved model folder, not an ONNX export (no onnx/); {hint}")
        raise NotAnOnnxExport(f"{folder} is not an ONNX export (no {EXPORT_FILE} of format onnx); {hint}")
    missing = [str(path.relative_to(folder)) for path in _required_files(folder, place) if not path.is_file()]
    if missing:
        raise NotAnOnnxExport(f"the ONNX export {folder} lacks {', '.join(missing)}; {hint}")
    config = json.loads((place / "config.json").read_text(encoding="utf-8"))
    if not config.get("is_encoder_decoder") or config.get("model_type") not in RUNTIME_MODEL_TYPES:
        raise NotAnOnnxExport(
            f"{place}/config.json declares model_type {config.get('model_type')!r}: the runtimes load this export "
            "as an encoder-decoder (Marian) model; the export writes model_type 'marian'; " + hint
        )
    precisions = tuple(
        precision
        for precision, suffix in GRAPH_SUFFIXES.items()
        if all((folder / SUBFOLDER / f"{graph}{suffix}.onnx").is_file() for graph in (ENCODER, DECODER))
    )
    if not precisions:
        raise NotAnOnnxExport(
            f"{folder}/{SUBFOLDER} has neither {ENCODER}.onnx + {DECODER}.onnx nor their {QUANTIZED_SUFFIX} "
            f"versions; {hint}"
        )
    metadata = json.loads((place / EXPORT_FILE).read_text(encoding="utf-8"))
    return OnnxExport(folder, place, config, metadata, precisions)


def _export_format(place: Path) -> str | None:
    """The `format` its metadata file declares (None without one)."""
    metadata = place / EXPORT_FILE
    if not metadata.is_file():
        return None
    return json.loads(metadata.read_text(encoding="utf-8")).get("format")


def _required_files(folder: Path, place: Path) -> list[Path]:
    return [place / "config.json", *(folder / name for name in (*TOKENIZER_FILES, "generation_config.json"))]

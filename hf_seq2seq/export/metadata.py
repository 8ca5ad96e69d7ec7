"""The one metadata schema of both exports: what :data:`EXPORT_FILE` says about the export beside it.

Both exports (`hf_seq2seq.export.ctranslate2`, `hf_seq2seq.export.onnx`) write an :class:`ExportMetadata`, and
every reader takes it through :func:`read_metadata` (by way of `hf_seq2seq.export.folder.check_export`, the one
check of an export folder). The file, schema 2::

    {
      "schema": 2,
      "format": "ctranslate2",            or "onnx"
      "source_model_type": "transformer_mt",
      "max_source_length": 512,           the longest source the model takes, in tokens
      "parameters": 44612608,
      "quantization": "int8",             the export's --quantization: CTranslate2's stored weight type; ONNX:
                                          "int8" (int8 graphs beside the fp32 ones) or "float32"
      "format_version": "4.6.0",          the ctranslate2 package that wrote it, or the ONNX opset ("18")
      "alignment": {"layer": -1, "heads": "all"},  the attention a CTranslate2 export returns for word
                                          alignments; null for ONNX (its cross-attention graph is a file)
      "source_language": "fr",            the model's pair, as its folder records it
      "target_language": "en"             (`hf_seq2seq.models.languages.model_languages`); null where it
    }                                     records none. Exports of 0.1.0 lack both: their pair is given where
                                          they are served (`require_languages`), never guessed

Exports made before this schema wrote one of two others (schema 1, no `schema` key), which
:func:`read_metadata` reads as they were: CTranslate2's (`model_type`, `max_source_length`, `parameters`,
`quantization`, `ctranslate2_version`, `alignment` from the release that added alignments on) and ONNX's
(`format`, `source_model_type`, `precisions`, `max_source_length`, `parameters`, `opset`).

Only the standard library is imported here (and `hf_seq2seq.errors`, `hf_seq2seq.models.languages`), so that
`hf-seq2seq web` runs without torch.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, fields
from pathlib import Path

from hf_seq2seq.errors import ExportError
from hf_seq2seq.models.languages import EXPORT_FILE, model_languages

SCHEMA = 2
FORMATS = ("ctranslate2", "onnx")


class NotAnExport(ExportError):
    """A folder that is not a usable export of the format asked for; the message names what is missing and how
    to make one."""


@dataclass(frozen=True)
class ExportMetadata:
    """What an export holds (the module's doc has the file)."""

    format: str
    source_model_type: str
    max_source_length: int
    parameters: int
    quantization: str
    format_version: str
    alignment: dict | None = None
    source_language: str | None = None
    target_language: str | None = None

    def write(self, folder: Path) -> Path:
        """Write the metadata as `folder`'s :data:`EXPORT_FILE`; returns the file."""
        path = Path(folder) / EXPORT_FILE
        path.write_text(json.dumps({"schema": SCHEMA, **asdict(self)}, indent=2) + "\n", encoding="utf-8")
        return path


def export_languages(model_dir: Path) -> dict:
    """The `source_language` and `target_language` of an export of the model folder `model_dir`: the pair it
    records, None for each where it records none."""
    source, target = model_languages(model_dir) or (None, None)
    return {"source_language": source, "target_language": target}


# what each field must hold, for the message of a file that breaks the schema
_TYPES = {
    "max_source_length": int,
    "parameters": int,
    "alignment": (dict, type(None)),
    "source_language": (str, type(None)),
    "target_language": (str, type(None)),
}


def read_metadata(place: Path) -> ExportMetadata | None:
    """The :data:`EXPORT_FILE` of `place` (either schema), None if `place` has none; `NotAnExport` naming the
    fields a file lacks or holds wrong."""
    path = Path(place) / EXPORT_FILE
    if not path.is_file():
        return None
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
        data = data if "schema" in data else _from_schema_1(data)
        values = {field.name: data.get(field.name) for field in fields(ExportMetadata)}
    except (ValueError, TypeError, AttributeError) as error:  # not JSON, or not an object
        raise NotAnExport(f"{path} is not a JSON object ({error}); export the model again") from None
    wrong = [
        name
        for name, value in values.items()
        if not isinstance(value, _TYPES.get(name, str)) or (name == "format" and value not in FORMATS)
    ]
    if wrong:
        raise NotAnExport(
            f"{path} lacks or holds wrong: {', '.join(wrong)} (schema {data.get('schema', 1)}); export the model again"
        )
    return ExportMetadata(**values)


def _from_schema_1(data: dict) -> dict:
    """A file of an export made before schema 2, under schema 2's names."""
    if data.get("format") == "onnx":
        return {
            **data,
            "quantization": "int8" if "int8" in data.get("precisions", ()) else "float32",
            "format_version": None if data.get("opset") is None else str(data["opset"]),
        }
    return {  # CTranslate2's, which named no format
        **data,
        "format": "ctranslate2",
        "source_model_type": data.get("model_type"),
        "format_version": data.get("ctranslate2_version"),
    }

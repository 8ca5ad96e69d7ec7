"""A saved folder's language pair, read from its files alone (no transformers, no torch): what `hf-seq2seq
serve`, `translate`, `demo` and `web` take a folder's direction from; and the languages' names they show.

A folder records its pair in two places: the ``translation_<src>_to_<tgt>`` pipeline task of its ``config.json``
(training registers it: `hf_seq2seq.models.folder.register_pipeline`), and the ``direction`` of its result
files (`TRAINING_REPORT`, `EVAL_REPORT`: `hf_seq2seq.evaluation.report`'s). An export folder of
`hf-seq2seq export` records the model's pair in its metadata (`EXPORT_FILE`: ``source_language``,
``target_language``). A folder that records none (an export made by 0.1.0, a model saved without its
direction registered) is never guessed: its pair is given where it is used (`require_languages`).
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from hf_seq2seq.errors import HfSeq2SeqError

LANGUAGE_NAMES = {
    "am": "Amharic", "ar": "Arabic", "bg": "Bulgarian", "da": "Danish", "de": "German", "el": "Greek",
    "en": "English", "es": "Spanish", "fa": "Persian", "fr": "French", "hi": "Hindi", "hy": "Armenian",
    "it": "Italian", "ja": "Japanese", "kk": "Kazakh", "mr": "Marathi", "my": "Burmese", "nl": "Dutch",
    "pl": "Polish", "pt": "Portuguese", "ru": "Russian", "sk": "Slovak", "ur": "Urdu", "zh": "Chinese",
}  # fmt: skip
"""English names of language codes, as LibreTranslate lists them."""
TRAINING_REPORT = "test_results.json"
"""Written by training into its output folder: the test split's result."""
EVAL_REPORT = "eval_report.json"
"""Written by `hf-seq2seq evaluate` into its output folder."""
EXPORT_FILE = "hf_seq2seq_export.json"
"""An export's metadata (`hf_seq2seq.export.metadata`, which takes the name from here, below it): at the top of
an export folder, or in its ``onnx/`` subfolder (a Hub repository's ONNX export)."""


class UnknownLanguagePair(HfSeq2SeqError, ValueError):
    """A folder that records no language pair, used where none is given; the message names the flag to give."""


def language_name(code: str) -> str:
    """A language's English name (the code itself for one `LANGUAGE_NAMES` lacks)."""
    return LANGUAGE_NAMES.get(code, code)


def parse_pair(text: str) -> tuple[str, str] | None:
    """A "SRC-TGT" pair (``en-fr``) as (source, target); None for anything else."""
    parts = text.split("-") if isinstance(text, str) else []
    return (parts[0], parts[1]) if len(parts) == 2 and all(parts) else None


def model_languages(folder: str | os.PathLike[str]) -> tuple[str, str] | None:
    """The (source, target) languages a saved folder records: the ``translation_<src>_to_<tgt>`` pipeline
    task of its ``config.json``, else those of its export metadata (`EXPORT_FILE`), else the ``direction`` of
    its result files; None when it records none (an export made by 0.1.0, a folder that is not this
    package's)."""
    folder = Path(folder)
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    for task in (config.get("custom_pipelines") or {}) if isinstance(config, dict) else ():
        parts = task.split("_")
        if len(parts) == 4 and parts[0] == "translation" and parts[2] == "to":
            return parts[1], parts[3]
    for metadata in (folder / EXPORT_FILE, folder / "onnx" / EXPORT_FILE):
        try:
            data = json.loads(metadata.read_text(encoding="utf-8"))
            pair = data.get("source_language"), data.get("target_language")
        except (OSError, ValueError, AttributeError):
            continue
        if all(isinstance(code, str) and code for code in pair):
            return pair
    for name in (TRAINING_REPORT, EVAL_REPORT):
        try:
            direction = json.loads((folder / name).read_text(encoding="utf-8")).get("direction", "")
        except (OSError, ValueError, AttributeError):
            continue
        if pair := parse_pair(direction):
            return pair
    return None


def require_languages(
    folder: str | os.PathLike[str],
    given: tuple[str, str] | None = None,
    give: str = "--languages SRC-TGT (e.g. fr-en)",
) -> tuple[str, str]:
    """`given` if any, else the pair `folder` records (`model_languages`); `UnknownLanguagePair` saying to
    `give` it (the flag that does) when it records none: a model's direction is never guessed."""
    pair = given or model_languages(folder)
    if pair is None:
        raise UnknownLanguagePair(
            f"{folder} records no language pair (an export made by hf_seq2seq 0.1.0, or a model saved without "
            f"its direction registered): give it with {give}, or export it again from a "
            "model folder that records it"
        )
    return pair

"""One result type: the scores of one model on one test set, as training, `evaluate` and the Hub card use them.

Training writes its test-split result to `<output-dir>/test_results.json` and the standard test set's to
`<output-dir>/standard_test_results.json`; `hf-seq2seq evaluate` writes
`<output-dir>/eval_report.json`; the Hub build reads any number of them, one `model-index` entry each. All are
an `EvalReport` saved as JSON::

    {
      "bleu": 41.27, "chrf": 60.05,                   # required: sacrebleu corpus scores (0-100)
      "bleu_signature": "nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0",   # required
      "chrf_signature": "nrefs:var|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.6.0",  # required
      "num_sentences": 1192, "num_references": 9,     # sources scored; most references of one source
      "model": "runs/cpu",                            # the folder (or Hub id) that was scored
      "dataset": "fra-eng", "split": "test",          # a named dataset's split, or the source file's path
      "direction": "en-fr",                           # <source>-<target>
      "decoding": {"num_beams": 4, ...},              # the generate() settings used
      "parameters": 7600000, "wall_time_s": 35.1,     # model size; time of the translation (or of the run)
      "loop_share": 0.002, "empty_share": 0.0,        # shares (0-1): looping outputs, empty outputs of non-empty
      "overlong_share": 0.001,                        # sources, outputs of more than 3 times their source's words
      "replaced_overlong": {"hypothesis": 3, "source": 1},   # over-long translations of short sentences replaced:
                                                      # by a shorter one of the n best, by the source as written
      "training": {"preset": "cpu", ...}              # training only: facts about the run
    }
"""

from __future__ import annotations

import json
import math
import os
from dataclasses import MISSING, asdict, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from hf_seq2seq.errors import HfSeq2SeqError

# the result files' names live where a folder's language pair is read from them; imported from here too
from hf_seq2seq.models.languages import EVAL_REPORT as EVAL_REPORT
from hf_seq2seq.models.languages import TRAINING_REPORT as TRAINING_REPORT

STANDARD_REPORT = "standard_test_results.json"
"""Written by training beside `TRAINING_REPORT`: the standard test set's result (`--standard_test_set`)."""


_UNPUBLISHED_TRAINING_KEYS = ("best_checkpoint",)  # a path on the training machine
Scalar = str | int | float | bool


class ReportError(HfSeq2SeqError, ValueError):
    """A result file that is not valid JSON or breaks the schema; the message names the file and the key."""


@dataclass(frozen=True)
class EvalReport:
    """Corpus BLEU/chrF of one model on one test set (sacrebleu scores 0-100 and their signatures), with what
    was translated, how (`decoding`) and, for training's own report, facts about the run (`training`)."""

    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str
    num_sentences: int | None = None
    num_references: int | None = None
    model: str | None = None
    dataset: str = "fra-eng"
    split: str | None = "test"
    direction: str = "en-fr"
    decoding: dict[str, Any] = field(default_factory=dict)
    parameters: int | None = None
    wall_time_s: float | None = None
    loop_share: float | None = None
    empty_share: float | None = None
    overlong_share: float | None = None
    replaced_overlong: dict[str, int] = field(default_factory=dict)
    by_length: list[dict[str, Any]] = field(default_factory=list)
    training: dict[str, Scalar | None] = field(default_factory=dict)
    source: str = field(default="", compare=False, repr=False)
    """The file this report was read from (for messages); not saved."""

    def __post_init__(self) -> None:
        where = self.source or "result"
        for name in ("bleu", "chrf"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise ReportError(f"{where}: `{name}` must be a finite number, got {value!r}")
            if not 0 <= value <= 100:
                raise ReportError(f"{where}: `{name}` is a 0-100 score, got {value!r}")
        for name in ("bleu_signature", "chrf_signature", "direction", "dataset"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise ReportError(f"{where}: `{name}` must be a non-empty string, got {value!r}")
        for name in ("empty_share", "overlong_share"):
            value = getattr(self, name)
            if value is not None and (
                isinstance(value, bool) or not isinstance(value, int | float) or not 0 <= value <= 1
            ):
                raise ReportError(f"{where}: `{name}` is a 0-1 share, got {value!r}")
        for name in ("num_sentences", "num_references", "parameters"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                raise ReportError(f"{where}: `{name}` must be a positive integer, got {value!r}")
        if len(self.direction.split("-")) != 2 or not all(self.direction.split("-")):
            raise ReportError(
                f"{where}: `direction` must be '<source>-<target>' (e.g. 'en-fr'), got {self.direction!r}"
            )
        for name in ("decoding", "training", "replaced_overlong"):
            value = getattr(self, name)
            if not isinstance(value, dict) or not all(isinstance(key, str) for key in value):
                raise ReportError(f"{where}: `{name}` must be an object with string keys, got {value!r}")
        counts = self.replaced_overlong.values()
        if not all(isinstance(value, int) and not isinstance(value, bool) and value >= 0 for value in counts):
            raise ReportError(
                f"{where}: `replaced_overlong` counts sentences, got {self.replaced_overlong!r}"
            )
        bad = {key: value for key, value in self.training.items() if not isinstance(value, Scalar | None)}
        if bad:
            raise ReportError(f"{where}: `training` values must be strings, numbers or booleans; got {bad!r}")

    @property
    def source_lang(self) -> str:
        return self.direction.split("-")[0]

    @property
    def target_lang(self) -> str:
        return self.direction.split("-")[1]

    @property
    def test_set(self) -> str:
        """`dataset:split` for a named dataset, the file's path for a plain-text test set."""
        return f"{self.dataset}:{self.split}" if self.split else self.dataset

    def published(self) -> EvalReport:
        """This report without what only makes sense on the training machine (checkpoint paths)."""
        training = {
            key: value
            for key, value in self.training.items()
            if key not in _UNPUBLISHED_TRAINING_KEYS and value is not None
        }
        return replace(self, training=training)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        del data["source"]
        return data

    def save(self, path: str | os.PathLike[str]) -> Path:
        """Write this report as JSON to `path` (a file, or a folder: then its `test_results.json`)."""
        path = Path(path)
        if path.is_dir():
            path = path / TRAINING_REPORT
        path.write_text(json.dumps(self.to_dict(), indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return path

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EvalReport:
        """Read and check a result file; `ReportError` names a missing, unknown or bad key."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise ReportError(f"{path} is not valid JSON: {error}") from error
        if not isinstance(data, dict):
            raise ReportError(f"{path} must hold a JSON object, got {type(data).__name__}")
        names = [f.name for f in fields(cls) if f.name != "source"]
        required = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING]
        missing = [key for key in required if key not in data]
        if missing:
            raise ReportError(
                f"{path}: missing key(s) {', '.join(missing)} (required: {', '.join(required)}; "
                "see hf_seq2seq.evaluation.report.EvalReport)"
            )
        unknown = sorted(set(data) - set(names))
        if unknown:
            raise ReportError(f"{path}: unknown key(s) {', '.join(unknown)} (known: {', '.join(names)})")
        return cls(**data, source=str(path))

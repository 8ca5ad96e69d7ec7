"""No invented sentences: a model that learned from full sentences may answer a word or a label with a sentence
of its own ("Edit" -> "Les soulagers se sont élevés."). The translation of a short source that runs far longer
than the source is replaced by the best of the model's other candidates that fits (its n best), or, where none
fits, by the source as written: a label left in English loses the reader less than a made-up sentence.

`hf_seq2seq.engines.base.translate_pieces` applies it on every engine (the ratio's choice: docs/recipe.md,
"Over-long translations of short sources"). This module imports nothing of the package.
"""

from __future__ import annotations

from collections.abc import Sequence

SHORT_WORDS = 3
"""Sources of at most this many words (split at spaces) are guarded: labels, menu items, cells, headings."""

LENGTH_RATIO = 3
"""A short source's translation of more than this many times its words is over-long (chosen on the fragment
validation set; the same ratio as `evaluate`'s `overlong_share`)."""

HYPOTHESES = 8
"""The candidates asked of the engine for an over-long translation (beam search with at least as many beams)."""


def overlong(source: str, translation: str, ratio: float = LENGTH_RATIO) -> bool:
    """Whether `translation` of a short `source` has more than `ratio` times its words."""
    words = len(source.split())
    return 0 < words <= SHORT_WORDS and len(translation.split()) > ratio * words


def fitting(source: str, hypotheses: Sequence[str], ratio: float = LENGTH_RATIO) -> str | None:
    """The first (best) of `hypotheses` that is neither blank nor over-long for `source`; None when none is."""
    return next((h for h in hypotheses if h.strip() and not overlong(source, h, ratio)), None)


def replacement(source: str, hypotheses: Sequence[str], ratio: float = LENGTH_RATIO) -> tuple[str, str]:
    """What replaces an over-long translation of `source`, and by what: `(the first fitting one of hypotheses,
    "hypothesis")`, else `(source, "source")`."""
    shorter = fitting(source, hypotheses, ratio)
    return (source, "source") if shorter is None else (shorter, "hypothesis")

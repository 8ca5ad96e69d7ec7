"""Language identification for ``POST /detect`` and ``source: "auto"``: py3langid (a maintained fork of langid.py,
a naive Bayes model over byte n-grams of 140 languages, shipped inside the package and read offline).

`LanguageDetector.rank` gives the likeliest languages of a text with their probabilities;
`LanguageDetector.guess` picks the likeliest of the languages a text may be in (the sources a server translates
into the target asked for) and says whether the text is reliably in another one. A model translates from one
language, so a text that is reliably in a language no model here translates is refused rather than translated
into nonsense; detection is unreliable on short texts ("OK", a name), which are let through: a text is judged
only from `MIN_CHARS` characters on, and only a language given at least `MIN_PROBABILITY` counts. How these
thresholds did on fra-eng's pairs: docs/serving.md.
"""

from __future__ import annotations

import threading
from collections.abc import Sequence
from dataclasses import dataclass

MIN_CHARS = 20
"""Shorter texts (stripped) are never refused: too short for a reliable guess (LibreTranslate switches
detectors at the same length)."""
MIN_PROBABILITY = 0.8
"""A language is taken as the text's only when the detector gives it at least this probability."""
TOP = 3
"""Languages ``/detect`` lists, likeliest first (LibreTranslate's three)."""


@dataclass(frozen=True)
class Guess:
    """The detector's view of a text against the languages it may be in: its likeliest `language` with its
    `probability`, the likeliest of those it may be in (`expected`) with its probability, and whether the text
    is reliably in a language other than those."""

    language: str
    probability: float
    expected: str
    expected_probability: float
    other_language: bool


class LanguageDetector:
    """py3langid's identifier with normalised probabilities, loaded on first use (about a second); safe to
    use from several threads."""

    def __init__(self):
        self._identifier = None
        self._lock = threading.Lock()

    def _load(self):
        with self._lock:
            if self._identifier is None:
                from py3langid.langid import MODEL_FILE, LanguageIdentifier

                self._identifier = LanguageIdentifier.from_model_file(MODEL_FILE, norm_probs=True)
        return self._identifier

    @property
    def loaded(self) -> bool:
        return self._identifier is not None

    def rank(self, text: str) -> list[tuple[str, float]]:
        """Every language the detector knows with its probability for `text`, likeliest first."""
        return [(language, float(p)) for language, p in (self._identifier or self._load()).rank(text)]

    def guess(self, text: str, candidates: str | Sequence[str]) -> Guess:
        """What `text` looks like, against the `candidates` it may be in (a language, or several: the first
        wins a tie, as for a blank text); see `Guess` and the module docstring."""
        candidates = [candidates] if isinstance(candidates, str) else list(candidates)
        ranked = self.rank(text) if text.strip() else []
        probabilities = dict(ranked)
        expected = max(candidates, key=lambda code: probabilities.get(code, 0.0))
        language, probability = ranked[0] if ranked else (expected, 0.0)
        other = (
            language not in candidates and probability >= MIN_PROBABILITY and len(text.strip()) >= MIN_CHARS
        )
        return Guess(language, probability, expected, probabilities.get(expected, 0.0), other)

    def top(self, text: str) -> list[dict]:
        """``/detect``'s answer: LibreTranslate's ``[{"language": "en", "confidence": 97.2}, ...]``, `TOP`
        languages, confidence in percent."""
        return [{"language": code, "confidence": percent(p)} for code, p in self.rank(text)[:TOP]]


def percent(probability: float) -> float:
    """A probability as LibreTranslate's confidence, in percent with one decimal."""
    return round(100 * probability, 1)

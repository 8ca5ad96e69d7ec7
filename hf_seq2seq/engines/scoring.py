"""How sure the model is of a translation: `Score`, from the model's own token probabilities.

`Translator.score` reads each `(source, target)` pair the way the model was trained, the target forced one
token at a time (its end-of-sentence token included), and adds up the log-probability the model gives each
target token. A sentence's `Score` is that sum and its token count; its `confidence` is the geometric mean of
the token probabilities, `exp(log_prob / tokens)`, in [0, 1]: length-normalised, so that a long sentence is not
doubted for its length alone, and on a scale a user reads (0.9: the model gave its tokens 0.9 on average).
A text's score is that of its sentences together (`joined`): every token weighs the same, so a short sentence
weighs less than a long one. measurements/measure_confidence.py measures how well it ranks translations by
quality (docs/serving.md).

This module imports neither torch nor an engine's package.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass


@dataclass(frozen=True)
class Score:
    """The summed log-probability (natural log) of a translation's `tokens` target tokens, given its source."""

    log_prob: float
    tokens: int

    @property
    def mean_log_prob(self) -> float | None:
        """The mean log-probability per token; None for a translation with no token (a blank one)."""
        return self.log_prob / self.tokens if self.tokens else None

    @property
    def confidence(self) -> float | None:
        """exp(mean log-probability), in [0, 1]; None for a translation with no token."""
        mean = self.mean_log_prob
        return None if mean is None else math.exp(mean)


NO_SCORE = Score(0.0, 0)
"""The score of a blank translation, which has no token."""


def joined(scores: Iterable[Score]) -> Score:
    """The score of sentences translated together (a text's, from its sentences'): the sums of both."""
    scores = list(scores)
    return Score(sum(s.log_prob for s in scores), sum(s.tokens for s in scores))

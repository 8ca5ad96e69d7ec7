"""Which model translates a pair: the languages a server serves, and the route of each pair through its models.

A server serves one model per pair (``en-fr``, ``fr-en``, ...). A pair no model translates, between two
languages other than English, goes through English where both halves are served (``de-fr``: ``de-en``, then
``en-fr``), as LibreTranslate's Argos Translate pivots; `hf-seq2seq serve --no-pivot` turns that off. Any other
pair is refused with LibreTranslate's 400 (`pair_unavailable`). ``GET /languages`` lists every language with the
targets it reaches either way (`Routes.targets`).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from hf_seq2seq.models.languages import language_name
from hf_seq2seq.serving.errors import ServeError

PIVOT = "en"
"""The language a pair without a model of its own goes through."""


def pair_unavailable(source: str, target: str) -> ServeError:
    """LibreTranslate's 400 for a pair of served languages that is not translated."""
    return ServeError(
        400,
        f"{language_name(target)} ({target}) is not available as a target language from "
        f"{language_name(source)} ({source})",
    )


class Pair(Protocol):
    """What routing needs of a served model (`hf_seq2seq.serving.served.ServedModel`): its pair."""

    source: str
    target: str


@dataclass(frozen=True)
class Route:
    """How a pair is translated: by one model, or by two through `PIVOT`, in order."""

    models: tuple[Pair, ...]

    @property
    def source(self) -> str:
        return self.models[0].source

    @property
    def target(self) -> str:
        return self.models[-1].target

    @property
    def pivot(self) -> str | None:
        """The language the text goes through (None: a model of the pair's own)."""
        return self.models[0].target if len(self.models) > 1 else None

    @property
    def name(self) -> str:
        """The languages in order: "en-fr", "de-en-fr"."""
        return "-".join([self.source, *(model.target for model in self.models)])


class Routes:
    """The pairs `models` translate, each by its model or through `PIVOT` (unless not `pivot`). Two models of
    one pair are refused (ValueError)."""

    def __init__(self, models: Sequence[Pair], pivot: bool = True):
        if not models:
            raise ValueError("a server needs at least one model")
        self.models, self.pivot = list(models), pivot
        self._direct: dict[tuple[str, str], Pair] = {}
        for model in models:
            pair = (model.source, model.target)
            if pair in self._direct:
                raise ValueError(f"two models translate {model.source}-{model.target}: serve one of them")
            self._direct[pair] = model
        self.codes: list[str] = sorted({code for pair in self._direct for code in pair})
        """Every language served, as a source or a target."""
        self.default_pair: tuple[str, str] = (models[0].source, models[0].target)
        """The first model's pair: what LibreTranslate's page starts with."""

    def find(self, source: str, target: str) -> Route | None:
        """The route of `source` -> `target`, or None where neither a model nor the pivot translates it."""
        model = self._direct.get((source, target))
        if model is not None:
            return Route((model,))
        if self.pivot and PIVOT not in (source, target) and source != target:
            first, second = self._direct.get((source, PIVOT)), self._direct.get((PIVOT, target))
            if first is not None and second is not None:
                return Route((first, second))
        return None

    def targets(self, source: str) -> list[str]:
        """The languages `source` is translated into here, in order of their codes."""
        return [code for code in self.codes if self.find(source, code) is not None]

    def sources_to(self, target: str) -> list[str]:
        """The languages translated into `target` here, in order of their codes."""
        return [code for code in self.codes if self.find(code, target) is not None]

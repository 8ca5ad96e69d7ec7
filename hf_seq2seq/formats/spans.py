"""Moving marked spans of a source text (inline tags, formatted runs) onto its translation by the word alignment.

A span wraps source words `[start, end)` (an empty span, `start == end`, is a point: an image between words);
spans nest like elements (`parent`: the index of the enclosing span, None at the top). `project_spans` gives
each span a target word range such that the ranges nest exactly as the spans do and siblings do not overlap:
every span's tags can be written around its range and the result is well formed, with every span used once.

Rule: a span covers the target words aligned to its source words, from the first to the last; a span with no
aligned word becomes a point after the target word aligned to the nearest source word before it. A range is
then clipped to its parent's, and siblings (ordered by where they land) are cut where they would overlap.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hf_seq2seq.engines.alignment import Alignment


@dataclass(frozen=True)
class Span:
    """Source words `[start, end)` wrapped by one element; `parent` indexes the enclosing span (None: top)."""

    start: int
    end: int
    parent: int | None = None


def project_spans(spans: Sequence[Span], alignment: Alignment, target_words: int) -> list[tuple[int, int]]:
    """The target word range `[start, end)` of each span (see the module docstring), in the order of `spans`
    (parents before their children)."""
    ranges: list[tuple[int, int]] = []
    for span in spans:
        inside = [j for i, j in alignment if span.start <= i < span.end]
        if inside:
            ranges.append((min(inside), max(inside) + 1))
        else:
            before = [j for i, j in alignment if i < span.start]
            point = max(before) + 1 if before else 0
            ranges.append((point, point))
    children: dict[int | None, list[int]] = {}
    for k, span in enumerate(spans):
        children.setdefault(span.parent, []).append(k)

    def settle(parent: int | None, low: int, high: int) -> None:
        end = low
        for k in sorted(children.get(parent, []), key=lambda k: (ranges[k], k)):
            start = min(max(ranges[k][0], end), high)
            stop = min(max(ranges[k][1], start), high)
            ranges[k] = (start, stop)
            end = stop
            settle(k, start, stop)

    settle(None, 0, target_words)
    return ranges


def render_spans(
    target: Sequence[str],
    spans: Sequence[Span],
    ranges: Sequence[tuple[int, int]],
    opening: Callable[[int], str],
    closing: Callable[[int], str],
) -> str:
    """The target words joined by spaces with span `k`'s `opening(k)` and `closing(k)` around its range
    (glued to the words they wrap; a point's tags stand alone between words)."""
    children: dict[int | None, list[int]] = {}
    for k, span in enumerate(spans):
        children.setdefault(span.parent, []).append(k)

    def pieces(parent: int | None, low: int, high: int) -> list[str]:
        out, position = [], low
        for k in sorted(children.get(parent, []), key=lambda k: (ranges[k], k)):
            start, stop = ranges[k]
            out += target[position:start]
            inner = pieces(k, start, stop)
            if inner:
                inner[0] = opening(k) + inner[0]
                inner[-1] = inner[-1] + closing(k)
                out += inner
            else:
                out.append(opening(k) + closing(k))
            position = stop
        return out + list(target[position:high])

    return " ".join(pieces(None, 0, len(target)))

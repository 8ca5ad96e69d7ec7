"""Moving marked spans of a source text (inline tags, formatted runs) onto its translation by the word alignment.

A span wraps source words `[start, end)` (an empty span, `start == end`, is a point: an image between words);
spans nest like elements (`parent`: the index of the enclosing span, None at the top). `project_spans` gives
each span a target word range such that the ranges nest exactly as the spans do and siblings do not overlap:
every span's tags can be written around its range and the result is well formed, with every span used once.

Nothing is lost: a span that wraps words gets at least one target word. Rule: a span that wraps the whole text
wraps the whole translation (a link around a list item's text); any other covers the target words aligned to
its source words, from the first to the last; a span with words but no aligned word takes the target
words between its neighbours (those aligned to the source words before it and after it; where there are none,
the nearest target word aligned to nothing, else the word where its neighbours meet, or its relative
position); a span without words is a point after the target word aligned to the source word before it. Ranges
are then settled from the top down: siblings, ordered by where they land, are clipped to their parent's range
and cut where they would overlap, each kept wide enough for the words its own spans need (`needed_words`); the
text between spans (a sentence around a link) keeps a word of its own too, so that a link never takes all of a
sentence. Where the translation has fewer words than the spans need (a sentence shortened to nothing),
`fit_target` first puts back the source words of the spans (and of the text around them) left without
any, where their neighbours put them. Both walk the spans without recursion, so any depth of nesting is fine.
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


def needed_words(spans: Sequence[Span], source_words: int | None = None) -> tuple[list[int], int]:
    """How many target words each span needs so that it and every span inside it with words gets one of its
    own (one for a span with words and no child with words, its children's and one more for its own words
    otherwise; spans come parents before their children), and how many the whole text needs."""
    own = _own_words(spans, source_words)
    need = [0] * len(spans)
    inner = [0] * len(spans)
    top = 0
    for k in range(len(spans) - 1, -1, -1):
        span = spans[k]
        need[k] = max(inner[k] + (k in own), 1 if span.end > span.start else 0)
        if span.parent is not None:
            inner[span.parent] += need[k]
        else:
            top += need[k]
    return need, top + (None in own)


def _own_words(spans: Sequence[Span], source_words: int | None) -> dict[int | None, int]:
    """The first source word that each span (None: the whole text, of `source_words`) has outside the spans
    inside it, for those with such words and spans with words inside: text between elements keeps a target
    word of its own."""
    inner: dict[int | None, list[Span]] = {}
    for span in spans:
        if span.end > span.start:
            inner.setdefault(span.parent, []).append(span)
    own = {}
    for parent, kids in inner.items():
        if parent is None and source_words is None:
            continue
        low, high = (0, source_words) if parent is None else (spans[parent].start, spans[parent].end)
        position = low
        for child in sorted(kids, key=lambda span: span.start):
            if child.start > position:
                break
            position = max(position, child.end)
        if position < high:
            own[parent] = position
    return own


def _children(spans: Sequence[Span]) -> dict[int | None, list[int]]:
    children: dict[int | None, list[int]] = {}
    for k, span in enumerate(spans):
        children.setdefault(span.parent, []).append(k)
    return children


class _Aligned:
    """An alignment indexed by source word, so that where a span's words went, and its neighbours', is
    answered in constant time however many spans there are (a thousand nested elements)."""

    def __init__(self, alignment: Alignment, target_words: int, source_words: int | None):
        size = max([i + 1 for i, _ in alignment] + [source_words or 0])
        low, high = [target_words] * size, [-1] * size  # each source word's first and last target word
        for i, j in alignment:
            low[i], high[i] = min(low[i], j), max(high[i], j)
        self.before = [-1] * (size + 1)  # the last target word of the source words before i
        self.after = [target_words] * (size + 1)  # the first target word of the source words from i on
        for i in range(size):
            self.before[i + 1] = max(self.before[i], high[i])
            self.after[size - 1 - i] = min(self.after[size - i], low[size - 1 - i])
        self.low, self.high = [low], [high]  # sparse tables: minima and maxima over 2**level words
        while 2 ** len(self.low) <= size:
            width = 2 ** (len(self.low) - 1)
            last_low, last_high = self.low[-1], self.high[-1]
            self.low.append([min(last_low[i], last_low[i + width]) for i in range(len(last_low) - width)])
            self.high.append([max(last_high[i], last_high[i + width]) for i in range(len(last_high) - width)])
        self.size, self.target_words = size, target_words
        linked = {j for _, j in alignment}
        self.free = [j for j in range(target_words) if j not in linked]

    def inside(self, start: int, end: int) -> tuple[int, int] | None:
        """The first and last target word aligned to source words `[start, end)`, or None."""
        end = min(end, self.size)
        if end <= start:
            return None
        level = (end - start).bit_length() - 1
        width = 2**level
        high = max(self.high[level][start], self.high[level][end - width])
        return (min(self.low[level][start], self.low[level][end - width]), high) if high >= 0 else None

    def neighbours(self, start: int, end: int) -> tuple[int | None, int | None]:
        """The last target word aligned to a source word before `start`, the first from `end` on (None:
        none)."""
        before = self.before[min(start, self.size)]
        after = self.after[min(end, self.size)]
        return (before if before >= 0 else None), (after if after < self.target_words else None)


def _wanted(span: Span, aligned: _Aligned, target_words: int, source_words: int | None) -> tuple[int, int]:
    """Where a span would land by its own words alone (see the module docstring)."""
    if span.start == 0 and span.end == source_words:  # the whole text: the whole translation, aligned or not
        return 0, target_words
    inside = aligned.inside(span.start, span.end)
    if inside:
        return inside[0], inside[1] + 1
    before, after = aligned.neighbours(span.start, span.end)
    low = before + 1 if before is not None else 0
    if span.end == span.start:
        return low, low
    high = after if after is not None else target_words
    if before is None and after is None and source_words:
        low = high = min(target_words, round(span.start * target_words / source_words))
    if high > low:
        return low, high
    if aligned.free:  # a target word aligned to nothing is likely these words' translation: the nearest one
        nearest = min(aligned.free, key=lambda j: (abs(j - low), j < low))
        return nearest, nearest + 1
    return low, min(low + 1, target_words)


def project_spans(
    spans: Sequence[Span], alignment: Alignment, target_words: int, source_words: int | None = None
) -> list[tuple[int, int]]:
    """The target word range `[start, end)` of each span (see the module docstring), in the order of `spans`
    (parents before their children). Every span with words gets a non-empty range if `target_words` is at
    least the spans' need (`fit_target` makes it so). With `source_words`, the source's length, the text
    outside and between spans keeps words of its own too, and a span is placed by its relative position where
    nothing is aligned."""
    aligned = _Aligned(alignment, target_words, source_words)
    ranges = [_wanted(span, aligned, target_words, source_words) for span in spans]
    need, _ = needed_words(spans, source_words)
    own = _own_words(spans, source_words)
    children = _children(spans)
    todo: list[tuple[int | None, int, int]] = [(None, 0, target_words)]
    while todo:
        parent, low, high = todo.pop()
        order = sorted(children.get(parent, []), key=lambda k: (ranges[k], k))
        wide = [k for k in order if need[k]]
        rest = sum(need[k] for k in wide)  # what the siblings still to settle need
        end = low
        for k in wide:
            rest -= need[k]
            start = max(low, min(max(ranges[k][0], end), high - rest - need[k]))
            stop = min(max(ranges[k][1], start + need[k]), max(high - rest, start))
            ranges[k] = (start, stop)
            end = stop
        if parent in own and wide and sum(ranges[k][1] - ranges[k][0] for k in wide) == high - low:
            # the elements took every word: the one with words to spare gives the text around them one back
            k = max(wide, key=lambda k: (ranges[k][1] - ranges[k][0] - need[k], -k))
            if ranges[k][1] - ranges[k][0] > need[k]:
                start, stop = ranges[k]
                ranges[k] = (start + 1, stop) if own[parent] < spans[k].start else (start, stop - 1)
        todo += [(k, *ranges[k]) for k in wide]
        for k in order:
            if need[k]:
                continue
            # a point (an image, an empty element) stays where it landed, or after the element it fell inside
            point = min(max(ranges[k][0], low), high)
            for other in wide:
                if ranges[other][0] < point < ranges[other][1]:
                    point = ranges[other][1]
            ranges[k] = (point, point)
            todo.append((k, point, point))
    return ranges


def fit_target(
    spans: Sequence[Span], alignment: Alignment, source: Sequence[str], target: Sequence[str]
) -> tuple[list[str], Alignment]:
    """`target` and its alignment with, where it has fewer words than the spans need (`needed_words`), source
    words put in: those of the innermost spans with words and of the text around spans (a span's, or the
    whole text's, first stretch of words outside the spans inside it), all those no target word is aligned
    to, then the others in order until there are enough; each where its neighbours put it (after the target
    word aligned to the source word before it), aligned to the words they are."""
    target, alignment = list(target), sorted(alignment)
    _, need = needed_words(spans, len(source))
    if need <= len(target):
        return target, alignment
    with_words = [k for k, span in enumerate(spans) if span.end > span.start]
    parents = {spans[k].parent for k in with_words}
    stretches = [(spans[k].start, spans[k].end) for k in with_words if k not in parents]
    for parent, first in _own_words(spans, len(source)).items():
        later = [spans[k].start for k in with_words if spans[k].parent == parent and spans[k].start > first]
        stretches.append((first, min(later, default=len(source) if parent is None else spans[parent].end)))
    aligned = {i for i, _ in alignment}
    for start, end in sorted(stretches, key=lambda s: (any(s[0] <= i < s[1] for i in aligned), s)):
        if need <= len(target) and any(start <= i < end for i in aligned):
            break
        before = [j for i, j in alignment if i < start]
        point = max(before) + 1 if before else 0
        added = list(source[start:end])
        shifted = [(i, j + len(added) if j >= point else j) for i, j in alignment]
        alignment = sorted(shifted + [(start + t, point + t) for t in range(len(added))])
        target[point:point] = added
    return target, alignment


def render_spans(
    target: Sequence[str],
    spans: Sequence[Span],
    ranges: Sequence[tuple[int, int]],
    opening: Callable[[int], str],
    closing: Callable[[int], str],
) -> str:
    """The target words joined by spaces with span `k`'s `opening(k)` and `closing(k)` around its range
    (glued to the words they wrap; a point's tags stand alone between words)."""
    children = {
        parent: sorted(kids, key=lambda k: (ranges[k], k)) for parent, kids in _children(spans).items()
    }
    out: list[str] = []
    # each open span: [span, next child to write, target position reached, end of its range, its first item]
    stack: list[list] = [[None, 0, 0, len(target), 0]]
    while stack:
        frame = stack[-1]
        parent, n, position, high, first = frame
        kids = children.get(parent, [])
        if n < len(kids):
            k = kids[n]
            start, stop = ranges[k]
            out += target[position:start]
            frame[1], frame[2] = n + 1, stop
            stack.append([k, 0, start, stop, len(out)])
            continue
        out += target[position:high]
        stack.pop()
        if parent is None:
            continue
        if len(out) > first:
            out[first] = opening(parent) + out[first]
            out[-1] += closing(parent)
        else:
            out.append(opening(parent) + closing(parent))
    return " ".join(out)

"""Paragraphs of formatted runs, the way PowerPoint and OpenDocument files hold text: what their formats share.

A format reads each paragraph into `Piece`s in document order: text, each with its `style` (anything that tells
runs apart and can be compared: the run element itself, or the chain of elements that wrap the text), and kept
things (a line break, a tab, a field, an image, a footnote) that are not translated but must come back in their
place; a kept thing that stands between words (`space`: a break, a tab) counts as a space between them.

`translate_paragraphs` translates all paragraphs' texts in one batched call with word alignments and gives each
paragraph back as `Out` pieces for its format to write: every target word takes the style of the first source
word aligned to it (else that of its nearest neighbour with one), and every style that had words gets at least
one target word (where no target word is aligned to its words, the one at its relative place, taken from a style
with words to spare), so that no formatted run or link comes back empty; kept things go after the target word
aligned to the nearest source word before them (`hf_seq2seq.formats.spans`), in their order. A word made of
several styles (H<sub>2</sub>O) that comes back unchanged keeps them. Words of one style in a row are one piece
of text, spaces between them included.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass
from itertools import pairwise
from typing import Any

from hf_seq2seq.formats.aligned import AlignedTranslation
from hf_seq2seq.formats.documents.base import Job, has_words
from hf_seq2seq.formats.spans import Span, project_spans


@dataclass(frozen=True)
class Piece:
    """A paragraph's text of one style (`kept` None), or a kept thing (`text` None)."""

    text: str | None = None
    style: Hashable = None
    kept: Any = None
    space: bool = False


@dataclass(frozen=True)
class Out:
    """A piece of a translated paragraph: text of a style, or a kept thing of the source."""

    text: str | None = None
    style: Hashable = None
    kept: Any = None


def translate_paragraphs(
    paragraphs: Sequence[Sequence[Piece]], job: Job, weight: Callable[[Hashable], int] = lambda style: 0
) -> list[list[Out] | None]:
    """Each paragraph's translation as `Out` pieces (see the module docstring); None for a paragraph with no
    letter, to be left as it is. A space between words of two styles goes with the one of less `weight` (how
    much formatting it has: spaces stand outside bold or underlined words), the first on a tie."""
    texts = [_text(pieces) for pieces in paragraphs]
    todo = [k for k, text in enumerate(texts) if has_words(text)]
    results = job.translate([" ".join(texts[k].split()) for k in todo], alignments=True)
    out: list[list[Out] | None] = [None] * len(paragraphs)
    for k, result in zip(todo, results, strict=True):
        out[k] = _arrange(paragraphs[k], texts[k], result, weight)
    return out


def _text(pieces: Sequence[Piece]) -> str:
    return "".join(piece.text if piece.kept is None else " " if piece.space else "" for piece in pieces)


def _arrange(pieces: Sequence[Piece], text: str, result: AlignedTranslation, weight) -> list[Out]:
    words = [(m.start(), m[0]) for m in re.finditer(r"\S+", text)]
    starts = [start for start, _ in words]
    styles: list[Hashable] = []  # the style of each character of the text
    points: list[int] = []  # the source words begun before each kept thing
    kept: list[Piece] = []
    for piece in pieces:
        if piece.kept is None:
            styles += [piece.style] * len(piece.text)
        else:
            points.append(bisect_left(starts, len(styles)))
            kept.append(piece)
            styles += [None] if piece.space else []
    source_styles, parts = [], []  # each source word's style (its first character's), and its parts by style
    for start, word in words:
        chars = styles[start : start + len(word)]
        source_styles.append(chars[0])
        parts.append([(word[a:b], chars[a]) for a, b in pairwise(_changes(chars))])
    target = result.target.split()
    alignment = result.alignment or []
    word_styles = _target_styles(source_styles, alignment, len(target))
    first: dict[int, int] = {}  # target word -> the first source word aligned to it
    for i, j in sorted(alignment, reverse=True):
        first[j] = i
    ranges = project_spans([Span(p, p) for p in points], alignment, len(target))
    at: dict[int, list[Piece]] = {}
    last = 0
    for piece, (point, _) in zip(kept, ranges, strict=True):
        last = max(point, last)  # kept things stay in their order
        at.setdefault(last, []).append(piece)
    lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
    written: list[list[tuple[str, Hashable]]] = []  # each target word's text by style
    for j, word in enumerate(target):
        i = first.get(j)
        # a word of several styles (H<sub>2</sub>O) that comes back as it was keeps them
        segments = parts[i] if i is not None and len(parts[i]) > 1 and word == words[i][1] else None
        written.append(list(segments or [(word, word_styles[j])]))
    for j in range(len(target) - 1):
        if not any(p.space for p in at.get(j + 1, [])):
            (before, left), (after, right) = written[j][-1], written[j + 1][0]
            if weight(right) < weight(left):
                written[j + 1][0] = (" " + after, right)
            else:
                written[j][-1] = (before + " ", left)
    if written:
        written[0][0] = (lead + written[0][0][0], written[0][0][1])
    out: list[Out] = []
    for j, segments in enumerate(written):
        out += [Out(kept=piece.kept) for piece in at.get(j, [])]
        for piece, style in segments:
            if out and out[-1].kept is None and out[-1].style == style:
                out[-1] = Out(out[-1].text + piece, style)
            else:
                out.append(Out(piece, style))
    out += [Out(kept=piece.kept) for piece in at.get(len(target), [])]
    if trail and out and out[-1].kept is None:
        out[-1] = Out(out[-1].text + trail, out[-1].style)
    return out


def _changes(chars: list[Hashable]) -> list[int]:
    """Where the style changes along a word's characters, with its start and end."""
    return [0, *(k for k in range(1, len(chars)) if chars[k] != chars[k - 1]), len(chars)]


def _target_styles(source: list[Hashable], alignment, targets: int) -> list[Hashable]:
    """The style of each target word (see the module docstring)."""
    styles: list[Hashable] = [None] * targets
    for i, j in sorted(alignment, reverse=True):  # the first source word aligned to each target word
        styles[j] = source[i]
    previous = [None] * targets  # the nearest target word with a style before each one, then after
    for j in range(1, targets):
        previous[j] = j - 1 if styles[j - 1] is not None else previous[j - 1]
    following: list[int | None] = [None] * targets
    for j in range(targets - 2, -1, -1):
        following[j] = j + 1 if styles[j + 1] is not None else following[j + 1]
    for j in range(targets):
        if styles[j] is None:
            near = [k for k in (previous[j], following[j]) if k is not None and styles[k] is not None]
            near.sort(key=lambda k: (abs(k - j), k > j))
            styles[j] = styles[near[0]] if near else source[0]
    words: dict[Hashable, list[int]] = {}
    for i, style in enumerate(source):
        words.setdefault(style, []).append(i)
    count = Counter(styles)
    targets_of: dict[int, list[int]] = {}
    for i, j in alignment:
        targets_of.setdefault(i, []).append(j)
    for style, own in words.items():  # each style with words and no target word takes one
        if count[style]:
            continue
        candidates = sorted(j for i in own for j in targets_of.get(i, []))
        candidates = candidates or [min(round(own[0] * targets / len(source)), targets - 1)]
        for j in sorted(range(targets), key=lambda j: abs(j - candidates[0])):
            if count[styles[j]] > 1:
                count[styles[j]] -= 1
                styles[j] = style
                count[style] = 1
                break
    return styles

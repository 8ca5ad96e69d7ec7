"""Paragraphs of formatted runs, the way Word, PowerPoint and OpenDocument files hold text: what their formats
share.

A format reads each paragraph into `Piece`s in document order: text, each with its `style` (what a format
writes it with: the run element it comes from, or the chain of elements that wrap it), kept things (a line
break, a tab, a field, an image, a footnote) that are not translated but must come back in their place, and
containers (a Word hyperlink or tracked insertion) that wrap pieces of their own; a kept thing that stands
between words (`space`: a break, a tab) counts as a space between them.

`translate_paragraphs` translates all paragraphs' texts in one batched call with word alignments and gives each
paragraph back as `Out` pieces for its format to write:

* A container wraps the target words aligned to the words it wrapped (`hf_seq2seq.formats.spans`); one that had
  words always gets target words (by its neighbours where none is aligned to them), never all of them.
* Each target word takes the style of the first source word aligned to it within its container, else that of
  its nearest neighbour in the container (the one before on a tie), else the container's first. Every `look`
  (what tells formattings apart: the style itself unless a format says otherwise) that words had in a container
  comes back on a target word of it: one aligned to those words, else the one nearest to where their neighbours
  put them (at their relative place where no neighbour is aligned; one aligned to nothing first), taken from a
  look other target words still have. So no formatted run or link comes back empty. A word of several looks (H<sub>2</sub>O) that comes back as it was keeps them.
  Words of one look in a row are one piece of text, spaces between them included.
* A space between words stays outside a container whose edge it is (a link ends at its last word), and otherwise
  goes with the style of less `weight` (how much formatting it has: spaces stand outside bold or underlined
  words), the one before on a tie.
* Kept things go after the target word aligned to the nearest source word before them (one glued inside a word
  before that word), in their order within their container, spaced as they were (a field between two spaces,
  a bookmark against a word).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Hashable, Sequence
from dataclasses import dataclass, field
from typing import Any

from hf_seq2seq.engines.alignment import word_spans
from hf_seq2seq.formats.aligned import AlignedTranslation
from hf_seq2seq.formats.documents.base import Job, has_words
from hf_seq2seq.formats.spans import Span, fit_target, project_spans


@dataclass(frozen=True, eq=False)
class Piece:
    """A paragraph's text of one style (`text`), a kept thing (`kept`), or a container (`container`, an element
    wrapping `pieces`)."""

    text: str | None = None
    style: Hashable = None
    kept: Any = None
    space: bool = False
    container: Any = None
    pieces: Sequence[Piece] = ()


@dataclass(frozen=True)
class Out:
    """A piece of a translated paragraph: text of a style, a kept thing of the source, or a source container
    with the pieces it wraps now."""

    text: str | None = None
    style: Hashable = None
    kept: Any = None
    container: Any = None
    pieces: Sequence[Out] = ()


@dataclass
class _Source:
    """A paragraph as read: its text, its containers and kept things as spans (`entries`: their pieces), and
    for each source word the text piece holding most of it and its stretches by piece."""

    text: str = ""
    spans: list[Span] = field(default_factory=list)
    entries: list[Piece] = field(default_factory=list)
    spaces: dict[int, tuple[bool, bool]] = field(default_factory=dict)  # kept entry -> space before, after
    word_pieces: list[Piece] = field(default_factory=list)
    word_parts: list[list[tuple[Piece, str]]] = field(default_factory=list)
    parents: dict[Piece, int | None] = field(default_factory=dict)  # text piece -> its container's span
    lead: str = ""
    trail: str = ""


def translate_paragraphs(
    paragraphs: Sequence[Sequence[Piece]],
    job: Job,
    weight: Callable[[Hashable], int] = lambda style: 0,
    look: Callable[[Hashable], Hashable] = lambda style: style,
) -> list[list[Out] | None]:
    """Each paragraph's translation as `Out` pieces (see the module docstring); None for a paragraph with no
    letter, to be left as it is."""
    sources = [_read(pieces) for pieces in paragraphs]
    todo = [k for k, source in enumerate(sources) if has_words(source.text)]
    results = job.translate([" ".join(sources[k].text.split()) for k in todo], alignments=True)
    out: list[list[Out] | None] = [None] * len(paragraphs)
    for k, result in zip(todo, results, strict=True):
        out[k] = _arrange(sources[k], result, weight, look)
    return out


def _read(pieces: Sequence[Piece]) -> _Source:
    source = _Source()
    owners: list[Piece | None] = []  # the text piece of each character of the text (None: a kept space)
    offsets: list[int] = []  # where each span's piece stands in the text

    def walk(pieces: Sequence[Piece], parent: int | None) -> None:
        for piece in pieces:
            if piece.text is not None:
                source.parents[piece] = parent
                source.text += piece.text
                owners.extend([piece] * len(piece.text))
                continue
            text = source.text
            before = len(text.split()) if not text or text[-1].isspace() else len(text.split()) - 1
            source.spans.append(Span(before, before, parent))
            source.entries.append(piece)
            offsets.append(len(text))
            if piece.container is not None:
                index = len(source.spans) - 1
                walk(piece.pieces, index)
                source.spans[index] = Span(before, max(len(source.text.split()), before), parent)
            elif piece.space:
                source.text += " "
                owners.append(None)

    walk(pieces, None)
    text = source.text

    def space(i: int) -> bool:  # whitespace of the text itself, not a kept space's
        return 0 <= i < len(text) and owners[i] is not None and text[i].isspace()

    for k, (piece, offset) in enumerate(zip(source.entries, offsets, strict=True)):
        if piece.container is not None:
            continue
        end = offset + piece.space
        source.spaces[k] = (space(offset - 1), space(end))
        # a kept thing inside a word (glued on both sides) goes before it, any other after the words before it
        inside = offset > 0 and not text[offset - 1].isspace() and end < len(text) and not text[end].isspace()
        position = len(text[:offset].split()) - (inside and not piece.space)
        source.spans[k] = Span(position, position, source.spans[k].parent)
    for start, end in word_spans(text):
        held = [owner for owner in owners[start:end] if owner is not None]
        source.word_pieces.append(max(held, key=held.count))
        parts: list[tuple[Piece, str]] = []
        for position in range(start, end):
            owner = owners[position]
            if owner is not None and parts and parts[-1][0] is owner:
                parts[-1] = (owner, parts[-1][1] + text[position])
            elif owner is not None:
                parts.append((owner, text[position]))
        source.word_parts.append(parts)
    plain = "".join(piece.text for piece in source.parents)
    source.lead, source.trail = plain[: len(plain) - len(plain.lstrip())], plain[len(plain.rstrip()) :]
    return source


def _arrange(source: _Source, result: AlignedTranslation, weight, look) -> list[Out]:
    spans, entries = source.spans, source.entries
    words = result.source.split()
    target, alignment = fit_target(spans, result.alignment or [], words, result.target.split())
    ranges = project_spans(spans, alignment, len(target), len(words))
    last: dict[int | None, int] = {}  # kept things under one container stay in their order
    for k, (span, entry) in enumerate(zip(spans, entries, strict=True)):
        if entry.container is None:
            point = max(ranges[k][0], last.get(span.parent, 0))
            ranges[k] = (point, point)
            last[span.parent] = point
    owner: list[int | None] = [None] * len(target)  # the innermost container of each target word
    for k, entry in enumerate(entries):
        if entry.container is not None:
            owner[ranges[k][0] : ranges[k][1]] = [k] * (ranges[k][1] - ranges[k][0])
    styles = _word_styles(source, alignment, owner, look)
    depth: dict[int | None, int] = {None: 0}  # how many containers each container is inside, itself included
    for k, span in enumerate(spans):  # a container's parent comes before it
        depth[k] = depth[span.parent] + 1
    kept: dict[int, list[int]] = {}  # the kept things between target words j - 1 and j, in order
    for k, entry in enumerate(entries):
        if entry.container is None:
            kept.setdefault(ranges[k][0], []).append(k)
    texts = list(target)
    for j in range(1, len(target)):
        between = kept.get(j, [])
        before = bool(between) and source.spaces[between[0]][0]
        after = bool(between) and source.spaces[between[-1]][1]
        if before or after or any(entries[k].space for k in between):
            texts[j - 1] += " " if before else ""
            texts[j] = (" " if after else "") + texts[j]
        elif depth[owner[j - 1]] != depth[owner[j]]:  # a container's edge: the space stays outside it
            if depth[owner[j - 1]] > depth[owner[j]]:
                texts[j] = " " + texts[j]
            else:
                texts[j - 1] += " "
        elif weight(styles[j - 1]) <= weight(styles[j]):
            texts[j - 1] += " "
        else:
            texts[j] = " " + texts[j]
    if texts:
        texts[0], texts[-1] = source.lead + texts[0], texts[-1] + source.trail
    copied = _copied_words(source, alignment, target, look)

    def text(low: int, high: int) -> list[Out]:
        out: list[Out] = []
        for j in range(low, high):
            parts = [(styles[j], texts[j])]
            if j in copied:  # a word written as in the source, piece by piece (H<sub>2</sub>O)
                at = texts[j].find(target[j])
                parts = [(piece.style, part) for piece, part in copied[j]]
                parts[0] = (parts[0][0], texts[j][:at] + parts[0][1])
                parts[-1] = (parts[-1][0], parts[-1][1] + texts[j][at + len(target[j]) :])
            for style, part in parts:
                if out and look(out[-1].style) == look(style):
                    out[-1] = Out(out[-1].text + part, out[-1].style)
                else:
                    out.append(Out(part, style))
        return out

    children: dict[int | None, list[int]] = {}
    for k, span in enumerate(spans):
        children.setdefault(span.parent, []).append(k)

    def render(parent: int | None, low: int, high: int) -> list[Out]:
        out, position = [], low
        for k in sorted(children.get(parent, []), key=lambda k: (ranges[k], k)):
            start, stop = ranges[k]
            if start > position:
                out += text(position, start)
                position = start
            entry = entries[k]
            if entry.container is not None:
                out.append(Out(container=entry.container, pieces=render(k, start, stop)))
                position = max(position, stop)
            else:
                out.append(Out(kept=entry.kept))
        return out + text(position, high)

    return render(None, 0, len(target))


def _word_styles(source: _Source, alignment, owner: list[int | None], look) -> list[Hashable]:
    """The style of each target word (see the module docstring)."""
    aligned: dict[int, list[int]] = {}
    for i, j in alignment:
        aligned.setdefault(j, []).append(i)
    pieces: list[Piece | None] = [None] * len(owner)
    for j, container in enumerate(owner):
        for i in sorted(aligned.get(j, [])):
            piece = source.word_pieces[i]
            if source.parents[piece] == container:
                pieces[j] = piece
                break
    for j in range(len(pieces)):
        if pieces[j] is None:
            same = [k for k in range(len(pieces)) if owner[k] == owner[j] and pieces[k] is not None]
            near = min(same, key=lambda k: (abs(k - j), k > j), default=None)
            pieces[j] = pieces[near] if near is not None else _first_piece(source, owner[j])
    _keep_looks(source, alignment, owner, pieces, look)
    return [piece.style for piece in pieces]


def _keep_looks(source: _Source, alignment, owner: list[int | None], pieces: list, look) -> None:
    """Every look that source words had in a container given to a target word of that container, if none has
    it yet: a word aligned to those source words, else the word nearest to where their neighbours put them (at
    their relative place where no neighbour is aligned; one aligned to nothing first), taken from a look that
    other target words still have."""
    looks = [look(piece.style) for piece in pieces]
    linked = {j for _, j in alignment}
    groups: dict[tuple, list[int]] = {}  # (container, look) -> its source words
    for i, piece in enumerate(source.word_pieces):
        groups.setdefault((source.parents[piece], look(piece.style)), []).append(i)
    for (container, wanted), words in groups.items():
        mine = [j for j, k in enumerate(owner) if k == container]
        if any(looks[j] == wanted for j in mine):
            continue
        count = Counter(looks[j] for j in mine)
        aligned = sorted({j for i, j in alignment if i in words and owner[j] == container})
        before = [j for i, j in alignment if i < words[0] and owner[j] == container]
        point = max(before) + 1 if before else 0
        if not before and not any(i > words[-1] and owner[j] == container for i, j in alignment):
            point = round(words[0] * len(owner) / len(source.word_pieces))  # no neighbour aligned
        # a target word aligned to nothing first (likely those words' translation), the nearest first
        nearest = sorted(mine, key=lambda j: (j in linked, abs(j - point), j < point))
        for j in aligned + nearest:
            if count[looks[j]] > 1:
                pieces[j], looks[j] = source.word_pieces[words[0]], wanted
                break


def _first_piece(source: _Source, container: int | None) -> Piece:
    inside = (
        [p for p in source.entries[container].pieces if p.text is not None] if container is not None else []
    )
    return (inside or source.word_pieces)[0]


def _copied_words(source: _Source, alignment, target: list[str], look) -> dict[int, list[tuple[Piece, str]]]:
    """The target words that are a source word they are aligned to, copied as written, whose source word is
    written in pieces of different looks (a formula, `x²`): target word -> the source word's stretches."""
    out = {}
    for i, j in alignment:
        parts = source.word_parts[i] if i < len(source.word_parts) else []
        if len(parts) > 1 and "".join(part for _, part in parts) == target[j]:
            if any(look(piece.style) != look(parts[0][0].style) for piece, _ in parts):
                out[j] = parts
    return out

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
  look other target words still have. So no formatted run or link comes back empty. A word written in
  stretches of several looks (H<sub>2</sub>O, `1<sup>st</sup>`) gives them to the target word aligned to it that
  is most like it, stretch by stretch (`H2O` as it was, `1er` with `er` as `st` was); a look that only such a
  stretch had and that no target word got is given the same way to the word nearest to where it would be.
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
from difflib import SequenceMatcher
from itertools import accumulate, pairwise
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
    # the target words written in stretches of several looks, as a source word is: word -> (piece, stretch)s
    split = _split_words(source, alignment, target, owner, look)
    styles = _word_styles(source, alignment, owner, target, look, split)
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

    def text(low: int, high: int) -> list[Out]:
        out: list[Out] = []
        for j in range(low, high):
            parts = [(styles[j], texts[j])]
            if j in split:  # a word written in stretches as its source word is (H<sub>2</sub>O)
                at = texts[j].find(target[j])
                parts = [(piece.style, part) for piece, part in split[j]]
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


def _word_styles(source: _Source, alignment, owner, target: list[str], look, split: dict) -> list[Hashable]:
    """The style of each target word (see the module docstring); `split` gets the target words to write in
    stretches as a source word is."""
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
    _keep_looks(source, alignment, owner, target, pieces, look, split)
    return [piece.style for piece in pieces]


def _keep_looks(
    source: _Source, alignment, owner, target: list[str], pieces: list, look, split: dict
) -> None:
    """Every look that source words had in a container given to a target word of that container, if none has
    it yet: a word aligned to those source words, else the word nearest to where their neighbours put them (at
    their relative place where no neighbour is aligned; one aligned to nothing first), taken from a look that
    other target words still have. A look that only a stretch of a word had (`x²`'s superscript) is given by
    writing such a target word in stretches as that word is (added to `split`)."""
    looks = [{look(piece.style)} for piece in pieces]
    for j, written in split.items():
        looks[j] = {look(piece.style) for piece, _ in written}
    linked = {j for _, j in alignment}
    groups: dict[tuple, list[int]] = {}  # (container, look) -> its source words
    for i, parts in enumerate(source.word_parts):
        for piece, part in parts:
            words = groups.setdefault((source.parents[piece], look(piece.style)), [])
            words += [i] if part.strip() and (not words or words[-1] != i) else []
    for (container, wanted), words in groups.items():
        mine = [j for j, k in enumerate(owner) if k == container]
        if not words or any(wanted in looks[j] for j in mine):
            continue
        inside = _parts_in(source, words[0], container)
        point = _point(source, alignment, owner, container, words)
        # a target word aligned to nothing first (likely those words' translation), the nearest first
        nearest = sorted(mine, key=lambda j: (j in linked, abs(j - point), j < point))
        if len({look(piece.style) for piece, _ in inside}) > 1:  # a stretch inside a word (a superscript)
            aligned = [j for i, j in alignment if i == words[0] and owner[j] == container]
            for j in [j for j in aligned + nearest if j not in split]:
                written = _split_like(inside, target[j])
                if wanted in {look(piece.style) for piece, _ in written}:
                    split[j], looks[j] = written, {look(piece.style) for piece, _ in written}
                    break
            else:  # no word long enough to hold the stretch: a whole word takes its look
                inside = [(piece, part) for piece, part in inside if look(piece.style) == wanted]
            if wanted in set().union(*(looks[j] for j in mine)):
                continue
        count = Counter(next(iter(looks[j])) for j in mine if j not in split)
        aligned = sorted({j for i, j in alignment if i in words and owner[j] == container})
        for j in aligned + nearest:
            if j not in split and count[next(iter(looks[j]))] > 1:
                pieces[j], looks[j] = inside[0][0], {wanted}
                break


def _parts_in(source: _Source, word: int, container: int | None) -> list[tuple[Piece, str]]:
    """The stretches of a source word that are inside `container` (a word may straddle a link's edge)."""
    return [(piece, part) for piece, part in source.word_parts[word] if source.parents[piece] == container]


def _point(source: _Source, alignment, owner: list[int | None], container, words: list[int]) -> int:
    """Where source `words` would be among their container's target words: after the target words their
    neighbours before are aligned to, at their relative place where no neighbour is aligned."""
    before = [j for i, j in alignment if i < words[0] and owner[j] == container]
    if not before and not any(i > words[-1] and owner[j] == container for i, j in alignment):
        return round(words[0] * len(owner) / len(source.word_pieces))  # no neighbour aligned
    return max(before) + 1 if before else 0


def _first_piece(source: _Source, container: int | None) -> Piece:
    """The style of a word of `container` (None: outside every container) that no word near it gives: its first
    text piece with words, else its first. A word outside containers never takes a piece from inside one: in
    PowerPoint a hyperlink is a run's property, and a word written with a link's run would be a second link."""
    inside = [piece for piece, parent in source.parents.items() if parent == container]
    return ([piece for piece in inside if piece.text.strip()] or inside or source.word_pieces)[0]


def _split_words(source: _Source, alignment, target: list[str], owner: list[int | None], look) -> dict:
    """The target words to write in stretches of different looks as a source word is (a formula, `x²`, `1st`):
    of the target words aligned to such a source word within a container, the one most like it (sharing a
    character at least): target word -> its stretches, each with the piece it is written as (`_split_like`)."""
    best: dict[tuple, tuple[float, int]] = {}  # (source word, container) -> (likeness, target word)
    for i, j in alignment:
        parts = _parts_in(source, i, owner[j]) if i < len(source.word_parts) else []
        if len({look(piece.style) for piece, _ in parts}) < 2:
            continue
        likeness = SequenceMatcher(
            None, "".join(part for _, part in parts), target[j], autojunk=False
        ).ratio()
        if likeness > best.get((i, owner[j]), (0.0, 0))[0]:
            best[i, owner[j]] = (likeness, j)
    return {
        j: _split_like(_parts_in(source, i, container), target[j]) for (i, container), (_, j) in best.items()
    }


def _split_like(parts: list[tuple[Piece, str]], word: str) -> list[tuple[Piece, str]]:
    """`word` cut into stretches of the pieces of a source word written in `parts`: a character the two share
    (by difflib's matching) takes its source character's piece, a replaced stretch its source stretch's pieces
    in proportion (`1st` -> `1er`: `er` as `st`), an added one the piece before it. Where that leaves a piece
    out and the word has a character for each part, the word is cut in proportion to the parts instead."""
    written = "".join(part for _, part in parts)
    owners = [piece for piece, part in parts for _ in part]
    pieces: list[Piece] = []
    for tag, i1, i2, j1, j2 in SequenceMatcher(None, written, word, autojunk=False).get_opcodes():
        for j in range(j1, j2):
            if tag == "equal":
                pieces.append(owners[i1 + j - j1])
            elif tag == "replace":
                pieces.append(owners[i1 + (j - j1) * (i2 - i1) // (j2 - j1)])
            else:  # inserted
                pieces.append(owners[max(i1 - 1, 0)])
    if {id(piece) for piece, _ in parts} - {id(piece) for piece in pieces} and len(word) >= len(parts):
        ends = list(accumulate(len(part) for _, part in parts))
        cuts = [0]
        for end in ends[:-1]:
            cuts.append(
                min(max(round(len(word) * end / ends[-1]), cuts[-1] + 1), len(word) - len(parts) + len(cuts))
            )
        cuts.append(len(word))
        pieces = [
            piece for (piece, _), (a, b) in zip(parts, pairwise(cuts), strict=True) for _ in range(b - a)
        ]
    out: list[tuple[Piece, str]] = []
    for piece, char in zip(pieces, word, strict=True):
        if out and out[-1][0] is piece:
            out[-1] = (piece, out[-1][1] + char)
        else:
            out.append((piece, char))
    return out

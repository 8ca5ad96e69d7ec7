"""Word documents (`.docx`), read and written with python-docx: every paragraph of the body, of tables (nested
too), text boxes, headers, footers, footnotes, endnotes and comments is translated, its formatting kept.

A paragraph is translated as one text (sentence by sentence, with its word alignment), and its formatting
follows the words:

* Each target word takes the run (the stretch of one formatting: bold, italic, font, colour, ...) of the
  source word it is aligned to; a word aligned to none takes its neighbour's. Consecutive words of one run (or
  of runs formatted alike) are written as one run, with a copy of that run's properties (`w:rPr`). A space
  between runs goes to the run with less formatting, as spaces stand outside bold or underlined words. No
  formatting is lost: one that no target word took (a subscript, a colour whose words were not aligned) is
  given to the target word nearest to where its words would be, taken from a formatting other words still
  have; a word the model copied (a formula, a name) is written run by run as in the source (`H₂O`'s subscript).
* A hyperlink (or a tracked insertion, smart tag, custom XML element) wraps the target words aligned to the
  words it wrapped (`hf_seq2seq.formats.spans`), with its own attributes; its runs follow the rule above. One
  that had text always gets target words (by its neighbours where none is aligned to it), never all of them.
* Everything else in a paragraph is kept, unchanged, and moved with the words (`project_spans`: after the target
  word aligned to the source word before it): images, tabs, breaks, bookmarks, footnote references, content
  controls, equations, tracked deletions, and fields (a page number, a table of contents: from the field's
  begin mark to its end mark, whose result Word computes again) with their text as written. Kept things stay
  in their order, and spaced as they were (a field between two spaces, a bookmark against a word).

The paragraph's properties (style, alignment, numbering, spacing) are untouched; a paragraph with no letter
(empty, an image alone, a number) is left exactly as it was. Footnotes, endnotes and comments are translated
like the body (their parts read as XML through python-docx's part factory). A damaged file, or one that would
unpack to more than `hf_seq2seq.formats.documents.base`'s limits, is a `DocumentError`.
"""

from __future__ import annotations

import copy
import io
from collections import Counter
from dataclasses import dataclass, field

from hf_seq2seq.engines.alignment import word_spans
from hf_seq2seq.formats.aligned import AlignedTranslation
from hf_seq2seq.formats.documents.base import (
    DAMAGED,
    DocumentError,
    DocumentFormat,
    Job,
    has_words,
    open_archive,
    require,
)
from hf_seq2seq.formats.spans import Span, fit_target, project_spans

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
ALTERNATE_CONTENT = "{http://schemas.openxmlformats.org/markup-compatibility/2006}AlternateContent"
CONTAINERS = frozenset(W + tag for tag in ("hyperlink", "ins", "moveTo", "smartTag", "customXml"))
"""Elements that wrap runs of the paragraph's text: moved, with their words, around the aligned target words."""
BREAKS = frozenset(
    [*(W + tag for tag in ("tab", "ptab", "br", "cr", "drawing", "pict", "object")), ALTERNATE_CONTENT]
)
"""Run content that stands between words (a tab, a line break, a picture)."""
TRANSLATED_PARTS = ("document.main", "header", "footer", "footnotes", "endnotes", "comments")
"""The parts translated, by the end of their content type (`...wordprocessingml.header+xml`)."""
NOTES = ("footnotes", "endnotes", "comments")
"""Parts python-docx (before 1.2, for comments) keeps as bytes: registered to be read as XML parts."""


@dataclass(eq=False)
class Piece:
    """A text of one run (`text`), something kept (`kept`: an element to write as it is), or a container with
    the pieces inside it."""

    run: object = None  # the w:r a text comes from (its properties are copied)
    text: str | None = None
    kept: object = None
    breaks: bool = False
    spaces: tuple[bool, bool] = (False, False)  # whether a space stood right before and right after it
    container: object = None
    pieces: list[Piece] = field(default_factory=list)


@dataclass
class Paragraph:
    """A paragraph to translate: its text, its containers and kept things as spans (`entries`: their pieces),
    and for each source word the text piece holding most of it."""

    element: object
    text: str = ""
    spans: list[Span] = field(default_factory=list)
    entries: list[Piece] = field(default_factory=list)
    word_pieces: list[Piece] = field(default_factory=list)
    word_parts: list[list[tuple[Piece, str]]] = field(default_factory=list)  # a word's stretches, by run
    parents: dict[Piece, int | None] = field(default_factory=dict)  # text piece -> its container's span
    lead: str = ""
    trail: str = ""


class Docx(DocumentFormat):
    name = "Word document"
    extensions = (".docx",)

    def translate(self, data: bytes, job: Job) -> bytes:
        docx = require("docx", "python-docx", ".docx")
        _read_notes_as_xml()
        open_archive(data, "a Word document (.docx)").close()
        try:
            document = docx.Document(io.BytesIO(data))
        except DAMAGED as error:
            raise DocumentError(f"not a Word document (.docx), or a damaged one: {error}") from None
        paragraphs = []
        for part in document.part.package.iter_parts():
            if part.content_type.endswith(tuple(f".{name}+xml" for name in TRANSLATED_PARTS)):
                depth = 0  # inside a field (which may run over several paragraphs)
                for element in part.element.iter(W + "p"):
                    paragraph, depth = _read(element, depth)
                    if has_words(paragraph.text):
                        paragraphs.append(paragraph)
        results = job.translate([" ".join(p.text.split()) for p in paragraphs], alignments=True)
        for paragraph, result in zip(paragraphs, results, strict=True):
            _write(paragraph, result)
        out = io.BytesIO()
        document.save(out)
        return out.getvalue()


def _read_notes_as_xml() -> None:
    """Footnotes, endnotes and comments read as XML parts (whose XML python-docx writes back from the tree),
    by python-docx's own way of choosing a part's class, `PartFactory.part_type_for`; a class set there already
    (python-docx's own for comments, since 1.2) is kept."""
    from docx.opc.part import PartFactory, XmlPart

    prefix = "application/vnd.openxmlformats-officedocument.wordprocessingml."
    for name in NOTES:
        PartFactory.part_type_for.setdefault(f"{prefix}{name}+xml", XmlPart)


def _read(element, depth: int) -> tuple[Paragraph, int]:
    """A paragraph's text, spans and word runs; `depth`: how many fields are open where it starts (and after)."""
    pieces, depth = _pieces(element, depth)
    paragraph = Paragraph(element)
    owners: list[Piece | None] = []  # the text piece of each character of the text (None: a break)
    offsets: list[int] = []  # where each span's piece stands in the text

    def walk(pieces: list[Piece], parent: int | None) -> None:
        for piece in pieces:
            if piece.text is not None:
                paragraph.parents[piece] = parent
                paragraph.text += piece.text
                owners.extend([piece] * len(piece.text))
                continue
            text = paragraph.text
            before = len(text.split()) if not text or text[-1].isspace() else len(text.split()) - 1
            paragraph.spans.append(Span(before, before, parent))
            paragraph.entries.append(piece)
            offsets.append(len(text))
            if piece.container is not None:
                index = len(paragraph.spans) - 1
                walk(piece.pieces, index)
                paragraph.spans[index] = Span(before, max(len(paragraph.text.split()), before), parent)
            elif piece.breaks:
                paragraph.text += " "
                owners.append(None)

    walk(pieces, None)
    text = paragraph.text

    def space(i: int) -> bool:  # whitespace of the text itself, not a break's
        return 0 <= i < len(text) and owners[i] is not None and text[i].isspace()

    for k, (piece, offset) in enumerate(zip(paragraph.entries, offsets, strict=True)):
        if piece.container is not None:
            continue
        end = offset + piece.breaks
        piece.spaces = (space(offset - 1), space(end))
        # a kept thing inside a word (glued on both sides) goes before it, any other after the words before it
        inside = offset > 0 and not text[offset - 1].isspace() and end < len(text) and not text[end].isspace()
        position = len(text[:offset].split()) - (inside and not piece.breaks)
        paragraph.spans[k] = Span(position, position, paragraph.spans[k].parent)
    for start, end in word_spans(text):
        held = [owner for owner in owners[start:end] if owner is not None]
        paragraph.word_pieces.append(max(held, key=held.count))
        parts: list[tuple[Piece, str]] = []
        for position in range(start, end):
            owner = owners[position]
            if owner is not None and parts and parts[-1][0] is owner:
                parts[-1] = (owner, parts[-1][1] + text[position])
            elif owner is not None:
                parts.append((owner, text[position]))
        paragraph.word_parts.append(parts)
    plain = "".join(piece.text for piece in paragraph.parents)
    paragraph.lead, paragraph.trail = plain[: len(plain) - len(plain.lstrip())], plain[len(plain.rstrip()) :]
    return paragraph, depth


def _pieces(parent, depth: int) -> tuple[list[Piece], int]:
    """The pieces of a paragraph or container, in order; a field's marks and all between them are kept."""
    out = []
    for child in parent:
        if child.tag == W + "pPr" or (parent.tag != W + "p" and child.tag.endswith("Pr")):
            continue  # properties: stay where they are
        if child.tag == W + "r":
            for content in child:
                if content.tag == W + "rPr":
                    continue
                mark = content.get(W + "fldCharType") if content.tag == W + "fldChar" else None
                if content.tag == W + "t" and depth == 0:
                    out.append(Piece(run=child, text=content.text or ""))
                else:
                    out.append(Piece(run=child, kept=content, breaks=content.tag in BREAKS))
                depth += 1 if mark == "begin" else -1 if mark == "end" and depth else 0
        elif child.tag in CONTAINERS and depth == 0:
            inner, depth = _pieces(child, depth)
            out.append(Piece(container=child, pieces=inner))
        else:
            out.append(Piece(kept=child))
    return out, depth


def _write(paragraph: Paragraph, result: AlignedTranslation) -> None:
    """The paragraph's content replaced by its translation (see the module docstring)."""
    spans, entries = paragraph.spans, paragraph.entries
    source = result.source.split()
    target, alignment = fit_target(spans, result.alignment or [], source, result.target.split())
    ranges = project_spans(spans, alignment, len(target), len(source))
    last: dict[int | None, int] = {}  # kept things under one parent stay in their order
    for k, (span, entry) in enumerate(zip(spans, entries, strict=True)):
        if entry.container is None:
            point = max(ranges[k][0], last.get(span.parent, 0))
            ranges[k] = (point, point)
            last[span.parent] = point
    owner: list[int | None] = [None] * len(target)  # the innermost container of each target word
    for k, entry in enumerate(entries):
        if entry.container is not None:
            owner[ranges[k][0] : ranges[k][1]] = [k] * (ranges[k][1] - ranges[k][0])
    runs = _word_runs(paragraph, alignment, owner)
    kept: dict[int, list[Piece]] = {}  # the kept things between target words j - 1 and j, in order
    for k, entry in enumerate(entries):
        if entry.container is None:
            kept.setdefault(ranges[k][0], []).append(entry)
    texts = list(target)
    for j in range(1, len(target)):
        between = kept.get(j, [])
        before, after = (between[0].spaces[0], between[-1].spaces[1]) if between else (False, False)
        if before or after or any(piece.breaks for piece in between):
            # spaced as they were: a tab alone, a field between two spaces, a bookmark against a word
            texts[j - 1] += " " if before else ""
            texts[j] = (" " if after else "") + texts[j]
        elif _same(runs[j - 1], runs[j]) or _weight(runs[j - 1]) <= _weight(runs[j]):
            texts[j - 1] += " "
        else:
            texts[j] = " " + texts[j]
    if texts:
        texts[0], texts[-1] = paragraph.lead + texts[0], texts[-1] + paragraph.trail

    copied = _copied_words(paragraph, alignment, target)

    def words(low: int, high: int) -> list:
        out, previous = [], None
        for j in range(low, high):
            parts = [(runs[j], texts[j])]
            if j in copied:  # a word written as in the source, run by run (H<sub>2</sub>O)
                at = texts[j].find(target[j])
                parts = [(piece.run, part) for piece, part in copied[j]]
                parts[0] = (parts[0][0], texts[j][:at] + parts[0][1])
                parts[-1] = (parts[-1][0], parts[-1][1] + texts[j][at + len(target[j]) :])
            for run, part in parts:
                if previous is not None and _same(run, previous):
                    out[-1][-1].text += part
                else:
                    out.append(_run_like(run, _text(run, part)))
                previous = run
        return out

    def render(parent: int | None, low: int, high: int) -> list:
        out, position = [], low
        children = [k for k, span in enumerate(spans) if span.parent == parent]
        for k in sorted(children, key=lambda k: (ranges[k], k)):
            start, stop = ranges[k]
            if start > position:
                out += words(position, start)
                position = start
            entry = entries[k]
            if entry.container is not None:
                element = _shallow(entry.container)
                element.extend(render(k, start, stop))
                out.append(element)
                position = max(position, stop)
            elif entry.run is not None:
                out.append(_run_like(entry.run, entry.kept))
            else:
                out.append(entry.kept)
        return out + words(position, high)

    content = render(None, 0, len(target))
    element = paragraph.element
    for child in list(element):
        if child.tag != W + "pPr":
            element.remove(child)
    element.extend(content)


def _copied_words(paragraph: Paragraph, alignment, target: list[str]) -> dict[int, list[tuple[Piece, str]]]:
    """The target words that are a source word they are aligned to, copied as written, whose source word is
    written in runs of different formatting (a formula, `x²`): target word -> the source word's stretches."""
    out = {}
    for i, j in alignment:
        parts = paragraph.word_parts[i] if i < len(paragraph.word_parts) else []
        if len(parts) > 1 and "".join(part for _, part in parts) == target[j]:
            if any(not _same(piece.run, parts[0][0].run) for piece, _ in parts):
                out[j] = parts
    return out


def _word_runs(paragraph: Paragraph, alignment, owner: list[int | None]) -> list:
    """The run each target word is written with: that of the first source word aligned to it within the same
    container, else its neighbour's (before, then after), else the container's first run."""
    aligned: dict[int, list[int]] = {}
    for i, j in alignment:
        aligned.setdefault(j, []).append(i)
    runs: list = [None] * len(owner)
    for j, container in enumerate(owner):
        for i in sorted(aligned.get(j, [])):
            piece = paragraph.word_pieces[i]
            if paragraph.parents[piece] == container:
                runs[j] = piece.run
                break
    for j in range(len(runs)):
        if runs[j] is None:
            same = [k for k in range(len(runs)) if owner[k] == owner[j] and runs[k] is not None]
            near = min(same, key=lambda k: (abs(k - j), k > j), default=None)
            runs[j] = runs[near] if near is not None else _first_run(paragraph, owner[j])
    _keep_looks(paragraph, alignment, owner, runs)
    return runs


def _keep_looks(paragraph: Paragraph, alignment, owner: list[int | None], runs: list) -> None:
    """Every formatting that source words had in a container (a subscript, a colour) given to a target word of
    that container, if none has it yet: a word aligned to those source words, else the word nearest to where
    their neighbours put them (one aligned to nothing first), taken from a formatting that other target words
    still have."""
    looks = [_tree(run.find(W + "rPr")) for run in runs]
    linked = {j for _, j in alignment}
    groups: dict[tuple, list[int]] = {}  # (container, formatting) -> its source words
    for i, piece in enumerate(paragraph.word_pieces):
        groups.setdefault((paragraph.parents[piece], _tree(piece.run.find(W + "rPr"))), []).append(i)
    for (container, look), sources in groups.items():
        mine = [j for j, k in enumerate(owner) if k == container]
        if any(looks[j] == look for j in mine):
            continue
        count = Counter(looks[j] for j in mine)
        aligned = sorted({j for i, j in alignment if i in sources and owner[j] == container})
        before = [j for i, j in alignment if i < sources[0] and owner[j] == container]
        point = max(before) + 1 if before else 0
        # a target word aligned to nothing first (likely those words' translation), the nearest first
        nearest = sorted(mine, key=lambda j: (j in linked, abs(j - point), j < point))
        for j in aligned + nearest:
            if count[looks[j]] > 1:
                runs[j], looks[j] = paragraph.word_pieces[sources[0]].run, look
                break


def _first_run(paragraph: Paragraph, container: int | None):
    pieces = paragraph.entries[container].pieces if container is not None else None
    inside = [p for p in pieces or [] if p.text is not None]
    return (inside or paragraph.word_pieces)[0].run


def _same(run, other) -> bool:
    """Whether two runs look the same: one run, or the same properties."""
    return run is other or _tree(run.find(W + "rPr")) == _tree(other.find(W + "rPr"))


def _tree(element) -> tuple | None:
    if element is None:
        return None
    return element.tag, tuple(sorted(element.attrib.items())), tuple(_tree(child) for child in element)


def _weight(run) -> int:
    """How much formatting a run has: the number of its properties."""
    properties = run.find(W + "rPr")
    return len(properties) if properties is not None else 0


def _shallow(element):
    """A copy of `element` with its attributes and property children (`...Pr`), without its content."""
    new = element.makeelement(element.tag, element.attrib, element.nsmap)
    new.extend(copy.deepcopy(child) for child in element if child.tag.endswith("Pr"))
    return new


def _run_like(run, content):
    """A new run with `run`'s attributes and a copy of its properties, holding `content`."""
    new = run.makeelement(W + "r", run.attrib, run.nsmap)
    properties = run.find(W + "rPr")
    if properties is not None:
        new.append(copy.deepcopy(properties))
    new.append(content)
    return new


def _text(run, text: str):
    t = run.makeelement(W + "t", {XML_SPACE: "preserve"}, run.nsmap)
    t.text = text
    return t

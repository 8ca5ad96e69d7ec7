"""DrawingML text (`a:p` paragraphs of `a:r` runs): what PowerPoint's slides, charts and SmartArt diagrams hold,
and the charts and diagrams of a Word document (`hf_seq2seq.formats.documents.powerpoint`, `.wordprocessing`).

A paragraph is translated as one text, and its runs (one formatting each) follow the words as
`hf_seq2seq.formats.documents.runs` places them: each run written again with a copy of its properties (`a:rPr`),
runs formatted alike (the same properties) being one look, none that had words left empty. A hyperlink is a
run's property (`a:hlinkClick`): the runs of one link in a row are a container, as a Word hyperlink is, which
wraps the target words aligned to its words, in one piece, never none and never all of them (links glued into
one word, `[` and `1]` of a note's mark, are one container). Line breaks
(`a:br`), fields (`a:fld`: a slide number, a date, kept with their text) and anything else in a paragraph are
kept and moved with the words; the paragraph's properties (`a:pPr`, `a:endParaRPr`) stay where they are.
"""

from __future__ import annotations

import copy
from dataclasses import dataclass

from hf_seq2seq.formats.documents.base import Job
from hf_seq2seq.formats.documents.runs import Out, Piece, translate_paragraphs
from hf_seq2seq.formats.markup import names_a_language

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
CHART = "application/vnd.openxmlformats-officedocument.drawingml.chart+xml"
DIAGRAM_TEXT = (
    "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml",
    "application/vnd.ms-office.drawingml.diagramDrawing+xml",
)
"""A SmartArt diagram's parts that hold its text: its data, and the drawing of it that Office shows (written
again from the data only when the diagram is edited)."""
STAYS = frozenset({A + "pPr", A + "endParaRPr"})
"""A paragraph's own properties: first and last, not moved with the words."""


def translate_drawingml(roots: list, job: Job) -> None:
    """Every DrawingML paragraph under `roots` translated in one batched call, its runs following the words."""
    paragraphs = [p for root in roots for p in root.iter(A + "p")]
    translated = translate_paragraphs([_pieces(p) for p in paragraphs], job, weight=_weight, look=_look)
    for paragraph, out in zip(paragraphs, translated, strict=True):
        if out is not None:
            _write(paragraph, out)


def mark_drawingml_language(roots: list, language: str) -> None:
    """The language marks of DrawingML text under `roots` (`lang` of run, paragraph-end and default properties)
    that name a language set to `language`."""
    for root in roots:
        for properties in root.iter(A + "rPr", A + "endParaRPr", A + "defRPr"):
            if names_a_language(properties.get("lang")):
                properties.set("lang", language)


def _pieces(paragraph) -> list[Piece]:
    """The paragraph's runs and kept things in order; the runs of one link in a row in a container."""
    pieces: list[Piece] = []
    link = None  # the link of the container last added, while runs of it follow
    for child in paragraph:
        if child.tag in STAYS:
            continue
        if child.tag == A + "r":
            text = child.find(A + "t")
            run = Piece(text=(text.text or "") if text is not None else "", style=child)
            clicked = _link(child)
            glued = link is not None and run.text[:1].strip() and pieces[-1].pieces[-1].text[-1:].strip()
            if clicked is None:
                pieces.append(run)
            elif clicked == link or glued:  # a word cut between two links ("[" and "1]") is in one
                pieces[-1] = Piece(container=pieces[-1].container, pieces=(*pieces[-1].pieces, run))
            else:
                pieces.append(Piece(container=Link(clicked), pieces=(run,)))
            link = clicked
        else:
            pieces.append(Piece(kept=child, space=child.tag == A + "br"))
            link = None
    return pieces


@dataclass(frozen=True, eq=False)
class Link:
    """A container of the runs of one hyperlink in a row (they carry it in their properties: written as they
    are)."""

    key: tuple


def _link(run) -> tuple | None:
    """The hyperlink a run is part of (its `a:hlinkClick`, by its attributes and content), or None."""
    clicked = run.find(f"{A}rPr/{A}hlinkClick")
    return None if clicked is None else _tree(clicked)


def _look(run) -> tuple | None:
    """What tells runs' formatting apart: their properties (the link, which its container carries, aside)."""
    properties = run.find(A + "rPr")
    if properties is None:
        return None
    return (
        properties.tag,
        tuple(sorted(properties.attrib.items())),
        tuple(_tree(child) for child in properties if child.tag != A + "hlinkClick"),
    )


def _tree(element) -> tuple:
    return element.tag, tuple(sorted(element.attrib.items())), tuple(_tree(child) for child in element)


def _weight(run) -> int:
    """How much formatting a run has: its properties' attributes and elements."""
    properties = run.find(A + "rPr")
    return 0 if properties is None else len(properties.attrib) + len(properties)


def _write(paragraph, out: list[Out]) -> None:
    """The paragraph's content replaced by `out`, between its properties."""
    for child in list(paragraph):
        if child.tag not in STAYS:
            paragraph.remove(child)
    end = paragraph.find(A + "endParaRPr")
    position = list(paragraph).index(end) if end is not None else len(paragraph)
    for k, element in enumerate(_elements(out)):
        paragraph.insert(position + k, element)


def _elements(out: list[Out]) -> list:
    """The elements of translated pieces: a run per text, kept things as they were, a link's runs in place."""
    elements = []
    for piece in out:
        if piece.container is not None:
            elements += _elements(piece.pieces)
        else:
            elements.append(piece.kept if piece.kept is not None else _run(piece.style, piece.text))
    return elements


def _run(like, text: str):
    """A new run with `like`'s properties, holding `text`."""
    run = like.makeelement(A + "r", like.attrib, like.nsmap)
    properties = like.find(A + "rPr")
    if properties is not None:
        run.append(copy.deepcopy(properties))
    t = run.makeelement(A + "t", {}, like.nsmap)
    t.text = text
    run.append(t)
    return run

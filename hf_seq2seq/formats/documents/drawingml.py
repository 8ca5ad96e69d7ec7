"""DrawingML text (`a:p` paragraphs of `a:r` runs): what PowerPoint's slides, charts and SmartArt diagrams hold,
and the charts and diagrams of a Word document (`hf_seq2seq.formats.documents.powerpoint`, `.wordprocessing`).

A paragraph is translated as one text, and its runs (one formatting each, a hyperlink being a run's property)
follow the words as `hf_seq2seq.formats.documents.runs` places them: each run written again with a copy of its
properties (`a:rPr`), none that had words left empty. Line breaks (`a:br`), fields (`a:fld`: a slide number, a
date, kept with their text) and anything else in a paragraph are kept and moved with the words; the paragraph's
properties (`a:pPr`, `a:endParaRPr`) stay where they are.
"""

from __future__ import annotations

import copy

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
    translated = translate_paragraphs([_pieces(p) for p in paragraphs], job, weight=_weight)
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
    pieces = []
    for child in paragraph:
        if child.tag in STAYS:
            continue
        if child.tag == A + "r":
            text = child.find(A + "t")
            pieces.append(Piece(text=(text.text or "") if text is not None else "", style=child))
        else:
            pieces.append(Piece(kept=child, space=child.tag == A + "br"))
    return pieces


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
    for k, piece in enumerate(out):
        paragraph.insert(
            position + k, piece.kept if piece.kept is not None else _run(piece.style, piece.text)
        )


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

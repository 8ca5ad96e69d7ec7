"""PowerPoint presentations (`.pptx`), read and written with python-pptx: every paragraph of every slide (text
boxes, placeholders, shapes in groups, table cells), of its speaker notes, of its charts (titles, axis titles,
labels written as text) and of its SmartArt diagrams (their data, and the drawing PowerPoint shows from it) is
translated, its formatting kept, and so are the shapes' and pictures' alternative texts and titles. A chart's
categories and series names are values of its embedded workbook: kept.

A paragraph (DrawingML's `a:p`) is translated as one text, and its runs (`a:r`: one formatting, a hyperlink
being a run's property) follow the words as `hf_seq2seq.formats.documents.runs` places them: each run written
again with a copy of its properties (`a:rPr`), none that had words left empty. Line breaks (`a:br`), fields
(`a:fld`: a slide number, a date, kept with their text) and anything else in a paragraph are kept and moved
with the words; the paragraph's properties (`a:pPr`, `a:endParaRPr`) stay where they are. The placeholders of
slide masters and layouts (their prompts: "Click to edit Master title style") are not translated; their other
shapes (a footer's text box, "Thank you.") are, as they show on the slides. Given the translation's language (`Job.target_lang`),
the text's language marks (`lang` of run, paragraph-end and default properties) are set to it: in the slides,
notes, charts and diagrams, and in the defaults of the presentation, its masters, layouts and notes master,
which text without a mark of its own inherits. A damaged file, or one that would unpack to more than
`hf_seq2seq.formats.documents.base`'s limits, is a `DocumentError`.
"""

from __future__ import annotations

import copy
import io

from hf_seq2seq.formats.documents.base import (
    DAMAGED,
    DocumentError,
    DocumentFormat,
    Job,
    open_archive,
    read_xml,
    require,
    translate_descriptions,
)
from hf_seq2seq.formats.documents.runs import Out, Piece, translate_paragraphs
from hf_seq2seq.formats.markup import names_a_language

A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
CHART = "application/vnd.openxmlformats-officedocument.drawingml.chart+xml"
DIAGRAM_TEXT = (
    "application/vnd.openxmlformats-officedocument.drawingml.diagramData+xml",
    "application/vnd.ms-office.drawingml.diagramDrawing+xml",
)
"""A SmartArt diagram's parts that hold its text: its data, and the drawing of it that PowerPoint shows (written
again from the data only when the diagram is edited). python-pptx reads them as bytes (`Part.blob`)."""
STAYS = frozenset({A + "pPr", A + "endParaRPr"})
"""A paragraph's own properties: first and last, not moved with the words."""


class Pptx(DocumentFormat):
    name = "PowerPoint presentation"
    extensions = (".pptx",)

    def translate(self, data: bytes, job: Job) -> bytes:
        pptx = require("pptx", "python-pptx", ".pptx")
        etree = require("lxml.etree", "lxml", ".pptx")
        what = "a PowerPoint presentation (.pptx)"
        open_archive(data, what, job.markup_limit).close()
        stream = io.BytesIO(data)
        try:
            presentation = pptx.Presentation(stream)
            parts = []
            for slide in presentation.slides:
                parts.append(slide.element)
                if slide.has_notes_slide:
                    parts.append(slide.notes_slide.element)
            for (
                master
            ) in presentation.slide_masters:  # what shows on every slide of a layout, but the prompts
                for holder in (master, *master.slide_layouts):
                    parts += [shape.element for shape in holder.shapes if not shape.is_placeholder]
            diagrams = []
            for part in presentation.part.package.iter_parts():
                if part.content_type == CHART:
                    parts.append(part.chart.element)
                elif part.content_type in DIAGRAM_TEXT:
                    diagrams.append((part, read_xml(part.blob, what, ".pptx")))
        except (*DAMAGED, pptx.exc.PackageNotFoundError) as error:
            reason = str(error).replace(f"file '{stream}'", "the file")  # python-pptx names the stream object
            raise DocumentError(f"not {what}, or a damaged one: {reason}") from None
        parts += [root for _, root in diagrams]
        paragraphs = [p for part in parts for p in part.iter(A + "p")]
        translated = translate_paragraphs([_pieces(p) for p in paragraphs], job, weight=_weight)
        for paragraph, out in zip(paragraphs, translated, strict=True):
            if out is not None:
                _write(paragraph, out)
        shapes = [e for part in parts for e in part.iter(P + "cNvPr")]
        translate_descriptions(job, [(e, name) for e in shapes for name in ("descr", "title")])
        if job.target_lang:
            masters = presentation.slide_masters
            defaults = [presentation.element, *(m.element for m in masters)]
            if any(slide.has_notes_slide for slide in presentation.slides):  # else asking would add one
                defaults.append(presentation.notes_master.element)
            layouts = [layout.element for master in masters for layout in master.slide_layouts]
            for root in (*defaults, *layouts, *parts):
                for properties in root.iter(A + "rPr", A + "endParaRPr", A + "defRPr"):
                    if names_a_language(properties.get("lang")):
                        properties.set("lang", job.target_lang)
        for part, root in diagrams:
            part.blob = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
        written = io.BytesIO()
        presentation.save(written)
        return written.getvalue()


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

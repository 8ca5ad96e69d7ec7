"""PowerPoint presentations (`.pptx`), read and written with python-pptx: every paragraph of every slide (text
boxes, placeholders, shapes in groups, table cells), of its speaker notes, of its charts (titles, axis titles,
labels written as text) and of its SmartArt diagrams (their data, and the drawing PowerPoint shows from it) is
translated, its formatting kept, and so are the shapes' and pictures' alternative texts and titles and the
slides' comments (PowerPoint 2007's, plain text, and PowerPoint 365's modern comments and their replies,
paragraphs as a slide's). A chart's categories and series names are values of its embedded workbook: kept.

A paragraph (DrawingML's `a:p`) is translated as one text, its runs following the words
(`hf_seq2seq.formats.documents.drawingml`). The placeholders of slide masters and layouts (their prompts: "Click
to edit Master title style") are not translated; their other shapes (a footer's text box, "Thank you.") are, as
they show on the slides. Given the translation's language (`Job.target_lang`), the text's language marks
(`lang` of run, paragraph-end and default properties) are set to it: in the slides, notes, charts and diagrams,
and in the defaults of the presentation, its masters, layouts and notes master, which text without a mark of its
own inherits. A damaged file, or one that would unpack to more than `hf_seq2seq.formats.documents.base`'s limits,
is a `DocumentError`.
"""

from __future__ import annotations

import io

from hf_seq2seq.formats.documents.base import (
    DAMAGED,
    DocumentError,
    DocumentFormat,
    Job,
    open_archive,
    read_xml,
    repackaged,
    require,
    translate_descriptions,
)
from hf_seq2seq.formats.documents.drawingml import (
    CHART,
    DIAGRAM_TEXT,
    mark_drawingml_language,
    translate_drawingml,
)

P = "{http://schemas.openxmlformats.org/presentationml/2006/main}"
COMMENTS = "application/vnd.openxmlformats-officedocument.presentationml.comments+xml"
"""A slide's comments as PowerPoint 2007 writes them: each one's text plain (`p:text`)."""
MODERN_COMMENTS = "application/vnd.ms-powerpoint.comments+xml"
"""A slide's comments as PowerPoint 365 writes them: each one's (and each reply's) text in DrawingML paragraphs."""


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
            # what shows on every slide of a layout, but the prompts
            for master in presentation.slide_masters:
                for holder in (master, *master.slide_layouts):
                    parts += [shape.element for shape in holder.shapes if not shape.is_placeholder]
            diagrams, comments = [], []  # parts python-pptx keeps as bytes: read here, written back below
            for part in presentation.part.package.iter_parts():
                if part.content_type == CHART:
                    parts.append(part.chart.element)
                elif part.content_type in (*DIAGRAM_TEXT, MODERN_COMMENTS):
                    diagrams.append((part, read_xml(part.blob, what, ".pptx")))
                elif part.content_type == COMMENTS:
                    comments.append((part, read_xml(part.blob, what, ".pptx")))
        except (*DAMAGED, pptx.exc.PackageNotFoundError) as error:
            reason = str(error).replace(f"file '{stream}'", "the file")  # python-pptx names the stream object
            raise DocumentError(f"not {what}, or a damaged one: {reason}") from None
        parts += [root for _, root in diagrams]
        translate_drawingml(parts, job)
        shapes = [e for part in parts for e in part.iter(P + "cNvPr")]
        # a 2007 comment's text is plain, as a description is
        texts = [(e, None) for _, root in comments for e in root.iter(P + "text")]
        translate_descriptions(job, [(e, name) for e in shapes for name in ("descr", "title")] + texts)
        if job.target_lang:
            masters = presentation.slide_masters
            defaults = [presentation.element, *(m.element for m in masters)]
            if any(slide.has_notes_slide for slide in presentation.slides):  # else asking would add one
                defaults.append(presentation.notes_master.element)
            layouts = [layout.element for master in masters for layout in master.slide_layouts]
            mark_drawingml_language([*defaults, *layouts, *parts], job.target_lang)
        for part, root in diagrams + comments:
            part.blob = etree.tostring(root, xml_declaration=True, encoding="UTF-8", standalone=True)
        written = io.BytesIO()
        presentation.save(written)
        return repackaged(data, written.getvalue())

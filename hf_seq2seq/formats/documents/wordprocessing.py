"""Word documents (`.docx`), read and written with python-docx: every paragraph of the body, of tables (nested
too), text boxes, headers, footers, footnotes, endnotes and comments is translated, its formatting kept.

A paragraph is translated as one text (sentence by sentence, with its word alignment), and its formatting
follows the words as `hf_seq2seq.formats.documents.runs` places them:

* Each target word takes the run (the stretch of one formatting: bold, italic, font, colour, ...) of the
  source word it is aligned to; runs formatted alike (the same `w:rPr`) are one look, and consecutive words of
  one look are written as one run, with a copy of that run's properties. A space between runs goes to the run
  with fewer properties. No formatting is lost: one that no target word took (a subscript, a colour whose words
  were not aligned) is given to the target word nearest to where its words would be; a word the model copied
  (a formula, a name) is written run by run as in the source (`H₂O`'s subscript), one it translated stretch by
  stretch (`1st` -> `1er`, `er` in superscript).
* A hyperlink (or a tracked insertion, a tracked move's text at its new place and at its old, a smart tag, a
  custom XML element) is a container: it wraps the target words aligned to the words it wrapped, with its own
  attributes, and one that had text always gets target words, never all of them. A tracked deletion's text is
  kept as it was: it is no longer the paragraph's, and translating it with the words around it would mix two
  versions of a sentence into one.
* Everything else in a paragraph is kept, unchanged, and moved with the words (after the target word aligned to
  the source word before it): images, tabs, breaks, bookmarks, footnote references, content controls,
  equations, tracked deletions, and fields (a page number, a table of contents: from the field's begin mark to
  its end mark, whose result Word computes again) with their text as written. Tabs, breaks and pictures count
  as spaces between words; what was inside a run is written in a run with its properties.

The paragraph's properties (style, alignment, numbering, spacing) are untouched; a paragraph with no letter
(empty, an image alone, a number) is left exactly as it was. Footnotes, endnotes and comments are translated
like the body (their parts read as XML through python-docx's part factory), and so is the text of charts
(titles, axis titles) and SmartArt diagrams (their data, and the drawing Word shows from it), DrawingML's
paragraphs (`hf_seq2seq.formats.documents.drawingml`, as PowerPoint's). Given the translation's language
(`Job.target_lang`), the language marks of the text (styles and runs, charts and diagrams) are set to it.
Pictures' alternative texts and titles (`descr`, `title`) are translated too, and so is HTML that the document
imports whole (`w:altChunk`: a part Word turns into paragraphs when it opens the file) as an HTML page is
(`hf_seq2seq.formats.documents.html_pages`), in its web archive where it is one (`.mht`: its HTML written back
with its transfer encoding). A damaged file, or one that would
unpack to more than `hf_seq2seq.formats.documents.base`'s limits, is a `DocumentError`.
"""

from __future__ import annotations

import copy
import email
import email.encoders
import io
import quopri
from email import policy

from hf_seq2seq.formats.documents.base import (
    DAMAGED,
    DocumentError,
    DocumentFormat,
    Job,
    open_archive,
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
from hf_seq2seq.formats.documents.html_pages import HtmlPage
from hf_seq2seq.formats.documents.runs import Out, Piece, translate_paragraphs
from hf_seq2seq.formats.markup import names_a_language

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
XML_SPACE = "{http://www.w3.org/XML/1998/namespace}space"
ALTERNATE_CONTENT = "{http://schemas.openxmlformats.org/markup-compatibility/2006}AlternateContent"
CONTAINERS = frozenset(W + tag for tag in ("hyperlink", "ins", "moveFrom", "moveTo", "smartTag", "customXml"))
"""Elements that wrap runs of the paragraph's text: containers, written again around the target words they take."""
BREAKS = frozenset(
    [*(W + tag for tag in ("tab", "ptab", "br", "cr", "drawing", "pict", "object")), ALTERNATE_CONTENT]
)
"""Run content that stands between words (a tab, a line break, a picture)."""
DESCRIBED = (
    "{http://schemas.openxmlformats.org/drawingml/2006/wordprocessingDrawing}docPr",
    "{http://schemas.openxmlformats.org/drawingml/2006/picture}cNvPr",
)
"""A drawing's and its picture's properties, whose `descr` (alternative text) and `title` are translated."""
TRANSLATED_PARTS = ("document.main", "header", "footer", "footnotes", "endnotes", "comments")
"""The parts translated, by the end of their content type (`...wordprocessingml.header+xml`)."""
NOTES = ("footnotes", "endnotes", "comments")
"""Parts python-docx (before 1.2, for comments) keeps as bytes: registered to be read as XML parts."""
IMPORTED_HTML = ("text/html", "application/xhtml+xml")
"""The content types of an imported part (`w:altChunk`) that is an HTML page."""
WEB_ARCHIVE = "message/rfc822"
"""The content type of an imported part that is a web archive (MHTML: the page and its pictures in one message)."""
STYLES_WITH_EFFECTS = "application/vnd.ms-word.stylesWithEffects+xml"
"""The copy of the styles Word 2010 reads, which python-docx keeps as bytes: read as XML too, for its language
marks."""


class Docx(DocumentFormat):
    name = "Word document"
    extensions = (".docx",)

    def translate(self, data: bytes, job: Job) -> bytes:
        docx = require("docx", "python-docx", ".docx")
        _read_notes_as_xml()
        open_archive(data, "a Word document (.docx)", job.markup_limit).close()
        stream = io.BytesIO(data)
        try:
            document = docx.Document(stream)
        except DAMAGED as error:
            reason = str(error).replace(f"file '{stream}'", "the file")  # python-docx names the stream object
            raise DocumentError(f"not a Word document (.docx), or a damaged one: {reason}") from None
        paragraphs, pieces, pictures, drawings, imported = [], [], [], [], {}
        for part in document.part.package.iter_parts():
            if part.content_type in IMPORTED_HTML:
                imported[part.partname.lstrip("/")] = HtmlPage().translate(part.blob, job)
            elif part.content_type == WEB_ARCHIVE:
                imported[part.partname.lstrip("/")] = _translate_web_archive(part.blob, job)
            elif part.content_type in (CHART, *DIAGRAM_TEXT):
                drawings.append(part.element)
            elif part.content_type.endswith(tuple(f".{name}+xml" for name in TRANSLATED_PARTS)):
                depth = 0  # inside a field (which may run over several paragraphs)
                for element in part.element.iter(W + "p"):
                    found, depth = _pieces(element, depth)
                    paragraphs.append(element)
                    pieces.append(found)
                pictures += part.element.iter(*DESCRIBED)
        translated = translate_paragraphs(pieces, job, weight=_weight, look=_look)
        for paragraph, out in zip(paragraphs, translated, strict=True):
            if out is not None:
                for child in list(paragraph):
                    if child.tag != W + "pPr":
                        paragraph.remove(child)
                paragraph.extend(_elements(out))
        translate_drawingml(drawings, job)
        translate_descriptions(job, [(e, name) for e in pictures for name in ("descr", "title")])
        if job.target_lang:
            _mark_language(document, job.target_lang)
            mark_drawingml_language(drawings, job.target_lang)
        written = io.BytesIO()
        document.save(written)
        return repackaged(data, written.getvalue(), imported)


def _translate_web_archive(data: bytes, job: Job) -> bytes:
    """A web archive (MHTML) with its HTML translated, each part written back with its transfer encoding."""
    message = email.message_from_bytes(data, policy=policy.compat32)
    for part in message.walk():
        if part.get_content_type() in IMPORTED_HTML:
            translated = HtmlPage().translate(part.get_payload(decode=True), job)
            encoding = (part.get("Content-Transfer-Encoding") or "").lower()
            del part["Content-Transfer-Encoding"]
            part.set_payload(translated)
            if encoding == "base64":
                email.encoders.encode_base64(part)
            elif encoding == "quoted-printable":  # spaces as spaces (`encode_quopri` writes them as =20)
                part.set_payload(quopri.encodestring(translated).decode("ascii"))
                part["Content-Transfer-Encoding"] = encoding
            else:
                email.encoders.encode_7or8bit(part)
    linesep = "\r\n" if b"\r\n" in data else "\n"
    return message.as_bytes(policy=policy.compat32.clone(linesep=linesep))


def _mark_language(document, language: str) -> None:
    """Every language mark of the text (`w:lang`'s `w:val`: in the style definitions and their defaults, and on
    runs) that names a language set to `language`; East Asian and complex-script marks (`w:eastAsia`,
    `w:bidi`) are other scripts' and stay."""
    from docx.opc.part import XmlPart

    for part in document.part.package.iter_parts():
        if isinstance(part, XmlPart):
            for mark in part.element.iter(W + "lang"):
                if names_a_language(mark.get(W + "val")):
                    mark.set(W + "val", language)


def _read_notes_as_xml() -> None:
    """Footnotes, endnotes and comments (and Word 2010's styles, charts and SmartArt diagrams) read as XML parts (whose XML python-docx writes back from the tree),
    by python-docx's own way of choosing a part's class, `PartFactory.part_type_for`; a class set there already
    (python-docx's own for comments, since 1.2) is kept."""
    from docx.opc.part import PartFactory, XmlPart

    prefix = "application/vnd.openxmlformats-officedocument.wordprocessingml."
    for name in NOTES:
        PartFactory.part_type_for.setdefault(f"{prefix}{name}+xml", XmlPart)
    for content_type in (STYLES_WITH_EFFECTS, CHART, *DIAGRAM_TEXT):
        PartFactory.part_type_for.setdefault(content_type, XmlPart)


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
                    out.append(Piece(text=content.text or "", style=child))
                else:
                    out.append(Piece(kept=(child, content), space=content.tag in BREAKS))
                depth += 1 if mark == "begin" else -1 if mark == "end" and depth else 0
        elif child.tag in CONTAINERS and depth == 0:
            inner, depth = _pieces(child, depth)
            out.append(Piece(container=child, pieces=inner))
        else:
            out.append(Piece(kept=(None, child)))
    return out, depth


def _elements(out: list[Out]) -> list:
    """The elements of a translated paragraph: a run per text, kept things (those from inside a run in a run
    like theirs), containers copied around their pieces."""
    elements = []
    for piece in out:
        if piece.container is not None:
            element = _shallow(piece.container)
            element.extend(_elements(piece.pieces))
        elif piece.kept is not None:
            run, element = piece.kept
            element = _run_like(run, element) if run is not None else element
        else:
            element = _run_like(piece.style, _text(piece.style, piece.text))
        elements.append(element)
    return elements


def _look(run) -> tuple | None:
    """What tells runs' formatting apart: their properties."""
    return _tree(run.find(W + "rPr"))


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

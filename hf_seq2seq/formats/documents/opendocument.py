"""OpenDocument text and presentations (`.odt`, `.odp`: LibreOffice, OpenOffice), read and written as the zip
of XML files they are (zipfile and lxml): every paragraph and heading (`text:p`, `text:h`) of the body (tables,
lists, frames, slides and their notes, footnotes, comments) and of the headers and footers is translated, the
rest of the file kept as it was.

A paragraph is translated as one text, and what formats its words follows them as
`hf_seq2seq.formats.documents.runs` places them: a span of a style (`text:span`) wraps the target words that take
its style (spans of the same styles being one look), and a link (`text:a`, a container as a Word hyperlink is) the target words aligned to its words, in one
piece; each written again with its own attributes, none that had words left empty. Everything
else in a paragraph is kept and moved with the words: spaces (`text:s`), tabs and line breaks, fields (a date, a
page number, a user field) with their text, bookmarks, images and frames, footnotes and comments (whose own
paragraphs are translated in turn). Every file of the archive is written back in its order with its
compression (the `mimetype` first and stored, as OpenDocument requires): `content.xml` and `styles.xml`
translated where they hold text (pictures' and frames' titles and descriptions too; and, given the
translation's language, `Job.target_lang`, their text styles' languages set to it, as the document's own in
`meta.xml`), every other file byte for byte. The XML is read without loading DTDs or
resolving entities, and a part that declares a DTD (whose entities could point at files or grow without end)
is refused. A damaged file, or one that would unpack to more than
`hf_seq2seq.formats.documents.base`'s limits, is a `DocumentError`.

Not the odfpy library: its model of a document is generated from the OpenDocument schema and rewrites the
whole file on saving; the few elements that hold text are simpler to reach with lxml, which python-docx and
python-pptx bring already.
"""

from __future__ import annotations

import io
import zipfile

from hf_seq2seq.formats.documents.base import (
    DAMAGED,
    DocumentError,
    DocumentFormat,
    Job,
    mark_document_language,
    open_archive,
    read_xml,
    translate_descriptions,
)
from hf_seq2seq.formats.documents.runs import Out, Piece, translate_paragraphs
from hf_seq2seq.formats.markup import names_a_language

TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
PARAGRAPHS = (TEXT + "p", TEXT + "h")
SPAN = TEXT + "span"
"""A style over its text: each target word takes the spans of its source word (`Piece.style`)."""
LINK = TEXT + "a"
"""A link: a container (`Piece.container`) around the target words aligned to its words."""
SPACES = frozenset({TEXT + "s", TEXT + "tab", TEXT + "line-break"})
"""Kept elements that stand between words."""
META = "meta.xml"
SVG = "{urn:oasis:names:tc:opendocument:xmlns:svg-compatible:1.0}"
FO = "{urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0}"
STYLE = "{urn:oasis:names:tc:opendocument:xmlns:style:1.0}"
PARTS = {"content.xml": OFFICE + "body", "styles.xml": OFFICE + "master-styles"}
"""The XML files translated, and the element of each under which the text is."""


class OpenDocument(DocumentFormat):
    name = "OpenDocument text or presentation"
    extensions = (".odt", ".odp")

    def translate(self, data: bytes, job: Job) -> bytes:
        what = "an OpenDocument file (.odt, .odp)"
        with open_archive(data, what, job.markup_limit) as archive:
            try:
                members = [(item, archive.read(item)) for item in archive.infolist()]
            except DAMAGED as error:
                raise DocumentError(f"not {what}, or a damaged one: {error}") from None
        trees = {
            item.filename: read_xml(content, what, ".odt").getroottree()
            for item, content in members
            if item.filename in PARTS
        }
        if "content.xml" not in trees:
            raise DocumentError(f"not {what}: it has no content.xml")
        for name, tree in trees.items():
            if tree.docinfo.doctype:  # OpenDocument declares no DTD: entities here would point elsewhere
                raise DocumentError(f"{what} whose {name} declares a DTD (entities) is refused")
        paragraphs = [
            (name, paragraph)
            for name, tree in trees.items()
            for top in tree.getroot().iter(PARTS[name])
            for paragraph in top.iter(*PARAGRAPHS)
        ]
        translated = translate_paragraphs(
            [_pieces(p, ()) for _, p in paragraphs], job, weight=len, look=_look
        )
        changed = set()
        for (name, paragraph), out in zip(paragraphs, translated, strict=True):
            if out is not None:
                _write(paragraph, out)
                changed.add(name)
        described = [
            (name, element)
            for name, tree in trees.items()
            for top in tree.getroot().iter(PARTS[name])
            for element in top.iter(SVG + "title", SVG + "desc")
        ]
        translated_descriptions = translate_descriptions(job, [(element, None) for _, element in described])
        changed |= {name for name, element in described if element in translated_descriptions}
        if job.target_lang:
            changed |= {name for name, tree in trees.items() if _mark_language(tree, job.target_lang)}
            meta = next(
                (read_xml(data, what, ".odt") for item, data in members if item.filename == META), None
            )
            if meta is not None and mark_document_language(meta, job.target_lang):
                trees[META] = meta.getroottree()
                changed.add(META)
        written = io.BytesIO()
        with zipfile.ZipFile(written, "w") as archive:
            for item, content in members:
                if item.filename in changed:
                    xml = io.BytesIO()
                    trees[item.filename].write(xml, xml_declaration=True, encoding="UTF-8")
                    content = xml.getvalue()
                archive.writestr(item, content)
        return written.getvalue()


def _mark_language(tree, language: str) -> bool:
    """Every text style's language (`fo:language` with `fo:country`, and `style:rfc-language-tag`) that names a
    language set to `language` (a BCP 47 tag: "fr", "fr-CA"); whether any was. Asian and complex-script
    languages (`style:language-asian`, ...) are other scripts' and stay."""
    primary, _, region = language.partition("-")
    found = False
    for properties in tree.getroot().iter(STYLE + "text-properties"):
        if names_a_language(properties.get(FO + "language")):
            properties.set(FO + "language", primary)
            if region:
                properties.set(FO + "country", region)
            else:
                properties.attrib.pop(FO + "country", None)
            if properties.get(STYLE + "rfc-language-tag") is not None:
                properties.set(STYLE + "rfc-language-tag", language)
            found = True
    return found


def _pieces(element, path: tuple) -> list[Piece]:
    """The text, kept things and links inside `element`, each text with the spans around it within its link or
    paragraph (`path`, outermost first) as its style, each kept thing and link with them too."""
    pieces = [Piece(text=element.text, style=path)] if element.text else []
    for child in element:
        if child.tag == SPAN:
            pieces += _pieces(child, (*path, child))
        elif child.tag == LINK:
            pieces.append(Piece(container=(child, path), pieces=_pieces(child, ())))
        else:  # an element, a comment, an entity reference
            pieces.append(Piece(kept=(child, path), space=child.tag in SPACES))
        if child.tail:
            pieces.append(Piece(text=child.tail, style=path))
    return pieces


def _look(path: tuple) -> tuple:
    """What tells texts' formatting apart: the styles of the spans around them (spans of one style alike)."""
    return tuple((span.get(TEXT + "style-name"), span.get(TEXT + "class-names")) for span in path)


def _write(parent, out: list[Out]) -> None:
    """`parent`'s content (a paragraph's, a link's) replaced by `out`: each text, kept thing and link inside new
    copies of its spans, a span opened again where the one before it closed."""
    for child in list(parent):
        parent.remove(child)
    parent.text = None
    open_: list[tuple] = [(None, parent)]  # (source span, its copy), `parent` at the bottom
    for piece in out:
        held = piece.kept if piece.kept is not None else piece.container
        path = piece.style if held is None else held[1]
        depth = 0
        while depth + 1 < len(open_) and depth < len(path) and open_[depth + 1][0] is path[depth]:
            depth += 1
        del open_[depth + 1 :]
        for span in path[depth:]:
            copy = span.makeelement(span.tag, span.attrib, span.nsmap)
            open_[-1][1].append(copy)
            open_.append((span, copy))
        into = open_[-1][1]
        if piece.container is not None:
            link = held[0]
            copy = link.makeelement(link.tag, link.attrib, link.nsmap)
            into.append(copy)
            _write(copy, piece.pieces)
        elif piece.kept is not None:
            element = held[0]
            element.tail = None
            into.append(element)
        elif len(into):
            into[-1].tail = (into[-1].tail or "") + piece.text
        else:
            into.text = (into.text or "") + piece.text

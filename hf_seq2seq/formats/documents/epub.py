"""EPUB e-books (`.epub`), read and written as the zip they are (zipfile, lxml): every XHTML content document the
package lists (its chapters, and its navigation document: the table of contents) is translated as HTML
(`hf_seq2seq.formats.markup.translate_html`: tags, attributes and markup kept byte for byte, inline elements
moved with their words), all of them in one batched call; so are the title and the entries' labels of an NCX
table of contents (EPUB 2's, which EPUB 3 books carry too for older readers), in a second call, the rest of
the NCX kept, and the book's title and description in its package document (`dc:title`, `dc:description`), in
a third; every other file (the package document's other metadata, style sheets, images, fonts) is written back
as it was, each file in its order with its compression (the `mimetype` first and stored, as EPUB requires).
Given the translation's language (`Job.target_lang`), the `lang` and `xml:lang` attributes of the XHTML, the
NCX's and the book's language in its package document (`dc:language`) are set to it.

The package document is found through `META-INF/container.xml` and read without loading DTDs or resolving
entities. A file that is not an EPUB, a content document that is not UTF-8, or a file that would unpack to
more than `hf_seq2seq.formats.documents.base`'s limits is a `DocumentError`.

Not ebooklib: it rebuilds the whole book on writing (the package document, the navigation, the file names), and
a translation should change the text and nothing else.
"""

from __future__ import annotations

import io
import posixpath
import re
import zipfile
from urllib.parse import unquote

from hf_seq2seq.formats.documents.base import (
    BOM,
    DAMAGED,
    DocumentError,
    DocumentFormat,
    Job,
    has_words,
    mark_document_language,
    open_archive,
    read_xml,
)
from hf_seq2seq.formats.markup import names_a_language, translate_html

CONTAINER = "META-INF/container.xml"
WHAT = "an EPUB e-book (.epub)"
XHTML = frozenset({"application/xhtml+xml", "text/html"})
NCX = "application/x-dtbncx+xml"
NCX_NAMESPACE = "{http://www.daisy.org/z3986/2005/ncx/}"
XML_LANG = "{http://www.w3.org/XML/1998/namespace}lang"
DUBLIN_CORE = "{http://purl.org/dc/elements/1.1/}"
SHOWN_METADATA = (DUBLIN_CORE + "title", DUBLIN_CORE + "description")
"""The package document's metadata that a reader's library shows and that is words: the book's title and its
description."""
MARKUP = re.compile(r"<[A-Za-z/][^<>]*>")
"""A tag: a description written in HTML (escaped inside the XML)."""
SHOWN = frozenset({NCX_NAMESPACE + "docTitle", NCX_NAMESPACE + "navLabel"})
"""The NCX elements whose `text` a reader shows and that are words: the book's title and each entry's label (of
the table of contents, the page list and the other lists); the author is a name, kept."""


class Epub(DocumentFormat):
    name = "EPUB e-book"
    extensions = (".epub",)

    def translate(self, data: bytes, job: Job) -> bytes:
        with open_archive(data, WHAT, job.markup_limit) as archive:
            try:
                members = [(item, archive.read(item)) for item in archive.infolist()]
                names = {item.filename: k for k, (item, _) in enumerate(members)}
                package_paths = _packages(archive)
                items = _manifest(archive, package_paths)
                documents = list(dict.fromkeys(path for path, media_type in items if media_type in XHTML))
                tables_of_contents = [
                    names[path] for path, media_type in items if media_type == NCX and path in names
                ]
                packages = [names[name] for name in package_paths if name in names]
            except DocumentError:
                raise
            except DAMAGED as error:
                raise DocumentError(f"not {WHAT}, or a damaged one: {error}") from None
        todo = [names[name] for name in documents if name in names]
        texts = []
        for k in todo:
            item, content = members[k]
            try:
                text = content.decode("utf-8")
            except UnicodeDecodeError as error:
                raise DocumentError(
                    f"{item.filename} in the .epub is not UTF-8 (byte {error.start})"
                ) from None
            texts.append(text.removeprefix(BOM))
        translated = translate_html(
            job.translator, texts, batch_size=job.batch_size, decoding=job.decoding,
            source_lang=job.source_lang, glossary=job.glossary, target_lang=job.target_lang,
        )  # fmt: skip
        for k, text in zip(todo, translated, strict=True):
            item, content = members[k]
            members[k] = (
                item,
                (BOM if content.startswith(BOM.encode()) else "").encode() + text.encode("utf-8"),
            )
        _translate_labels(members, tables_of_contents, job)
        _translate_metadata(members, packages, job)
        written = io.BytesIO()
        with zipfile.ZipFile(written, "w") as out:
            for item, content in members:
                out.writestr(item, content)
        return written.getvalue()


def _translate_labels(members: list, tables_of_contents: list[int], job: Job) -> None:
    """The NCX files among `members` (at `tables_of_contents`) with their labels translated in one call and
    written again; one without a label, or that lxml cannot read (an undeclared entity), is kept as it was: the
    book's own navigation document is translated anyway."""
    trees, labels = {}, []
    for k in tables_of_contents:
        try:
            tree = read_xml(members[k][1], WHAT, ".epub").getroottree()
        except DocumentError:
            continue
        found = [
            text
            for text in tree.getroot().iter(NCX_NAMESPACE + "text")
            if text.getparent().tag in SHOWN and has_words(text.text or "")
        ]
        if found:
            trees[k] = tree
            labels += found
    for text, result in zip(labels, job.translate([" ".join(t.text.split()) for t in labels]), strict=True):
        text.text = result.target
    for k, tree in trees.items():
        if job.target_lang and names_a_language(tree.getroot().get(XML_LANG)):
            tree.getroot().set(XML_LANG, job.target_lang)
        members[k] = (members[k][0], _written(tree))


def _translate_metadata(members: list, packages: list[int], job: Job) -> None:
    """The book's title and description in its package documents (at `packages` among `members`; what a reader's
    library shows of it) translated in one call, a description written in HTML (as Calibre writes one) as HTML;
    given the translation's language (`Job.target_lang`), the book's language set to it (`mark_document_language`).
    A package document is written again only where something changed; its other metadata (the author's name, the
    rights, the catalogue's subjects) is kept."""
    trees, shown = {}, []
    for k in packages:
        trees[k] = read_xml(members[k][1], WHAT, ".epub").getroottree()
        shown += [(k, e) for e in trees[k].getroot().iter(*SHOWN_METADATA) if has_words(e.text or "")]
    markup = [(k, e) for k, e in shown if MARKUP.search(e.text)]
    plain = [(k, e) for k, e in shown if not MARKUP.search(e.text)]
    results = [r.target for r in job.translate([" ".join(e.text.split()) for _, e in plain])]
    results += translate_html(
        job.translator, [e.text for _, e in markup], batch_size=job.batch_size, decoding=job.decoding,
        source_lang=job.source_lang, glossary=job.glossary, target_lang=job.target_lang,
    ) if markup else []  # fmt: skip
    changed = set()
    for (k, element), text in zip(plain + markup, results, strict=True):
        element.text = text
        changed.add(k)
    for k, tree in trees.items():
        if (job.target_lang and mark_document_language(tree.getroot(), job.target_lang)) or k in changed:
            members[k] = (members[k][0], _written(tree))


def _written(tree) -> bytes:
    xml = io.BytesIO()
    tree.write(xml, xml_declaration=True, encoding="UTF-8")
    return xml.getvalue()


def _packages(archive: zipfile.ZipFile) -> list[str]:
    """The archive paths of the book's package documents, which `META-INF/container.xml` names."""
    if CONTAINER not in archive.namelist():
        raise DocumentError(f"not {WHAT}: it has no {CONTAINER}")
    container = read_xml(archive.read(CONTAINER), WHAT, ".epub")
    return [rootfile.get("full-path", "") for rootfile in container.iter("{*}rootfile")]


def _manifest(archive: zipfile.ZipFile, packages: list[str]) -> list[tuple[str, str]]:
    """The `(archive path, media type)` of each file that the book's package documents (at `packages`) list, each
    pair once, in their order."""
    found = []
    for package in packages:
        folder = posixpath.dirname(package)
        for item in read_xml(archive.read(package), WHAT, ".epub").iter("{*}item"):
            if item.get("href"):
                path = posixpath.normpath(posixpath.join(folder, unquote(item.get("href").split("#")[0])))
                found.append((path, item.get("media-type")))
    return list(dict.fromkeys(found))

"""What every document format shares: the error a bad file gets, the job a format translates with, reading
and writing text files, opening zipped documents within a size, and importing a format's optional library."""

from __future__ import annotations

import importlib
import io
import zipfile
import zlib
from abc import ABC, abstractmethod
from collections.abc import Sequence
from dataclasses import dataclass
from types import ModuleType

from hf_seq2seq.engines.base import Translator
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.errors import HfSeq2SeqError
from hf_seq2seq.formats.aligned import AlignedTranslation, translate_aligned
from hf_seq2seq.formats.glossary import Glossary
from hf_seq2seq.formats.markup import FILE_NAME, names_a_language

BOM = "\ufeff"
EXTRA = 'pip install "hf_seq2seq[{}]"'


class DocumentError(HfSeq2SeqError, ValueError):
    """A document that cannot be translated: a format not taken, a corrupt file, text that is not UTF-8 (the
    message says which)."""


@dataclass(frozen=True)
class Job:
    """The translator and the options every text of one document is translated with."""

    translator: Translator
    batch_size: int = 64
    decoding: Decoding | None = None
    source_lang: str = "en"
    glossary: Glossary | None = None
    target_lang: str | None = None
    """The translation's language (a BCP 47 tag: "fr"): where a format marks the language of its text (Word's,
    PowerPoint's and OpenDocument's run and style properties, HTML's `lang`, a document's `dc:language`), the
    marks it has are set to it, so that spelling and grammar checkers, hyphenation and screen readers take the
    text for what it now is. None: left as they were."""
    markup_limit: int | None = None
    """The most a zipped document's markup may unpack to: None, `MARKUP_LIMIT` (a file from anyone: the server);
    a file of one's own (`translate_document`) may hold more, to `UNPACKED_LIMIT`."""
    line_by_line: bool = False
    """Plain text only: each line a text, instead of a hard-wrapped paragraph's lines joined into one
    (`hf_seq2seq.formats.paragraphs`)."""
    warnings: list[str] | None = None
    """Where a format says what came out worse than its source and where (a PDF paragraph set smaller than 70%
    of its size to fit its place): each message appended. None: only logged."""

    def translate(self, texts: Sequence[str], alignments: bool = False) -> list[AlignedTranslation]:
        """`texts` translated sentence by sentence in one batched call, the glossary's terms put in, with
        their word alignments if asked for (`hf_seq2seq.formats.aligned.translate_aligned`)."""
        return translate_aligned(
            self.translator, texts, batch_size=self.batch_size, decoding=self.decoding,
            source_lang=self.source_lang, glossary=self.glossary, alignments=alignments,
        )  # fmt: skip


class DocumentFormat(ABC):
    """One kind of document: its file extensions (lowercase, with the dot) and how its bytes translate."""

    name: str
    extensions: tuple[str, ...]

    @abstractmethod
    def translate(self, data: bytes, job: Job) -> bytes:
        """The translated document; `DocumentError` for a file this format cannot read."""


def decode(data: bytes, extension: str) -> tuple[str, str]:
    """A text file's byte-order mark ("" if none) and its text, read as UTF-8."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError as error:
        raise DocumentError(
            f"the {extension} file is not UTF-8 text (byte {error.start} cannot be read): save it as UTF-8"
        ) from None
    return (BOM, text[1:]) if text.startswith(BOM) else ("", text)


def has_words(text: str) -> bool:
    """Whether `text` holds anything to translate (a letter); numbers, symbols and blanks are kept as written."""
    return any(char.isalpha() for char in text)


DC_LANGUAGE = "{http://purl.org/dc/elements/1.1/}language"


def mark_document_language(root, language: str) -> bool:
    """A document's own language in its metadata (Dublin Core's `dc:language`: an EPUB's package document, an
    OpenDocument's `meta.xml`; what readers choose hyphenation, fonts and voices by) set to `language` where it
    names one; whether it did."""
    marks = [mark for mark in root.iter(DC_LANGUAGE) if names_a_language((mark.text or "").strip())]
    for mark in marks:
        mark.text = language
    return bool(marks)


def translate_descriptions(job: Job, places: Sequence[tuple]) -> set:
    """Text that stands in for a picture or a shape (its alternative text, its title), translated in place in one
    batched call: each `(element, attribute)` of `places`, or `(element, None)` for an element's own text. A
    description without a letter, or that is a file's name, stays. Returns the elements translated."""
    todo = []
    for element, attribute in places:
        text = (element.get(attribute) if attribute else element.text) or ""
        if has_words(text) and not FILE_NAME.fullmatch(text.strip()):
            todo.append((element, attribute, " ".join(text.split())))
    for (element, attribute, _), result in zip(todo, job.translate([t for *_, t in todo]), strict=True):
        if attribute:
            element.set(attribute, result.target)
        else:
            element.text = result.target
    return {element for element, *_ in todo}


class MissingExtra(HfSeq2SeqError, ImportError):
    """A format's library is not installed: the message names the extra that installs it."""


def require(module: str, package: str, extension: str, extra: str = "documents") -> ModuleType:
    """The optional library a format needs, or `MissingExtra` naming the extra installing it."""
    try:
        return importlib.import_module(module)
    except ImportError as error:
        raise MissingExtra(f"translating {extension} files needs {package}: {EXTRA.format(extra)}") from error


UNPACKED_LIMIT = 256 << 20
"""The most a zipped document (Word, PowerPoint, OpenDocument, EPUB) may unpack to, pictures included: beyond, it
is refused (a zip bomb); a fixed ceiling, not a multiple of the file's size, so that no upload unpacks to more."""
MARKUP_LIMIT = 16 << 20
"""The most its markup (the XML and XHTML parts, which are parsed and translated) may unpack to: more is a zip bomb
or more text than a document to translate holds; parsing and reading it is what costs (docs/serving.md)."""
MARKUP_SUFFIXES = (".xml", ".rels", ".xhtml", ".html", ".htm", ".opf", ".ncx")
DAMAGED = (zipfile.BadZipFile, zlib.error, KeyError, ValueError, SyntaxError, EOFError, NotImplementedError)
"""What zipfile and lxml (and the format libraries on them) raise on a file that is not a whole document."""


COMPOUND_FILE = bytes.fromhex("d0cf11e0a1b11ae1")
"""How an OLE2 compound file begins: an Office file saved with a password (its zip encrypted inside one), or one
of the binary formats before 2007 (.doc, .ppt)."""


def open_archive(data: bytes, what: str, markup_limit: int | None = None) -> zipfile.ZipFile:
    """The zip archive of a document, or `DocumentError` for one that is not a zip archive or would unpack to
    more than `UNPACKED_LIMIT`, its markup to more than `markup_limit` (None: `MARKUP_LIMIT`) (`what`: its kind
    with an article, for messages: "an EPUB e-book (.epub)")."""
    if data.startswith(COMPOUND_FILE):
        raise DocumentError(
            f"not {what}: a password-protected file, or an old binary one (.doc, .ppt); save it again without a "
            "password, in the format its name says"
        )
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
    except DAMAGED as error:
        raise DocumentError(f"not {what}, or a damaged one: {error}") from None
    items = archive.infolist()
    unpacked = sum(item.file_size for item in items)
    markup = sum(item.file_size for item in items if item.filename.lower().endswith(MARKUP_SUFFIXES))
    markup_limit = MARKUP_LIMIT if markup_limit is None else markup_limit
    for size, limit, of in ((unpacked, UNPACKED_LIMIT, ""), (markup, markup_limit, " of markup")):
        if size > limit:
            archive.close()
            raise DocumentError(
                f"{what} of {len(data):,} bytes that unpacks to {size:,}{of} is refused: more than "
                f"{limit:,} bytes{of} (a zip bomb, or more text than a document sent here may hold)"
            )
    return archive


def read_xml(content: bytes, what: str, extension: str):
    """An XML file of a zipped document parsed by lxml (the root element) without loading DTDs, resolving
    entities or reaching the network; `DocumentError` for XML that cannot be read (`what`: the document's kind,
    for the message)."""
    etree = require("lxml.etree", "lxml", extension)
    parser = etree.XMLParser(resolve_entities=False, no_network=True, load_dtd=False)
    try:
        return etree.fromstring(content, parser)
    except etree.XMLSyntaxError as error:
        raise DocumentError(f"not {what}, or a damaged one: {error}") from None


def repackaged(source: bytes, written: bytes, parts: dict[str, bytes] | None = None) -> bytes:
    """A package that python-docx or python-pptx saved (`written`) with what they drop on reading put back
    from `source`: the relationships to no part (a link to a bookmark, `#_ftn1`, which their reader skips while
    the text still points at it), each added to its `.rels` file by its id; and each of `parts` (by name in the
    archive) written with the content given. Every other entry as it was saved."""
    etree = require("lxml.etree", "lxml", ".docx")
    parts = dict(parts or {})
    with zipfile.ZipFile(io.BytesIO(source)) as original, zipfile.ZipFile(io.BytesIO(written)) as saved:
        names = set(saved.namelist())
        for name in original.namelist():
            if not name.endswith(".rels") or name not in names or name in parts:
                continue
            before = read_xml(original.read(name), "a package", ".docx")
            after = read_xml(saved.read(name), "a package", ".docx")
            ids = {relationship.get("Id") for relationship in after}
            dropped = [relationship for relationship in before if relationship.get("Id") not in ids]
            if dropped:
                after.extend(dropped)
                parts[name] = etree.tostring(after, xml_declaration=True, encoding="UTF-8", standalone=True)
        if not parts:
            return written
        out = io.BytesIO()
        with zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED) as archive:
            for item in saved.infolist():
                archive.writestr(item, parts.get(item.filename, saved.read(item)))
    return out.getvalue()

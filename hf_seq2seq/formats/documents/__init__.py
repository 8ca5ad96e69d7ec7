"""Translating documents by their extension: plain text, HTML, SubRip and WebVTT subtitles, Word documents,
PowerPoint presentations, OpenDocument texts and presentations, EPUB e-books, gettext catalogues, PDF documents.

One module per format (`plain_text`, `html_pages`, `subrip`, `vtt`, `wordprocessing`, `powerpoint`,
`opendocument`, `epub`, `catalogue`, `pdf`; the subtitles' shared cue handling in `subtitles`, the formatted runs
that PowerPoint, OpenDocument and PDF paragraphs share in `runs`), each a `DocumentFormat` that turns a file's bytes
into the translated file's bytes with everything but its text kept; `DOCUMENT_FORMATS` maps each extension taken to
its format. A format's library (python-docx, python-pptx, srt, webvtt-py, polib: the `documents` extra; pikepdf,
pdfminer.six, reportlab: the `pdf` extra) is imported when a file of it is translated, so this package imports
without them.

`translate_document_bytes` is what the server calls; `translate_document` (the `--input-file F --output-file G`
of `hf-seq2seq translate`) reads a file and writes the translation next to where it goes, then moves it into
place, so that nothing half-written ever stands at the output path. A file that cannot be translated (a format
not taken, a corrupt file, text that is not UTF-8) raises `DocumentError`, whose message says why.
"""

from __future__ import annotations

import os
import secrets
from pathlib import Path

from hf_seq2seq.engines.base import Translator
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.formats.documents import base
from hf_seq2seq.formats.documents.base import DocumentError, DocumentFormat, Job, MissingExtra
from hf_seq2seq.formats.documents.catalogue import Catalogue
from hf_seq2seq.formats.documents.epub import Epub
from hf_seq2seq.formats.documents.html_pages import HtmlPage
from hf_seq2seq.formats.documents.opendocument import OpenDocument
from hf_seq2seq.formats.documents.pdf import Pdf
from hf_seq2seq.formats.documents.plain_text import PlainText
from hf_seq2seq.formats.documents.powerpoint import Pptx
from hf_seq2seq.formats.documents.subrip import SubRip
from hf_seq2seq.formats.documents.vtt import WebVtt
from hf_seq2seq.formats.documents.wordprocessing import Docx
from hf_seq2seq.formats.glossary import Glossary

__all__ = [
    "DOCUMENT_FORMATS",
    "DocumentError",
    "DocumentFormat",
    "MissingExtra",
    "document_format",
    "translate_document",
    "translate_document_bytes",
]

DOCUMENT_FORMATS: dict[str, DocumentFormat] = {
    extension: kind
    for kind in (
        PlainText(),
        HtmlPage(),
        SubRip(),
        WebVtt(),
        Docx(),
        Pptx(),
        OpenDocument(),
        Epub(),
        Catalogue(),
        Pdf(),
    )
    for extension in kind.extensions
}
"""Each extension taken (lowercase, with its dot) -> the format that translates it."""


def document_format(extension: str) -> DocumentFormat:
    """The format of files with `extension` (`".srt"`, `"srt"`, `".SRT"`; a file name's suffix), or
    `DocumentError` naming the extensions taken."""
    key = extension.lower() if extension.startswith(".") else f".{extension.lower()}"
    if key not in DOCUMENT_FORMATS:
        what = f"{extension} files" if extension else "a file without an extension"
        raise DocumentError(
            f"cannot translate {what}: the formats taken are {', '.join(sorted(DOCUMENT_FORMATS))}"
        )
    return DOCUMENT_FORMATS[key]


def translate_document_bytes(
    translator: Translator,
    data: bytes,
    extension: str,
    *,
    batch_size: int = 64,
    decoding: Decoding | None = None,
    source_lang: str = "en",
    glossary: Glossary | None = None,
    target_lang: str | None = None,
    line_by_line: bool = False,
    warnings: list[str] | None = None,
) -> bytes:
    """The translation of a document given as its bytes and its extension (see the module docstring), every
    text of it translated in one batched call, with `glossary`'s terms, its language marked `target_lang` where
    the format records one (`Job.target_lang`), plain text by paragraph unless `line_by_line`, what came out worse
    than its source appended to `warnings` (`Job.warnings`). Markup, subtitles
    and Word documents need an engine that aligns (every engine of the package;
    `hf_seq2seq.engines.base.UnsupportedFeature` otherwise), plain text only with a glossary.
    No size limit here: the caller sets its own."""
    job = Job(
        translator, batch_size, decoding, source_lang, glossary, target_lang, line_by_line=line_by_line,
        warnings=warnings,
    )  # fmt: skip
    return document_format(extension).translate(data, job)


def translate_document(
    translator: Translator,
    input_path: str | os.PathLike[str],
    output_path: str | os.PathLike[str],
    *,
    batch_size: int = 64,
    decoding: Decoding | None = None,
    source_lang: str = "en",
    glossary: Glossary | None = None,
    target_lang: str | None = None,
    line_by_line: bool = False,
    warnings: list[str] | None = None,
) -> Path:
    """Translate the file `input_path` into `output_path` (its format from the input's extension, its language
    marked `target_lang` and plain text read as `translate_document_bytes` does; a file of one's own, whose
    markup may unpack to `base.UNPACKED_LIMIT` rather than `base.MARKUP_LIMIT`: a long book; its warnings appended
    to `warnings`), written to a temporary file in the output's folder and moved into place whole; returns the
    output path. Refuses to write over the input."""
    source, output = Path(input_path), Path(output_path)
    kind = document_format(source.suffix)
    try:
        data = source.read_bytes()
    except OSError as error:
        raise DocumentError(f"cannot read {source}: {error.strerror or error}") from None
    if output.resolve() == source.resolve() or (output.exists() and os.path.samefile(source, output)):
        raise DocumentError(f"the output {output} is the input file: write the translation elsewhere")
    if not output.parent.is_dir():
        raise DocumentError(f"cannot write {output}: no folder {output.parent}")
    limit = base.UNPACKED_LIMIT
    job = Job(
        translator, batch_size, decoding, source_lang, glossary, target_lang, limit, line_by_line, warnings
    )
    translated = kind.translate(data, job)
    _write_atomically(output, translated)
    return output


def _write_atomically(path: Path, data: bytes) -> None:
    """`data` written to a new file beside `path` (created with the usual permissions, under the umask), then
    renamed to it; on any failure the new file is removed and `path` left as it was."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.part")
    try:
        descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666)
    except OSError as error:
        raise DocumentError(f"cannot write {path}: {error.strerror or error}") from None
    try:
        with os.fdopen(descriptor, "wb") as file:
            file.write(data)
        os.replace(temporary, path)
    except BaseException as error:
        temporary.unlink(missing_ok=True)
        if isinstance(error, OSError):
            raise DocumentError(f"cannot write {path}: {error.strerror or error}") from None
        raise

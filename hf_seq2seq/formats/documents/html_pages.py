"""HTML pages and fragments (`.html`, `.htm`): `hf_seq2seq.formats.markup.translate_html` on the whole
document, its `lang` attributes set to the translation's language (`Job.target_lang`).

A page is read in the encoding a browser finds (`read_html`, by w3lib, Scrapy's library for it): a byte-order
mark, else the charset its `<meta>` (or XML declaration) declares, else UTF-8 where every byte reads as UTF-8,
else windows-1252, which reads every byte (what browsers fall back to for a page that says nothing). It is
written back in that encoding with its byte-order mark, a character the encoding cannot hold as a character
reference (`&#339;`), so that its declaration stays true."""

from __future__ import annotations

from w3lib.encoding import html_to_unicode, read_bom

from hf_seq2seq.formats.documents.base import BOM, DocumentFormat, Job
from hf_seq2seq.formats.markup import translate_html

FALLBACK = "cp1252"
"""The encoding of a page that declares none and is not UTF-8 (windows-1252, browsers' default for it)."""


class HtmlPage(DocumentFormat):
    name = "HTML"
    extensions = (".html", ".htm")

    def translate(self, data: bytes, job: Job) -> bytes:
        bom, encoding, text = read_html(data)
        (translated,) = translate_html(
            job.translator, [text], batch_size=job.batch_size, decoding=job.decoding,
            source_lang=job.source_lang, glossary=job.glossary, target_lang=job.target_lang,
        )  # fmt: skip
        return bom + translated.encode(encoding, "xmlcharrefreplace")


def read_html(data: bytes) -> tuple[bytes, str, str]:
    """An HTML file's byte-order mark (b"" if none), its encoding and its text (see the module docstring)."""
    bom = read_bom(data)[1] or b""
    encoding, text = html_to_unicode(None, data, default_encoding=FALLBACK, auto_detect_fun=_utf8)
    return bom, encoding, text.removeprefix(BOM)


def _utf8(data: bytes) -> str | None:
    """UTF-8 for a file every byte of which reads as UTF-8."""
    try:
        data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    return "utf-8"

"""HTML pages and fragments (`.html`, `.htm`): `hf_seq2seq.formats.markup.translate_html` on the whole
document, its `lang` attributes set to the translation's language (`Job.target_lang`).

A page is read in the encoding a browser finds (`read_html`, with w3lib, Scrapy's library for it): a byte-order
mark, else the charset its `<meta>` (or XML declaration) declares, else windows-1252, which reads every byte (what
browsers fall back to for a page that says nothing), but for a page whose bytes all read as UTF-8: UTF-8, whatever
it declares, where it has a byte beyond ASCII (a page saved as UTF-8 with its old declaration left in, as saved
pages often are; text in another encoding almost never reads as UTF-8), and where it declares nothing. It is
written back in that encoding with its byte-order mark, a character the encoding cannot hold as a character
reference (`&#339;`), so that its declaration stays true."""

from __future__ import annotations

from w3lib.encoding import html_body_declared_encoding, read_bom, to_unicode

from hf_seq2seq.formats.documents.base import DocumentFormat, Job
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
    encoding, bom = read_bom(data)
    if encoding:
        return bom, encoding, to_unicode(data[len(bom) :], encoding)
    declared = html_body_declared_encoding(data)
    if declared and declared.startswith(("utf-16", "utf-32")):
        declared = "utf-8"  # a declaration read as ASCII cannot be right about UTF-16 (what browsers do)
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return b"", declared or FALLBACK, to_unicode(data, declared or FALLBACK)
    if declared and data.isascii():
        return b"", declared, text
    return b"", "utf-8", text

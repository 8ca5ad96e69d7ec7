"""HTML pages and fragments (`.html`, `.htm`): `hf_seq2seq.formats.markup.translate_html` on the whole
document, read as UTF-8 (a byte-order mark kept), its `lang` attributes set to the translation's language
(`Job.target_lang`)."""

from __future__ import annotations

from hf_seq2seq.formats.documents.base import DocumentFormat, Job, decode
from hf_seq2seq.formats.markup import translate_html


class HtmlPage(DocumentFormat):
    name = "HTML"
    extensions = (".html", ".htm")

    def translate(self, data: bytes, job: Job) -> bytes:
        bom, text = decode(data, ".html")
        (translated,) = translate_html(
            job.translator, [text], batch_size=job.batch_size, decoding=job.decoding,
            source_lang=job.source_lang, glossary=job.glossary, target_lang=job.target_lang,
        )  # fmt: skip
        return (bom + translated).encode("utf-8")

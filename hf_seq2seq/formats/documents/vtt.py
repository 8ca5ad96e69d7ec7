"""WebVTT subtitles (`.vtt`), read and written by `webvtt-py`: the header, STYLE and REGION blocks, NOTE
comments, and each cue's identifier, timings and settings are kept, its text translated
(`hf_seq2seq.formats.documents.subtitles`; character references such as `&amp;` decoded before and written
again after). The file is written as `webvtt-py` writes it (full `00:00:01.500` timings, NOTE text on its own
lines), with the file's line endings and byte-order mark. A cue whose timings are not valid WebVTT is an
error rather than a cue silently dropped."""

from __future__ import annotations

from hf_seq2seq.formats.documents.base import DocumentError, DocumentFormat, Job, decode, require
from hf_seq2seq.formats.documents.subtitles import translate_cues


class WebVtt(DocumentFormat):
    name = "WebVTT subtitles"
    extensions = (".vtt",)

    def translate(self, data: bytes, job: Job) -> bytes:
        webvtt = require("webvtt", "webvtt-py", ".vtt")
        bom, text = decode(data, ".vtt")
        try:
            captions = webvtt.from_string(text, strict=True)
        except (webvtt.errors.MalformedFileError, webvtt.errors.MalformedCaptionError) as error:
            raise DocumentError(f"not a WebVTT (.vtt) file: {error}") from None
        cues = captions.captions
        for cue, translated in zip(cues, translate_cues([c.raw_text for c in cues], job, True), strict=True):
            cue.lines = translated.split("\n")
        written = captions.content
        written += "" if written.endswith("\n") else "\n"
        eol = "\r\n" if "\r\n" in text else "\n"
        return (bom + written.replace("\n", eol)).encode("utf-8")

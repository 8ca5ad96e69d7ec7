"""WebVTT subtitles (`.vtt`), read and written by `webvtt-py`: the header, STYLE and REGION blocks, NOTE
comments, and each cue's identifier, timings and settings are kept, its text translated
(`hf_seq2seq.formats.documents.subtitles`; character references such as `&amp;` decoded before and written
again after). The file is read as `webvtt-py` reads it by default, as leniently as players do: cues with no
blank line between them (as YouTube and youtube-dl write them), blank-looking lines of spaces, a cue text line
that looks like timings (read as a cue of its own). The file is written as `webvtt-py` writes it (full
`00:00:01.500` timings, NOTE text on its own lines), with the file's line endings and byte-order mark. A cue
whose timings cannot be read (which `webvtt-py` would skip) is an error rather than a cue silently dropped."""

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
            captions = webvtt.from_string(text)
        except webvtt.errors.MalformedFileError as error:
            raise DocumentError(f"not a WebVTT (.vtt) file: {error}") from None
        cues = captions.captions
        _check_every_cue_read(webvtt, text, captions)
        for cue, translated in zip(cues, translate_cues([c.raw_text for c in cues], job, True), strict=True):
            cue.lines = translated.split("\n")
        written = captions.content
        written += "" if written.endswith("\n") else "\n"
        eol = "\r\n" if "\r\n" in text else "\n"
        return (bom + written.replace("\n", eol)).encode("utf-8")


def _check_every_cue_read(webvtt, text: str, captions) -> None:
    """`DocumentError` naming the first cue whose timings `webvtt-py` could not read (and would skip). Every
    line with the timings arrow `-->` outside a NOTE starts a cue for it, read or skipped, so a file read whole
    has as many cues as such lines."""
    notes = [
        *captions.header_comments,
        *captions.footer_comments,
        *(n for c in captions.captions for n in c.comments),
    ]
    arrows = [line for line in text.splitlines()[1:] if "-->" in line]
    if len(arrows) == len(captions.captions) + sum(note.count("-->") for note in notes):
        return
    noted = {line.strip() for note in notes for line in note.splitlines()}
    for line in arrows:
        if line.strip() not in noted and not webvtt.from_string(f"WEBVTT\n\n{line}\n").captions:
            raise DocumentError(
                f"not a WebVTT (.vtt) file: {line.strip()[:100]!r} has the cue timings arrow --> but no "
                "timings that can be read"
            )
    raise DocumentError(
        f"not a WebVTT (.vtt) file: {len(arrows) - len(captions.captions)} cues cannot be read"
    )

"""SubRip subtitles (`.srt`), read and written by the `srt` library: each cue's number, timings and any
coordinates after them are kept, its text translated (`hf_seq2seq.formats.documents.subtitles`). Timings are
written as SubRip writes them (`00:00:01,500`), with the file's line endings and byte-order mark. The file is
read as `srt` reads it by default; a timestamp too large to be a time is a `DocumentError` naming it."""

from __future__ import annotations

from hf_seq2seq.formats.documents.base import DocumentError, DocumentFormat, Job, decode, require
from hf_seq2seq.formats.documents.subtitles import translate_cues


class SubRip(DocumentFormat):
    name = "SubRip subtitles"
    extensions = (".srt",)

    def translate(self, data: bytes, job: Job) -> bytes:
        srt = require("srt", "srt", ".srt")
        bom, text = decode(data, ".srt")
        try:
            cues = list(srt.parse(text))
        except srt.SRTParseError as error:
            raise DocumentError(f"not a SubRip (.srt) file: {error}") from None
        except OverflowError:
            raise DocumentError(f"not a SubRip (.srt) file: {_out_of_range(srt, text)}") from None
        for cue, translated in zip(cues, translate_cues([c.content for c in cues], job, False), strict=True):
            cue.content = translated
        eol = "\r\n" if "\r\n" in text else "\n"
        # strict=False keeps cues with no text, so every cue keeps its number
        return (bom + srt.compose(cues, reindex=False, strict=False, eol=eol)).encode("utf-8")


def _out_of_range(srt, text: str) -> str:
    """What to say of a file with a timestamp too large for a time (`srt` raises OverflowError): which."""
    for line in text.splitlines():
        try:
            list(srt.parse(f"1\n{line.strip()}\nx\n"))
        except OverflowError:
            return f"a timestamp is out of range: {line.strip()[:100]!r}"
        except srt.SRTParseError:
            continue
    return "a timestamp is out of range"

"""Plain text (`.txt`): each paragraph is a text, translated sentence by sentence and written back on one line;
the lines of a hard-wrapped paragraph are joined first (`hf_seq2seq.formats.paragraphs` has the rules, and keeps
the lines of a file that is not hard-wrapped; `Job.line_by_line`: each line a text). Blank lines, lines with no
letter (numbers, rules of dashes), the indentation and quoted-mail markers of a paragraph's first line, the line
endings (`\\n`, `\\r\\n`) and a byte-order mark are kept as written."""

from __future__ import annotations

from hf_seq2seq.formats.documents.base import DocumentFormat, Job, decode, has_words
from hf_seq2seq.formats.paragraphs import paragraphs


class PlainText(DocumentFormat):
    name = "plain text"
    extensions = (".txt",)

    def translate(self, data: bytes, job: Job) -> bytes:
        bom, text = decode(data, ".txt")
        layout = paragraphs(text, line_by_line=job.line_by_line)
        texts = list(layout.texts)
        todo = [k for k, piece in enumerate(texts) if has_words(piece)]
        for k, result in zip(todo, job.translate([texts[k] for k in todo]), strict=True):
            texts[k] = result.target
        return (bom + layout.join(texts)).encode("utf-8")

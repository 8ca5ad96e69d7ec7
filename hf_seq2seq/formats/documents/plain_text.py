"""Plain text (`.txt`): each line is a text, translated sentence by sentence; blank lines, lines with no letter
(numbers, rules of dashes), the line endings (`\\n`, `\\r\\n`) and a byte-order mark are kept as written."""

from __future__ import annotations

import re

from hf_seq2seq.formats.documents.base import DocumentFormat, Job, decode, has_words

LINE_END = re.compile(r"(\r\n|\n|\r)")


class PlainText(DocumentFormat):
    name = "plain text"
    extensions = (".txt",)

    def translate(self, data: bytes, job: Job) -> bytes:
        bom, text = decode(data, ".txt")
        parts = LINE_END.split(text)  # lines at even positions, their endings between them
        todo = [k for k in range(0, len(parts), 2) if has_words(parts[k])]
        for k, result in zip(todo, job.translate([parts[k] for k in todo]), strict=True):
            parts[k] = result.target
        return (bom + "".join(parts)).encode("utf-8")

"""Plain text read by paragraph: the lines of a hard-wrapped paragraph (an e-mail, an RFC, a Project Gutenberg
book, text copied out of a PDF) joined into one text, so that a sentence broken over lines is translated whole.

`paragraphs(text)` cuts a text into the texts it is translated as, each with the quoted-mail markers and
indentation written before it (not translated) and the line ending after it; `Paragraphs.join` writes the
translations back in their place (`Paragraphs.lines`: the lines, without their endings). The `.txt` document format
and `hf-seq2seq translate --input-file`/stdin both read plain text with it; `line_by_line=True` (`translate
--line-by-line`) makes each line a text, whole as written, as a line-aligned file needs.

Which lines are one paragraph:

* Lines follow each other in one paragraph only with no blank line between, at the same quoted-mail level (the
  `>` markers at a line's start), at the same indentation (a paragraph's first line may be indented more than the
  rest; a list item's lines may hang under its text or start where its marker does). A list item (`- `, `* `,
  `• `, `o  `, `1. `, `2.3. `, `a) `, `(iv) `) starts a paragraph; a paragraph starts with a line with letters (a
  line of digits, `1998.`, may end one). A line with neither letter nor digit (a rule of dashes, `* * *`), a
  heading (`# Title`, a line underlined with `===` or `---`), a line of columns (a gap of four spaces or a tab
  inside it: a table, a title block) and a line of code (a row or grammar rule that starts with `|`, a line
  ending in `{`, `}` or a call, an ` = `) stay lines of their own. Other headings and titles are short lines,
  which end a paragraph (below).
* A file is taken as hard-wrapped by the pairs of lines that could be one paragraph by the rules above whose
  first line is at least half the file's width (greetings, signatures and footers left out): at least two thirds
  of them end with no sentence-final mark (`. ! ? …` and the like, closing quotes or brackets after it), and at
  least half are full: the next line's first word would not have fitted on the line. The file's width is the
  length that four in five of the lines of such pairs do not pass (`WRAP_QUANTILE`), at least `MIN_WIDTH`
  characters. A file whose lines end sentences (one sentence per line), or whose lines are short or ragged
  (subtitles, lists, verse), keeps its lines: each is a text, as before.
* In a hard-wrapped file, two such lines are joined where the first is full (and at least half the width), or
  ends with no sentence-final mark and is at least three quarters of the width; a short line ends its paragraph
  (a closing line, a signature).

A paragraph is written back on one line: its first line's quote markers and indentation, then its lines' text
joined with one space. A line that ends in a word broken at a hyphen (`web-` / `connected`) is joined without the
space where the text itself shows it safe, in this order: the hyphenated word written on one line elsewhere
(`Request-URI`) keeps the hyphen; the word written whole elsewhere (`computer`) drops it; both halves words of
their own elsewhere (`web`, `connected`) keep it (`web-connected`); otherwise the hyphen and a space are kept
(`connec- ted`). Blank lines, line endings (`\\n`, `\\r\\n`, `\\r`) and every line not joined are kept as written.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hf_seq2seq.models.transformer_mt.sentence_splitting import CJK_FINAL_MARKS, CLOSING_MARKS, FINAL_MARKS

__all__ = ["MIN_WIDTH", "WRAP_QUANTILE", "Paragraphs", "paragraphs"]

MIN_WIDTH = 50
"""The narrowest width a file is taken as hard-wrapped at: narrower lines are a list, verse or subtitles (at most
42 characters a line by the usual rules), whose lines are kept; prose is wrapped at 60 to 80 (e-mail and RFCs at
72, Project Gutenberg's books at about 70)."""
WRAP_QUANTILE = 0.8
"""A file's width: the length that this share of its lines that could continue a paragraph do not pass (the
longest line would be a URL or a line nobody wrapped)."""

LINE_END = re.compile(r"(\r\n|\n|\r)")
QUOTE = re.compile(r"(?:[ \t]*>)+ ?")
LIST_ITEM = re.compile(
    r"(?:[-*+•‣◦▪–]|o(?= {2})|\(?(?:\d{1,3}(?:\.\d{1,3})*|[a-z]|[ivx]{1,4})[.)])\s+(?=\S)"
)  # fmt: skip
HEADING = re.compile(r"#{1,6}\s")
UNDERLINE = re.compile(r"[ \t]*(?:=+|-+)[ \t]*")
COLUMNS = re.compile(r"\S(?: {4,}|\t)\S")
CODE = re.compile(r"^\||[{}]\s*$|\w\([^()]*\)\s*[;{]?\s*$|\s[-+*/!<>=]?=\s")
WORD = re.compile(r"[^\W\d_]+(?:-[^\W\d_]+)*")
BROKEN_WORD = re.compile(r"([^\W\d_]+(?:-[^\W\d_]+)*)-$")


@dataclass(frozen=True)
class Paragraphs:
    """A plain text as the texts it is translated as: each line it is written back as is `prefixes[i]` (quoted-mail
    markers and indentation, which are not translated), `texts[i]` (a paragraph's text on one line, or a line's),
    then `ends[i]`, its line ending ("" after a last line without one)."""

    prefixes: list[str]
    texts: list[str]
    ends: list[str]

    def lines(self, translations: Sequence[str]) -> list[str]:
        """The lines written back, each of `texts` replaced by its translation (one each, in order), without
        their endings: what `hf-seq2seq translate` prints."""
        if len(translations) != len(self.texts):
            raise ValueError(
                f"need one translation per text: {len(self.texts)} texts, got {len(translations)}"
            )
        return [prefix + text for prefix, text in zip(self.prefixes, translations, strict=True)]

    def join(self, translations: Sequence[str]) -> str:
        """The whole text written back, each of `texts` replaced by its translation, with its line endings."""
        return "".join(line + end for line, end in zip(self.lines(translations), self.ends, strict=True))


@dataclass(frozen=True)
class _Line:
    text: str  # as written, without its line ending
    quote: str  # the quoted-mail markers and the space after them
    lead: str  # the indentation after them, as written
    body: str  # the rest
    item: int | None  # a list item's text column (its lines may hang there), else None

    @property
    def level(self) -> int:
        return self.quote.count(">")

    @property
    def indent(self) -> int:
        return len(self.lead.expandtabs())

    @property
    def width(self) -> int:
        return len(self.text.rstrip().expandtabs())

    @property
    def open(self) -> bool:
        """Whether the line ends with no sentence-final mark: a sentence goes on past it."""
        end = self.body.rstrip().rstrip(CLOSING_MARKS)
        return not end or end[-1] not in FINAL_MARKS + CJK_FINAL_MARKS


def _parse(text: str) -> _Line:
    quote = QUOTE.match(text)
    quote = quote.group() if quote else ""
    rest = text[len(quote) :]
    body = rest.lstrip(" \t\f\v")
    lead = rest[: len(rest) - len(body)]
    marker = LIST_ITEM.match(body)
    item = len((lead + body[: marker.end()]).expandtabs()) if marker else None
    return _Line(text, quote, lead, body, item)


def paragraphs(text: str, line_by_line: bool = False) -> Paragraphs:
    """`text` cut into the texts it is translated as (the module docstring has the rules): each line a text,
    whole, with `line_by_line`; each line a text, its markers and indentation apart, where the text is not
    hard-wrapped. A line ending at the very end of the text makes no empty text after it."""
    pieces = LINE_END.split(text)  # lines at even positions, their endings between them
    written, ends = pieces[0::2], [*pieces[1::2], ""]
    if written[-1] == "" and len(written) > 1:
        written, ends = written[:-1], ends[:-1]
    if text == "":
        return Paragraphs([], [], [])
    if line_by_line:
        return Paragraphs([""] * len(written), list(written), ends)
    lines = [_parse(line) for line in written]
    runs = _wrapped_runs(lines) or [[k] for k in range(len(lines))]
    words = Counter(word.lower() for line in written for word in WORD.findall(line))
    prefixes = [lines[run[0]].quote + lines[run[0]].lead for run in runs]
    texts = [_joined([lines[k] for k in run], words) for run in runs]
    return Paragraphs(prefixes, texts, [ends[run[-1]] for run in runs])


def _wrapped_runs(lines: list[_Line]) -> list[list[int]] | None:
    """The runs of line indices that are paragraphs, or None where the text is not hard-wrapped."""
    joinable = [_joinable(lines, k) for k in range(len(lines))]
    joints = [k for run in _runs(lines, joinable, lambda k: True) for k in run[:-1]]
    if not joints:
        return None
    widths = sorted(lines[k].width for k in joints)
    width = widths[min(len(widths) - 1, int(WRAP_QUANTILE * len(widths)))]

    def full(k: int) -> bool:  # the next line's first word would not have fitted on this one
        line, following = lines[k], lines[k + 1].body.split()
        return 2 * line.width >= width and line.width + 1 + len(following[0] if following else "") > width

    long = [k for k in joints if 2 * lines[k].width >= width]  # greetings, signatures, footers left out
    opened, filled = sum(lines[k].open for k in long), sum(full(k) for k in long)
    if width < MIN_WIDTH or 3 * opened < 2 * len(long) or 2 * filled < len(long):
        return None
    return _runs(lines, joinable, lambda k: full(k) or (lines[k].open and 4 * lines[k].width >= 3 * width))


def _runs(lines: list[_Line], joinable: list[bool], joins: Callable[[int], bool]) -> list[list[int]]:
    """Consecutive lines grouped into paragraphs (runs of their indices): a line joins the paragraph before it
    where both are `joinable`, the rules of structure allow it and `joins(index of the line before)`."""
    runs: list[list[int]] = []
    for k in range(len(lines)):
        if runs and joinable[k - 1] and joinable[k] and _continues(lines, runs[-1], k) and joins(k - 1):
            runs[-1].append(k)
        else:
            runs.append([k])
    return runs


def _continues(lines: list[_Line], run: list[int], k: int) -> bool:
    """Whether the `k`-th line may go on the paragraph of the lines `run` by its structure alone."""
    first, line = lines[run[0]], lines[k]
    if line.item is not None or line.level != first.level or not _has_letters(first):
        return False
    if len(run) > 1:
        return line.indent == lines[run[1]].indent
    if first.item is not None:
        return line.indent in (first.item, first.indent)
    return line.indent <= first.indent  # a first line may be indented more than the rest


def _joinable(lines: list[_Line], k: int) -> bool:
    """Whether the `k`-th line may be part of a paragraph of several lines: it has a letter or digit, and is no
    heading, columns or code."""
    line = lines[k]
    if not any(char.isalnum() for char in line.body) or HEADING.match(line.body):
        return False
    underlined = k + 1 < len(lines) and lines[k + 1].body and UNDERLINE.fullmatch(lines[k + 1].body)
    return not (underlined or COLUMNS.search(line.body.rstrip()) or CODE.search(line.body))


def _has_letters(line: _Line) -> bool:
    return any(char.isalpha() for char in line.body)


def _joined(run: list[_Line], words: Counter) -> str:
    """A paragraph's text on one line: its lines' text (without markers and indentation) joined."""
    text = run[0].body
    for line in run[1:]:
        text = _glued(text.rstrip(), line.body, words)
    return text


def _glued(before: str, after: str, words: Counter) -> str:
    """Two lines' text joined with a space, or without it after a word broken at a hyphen where the text's
    `words` (counted over all its lines) show it safe (the module docstring)."""
    broken, following = BROKEN_WORD.search(before), WORD.match(after)
    if broken and following:
        head, tail = broken.group(1).lower(), following.group().lower()
        if words[f"{head}-{tail}"]:
            return before + after  # a hyphenated word: `Request-URI`
        if words[head + tail]:
            return before[:-1] + after  # a word hyphenated only to wrap it: `computer`
        if words[head.rsplit("-", 1)[-1]] > 1 and words[tail.split("-")[0]] > 1:
            return before + after  # two words, each found elsewhere (the break counts once): `web-connected`
    return f"{before} {after}"

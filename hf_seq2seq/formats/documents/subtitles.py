"""The text of subtitle cues (SubRip, WebVTT): translated as one text per cue and wrapped back into as many lines.

A cue's lines are joined into one text and translated sentence by sentence with its word alignment (a dialogue
cue, whose every line starts with a dash, is one text per line, its dash kept). Its inline tags (`<i>`, `<b>`,
`<u>`, `<font color=...>`, WebVTT's `<c.class>` and `<lang>`) are placed around the target words aligned to the
words they wrapped, as HTML's are (`hf_seq2seq.formats.spans`); a tag without its partner (a `<v Speaker>` left
open), a timestamp (`<00:01.500>`) and a SubRip position (`{\\an8}`) go after the translation of the word
before them (first, where they were first), glued to the word that follows. The translation is then cut at word
boundaries into the cue's number of lines, as even in length as they can be (never an empty line: it would end
the cue). A cue with no letter is kept as written.
"""

from __future__ import annotations

import html
import re
from dataclasses import dataclass, field

from hf_seq2seq.formats.aligned import AlignedTranslation
from hf_seq2seq.formats.documents.base import Job, has_words
from hf_seq2seq.formats.spans import Span, project_spans, render_spans

TAG = re.compile(r"</?[A-Za-z][^<>]*>|<\d[\d:.]*>|\{\\[^{}]*\}")
"""A cue text tag: an element's opening or closing tag, a timestamp, or a SubRip/ASS override in braces."""
DIALOGUE = re.compile(r"\s*[-–—]\s*")
"""A dialogue line's dash, kept as written before the line's translation."""
MARK = "\x00"
"""Stands around a tag's number while the target words are wrapped (no cue text holds it)."""


@dataclass
class CueText:
    """One text of a cue: its words without tags (`text`), its tags as spans over them, and its line count."""

    text: str = ""
    lines: int = 1
    spans: list[Span] = field(default_factory=list)
    tags: list[tuple[str, str]] = field(default_factory=list)  # (opening, closing) of each span


def read_cue_text(raw: str, entities: bool) -> CueText:
    """The text and tags of `raw` (lines joined by spaces); `entities`: decode `&amp;`-style references."""
    texts, tags = TAG.split(raw), TAG.findall(raw)  # texts[t] stands before tags[t]
    partner = _partners(tags)
    cue = CueText(lines=raw.count("\n") + 1)
    stack: list[int] = []  # spans of the open tags that have a partner
    opened: dict[int, int] = {}  # tag index -> span index

    def add(text: str) -> None:
        cue.text += (html.unescape(text) if entities else text).replace("\n", " ")

    for t, tag in enumerate(tags):
        add(texts[t])
        text = cue.text
        words_before = len(text.split()) if not text or text[-1].isspace() else len(text.split()) - 1
        if t in partner and partner[t] < t:  # the closing tag of an open span
            index = opened[partner[t]]
            span = cue.spans[index]
            cue.spans[index] = Span(span.start, max(len(text.split()), span.start), span.parent)
            cue.tags[index] = (cue.tags[index][0], tag)
            stack.pop()
            continue
        cue.spans.append(Span(words_before, words_before, stack[-1] if stack else None))
        cue.tags.append((tag, ""))
        if t in partner:
            opened[t] = len(cue.spans) - 1
            stack.append(len(cue.spans) - 1)
    add(texts[-1])
    return cue


def _partners(tags: list[str]) -> dict[int, int]:
    """Opening and closing tags that match (`<c.yellow>` is closed by `</c>`), each mapped to the other."""
    partner, stack = {}, []
    for t, tag in enumerate(tags):
        name = re.match(r"</?([A-Za-z]+)", tag)
        if not name:
            continue
        if tag.startswith("</"):
            if stack and stack[-1][1] == name[1].lower():
                opening, _ = stack.pop()
                partner[opening], partner[t] = t, opening
        else:
            stack.append((t, name[1].lower()))
    return partner


def write_cue_text(cue: CueText, result: AlignedTranslation, entities: bool) -> str:
    """The translation of `cue` with its tags around their aligned words, in `cue.lines` lines at most."""
    target = result.target.split()
    if entities:
        target = [html.escape(word, quote=False) for word in target]
    ranges = project_spans(cue.spans, result.alignment or [], len(target))
    written = render_spans(
        target, cue.spans, ranges, lambda k: f"{MARK}{2 * k}{MARK}", lambda k: f"{MARK}{2 * k + 1}{MARK}"
    )
    pieces: list[str] = []
    for piece in written.split(" "):  # a piece of tags alone goes with the word after it
        if pieces and not _visible(pieces[-1]):
            pieces[-1] += piece
        else:
            pieces.append(piece)
    if len(pieces) > 1 and not _visible(pieces[-1]):
        pieces[-2:] = [pieces[-2] + pieces[-1]]
    lines = [" ".join(line) for line in wrap(pieces, [len(_visible(p)) for p in pieces], cue.lines)]
    tags = [tag for pair in cue.tags for tag in pair]
    return re.sub(f"{MARK}(\\d+){MARK}", lambda m: tags[int(m[1])], "\n".join(lines))


def _visible(piece: str) -> str:
    return re.sub(f"{MARK}\\d+{MARK}", "", piece)


def wrap(items: list[str], widths: list[int], lines: int) -> list[list[str]]:
    """`items` cut into at most `lines` non-empty lines whose widths (items' widths plus a space between
    them) are as even as they can be: the least sum of squared widths."""
    n = len(items)
    lines = max(1, min(lines, n))

    def width(i: int, j: int) -> int:
        return sum(widths[i:j]) + (j - i - 1)

    # best[m][j]: the least cost of items[:j] in m lines, and where its last line starts
    best = [[(float("inf"), 0)] * (n + 1) for _ in range(lines + 1)]
    best[0][0] = (0, 0)
    for m in range(1, lines + 1):
        for j in range(m, n + 1):
            best[m][j] = min((best[m - 1][i][0] + width(i, j) ** 2, i) for i in range(m - 1, j))
    out, j = [], n
    for m in range(lines, 0, -1):
        i = best[m][j][1]
        out.append(items[i:j])
        j = i
    return out[::-1]


def translate_cues(cues: list[str], job: Job, entities: bool) -> list[str]:
    """Each cue's text translated (see the module docstring), in one batched call for all of them."""
    texts: list[list[tuple[str, str]]] = []  # each cue's texts, after what is kept before each (a dash)
    for raw in cues:
        lines = raw.split("\n")
        if len(lines) > 1 and all(DIALOGUE.match(line) for line in lines):
            texts.append([(DIALOGUE.match(line)[0], line[DIALOGUE.match(line).end() :]) for line in lines])
        else:
            texts.append([("", raw)])
    parsed = [read_cue_text(text, entities) for parts in texts for _, text in parts]
    todo = [k for k, cue in enumerate(parsed) if has_words(cue.text)]
    translated = job.translate([" ".join(parsed[k].text.split()) for k in todo], alignments=True)
    results = dict(zip(todo, translated, strict=True))
    out, k = [], 0
    for parts in texts:
        written = []
        for kept, text in parts:
            written.append(kept + (write_cue_text(parsed[k], results[k], entities) if k in results else text))
            k += 1
        out.append("\n".join(written))
    return out

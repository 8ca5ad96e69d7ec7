"""The text of subtitle cues (SubRip, WebVTT): translated as one text per cue and wrapped back into as many lines.

A cue's lines are joined into one text and translated sentence by sentence with its word alignment. A dialogue cue
(a line of it starts with a dash, after any tags: `-Hi.`, `<i>- Hi.</i>`) is one text per speaker, from a dashed
line to the next (a first speaker without a dash too), each dash kept as written at the start of its speaker's first
line, after the tags there. A sentence that runs on from one cue into the next (the cue ends with a word or a comma)
is translated as one text with the cues it runs over (`JOINED` at most; dialogue cues and broken ones, below, are
not joined), and its translation is cut back into those cues by the word alignment: each cut where the most aligned
words fall on the side of their source words, every cue keeping at least a word per line of it, its timings and its
number of lines (a run whose translation has fewer words than its cues have lines is translated cue by cue, and a
text whose translation has fewer words than it has lines line by line). Its inline tags (`<i>`, `<b>`, `<u>`, `<font
color=...>`, WebVTT's `<c.class>` and `<lang>`) are placed around the target words aligned to the words they
wrapped, as HTML's are (`hf_seq2seq.formats.spans`); a tag without its partner (a `<v Speaker>` left open), a
timestamp (`<00:01.500>`) and a SubRip position (`{\\an8}`) go after the translation of the word before them (first,
where they were first), glued to the word that follows. A cue whose markup is broken (a tag neither format knows,
`<invalid_tag>`; an end tag without its start, a start tag left open but a voice's; a `<` or `>` that is no tag's,
`1,4<6</u>`) comes back no more broken than it came: its tags keep the order they were written in, each at its
relative place among the translated words (against the word before it where it was written so), and a `<` or `>`
that is no tag's stays text (escaped in WebVTT, where it cannot stand bare). The translation is then cut at word
boundaries into the cue's number of lines, as even in length as they can be, in linear time (never an empty line: it
would end the cue). A cue with no letter is kept as written.
"""

from __future__ import annotations

import html
import re
from bisect import bisect_left
from dataclasses import dataclass, field
from itertools import accumulate, pairwise

from hf_seq2seq.formats.aligned import AlignedTranslation
from hf_seq2seq.formats.documents.base import Job, has_words
from hf_seq2seq.formats.spans import Span, project_spans, render_spans

TAG = re.compile(r"</?[A-Za-z][^<>]*>|<\d[\d:.]*>|\{\\[^{}]*\}")
"""A cue text tag: an element's opening or closing tag, a timestamp, or a SubRip/ASS override in braces."""
DIALOGUE = re.compile(rf"((?:{TAG.pattern})*)(\s*[-–—]\s*)")
"""A dialogue line's tags before its dash, and its dash, kept as written before the speaker's translation."""
GOES_ON = re.compile(r"[\w,]\s*$")
"""The end of a cue whose sentence goes on in the next cue: a word or a comma, no closing punctuation."""
JOINED = 4
"""The most cues one sentence is translated over."""
KNOWN_TAGS = frozenset("b i u s font c v lang ruby rt".split())
"""The elements of SubRip's cue text (`b`, `i`, `u`, `s`, `font`) and WebVTT's (`c`, `i`, `b`, `u`, `v`, `lang`,
`ruby`, `rt`): a cue holding another is read as broken (`_broken`)."""
LEFT_OPEN = frozenset({"v"})
"""Elements a cue may leave open (a voice, `<v Speaker>`, whose end tag WebVTT lets a cue leave out)."""
MARK = "\x00"
"""Stands around a tag's number while the target words are wrapped (no cue text holds it)."""


@dataclass
class CueText:
    """One text of a cue: its words without tags (`text`), its tags as spans over them, and its line count."""

    text: str = ""
    lines: int = 1
    spans: list[Span] = field(default_factory=list)
    tags: list[tuple[str, str]] = field(default_factory=list)  # (opening, closing) of each span
    broken: bool = False  # markup that does not parse (`_broken`): its tags are points, kept in their order
    glued: set[int] = field(
        default_factory=set
    )  # the spans of a broken cue's tags written against a word before


def read_cue_text(raw: str, entities: bool) -> CueText:
    """The text and tags of `raw` (lines joined by spaces); `entities`: decode `&amp;`-style references."""
    texts, tags = TAG.split(raw), TAG.findall(raw)  # texts[t] stands before tags[t]
    partner = _partners(tags)
    cue = CueText(lines=raw.count("\n") + 1, broken=_broken(texts, tags, partner))
    if cue.broken:  # no tag pairs with another: none wraps words, each stays a point where it was
        partner = {}
    stack: list[int] = []  # spans of the open tags that have a partner
    opened: dict[int, int] = {}  # tag index -> span index
    chunks: list[str] = []
    words, inside = (
        0,
        False,
    )  # the words of the text so far, and whether it ends inside one (counted as you go)

    def add(text: str) -> None:
        nonlocal words, inside
        chunk = (html.unescape(text) if entities else text).replace("\n", " ")
        if chunk:
            words += len(chunk.split()) - (inside and not chunk[0].isspace())
            inside = not chunk[-1].isspace()
            chunks.append(chunk)

    for t, tag in enumerate(tags):
        add(texts[t])
        words_before = words - inside  # a tag glued to a word goes before it
        if t in partner and partner[t] < t:  # the closing tag of an open span
            index = opened[partner[t]]
            span = cue.spans[index]
            cue.spans[index] = Span(span.start, max(words, span.start), span.parent)
            cue.tags[index] = (cue.tags[index][0], tag)
            stack.pop()
            continue
        if cue.broken:  # after the word it follows, and written against it where it was
            words_before = words
            if inside:
                cue.glued.add(len(cue.spans))
        cue.spans.append(Span(words_before, words_before, stack[-1] if stack else None))
        cue.tags.append((tag, ""))
        if t in partner:
            opened[t] = len(cue.spans) - 1
            stack.append(len(cue.spans) - 1)
    add(texts[-1])
    cue.text = "".join(chunks)
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


def _broken(texts: list[str], tags: list[str], partner: dict[int, int]) -> bool:
    """Whether a cue's markup does not parse: a `<` or `>` outside its tags, an element neither format knows
    (`KNOWN_TAGS`), an end tag without its start or a start tag left open (but `LEFT_OPEN`'s)."""
    if any("<" in text or ">" in text for text in texts):
        return True
    for t, tag in enumerate(tags):
        name = re.match(r"</?([A-Za-z]+)", tag)
        if name and (
            name[1].lower() not in KNOWN_TAGS
            or (t not in partner and (tag.startswith("</") or name[1].lower() not in LEFT_OPEN))
        ):
            return True
    return False


def write_cue_text(cue: CueText, result: AlignedTranslation, entities: bool) -> str:
    """The translation of `cue` with its tags around their aligned words, in `cue.lines` lines at most."""
    target = result.target.split()
    if entities:
        target = [html.escape(word, quote=False) for word in target]
    if cue.broken:
        ranges = _in_order([span.start for span in cue.spans], len(result.source.split()), len(target))
    else:
        ranges = project_spans(cue.spans, result.alignment or [], len(target))
    written = render_spans(
        target, cue.spans, ranges, lambda k: f"{MARK}{2 * k}{MARK}", lambda k: f"{MARK}{2 * k + 1}{MARK}"
    )
    pieces: list[str] = []
    for piece in written.split(" "):  # a piece of tags alone goes with the word after it
        if pieces and not _visible(pieces[-1]):
            pieces[-1] += piece
        elif pieces and not _visible(piece) and int(piece.split(MARK)[1]) // 2 in cue.glued:
            pieces[-1] += piece  # a broken cue's tag that was written against the word before it
        else:
            pieces.append(piece)
    if len(pieces) > 1 and not _visible(pieces[-1]):
        pieces[-2:] = [pieces[-2] + pieces[-1]]
    lines = [" ".join(line) for line in wrap(pieces, [len(_visible(p)) for p in pieces], cue.lines)]
    tags = [tag for pair in cue.tags for tag in pair]
    return re.sub(f"{MARK}(\\d+){MARK}", lambda m: tags[int(m[1])], "\n".join(lines))


def _in_order(points: list[int], source_words: int, target_words: int) -> list[tuple[int, int]]:
    """Where a broken cue's tags go, in their order: each at its relative place among the target words, after
    the one before it, and a word further where words stood between them in the source (while there are
    target words), so that an element that wrapped words still wraps some."""
    out: list[tuple[int, int]] = []
    for k, point in enumerate(points):
        at = round(point * target_words / source_words) if source_words else 0
        if out:
            at = max(at, out[-1][0] + (point > points[k - 1]))
        at = min(at, target_words)
        out.append((at, at))
    return out


def _visible(piece: str) -> str:
    return re.sub(f"{MARK}\\d+{MARK}", "", piece)


def wrap(items: list[str], widths: list[int], lines: int) -> list[list[str]]:
    """`items` cut into at most `lines` non-empty lines of even widths (items' widths plus a space between
    them): the k-th cut goes where the width before it is nearest k / `lines` of the whole (the earlier cut
    on a tie, so that a longer line comes last), in time linear in the items."""
    n = len(items)
    lines = max(1, min(lines, n))
    ends = list(
        accumulate(width + 1 for width in widths)
    )  # ends[i]: the width of items[: i + 1], a space after
    cuts = [0]
    for k in range(1, lines):
        goal = ends[-1] * k / lines
        i = bisect_left(ends, goal)  # items[: i + 1] is the first prefix at least as wide as the goal
        cut = i if i > 0 and goal - ends[i - 1] <= ends[i] - goal else i + 1
        cuts.append(min(max(cut, cuts[-1] + 1), n - (lines - k)))
    cuts.append(n)
    return [items[a:b] for a, b in pairwise(cuts)]


def translate_cues(cues: list[str], job: Job, entities: bool) -> list[str]:
    """Each cue's text translated (see the module docstring), in one batched call for all of them."""
    texts = [_speakers(raw) for raw in cues]  # each cue's texts, after what is kept before each (a dash)
    parsed = [read_cue_text(text, entities) for parts in texts for _, text in parts]
    whole = [len(parts) == 1 and not parts[0][0] for parts in texts for _ in parts]
    runs = _runs(parsed, whole)
    results = _translate_runs(runs, parsed, job)
    missed = [k for run in runs if run[0] not in results for k in run]  # fewer target words than lines
    if missed:
        results.update(_translate_runs([[k] for k in missed], parsed, job))
    raws = [text for parts in texts for _, text in parts]
    short = [k for k, result in results.items() if len(result.target.split()) < parsed[k].lines]
    by_line = dict(zip(short, _translate_lines([raws[k] for k in short], job, entities), strict=True))
    out, k = [], 0
    for parts in texts:
        written = []
        for dash, text in parts:
            line = by_line.get(k) or (
                write_cue_text(parsed[k], results[k], entities) if k in results else text
            )
            tags = re.match(f"(?:{TAG.pattern})*", line).end() if dash else 0  # the dash after the tags there
            written.append(line[:tags] + dash + line[tags:])
            k += 1
        out.append("\n".join(written))
    return out


def _speakers(raw: str) -> list[tuple[str, str]]:
    """A cue's texts: one per speaker of a dialogue cue, from a line starting with a dash (after any tags) to
    the next, each as (its dash, its text without the dash: tags before it kept in place); the whole cue, for
    any other."""
    parts: list[tuple[str, str]] = []
    for line in raw.split("\n"):
        dash = DIALOGUE.match(line)
        if dash and has_words(line):
            parts.append((dash[2], dash[1] + line[dash.end() :]))
        elif parts:
            parts[-1] = (parts[-1][0], parts[-1][1] + "\n" + line)
        else:
            parts.append(("", line))
    return parts if any(dash for dash, _ in parts) else [("", raw)]


def _translate_lines(raws: list[str], job: Job, entities: bool) -> list[str]:
    """Texts whose translation has fewer words than they have lines, translated line by line (one batched
    call), so that each keeps its number of lines."""
    if not raws:
        return []
    lines = [read_cue_text(line, entities) for raw in raws for line in raw.split("\n")]
    todo = [k for k, line in enumerate(lines) if has_words(line.text)]
    results = dict(zip(todo, job.translate([lines[k].text for k in todo], alignments=True), strict=True))
    written = iter(
        write_cue_text(line, results[k], entities) if k in results else raw
        for k, (line, raw) in enumerate(zip(lines, [x for raw in raws for x in raw.split("\n")], strict=True))
    )
    return ["\n".join(next(written) for _ in raw.split("\n")) for raw in raws]


def _runs(parsed: list[CueText], whole: list[bool]) -> list[list[int]]:
    """The texts to translate (those with a letter) as runs of text indices: a cue of one text (`whole`: not a
    dialogue) whose sentence goes on into the next such cue is translated with it, `JOINED` cues at most."""
    runs: list[list[int]] = []
    for k, cue in enumerate(parsed):
        if not has_words(cue.text):
            continue
        last = runs[-1][-1] if runs else None
        if (
            last == k - 1
            and whole[last]
            and whole[k]
            and len(runs[-1]) < JOINED
            and GOES_ON.search(parsed[last].text)
            and not parsed[last].broken
            and not cue.broken
        ):  # fmt: skip (a broken cue is translated alone: its markup stays in it)
            runs[-1].append(k)
        else:
            runs.append([k])
    return runs


def _translate_runs(runs: list[list[int]], parsed: list[CueText], job: Job) -> dict[int, AlignedTranslation]:
    """Each run translated as one text and shared out over its cues (`_share`), by text index; a run whose
    translation has fewer words than its cues have lines is left out."""
    words = [[parsed[k].text.split() for k in run] for run in runs]
    translated = job.translate([" ".join(w for cue in run for w in cue) for run in words], alignments=True)
    results: dict[int, AlignedTranslation] = {}
    for run, run_words, result in zip(runs, words, translated, strict=True):
        if len(run) == 1:
            results[run[0]] = result
        elif len(result.target.split()) >= sum(parsed[k].lines for k in run):
            results.update(zip(run, _share(result, run_words, [parsed[k].lines for k in run]), strict=True))
    return results


def _share(result: AlignedTranslation, cues: list[list[str]], lines: list[int]) -> list[AlignedTranslation]:
    """A run's translation cut into one per cue (`cues`: each one's source words), each cut where the most
    aligned pairs fall on the side of their source word (on a tie, nearest the cue's share of the source
    words), every cue at least a word per line of it (`lines`); each part keeps the pairs within it."""
    target, pairs = result.target.split(), result.alignment or []
    starts = list(accumulate((len(cue) for cue in cues), initial=0))
    cuts = [0]
    for c in range(1, len(cues)):
        split = starts[c]
        before, after = [0] * len(target), [0] * len(target)  # pairs at each target word, by side
        for i, j in pairs:
            (before if i < split else after)[j] += 1
        score, best, fair = sum(after), [], len(target) * split / starts[-1]
        for b in range(len(target) + 1):  # score: pairs on their side when the cut is before target word b
            best.append((-score, abs(b - fair), b))
            if b < len(target):
                score += before[b] - after[b]
        cut = min(best)[2]
        cuts.append(min(max(cut, cuts[-1] + lines[c - 1]), len(target) - sum(lines[c:])))
    cuts.append(len(target))
    return [
        AlignedTranslation(
            " ".join(cue),
            " ".join(target[low:high]),
            [
                (i - starts[c], j - low)
                for i, j in pairs
                if starts[c] <= i < starts[c + 1] and low <= j < high
            ],
        )
        for c, (cue, (low, high)) in enumerate(zip(cues, pairwise(cuts), strict=True))
    ]

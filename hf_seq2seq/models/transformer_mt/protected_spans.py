"""What must not be translated comes back byte for byte: URLs, e-mail addresses, file paths, inline code,
placeholders of software strings and numbers written with a format.

`protected_spans` finds them in a source sentence (`PATTERNS`, by regular expressions: a URL's trailing
punctuation is the sentence's, not the URL's). The model translates the sentence as written, so the rest of it
reads as it always did; `keep_protected` then checks each translation: a protected span found as written is
left alone; one the model changed (a URL respelled, `%(name)s` as `% (nom) s`, `1,234.5` as `1 234,5`) is put
back in place of the target words most like it (character similarity, `difflib`); one the model dropped goes
where its relative position in the source says. It needs nothing of the engine (no alignment): each caller
applies it to the sentences it translated: the ``translation`` pipeline (``pipeline_translation.py``) and, in the
``hf_seq2seq`` package, `translate` (plain text: the command, the server) and `translate_aligned` (HTML, every
document format, glossaries and alignments). It works as well on a whole text and its translation. It ships
inside every saved folder, beside the pipeline, and imports only the standard library.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from difflib import SequenceMatcher

PATTERNS = {
    "inline code": r"`[^`\n]+`",
    "url": r"\b(?:https?|ftp)://[^\s<>\"'`]+|\bwww\.[\w-]+(?:\.[\w-]+)+[^\s<>\"'`]*",
    "e-mail": r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    "path": (
        r"(?<![\w/])(?:~|\.{1,2})?(?:/[\w.@-]+){2,}/?"  # /etc/nginx/nginx.conf, ~/notes/a.txt, ./run/x.sh
        r"|\b[A-Za-z]:\\[^\s<>\"'`]+"  # C:\Users\tom\report.docx
        r"|(?:~|\.{1,2})/[\w.@-]+"  # ./run.sh, ~/.bashrc
        r"|\b[\w.-]+(?:/[\w.-]+)+\.[A-Za-z]\w{0,4}\b"  # src/main.py
    ),
    "placeholder": (
        r"\{\{[^{}\n]*\}\}"  # {{count}}
        r"|\$\{[^{}\s]*\}"  # ${HOME}
        r"|\{[\w.\[\]]*(?:![rsa])?(?::[^{}\s]*)?\}"  # {}, {0}, {name}, {total:.2f}
        r"|%\(\w+\)[-#0+]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]"  # %(name)s
        r"|%[-#0+]*\d*(?:\.\d+)?[diouxXeEfFgGcs%](?![\w])"  # %s, %d, %.2f, %%
    ),
    "number": r"(?<![\w.,])[-+]?\d+(?:[.,:/-]\d+)+%?(?![\w])|(?<![\w.,])[-+]?\d+(?:[.,]\d+)?%(?!\w)",
}
"""What is protected, by kind: each a regular expression over the source sentence. Numbers are protected when
written with a format (`1,234.56`, `3.5%`, `2026-11-27`, `10:30`): a bare `12` is the model's to write."""
FIND = re.compile("|".join(f"(?:{pattern})" for pattern in PATTERNS.values()))
TRAILING = ".,;:!?)]}'\"»”’"
"""Punctuation that ends a sentence or a clause rather than a URL or path it follows."""
LIKE = 0.5
"""How alike (difflib's ratio) a stretch of the translation must be to a protected span to be taken for it."""


def protected_spans(sentence: str) -> list[tuple[int, int]]:
    """Where the protected spans of `sentence` stand, `(start, end)` character offsets, in order."""
    out = []
    for match in FIND.finditer(sentence):
        start, end = match.span()
        text = sentence[start:end]
        if text[0] not in "`{%$":  # a URL or path does not end in the sentence's punctuation
            while end > start and sentence[end - 1] in TRAILING:
                if sentence[end - 1] == ")" and sentence[start:end].count("(") >= sentence[start:end].count(
                    ")"
                ):
                    break
                end -= 1
        if end > start:
            out.append((start, end))
    return out


def keep_protected(sources: Sequence[str], translations: Sequence[str]) -> list[str]:
    """`translations` with every protected span of its source (`protected_spans`) in it as written (see the
    module docstring); a translation whose source has none comes back as it is."""
    return [_kept(source, translation) for source, translation in zip(sources, translations, strict=True)]


def _kept(source: str, translation: str) -> str:
    spans = [source[start:end] for start, end in protected_spans(source)]
    if not spans or not translation.strip():
        return translation
    core = translation.strip()
    tokens = re.split(r"(\s+)", core)
    words, gaps = tokens[0::2], tokens[1::2]  # the whitespace between words kept as it was (line breaks)
    taken = [False] * len(words)  # target words that already are a protected span
    missing = []
    for k, span in enumerate(spans):
        place = _find(words, taken, span)
        if place is None:
            missing.append(k)
        else:
            taken[place[0] : place[1]] = [True] * (place[1] - place[0])
    for k in missing:
        span = spans[k]
        like = _most_alike(words, taken, span)
        if like is not None:
            start, end, lead, trail = like
            words[start:end], taken[start:end], gaps[start : end - 1] = [lead + span + trail], [True], []
            continue
        # dropped: where its relative position in the source puts it, before the sentence's final punctuation
        middle = max(source.find(span), 0) + len(span) / 2
        position = round(len(words) * middle / max(len(source), 1))
        while position < len(words) and taken[position]:
            position += 1
        last = words[-1] if position >= len(words) else ""
        stem = last.rstrip(".!?…")
        if last and stem != last:
            words[-1:], taken[-1:] = (
                ([stem, span + last[len(stem) :]], [False, True]) if stem else ([span, last], [True, False])
            )
            gaps.append(" ")
        else:
            gaps.insert(position if position < len(words) else position - 1, " ")
            words.insert(position, span)
            taken.insert(position, True)
    body = "".join(word + gap for word, gap in zip(words, [*gaps, ""], strict=True))
    return (
        translation[: len(translation) - len(translation.lstrip())]
        + body
        + translation[len(translation.rstrip()) :]
    )


def _find(words: list[str], taken: list[bool], span: str) -> tuple[int, int] | None:
    """The words (not yet taken) holding `span` exactly, with at most punctuation around it."""
    size = span.count(" ") + 1
    for start in range(len(words) - size + 1):
        if any(taken[start : start + size]):
            continue
        stretch = " ".join(words[start : start + size])
        at = stretch.find(span)
        if at >= 0 and not _wordy(stretch[:at]) and not _wordy(stretch[at + len(span) :]):
            return start, start + size
    return None


def _wordy(text: str) -> bool:
    return any(char.isalnum() for char in text)


def _most_alike(words: list[str], taken: list[bool], span: str) -> tuple[int, int, str, str] | None:
    """The stretch of free words most like `span` (at least `LIKE`): `(start, end, punctuation before it,
    punctuation after it)`, or None."""
    size = span.count(" ") + 1
    best, found = LIKE, None
    # punctuation around the stretch stays around it, unless the span itself begins or ends with it
    opening, closing = "".join(set("([{«“‘\"'") - {span[0]}), "".join(set(TRAILING) - {span[-1]})
    for length in range(1, size + 4):
        for start in range(len(words) - length + 1):
            if any(taken[start : start + length]):
                continue
            stretch = " ".join(words[start : start + length])
            core = stretch.lstrip(opening).rstrip(closing)
            if not core:
                continue
            ratio = SequenceMatcher(None, core, span, autojunk=False).ratio()
            if ratio > best:
                at = stretch.find(core)
                best, found = ratio, (start, start + length, stretch[:at], stretch[at + len(core) :])
    return found

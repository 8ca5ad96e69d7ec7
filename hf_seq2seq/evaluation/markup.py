"""Measuring markup translation: HTML fragments of the shapes web pages have, built around test sentences, and
the checks an HTML translation must pass (well formed, the same tags, the text translated).

`fragment` wraps one or two sentences in a `SHAPES` shape (a link, emphasis, nested inline tags, a list, a
table, entities, an image with alt text, a title attribute, a comment and inline code); `scripts/measure_markup.py`
translates such fragments and compares the BLEU of their text with translating the plain sentences
(docs/markup.md). The checks read HTML with the standard library's parser, independently of
`hf_seq2seq.formats.markup`'s reading.
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable, Sequence
from html.parser import HTMLParser

VOID = frozenset("area base br col embed hr img input link meta source track wbr".split())
HIDDEN = frozenset({"script", "style", "code"})


def _words(sentence: str) -> list[str]:
    return sentence.split()


def _wrap(words: list[str], start: int, end: int, opening: str, closing: str) -> str:
    inner = " ".join(words[start:end])
    return " ".join([*words[:start], opening + inner + closing, *words[end:]]).strip()


LINK = '<a href="https://example.com/?a=1&amp;b=2">'


def link(a: str, b: str) -> str:
    w = _words(a)
    return f"<p>{_wrap(w, len(w) // 2, len(w) // 2 + 1, LINK, '</a>')}</p>"


def emphasis(a: str, b: str) -> str:
    w = _words(a)
    return f"<p>{_wrap(w, 0, min(2, len(w)), '<strong>', '</strong>')}</p>"


def nested(a: str, b: str) -> str:
    w = _words(a)
    n = len(w)
    inner = _wrap(w[1 : n - 1], 0, 1, "<i>", "</i>").split(" ") if n > 3 else w[1 : n - 1]
    return f"<div>{w[0]} <b>{' '.join(inner)}</b> {w[-1]}</div>" if n > 2 else f"<div><b><i>{a}</i></b></div>"


def listing(a: str, b: str) -> str:
    return f"<ul>\n  <li>{html.escape(a, quote=False)}</li>\n  <li>{html.escape(b, quote=False)}</li>\n</ul>"


def table(a: str, b: str) -> str:
    return (
        f'<table class="t">\n<tr><th scope="col">{html.escape(a, quote=False)}</th></tr>\n'
        f"<tr><td>{html.escape(b, quote=False)}</td></tr>\n</table>"
    )


def entities(a: str, b: str) -> str:
    escaped = html.escape(a, quote=True).replace("&#x27;", "&#39;")
    return f'<p>{escaped}&nbsp;<span lang="en">{html.escape(b, quote=False)}</span></p>'


def image(a: str, b: str) -> str:
    w = _words(a)
    picture = f'<img src="pic.png" alt="{html.escape(b, quote=True)}">'
    return f"<p>{' '.join(w[:1] + [picture] + w[1:])}</p>"


def titled(a: str, b: str) -> str:
    return f'<p title="{html.escape(b, quote=True)}"><em>{html.escape(a, quote=False)}</em></p>'


def commented(a: str, b: str) -> str:
    return f"<!-- {b} -->\n<p>{html.escape(a, quote=False)} <code>x = 1</code></p>\n<script>var s = '<b>';</script>"


SHAPES: dict[str, tuple[Callable[[str, str], str], int]] = {
    "link": (link, 1),
    "emphasis": (emphasis, 1),
    "nested inline": (nested, 1),
    "list": (listing, 2),
    "table": (table, 2),
    "entities": (entities, 2),
    "image alt": (image, 2),
    "title attribute": (titled, 2),
    "comment, code, script": (commented, 1),
}
"""Shape name -> (a function of two sentences that returns an HTML fragment, how many of the two a reader
sees: the first, or both; a comment's is not seen)."""


class _Reader(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.tags: Counter = Counter()
        self.stack: list[str] = []
        self.errors: list[str] = []
        self.text: list[str] = []
        self.attributes: list[str] = []

    def handle_starttag(self, tag, attrs):
        self.tags[("start", tag, tuple((k, v) for k, v in attrs if k not in ("alt", "title")))] += 1
        self.attributes += [v for k, v in attrs if k in ("alt", "title") and v]
        if tag not in VOID:
            self.stack.append(tag)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_endtag(self, tag):
        self.tags[("end", tag, ())] += 1
        if not self.stack or self.stack[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.stack[-1] if self.stack else 'nothing'}")
        else:
            self.stack.pop()

    def handle_data(self, data):
        if not (self.stack and self.stack[-1] in HIDDEN):
            self.text.append(data)


def _read(document: str) -> _Reader:
    reader = _Reader()
    reader.feed(document)
    reader.close()
    return reader


def markup_problems(source: str, translation: str) -> list[str]:
    """What is wrong with `translation` as the translation of the HTML `source`: tags not closed in order,
    tags (with their attributes other than the translated `alt`/`title`) that differ from the source's."""
    before, after = _read(source), _read(translation)
    problems = after.errors + [f"<{tag}> left open" for tag in after.stack]
    if before.tags != after.tags:
        problems.append(
            f"tags differ: {dict(before.tags - after.tags)} lost, {dict(after.tags - before.tags)} new"
        )
    return problems


def visible_text(document: str) -> str:
    """The text a reader sees (and the `alt`/`title` texts), whitespace made single spaces."""
    reader = _read(document)
    return " ".join(" ".join(reader.text + reader.attributes).split())


def fragments(pairs: Sequence[tuple[str, str]], count: int) -> list[tuple[str, str, list[int]]]:
    """`count` fragments `(shape name, html, indices of the pairs a reader sees, in `visible_text`'s order)`,
    the shapes in turn, each over two consecutive pairs' sources."""
    out = []
    names = list(SHAPES)
    for k in range(count):
        a, b = 2 * k % len(pairs), (2 * k + 1) % len(pairs)
        name = names[k % len(names)]
        build, seen = SHAPES[name]
        out.append((name, build(pairs[a][0], pairs[b][0]), [a, b][:seen]))
    return out

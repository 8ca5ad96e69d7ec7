"""Measuring markup translation: HTML fragments of the shapes web pages have, built around test sentences, and
the checks an HTML translation must pass (well formed, the same tags, the text translated).

`fragment` wraps one or two sentences in a `SHAPES` shape (a link, emphasis, nested inline tags, a list, a
table, entities, an image with alt text, a title attribute, a comment and inline code); `scripts/measure_markup.py`
translates such fragments and compares the BLEU of their text with translating the plain sentences
(docs/formats.md). The checks read HTML with the standard library's parser, independently of
`hf_seq2seq.formats.markup`'s reading.

What a real document keeps (`scripts/measure_real_documents.py`): `inline_elements_kept` counts an HTML page's
inline elements and links with text before and after its translation, `docx_kept` a Word document's hyperlinks,
fields and run formattings with text, and its paragraphs left untranslated, part by part (lxml, read from the
zip, not through python-docx).
"""

from __future__ import annotations

import html
from collections import Counter
from collections.abc import Callable, Sequence
from html.parser import HTMLParser

from hf_seq2seq.formats.markup import LANGUAGE_ATTRIBUTES, TRANSLATED_ATTRIBUTES

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


# ---- nothing lost: what a real page or document had, counted before and after its translation

UNREAD = frozenset({"script", "style", "template"})
"""Elements whose text nobody reads on the page (not counted as an element's text)."""


def _kept_attributes(tag: str, attrs: list) -> tuple:
    """A start tag by its name and the attributes a translation keeps as they were: not those it translates
    (`TRANSLATED_ATTRIBUTES`, a `<meta>`'s content) or sets to its language (`LANGUAGE_ATTRIBUTES`)."""
    rewritten = (*TRANSLATED_ATTRIBUTES, *LANGUAGE_ATTRIBUTES, *(("content",) if tag == "meta" else ()))
    return tag, tuple((k, v) for k, v in attrs if k not in rewritten)


class _Elements(HTMLParser):
    """Counts, by tag and attributes, the inline elements of a page that hold text (their own or a
    descendant's), and every tag; an end tag closes the innermost open element of its name, as browsers do."""

    def __init__(self, inline: frozenset[str]):
        super().__init__(convert_charrefs=True)
        self.inline = inline
        self.open: list[tuple[str, tuple, list[bool]]] = []
        self.with_text: Counter = Counter()
        self.tags: Counter = Counter()

    def handle_starttag(self, tag, attrs):
        key = _kept_attributes(tag, attrs)
        self.tags[key] += 1
        if tag not in VOID:
            self.open.append((tag, key, [False]))

    def handle_startendtag(self, tag, attrs):
        self.tags[_kept_attributes(tag, attrs)] += 1

    def handle_endtag(self, tag):
        self.tags[("/" + tag, ())] += 1
        names = [name for name, _, _ in self.open]
        if tag in names:
            where = len(names) - 1 - names[::-1].index(tag)
            for name, key, seen in self.open[where:]:
                if name in self.inline and seen[0]:
                    self.with_text[key] += 1
            del self.open[where:]

    def handle_data(self, data):
        if data.strip() and not any(name in UNREAD for name, _, _ in self.open):
            for _, _, seen in self.open:
                seen[0] = True

    def close(self):
        super().close()
        for name, key, seen in self.open:
            if name in self.inline and seen[0]:
                self.with_text[key] += 1


def inline_elements_kept(source: str, translation: str, inline: frozenset[str]) -> dict:
    """What an HTML translation kept of its source: inline elements (of `inline`) with text before and after
    (by tag and attributes other than the translated ones, so an element counts once whatever its text), links
    (`<a href>`) with text before and after, the elements that came back empty (`emptied`, up to ten, as
    `<tag attributes>`), and whether the translation has exactly the source's tags."""
    before, after = _Elements(inline), _Elements(inline)
    for reader, document in ((before, source), (after, translation)):
        reader.feed(document)
        reader.close()
    lost = before.with_text - after.with_text
    links = Counter(
        {key: n for key, n in before.with_text.items() if key[0] == "a" and dict(key[1]).get("href")}
    )
    return {
        "inline_with_text": sum(before.with_text.values()),
        "inline_with_text_after": sum(before.with_text.values()) - sum(lost.values()),
        "links_with_text": sum(links.values()),
        "links_with_text_after": sum(links.values()) - sum((links - after.with_text).values()),
        "same_tags": before.tags == after.tags,
        "emptied": [
            "<" + " ".join([tag, *(f'{k}="{v}"' for k, v in attrs)]) + ">" for (tag, attrs) in list(lost)[:10]
        ],
    }


WORD = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
WORD_PARTS = ("document", "header", "footer", "footnotes", "endnotes", "comments")
"""The XML parts of a .docx with paragraphs people read (`word/document.xml`, `word/header1.xml`, ...)."""


def _docx_parts(data: bytes) -> dict[str, object]:
    import io
    import zipfile

    from lxml import etree

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {
            name: etree.fromstring(archive.read(name))
            for name in sorted(archive.namelist())
            if name.startswith("word/") and name.endswith(".xml") and name[5:].startswith(WORD_PARTS)
        }


def _text(element) -> str:
    return "".join(t.text or "" for t in element.iter(WORD + "t"))


def _formats(paragraph) -> Counter:
    """The formattings (`w:rPr`: its elements and attributes) of a paragraph's runs with text, counted once each."""
    found = set()
    for run in paragraph.iter(WORD + "r"):
        if _text(run).strip():
            found.add(_tree(run.find(WORD + "rPr")))
    return Counter(found)


def _tree(element) -> tuple | None:
    if element is None:
        return None
    return element.tag, tuple(sorted(element.attrib.items())), tuple(_tree(child) for child in element)


def docx_kept(source: bytes, translation: bytes) -> dict:
    """What a .docx translation kept of its source, paragraph by paragraph of every part people read (the body,
    headers, footers, footnotes, endnotes, comments): hyperlinks with text, fields (simple, and complex ones by
    their begin mark) and the run formattings with text, before and after; paragraphs whose text is the same
    before and after (untranslated; among those with a letter); and whether every part has as many paragraphs."""
    before, after = _docx_parts(source), _docx_parts(translation)
    counts = Counter()
    for name, root in before.items():
        paragraphs = list(root.iter(WORD + "p"))
        translated = list(after[name].iter(WORD + "p")) if name in after else []
        counts["paragraphs_differ"] += len(paragraphs) != len(translated)
        for paragraph, other in zip(paragraphs, translated, strict=False):
            for what, found in (("hyperlinks", _hyperlinks(paragraph)), ("fields", _fields(paragraph))):
                counts[what] += found
                counts[what + "_after"] += min(
                    found, _hyperlinks(other) if what == "hyperlinks" else _fields(other)
                )
            formats, kept = _formats(paragraph), _formats(other)
            counts["run_formats"] += sum(formats.values())
            counts["run_formats_after"] += sum((formats & kept).values())
            text = _text(paragraph)
            if any(char.isalpha() for char in text):
                counts["paragraphs_with_letters"] += 1
                counts["paragraphs_unchanged"] += _text(other) == text
    return dict(counts)


def _hyperlinks(paragraph) -> int:
    return sum(bool(_text(link).strip()) for link in paragraph.iter(WORD + "hyperlink"))


def _fields(paragraph) -> int:
    simple = sum(1 for _ in paragraph.iter(WORD + "fldSimple"))
    return simple + sum(
        1 for mark in paragraph.iter(WORD + "fldChar") if mark.get(WORD + "fldCharType") == "begin"
    )

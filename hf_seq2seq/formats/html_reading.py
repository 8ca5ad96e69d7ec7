"""Reading HTML for `hf_seq2seq.formats.markup`: the document cut into :class:`Piece`s that give it back byte for
byte (the standard library's parser, `html.parser.HTMLParser`, which reports where each piece starts), the
kinds of elements the translation treats apart, and which pieces stay as written (`translate="no"`, a quotation
in another language, inline code)."""

from __future__ import annotations

from dataclasses import dataclass, field
from html.parser import HTMLParser

INLINE_ELEMENTS = frozenset(
    "a abbr b bdi bdo cite data del dfn em font i ins label mark q s small span strike strong sub sup time tt u".split()
)
"""Elements that sit inside a sentence: translated with it and moved with the words they wrap."""
INLINE_VOID_ELEMENTS = frozenset({"img"})
"""Empty inline elements moved with the word before them."""
KEPT_ELEMENTS = frozenset("script style code pre kbd samp var textarea svg math template".split())
"""Elements whose content is kept as written (code, not prose)."""
INLINE_KEPT_ELEMENTS = frozenset("code kbd samp var".split())
"""Kept elements that sit inside a sentence: held out of its translation as one word (`held_elements`)."""
OPTIONAL_END = frozenset("p li dt dd tr td th option".split())
"""Elements whose end tag may be left out: the next one's start ends them too."""
VOID_ELEMENTS = frozenset("area base br col embed hr img input link meta source track wbr".split())
"""Elements that have no content and no end tag."""
BLOCK_ELEMENTS = frozenset(
    "address article aside blockquote details dialog dd div dl dt fieldset figcaption figure footer form h1 h2 h3 "
    "h4 h5 h6 header hgroup li main menu nav ol p pre section summary table tbody td tfoot th thead tr ul".split()
)
"""Elements that end a paragraph (the HTML standard closes an open `<p>` at their start) or a list item or cell:
an inline element whose tags stand on both sides of one of theirs is not inside one sentence."""


@dataclass
class Piece:
    """One piece of the document: its `kind` ("text", "start", "end", "startend", "other"), the element's
    `tag`, its decoded text (for text), and `raw`, the bytes it was written with."""

    kind: str
    raw: str
    tag: str = ""
    text: str = ""
    attrs: list = field(default_factory=list)


class Reader(HTMLParser):
    """Cuts a document into `Piece`s, each with the exact text it was written with."""

    def __init__(self, document: str):
        super().__init__(convert_charrefs=True)
        self.document = document
        # where each line starts, lines as the parser counts them (ended by "\n" alone: not by "\r", a form
        # feed or U+2028, which `str.splitlines` also ends lines at)
        self.line_starts = [0] + [k + 1 for k, char in enumerate(document) if char == "\n"]
        self.found: list[tuple[int, Piece]] = []

    def _add(self, piece: Piece) -> None:
        line, column = self.getpos()
        self.found.append((self.line_starts[line - 1] + column, piece))

    def handle_starttag(self, tag, attrs):
        self._add(Piece("start", "", tag, attrs=attrs))

    def handle_startendtag(self, tag, attrs):
        self._add(Piece("startend", "", tag, attrs=attrs))

    def handle_endtag(self, tag):
        self._add(Piece("end", "", tag))

    def handle_data(self, data):
        self._add(Piece("text", "", text=data))

    def handle_comment(self, data):
        self._add(Piece("other", ""))

    handle_decl = handle_pi = unknown_decl = handle_comment

    def pieces(self) -> list[Piece]:
        self.feed(self.document)
        self.close()
        out = []
        for k, (start, piece) in enumerate(self.found):
            end = self.found[k + 1][0] if k + 1 < len(self.found) else len(self.document)
            if end <= start:  # a handler that reported nothing new (e.g. text split in two)
                continue
            piece.raw = self.document[start:end]
            out.append(piece)
        # the pieces must give the document back: a parser that reported a position wrongly fails here, loudly
        if "".join(p.raw for p in out) != self.document:
            raise ValueError("the HTML parser's positions do not cover the document")
        return out


def names_a_language(tag: str | None) -> bool:
    """Whether a language mark (HTML's `lang`, Word's `w:lang`, ...) names a language its text is in: not empty,
    not "x-none" (Word's and PowerPoint's "no language": symbols, code, which no checker should read), "zxx" (no
    linguistic content) or "none", which a translation keeps."""
    return bool(tag) and tag.split("-")[0].lower() not in ("x", "zxx", "none")


def _language(tag: str | None) -> str:
    """A language tag's language ("en-GB" -> "en")."""
    return (tag or "").split("-")[0].lower()


def stays_as_written(pieces: list[Piece], source_lang: str) -> list[bool]:
    """Whether each piece belongs to an element whose text stays as written, start and end tags and attributes
    included: one marked `translate="no"` (the HTML standard's mark: a name, a brand, a quotation; not on
    `<html>`, where sites put it to keep browsers from offering their translation of the page), or one marked
    as in another language (`lang`, `xml:lang`) in a page whose `<html>` says it is in `source_lang` (a German
    line quoted in an English poem). A page that does not say, or says another language (pages are often
    mislabelled: a CMS's default), is translated whole. The element ends at its end tag, or, where that may be
    left out (`OPTIONAL_END`), at the next start tag of its name; an empty one (`<img translate="no" alt=...>`)
    is its tag alone. A `translate="yes"` inside is not looked for."""
    flags, page, region = [], "", None  # region: [tag, depth] of the element open
    for piece in pieces:
        if piece.kind == "start" and region and piece.tag == region[0] and piece.tag in OPTIONAL_END:
            region = None if region[1] == 1 else [region[0], region[1] - 1]
        kept = False
        if piece.kind in ("start", "startend") and region is None:
            attrs = {name.lower(): value for name, value in piece.attrs}
            lang = attrs.get("xml:lang") or attrs.get("lang")
            if piece.tag == "html":
                page = _language(lang)
            else:
                kept = (attrs.get("translate") or "").strip().lower() == "no" or (
                    page == _language(source_lang) and names_a_language(lang) and _language(lang) != page
                )
            if kept and piece.kind == "start" and piece.tag not in VOID_ELEMENTS:
                region = [piece.tag, 0]
        flags.append(kept or region is not None)
        if region and piece.tag == region[0] and piece.kind in ("start", "end"):
            region[1] += 1 if piece.kind == "start" else -1
            if region[1] == 0:
                region = None
    return flags


def held_elements(pieces: list[Piece], untranslated: list[bool]) -> dict[int, int]:
    """The inline elements kept as written inside their passage, each held out of the translation as one word
    (`_prepare`), so that the sentence around it is translated whole: those `stays_as_written` keeps (`translate="no"`,
    a quotation in another language) and code (`INLINE_KEPT_ELEMENTS`). First piece -> end piece of each, from
    its start tag to its end tag (a run of kept elements side by side is one), none across a block's tag (an
    unclosed `<code>` that the next paragraph closes stays where it is, as a kept element left open does)."""
    held, k = {}, 0
    while k < len(pieces):
        piece, end = pieces[k], k + 1
        if untranslated[k] and piece.kind == "start" and piece.tag in INLINE_ELEMENTS:
            while end < len(pieces) and untranslated[end]:
                end += 1
            if pieces[end - 1].kind == "end" and pieces[end - 1].tag == piece.tag and _inline(pieces[k:end]):
                held[k] = end
        elif not untranslated[k] and piece.kind == "start" and piece.tag in INLINE_KEPT_ELEMENTS:
            depth = 1
            while end < len(pieces) and depth:
                if pieces[end].tag == piece.tag and pieces[end].kind in ("start", "end"):
                    depth += 1 if pieces[end].kind == "start" else -1
                end += 1
            if depth == 0 and _inline(pieces[k:end]):
                held[k] = end
            else:
                end = k + 1
        k = end
    return held


def _inline(pieces: list[Piece]) -> bool:
    """Whether `pieces` cross no block's tag (`BLOCK_ELEMENTS`): an element held as one word of a passage holds
    no block boundary, or the words of the blocks on both sides would be one passage and trade places."""
    return not any(piece.kind in ("start", "end") and piece.tag in BLOCK_ELEMENTS for piece in pieces)

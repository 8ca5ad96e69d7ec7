"""Translating HTML: the text people read is translated, everything else is kept byte for byte.

The document is read by the standard library's HTML parser (`html.parser.HTMLParser`, the tokenizer of the
HTML spec's shapes: tags, attributes, character references, comments, raw-text elements), which reports where
each piece starts, so that every piece is kept or replaced as the exact bytes it was written with
(`hf_seq2seq.formats.html_reading`, which also says which pieces stay as written):

* Tags, attributes, comments, doctypes, and the content of `KEPT_ELEMENTS` (`<script>`, `<style>`, `<code>`,
  `<pre>`, ...) are copied as written; so is whitespace between blocks. So is every element marked
  `translate="no"`, and, in a page whose `<html>` says it is in the source language, every element marked as in
  another (a quotation), attributes included. Such an element inside a sentence (an inline one: `<span
  translate="no">`, `<i lang="de">`, `<code>`) is held out of the translation as one word, a stand-in the model
  translates around and never sees (`hf_seq2seq.models.transformer_mt.protected_spans`), and put back as written
  where the stand-in lands: the sentence is translated whole, not in pieces cut around it.
* A run of text and inline elements (`INLINE_ELEMENTS`: `<b>`, `<i>`, `<a href>`, `<span>`, ... and images,
  `<img>`) between block boundaries is one passage: its text is translated sentence by sentence, and its inline
  elements are placed around the target words aligned to the words they wrapped (`hf_seq2seq.formats.spans`),
  their tags as written. An inline element opened in one passage and closed in another stays where it is.
* The attributes users read (`TRANSLATED_ATTRIBUTES`: `alt`, `title`, `placeholder`, `aria-label`; the
  `content` of a `<meta>` whose key names a title, a description or an image's description, `reads_as_text`)
  are translated in place (but for a file's name standing for a description: `alt="IMG_0042.jpg"`), and, given the
  translation's language, the `lang` and `xml:lang` that name a language are set to it; the rest of their tag
  is kept as written.
* Translated text is written with `&`, `<` and `>` escaped (and the quote, in an attribute value).

The output has the tags of its input, each once; well-formed input gives well-formed output.
"""

from __future__ import annotations

import html
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from html.parser import attrfind_tolerant, tagfind_tolerant

from hf_seq2seq.engines.base import Translator
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.errors import HfSeq2SeqError
from hf_seq2seq.formats.aligned import translate_aligned
from hf_seq2seq.formats.glossary import Glossary
from hf_seq2seq.formats.html_reading import (
    INLINE_ELEMENTS,
    INLINE_VOID_ELEMENTS,
    KEPT_ELEMENTS,
    VOID_ELEMENTS,
    Piece,
    Reader,
    held_elements,
    names_a_language,
    stays_as_written,
)
from hf_seq2seq.formats.spans import Span, fit_target, project_spans, render_spans

TRANSLATED_ATTRIBUTES = ("alt", "title", "placeholder", "aria-label")
"""Attribute values that people read, translated in place."""
META_KEYS = ("name", "property", "itemprop")
"""The attributes of a `<meta>` that say what its `content` is (HTML's, RDFa's and Open Graph's, microdata's);
each may hold several keys, space-separated (RDFa: `property="og:title twitter:title"`)."""
READ_META = frozenset("title description alt abstract headline".split())
"""What the last part of a `<meta>` key (after its vocabulary's prefix: `og:`, `twitter:`, `dc.`, `dcterms.`,
`og:image:`) names when people read its `content`: a page's title, description or abstract (search results,
catalogues), its link card's title and description (`og:title`, `twitter:text:title`), an image's or a video's
description (`og:image:alt`, `twitter:image:alt`), an article's headline (`itemprop="headline"`). Not names
(`og:site_name`, `application-name`, `author`), index terms (`keywords`, `dc.subject`, `article:tag`), addresses,
types, dates or sizes, which are kept."""
FILE_NAME = re.compile(r"[\w.-]+\.[A-Za-z0-9]{1,5}")
"""One word with an extension: a file's name, which stands for a picture in place of a description (many tools
write one: python-pptx, content systems), kept as written."""
DATA = re.compile(r"\S*=\S*")
"""One word with `=` in it: keys and values (`ctx_ver=Z39.88-2004&rft.genre=book`), kept as written."""
LANGUAGE_ATTRIBUTES = ("lang", "xml:lang")
"""Attributes that say which language an element's text is in: set to the translation's, given one."""
FINAL_PUNCTUATION = ".!?…:;"
MAX_INLINE_DEPTH = 100
"""Most inline elements open inside each other: deeper markup is refused (`MarkupError`), as no text needs it
and placing its elements recurses once per level."""


class MarkupError(HfSeq2SeqError, ValueError):
    """Markup this module refuses to translate (the message says why)."""


def read_pieces(document: str) -> list[Piece]:
    """The pieces of `document`, whose `raw` texts joined give it back exactly; `MarkupError` for inline
    elements nested deeper than `MAX_INLINE_DEPTH`."""
    pieces = Reader(document).pieces()
    _check_depth(pieces)
    return pieces


def _check_depth(pieces: list[Piece]) -> None:
    """`MarkupError` when more than `MAX_INLINE_DEPTH` inline elements are open at once (closed or not)."""
    open_tags: list[str] = []
    for k, piece in enumerate(pieces):
        if piece.kind == "start" and piece.tag in INLINE_ELEMENTS:
            open_tags.append(piece.tag)
            if len(open_tags) > MAX_INLINE_DEPTH:
                where = sum(len(p.raw) for p in pieces[:k])
                raise MarkupError(
                    f"inline elements are nested more than {MAX_INLINE_DEPTH} deep (<{piece.tag}> at character "
                    f"{where}): flatten the markup"
                )
        elif piece.kind == "end" and piece.tag in open_tags:
            while open_tags.pop() != piece.tag:  # an end tag closes the elements left open inside it
                pass


@dataclass
class Passage:
    """A run of text and inline elements to translate as one text: `pieces[start:end]` of the document."""

    start: int
    end: int
    text: str = ""
    spans: list[Span] = field(default_factory=list)
    span_pieces: list[tuple[int, int | None]] = field(default_factory=list)  # (opening, closing) piece index
    # each element held out of the translation (`held_elements`): its stand-in in `text`, its first and end piece
    held: list[tuple[str, int, int]] = field(default_factory=list)
    needs_translation: bool = False  # whether it has words to translate, outside the elements it holds


def _passages(pieces: list[Piece], untranslated: list[bool], held: dict[int, int]) -> list[Passage]:
    """The passages of a document (see the module docstring), with their element pairs matched; none in the
    `untranslated` pieces but the `held` elements (`held_elements`), each whole inside its passage."""
    passages, run, after = [], [], 0  # after: the end of the held element last taken
    held_pieces = {i for first, end in held.items() for i in range(first, end)}
    # the elements open, as browsers nest them, and where among them each kept one open is: an end tag closes
    # the elements open inside its element, so a kept one left open (`<li><kbd>C-c</li>`) ends with its parent
    names: list[str] = []
    kept_at: list[int] = []
    for k, piece in enumerate(pieces):
        if k < after:
            continue
        if k in held and not kept_at:
            run += range(k, held[k])
            after = held[k]
            continue
        inline = (
            piece.kind == "text"
            or piece.tag in INLINE_ELEMENTS
            or (piece.tag in INLINE_VOID_ELEMENTS and piece.kind in ("start", "startend"))
        )
        if piece.kind == "start" and piece.tag not in VOID_ELEMENTS:
            names.append(piece.tag)
            if piece.tag in KEPT_ELEMENTS:
                kept_at.append(len(names))
        elif piece.kind == "end" and piece.tag in names:
            depth = len(names) - names[::-1].index(piece.tag)
            del names[depth - 1 :]
            while kept_at and kept_at[-1] >= depth:
                kept_at.pop()
        kept = bool(kept_at)
        if piece.tag in KEPT_ELEMENTS and piece.kind in ("start", "end"):
            inline = False
        if inline and not kept and not untranslated[k] and piece.kind != "other":
            run.append(k)
            continue
        passages += _split_unmatched(run, pieces, held_pieces)
        run = []
    passages += _split_unmatched(run, pieces, held_pieces)
    return passages


def _split_unmatched(run: list[int], pieces: list[Piece], held: set[int]) -> list[Passage]:
    """`run` as passages: cut at tags whose partner is not in the run, until every element is whole (the `held`
    pieces, whole elements kept as written, are not looked at)."""
    if not run:
        return []
    stack, unmatched = [], set()
    for k in run:
        piece = pieces[k]
        if k in held:
            continue
        if piece.kind == "start" and piece.tag not in INLINE_VOID_ELEMENTS:
            stack.append(k)
        elif piece.kind == "end":
            if stack and pieces[stack[-1]].tag == piece.tag:
                stack.pop()
            else:
                unmatched.add(k)
    unmatched |= set(stack)
    if not unmatched:
        return [Passage(run[0], run[-1] + 1)]
    out, part = [], []
    for k in run:
        if k in unmatched:
            out += _split_unmatched(part, pieces, held)
            part = []
        else:
            part.append(k)
    return out + _split_unmatched(part, pieces, held)


def _prepare(passage: Passage, pieces: list[Piece], held: dict[int, int]) -> None:
    """The passage's text (its text pieces, whitespace runs made single spaces) and its elements as spans; each
    `held` element is one word of the text, a stand-in that the translation keeps as written (a placeholder,
    `hf_seq2seq.models.transformer_mt.protected_spans`), put back by `_render`."""
    parts, stack = [], []
    opened_at: dict[int, int] = {}  # each span: how many text parts came before it opened
    words, last = 0, " "  # the words of the text so far (counted as they come), its last character
    prefix, stand_ins = "kept", set()  # of the stand-ins: a prefix the passage's own text does not hold
    while any("{" + prefix in pieces[k].raw + pieces[k].text for k in range(passage.start, passage.end)):
        prefix += "x"
    k = passage.start
    while k < passage.end:
        piece = pieces[k]
        words_before = words if last.isspace() else words - 1
        text = f"{{{prefix}{len(passage.held)}}}" if k in held else piece.text
        if k in held or piece.kind == "text":
            if k in held:
                passage.held.append((text, k, held[k]))
                stand_ins.add(text)
            if text:
                added = len(text.split())
                words += added - (added > 0 and not last.isspace() and not text[0].isspace())
                parts.append(text)
                last = text[-1]
        elif piece.kind == "end":
            index = stack.pop()
            span = passage.spans[index]
            # an element without text is a point, even where it stands inside a word (`4.0<a></a>;`)
            end = max(words, span.start) if "".join(parts[opened_at[index] :]).strip() else span.start
            passage.spans[index] = Span(span.start, end, span.parent)
            passage.span_pieces[index] = (passage.span_pieces[index][0], k)
        else:  # an opening tag, or an image (a point)
            parent = stack[-1] if stack else None
            passage.spans.append(Span(words_before, words_before, parent))
            passage.span_pieces.append((k, None))
            opened_at[len(passage.spans) - 1] = len(parts)
            if piece.kind == "start" and piece.tag not in INLINE_VOID_ELEMENTS:
                stack.append(len(passage.spans) - 1)
        k = held.get(k, k + 1)
    passage.text = "".join(parts)
    passage.needs_translation = _needs_translation("".join(p for p in parts if p not in stand_ins))


def _needs_translation(text: str) -> bool:
    return any(char.isalpha() for char in text)


def _readable(value: str) -> bool:
    """Whether an attribute's value is words to translate: it has letters and is not a file's name or data
    (`DATA`: a query string, as the `title` of a citation's COinS span holds for reference managers)."""
    value = value.strip()
    return _needs_translation(value) and not FILE_NAME.fullmatch(value) and not DATA.fullmatch(value)


def reads_as_text(attrs: Sequence[tuple[str, str | None]]) -> bool:
    """Whether a `<meta>` with these attributes holds text people read in its `content`: one of its keys
    (`META_KEYS`), whatever its vocabulary, ends in a part `READ_META` names (`og:image:alt`, `DC.title`,
    `description`), as the parts are separated by `:` or `.`."""
    return any(
        re.split(r"[:.]", key)[-1] in READ_META
        for name, value in attrs
        if name.lower() in META_KEYS
        for key in (value or "").lower().split()
    )


def _read_attributes(piece: Piece) -> tuple[str, ...]:
    """The attributes of a start tag that people read: `TRANSLATED_ATTRIBUTES`, and the `content` of a `<meta>`
    that holds text (`reads_as_text`)."""
    if piece.tag == "meta" and reads_as_text(piece.attrs):
        return (*TRANSLATED_ATTRIBUTES, "content")
    return TRANSLATED_ATTRIBUTES


def _translated_attributes(
    raw: str, names: Sequence[str] = TRANSLATED_ATTRIBUTES, wanted=_readable
) -> list[tuple[int, int, str, str]]:
    """Where the values of the attributes `names` (`TRANSLATED_ATTRIBUTES`) stand in a start tag's `raw` text:
    `(start, end, quote, value)` of each value `wanted` takes (words, not a file's name), found by the parser's
    own attribute pattern."""
    out = []
    name = tagfind_tolerant.match(raw, 1)
    position = name.end() if name else len(raw)
    while position < len(raw):
        match = attrfind_tolerant.match(raw, position)
        if not match or match.end() == position:
            break
        name, value = match.group(1).lower(), match.group(3)
        if name in names and value:
            quote = value[0] if value[:1] in "'\"" and value[-1:] == value[:1] and len(value) > 1 else ""
            decoded = html.unescape(value[1:-1] if quote else value)
            if wanted(decoded):
                out.append((match.start(3), match.end(3), quote, decoded))
        position = match.end()
    return out


def translate_html(
    translator: Translator,
    documents: Sequence[str],
    *,
    batch_size: int = 64,
    decoding: Decoding | None = None,
    source_lang: str = "en",
    glossary: Glossary | None = None,
    progress: bool = False,
    target_lang: str | None = None,
) -> list[str]:
    """Translations of HTML `documents` (whole pages or fragments; see the module docstring), every passage
    and attribute of all of them translated in one batched call; given `target_lang` (a BCP 47 tag: "fr"), the
    `lang` and `xml:lang` attributes that name a language are set to it. Needs an engine that aligns (every engine
    of the package; `hf_seq2seq.engines.base.UnsupportedFeature` otherwise)."""
    parsed = [read_pieces(document) for document in documents]
    untranslated = [stays_as_written(pieces, source_lang) for pieces in parsed]
    held = [held_elements(pieces, kept) for pieces, kept in zip(parsed, untranslated, strict=True)]
    passages = [_passages(*args) for args in zip(parsed, untranslated, held, strict=True)]
    texts: list[str] = []
    for pieces, found, kept, holds in zip(parsed, passages, untranslated, held, strict=True):
        for passage in found:
            _prepare(passage, pieces, holds)
            if passage.needs_translation:
                texts.append(" ".join(passage.text.split()))
        for piece, stays in zip(pieces, kept, strict=True):
            if piece.kind in ("start", "startend") and not stays:
                texts += [value for *_, value in _translated_attributes(piece.raw, _read_attributes(piece))]
    results = iter(
        translate_aligned(
            translator, texts, batch_size=batch_size, decoding=decoding, source_lang=source_lang,
            glossary=glossary, progress=progress,
        )
    )  # fmt: skip
    out = []
    for pieces, found, kept in zip(parsed, passages, untranslated, strict=True):
        passage_results = [next(results) for passage in found if passage.needs_translation]
        written = [piece.raw for piece in pieces]
        for k, piece in enumerate(pieces):
            if piece.kind in ("start", "startend") and not kept[k]:
                read = _translated_attributes(piece.raw, _read_attributes(piece))
                values = [(value, next(results).target) for value in read]
                if target_lang:
                    marks = _translated_attributes(piece.raw, LANGUAGE_ATTRIBUTES, names_a_language)
                    values = sorted(values + [(mark, target_lang) for mark in marks])
                if values:
                    written[k] = _with_values(piece.raw, *zip(*values, strict=True))
        tags = list(written)  # the tags as they are written out (translated attributes in place)
        todo = iter(passage_results)
        for passage in found:
            if passage.needs_translation:
                rendered = _render(passage, pieces, tags, next(todo))
                written[passage.start : passage.end] = [rendered] + [""] * (passage.end - passage.start - 1)
        out.append("".join(written))
    return out


def _render(passage: Passage, pieces: list[Piece], tags: list[str], result) -> str:
    """A passage's translation: leading and trailing whitespace of its text as written (where no tag stands
    before or after it), the translated words with the passage's tags around their aligned words."""
    first, last = pieces[passage.start], pieces[passage.end - 1]
    lead = first.raw[: len(first.raw) - len(first.raw.lstrip())] if first.kind == "text" else ""
    trail = last.raw[len(last.raw.rstrip()) :] if last.kind == "text" else ""
    source = result.source.split()
    words, alignment = fit_target(passage.spans, result.alignment or [], source, result.target.split())
    target = [html.escape(word, quote=False) for word in words]
    final = ""
    if last.kind == "text" and target and last.text.rstrip()[-1:] in FINAL_PUNCTUATION:
        # the passage ends in punctuation outside its elements: keep it outside whatever lands last
        core = target[-1].rstrip(FINAL_PUNCTUATION)
        target[-1], final = (core, target[-1][len(core) :]) if core else (target[-1], "")
    ranges = project_spans(passage.spans, alignment, len(target), len(source))
    opening = [tags[k] for k, _ in passage.span_pieces]
    closing = [tags[k] if k is not None else "" for _, k in passage.span_pieces]
    body = render_spans(target, passage.spans, ranges, opening.__getitem__, closing.__getitem__)
    for stand_in, first, end in passage.held:  # each held element as written, where its stand-in came back
        written = "".join(tags[first:end])
        at = body.find(stand_in)
        # the stand-in comes back once (a protected span); a copy of the source's words put in by `fit_target`
        # may repeat it: the first is the element, the others go
        body = (
            body[:at] + written + body[at + len(stand_in) :].replace(stand_in, "")
            if at >= 0
            else body + written
        )
    return lead + body + final + trail


def _with_values(raw: str, values: list, translations: list[str]) -> str:
    """A start tag with its translated attribute values put in place of the originals (quoted as they were)."""
    parts, position = [], 0
    for (start, end, quote, _), translation in zip(values, translations, strict=True):
        escaped = html.escape(translation, quote=True)
        parts += [raw[position:start], (quote or '"') + escaped + (quote or '"')]
        position = end
    return "".join(parts) + raw[position:]

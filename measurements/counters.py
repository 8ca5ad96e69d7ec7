"""What a translated document kept of its source, in every format the package translates, counted the way each
format's own readers see it, one reader a format (`measurements/measure_documents.py`, docs/formats.md):

* **units**: paragraphs (Word, PowerPoint, OpenDocument; HTML's and EPUB's blocks) or cues (subtitles) with a
  letter, and those that came back with the very same text (`untranslated`);
* **formats**: the formattings of a unit's runs with text (Word's `w:rPr`, DrawingML's `a:rPr`, OpenDocument's
  span styles; HTML's inline elements with text, by tag and attributes; a cue's tags with text), counted once
  per unit, and the units that lost one (`units_losing_format`);
* **links**: links with text per unit (PowerPoint's runs of one `hlinkClick` in a row as one), by target: lost
  and added; **notes**: footnote, endnote and comment marks, PowerPoint's comments; Word's **fields**;
* subtitles: cues whose **line count** or **dialogue dashes** changed; HTML and EPUB: inline elements now in
  another block (`moved`), and whether every tag is the source's.

Each counter returns a `Counter` of these keys (`X` and `X_after`, or a count of what went wrong); a key a
format does not have is absent. The HTML reader also finds end tags that close the wrong element and the text a
reader sees (`measurements/measure_markup.py`). Readers here are independent of the translating code: lxml,
`html.parser`, `srt`, webvtt-py.
"""

from __future__ import annotations

import email
import io
import re
import zipfile
from collections import Counter
from html.parser import HTMLParser

from hf_seq2seq.formats.markup import (
    INLINE_ELEMENTS,
    KEPT_ELEMENTS,
    LANGUAGE_ATTRIBUTES,
    TRANSLATED_ATTRIBUTES,
    VOID_ELEMENTS,
)

W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
R_ID = "{http://schemas.openxmlformats.org/officeDocument/2006/relationships}id"
TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
OFFICE = "{urn:oasis:names:tc:opendocument:xmlns:office:1.0}"
XLINK_HREF = "{http://www.w3.org/1999/xlink}href"
WORD_PARTS = re.compile(r"word/(document|header\d*|footer\d*|footnotes|endnotes|comments)\.xml$")
SLIDE_PARTS = re.compile(r"ppt/(slides/slide|notesSlides/notesSlide|comments/\w*omment)[^/]*\.xml$")
DASH = re.compile(r"^\s*(?:<[^>]*>|\{\\[^}]*\})*\s*[-–—]")
"""A subtitle line that starts with a dialogue dash (after any tags)."""
TAG = re.compile(r"<(/?)([A-Za-z][\w.]*)[^<>]*>")


def has_letter(text: str) -> bool:
    return any(char.isalpha() for char in text)


def _paragraph_counts(pairs, counts: Counter) -> None:
    """Counts for units read as `(text, formats, links)` before and after, in order (formats: a set, or a
    `Counter` where one can hold the same formatting twice)."""
    for (text, formats, links), (text_after, formats_after, links_after) in pairs:
        if not has_letter(text):
            continue
        counts["units"] += 1
        counts["untranslated"] += " ".join(text.split()) == " ".join(text_after.split())
        formats, kept = Counter(formats), Counter(formats) & Counter(formats_after)
        counts["formats"] += formats.total()
        counts["formats_after"] += kept.total()
        counts["units_losing_format"] += kept.total() < formats.total()
        counts["links"] += sum(links.values())
        counts["links_lost"] += sum((links - links_after).values())
        counts["links_added"] += sum((links_after - links).values())


def _zip_xml(data: bytes, parts: re.Pattern) -> dict:
    from lxml import etree

    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return {
            name: etree.fromstring(archive.read(name)) for name in archive.namelist() if parts.search(name)
        }


def _own(element, tag: str, paragraph_tags: tuple[str, ...]):
    """The `tag` descendants of `element` not inside a paragraph nested in it (a text box's)."""
    for found in element.iter(tag):
        parent = found.getparent()
        while parent is not None and parent is not element and parent.tag not in paragraph_tags:
            parent = parent.getparent()
        if parent is element:
            yield found


def _tree(element, skip: frozenset = frozenset()) -> tuple | None:
    if element is None:
        return None
    attributes = tuple(sorted((k, v) for k, v in element.attrib.items() if k not in skip))
    children = tuple(_tree(child, skip) for child in element if child.tag not in skip)
    return element.tag, attributes, children


def _word_text(element) -> str:
    return "".join(t.text or "" for t in element.iter(W + "t"))


def _word_paragraph(paragraph, name=None, side=None) -> tuple[str, set, Counter]:
    runs = list(_own(paragraph, W + "r", (W + "p",)))
    text = "".join(_word_text(run) for run in runs)
    formats = {_tree(run.find(W + "rPr"), frozenset({W + "lang"})) for run in runs if _word_text(run).strip()}
    links = Counter(
        link.get(R_ID) or link.get(W + "anchor")
        for link in _own(paragraph, W + "hyperlink", (W + "p",))
        if _word_text(link).strip()
    )
    return text, formats, links


def _paragraphs_counts(source: bytes, translation: bytes, parts: re.Pattern, tags, read, marks=None):
    """The counts of the paragraphs (elements `tags`) of the XML parts `parts` names in two zipped documents,
    each read by `read(paragraph, part name, 0 before or 1 after)` as `(text, formats, links)`, and of what
    `marks(part)` counts in each part (notes: `notes` and `notes_after`); with the parts' trees before and after."""
    before, after, counts = _zip_xml(source, parts), _zip_xml(translation, parts), Counter()
    for name, root in before.items():
        other = after.get(name)
        paragraphs = list(root.iter(*tags))
        translated = list(other.iter(*tags)) if other is not None else []
        counts["units_missing"] += max(0, len(paragraphs) - len(translated))
        pairs = zip(paragraphs, translated, strict=False)
        _paragraph_counts(((read(p, name, 0), read(q, name, 1)) for p, q in pairs), counts)
        if marks is not None:
            counts.update(marks(root))
            counts.update({f"{key}_after": n for key, n in marks(other).items()} if other is not None else {})
    return counts, before, after


def docx_counts(source: bytes, translation: bytes) -> Counter:
    """Word: paragraphs of the body, headers, footers, notes and comments; notes and comment marks; fields; the
    text of `altChunk` parts (HTML the body imports) as units of their own."""
    counts = _paragraphs_counts(source, translation, WORD_PARTS, [W + "p"], _word_paragraph, _word_marks)[0]
    _alt_chunk_counts(source, translation, counts)
    return counts


def _word_marks(part) -> Counter:
    """A Word part's footnote, endnote and comment marks, and its fields (complex ones by their begin mark)."""
    notes = sum(1 for _ in part.iter(W + "footnoteReference", W + "endnoteReference", W + "commentReference"))
    begins = sum(mark.get(W + "fldCharType") == "begin" for mark in part.iter(W + "fldChar"))
    return Counter(notes=notes, fields=begins + sum(1 for _ in part.iter(W + "fldSimple")))


def _imported_html(name: str, data: bytes) -> str:
    """The HTML of an imported part: the page, or a web archive's (`.mht`) page."""
    if name.lower().endswith((".mht", ".mhtml")):
        pages = [p for p in email.message_from_bytes(data).walk() if p.get_content_type() == "text/html"]
        data = b"".join(page.get_payload(decode=True) for page in pages)
    return _decoded(data)


def _alt_chunk_counts(source: bytes, translation: bytes, counts: Counter) -> None:
    """The text of the HTML parts a Word document imports (`w:altChunk`), as units of their own."""
    suffixes = (".htm", ".html", ".xhtml", ".mht", ".mhtml")
    with zipfile.ZipFile(io.BytesIO(source)) as archive:
        names = [n for n in archive.namelist() if n.startswith("word/") and n.lower().endswith(suffixes)]
        chunks = {name: archive.read(name) for name in names}
    with zipfile.ZipFile(io.BytesIO(translation)) as archive:
        for name, data in chunks.items():
            text = HtmlReader(_imported_html(name, data)).text
            if has_letter(text):
                counts["units"] += 1
                counts["untranslated"] += text == HtmlReader(_imported_html(name, archive.read(name))).text


def _drawing_paragraph(paragraph, targets: dict) -> tuple[str, set, Counter]:
    runs = [run for run in paragraph if run.tag == A + "r"]
    text = "".join(t.text or "" for run in runs for t in run.iter(A + "t"))
    skip = frozenset({"lang", "dirty", "err", "noProof", "smtClean"})
    formats, links, previous = set(), Counter(), None
    for run in paragraph:
        words = "".join(t.text or "" for t in run.iter(A + "t"))
        link = run.find(f"{A}rPr/{A}hlinkClick") if run.tag == A + "r" else None
        target = targets.get(link.get(R_ID), link.get(R_ID)) if link is not None else None
        if run.tag == A + "r" and words.strip():
            properties = run.find(A + "rPr")
            formats.add(_tree(properties, skip | {A + "hlinkClick"}) if properties is not None else None)
        if target is not None and words.strip() and target != previous:
            links[target] += 1  # runs of one link in a row are one link
        if run.tag != A + "r" or words.strip():
            previous = target
    return text, formats, links


def _relationship_targets(data: bytes) -> dict[str, dict[str, str]]:
    """Each part's relationships: id -> target, by the part's name."""
    parts = _zip_xml(data, re.compile(r"(^|/)_rels/[^/]*\.rels$"))
    return {
        name.replace("_rels/", "").removesuffix(".rels"): {rel.get("Id"): rel.get("Target") for rel in tree}
        for name, tree in parts.items()
    }


def pptx_counts(source: bytes, translation: bytes) -> Counter:
    """PowerPoint: paragraphs of slides, notes and comments (legacy and modern: their `p:text` and `a:p`)."""
    targets = (_relationship_targets(source), _relationship_targets(translation))

    def read(paragraph, name, side):
        return _drawing_paragraph(paragraph, targets[side].get(name, {}))

    counts, before, after = _paragraphs_counts(source, translation, SLIDE_PARTS, (A + "p",), read)
    for name in [name for name in before if "/comments/" in name]:
        root, other = before[name], after[name]
        texts, texts_after = ([e for e in p.iter() if str(e.tag).endswith("}text")] for p in (root, other))
        counts["notes"] += len(texts) + sum(1 for e in root if "cm" in str(e.tag))
        counts["notes_after"] += len(texts_after) + sum(1 for e in other if "cm" in str(e.tag))
        for text, text_after in zip(texts, texts_after, strict=False):
            if has_letter(text.text or ""):
                counts["units"] += 1
                counts["untranslated"] += text.text == text_after.text
    return counts


ODF_FIELDS = frozenset(
    TEXT + name
    for name in "page-number page-count date time file-name chapter sequence user-field-get variable-get title "
    "subject author-name author-initials".split()
)
"""OpenDocument fields: text the application writes (a page number, a date), not the document's."""


def _odf_text(element) -> str:
    """An element's text, fields' aside."""
    text = element.text or "" if element.tag not in ODF_FIELDS else ""
    for child in element:
        text += (_odf_text(child) if isinstance(child.tag, str) else "") + (child.tail or "")
    return text


def _odf_paragraph(paragraph, name=None, side=None) -> tuple[str, set, Counter]:
    text = _odf_text(paragraph)
    formats = {
        span.get(TEXT + "style-name")
        for span in paragraph.iter(TEXT + "span")
        if "".join(span.itertext()).strip()
    }
    links = Counter(
        link.get(XLINK_HREF) for link in paragraph.iter(TEXT + "a") if "".join(link.itertext()).strip()
    )
    return text, formats, links


def odf_counts(source: bytes, translation: bytes) -> Counter:
    """OpenDocument: paragraphs and headings (`text:p`, `text:h`) of the content and the styles (headers and
    footers), their span styles and links; notes and annotations."""
    parts, tags = re.compile(r"^(content|styles)\.xml$"), (TEXT + "p", TEXT + "h")

    def marks(part) -> Counter:
        return Counter(notes=sum(1 for _ in part.iter(TEXT + "note", OFFICE + "annotation")))

    return _paragraphs_counts(source, translation, parts, tags, _odf_paragraph, marks)[0]


UNREAD = frozenset({"script", "style", "template"})
"""Elements whose text nobody reads on the page."""


class HtmlReader(HTMLParser):
    """An HTML document's blocks (each element not inline, in order): each one's text, its inline elements with
    text (by tag and the attributes a translation keeps) and links with text; every tag; the translated
    attributes' texts; end tags that close another element than the innermost (`errors`), elements never closed
    (`left_open`). The text of `KEPT_ELEMENTS`, of one marked `translate="no"` or (in a page that says its
    language) as in another is not a block's (an element holding it has text). An end tag closes the innermost
    open element of its name, as browsers do."""

    def __init__(self, document: str):
        super().__init__(convert_charrefs=True)
        self.open: list[list] = []  # [tag, key, block, has text, kept]
        self.blocks: list[list] = [["", Counter(), Counter()]]  # text, inline formats, links
        self.tags: Counter = Counter()
        self.attributes: list[str] = []  # the texts of translated attributes (alt, title, ...)
        self.errors: list[str] = []
        self.unread = 0  # inside a script or a style: text nobody reads
        self.kept = 0  # inside code or a quotation: text read as written, not translated
        self.page = ""  # the page's language, as its <html> says
        self.feed(document)
        self.left_open = [entry[0] for entry in self.open]
        self.close()

    @property
    def text(self) -> str:
        """What a reader sees: the blocks' text, then the translated attributes' texts; whitespace made single."""
        return " ".join(" ".join([block[0] for block in self.blocks] + self.attributes).split())

    def _block(self) -> int:
        return next((entry[2] for entry in reversed(self.open) if entry[0] not in INLINE_ELEMENTS), 0)

    def handle_starttag(self, tag, attrs):
        # by its name and the attributes a translation keeps as they were: not those it translates (a <meta>'s
        # content too) or sets to its language
        rewritten = (*TRANSLATED_ATTRIBUTES, *LANGUAGE_ATTRIBUTES, *(("content",) if tag == "meta" else ()))
        key = tag, tuple((k, v) for k, v in attrs if k not in rewritten)
        self.tags[key] += 1
        values = {name: value or "" for name, value in attrs}
        self.attributes += [values[name] for name in TRANSLATED_ATTRIBUTES if values.get(name)]
        if tag in VOID_ELEMENTS or self.open and self.open[-1][0] in ("script", "style"):
            return
        block = self._block()
        if tag not in INLINE_ELEMENTS:
            self.blocks.append(["", Counter(), Counter()])
            block = len(self.blocks) - 1
        lang = (values.get("xml:lang") or values.get("lang") or "").split("-")[0].lower()
        if tag == "html":
            self.page, lang = lang, ""
        kept = tag in KEPT_ELEMENTS or values.get("translate", "").strip().lower() == "no"
        kept |= bool(self.page and lang and lang != self.page)  # a quotation in another language
        self.open.append([tag, key, block, False, kept])
        self.kept += kept
        self.unread += tag in UNREAD

    handle_startendtag = handle_starttag

    def handle_endtag(self, tag):
        self.tags[("/" + tag, ())] += 1
        names = [entry[0] for entry in self.open]
        if names[-1:] != [tag]:
            self.errors.append(f"</{tag}> closes {names[-1] if names else 'nothing'}")
        if tag in names:
            where = len(names) - 1 - names[::-1].index(tag)
            for entry in self.open[where:]:
                self._close(*entry)
            del self.open[where:]

    def _close(self, name, key, block, seen, kept) -> None:
        self.kept -= kept
        self.unread -= name in UNREAD
        if name in INLINE_ELEMENTS and seen:
            self.blocks[block][1][key] += 1
            if name == "a" and dict(key[1]).get("href"):
                self.blocks[block][2][dict(key[1])["href"]] += 1

    def handle_data(self, data):
        if self.unread:
            return
        if not self.kept:  # code, what is marked translate="no": not text to translate
            self.blocks[self._block()][0] += data
        if data.strip():
            for entry in self.open:
                entry[3] = True

    def close(self):
        super().close()
        for entry in self.open:
            self._close(*entry)
        self.open = []


def html_counts(source: str, translation: str) -> Counter:
    """HTML: blocks with their text, inline elements and links; an inline element found in another block after
    (`moved`), and whether every tag is the source's (`tags_differ`)."""
    before, after = HtmlReader(source), HtmlReader(translation)
    counts = Counter({"tags_differ": int(before.tags != after.tags)})
    _paragraph_counts(zip(before.blocks, after.blocks, strict=False), counts)
    everywhere = sum((b[1] for b in before.blocks), Counter())
    everywhere_after = sum((b[1] for b in after.blocks), Counter())
    in_place = sum(sum((b[1] & a[1]).values()) for b, a in zip(before.blocks, after.blocks, strict=False))
    counts["moved"] = sum((everywhere & everywhere_after).values()) - in_place
    return counts


def epub_counts(source: bytes, translation: bytes) -> Counter:
    """EPUB: each XHTML content document as HTML."""
    with zipfile.ZipFile(io.BytesIO(source)) as archive, zipfile.ZipFile(io.BytesIO(translation)) as other:
        pages = [name for name in archive.namelist() if name.lower().endswith((".xhtml", ".html", ".htm"))]
        read = [(archive.read(name), other.read(name)) for name in pages]
    return sum(
        (html_counts(a.decode("utf-8", "replace"), b.decode("utf-8", "replace")) for a, b in read), Counter()
    )


def _cue_tags(text: str) -> Counter:
    """A cue's elements that hold text, by their opening tag."""
    held, stack = Counter(), []
    for match in re.finditer(rf"{TAG.pattern}|[^<]+", text):
        if match[0].startswith("<") and match[2]:
            if match[1] and stack and stack[-1][1] == match[2].lower():
                opening, _, seen = stack.pop()
                held[opening] += seen
            elif not match[1]:
                stack.append((match[0], match[2].lower(), False))
        elif match[0].strip() and stack:
            stack[:] = [(opening, name, True) for opening, name, _ in stack]
    return held


def _cue(text: str) -> tuple[str, Counter, Counter]:
    """A cue as a unit: its text without tags, the tags that held text (its formats), no links."""
    return TAG.sub("", text), _cue_tags(text), Counter()


def subtitle_counts(cues: list[str], translated: list[str]) -> Counter:
    """Subtitles: cues, their line counts and dialogue dashes, and the tags that held text (as formats)."""
    counts = Counter({"cues_missing": max(0, len(cues) - len(translated))})
    pairs = list(zip(cues, translated, strict=False))
    for text, after in pairs:
        if has_letter(TAG.sub("", text)):
            lines, lines_after = text.strip("\n").split("\n"), after.strip("\n").split("\n")
            counts["cue_lines_changed"] += len(lines) != len(lines_after)
            dashes = [bool(DASH.match(line)) for line in lines]
            counts["dashes"] += sum(dashes)
            counts["dashes_changed"] += dashes != [bool(DASH.match(line)) for line in lines_after]
    _paragraph_counts(((_cue(text), _cue(after)) for text, after in pairs), counts)
    return counts


def _srt_cues(text: str) -> list[str]:
    import srt

    return [cue.content for cue in srt.parse(text)]


def _vtt_cues(text: str) -> list[str]:
    import webvtt

    return [caption.raw_text for caption in webvtt.from_buffer(io.StringIO(text))]


def _decoded(data: bytes) -> str:
    """A text file's text: UTF-8 (a byte-order mark dropped), else windows-1252 (what browsers fall back to)."""
    try:
        return data.decode("utf-8-sig")
    except UnicodeDecodeError:
        return data.decode("cp1252", "replace")


def document_counts(source: bytes, translation: bytes, extension: str) -> Counter:
    """The counts of a document of `extension` (see the module docstring)."""
    extension = extension.lower()
    zipped = {
        ".docx": docx_counts,
        ".pptx": pptx_counts,
        ".odt": odf_counts,
        ".odp": odf_counts,
        ".epub": epub_counts,
    }
    if extension in zipped:
        return zipped[extension](source, translation)
    text, text_after = _decoded(source), _decoded(translation)
    if extension in (".srt", ".vtt"):
        cues = _srt_cues if extension == ".srt" else _vtt_cues
        return subtitle_counts(cues(text), cues(text_after))
    if extension in (".html", ".htm", ".xhtml"):
        return html_counts(text, text_after)
    raise ValueError(f"no counts for {extension} files")

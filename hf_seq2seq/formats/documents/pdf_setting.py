"""Translated paragraphs set back on their PDF pages with reportlab (BSD): the fonts, how a paragraph fits its
place, and the layer of text drawn over each page (`pdf`).

Fonts: Tinos, Arimo and Cousine (ChromeOS's core fonts, SIL Open Font License 1.1, `fonts/OFL.txt`),
metric-compatible with Times, Helvetica and Courier, each regular, bold, italic and bold italic, subset to Latin,
Greek, punctuation and symbols (`scripts/subset_fonts.py`). A run is set in the one of its `Look` (serif: Tinos,
sans: Arimo, monospace: Cousine), at its size and colour; reportlab embeds the glyphs used, with a ToUnicode map,
so the translation is text a reader can search and copy, accents included.

Fit: a paragraph is set from where its first line was, each line starting where the source's did (a first line's
indent kept), aligned as the source (left, centred, right, justified), wrapped within its width (a line alone:
within the free width of its column, up to what is beside it, else the edges of the text above and below it). Where the translation does not fit its box it takes, in turn: tighter line
spacing; the free space below it (down to what is drawn below, text, picture or drawing, overlapping its width,
else the page's margin, and never past the bottom of a box drawn around it: a framed title, a table's cell);
smaller type in steps of 5% down to 70%. A line alone stays inside such a box and clear of the characters
left drawn before or after its text (a flag the fonts lack). Past that it still goes in, smaller until it
fits (down to 5%: only a paragraph that needs less, not a word of it as wide as its box even then, is set over what
is below it), and says so (`Setting.squeezed`). What each paragraph takes becomes an obstacle to the ones set after
it, so no translated line goes over another or off the page.
"""

from __future__ import annotations

import re
import threading
from dataclasses import dataclass
from importlib import resources

from hf_seq2seq.formats.documents.pdf_reading import Link, Look, Paragraph
from hf_seq2seq.formats.documents.runs import Out

FAMILIES = {"serif": "Tinos", "sans": "Arimo", "mono": "Cousine"}
SCALES = (0.95, 0.9, 0.85, 0.8, 0.75, 0.7)
"""The smaller sizes a paragraph is tried at, after tighter spacing and the free space below."""
PAST = tuple(round(0.65 - 0.05 * k, 2) for k in range(13))
"""Past 70%: what a paragraph is squeezed to, with a warning, down to 5% (text a reader can still zoom into, search
and copy, rather than a line drawn over another)."""
GAP = 1.0
"""Points kept between a paragraph and what is drawn next to it."""
MARGIN = 0.05
"""The share of the page's height kept as a margin where nothing below a paragraph stops it."""

_lock = threading.Lock()
_fonts: dict[tuple[str, bool, bool], tuple[str, object]] = {}


def font(look: Look) -> tuple[str, object]:
    """reportlab's name of the font a look is set in, registered once, and the font itself."""
    key = (look.family, look.bold, look.italic)
    with _lock:
        if key not in _fonts:
            from reportlab.pdfbase import pdfmetrics
            from reportlab.pdfbase.ttfonts import TTFont

            style = ("Bold" if look.bold else "") + ("Italic" if look.italic else "") or "Regular"
            stem = f"{FAMILIES[look.family]}-{style}"
            path = resources.files("hf_seq2seq.formats.documents") / "fonts" / f"{stem}.ttf"
            with resources.as_file(path) as file:
                face = TTFont(f"hf_seq2seq-{stem}", str(file))
            pdfmetrics.registerFont(face)
            _fonts[key] = (face.fontName, face)
        return _fonts[key]


def covered(text: str, look: Look) -> bool:
    """Whether the font of `look` has every character of `text`."""
    glyphs = font(look)[1].face.charToGlyph
    return all(char.isspace() or ord(char) in glyphs for char in text)


def width(text: str, look: Look, scale: float) -> float:
    from reportlab.pdfbase.pdfmetrics import stringWidth

    return stringWidth(text, font(look)[0], look.size * scale)


@dataclass
class Setting:
    """A paragraph as set: each line's baseline and its words' stretches (x, text, look, the link they are
    part of) at `scale` of their size; the box it takes; whether it was squeezed past 70% to fit."""

    lines: list[tuple[float, list[tuple[float, str, Look, Link | None]]]]
    scale: float
    box: tuple[float, float, float, float]
    squeezed: bool = False

    def line_boxes(self) -> list[tuple[float, float, float, float]]:
        """Where each line's letters are: from its first stretch to its last's end, its descent to its ascent."""
        boxes = []
        for baseline, stretches in self.lines:
            if stretches:
                size = max(look.size for _, _, look, _ in stretches) * self.scale
                x, text, look, _ = stretches[-1]
                end = x + width(text, look, self.scale)
                boxes.append((stretches[0][0], baseline - 0.2 * size, end, baseline + 0.7 * size))
        return boxes

    def links(self) -> dict[Link, list[tuple[float, float, float, float]]]:
        """Where each link's words are now: a box per line."""
        boxes: dict[Link, list[tuple[float, float, float, float]]] = {}
        for baseline, stretches in self.lines:
            for x, text, look, link in stretches:
                if link is None:
                    continue
                size = look.size * self.scale
                box = (x, baseline - 0.25 * size, x + width(text, look, self.scale), baseline + 0.9 * size)
                line = boxes.setdefault(link, [])
                if line and abs(line[-1][1] - box[1]) < 0.01:  # the same line: one box
                    line[-1] = (min(line[-1][0], box[0]), box[1], max(line[-1][2], box[2]), box[3])
                else:
                    line.append(box)
        return boxes


@dataclass
class _Word:
    parts: list[tuple[str, Look, Link | None]]
    space: tuple[Look, Link | None] | None  # the look and link of the space before it (None: none)

    def width(self, scale: float) -> float:
        return sum(width(text, look, scale) for text, look, _ in self.parts)


def fit(paragraph: Paragraph, out: list[Out], obstacles: list, page) -> Setting:
    """Where and how `paragraph`'s translation `out` is set (the module docstring), clear of `obstacles` (the
    boxes of everything else on the page); the box it takes is added to them."""
    words = _words(out)
    lines = paragraph.lines
    x0, y0, x1, y1 = paragraph.box
    size = paragraph.size
    # what it does not overlap by more than a quarter of its size (the next line's box may reach its descenders)
    others = [o for o in obstacles if not _overlap(o, paragraph.box, 0.25 * size)]
    floor = max(
        [o[3] + GAP for o in others if o[3] <= y0 + 0.25 * size and o[0] < x1 - 1 and o[2] > x0 + 1],
        default=min(y0, page.height * MARGIN),
    )
    frame = _frame(paragraph.box, page)
    if frame is not None:  # a box drawn around it: its text stays inside
        floor = max(floor, frame[1] + GAP)
    floor = min(floor, y0)
    align = _alignment(paragraph, page)
    if frame is not None and len(lines) == 1 and abs(x0 + x1 - frame[0] - frame[2]) < 4 and x0 > frame[0] + 5:
        align = "center"  # a line alone in the middle of its box
    start = lines[0].x0
    rest = min((line.x0 for line in lines[1:]), default=x0)
    if align == "center":  # every line centred in the same width: no hanging indent
        start = rest = x0
    right = x1
    if len(lines) == 1:  # a line alone may take the free width of its column
        beside = [o for o in others if o[1] < y1 - 1 and o[3] > y0 + 1]
        column = [
            p.box for p in page.paragraphs if p.box[0] < x1 and p.box[2] > x0
        ]  # text above and below it
        if len(column) == 1:  # no text above or below it: up to the page's margins
            column.append((page.width * MARGIN, y0, page.width * (1 - MARGIN), y1))
        right = min([o[0] - GAP for o in beside if o[0] >= x1 - 1], default=max(x1, *(b[2] for b in column)))
        left = max([o[2] + GAP for o in beside if o[2] <= x0 + 1], default=min(x0, *(b[0] for b in column)))
        if frame is not None:
            left, right = max(left, frame[0] + GAP), min(right, frame[2] - GAP)
        right = max(right, x1)
        if align == "center":
            middle = (x0 + x1) / 2
            half = min(middle - left, right - middle)
            start = rest = middle - half
            right = middle + half
        elif align == "right":
            start, rest, right = min(left, x0), min(left, x0), x1
        start, rest, right = _clear_of_left(paragraph, start, rest, right)
    pitch = _pitch(paragraph)
    tight = max(1.02 * size, 0.9 * pitch)
    above = y1 - lines[0].baseline  # the ascent of its first line
    below = max(lines[-1].baseline - y0, 0.2 * size)  # the descent of its last
    tries = [(1.0, pitch, y0), (1.0, tight, y0), (1.0, tight, floor)]
    tries += [(scale, tight * scale, floor) for scale in SCALES]
    tries += [(scale, tight * scale, floor) for scale in PAST]
    for k, (scale, lead, bottom) in enumerate(tries):
        wrapped = _wrap(words, scale, right - start, right - rest)
        if wrapped is None:
            continue
        first = y1 - above * scale
        last = first - (len(wrapped) - 1) * lead
        if last - below * scale >= bottom - 0.5 or k == len(tries) - 1:
            setting = _place(wrapped, first, lead, scale, (start, rest, right), align, _marker(paragraph))
            setting.squeezed = scale < SCALES[-1]
            setting.box = (min(start, rest), last - below * scale, right, y1)
            obstacles.append(setting.box)
            return setting
    # not even a word fits the width at the smallest size: each line at the smallest size, as wide as it is
    scale = PAST[-1]
    wrapped = [[word] for word in words]
    setting = _place(
        wrapped, y1 - above * scale, tight * scale, scale, (start, rest, right), "left", _marker(paragraph)
    )
    setting.squeezed = True
    setting.box = (start, y1 - above * scale - len(wrapped) * tight * scale, right, y1)
    obstacles.append(setting.box)
    return setting


def _clear_of_left(
    paragraph: Paragraph, start: float, rest: float, right: float
) -> tuple[float, float, float]:
    """A line's edges kept clear of the characters left drawn where they are (`Paragraph.left`: a flag the fonts
    lack): those after its text end its width, those before it start it."""
    chars = [c for c in paragraph.lines[0].chars if c[5] is not None]
    left = [c[5] for c in chars if c[2] is not None and c[2] in paragraph.left]
    text = [c[5] for c in chars if c[2] is None or c[2] not in paragraph.left]
    if not left or not text:
        return start, rest, right
    if min(c.x0 for c in left) >= max(c.x1 for c in text) - 1:
        return start, rest, min(right, min(c.x0 for c in left) - GAP)
    if max(c.x1 for c in left) <= min(c.x0 for c in text) + 1:
        start = rest = max(start, max(c.x1 for c in left) + GAP)
    return start, rest, right


def _frame(box, page):
    """The smallest drawing or picture around `box`, smaller than half the page (a framed title, a table's
    cell, a coloured panel; not a page's background), or None."""
    x0, y0, x1, y1 = box
    around = [
        o
        for o in page.obstacles
        if o[0] <= x0 + 1 and o[1] <= y0 + 1 and o[2] >= x1 - 1 and o[3] >= y1 - 1
        and (o[2] - o[0]) * (o[3] - o[1]) < page.width * page.height / 2
    ]  # fmt: skip
    return min(around, key=lambda o: (o[2] - o[0]) * (o[3] - o[1]), default=None)


def _overlap(a, b, margin: float = 0.5) -> bool:
    return a[0] < b[2] - margin and b[0] < a[2] - margin and a[1] < b[3] - margin and b[1] < a[3] - margin


def _pitch(paragraph: Paragraph) -> float:
    """The distance between its baselines (one line: 1.2 times its size)."""
    lines = paragraph.lines
    if len(lines) < 2:
        return 1.2 * paragraph.size
    pitches = sorted(a.baseline - b.baseline for a, b in zip(lines, lines[1:], strict=False))
    return max(pitches[len(pitches) // 2], paragraph.size)


def _alignment(paragraph: Paragraph, page) -> str:
    """How the source's lines are aligned: "left", "center", "right" or "justify" (a line alone: centred when
    it stands in the middle of the page or of its text, or shares its middle with a line that starts elsewhere;
    right when it ends at the right margin, away from the left one; else left)."""
    lines = paragraph.lines
    if len(lines) == 1:
        middle = (lines[0].x0 + lines[0].x1) / 2
        if lines[0].x0 < page.left + 20:
            return "left"
        if min(abs(middle - page.width / 2), abs(middle - (page.left + page.right) / 2)) < 3:
            return "center"
        for (
            other
        ) in page.paragraphs:  # another line with the same middle, not the same start: a title block's
            x0, x1 = other.lines[0].x0, other.lines[0].x1
            if other is not paragraph and abs((x0 + x1) / 2 - middle) < 2 and abs(x0 - lines[0].x0) > 5:
                return "center"
        return "right" if abs(lines[0].x1 - page.right) < 2 else "left"
    lefts = [line.x0 for line in lines[1:]]
    rights = [line.x1 for line in lines]
    middles = [(line.x0 + line.x1) / 2 for line in lines]
    starts = [line.x0 for line in lines]
    if max(middles) - min(middles) < 2 and max(starts) - min(starts) >= 2:  # a title of two lines too
        return "center"
    if max(lefts) - min(lefts) < 2:
        ends = rights[:-1]
        return "justify" if max(ends) - min(ends) < 2 and len(lines) > 2 else "left"
    if max(middles) - min(middles) < 2:
        return "center"
    if max(rights) - min(rights) < 2:
        return "right"
    return "left"


def _words(out: list[Out]) -> list[_Word]:
    """The translation's words, each in stretches of one look, and the look of the space before each; each
    with the link it is part of."""
    words: list[_Word] = []
    current: _Word | None = None
    space: tuple[Look, Link | None] | None = None
    for text, look, link in ((p.text, p.style, link) for p, link in leaves(out) if p.text):
        for token in re.split(r"(\s+)", text):
            if not token:
                continue
            if token.isspace():
                if current is not None:
                    words.append(current)
                    current = None
                space = (look, link)
            elif current is None:
                current = _Word([(token, look, link)], space if words else None)
                space = None
            else:
                current.parts.append((token, look, link))
    if current is not None:
        words.append(current)
    return words


def leaves(out: list[Out], link: Link | None = None) -> list[tuple[Out, Link | None]]:
    """The pieces of text and kept things of a translation in order, each with the link around it."""
    found = []
    for piece in out:
        if piece.container is not None:
            found += leaves(piece.pieces, piece.container)
        else:
            found.append((piece, link))
    return found


def _wrap(words: list[_Word], scale: float, first: float, rest: float) -> list[list[_Word]] | None:
    """The words in lines no wider than `first` (the first line) and `rest`; None when a word alone is wider."""
    lines: list[list[_Word]] = [[]]
    used = 0.0
    for word in words:
        room = first if len(lines) == 1 else rest
        size = word.width(scale)
        gap = width(" ", word.space[0], scale) if word.space and lines[-1] else 0.0
        if lines[-1] and used + gap + size > room + 0.01:
            lines.append([word])
            used = size
            if size > rest + 0.01:
                return None
        else:
            if size > room + 0.01:
                return None
            lines[-1].append(word)
            used += gap + size
    return lines


def _marker(paragraph: Paragraph):
    """A list item's or footnote's mark: where it was, what it is, its look, and how far before the text it
    stood."""
    if paragraph.marker is None:
        return None
    return (*paragraph.marker, paragraph.lines[0].x0 - paragraph.marker[0])


def _place(wrapped, first: float, lead: float, scale: float, edges, align: str, marker) -> Setting:
    """Each line's words at their places: aligned as the source was; a list item's or footnote's mark where it
    was, or as far before a centred or right-aligned first line as it stood before the source's."""
    start, rest, right = edges
    lines = []
    for k, line in enumerate(wrapped):
        left = start if k == 0 else rest
        widths = [word.width(scale) for word in line]
        gaps = [width(" ", word.space[0], scale) if word.space and j else 0.0 for j, word in enumerate(line)]
        natural = sum(widths) + sum(gaps)
        extra = 0.0
        x = left
        if align == "center":
            x = left + (right - left - natural) / 2
        elif align == "right":
            x = right - natural
        elif align == "justify" and k < len(wrapped) - 1 and len(line) > 1:
            extra = (right - left - natural) / (len(line) - 1)
        stretches: list[tuple[float, str, Look, Link | None]] = []  # spaces written: the text reads as words
        for j, word in enumerate(line):
            if gaps[j]:
                stretches.append((x, " ", *word.space))
                x += gaps[j]
            x += extra if j else 0.0
            for text, look, link in word.parts:
                stretches.append((x, text, look, link))
                x += width(text, look, scale)
        stretches = _merged(stretches, scale)
        if k == 0 and marker is not None:
            x0, text, look, before = marker
            if align in ("center", "right") and stretches:
                x0 = stretches[0][0] - before
            stretches.insert(0, (x0, text, look, None))
        lines.append((first - k * lead, stretches))
    return Setting(lines, scale, (0, 0, 0, 0))


def _merged(stretches: list, scale: float) -> list:
    """Stretches of one look and link that follow each other without a gap written as one."""
    merged: list = []
    for x, text, look, link in stretches:
        if merged:
            start, before, previous, previous_link = merged[-1]
            if (previous, previous_link) == (look, link) and abs(
                start + width(before, look, scale) - x
            ) < 0.01:
                merged[-1] = (start, before + text, look, link)
                continue
        merged.append((x, text, look, link))
    return merged


def draw(canvas, settings: list[Setting]) -> None:
    """The settings' text drawn on the canvas's current page."""
    for setting in settings:
        for baseline, stretches in setting.lines:
            for x, text, look, _ in stretches:
                name = font(look)[0]
                color = look.color
                if len(color) == 1:
                    canvas.setFillGray(color[0])
                elif len(color) == 3:
                    canvas.setFillColorRGB(*color)
                else:
                    canvas.setFillColorCMYK(*color)
                canvas.setFont(name, look.size * setting.scale)
                canvas.drawString(x, baseline + look.rise * setting.scale, text)

"""A PDF page's text read into paragraphs of formatted runs, with pdfminer.six (MIT): what `pdf` translates.

pdfminer's interpreter runs the page's content (form XObjects included) and its layout analysis groups the
characters into boxes of lines; each character is kept with its font, size, colour, place and the text-showing
operator that drew it (the stream, the page's or a form XObject's, and the operator's rank in it: what
`pdf._remove_text` takes out). A box is cut into paragraphs where the line spacing opens (past 1.3 times its
tightest), the type size changes, a line ends short of the box's right edge although the next line's first word
would have fitted on it, a line starts a list item or with a raised mark (a footnote's, kept as a list item's), the code of a monospace line starts or ends, and after a
short line that ends a sentence. A table's cells are texts apart: a line is cut after dot leaders and where a
vertical rule stands between its characters, no parts are joined across a rule, where one has words and the
other none (a row's label and its numbers) or where their gap runs on down the line above or below with an edge in
common (two columns' heads side by side), and a row label ending in leaders or with a cell of numbers beside it
ends its paragraph. A paragraph's lines are one text (a word broken at a hyphen over a line end
joined, the hyphen kept where the document writes the word with it elsewhere), read as `runs.Piece`s of one
`Look` each: its family (serif, sans, monospace), weight, slant, size, colour and rise. A paragraph that a column
or page end cuts inside a sentence is one text with the paragraph it runs on in (`_carry_on`).

A monospace run inside a paragraph is code (`Code`), which comes back as written; a paragraph is kept as
written, and says why (`Paragraph.kept`), where it has no word to translate (`nothing_to_translate`: no letter,
or only `(X)`-like notes or a roman page number), is a figure's (a form XObject drawn over less
than half the page: a chart's labels), is code (all its letters monospace, or monospace with fewer italic ones: a syntax's metavariables; where most
of the document's text is monospace, a typewritten page, it is the body's type and not code), a formula (most
in a symbol font), has characters without a Unicode map or that the fonts the translation is set in lack (and
no `CLOSE` one) drawn by operators that draw other text of it too (else those operators are left drawn,
`Paragraph.left`, and the rest translated), is not set upright, or shares an operator with text kept so (taking the operator out would take that text too: set
by `pdf`). Text drawn invisibly (render mode 3, an OCR layer) is counted, not read.
"""

from __future__ import annotations

import re
from collections import Counter
from dataclasses import dataclass, field, replace
from itertools import groupby

from hf_seq2seq.formats.documents.base import has_words
from hf_seq2seq.formats.documents.runs import Piece

# by the font's name (after a subset's `ABCDEF+`), where its descriptor's flags do not say; TeX's fonts by their
# names' shapes: Computer Modern (`CMR10`, `CMBX12`, `CMTT10`, `CMSS10`), Latin Modern, cm-super (`SFRM1000`)
TEX = r"^(?:cm|lm|sf|ec|tc)"
SYMBOL_FONT = re.compile(rf"symbol|dingbat|wingding|math|{TEX}(?:sy|mi|ex)\d|msam|msbm|stix", re.I)
MONOSPACE_FONT = re.compile(
    rf"mono|courier|consol|code|typewriter|menlo|fixed|inconsolata|nimbusmon|lucidaconsole|andale|cousine|"
    rf"{TEX}(?:tt|sltt|itt|tcsc)\d",
    re.I,
)
SERIF_FONT = re.compile(
    rf"times|serif|roman|georgia|garamond|minion|palatino|cambria|tinos|nimbusrom|century|baskerville|caslon|"
    rf"charter|utopia|bodoni|didot|sabon|constantia|{TEX}(?:r|b|bx|sl|ti|mi|u|csc|rm|cc|bl)\d",
    re.I,
)
SANS_FONT = re.compile(
    rf"sans|arial|helvetica|arimo|verdana|calibri|segoe|roboto|tahoma|nimbussan|frutiger|futura|gill|myriad|"
    rf"{TEX}(?:ss|sx|si)",
    re.I,
)
BOLD_FONT = re.compile(rf"bold|black|heavy|semibold|demi|medi(?:um)?\b|-medi|{TEX}(?:b|bx|ssbx|sx)\d", re.I)
ITALIC_FONT = re.compile(rf"ital|oblique|slant|{TEX}(?:ti|sl|mi|itt|sltt|si|bxti|bxsl)\d", re.I)
LIST_ITEM = re.compile(r"^\s*(?:[•◦▪‣∙·*–-]|\(?\d{1,3}[.)]|\(?[a-z][.)]|\(?[ivx]{1,4}[.)])\s", re.I)
SECTION = re.compile(r"^\s*(?:[A-Z]\.)?\d{1,3}(?:\.\d{1,3})*\s+(?=[A-Z])")
"""A heading's or a contents line's number (`2`, `2.1`, `A.1` before a capital): kept as written, as a list item's
mark is (a sentence model drops or garbles it: `1 Introduction` -> `Entre-la !`)."""
FINAL = tuple(".!?:;…")
LIGATURES = {"ﬀ": "ff", "ﬁ": "fi", "ﬂ": "fl", "ﬃ": "ffi", "ﬄ": "ffl", "ﬅ": "st", "ﬆ": "st"}
"""Typeset ligatures, which a text extractor reads as one character the model does not know as letters."""
CLOSE = {
    "∗": "*", "∼": "~", "⟨": "<", "⟩": ">", "〈": "<", "〉": ">", "∘": "◦", "⋯": "…", "\uf0b7": "•", "\uf0a7": "▪",
    "\uf0d8": "➢", "\uf076": "❖",
}  # fmt: skip
"""Characters the fonts of the translation lack, set as the closest one they have (a math asterisk as `*`, a
Symbol font's private-use bullet as `•`)."""
PUNCTUATION = ".,;:!?()[]\"'“”‘’«»"
FIXED_PITCH, SERIF, ITALIC, FORCE_BOLD = 1, 1 << 1, 1 << 6, 1 << 18  # a font descriptor's /Flags


@dataclass(frozen=True)
class Look:
    """What a run is set in: `Piece.style` (and the look `runs` tells runs apart by)."""

    family: str  # "serif", "sans", "mono"
    bold: bool
    italic: bool
    size: float
    color: tuple[float, ...]  # gray (1), RGB (3) or CMYK (4) components
    rise: float = 0.0  # how far above its line's baseline (below: negative): a superscript, a subscript


@dataclass(frozen=True, eq=False)
class Code:
    """A monospace run inside a paragraph of other text: code, which comes back as written where its words go
    (`Piece.style`: one of its own, so that `runs` gives every code run a place)."""

    look: Look
    text: str


@dataclass(frozen=True, eq=False)
class Mark:
    """A raised or lowered run without letters at a word's end (a footnote's `1` or `*`, a unit's `2`): not
    translated, it comes back as written after the target word aligned to the word it follows (`runs`' kept
    things)."""

    look: Look
    text: str


@dataclass(frozen=True)
class Link:
    """A link annotation of a page: its rank in the page's /Annots and its rectangle (in pdfminer's space); a
    `runs` container, moved with the words aligned to its words."""

    index: int
    rect: tuple[float, float, float, float]

    def holds(self, x: float, y: float) -> bool:
        x0, y0, x1, y1 = self.rect
        return x0 - 1 <= x <= x1 + 1 and y0 - 1 <= y <= y1 + 1


@dataclass
class Line:
    """A line of a paragraph: where it starts and ends, its baseline, its characters."""

    x0: float
    x1: float
    baseline: float
    top: float
    bottom: float
    chars: list = field(default_factory=list)  # (text, Look, operator, symbol font, mapped) per character

    @property
    def text(self) -> str:
        return "".join(char[0] for char in self.chars)


@dataclass
class Paragraph:
    """A paragraph of a page: its lines, its box (x0, y0, x1, y1, y up) and the operators that drew it."""

    page: int
    lines: list[Line]
    kept: str | None = None
    pieces: list[Piece] = field(default_factory=list)
    figure: bool = False
    """Whether it is the text of a figure (a form XObject drawn over less than half the page): kept."""
    left: set = field(default_factory=set)
    """The operators of its characters without a Unicode map or that the fonts lack (drawn by operators of their
    own): left in the page, drawn as they were where they were, and left out of the text translated."""
    marker: tuple[float, str, Look] | None = None
    """A list item's mark (`•`, `2.`, `a)`) or a heading's number (`2.1`): where it stands, its text and look; kept
    as written, the text set where it started after it."""
    following: list[Paragraph] = field(default_factory=list)
    """The paragraphs its text runs on in after a column or page end (`_carry_on`): its `pieces` hold theirs."""
    carried: bool = False
    """Whether it runs on from a paragraph before a column or page end: translated with it."""

    @property
    def box(self) -> tuple[float, float, float, float]:
        return (
            min(line.x0 for line in self.lines),
            min(line.bottom for line in self.lines),
            max(line.x1 for line in self.lines),
            max(line.top for line in self.lines),
        )

    @property
    def operators(self) -> set:
        return {char[2] for line in self.lines for char in line.chars if char[2] is not None}

    @property
    def size(self) -> float:
        """Its most common type size."""
        return Counter(char[1].size for line in self.lines for char in line.chars).most_common(1)[0][0]

    @property
    def text(self) -> str:
        return " ".join(line.text.strip() for line in self.lines)


@dataclass
class Page:
    """What a page holds: its size, its paragraphs, the boxes of everything else drawn (pictures, drawings), the
    invisible characters it has, and whether it has pictures."""

    width: float
    height: float
    paragraphs: list[Paragraph] = field(default_factory=list)
    obstacles: list[tuple[float, float, float, float]] = field(default_factory=list)
    invisible: int = 0
    images: int = 0
    links: list[Link] = field(default_factory=list)

    @property
    def left(self) -> float:
        """Where its leftmost text starts."""
        return min((paragraph.box[0] for paragraph in self.paragraphs), default=0.0)

    @property
    def right(self) -> float:
        """Where its rightmost text ends."""
        return max((paragraph.box[2] for paragraph in self.paragraphs), default=self.width)


@dataclass
class Operators:
    """The text-showing operators pdfminer ran, by stream (None: the page's content; a form XObject's object
    number): each one's string bytes and how far it moved the text position (in TJ units), and how many times
    each form was drawn."""

    shown: dict = field(default_factory=dict)  # (page, stream) -> [(operator bytes, TJ advance)]
    forms: Counter = field(default_factory=Counter)


def read_pages(data: bytes, covered) -> tuple[list[Page], Operators]:
    """Every page of the PDF `data` (already opened and repaired by pikepdf, so pdfminer reads what qpdf does),
    in user space from the media box's corner, each page's /Rotate left aside; `covered(text, look)` says whether
    the fonts of the translation have every character of `text`."""
    from io import BytesIO

    from pdfminer.converter import PDFPageAggregator
    from pdfminer.layout import LAParams
    from pdfminer.pdfdocument import PDFDocument
    from pdfminer.pdfinterp import PDFPageInterpreter, PDFResourceManager
    from pdfminer.pdfpage import PDFPage
    from pdfminer.pdfparser import PDFParser

    operators = Operators()
    manager = PDFResourceManager(caching=True)
    device = _device(PDFPageAggregator)(manager, laparams=LAParams(all_texts=True))
    interpreter_class = _interpreter(PDFPageInterpreter, operators)
    document = PDFDocument(PDFParser(BytesIO(data)))
    pages = []
    for number, pdf_page in enumerate(PDFPage.create_pages(document)):
        pdf_page.rotate = 0  # the page in its own user space: the translation is drawn in it
        device.invisible = device.images = 0
        device.obstacles = []
        interpreter = interpreter_class(manager, device)
        interpreter.page = number
        interpreter.process_page(pdf_page)
        layout = device.get_result()
        page = Page(layout.width, layout.height, obstacles=device.obstacles)
        page.invisible, page.images = device.invisible, device.images
        page.links = _links(pdf_page)
        rules = [o for o in device.obstacles if o[2] - o[0] < 2 and o[3] - o[1] > 4]  # vertical rules
        blocks = _blocks(layout, rules)
        numbers = [  # a table's cells: blocks of lines without words (not a paragraph's last line, a date)
            line
            for lines, _ in blocks
            if all(nothing_to_translate(li.text) for li in lines)
            for line in lines
        ]
        page.paragraphs = [p for lines, figure in blocks for p in _paragraphs(lines, number, figure, numbers)]
        pages.append(page)
    words = Counter(
        word.strip(PUNCTUATION).lower() for page in pages for p in page.paragraphs for word in p.text.split()
    )
    letters = [c[1].family for page in pages for p in page.paragraphs for line in p.lines for c in line.chars]
    code = letters.count("mono") * 2 < len(letters)  # else monospace is the body's type, not code
    for page in pages:
        for paragraph in page.paragraphs:
            paragraph.kept = _kept(paragraph, covered, code)
            paragraph.pieces = _pieces(paragraph, words, code, page.links)
    _carry_on(pages, words)
    return pages, operators


def _links(pdf_page) -> list[Link]:
    """The link annotations of a pdfminer page, their rectangles moved as its content is (by the media box's
    corner)."""
    from pdfminer.pdftypes import resolve1
    from pdfminer.psparser import LIT

    x, y = pdf_page.mediabox[:2]
    links = []
    for index, annotation in enumerate(resolve1(pdf_page.annots) or []):
        annotation = resolve1(annotation)
        if not isinstance(annotation, dict) or resolve1(annotation.get("Subtype")) is not LIT("Link"):
            continue
        try:
            x0, y0, x1, y1 = (float(resolve1(v)) for v in resolve1(annotation.get("Rect")))
        except (TypeError, ValueError):
            continue
        links.append(Link(index, (min(x0, x1) - x, min(y0, y1) - y, max(x0, x1) - x, max(y0, y1) - y)))
    return links


def _interpreter(base, operators: Operators):
    """pdfminer's interpreter, noting the operator (stream, rank) of the text it shows."""

    class Interpreter(base):
        page: int = 0
        stream = None  # None: the page's content; a form XObject's object number

        def dup(self):  # the interpreter of a form XObject
            nested = super().dup()
            nested.page, nested.stream = self.page, False  # set by render_contents
            return nested

        def render_contents(self, resources, streams, ctm=(1, 0, 0, 1, 0, 0)):
            if self.stream is False:
                self.stream = streams[0].objid
                operators.forms[self.stream] += 1
            self.shown = operators.shown.setdefault((self.page, self.stream), [])
            super().render_contents(resources, streams, ctm)

        def do_TJ(self, seq):
            text = b"".join(part for part in seq if isinstance(part, bytes))
            state = self.textstate
            self.device.operator = (self.page, self.stream, len(self.shown))
            self.device.render_mode = state.render
            before = state.linematrix
            super().do_TJ(seq)
            moved = state.linematrix[0] - before[0]
            scale = 0.001 * (state.fontsize or 0) * state.scaling * 0.01
            self.shown.append((text, -moved / scale if scale else 0.0))
            self.device.operator = None

    return Interpreter


def _device(base):
    """pdfminer's layout device, each character noting its operator, its font's look and whether it is mapped
    to Unicode; invisible characters counted and left out, pictures and drawings noted as obstacles."""

    class Device(base):
        operator = None
        render_mode = 0
        invisible = images = 0
        obstacles: list = []

        def render_char(self, matrix, font, fontsize, scaling, rise, cid, ncs, graphicstate):
            advance = super().render_char(matrix, font, fontsize, scaling, rise, cid, ncs, graphicstate)
            char = self.cur_item._objs[-1]
            if self.render_mode in (3, 7):  # invisible: an OCR layer
                self.cur_item._objs.pop()
                self.invisible += 1
                return advance
            char.operator = self.operator
            char.look = _look(font, char.size, graphicstate.ncolor)
            char.symbol = bool(SYMBOL_FONT.search((font.fontname or "").split("+")[-1]))
            char.mapped = not char.get_text().startswith("(cid:")
            char.straight = matrix[1] == 0 and matrix[2] == 0 and matrix[0] > 0 and matrix[3] > 0
            char.raised = matrix[5] + rise * matrix[3]  # where it stands, its text rise (Ts) included
            return advance

        def render_image(self, name, stream):
            super().render_image(name, stream)
            self.images += 1
            self.obstacles.append(self.cur_item._objs[-1].bbox)

        def paint_path(self, graphicstate, stroke, fill, evenodd, path):
            count = len(self.cur_item._objs)
            super().paint_path(graphicstate, stroke, fill, evenodd, path)
            self.obstacles += [item.bbox for item in self.cur_item._objs[count:]]

    return Device


def _look(font, size: float, color) -> Look:
    name = (font.fontname or "").split("+")[-1]
    flags = getattr(font, "flags", 0) or 0
    descriptor = getattr(font, "descriptor", {}) or {}
    weight = descriptor.get("FontWeight", 0)
    weight = weight if isinstance(weight, int | float) else 0
    if flags & FIXED_PITCH or MONOSPACE_FONT.search(name):
        family = "mono"
    elif not SANS_FONT.search(name) and (flags & SERIF or SERIF_FONT.search(name)):
        family = "serif"
    else:
        family = "sans"
    bold = bool(BOLD_FONT.search(name) or flags & FORCE_BOLD or weight >= 600)
    italic = bool(ITALIC_FONT.search(name) or flags & ITALIC or getattr(font, "italic_angle", 0))
    return Look(family, bold, italic, round(size, 1), _color(color))


def _color(color) -> tuple[float, ...]:
    """A fill colour as gray, RGB or CMYK components (black for patterns and colour spaces of other sizes), a
    gray written in RGB or CMYK as gray."""
    if isinstance(color, int | float):
        color = (color,)
    if not isinstance(color, list | tuple) or len(color) not in (1, 3, 4):
        return (0.0,)
    try:
        color = tuple(min(max(float(c), 0.0), 1.0) for c in color)
    except (TypeError, ValueError):
        return (0.0,)
    if len(color) == 3 and color[0] == color[1] == color[2]:  # a gray as RGB: the same look
        return color[:1]
    if len(color) == 4 and color[:3] == (0.0, 0.0, 0.0):  # a gray as CMYK
        return (1.0 - color[3],)
    return color


def _boxes(item, area: float, figure: bool = False):
    """The layout's text boxes, those inside form XObjects included, each with whether it is a figure's: inside a
    form XObject drawn over less than half the page's `area` (a chart, a diagram; a form as large as the page is
    a generator's way of drawing the page)."""
    from pdfminer.layout import LTFigure, LTTextBox

    for child in item:
        if isinstance(child, LTTextBox):
            yield child, figure
        elif isinstance(child, LTFigure):
            yield from _boxes(child, area, figure or child.width * child.height < area / 2)


def _lines(box) -> list[Line]:
    from pdfminer.layout import LTChar

    lines = []
    for text_line in box:
        chars = []
        baselines = []
        for item in text_line:
            if isinstance(item, LTChar) and hasattr(item, "look"):
                char = (item.get_text(), item.look, item.operator, item.symbol, item.mapped, item)
                if char[0].isspace() and chars and chars[-1][0].isspace():  # drawn where one was put in
                    chars.pop()
                chars.append(char)
                baselines.append(round(item.raised, 1))
            elif chars and item.get_text() == " " and not chars[-1][0].isspace():  # one the analysis put in
                chars.append((" ", chars[-1][1], None, False, True, None))
        while chars and chars[-1][0].isspace():
            chars.pop()
        if not chars:
            continue
        baseline = Counter(baselines).most_common(1)[0][0]
        for k, char in enumerate(
            chars
        ):  # a superscript or subscript: raised or lowered from the line's baseline
            rise = 0.0 if char[5] is None else round(char[5].raised - baseline, 1)
            if abs(rise) > 0.15 * char[1].size:
                chars[k] = (char[0], replace(char[1], rise=rise), *char[2:])
        drawn = [char[5] for char in chars if char[5] is not None]
        lines.append(
            Line(
                x0=min(c.x0 for c in drawn), x1=max(c.x1 for c in drawn), baseline=baseline,
                top=max(c.y1 for c in drawn), bottom=min(c.y0 for c in drawn), chars=chars,
            )
        )  # fmt: skip
    return lines


LEADER = re.compile(r"(?:\.\s*){4,}")
"""Dot leaders (`Total . . . . 11,062.6`): a table's row label ends there, its cells follow."""
ROW_LABEL = re.compile(r"(?:\.\s*){4,}$")
NO_WORD = re.compile(r"\(?[A-Z]{1,2}\)|[ivxlcdm]+|[IVXLCDM]+")
"""A token with letters that is no word to translate: a table's note in brackets (`(X)`, `(NA)`, `(Z)`) or a
roman number (a page number `iii`, `XIV`)."""


def nothing_to_translate(text: str) -> bool:
    """Whether `text` has no word to translate: no letter (numbers, symbols) or, alone, its letters only in
    `NO_WORD` tokens (`(X)` cells, a roman page number): kept exactly as written."""
    if not has_words(text):
        return True
    tokens = [token.strip(".,;:") for token in text.split()]
    tokens = [token for token in tokens if has_words(token)]
    return all(NO_WORD.fullmatch(token) for token in tokens) and (
        len(tokens) == 1 or all(token.startswith("(") for token in tokens)
    )


def _cells(line: Line, rules: list) -> list[Line]:
    """A line cut into a table's cells: after dot leaders, and where a vertical rule stands between two
    characters."""
    cuts = set()
    offsets, text = [], ""
    for k, char in enumerate(line.chars):
        offsets += [k] * len(char[0])
        text += char[0]
    for match in LEADER.finditer(text):
        if match.end() < len(text):
            cuts.add(offsets[match.end()])
    drawn = [(k, char[5]) for k, char in enumerate(line.chars) if char[5] is not None]
    for (_, a), (j, b) in zip(drawn, drawn[1:], strict=False):
        middle = (a.y0 + a.y1) / 2
        if any(a.x1 - 1 <= r[0] and r[2] <= b.x0 + 1 and r[1] <= middle <= r[3] for r in rules):
            cuts.add(j)
    if not cuts:
        return [line]
    parts, start = [], 0
    for cut in sorted(cuts) + [len(line.chars)]:
        chars = line.chars[start:cut]
        while chars and chars[-1][0].isspace():
            chars = chars[:-1]
        while chars and chars[0][0].isspace():
            chars = chars[1:]
        drawn = [c[5] for c in chars if c[5] is not None]
        if drawn:
            parts.append(
                Line(
                    min(c.x0 for c in drawn), max(c.x1 for c in drawn), line.baseline,
                    max(c.y1 for c in drawn), min(c.y0 for c in drawn), list(chars),
                )
            )  # fmt: skip
        start = cut
    return parts


def _between(a: Line, b: Line, rules: list) -> bool:
    """Whether a vertical rule stands between `a` and `b` (`b` right of `a`): table cells."""
    middle = (a.baseline + a.top) / 2
    return any(a.x1 - 1 <= r[0] and r[2] <= b.x0 + 1 and r[1] <= middle <= r[3] for r in rules)


def _blocks(layout, rules: list = ()) -> list[tuple[list[Line], bool]]:
    """The lines of each text box, top to bottom; boxes that hold parts of one line joined, and those parts
    made one line, and so are boxes of which one goes on right below the other (pdfminer cuts a list item's
    second line from its first, whose bullet hangs out). pdfminer cuts a line where a gap is wider than twice its characters' width, which a justified
    line's spaces after a sentence can be (`type.  It`): parts on one baseline less than an em apart are one.
    Each block with whether it is a figure's text (`_boxes`). A table's cells stay apart: a box whose lines
    `_cells` cuts is one box per cell, and no parts are joined across a vertical rule or where one has words and
    the other none (a row's label and its numbers, a column's head and its numbers)."""
    found = []
    for box, figure in _boxes(layout, layout.width * layout.height):
        lines = _lines(box)
        cells = [_cells(line, rules) for line in lines]
        if any(len(parts) > 1 for parts in cells):
            found += [([part], figure) for parts in cells for part in parts]
        else:
            found.append((lines, figure))
    boxes = [lines for lines, _ in found]
    owner = list(range(len(boxes)))

    def root(k: int) -> int:
        while owner[k] != k:
            k = owner[k]
        return k

    parts = sorted(
        ((k, line) for k, lines in enumerate(boxes) for line in lines),
        key=lambda e: (-e[1].baseline, e[1].x0),
    )
    pairs = [
        (k, a, j, b)
        for (k, a), (j, b) in zip(parts, parts[1:], strict=False)
        if abs(a.baseline - b.baseline) < 0.5
    ]  # parts side by side on one line
    for k, a, j, b in pairs:
        if (
            -1 < b.x0 - a.x1 < min(_main_size(a), _main_size(b))
            and abs(_main_size(a) - _main_size(b)) < 1
            and has_words(a.text) == has_words(b.text)
            and not _between(a, b, rules)
            and not any(_gutter(a, b, c, d) for _, c, _, d in pairs)
        ):
            owner[root(j)] = root(k)
    for k, upper in enumerate(boxes):  # a box that goes on right below another, as its next line would
        for j, lower in enumerate(boxes):
            if upper and lower and k != j and _follows(upper[-1], lower[0]):
                owner[root(j)] = root(k)
    groups: dict[int, list[Line]] = {}
    figures: dict[int, bool] = {}
    for k, lines in enumerate(boxes):
        groups.setdefault(root(k), []).extend(lines)
        figures[root(k)] = figures.get(root(k), False) or found[k][1]
    blocks = []
    for key, lines in groups.items():
        lines.sort(key=lambda line: (-line.baseline, line.x0))
        joined = [lines[0]] if lines else []
        for line in lines[1:]:
            before = joined[-1]
            if abs(before.baseline - line.baseline) < 0.5:
                space = (" ", before.chars[-1][1], None, False, True, None)
                joined[-1] = Line(
                    before.x0, max(before.x1, line.x1), before.baseline, max(before.top, line.top),
                    min(before.bottom, line.bottom), before.chars + [space] + line.chars,
                )  # fmt: skip
            else:
                joined.append(line)
        if joined:
            blocks.append((joined, figures[key]))
    return blocks


def _gutter(a: Line, b: Line, c: Line, d: Line) -> bool:
    """Whether the gap between parts `a` and `b` of a line and that between `c` and `d` of the line above or
    below are one white channel down the page, with one edge in common: table cells side by side (a column's
    head over two lines, right-aligned, beside the next one's), not the wide spaces of a justified line, which
    fall where its words do."""
    near = 0 < abs(a.baseline - c.baseline) <= 1.35 * max(_main_size(a), _main_size(c))
    edge = abs(a.x1 - c.x1) < 1 or abs(b.x0 - d.x0) < 1
    return near and edge and min(b.x0, d.x0) - max(a.x1, c.x1) > 0.5 * (b.x0 - a.x1)


def _row_label(line: Line, numbers: list[Line]) -> bool:
    """Whether `line` ends a table row's label: it ends in dot leaders, or a cell of numbers stands right of it,
    on its baseline and within ten ems (its leaders, where it has any, cut short by a long label)."""
    size = _main_size(line)
    return bool(ROW_LABEL.search(line.text.rstrip())) or any(
        abs(n.baseline - line.baseline) < 0.5 and 0 <= n.x0 - line.x1 < 10 * size for n in numbers
    )


def _follows(upper: Line, lower: Line) -> bool:
    """Whether `lower` stands where the line after `upper` would: below it at most 1.35 times its size, across
    the same width, in the same size."""
    size = _main_size(upper)
    return (
        0 < upper.baseline - lower.baseline <= 1.35 * size
        and lower.x0 < upper.x1
        and upper.x0 < lower.x1
        and abs(_main_size(lower) - size) < 0.1 * size
        and has_words(upper.text) == has_words(lower.text)
    )


def _paragraphs(lines: list[Line], page: int, figure: bool, numbers: list[Line] = ()) -> list[Paragraph]:
    """A text box's lines cut into paragraphs (the module docstring); `numbers`: the page's lines that have no
    word to translate, a table's cells."""
    # the box's leading: its tightest line spacing (within a paragraph), lines that overlap aside
    pitches = [a.baseline - b.baseline for a, b in zip(lines, lines[1:], strict=False)]
    sizes = [min(_main_size(a), _main_size(b)) for a, b in zip(lines, lines[1:], strict=False)]
    pitch = min((p for p, size in zip(pitches, sizes, strict=True) if p >= 0.9 * size), default=0)
    width = max(line.x1 for line in lines) - min(line.x0 for line in lines)
    right = max(line.x1 for line in lines)
    paragraphs = [[lines[0]]]
    for before, line in zip(lines, lines[1:], strict=False):
        size_before, size = _main_size(before), _main_size(line)
        text_before = before.text.rstrip()
        new = (
            before.baseline - line.baseline > 1.3 * pitch + 0.5
            or abs(size - size_before) > 0.15 * max(size, size_before)
            or LIST_ITEM.match(line.text)
            or _raised_mark(line) is not None  # a footnote, its mark raised
            or nothing_to_translate(line.text) != nothing_to_translate(before.text)  # a table's numbers
            or _row_label(before, numbers)  # a table's row label: its dot leaders, its numbers beside it
            or _code(before) != _code(line)
            or (text_before.endswith(FINAL) and before.x1 < right - 0.15 * width)
            or (
                right - before.x1 > _first_word(line) + 0.5 * size  # its first word would have fitted before
                and not _row_label(line, numbers)  # a label goes on
            )
        )
        if new:
            paragraphs.append([line])
        else:
            paragraphs[-1].append(line)
    return [Paragraph(page, group, figure=figure) for group in paragraphs]


def _raised_mark(line: Line):
    """The match of a line's leading raised mark and the space after it, or None: characters that are no letter
    (a footnote's `¹`, `*`, `†`), or one or two letters before a space (a legend's `ð`, an affiliation's `a`)."""
    count = 0
    for char in line.chars:
        if char[0].isspace() or char[1].rise <= 0:
            break
        count += 1
    raised = line.text[:count]
    if any(c.isalpha() for c in raised) and (count > 2 or not line.text[count : count + 1].isspace()):
        return None
    if not count or count >= len(line.text.rstrip()):
        return None
    return re.compile(rf"\S{{{count}}}\s*").match(line.text)


def _first_word(line: Line) -> float:
    """How wide a line's first word is drawn."""
    drawn = []
    for char in line.chars:
        if char[0].isspace():
            break
        if char[5] is not None:
            drawn.append(char[5])
    return drawn[-1].x1 - drawn[0].x0 if drawn else 0.0


def _main_size(line: Line) -> float:
    return Counter(char[1].size for char in line.chars if not char[0].isspace()).most_common(1)[0][0]


def _code(line: Line) -> bool:
    """A line whose letters are all code's (`_code_letters`)."""
    return _code_letters([char for char in line.chars if char[0].isalpha()])


def _code_letters(letters: list) -> bool:
    """Whether letters are code: all monospace, or monospace and italic, at least as many monospace (a syntax's
    italic metavariables, `return expr;`; not an italic note with an address in it)."""
    mono = sum(char[1].family == "mono" for char in letters)
    italic = sum(char[1].family != "mono" and char[1].italic for char in letters)
    return mono > 0 and mono + italic == len(letters) and mono >= italic


def _kept(paragraph: Paragraph, covered, code: bool) -> str | None:
    """Why a paragraph is kept as written (the module docstring), or None; with `code`, monospace is code."""
    chars = [char for line in paragraph.lines for char in line.chars]
    letters = [char for char in chars if char[0].isalpha()]
    odd = [c for c in chars if not c[4] or not covered(LIGATURES.get(c[0], CLOSE.get(c[0], c[0])), c[1])]
    if odd:  # left as drawn where their operators draw nothing else, else the paragraph kept
        left = {char[2] for char in odd}
        rest = [char for char in chars if char[2] not in left]
        others = {char[2] for char in rest if not char[0].isspace()}
        found = re.findall(r"[^\W\d_]{3,}", "".join(char[0] for char in rest))
        prose = len(found) >= 2 or any(len(word) >= 4 for word in found)  # not a formula's
        if None in left or left & others or not prose:
            return (
                "characters without a Unicode map"
                if not all(c[4] for c in chars)
                else "characters the fonts lack"
            )
        paragraph.left = left
        chars = rest
        letters = [char for char in chars if char[0].isalpha()]
    if nothing_to_translate(paragraph.text):
        return "no words"
    if paragraph.figure:
        return "a figure's text"
    if code and _code_letters(letters):
        return "code"
    drawn = [char for char in chars if not char[0].isspace() and char[0] != "."]  # leaders set in a math font
    if sum(char[3] for char in drawn) * 2 > len(drawn):
        return "a formula"
    if not all(char[5].straight for char in chars if char[5] is not None):
        return "not set upright"
    return None


def _pieces(paragraph: Paragraph, words: Counter, code: bool, links: list[Link]) -> list[Piece]:
    """The paragraph's text as runs of one look: its lines joined with a space, or without one after a word
    broken at a hyphen (`_joins`); with `code`, each monospace run a `Code`; the runs under a link's rectangle
    in a container of it (`runs` puts the link around the target words aligned to its words)."""
    chars: list[tuple[str, Look, Link | None]] = []
    first_line = paragraph.lines[0]
    marked = not paragraph.left and (
        LIST_ITEM.match(first_line.text) or SECTION.match(first_line.text) or _raised_mark(first_line)
    )
    for k, line in enumerate(paragraph.lines):
        line_chars = [
            (LIGATURES.get(char[0], CLOSE.get(char[0], char[0])), char[1], _link(char[5], links))
            for char in line.chars
            if char[2] is None or char[2] not in paragraph.left
        ]
        if k == 0 and marked and len(line.chars) > marked.end() and line.chars[0][5] is not None:
            mark, first = line.chars[0], line.chars[marked.end()]
            paragraph.marker = (mark[5].x0, marked.group().strip(), mark[1])
            line_chars = line_chars[marked.end() :]
            if first[5] is not None:
                line.x0 = first[5].x0  # the text starts after the mark
        if k and chars:  # nothing to join to where the lines before held only a list mark or kept characters
            joined = _joins("".join(c for c, *_ in chars), line.text, words)
            if joined == "drop":
                chars.pop()
            elif joined == "space":
                chars.append((" ", chars[-1][1], None))
        chars += line_chars
    for k, (char, look, link) in enumerate(chars):  # a space inside a link's words is the link's
        if char.isspace():
            after = next((c[2] for c in chars[k + 1 :] if not c[0].isspace()), None)
            chars[k] = (char, look, link or (after if k and chars[k - 1][2] == after else None))
    pieces: list[Piece] = []
    for link, group in groupby(chars, key=lambda c: c[2]):
        runs = _runs([(char, look) for char, look, _ in group], code)
        pieces += runs if link is None else [Piece(container=link, pieces=tuple(runs))]
    return pieces


def _runs(chars: list[tuple[str, Look]], code: bool) -> list[Piece]:
    """Characters as runs of one look (a space takes the look before it), a raised mark a `Mark`; with `code`,
    monospace ones `Code`."""
    pieces: list[Piece] = []
    text, look = "", None
    for char, char_look in chars:
        if look is not None and char_look != look and not char.isspace():
            pieces.append(Piece(text=text, style=look))
            text = ""
        if not char.isspace() or look is None:
            look = char_look
        text += char
    if text:
        pieces.append(Piece(text=text, style=look))
    pieces = [part for k, piece in enumerate(pieces) for part in _mark(piece, pieces[k + 1 : k + 2])]
    if code:
        pieces = [
            Piece(text=p.text, style=Code(p.style, p.text.strip()))
            if p.kept is None and p.style.family == "mono"
            else p
            for p in pieces
        ]
    return pieces


def _mark(piece: Piece, after: list[Piece]) -> list[Piece]:
    """A run as pieces: a `Mark` and the spaces after it where it is one (raised or lowered, no letter, at a
    word's end: before a space, a punctuation mark or the paragraph's end), else the run itself."""
    mark = piece.text.rstrip()
    end = piece.text[len(mark) :] or (after[0].text[:1] if after else " ")
    if not piece.style.rise or not mark or has_words(mark) or not (end.isspace() or end in PUNCTUATION):
        return [piece]
    return [Piece(kept=Mark(piece.style, mark))] + (
        [Piece(text=piece.text[len(mark) :], style=piece.style)] * (mark != piece.text)
    )


def _link(char, links: list[Link]) -> Link | None:
    """The link whose rectangle holds a character's middle."""
    if char is None:
        return None
    x, y = (char.x0 + char.x1) / 2, (char.y0 + char.y1) / 2
    return next((link for link in links if link.holds(x, y)), None)


def _carry_on(pages: list[Page], words: Counter) -> None:
    """Each paragraph whose text a column or page end cut, joined with the one it runs on in: its last line
    full and ending inside a sentence (a letter, a digit, a comma, a hyphen), the other starting with a
    lower-case word in the same type, at the top of the next column to its right on the page, or, where it ends
    the page's last column, of the next page's first. The first's `pieces` gain the others' (joined as a
    paragraph's lines are), the others are `carried`."""
    after: dict[int, Paragraph] = {}
    for number, page in enumerate(pages):
        for upper in page.paragraphs:
            if upper.kept is not None or not _unfinished(upper) or not _alone(upper, page, below=True):
                continue
            right = [p for p in page.paragraphs if _column_after(upper, p) and _alone(p, page, below=False)]
            if (
                not right
                and number + 1 < len(pages)
                and not any(_column_after(upper, p) for p in page.paragraphs)
            ):
                nexts = [p for p in pages[number + 1].paragraphs if _same_type(upper, p)]
                right = [
                    p
                    for p in nexts
                    if _alone(p, pages[number + 1], below=False)
                    and not any(_column_after(o, p) for o in nexts)
                ]
            lower = min(right, key=lambda p: (p.box[0], -p.box[3]), default=None)
            if lower is not None and _runs_on(upper, lower):
                after[id(upper)] = lower
    for page in pages:
        for head in page.paragraphs:
            if id(head) not in after or head.carried:
                continue
            lower = after[id(head)]
            while lower is not None and not lower.carried and lower is not head:
                _append(head, lower, words)
                lower = after.get(id(lower))


def _unfinished(paragraph: Paragraph) -> bool:
    """Whether a paragraph of lines (not a heading's or a label's line alone) ends inside a sentence, its last
    line full."""
    last = paragraph.lines[-1]
    x0, _, x1, _ = paragraph.box
    end = last.text.rstrip()[-1:]
    return (
        len(paragraph.lines) > 1
        and bool(end)
        and (end.isalnum() or end in ",-\u00ad\u2010")
        and last.x1 >= x1 - 0.1 * (x1 - x0)
    )


def _runs_on(upper: Paragraph, lower: Paragraph) -> bool:
    """Whether `lower` can carry on `upper`'s text: translated, in its type, starting with a lower-case word
    and no list item's mark."""
    first = WORD.match(lower.lines[0].text.lstrip())
    return (
        not lower.carried
        and lower.marker is None
        and _same_type(upper, lower)
        and first is not None
        and first.group()[0].islower()
        and not LIST_ITEM.match(lower.lines[0].text)
    )


def _same_type(a: Paragraph, b: Paragraph) -> bool:
    """Whether two paragraphs are text to translate of one size and family."""
    return (
        a.kept is None and b.kept is None and abs(a.size - b.size) < 0.1 * a.size and _family(a) == _family(b)
    )


def _family(paragraph: Paragraph) -> str | None:
    """Its letters' most common family."""
    families = Counter(c[1].family for line in paragraph.lines for c in line.chars if c[0].isalpha())
    return families.most_common(1)[0][0] if families else None


def _column_after(a: Paragraph, b: Paragraph) -> bool:
    """Whether `b` stands in a column to the right of `a`'s, starting above where `a` ends."""
    x0, y0, x1, _ = a.box
    return b is not a and b.box[0] >= x0 + 0.5 * (x1 - x0) and b.box[3] > y0 + a.size and _same_type(a, b)


def _alone(paragraph: Paragraph, page: Page, below: bool) -> bool:
    """Whether no text of the paragraph's type stands below it (`below`) or above it in its column."""
    x0, y0, x1, y1 = paragraph.box
    return not any(
        p is not paragraph
        and _same_type(paragraph, p)
        and p.box[0] < x1
        and p.box[2] > x0
        and (p.box[3] <= y0 + 1 if below else p.box[1] >= y1 - 1)
        for p in page.paragraphs
    )


def _append(head: Paragraph, lower: Paragraph, words: Counter) -> None:
    """`lower`'s pieces after `head`'s, joined as a paragraph's lines are (`_joins`)."""
    before = head.pieces[-1] if head.pieces else None
    joined = _joins((head.following or [head])[-1].text, lower.lines[0].text, words)
    if joined == "drop" and before is not None and before.text:
        head.pieces[-1] = replace(before, text=before.text.rstrip()[:-1])
    elif joined != "keep" or before is None or not before.text:
        style = next((p.style for p in reversed(head.pieces) if p.text), None)
        head.pieces.append(Piece(text=" ", style=style or next(p.style for p in lower.pieces if p.text)))
    head.pieces += lower.pieces
    head.following.append(lower)
    lower.carried = True


BROKEN = re.compile(r"(\w+)[-\u00ad\u2010]$")
WORD = re.compile(r"\w+")
ADDRESS = re.compile(r"(?:\b[a-z][a-z0-9+.-]*://|\bwww\.)\S*$", re.I)
"""A web address the line ends in (TeX's url package breaks one anywhere, with no hyphen)."""


def _joins(before: str, after: str, words: Counter) -> str:
    """How a line joins the text before it: "space", "keep" (a hyphenated word: `well-known` written so
    elsewhere; a web address broken over the line end, its next part not a capital's word) or "drop" (a word
    broken to wrap it: its hyphen dropped)."""
    head = after.lstrip()[:1]
    if ADDRESS.search(before) and head and not head.isupper():
        return "keep"
    broken, following = BROKEN.search(before.rstrip()), WORD.match(after.lstrip())
    if not broken or not following or not following.group()[0].islower() or before != before.rstrip():
        return "space"
    head, tail = broken.group(1).lower(), following.group().lower()
    return "keep" if words[f"{head}-{tail}"] else "drop"

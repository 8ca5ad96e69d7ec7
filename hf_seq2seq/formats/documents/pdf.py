"""PDF documents (`.pdf`): the same pages back, each paragraph's text replaced by its translation, with a
permissive stack (the `pdf` extra): pikepdf (MPL-2.0, on qpdf) opens, repairs, edits and writes the file,
pdfminer.six (MIT) reads its text (`pdf_reading`), reportlab (BSD) sets the translation (`pdf_setting`).
PyMuPDF, which PDF translators build on, is AGPL-licensed: not used.

The file is opened with pikepdf, which reads a damaged file (a broken cross-reference table) as readers do, and
an owner password alone (restrictions on printing or copying) does not stop it; it is written once without its
encryption, and that copy is what pdfminer reads and pikepdf edits, so both see the same objects. Each page's
paragraphs are read with their runs (`pdf_reading`; one cut by a column or page end and the one it runs on in
are one text, whose translation is cut at spaces by their lengths, each part set in its own paragraph's box),
translated in one batched call with word alignments (`runs.translate_paragraphs`: bold, italic, monospace,
colour and size changes come back on the words they belong to), and each is set in its own box on a layer of
text drawn over its page (`pdf_setting`: tighter spacing, the free space below, smaller type to 70%; past that it
still goes in, and `Job.warnings` names the page and paragraph; a page with pictures and no text, a scanned page
among pages of text, is kept as it was and named likewise). The text it replaces is taken out of the content
stream that drew it (the page's, or a form XObject's drawn once): each text-showing operator of a translated
paragraph (`Tj`, `TJ`, `'`, `"`) is replaced by a `TJ` that moves the text position as far without drawing, so
text drawn after it on the same line stays in place. A link annotation over a paragraph's words is moved around
the words aligned to them. Everything else is kept as it was: page count and sizes, pictures, drawings, other
annotations, form fields, outlines, and the text kept as written (`pdf_reading`: numbers, code, formulas). Given
the translation's language (`Job.target_lang`), the document's `/Lang` is set to it where it has one.

Refused with a `DocumentError`, nothing written: a file that is not a PDF or that pikepdf cannot repair, one that
needs a password to open, one whose pages have no text (scanned pages: OCR needed) or only invisible text (render
mode 3, an OCR layer drawn under the scanned image), one whose text has no Unicode map (the characters cannot be
read as text), one whose pages' content unpacks to more than the markup limit (`Job.markup_limit`). The time spent
reading, translating, setting and writing is logged at INFO (`hf_seq2seq.formats.documents.pdf`).
"""

from __future__ import annotations

import io
import logging
import re
import time
from collections import defaultdict
from itertools import accumulate, groupby

from hf_seq2seq.formats.documents.base import (
    MARKUP_LIMIT,
    DocumentError,
    DocumentFormat,
    Job,
    has_words,
    require,
)
from hf_seq2seq.formats.documents.pdf_reading import Code, Look, Mark, Operators, Page, read_pages
from hf_seq2seq.formats.documents.pdf_setting import covered, draw, fit, leaves
from hf_seq2seq.formats.documents.runs import Out, translate_paragraphs

logger = logging.getLogger(__name__)

SHOWING = ("Tj", "TJ", "'", '"')
"""The operators that show text."""
UNREADABLE = (ValueError, TypeError, KeyError, IndexError, AssertionError, ZeroDivisionError, RecursionError)
"""What pdfminer raises on a page it cannot read, beside its own `PSException`s."""


class Pdf(DocumentFormat):
    name = "PDF document"
    extensions = (".pdf",)

    def translate(self, data: bytes, job: Job) -> bytes:
        pikepdf = require("pikepdf", "pikepdf", ".pdf", "pdf")
        psparser = require("pdfminer.psparser", "pdfminer.six", ".pdf", "pdf")  # pdf_reading's
        require("reportlab", "reportlab", ".pdf", "pdf")  # pdf_setting's
        clock = time.perf_counter()
        plain = _plain(_open(pikepdf, data, job.markup_limit or MARKUP_LIMIT))
        try:
            pages, operators = read_pages(plain, covered)
        except (psparser.PSException, *UNREADABLE) as error:
            raise DocumentError(
                f"a damaged PDF whose pages cannot be read: {error or type(error).__name__}"
            ) from None
        pdf = pikepdf.open(io.BytesIO(plain))
        _refuse_without_text(pages)
        for number, page in enumerate(pages):  # a scanned page among pages of text
            if page.images and not any(has_words(p.text) for p in page.paragraphs):
                _warn(
                    job,
                    f"page {number + 1} has no text, only pictures (a scanned page needs OCR): kept as it was",
                )
        _keep_unmatched(pikepdf, pdf, pages, operators)
        paragraphs = [p for page in pages for p in page.paragraphs if p.kept is None and not p.carried]
        read = time.perf_counter()
        translated = translate_paragraphs([p.pieces for p in paragraphs], job, weight=_weight)
        translating = time.perf_counter()
        done = {}
        for paragraph, out in zip(paragraphs, translated, strict=True):
            if out is not None:
                parts = [paragraph, *paragraph.following]
                shares = [len(part.text) for part in parts]
                done.update(zip(map(id, parts), _split(_as_written(out), shares), strict=True))
        settings, removed, links = _set(pages, done, operators, job)
        overlay = _overlay(pages, settings) if settings else None
        setting = time.perf_counter()
        _remove_text(pikepdf, pdf, removed)
        _move_links(pikepdf, pdf, links)
        if overlay is not None:
            _add_overlay(pikepdf, pdf, overlay, sorted(settings))
        if job.target_lang and "/Lang" in pdf.Root:
            pdf.Root.Lang = pikepdf.String(job.target_lang)
        out = io.BytesIO()
        pdf.save(out)
        written = time.perf_counter()
        logger.info(
            "PDF of %d pages, %d paragraphs translated: read %.2f s, translated %.2f s, set %.2f s, written %.2f s",
            len(pages), len(done), read - clock, translating - read, setting - translating, written - setting,
        )  # fmt: skip
        return out.getvalue()


def _set(pages: list[Page], done: dict, operators: Operators, job: Job) -> tuple[dict, dict, dict]:
    """Each translated paragraph fitted on its page (`done`: the paragraph's id -> its translation), in reading
    order: the settings of each page with any, the operators to take out ((page, stream) -> rank -> TJ
    advance), and where each link's words went (page -> link -> a box per line). A paragraph squeezed past 70%
    is named in `Job.warnings`. A paragraph whose translation would go over another's text (its source's lines
    tangled with others': a formula's parts read as text) is left as written."""
    settings: dict[int, list] = defaultdict(list)
    removed: dict[tuple, dict[int, float]] = defaultdict(dict)
    links: dict[int, dict] = defaultdict(dict)
    for number, page in enumerate(pages):
        obstacles = page.obstacles + [p.box for p in page.paragraphs]
        obstacles += [(p.marker[0], *p.box[1:]) for p in page.paragraphs if p.marker]  # with their marks
        ink = {
            id(p): [(line.x0, line.bottom, line.x1, line.top) for line in p.lines] for p in page.paragraphs
        }
        for k, paragraph in enumerate(page.paragraphs):
            if id(paragraph) not in done:
                continue
            setting = fit(paragraph, done[id(paragraph)], obstacles, page)
            lines = setting.line_boxes()
            others = [box for key, boxes in ink.items() if key != id(paragraph) for box in boxes]
            # a part of a text run on over a column or page end is set whatever, as the rest of it is
            alone = not paragraph.carried and not paragraph.following
            if alone and any(_over(line, box) for line in lines for box in others):
                obstacles.remove(setting.box)
                continue
            ink[id(paragraph)] = lines
            settings[number].append(setting)
            if setting.squeezed:
                _warn(
                    job,
                    f"page {number + 1}, paragraph {k + 1}: set at {setting.scale:.0%} of its size to fit",
                )
            for page_number, stream, rank in paragraph.operators - paragraph.left:
                removed[page_number, stream][rank] = operators.shown[page_number, stream][rank][1]
            for link, boxes in setting.links().items():
                links[number].setdefault(link, []).extend(boxes)
    return settings, removed, links


def _over(a: tuple, b: tuple) -> bool:
    """Whether line box `a` goes over line box `b`: across more than a point and a third of the lower one's
    height (lines one above the other may touch)."""
    across = min(a[2], b[2]) - max(a[0], b[0])
    high = min(a[3], b[3]) - max(a[1], b[1])
    return across > 1 and high > 0.3 * min(a[3] - a[1], b[3] - b[1])


def _warn(job: Job, message: str) -> None:
    """`message` added to the job's warnings, or logged where the caller takes none."""
    if job.warnings is None:
        logger.warning(message)
    else:
        job.warnings.append(message)


def _as_written(out: list[Out], written: set | None = None) -> list[Out]:
    """A paragraph's translation with each code run as it was written, where the first of its words went (its
    spacing kept), and each raised mark as it was, inside links too; every piece's style a `Look`."""
    written = set() if written is None else written
    pieces = []
    for piece in out:
        style = piece.style
        if piece.container is not None:
            pieces.append(Out(container=piece.container, pieces=_as_written(piece.pieces, written)))
        elif isinstance(piece.kept, Mark):
            pieces.append(Out(piece.kept.text, piece.kept.look))
        elif isinstance(style, Code):
            text = piece.text
            lead, trail = text[: len(text) - len(text.lstrip())], text[len(text.rstrip()) :]
            pieces.append(Out(lead + ("" if style in written else style.text) + trail, style.look))
            written.add(style)
        else:
            pieces.append(piece)
    return pieces


def _split(out: list[Out], shares: list[int]) -> list[list[Out]]:
    """A translation cut at spaces into as many parts as `shares`, each about its share of the characters (a
    paragraph and those it runs on in after a column or page end, each set in its own box); a link cut in two
    is around its words in both."""
    atoms = [
        (text, piece, link) for piece, link in leaves(out) for text in re.split(r"(\s+)", piece.text or "")
    ]
    atoms = [atom for atom in atoms if atom[0] or atom[1].kept is not None]
    total, count = sum(len(text) for text, _, _ in atoms), 0
    cuts = [total * share / sum(shares) for share in accumulate(shares[:-1])]
    parts: list[list[tuple]] = [[]]
    for text, piece, link in atoms:
        if text.isspace() and len(parts) <= len(cuts) and count >= cuts[len(parts) - 1] and parts[-1]:
            parts.append([])
        elif not text.isspace() or parts[-1]:
            parts[-1].append((text, piece, link))
        count += len(text)
    parts += [[] for _ in range(len(shares) - len(parts))]
    return [_rebuilt(part) for part in parts]


def _rebuilt(atoms: list[tuple]) -> list[Out]:
    """Pieces again from a part's `_split` atoms: text of one style and container merged."""
    pieces: list[Out] = []
    for link, group in groupby(atoms, key=lambda atom: atom[2]):
        inner: list[Out] = []
        for text, piece, _ in group:
            if piece.kept is not None:
                inner.append(piece)
            elif inner and inner[-1].kept is None and inner[-1].style == piece.style:
                inner[-1] = Out(inner[-1].text + text, piece.style)
            else:
                inner.append(Out(text, piece.style))
        pieces += inner if link is None else [Out(container=link, pieces=inner)]
    return pieces


def _weight(style: Look | Code) -> int:
    """How much formatting a run has: a space between runs goes with the plainer one."""
    look = style.look if isinstance(style, Code) else style
    return look.bold + look.italic + (look.family == "mono") + (look.color != (0.0,))


def _open(pikepdf, data: bytes, limit: int):
    """The PDF opened by pikepdf (repaired if damaged), or `DocumentError` for one that is not a PDF, needs a
    password, or whose pages' content unpacks to more than `limit` bytes."""
    try:
        pdf = pikepdf.open(io.BytesIO(data))
    except pikepdf.PasswordError:
        raise DocumentError(
            "the PDF needs a password to open: save it again without one (a file whose owner password only "
            "restricts printing or copying is translated)"
        ) from None
    except pikepdf.PdfError as error:
        raise DocumentError(
            f"not a PDF file, or a damaged one that cannot be repaired: {_reason(error)}"
        ) from None
    size = 0
    try:
        for page in pdf.pages:
            contents = page.obj.get("/Contents")
            if isinstance(contents, pikepdf.Array):
                streams = list(contents)
            else:
                streams = [] if contents is None else [contents]
            forms = page.resources.get("/XObject", {})
            streams += [form for _, form in forms.items() if form.get("/Subtype") == "/Form"]
            for stream in streams:
                size += len(stream.read_bytes())
                if size > limit:
                    raise DocumentError(
                        f"a PDF whose pages' content unpacks to more than {limit:,} bytes is refused (more text "
                        "than a document sent here may hold, or a compression bomb)"
                    )
    except pikepdf.PdfError as error:
        raise DocumentError(f"a damaged PDF that cannot be read: {_reason(error)}") from None
    return pdf


def _reason(error: Exception) -> str:
    """qpdf's message without the name of the stream it read (`stream <_io.BytesIO object at 0x...>: `; pikepdf
    8 leaves out `stream `)."""
    return re.sub(r"^(stream )?<[^>]*>:\s*", "", str(error))


def _plain(pdf) -> bytes:
    """The PDF written again without encryption: what is read and edited (both with the same objects)."""
    out = io.BytesIO()
    pdf.save(out)
    return out.getvalue()


def _refuse_without_text(pages: list[Page]) -> None:
    """`DocumentError` for a PDF with nothing to translate: scanned pages with no text or only invisible text,
    or text without a Unicode map."""
    paragraphs = [p for page in pages for p in page.paragraphs]
    if any(p.kept is None for p in paragraphs):
        return
    if any(p.kept == "characters without a Unicode map" for p in paragraphs):
        raise DocumentError(
            "the PDF's text has no Unicode map (its fonts say which shapes to draw, not which characters they "
            "are): it cannot be read as text; only OCR of its pages would read it"
        )
    if any(p.kept != "no words" for p in paragraphs):
        return  # code, formulas: nothing to translate, the file comes back as it was
    if sum(page.invisible for page in pages):
        raise DocumentError(
            "the PDF's pages are scanned images with only invisible OCR text (render mode 3) under them: the "
            "words shown are pictures, which cannot be replaced; it needs OCR into visible text first"
        )
    if sum(page.images for page in pages):
        raise DocumentError(
            "the PDF's pages are scanned images without a text layer: it needs OCR (text recognition) first"
        )
    raise DocumentError("the PDF has no text to translate")


def _keep_unmatched(pikepdf, pdf, pages: list[Page], operators: Operators) -> None:
    """Paragraphs kept as written where taking their text out would go wrong: drawn by operators that pikepdf
    does not read as pdfminer did, or by a form XObject drawn more than once (in other places, other text), or
    sharing an operator with a paragraph kept as written."""
    unmatched = set()
    for (number, stream), shown in operators.shown.items():
        if stream is not None and operators.forms[stream] > 1:
            unmatched.add((number, stream))
            continue
        target = pdf.pages[number] if stream is None else pdf.get_object((stream, 0))
        try:
            texts = [_shown_bytes(pikepdf, i) for i in pikepdf.parse_content_stream(target)]
        except pikepdf.PdfError:
            unmatched.add((number, stream))
            continue
        if [t for t in texts if t is not None] != [text for text, _ in shown]:
            unmatched.add((number, stream))
    for page in pages:
        for paragraph in page.paragraphs:
            if paragraph.kept is None and any(op[:2] in unmatched for op in paragraph.operators):
                paragraph.kept = "drawn in a way that cannot be taken out alone"
        owners = defaultdict(list)
        for paragraph in page.paragraphs:
            for operator in paragraph.operators:
                owners[operator].append(paragraph)
        changed = True
        while changed:  # a kept paragraph keeps every paragraph it shares an operator with
            changed = False
            for sharing in owners.values():
                if any(p.kept for p in sharing) and any(p.kept is None for p in sharing):
                    for p in sharing:
                        p.kept = p.kept or "drawn together with text kept as written"
                    changed = True


def _shown_bytes(pikepdf, instruction) -> bytes | None:
    """The bytes of the strings a text-showing instruction shows; None for any other instruction."""
    if isinstance(instruction, pikepdf.ContentStreamInlineImage):
        return None
    operator = str(instruction.operator)
    if operator not in SHOWING:
        return None
    operand = instruction.operands[-1]
    if isinstance(operand, pikepdf.Array):
        return b"".join(bytes(part) for part in operand if isinstance(part, pikepdf.String))
    return bytes(operand) if isinstance(operand, pikepdf.String) else b""


def _remove_text(pikepdf, pdf, removed: dict[tuple, dict[int, float]]) -> None:
    """Each text-showing operator of `removed` ((page, stream) -> rank -> TJ advance) replaced by a `TJ` that
    moves as far without drawing (`'` and `"` keep their move to the next line and spacing)."""
    for (number, stream), ranks in removed.items():
        target = pdf.pages[number] if stream is None else pdf.get_object((stream, 0))
        instructions, rank = [], 0
        for instruction in pikepdf.parse_content_stream(target):
            if isinstance(instruction, pikepdf.ContentStreamInlineImage):
                instructions.append(instruction)
                continue
            operands, operator = instruction.operands, str(instruction.operator)
            if operator not in SHOWING:
                instructions.append(instruction)
                continue
            if rank in ranks:
                if operator == '"':
                    instructions += [
                        ([operands[0]], pikepdf.Operator("Tw")),
                        ([operands[1]], pikepdf.Operator("Tc")),
                    ]
                if operator in ("'", '"'):
                    instructions.append(([], pikepdf.Operator("T*")))
                instructions.append(([pikepdf.Array([ranks[rank]])], pikepdf.Operator("TJ")))
            else:
                instructions.append(instruction)
            rank += 1
        content = pikepdf.unparse_content_stream(instructions)
        if stream is None:
            pdf.pages[number].obj.Contents = pdf.make_stream(content)
        else:
            target.write(content)


def _move_links(pikepdf, pdf, links: dict[int, dict]) -> None:
    """Each link annotation whose words were translated moved to where they are now: its rectangle around them,
    a quadrilateral per line (`/QuadPoints`, which readers click and highlight by)."""
    for number, moved in links.items():
        page = pdf.pages[number]
        x, y = float(page.mediabox[0]), float(page.mediabox[1])
        for link, boxes in moved.items():
            boxes = [(x0 + x, y0 + y, x1 + x, y1 + y) for x0, y0, x1, y1 in boxes]
            annotation = page.obj.Annots[link.index]
            annotation.Rect = pikepdf.Array(
                [
                    min(b[0] for b in boxes),
                    min(b[1] for b in boxes),
                    max(b[2] for b in boxes),
                    max(b[3] for b in boxes),
                ]
            )
            quads = [v for x0, y0, x1, y1 in boxes for v in (x0, y1, x1, y1, x0, y0, x1, y0)]
            annotation.QuadPoints = pikepdf.Array(quads)


def _overlay(pages: list[Page], settings: dict[int, list]) -> bytes:
    """A PDF of one page per page with translated paragraphs (in order), each holding their text."""
    from reportlab.pdfgen.canvas import Canvas

    out = io.BytesIO()
    canvas = Canvas(out, pageCompression=1, invariant=1)
    for number in sorted(settings):
        canvas.setPageSize((pages[number].width, pages[number].height))
        draw(canvas, settings[number])
        canvas.showPage()
    canvas.save()
    return out.getvalue()


def _add_overlay(pikepdf, pdf, overlay: bytes, numbers: list[int]) -> None:
    """The text of each page of `overlay` drawn over page `numbers[k]` of `pdf`, at its media box's corner, after
    the page's own content (wrapped in q/Q, so that nothing it leaves set moves the text): in the page's own
    content, its fonts added to the page's resources, so that text extractors read it as the page's text."""
    layer = pikepdf.open(io.BytesIO(overlay))
    for number, page in zip(numbers, layer.pages, strict=True):
        target = pdf.pages[number]
        instructions = list(pikepdf.parse_content_stream(page))
        used = {str(i.operands[0]) for i in instructions if str(i.operator) == "Tf"}
        fonts = {name: _font_name(pikepdf, pdf, target, page.resources.Font[name]) for name in used}
        for k, instruction in enumerate(instructions):
            if str(instruction.operator) == "Tf":
                font, size = instruction.operands
                instructions[k] = pikepdf.ContentStreamInstruction(
                    [fonts[str(font)], size], instruction.operator
                )
        x0, y0 = float(target.mediabox[0]), float(target.mediabox[1])
        target.contents_add(b"q\n", prepend=True)
        text = pikepdf.unparse_content_stream(instructions)
        target.contents_add(f"\nQ\nq 1 0 0 1 {x0:g} {y0:g} cm\n".encode() + text + b"\nQ\n")


def _font_name(pikepdf, pdf, page, font):
    """The name of the overlay's `font` in `page`'s resources: copied into `pdf` once (pages of one overlay share
    their fonts) and added to the page's fonts unless already there (pages that share their resources)."""
    copied = pdf.copy_foreign(font)
    fonts = page.resources.get("/Font", {})
    for name, existing in fonts.items():
        if existing.is_indirect and existing.objgen == copied.objgen:
            return pikepdf.Name(name)
    return page.add_resource(copied, pikepdf.Name.Font, prefix="Tr")

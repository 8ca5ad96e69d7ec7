"""PowerPoint, OpenDocument and EPUB files (`hf_seq2seq.formats.documents.powerpoint`, `.opendocument`, `.epub`,
their runs placed by `.runs`): real files of python-pptx's, odfpy's and the W3C EPUB suite's tests and of the
EPUB 3 samples round-trip with every paragraph translated and everything else kept (zip members, their order
and compression, breaks, fields, tabs, spans, links, notes, headers, tables, charts, SmartArt, an NCX's
entries); no formatted run comes back empty even with no alignment; bad and hostile files get a
`DocumentError`; a glossary reaches each format, an engine without alignments is refused; the command writes
each format. The files are in tests/fixtures/documents (source and licence in its
README.md)."""

import io
import re
import zipfile
from collections import Counter
from pathlib import Path

import pytest
from helpers import Unaligned, WordTranslator

from hf_seq2seq.cli import translate as translate_cli
from hf_seq2seq.engines.base import Translator, UnsupportedFeature
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.formats.aligned import translate_aligned
from hf_seq2seq.formats.documents import DOCUMENT_FORMATS, DocumentError, base, translate_document_bytes
from hf_seq2seq.formats.glossary import Glossary
from hf_seq2seq.formats.markup import names_a_language, translate_html

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

pptx = pytest.importorskip("pptx")
etree = pytest.importorskip("lxml.etree")

FILES = Path(__file__).parent / "fixtures" / "documents"
LEXICON = {
    "the": "le", "a": "un", "cell": "cellule", "text": "texte", "run": "passage", "in": "dans", "table": "tableau",
    "notes": "remarques", "test": "essai", "passes": "passe", "if": "si", "you": "vous", "see": "voyez",
    "this": "ceci", "plain": "simple", "bold": "gras", "italic": "italique", "underline": "souligné",
    "subscript": "indice", "superscript": "exposant", "anchor": "ancre", "is": "est", "top": "haut", "of": "de",
    "city": "ville", "header": "en-tête", "lorem": "lorem", "vert": "vert", "merged": "fusionnée",
}  # fmt: skip
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"
TEXT = "{urn:oasis:names:tc:opendocument:xmlns:text:1.0}"
ODF_FO = "urn:oasis:names:tc:opendocument:xmlns:xsl-fo-compatible:1.0"
NCX = "{http://www.daisy.org/z3986/2005/ncx/}"


@pytest.fixture
def words():
    return WordTranslator(LEXICON, adjectives=frozenset({"bold"}))


def translated(words, text: str) -> str:
    (result,) = translate_aligned(words, [" ".join(text.split())], alignments=False)
    return result.target


def members(data: bytes) -> list[tuple[str, int, bytes]]:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return [(i.filename, i.compress_type, archive.read(i)) for i in archive.infolist()]


def assert_same_archive_but(source: bytes, out: bytes, changed: set[str]) -> None:
    """Every member in its order with its compression, the `mimetype` first and stored, only `changed` changed."""
    before, after = members(source), members(out)
    assert [(name, kind) for name, kind, _ in after] == [(name, kind) for name, kind, _ in before]
    assert {name for (name, _, a), (_, _, b) in zip(before, after, strict=True) if a != b} == changed
    if before[0][0] == "mimetype":
        assert after[0][1] == zipfile.ZIP_STORED


# ---- PowerPoint


def slide_paragraphs(data: bytes) -> list:
    presentation = pptx.Presentation(io.BytesIO(data))
    parts = []
    for slide in presentation.slides:
        parts.append(slide.element)
        if slide.has_notes_slide:
            parts.append(slide.notes_slide.element)
    return [p for part in parts for p in part.iter(A + "p")]


def text_of(paragraph) -> str:
    """A DrawingML paragraph's text, a line break as a space, a field as `[field]`."""
    parts = []
    for child in paragraph:
        if child.tag == A + "r":
            parts.append(child.findtext(A + "t") or "")
        elif child.tag == A + "br":
            parts.append(" ")
        elif child.tag == A + "fld":
            parts.append(" [field] ")
    return " ".join("".join(parts).split())


@pytest.mark.parametrize("name", ["txt-text.pptx", "sld-notes.pptx", "tbl-cell.pptx"])
def test_a_presentation_translates_its_slides_tables_and_notes_keeping_breaks_and_fields(words, name):
    data = (FILES / name).read_bytes()
    out = translate_document_bytes(words, data, ".pptx")
    before, after = slide_paragraphs(data), slide_paragraphs(out)
    assert len(after) == len(before)
    for source, target in zip(before, after, strict=True):
        kept = [c.tag for c in source if c.tag != A + "r"]
        assert [c.tag for c in target if c.tag != A + "r"] == kept  # breaks, fields, properties in order
        pieces = text_of(source).split(" [field] ")
        expected = " [field] ".join(translated(words, p) if re.search("[A-Za-z]", p) else p for p in pieces)
        assert text_of(target) == " ".join(expected.split())
        assert all(run.findtext(A + "t") for run in target.iter(A + "r"))  # no empty run written
    texts = [text_of(p) for p in after]
    assert {"txt-text.pptx": "Texte passage dans tableau cellule", "sld-notes.pptx": "Remarques"}.get(
        name, "ancre est haut"
    ) in " | ".join(texts)


def test_a_hyperlink_and_every_formatted_run_keep_words_even_with_no_alignment():
    data = (FILES / "txt-text.pptx").read_bytes()
    out = translate_document_bytes(Unaligned(LEXICON), data, ".pptx")
    links = [
        r
        for p in slide_paragraphs(out)
        for r in p.iter(A + "r")
        if r.find(f"{A}rPr/{A}hlinkClick") is not None
    ]
    assert [r.findtext(A + "t") for r in links] == ["yahoo.com"]
    tables = (FILES / "tbl-cell.pptx").read_bytes()
    for source, target in zip(
        slide_paragraphs(tables),
        slide_paragraphs(translate_document_bytes(Unaligned(LEXICON), tables, ".pptx")),
        strict=True,
    ):  # "vert" (marked as a spelling error) and " anchor is top" are two runs: both come back with words
        properties = [
            etree.tostring(r.find(A + "rPr")) for r in source.iter(A + "r") if r.findtext(A + "t").strip()
        ]
        written = [
            etree.tostring(r.find(A + "rPr")) for r in target.iter(A + "r") if r.findtext(A + "t").strip()
        ]
        assert set(written) == set(properties)


def test_the_text_a_slide_layout_shows_on_its_slides_is_translated_but_not_its_prompts(words):
    """Apache POI's WithMaster.pptx: its title layout holds a text box, "This text comes from the Master Slide",
        that both slides show; the layout's placeholders hold prompts ("This is the Master Title"), which a slide shows
    only while editing its own empty placeholder."""
    data = (FILES / "WithMaster.pptx").read_bytes()
    layout = pptx.Presentation(io.BytesIO(data)).slides[0].slide_layout
    prompts = [shape.text_frame.text for shape in layout.placeholders if shape.has_text_frame]
    out = pptx.Presentation(io.BytesIO(translate_document_bytes(words, data, ".pptx"))).slides[0].slide_layout
    [box] = [shape for shape in out.shapes if not shape.is_placeholder and shape.has_text_frame]
    assert box.text_frame.text == "Ceci texte comes from le Master Slide"
    assert [shape.text_frame.text for shape in out.placeholders if shape.has_text_frame] == prompts
    assert "This is the Master Title" in prompts


def test_a_presentation_s_chart_and_smartart_come_back_translated_and_otherwise_as_they_were():
    """python-pptx's shp-shapes.pptx: a chart whose title is text and a SmartArt diagram, whose text is in its
    data and in the drawing PowerPoint shows of it; every other element and attribute of those parts kept."""
    data = (FILES / "shp-shapes.pptx").read_bytes()
    lexicon = LEXICON | {"shapes[4]": "formes[4]", "shapes[5]": "formes[5]", "smart": "intelligent"}
    out = translate_document_bytes(WordTranslator(lexicon), data, ".pptx")
    before, after = dict((n, c) for n, _, c in members(data)), dict((n, c) for n, _, c in members(out))
    parts = {
        "ppt/charts/chart1.xml": ["formes[4]"],
        "ppt/diagrams/data1.xml": ["formes[5]", " ", " Intelligent Art"],
        "ppt/diagrams/drawing1.xml": ["formes[5]", " ", " Intelligent Art"],
    }
    for name, texts in parts.items():
        source, translation = etree.fromstring(before[name]), etree.fromstring(after[name])
        assert [t.text for t in translation.iter(A + "t")] == texts, name
        for t in (*source.iter(A + "t"), *translation.iter(A + "t")):
            t.text = None
        assert etree.tostring(translation) == etree.tostring(source), name
    assert after["ppt/diagrams/data1.xml"].startswith(
        b"<?xml version='1.0' encoding='UTF-8' standalone='yes'?>"
    )
    assert len(pptx.Presentation(io.BytesIO(out)).slides) == 2


MODERN_COMMENT = """<?xml version="1.0" encoding="UTF-8" standalone="yes"?>
<p188:cmLst xmlns:a="http://schemas.openxmlformats.org/drawingml/2006/main"
  xmlns:p188="http://schemas.microsoft.com/office/powerpoint/2018/8/main">
<p188:cm id="{B1D6F5C1-0D4B-4C1A-9E0E-3A1B2C3D4E5F}" authorId="{00000000-0000-0000-0000-000000000001}"
  created="2025-01-01T00:00:00.000">
<p188:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US"/><a:t>the cell</a:t></a:r></a:p></p188:txBody>
<p188:replyLst><p188:reply id="{C2E7A6D2-1E5C-4D2B-8F1F-4B2C3D4E5F60}" authorId="{00000000-0000-0000-0000-000000000001}"
  created="2025-01-02T00:00:00.000">
<p188:txBody><a:bodyPr/><a:lstStyle/><a:p><a:r><a:rPr lang="en-US"/><a:t>the table</a:t></a:r></a:p></p188:txBody>
</p188:reply></p188:replyLst></p188:cm></p188:cmLst>"""


def test_a_slide_s_modern_comments_and_their_replies_are_translated(words):
    """PowerPoint 365 keeps a slide's comments in a part of its own (`modernComment_*.xml`), each comment's and
    reply's text in DrawingML paragraphs; python-pptx reads it as bytes."""
    source = io.BytesIO((FILES / "txt-text.pptx").read_bytes())
    written = io.BytesIO()
    with zipfile.ZipFile(source) as archive, zipfile.ZipFile(written, "w") as out:
        for item in archive.infolist():
            content = archive.read(item)
            if item.filename == "[Content_Types].xml":
                content = content.replace(b"</Types>", (
                    b'<Override PartName="/ppt/comments/modernComment_1.xml" '
                    b'ContentType="application/vnd.ms-powerpoint.comments+xml"/></Types>'
                ))  # fmt: skip
            elif item.filename == "ppt/slides/_rels/slide1.xml.rels":
                content = content.replace(b"</Relationships>", (
                    b'<Relationship Id="rId99" Target="../comments/modernComment_1.xml" '
                    b'Type="http://schemas.microsoft.com/office/2018/10/relationships/comments"/></Relationships>'
                ))  # fmt: skip
            out.writestr(item, content)
        out.writestr("ppt/comments/modernComment_1.xml", MODERN_COMMENT)
    out = translate_document_bytes(words, written.getvalue(), ".pptx", target_lang="fr")
    comment = zipfile.ZipFile(io.BytesIO(out)).read("ppt/comments/modernComment_1.xml").decode()
    assert re.findall(r"<a:t>([^<]*)</a:t>", comment) == ["le cellule", "le tableau"]
    assert comment.count('lang="fr"') == 2 and "p188:replyLst" in comment


# ---- OpenDocument


def odf_xml(data: bytes, name: str = "content.xml") -> str:
    with zipfile.ZipFile(io.BytesIO(data)) as archive:
        return archive.read(name).decode("utf-8")


def test_an_odt_keeps_its_spans_and_a_word_of_several_styles(words):
    data = (FILES / "simplestyles.odt").read_bytes()
    out = translate_document_bytes(words, data, ".odt")
    assert_same_archive_but(data, out, {"content.xml"})
    content = odf_xml(out)
    for paragraph in (
        '<text:p text:style-name="P2"><text:span text:style-name="T1">Italique</text:span></text:p>',
        '<text:p text:style-name="P3"><text:span text:style-name="T1">Souligné italique</text:span></text:p>',
        '<text:span text:style-name="T9">Km</text:span><text:span text:style-name="T7">2</text:span> - exposant',
        'H<text:span text:style-name="T17">2</text:span>O - indice</text:p>',  # H₂O as it was
        '<text:p text:style-name="Standard">Simple texte</text:p>',
    ):
        assert paragraph in content


def test_an_odt_link_wraps_its_words_in_one_piece_inside_its_span(words):
    """A link is a container, as a Word hyperlink is: "a bold text" -> "un texte gras" puts a word between the
    link's two words, and the link still comes back as one element around them (before: two links, "un" and
    "gras"), in the span it stood in, the spaces at its edges outside it."""
    content = (
        '<?xml version="1.0" encoding="UTF-8"?><office:document-content'
        ' xmlns:office="urn:oasis:names:tc:opendocument:xmlns:office:1.0"'
        ' xmlns:text="urn:oasis:names:tc:opendocument:xmlns:text:1.0" xmlns:xlink="http://www.w3.org/1999/xlink"'
        ' office:version="1.3"><office:body><office:text><text:p>See <text:a xlink:href="https://example.org/">a'
        ' bold</text:a> text in <text:span text:style-name="T1">the <text:a xlink:href="https://example.org/t">'
        "table</text:a></text:span>.</text:p></office:text></office:body></office:document-content>"
    )
    written = io.BytesIO()
    with zipfile.ZipFile(written, "w") as archive:
        archive.writestr("mimetype", "application/vnd.oasis.opendocument.text")
        archive.writestr("content.xml", content)
    out = odf_xml(translate_document_bytes(words, written.getvalue(), ".odt"))
    assert (
        '<text:p>Voyez <text:a xlink:href="https://example.org/">un texte gras</text:a> dans '
        '<text:span text:style-name="T1">le <text:a xlink:href="https://example.org/t">tableau.</text:a>'
        "</text:span></text:p>"
    ) in out  # the spaces outside the links; the full stop, written on the link's word, with it


def test_an_odt_translates_its_header_and_footer_and_its_tables(words):
    data = (FILES / "headerfooter.odt").read_bytes()
    out = translate_document_bytes(words, data, ".odt")
    assert_same_archive_but(data, out, {"content.xml", "styles.xml"})
    assert (
        'En-tête<text:tab/><text:page-number text:select-page="current">1</text:page-number><text:tab/>Essai'
        in odf_xml(out, "styles.xml")
    )  # the tabs and the page number field in their places
    table = (FILES / "simpletable.odt").read_bytes()
    before = etree.fromstring(odf_xml(table).encode())
    after = etree.fromstring(odf_xml(translate_document_bytes(words, table, ".odt")).encode())
    cells = "{urn:oasis:names:tc:opendocument:xmlns:table:1.0}table-cell"
    assert len(list(after.iter(cells))) == len(list(before.iter(cells)))
    assert [
        translated(words, "".join(p.itertext())) for p in before.iter(TEXT + "p") if "".join(p.itertext())
    ] == ["".join(p.itertext()) for p in after.iter(TEXT + "p") if "".join(p.itertext())]


def test_an_odp_translates_the_text_of_its_slides(words):
    data = (FILES / "ol.odp").read_bytes()
    out = translate_document_bytes(WordTranslator({"eins": "un", "tsvey": "deux"}), data, ".odp")
    assert_same_archive_but(data, out, {"content.xml"})  # its master pages hold no text
    assert '<text:span text:style-name="T1">Un</text:span>' in odf_xml(out)
    assert '<text:span text:style-name="T1">Deux</text:span>' in odf_xml(out)


def test_an_opendocument_file_declaring_entities_is_refused_and_no_file_is_read(words):
    data = (FILES / "nasty.odt").read_bytes()  # odfpy's: &nasty; is a SYSTEM entity, a file of the machine
    with pytest.raises(DocumentError, match=r"content.xml declares a DTD \(entities\) is refused"):
        translate_document_bytes(words, data, ".odt")
    assert words.calls == []


# ---- EPUB


def test_an_epub_translates_its_chapters_and_navigation_as_html_and_keeps_the_rest(words):
    data = (FILES / "lay-pkg-flow-paginated.epub").read_bytes()
    out = translate_document_bytes(words, data, ".epub")
    documents = {f"EPUB/content_00{k}.xhtml" for k in range(1, 5)} | {"EPUB/nav.xhtml"}
    assert_same_archive_but(data, out, documents | {"EPUB/package.opf"})  # its title and description too
    before, after = dict((n, c) for n, _, c in members(data)), dict((n, c) for n, _, c in members(out))
    names = sorted(documents)
    assert [after[n].decode() for n in names] == translate_html(words, [before[n].decode() for n in names])
    assert "There now est your insular ville de le Manhattoes" in after["EPUB/content_002.xhtml"].decode()
    for name in names:  # still well-formed XML, as EPUB requires
        etree.fromstring(after[name])


def test_an_epub_table_of_contents_for_older_readers_comes_back_translated_and_otherwise_as_it_was(words):
    """The Waste Land of the EPUB 3 samples carries an NCX (EPUB 2's table of contents) beside its navigation
    document, as EPUB 3 books do for older readers: its title and its entries' labels are translated."""
    data = (FILES / "wasteland.epub").read_bytes()
    out = translate_document_bytes(words, data, ".epub")
    ncx = "EPUB/wasteland.ncx"
    assert_same_archive_but(
        data, out, {"EPUB/wasteland-content.xhtml", "EPUB/wasteland-nav.xhtml", ncx, "EPUB/wasteland.opf"}
    )
    before, after = (etree.fromstring(dict((n, c) for n, _, c in members(d))[ncx]) for d in (data, out))
    labels = [text.text for text in before.iter(NCX + "text")]
    assert labels[:2] == ["The Waste Land", "I. THE BURIAL OF THE DEAD"] and len(labels) == 7
    assert [text.text for text in after.iter(NCX + "text")] == [translated(words, label) for label in labels]
    assert next(after.iter(NCX + "text")).text == "Le Waste Land"
    for text in (*before.iter(NCX + "text"), *after.iter(NCX + "text")):
        text.text = None
    assert etree.tostring(after) == etree.tostring(before)  # its entries, links, order and comments


def test_an_epub_is_marked_as_in_the_translation_s_language_but_its_quotations_stay_in_theirs(words):
    """The Waste Land quotes German, French, Italian, Latin and Sanskrit, each marked with its `xml:lang` in a
    book that says it is in English: those lines come back as written, the rest translated and marked French."""
    data = (FILES / "wasteland.epub").read_bytes()
    out = translate_document_bytes(words, data, ".epub", target_lang="fr")
    package = "EPUB/wasteland.opf"
    assert_same_archive_but(
        data, out, {"EPUB/wasteland-content.xhtml", "EPUB/wasteland-nav.xhtml", "EPUB/wasteland.ncx", package}
    )
    before, after = dict((n, c) for n, _, c in members(data)), dict((n, c) for n, _, c in members(out))
    dc = "{http://purl.org/dc/elements/1.1/}"
    assert [e.text for e in etree.fromstring(before[package]).iter(dc + "language")] == ["en-US"]
    assert [e.text for e in etree.fromstring(after[package]).iter(dc + "language")] == ["fr"]
    assert (
        etree.fromstring(after["EPUB/wasteland.ncx"]).get("{http://www.w3.org/XML/1998/namespace}lang")
        == "fr"
    )
    chapter = "EPUB/wasteland-content.xhtml"
    source, translation = etree.fromstring(before[chapter]), etree.fromstring(after[chapter])
    xml_lang = "{http://www.w3.org/XML/1998/namespace}lang"
    assert (translation.get(xml_lang), translation.get("lang")) == ("fr", "fr")
    pairs = [
        (a, b)
        for a, b in zip(source.iter(), translation.iter(), strict=True)
        if a.get(xml_lang) not in (None, "en")
    ]
    quoted, kept = ([etree.tostring(e, with_tail=False) for e in side] for side in zip(*pairs, strict=True))
    assert len(quoted) == 27 and "Bin gar keine Russin" in b"".join(quoted).decode()
    assert kept == quoted


def test_an_epub_whose_table_of_contents_lxml_cannot_read_is_translated_with_that_file_kept(words):
    data = (FILES / "wasteland.epub").read_bytes()
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            content = zin.read(item.filename)
            if item.filename.endswith(".ncx"):  # an HTML entity that no NCX declares
                content = content.replace(b"A GAME OF CHESS", b"A GAME&nbsp;OF CHESS")
            zout.writestr(item, content)
    broken = out.getvalue()
    translated_book = translate_document_bytes(words, broken, ".epub")
    assert_same_archive_but(
        broken,
        translated_book,
        {"EPUB/wasteland-content.xhtml", "EPUB/wasteland-nav.xhtml", "EPUB/wasteland.opf"},
    )


def test_an_epub_s_title_and_description_are_translated_and_the_rest_of_its_metadata_kept(words):
    """What a reader's library shows of a book (its package document's `dc:title` and `dc:description`, here
    the Waste Land's title and a description added in HTML, escaped, as Calibre writes one), translated; the
    author, the rights and the rest of the package document as they were."""
    package = "EPUB/wasteland.opf"
    description = "<dc:description>&lt;p&gt;The &lt;i&gt;bold&lt;/i&gt; text &amp; the plain run&lt;/p&gt;</dc:description>"
    data = io.BytesIO()
    with zipfile.ZipFile(FILES / "wasteland.epub") as zin, zipfile.ZipFile(data, "w") as zout:
        for item in zin.infolist():
            content = zin.read(item.filename)
            if item.filename == package:
                content = content.replace(b"<dc:creator>", description.encode() + b"<dc:creator>")
            zout.writestr(item, content)
    out = translate_document_bytes(words, data.getvalue(), ".epub")
    dc = "{http://purl.org/dc/elements/1.1/}"
    before, after = (
        etree.fromstring(dict((n, c) for n, _, c in members(d))[package]) for d in (data.getvalue(), out)
    )
    assert [e.text for e in after.iter(dc + "title", dc + "description")] == [
        "Le Waste Land",
        "<p>Le texte <i>gras</i> &amp; le simple passage</p>",  # as HTML: its element moved with its word
    ]
    for element in (
        *before.iter(dc + "title", dc + "description"),
        *after.iter(dc + "title", dc + "description"),
    ):
        element.text = None
    assert etree.tostring(after) == etree.tostring(before)


# ---- all of them


@pytest.mark.parametrize("extension", [".pptx", ".odt", ".odp", ".epub"])
def test_the_new_formats_are_registered(extension):
    assert DOCUMENT_FORMATS[extension].extensions


@pytest.mark.parametrize("extension", [".docx", ".pptx", ".odt", ".odp", ".epub"])
def test_a_password_protected_file_is_refused_saying_so(words, extension):
    """Apache POI's bug53475-password-is-pass.docx: Word encrypts a document saved with a password into an OLE2
    compound file, which is no zip; so is a binary .doc or .ppt renamed."""
    data = (FILES / "bug53475-password-is-pass.docx").read_bytes()
    with pytest.raises(DocumentError, match="a password-protected file, or an old binary one"):
        translate_document_bytes(words, data, extension)
    assert words.calls == []


@pytest.mark.parametrize("extension", [".pptx", ".odt", ".odp", ".epub"])
@pytest.mark.parametrize(
    "data", [b"", b"PK\x03\x04", b"not a zip at all"], ids=["empty", "truncated", "text"]
)
def test_a_corrupt_file_is_a_document_error(words, extension, data):
    with pytest.raises(DocumentError, match="not (a|an) .*, or a damaged one"):
        translate_document_bytes(words, data, extension)


@pytest.mark.parametrize(
    ("name", "extension", "message"),
    [
        (
            "simplestyles.odt",
            ".pptx",
            "not a PowerPoint presentation \\(.pptx\\), or a damaged one: .*Content_Types",
        ),
        ("sld-notes.pptx", ".odt", "not an OpenDocument file \\(.odt, .odp\\): it has no content.xml"),
        ("ol.odp", ".epub", "^not an EPUB e-book \\(.epub\\): it has no META-INF/container.xml$"),
    ],
)
def test_a_zip_of_another_format_is_refused_saying_what_it_lacks(words, name, extension, message):
    with pytest.raises(DocumentError, match=message):
        translate_document_bytes(words, (FILES / name).read_bytes(), extension)


@pytest.mark.parametrize(
    ("name", "what"),
    [("sld-notes.pptx", "PowerPoint"), ("ol.odp", "OpenDocument"), ("cnt-xhtml-support.epub", "EPUB")],
)
def test_a_file_that_would_unpack_beyond_the_ceiling_is_refused(words, monkeypatch, name, what):
    data = (FILES / name).read_bytes()
    monkeypatch.setattr(base, "UNPACKED_LIMIT", len(data))  # every one of them unpacks to more than its size
    with pytest.raises(DocumentError, match=f"{what} .* that unpacks to [0-9,]+ is refused"):
        translate_document_bytes(words, data, Path(name).suffix)
    assert words.calls == []


def language_marks(data: bytes) -> dict[str, int]:
    """How often each language is marked on a zipped document's text: Word's `w:lang` (its `w:val`), DrawingML's
    `lang` (PowerPoint), OpenDocument's `fo:language` with `fo:country`."""
    word, fo = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}", f"{{{ODF_FO}}}"
    found = Counter()
    for name, _, content in members(data):
        if name.endswith(".xml") and content:
            for element in etree.fromstring(content).iter():
                if element.tag == word + "lang" and element.get(word + "val"):
                    found[element.get(word + "val")] += 1
                elif element.get("lang"):
                    found[element.get("lang")] += 1
                elif element.get(fo + "language"):
                    country = element.get(fo + "country")
                    found[element.get(fo + "language") + (f"-{country}" if country else "")] += 1
                elif element.tag == "{http://purl.org/dc/elements/1.1/}language":
                    found[f"{element.text} ({name})"] += 1
    return dict(found)


@pytest.mark.parametrize(
    "name, before, target",
    [
        ("sld-notes.pptx", {"en-US": 19}, "fr"),
        ("shp-shapes.pptx", {"en-US": 62}, "fr"),
        (
            "simplestyles.odt",
            {"da-DK": 2},
            "fr",
        ),  # English text in a document its author's settings call Danish
        ("ol.odp", {"en-US": 5}, "fr-CA"),
        ("userfields.odt", {"de-DE": 2, "de-DE (meta.xml)": 1}, "fr"),  # its text styles', and its own
        ("../real/mammoth-underline.docx", {"en-GB": 2}, "fr"),
    ],
)
def test_a_translation_marks_its_text_as_in_its_language_for_spelling_checkers_and_screen_readers(
    words, name, before, target
):
    data = (FILES / name).read_bytes()
    assert language_marks(data) == before
    assert language_marks(translate_document_bytes(words, data, Path(name).suffix)) == before  # none given
    marked = translate_document_bytes(words, data, Path(name).suffix, target_lang=target)
    expected = Counter()
    for mark, n in before.items():
        expected[target + mark[mark.index(" ") :] if " " in mark else target] += n
    assert language_marks(marked) == expected


def with_member_replaced(data: bytes, name: str, old: bytes, new: bytes) -> bytes:
    """A zipped document with `old` replaced by `new` once in its member `name`, every other member as it was."""
    out = io.BytesIO()
    with zipfile.ZipFile(io.BytesIO(data)) as zin, zipfile.ZipFile(out, "w") as zout:
        for item in zin.infolist():
            content = zin.read(item.filename)
            if item.filename == name:
                assert old in content
                content = content.replace(old, new, 1)
            zout.writestr(item, content)
    return out.getvalue()


DESCRIBED = {  # a real file, a description put in it (where, what, with what), and its descriptions before/after
    "shp-shapes.pptx": (  # python-pptx describes each picture by its file's name: kept
        "ppt/slides/slide1.xml",
        b'descr="python-powered.png"',
        b'descr="python-powered.png" title="a table"',
        ["python-powered.png", "a table"],
        ["python-powered.png", "un tableau"],
    ),
    "../real/mammoth-text-box.docx": (
        "word/document.xml",
        b'<wp:docPr id="307" name="Text Box 2"/>',
        b'<wp:docPr id="307" name="Text Box 2" descr="the text" title="a table"/>',
        ["the text", "a table"],
        ["le texte", "un tableau"],
    ),
    "simplestyles.odt": (
        "content.xml",
        b"</text:p>",
        b'<draw:frame draw:name="f"><svg:title>a table</svg:title><svg:desc>the text</svg:desc></draw:frame></text:p>',
        ["a table", "the text"],
        ["un tableau", "le texte"],
    ),
}


def descriptions(data: bytes, name: str) -> list[str]:
    """The titles and descriptions in a document's part `name`: as elements (OpenDocument), as attributes."""
    root = etree.fromstring(dict((n, c) for n, _, c in members(data))[name])
    found = [e.text for e in root.iter("{*}title", "{*}desc")]
    return found + [e.get(a) for e in root.iter() for a in ("descr", "title") if e.get(a)]


@pytest.mark.parametrize("name", sorted(DESCRIBED))
def test_the_alternative_text_and_title_of_a_picture_or_shape_are_translated_but_not_a_file_name(words, name):
    part, old, new, before, after = DESCRIBED[name]
    data = with_member_replaced((FILES / name).read_bytes(), part, old, new)
    assert descriptions(data, part) == before
    assert descriptions(translate_document_bytes(words, data, Path(name).suffix), part) == after


def test_language_marks_that_name_no_language_stay():
    assert not any(map(names_a_language, ["", None, "x-none", "zxx", "none"]))
    assert all(map(names_a_language, ["en-US", "da", "fr-CA"]))


@pytest.fixture(scope="module")
def memorising(memorising_folder):
    return load_translator(memorising_folder)


@pytest.mark.parametrize("name", ["sld-notes.pptx", "simplestyles.odt", "ol.odp", "cnt-xhtml-support.epub"])
def test_the_command_translates_each_new_format_into_an_output_file(
    memorising_folder, memorising, tmp_path, capsys, name
):
    source = tmp_path / name
    source.write_bytes((FILES / name).read_bytes())
    output = tmp_path / f"out{source.suffix}"
    lines = translate_cli.main(
        [str(memorising_folder), "--input-file", str(source), "--output-file", str(output)]
    )
    assert lines == [f"wrote {output}"]
    written = output.read_bytes()
    assert sorted(n for n, _, _ in members(written)) == sorted(n for n, _, _ in members(source.read_bytes()))
    assert written != source.read_bytes()  # its text translated (by a model that knows none of these words)
    if source.suffix == ".pptx":
        assert len(slide_paragraphs(written)) == len(slide_paragraphs(source.read_bytes()))
    else:  # python-pptx stamps its files with the time they are saved; the others come out the same each time
        expected = translate_document_bytes(memorising, source.read_bytes(), source.suffix, target_lang="fr")
        assert written == expected
    if source.suffix != ".epub":  # marked as in the language the model folder records (en -> fr)
        assert set(language_marks(written)) == {"fr"}


def test_the_command_marks_the_language_it_is_given_over_the_model_s(memorising_folder, tmp_path):
    source, output = tmp_path / "ol.odp", tmp_path / "out.odp"
    source.write_bytes((FILES / "ol.odp").read_bytes())
    argv = [str(memorising_folder), "--input-file", str(source), "--output-file", str(output)]
    translate_cli.main([*argv, "--target-lang", "fr-CA"])
    assert language_marks(output.read_bytes()) == {"fr-CA": 5}


GLOSSED = {  # a file, a word of it, and what its text looks like, for the glossary and the engine tests
    "sld-notes.pptx": ("notes", lambda data: " ".join(text_of(p) for p in slide_paragraphs(data))),
    "simplestyles.odt": ("text", lambda data: "".join(etree.fromstring(odf_xml(data).encode()).itertext())),
    "ol.odp": ("eins", lambda data: "".join(etree.fromstring(odf_xml(data).encode()).itertext())),
    "cnt-xhtml-support.epub": (
        "test",
        lambda data: dict((n, c) for n, _, c in members(data))["EPUB/content_001.xhtml"].decode(),
    ),
}


@pytest.mark.parametrize("name", sorted(GLOSSED))
def test_a_glossary_reaches_every_new_format(words, name):
    term, text = GLOSSED[name]
    data = (FILES / name).read_bytes()
    out = translate_document_bytes(words, data, Path(name).suffix, glossary=Glossary({term: "zorglub"}))
    assert "zorglub" in text(out).lower() and "zorglub" not in text(data).lower()


@pytest.mark.parametrize("name", sorted(GLOSSED))
def test_an_engine_without_alignments_is_refused_for_the_new_formats(name):
    with pytest.raises(UnsupportedFeature, match="gives no word alignments"):
        translate_document_bytes(NoAlignments(LEXICON), (FILES / name).read_bytes(), Path(name).suffix)


class NoAlignments(WordTranslator):
    """An engine that translates but gives no word alignments (an export made before its engine aligned, say)."""

    engine = "noalign"

    def align(self, sources, targets, *args, **kwargs):
        return Translator.align(self, sources, targets)

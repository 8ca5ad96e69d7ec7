"""Real PDF files from other projects' packages (`tests/fixtures/pdf/`, their sources and licences in its README):
readable English ones come back translated whole, with their pages, sizes, pictures and form fields; the others are
refused with their reason and nothing written. Translated word by word (`helpers.WordTranslator`), so that what is
tested is the format, whatever a model would say."""

from pathlib import Path

import pytest
from helpers import WordTranslator

from hf_seq2seq.formats.documents import DocumentError, translate_document

pikepdf = pytest.importorskip("pikepdf")
pdfminer_high_level = pytest.importorskip("pdfminer.high_level")

FIXTURES = Path(__file__).parent / "fixtures" / "pdf"
LEXICON = {
    "the": "le", "and": "et", "of": "de", "is": "est", "with": "avec", "heading": "titre", "text": "texte",
    "contents": "sommaire", "form": "formulaire", "page": "feuille",
}  # fmt: skip

TRANSLATED = [
    "pikepdf-form_dd0293.pdf",
    "ocrmypdf-tagged.pdf",
    "texlive-ltnews13.pdf",
    "texlive-elstest-5p.pdf",
    "pikepdf-fourpages.pdf",
]
REFUSED = {
    "pikepdf-sandwich.pdf": "invisible OCR text",
    "ocrmypdf-c03-29.pdf": "without a text layer",
    "ocrmypdf-type3_font_nomapping.pdf": "no Unicode map",
    "pypdfium2-encrypted.pdf": "needs a password",
}


def pages(path: Path) -> list[tuple]:
    """Each page's size and rotation, the pictures its resources hold and the form fields of the file."""
    with pikepdf.open(path) as pdf:
        fields = len(pdf.Root.AcroForm.Fields) if "/AcroForm" in pdf.Root else 0
        return [
            (tuple(float(x) for x in page.mediabox), int(page.obj.get("/Rotate", 0)), pictures(page), fields)
            for page in pdf.pages
        ]


def pictures(page) -> int:
    """The images a page's resources hold (its own, not those of its form XObjects)."""
    objects = page.obj.get("/Resources", {}).get("/XObject", {})
    return sum(1 for _, each in objects.items() if each.get("/Subtype") == "/Image")


@pytest.mark.parametrize("name", TRANSLATED)
def test_a_readable_english_pdf_comes_back_translated_with_its_pages(name, tmp_path):
    source, output = FIXTURES / name, tmp_path / name
    translate_document(WordTranslator(LEXICON), source, output, source_lang="en", target_lang="fr")
    assert pages(output) == pages(source)
    before = pdfminer_high_level.extract_text(str(source))
    after = pdfminer_high_level.extract_text(str(output))
    found = [word for word in LEXICON.values() if word in after.lower()]
    # its words became the lexicon's, read back from the fonts the translation embedded
    after_count = sum(after.lower().count(word) for word in found)
    assert after_count > sum(before.lower().count(word) for word in found)


def test_a_pdf_with_broken_content_streams_is_translated_or_refused_never_crashes(tmp_path):
    output = tmp_path / "out.pdf"
    try:
        translate_document(WordTranslator(LEXICON), FIXTURES / "pikepdf-content-stream-errors.pdf", output)
    except DocumentError:
        assert not output.exists()
    else:
        assert len(pages(output)) == 4


@pytest.mark.parametrize(("name", "reason"), REFUSED.items())
def test_a_pdf_that_cannot_be_read_as_text_is_refused_with_its_reason(name, reason, tmp_path):
    output = tmp_path / name
    with pytest.raises(DocumentError, match=reason):
        translate_document(WordTranslator(LEXICON), FIXTURES / name, output)
    assert list(tmp_path.iterdir()) == []  # nothing half-written

"""Files from other projects' test suites (tests/fixtures/outside, their sources and licences in
tests/fixtures/README.md), each of a kind that lost something before its fix: translated through a random model,
whose alignments are noise, each comes back whole as its format's own readers count it
(`measurements/counters.py`): no paragraph or cue loses a formatting, a link, a note, a line or a
speaker's dash, no text is left in English, no tag changes; then what each file is here for, on its own.

The measure over the whole outside set is `measurements/measure_documents.py` (docs/formats.md)."""

import email
import io
import re
import zipfile

import pytest
from counters import document_counts
from helpers import FIXTURES
from measure_documents import files_under

from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.formats.documents import translate_document_bytes
from hf_seq2seq.formats.documents.html_pages import read_html
from hf_seq2seq.formats.markup import read_pieces

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

OUTSIDE = FIXTURES / "outside"
W = "{http://schemas.openxmlformats.org/wordprocessingml/2006/main}"
FILES = sorted(p for p in OUTSIDE.iterdir() if p.suffix != ".md") + [
    FIXTURES / "subtitles" / name  # webvtt-py's: cues whose lines or dashes changed before
    for name in ("netflix_chicas_del_cable.vtt", "youtube_dl.vtt", "styles2.srt", "styles2.vtt")
]
COPIED = {"anarcat-cdpath-excerpt.html": 1}  # "bookmarks.el", a file name
LOST = (
    "untranslated", "units_losing_format", "links_lost", "links_added", "moved", "tags_differ", "units_missing",
    "cue_lines_changed", "dashes_changed", "cues_missing",
)  # fmt: skip

AS_WRITTEN = Decoding(length_guard=False)


@pytest.fixture(scope="module")
def random_model(trained):
    return load_translator(trained)


@pytest.fixture(scope="module")
def translated(random_model):
    cache = {}

    def of(name: str, extension: str | None = None) -> bytes:
        name = name.removeprefix("outside/")
        if name not in cache:
            path = OUTSIDE / name if (OUTSIDE / name).exists() else FIXTURES / name  # "outside/x" or "x"
            # the random model's junk kept as written: what is tested is the format, not the over-long guard
            cache[name] = translate_document_bytes(
                random_model, path.read_bytes(), extension or path.suffix, decoding=AS_WRITTEN
            )
        return cache[name]

    return of


@pytest.mark.parametrize("path", FILES, ids=[p.name for p in FILES])
def test_a_file_from_another_project_comes_back_whole(translated, path):
    counts = document_counts(
        path.read_bytes(), translated(str(path.relative_to(OUTSIDE.parent))), path.suffix
    )
    assert counts["units"] > 0
    copied = COPIED.get(path.name, 0)  # texts a translation copies whole (protected_spans.VERBATIM)
    assert {key: counts[key] for key in LOST if counts[key] != (copied if key == "untranslated" else 0)} == {}
    assert counts["formats_after"] == counts["formats"]
    assert counts["notes_after"] == counts["notes"]


def test_a_page_with_a_lone_carriage_return_is_read_whole():
    """The standard library's parser counts lines by "\\n" alone; `str.splitlines` also by "\\r", U+2028 and
    form feeds: positions taken from the one in lines of the other did not cover the page (a ValueError)."""
    page = (OUTSIDE / "fandom-spell-toolbar-excerpt.html").read_bytes().decode()
    assert "\r\\r" in page  # an address with a carriage return alone in it, as the page has
    assert "".join(piece.raw for piece in read_pieces(page)) == page
    for separator in ("\u2028", "\x0c", "\x85"):
        text = f"<p>a{separator}b</p>\n<p>c <b>d</b></p>"
        assert "".join(piece.raw for piece in read_pieces(text)) == text


def test_an_undeclared_windows_1252_page_is_read_as_browsers_read_it_and_written_back_so(translated):
    data = (OUTSIDE / "unstructured-fake-html-cp1252.html").read_bytes()
    assert b"charset" not in data.lower()
    with pytest.raises(UnicodeDecodeError):
        data.decode("utf-8")
    out = translated("unstructured-fake-html-cp1252.html")
    assert read_html(out)[1] == "cp1252" and "\u20ac" in out.decode("cp1252")  # the euro sign, byte 0x80
    declared = '<meta charset="utf-8"><p>The café</p>'.encode()
    assert read_html(declared)[1:] == ("utf-8", '<meta charset="utf-8"><p>The café</p>')
    assert read_html(b"\xef\xbb\xbf<p>x</p>") == (b"\xef\xbb\xbf", "utf-8", "<p>x</p>")
    # a page saved as UTF-8 with its old declaration left in (Readability's qq.com page): read as UTF-8
    stale = '<meta charset="gb2312"><p>The café</p>'.encode()
    assert read_html(stale)[1:] == ("utf-8", '<meta charset="gb2312"><p>The café</p>')
    # ASCII that declares windows-1252's subset: written back as it declares
    assert read_html(b'<meta charset="iso-8859-1"><p>The cafe</p>')[1] == "cp1252"


def test_powerpoint_keeps_the_links_to_bookmarks_its_library_drops_and_a_note_mark_cut_between_two_links(
    translated,
):
    with zipfile.ZipFile(io.BytesIO(translated("tika-testPPT_various.pptx"))) as archive:
        relationships = archive.read("ppt/slides/_rels/slide1.xml.rels").decode()
        slide = archive.read("ppt/slides/slide1.xml").decode()
    for target in ('Target="#_ftn1"', 'Target="#_ftnref1"'):  # python-pptx reads no relationship to no part
        assert target in relationships
    for link in ("rId3", "rId4", "rId6", "rId7"):  # "[" and "1]" of each note mark: two links each
        assert f'r:id="{link}"' in slide


def test_a_tracked_move_is_translated_where_it_went_and_where_it_was(translated):
    """Word shows a move's text at its old place struck through and at its new place; rejecting the change
    brings the old place back: both are the document's text."""
    from lxml import etree

    def moved(data: bytes) -> dict[str, list[str]]:
        root = etree.fromstring(zipfile.ZipFile(io.BytesIO(data)).read("word/document.xml"))
        return {
            place: ["".join(element.itertext()).strip() for element in root.iter(W + place)]
            for place in ("moveFrom", "moveTo")
        }

    before = moved((OUTSIDE / "tika-testWORD_features.docx").read_bytes())
    after = moved(translated("tika-testWORD_features.docx"))
    assert before["moveFrom"] == ["ad litora"] and len(before["moveTo"]) == 1
    for place in ("moveFrom", "moveTo"):
        assert len(after[place]) == len(before[place])
        assert all(text and text != old for text, old in zip(after[place], before[place], strict=True))


def test_html_a_word_document_imports_is_translated_in_its_web_archive_too(translated):
    with zipfile.ZipFile(io.BytesIO(translated("tika-testAltChunkMHT.docx"))) as archive:
        message = email.message_from_bytes(archive.read("word/htmlDoc.mht"))
    parts = {part.get_content_type(): part for part in message.walk()}
    assert parts["text/html"]["Content-Transfer-Encoding"] == "quoted-printable"
    page = parts["text/html"].get_payload(decode=True).decode("cp1252")  # as its declaration says
    assert "Simple paragraph" not in page and "<strong>" in page
    original = email.message_from_bytes(
        zipfile.ZipFile(OUTSIDE / "tika-testAltChunkMHT.docx").read("word/htmlDoc.mht")
    )
    picture = next(part for part in original.walk() if part.get_content_type() == "image/png")
    assert parts["image/png"].get_payload(decode=True) == picture.get_payload(decode=True)


def test_a_dialogue_dash_after_a_cue_tag_and_a_second_speaker_s_dash_are_kept(translated):
    """webvtt-py's styles2.vtt (tests/fixtures/subtitles) writes each speaker's line inside a colour tag,
    `<c.white.bg_black>-Stéphane ?`; a cue whose first speaker has no dash keeps the second's."""
    import webvtt

    out = translated("subtitles/styles2.vtt").decode()
    lines = [caption.raw_text for caption in webvtt.from_string(out).captions]
    assert lines[4].startswith("<c.white.bg_black>-") and lines[5].startswith("<c.white.bg_black>-")

    from helpers import WordTranslator

    words = WordTranslator({"the": "le", "cat": "chat", "sleeps": "dort", "hello": "bonjour"})
    data = "1\n00:00:01,000 --> 00:00:02,000\nThe cat sleeps.\n- Hello.\n"
    assert (
        translate_document_bytes(words, data.encode(), ".srt")
        .decode()
        .endswith("Le chat dort.\n- Bonjour.\n\n")
    )


def test_a_citation_s_machine_readable_title_is_kept_as_written(translated):
    """Wikipedia's citations carry their reference in a COinS span's `title` (read by reference managers):
    data, not words, though `title` is an attribute people read."""
    page = (OUTSIDE / "wikipedia-duck-citation-excerpt.html").read_text()
    coins = re.search(r'<span title="ctx_ver=[^"]*"', page)[0]
    out = translated("wikipedia-duck-citation-excerpt.html").decode()
    assert coins in out and "Duckling" not in out.replace(coins, "")


def test_the_measure_reads_every_document_in_the_folders_it_is_given(tmp_path):
    """`measurements/measure_documents.py FOLDER`: files at any depth, suffixes in any case, and nothing that is not a
    file (a folder named like a page)."""
    (tmp_path / "b" / "deep").mkdir(parents=True)
    (tmp_path / "page.html.d.html").mkdir()
    for name in ("b/deep/z.DOCX", "a.srt", "b/notes.txt", "c.vtt"):
        (tmp_path / name).write_text("x")
    named = tmp_path / "b" / "notes.txt"
    assert files_under([tmp_path, named], {".docx", ".srt", ".html"}) == [
        tmp_path / "a.srt",
        tmp_path / "b/deep/z.DOCX",
    ]


def test_every_meta_that_holds_text_is_translated_by_one_rule_and_no_other_is(translated):
    """wikimediafoundation.org's head (trafilatura's cached page): its `og:image:alt` was translated and its
    `twitter:text:title`, the same title as `og:title`, was not; pluralsight's and lemire.me's pages give their
    description as microdata (`itemprop`). Every key whose last part is a title, a description or an image's
    description is read; names, addresses, types, dates and sizes are not."""
    page = (OUTSIDE / "wikimediafoundation-turkey-head-excerpt.html").read_text()
    out = translated("wikimediafoundation-turkey-head-excerpt.html").decode()

    def contents(document: str) -> dict[str, str]:
        return dict(re.findall(r'<meta (?:property|name)="([^"]+)" content="([^"]*)"', document))

    before, after = contents(page), contents(out)
    read = {"og:title", "og:description", "og:image:alt", "twitter:text:title", "twitter:image:alt"}
    assert {key for key in before if after[key] != before[key]} == read
    assert before.keys() == after.keys() and len(before) == 17

    from helpers import WordTranslator

    from hf_seq2seq.formats.markup import translate_html

    words = WordTranslator({"the": "le", "cat": "chat"})
    keys = {
        'itemprop="description"': True, 'name="DC.title"': True, 'property="og:title twitter:title"': True,
        'name="dcterms.abstract"': True, 'itemprop="headline"': True, 'property="og:video:alt"': True,
        'itemprop="name"': False, 'name="keywords"': False, 'name="dc.subject"': False,
        'name="apple-mobile-web-app-title"': False, 'name="twitter:image"': False, 'name="author"': False,
    }  # fmt: skip
    for key, is_read in keys.items():
        meta = f'<meta {key} content="the cat">'
        assert translate_html(words, [meta]) == [meta.replace("the cat", "le chat") if is_read else meta], key


def test_a_cue_with_broken_markup_comes_back_with_its_tags_in_the_order_written(translated):
    """pysrt's capability_tester.srt (its cues 7 and 8, rebuilt: tests/fixtures/README.md): tags no format knows,
    an end tag never opened, a start tag left open, `<` and `>` that are text (`1,4<6</u>`). Their tags were
    moved apart (`<u>` before the `<invalid_tag>` written before it) and a broken cue's text ran on into the
    next cue; now each cue has its tags in the order written and keeps its own text."""
    from hf_seq2seq.formats.documents.subtitles import TAG

    def cues(data: bytes) -> list[str]:
        return [block.split("\n", 2)[2] for block in data.decode().replace("\r", "").strip().split("\n\n")]

    source = cues((OUTSIDE / "pysrt-capability-tester-broken-tags.srt").read_bytes())
    out = cues(translated("pysrt-capability-tester-broken-tags.srt"))
    assert [TAG.findall(cue) for cue in out] == [TAG.findall(cue) for cue in source]
    assert "<" not in out[2] and out[2] != source[2]  # the clean cue after the broken one: only its own text

    from helpers import WordTranslator

    words = WordTranslator({"the": "le", "cat": "chat", "sleeps": "dort"})
    shapes = {
        "The <u>cat sleeps<6</u>.": "Le <u>chat sleeps<6.</u>",
        "<i>The cat</i> <x>sleeps</x>": "<i>Le chat</i> <x>dort</x>",
        "The <b>cat</i> sleeps": "Le <b>chat</i> dort",
        "<b><i>The cat</b></i> sleeps": "<b><i>Le chat</b></i> dort",
        "The cat sleeps.</i>": "Le chat dort.</i>",
    }
    for cue, expected in shapes.items():
        data = f"1\n00:00:01,000 --> 00:00:02,000\n{cue}\n".encode()
        assert translate_document_bytes(words, data, ".srt").decode().split("\n", 2)[2] == expected + "\n\n"


def test_a_powerpoint_link_comes_back_as_one_link_where_no_word_is_aligned():
    """Tika's testPPT_various.pptx: "[1] This is a footnote.", its note mark two runs linked to one bookmark.
    Words outside every link that no aligned word gave a run took the paragraph's first word's run, the mark's:
    the link came back twice, the second over "This is a footnote." translated."""
    from helpers import Unaligned

    data = (OUTSIDE / "tika-testPPT_various.pptx").read_bytes()
    out = translate_document_bytes(
        Unaligned({"this": "ceci", "is": "est", "footnote": "note"}), data, ".pptx"
    )
    counts = document_counts(data, out, ".pptx")
    assert counts["links"] == 3 and counts["links_added"] == counts["links_lost"] == 0
    slide = zipfile.ZipFile(io.BytesIO(out)).read("ppt/slides/slide1.xml").decode()
    after_mark = slide.split('r:id="rId7"/></a:rPr><a:t>1]</a:t></a:r>', 1)[1]
    run = after_mark[: after_mark.index("</a:r>")]
    assert run.endswith("<a:t> Ceci est a note.</a:t>") and "hlinkClick" not in run  # one run, no link

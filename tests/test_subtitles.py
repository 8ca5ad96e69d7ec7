"""Subtitle files as their libraries read them (`hf_seq2seq.formats.documents.subrip`, `.vtt`, `.subtitles`):
every sample file of webvtt-py's and srt's test suites that the library reads by default is translated with
the same cues (identifiers, timings, settings, line counts), never a cue dropped; the dialogue dash of a
one-line cue is kept; a sentence that runs over two cues is translated as one and shared back over them; a
cue of 1,500 lines is wrapped in linear time; a timestamp too large to be a time is a `DocumentError`.

The sample files are in tests/fixtures/subtitles (source and licence in its README.md)."""

import time
from pathlib import Path

import pytest
from helpers import WordTranslator

from hf_seq2seq.formats.documents import DocumentError, translate_document_bytes
from hf_seq2seq.formats.documents.subtitles import wrap

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

srt = pytest.importorskip("srt")
webvtt = pytest.importorskip("webvtt")

SAMPLES = Path(__file__).parent / "fixtures" / "subtitles"
LEXICON = {
    "the": "le", "a": "un", "cat": "chat", "dog": "chien", "sees": "voit", "red": "rouge", "big": "grand",
    "hello": "bonjour", "is": "est", "here": "ici", "caption": "légende", "text": "texte", "there": "là",
    "you": "tu", "go": "vas", "why": "pourquoi", "sleeps": "dort", "and": "et", "of": "de",
}  # fmt: skip
REFUSED = {
    "invalid_timeframe.vtt": "'00:00:07.000 --> 00:00:1d.890' has the cue timings arrow --> but no timings",
    "invalid_format2.srt": "not a SubRip",
}
"""Samples that their library reads only by skipping a cue (webvtt-py) or not at all (srt): refused."""


@pytest.fixture
def words():
    return WordTranslator(LEXICON, adjectives=frozenset({"red", "big"}))


def cues(data: str, extension: str) -> list[tuple]:
    """What a file's library reads of each cue, but its text: identifier, timings, settings, line count."""
    if extension == ".srt":
        return [(c.index, c.start, c.end, c.proprietary, c.content.count("\n")) for c in srt.parse(data)]
    read = webvtt.from_string(data).captions
    return [(c.identifier, c.start, c.end, str(c.settings), len(c.lines)) for c in read]


@pytest.mark.parametrize(
    "name",
    sorted(p.name for p in SAMPLES.iterdir() if p.suffix in (".srt", ".vtt") and p.name not in REFUSED),
)
def test_every_sample_its_library_reads_is_translated_with_the_same_cues(words, name):
    data = (SAMPLES / name).read_bytes()
    extension = Path(name).suffix
    out = translate_document_bytes(words, data, extension).decode("utf-8")
    source = data.decode("utf-8").removeprefix("\ufeff")
    assert out.startswith("\ufeff") == data.startswith("\ufeff".encode())
    assert cues(out.removeprefix("\ufeff"), extension) == cues(source, extension)
    if "Caption text" in source:
        assert "Caption text" not in out and "Légende texte" in out


@pytest.mark.parametrize(
    ("name", "layout"),
    [
        ("youtube_dl.vtt", "00:05:04.080 --> 00:05:05.069 align:start position:0%"),
        ("netflix_chicas_del_cable.vtt", "\n                    \n1\n00:00:07.960 --> "),
        ("invalid_timeframe_in_cue_text.vtt", "00:00:07.000 --> 00:00:10.890\n00:00:07.000 --> 00:00:10.890"),
    ],
    ids=["no-blank-lines-between-cues", "line-of-spaces-before-the-first-cue", "text-like-a-timing-line"],
)
def test_the_three_webvtt_layouts_that_were_refused_are_read(words, name, layout):
    data = (SAMPLES / name).read_text(encoding="utf-8")
    assert layout in data  # the layout this sample stands for
    with pytest.raises(webvtt.errors.MalformedCaptionError):
        webvtt.from_string(data, strict=True)
    out = translate_document_bytes(words, data.encode(), ".vtt").decode("utf-8")
    assert cues(out, ".vtt") == cues(data, ".vtt")


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_a_sample_read_only_by_skipping_a_cue_is_refused_naming_it(words, name):
    with pytest.raises(DocumentError, match=REFUSED[name]):
        translate_document_bytes(words, (SAMPLES / name).read_bytes(), Path(name).suffix)
    assert words.calls == []


@pytest.mark.parametrize(
    "timings",
    ["99999999999:00:00,000 --> 99999999999:00:01,000", "00:00:00,000 --> 00:00:9999999999999999999999,000"],
)
def test_a_subrip_timestamp_too_large_for_a_time_is_a_document_error_naming_it(words, timings):
    data = f"1\n00:00:01,000 --> 00:00:02,000\nThe dog\n\n2\n{timings}\nThe cat\n"
    with pytest.raises(DocumentError, match="a timestamp is out of range: '" + timings[:20]):
        translate_document_bytes(words, data.encode(), ".srt")


def test_an_arrow_in_a_note_is_kept_as_webvtt_py_keeps_it_and_one_in_a_cue_text_is_refused(words):
    note = "WEBVTT\n\nNOTE\nthe dog --> the cat\n\n00:01.000 --> 00:02.000\nThe cat\n"
    out = translate_document_bytes(words, note.encode(), ".vtt").decode()
    assert webvtt.from_string(out).header_comments == ["the dog --> the cat"]
    assert [c.text for c in webvtt.from_string(out).captions] == ["Le chat"]
    text = "WEBVTT\n\n00:01.000 --> 00:02.000\nThe dog -->\nthe cat\n"  # webvtt-py would drop a line
    with pytest.raises(DocumentError, match="'The dog -->' has the cue timings arrow"):
        translate_document_bytes(words, text.encode(), ".vtt")


def test_a_webvtt_timestamp_too_large_for_a_time_is_a_document_error(words):
    data = "WEBVTT\n\n99999999999:00:00.000 --> 99999999999:00:01.000\nThe cat\n"
    with pytest.raises(DocumentError, match="'99999999999:00:00.000 --> 99999999999:00:01.000' has the cue"):
        translate_document_bytes(words, data.encode(), ".vtt")


def test_a_one_line_dialogue_cue_keeps_its_dash(words):
    data = (
        "1\n00:00:01,000 --> 00:00:02,000\n- The dog is here.\n\n"
        "2\n00:00:03,000 --> 00:00:04,000\n-Hello.\n\n"
        "3\n00:00:05,000 --> 00:00:06,000\n- The cat sleeps.\n- The dog sleeps.\n"
    )
    out = translate_document_bytes(words, data.encode(), ".srt").decode()
    assert [c.content for c in srt.parse(out)] == [
        "- Le chien est ici.", "-Bonjour.", "- Le chat dort.\n- Le chien dort."
    ]  # fmt: skip


def test_a_sentence_over_two_cues_is_translated_as_one_and_shared_back_over_them(words):
    data = (
        "1\n00:00:01,000 --> 00:00:02,000\nThe red cat sees\n\n"
        "2\n00:00:02,500 --> 00:00:04,000\n<i>a</i> big\ndog.\n\n"
        "3\n00:00:05,000 --> 00:00:06,000\nThe dog sleeps.\n"
    )
    out = translate_document_bytes(words, data.encode(), ".srt").decode()
    assert words.calls == [["The red cat sees a big dog.", "The dog sleeps."]]  # one sentence, not two pieces
    assert [c.content for c in srt.parse(out)] == [
        "Le chat rouge voit",
        "<i>un</i> chien\ngrand.",
        "Le chien dort.",
    ]
    assert cues(out, ".srt") == cues(data, ".srt")  # same cues, timings and lines


def test_a_sentence_goes_on_over_cues_in_webvtt_and_each_cue_keeps_a_word(words):
    data = "WEBVTT\n\n00:01.000 --> 00:02.000\nThe cat,\n\n00:02.000 --> 00:03.000\nthe dog\n\n00:03.000 --> 00:04.000\nand the big cat\n"
    out = translate_document_bytes(words, data.encode(), ".vtt").decode()
    assert words.calls == [["The cat, the dog and the big cat"]]
    assert [c.text for c in webvtt.from_string(out).captions] == ["Le chat,", "le chien", "et le chat grand"]


@pytest.mark.timeout(60)
def test_a_cue_of_1500_lines_is_translated_in_seconds(words):
    lines = "\n".join(["The dog", "<i>sees</i> a cat"] * 750)
    data = f"1\n00:00:01,000 --> 00:00:02,000\n{lines}\n"
    start = time.perf_counter()
    out = translate_document_bytes(words, data.encode(), ".srt").decode()
    assert time.perf_counter() - start < 10
    (cue,) = srt.parse(out)
    assert cue.content.count("\n") == 1499 and cue.content.count("<i>voit</i>") == 750


def test_a_cue_is_wrapped_evenly_in_linear_time():
    items = "le grand chien est assis sur le tapis rouge".split()
    lines = wrap(items, [len(w) for w in items], 3)
    assert [" ".join(line) for line in lines] == ["le grand chien", "est assis sur", "le tapis rouge"]
    many = ["mot"] * 200_000
    start = time.perf_counter()
    wrapped = wrap(many, [3] * len(many), 100_000)
    assert time.perf_counter() - start < 2
    assert [len(line) for line in wrapped] == [2] * 100_000

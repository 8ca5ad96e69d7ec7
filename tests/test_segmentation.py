"""Sentence splitting for long inputs: nothing lost, abbreviations kept, long sentences cut to fit."""

import pytest

from hf_seq2seq.data.segmentation import split_sentences, translate_by_sentence

pytestmark = pytest.mark.floors  # sentence splitting of documents and requests at the floors too


@pytest.mark.parametrize(
    ("language", "text", "sentences"),
    [
        ("en", "Mr. Smith met Dr. Brown at 3.5 p.m. yesterday.", 1),
        ("en", "It costs $3.50. I live in the U.S. It is big.", 3),
        ("en", "Don't thank me. Thank Tom.", 2),
        ("fr", "M. Dupont est arrivé. Il a payé 3,5 euros.", 2),
        ("fr", "« Viens ! » dit-il.", 1),
        ("en", "Go.", 1),
        ("en", "the girl buys a hat . our dog sleeps .", 2),  # tokenized text: a lone `.` ends a sentence
        ("en", "Wait ... what ?", 1),
        ("fr", "Tu viens ? demanda-t-il .", 1),
    ],
)
def test_sentences_are_split_and_nothing_is_lost(language, text, sentences):
    parts = split_sentences(text, language)
    assert len(parts.sentences) == sentences
    assert parts.join(parts.sentences) == text


def test_layout_is_kept_around_translations():
    text = "  One. Two!\n\nThree?\n"
    parts = split_sentences(text, "en")
    assert parts.sentences == ["One.", "Two!", "Three?"]
    assert parts.join(["1", "2", "3"]) == "  1 2\n\n3\n"
    assert split_sentences("   ", "en").sentences == []


def test_a_long_sentence_is_cut_at_clauses_then_words_to_fit():
    text = "one two three, four five six, seven eight nine ten eleven twelve"
    pieces = split_sentences(text, "en", max_length=4).sentences
    assert all(len(piece.split()) <= 4 for piece in pieces)
    assert " ".join(pieces).replace(" ,", ",") == text and pieces[0] == "one two three,"


def test_translate_by_sentence_makes_one_call_for_all_texts():
    calls = []

    def upper(batch):
        calls.append(list(batch))
        return [sentence.upper() for sentence in batch]

    assert translate_by_sentence(["One. Two.", "", "Three."], upper) == ["ONE. TWO.", "", "THREE."]
    assert calls == [["One.", "Two.", "Three."]]


def test_an_unknown_language_is_refused_with_the_known_ones():
    with pytest.raises(ValueError, match="no sentence splitting rules for language 'xx'"):
        split_sentences("Hi.", "xx")

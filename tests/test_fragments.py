"""Fragment training data (`hf_seq2seq.data.fragments`): the symmetrised alignment and the consistent phrase
pairs of hand-made alignments (known answers), phrase pairs mined with eflomal and cached, casing and punctuation
variants made alike on both sides, the examples of `--phrase_share` / `--variant_share`, and a tiny training
run with both, whose phrase pairs come from its train split alone."""

import json

import pytest
from datasets import Dataset
from helpers import NOUNS, synthetic_pairs, tiny_args

from hf_seq2seq.cli import train as train_cli
from hf_seq2seq.data import fragments
from hf_seq2seq.data.errors import DataError
from hf_seq2seq.data.fragments import (
    consistent_phrases,
    fragment_examples,
    grow_diag_final_and,
    mine_phrase_pairs,
    variant,
    word_spans,
)
from hf_seq2seq.data.splits import assign_split


def test_consistent_phrases_of_a_hand_made_alignment():
    # the black cat sleeps / le chat noir dort: "black cat" crosses to "chat noir"
    links = {(0, 0), (1, 2), (2, 1), (3, 3)}
    assert set(consistent_phrases(4, 4, links)) == {
        (0, 1, 0, 1),  # the / le
        (1, 2, 2, 3),  # black / noir
        (2, 3, 1, 2),  # cat / chat
        (3, 4, 3, 4),  # sleeps / dort
        (1, 3, 1, 3),  # black cat / chat noir
        (0, 3, 0, 3),  # the black cat / le chat noir
        (1, 4, 1, 4),  # black cat sleeps / chat noir dort
    }  # not "the black" (its targets span "chat", aligned outside), nor 4 source words
    # an unaligned target word at the edge joins the pair as a pair of its own
    assert set(consistent_phrases(1, 2, {(0, 1)})) == {(0, 1, 1, 2), (0, 1, 0, 2)}
    assert consistent_phrases(2, 2, {(0, 0), (1, 1)}, max_source_words=1) == [(0, 1, 0, 1), (1, 2, 1, 2)]


def test_grow_diag_final_and_adds_neighbours_of_the_intersection_then_unaligned_pairs():
    forward, reverse = {(0, 0), (1, 1), (3, 3)}, {(0, 0), (1, 2), (3, 0)}
    # intersection (0, 0); its diagonal (1, 1) (source 1 unaligned), then (1, 2) next to it (target 2 unaligned);
    # (3, 0) next to none; final-and: (3, 3), both words unaligned, and then not (3, 0), source 3 aligned
    assert grow_diag_final_and(forward, reverse, 4, 4) == {(0, 0), (1, 1), (1, 2), (3, 3)}


def test_word_spans_keep_apostrophes_inside_words_and_split_marks():
    text = "L'homme n'est pas là, aujourd'hui !"
    assert [text[a:b] for a, b in word_spans(text)] == [
        "L'homme",
        "n'est",
        "pas",
        "là",
        ",",
        "aujourd'hui",
        "!",
    ]


@pytest.fixture(scope="module")
def mined(tmp_path_factory):
    """The synthetic corpus's phrase pairs (eflomal), mined into a cache folder, and the folder."""
    pairs = synthetic_pairs()
    cache = tmp_path_factory.mktemp("phrase-pairs")
    return mine_phrase_pairs([s for s, _ in pairs], [t for _, t in pairs], 3, cache_dir=cache), cache


def test_mined_phrase_pairs_translate_the_words_and_phrases(mined):
    pairs, _ = mined
    translations = {pair.source: pair.target for pair in pairs}
    for english, french in NOUNS:  # each seen 480 times, after an adjective the French puts after it
        assert translations[english] == french
    assert translations["the king"] == "le roi"
    assert translations["red cat"] == "chat rouge"
    assert all(pair.count >= 3 and pair.count <= pair.source_count for pair in pairs)
    assert all(source[-1].isalnum() and target[-1].isalnum() for source, target in translations.items())


def test_mined_phrase_pairs_are_cached_by_their_inputs(mined, monkeypatch):
    pairs, cache = mined
    [cached] = cache.glob("*.json")
    assert [pair["source"] for pair in json.loads(cached.read_text())] == [pair.source for pair in pairs]

    def no_aligner(*args):
        raise AssertionError("aligned again")

    monkeypatch.setattr(fragments, "align", no_aligner)
    sources, targets = zip(*synthetic_pairs(), strict=True)
    assert mine_phrase_pairs(sources, targets, 3, cache_dir=cache) == pairs
    with pytest.raises(AssertionError, match="aligned again"):  # other texts, another key
        mine_phrase_pairs(sources[:-1], targets[:-1], 3, cache_dir=cache)
    with pytest.raises(AssertionError, match="aligned again"):  # other settings, another key
        mine_phrase_pairs(sources, targets, 4, cache_dir=cache)


def test_variants_are_made_alike_on_both_sides():
    keep = frozenset({"Tom", "I"})
    assert variant("Save it.", "Sauvegarde-le.", "title") == ("Save It.", "Sauvegarde-le.")
    assert variant("the cat", "le chat", "title") == ("The Cat", "Le Chat")
    assert variant("Where is it?", "Où est-ce ?", "upper") == ("WHERE IS IT?", "OÙ EST-CE ?")
    assert variant("Go!", "Va !", "no_final_mark") == ("Go", "Va")
    assert variant("Done.", "Fait !", "no_final_mark") == ("Done", "Fait")
    assert variant("Warning", "Attention.", "no_final_mark") is None  # one side alone ends in a mark
    assert variant("Next page.", "Page suivante.", "lower_first", keep) == ("next page.", "page suivante.")
    assert variant("Tom left.", "Tom est parti.", "lower_first", keep) is None  # a name stays
    assert variant("I'm home.", "Je suis chez moi.", "lower_first", keep | {"I'm"}) == (
        "I'm home.",
        "je suis chez moi.",
    )
    assert variant("OK", "OK", "upper") is None  # no change, no variant
    with pytest.raises(ValueError, match="unknown variant"):
        variant("a", "b", "reverse")


def test_fragment_examples_are_the_shares_asked_for(mined, monkeypatch):
    pairs, _ = mined
    short = [("Warning!", "Attention !"), ("Tom left.", "Tom est parti."), ("I saw Tom.", "J'ai vu Tom.")]
    train = Dataset.from_dict(
        {"src": [s for s, _ in synthetic_pairs() + short], "tgt": [t for _, t in synthetic_pairs() + short]}
    )
    monkeypatch.setattr(fragments, "mine_phrase_pairs", lambda *args: pairs)
    examples = fragment_examples(train, 0.1, 0.05, seed=0)
    n_phrases, n_variants = round(0.1 * len(train)), round(0.05 * len(train))
    assert len(examples) == n_phrases + n_variants
    mined_pairs = {(pair.source, pair.target) for pair in pairs}
    assert all(
        pair in mined_pairs
        for pair in zip(examples["src"][:n_phrases], examples["tgt"][:n_phrases], strict=True)
    )
    assert (
        not set(zip(examples["src"][n_phrases:], examples["tgt"][n_phrases:], strict=True)) & mined_pairs
    )  # each changed
    assert fragment_examples(train, 0.1, 0.05, seed=0)["src"][:] == examples["src"][:]
    assert fragment_examples(train, 0.1, 0.05, seed=1)["src"][:] != examples["src"][:]
    # without phrase pairs, variants of the short train pairs alone; a name seen inside a sentence keeps its capital
    variants = set(zip(*fragment_examples(train, 0.0, 1.0, seed=0)[:].values(), strict=True))
    assert {("Warning", "Attention"), ("WARNING!", "ATTENTION !"), ("warning!", "attention !")} < variants
    assert {
        ("Tom left", "Tom est parti"),
        ("TOM LEFT.", "TOM EST PARTI."),
        ("i saw Tom.", "j'ai vu Tom."),
    } < variants
    assert not {("tom left.", "tom est parti."), ("I saw tom.", "J'ai vu tom.")} & variants
    assert all(len(word_spans(source)) <= 4 for source, _ in variants)
    assert len(fragment_examples(train, 0.0, 0.0, seed=0)) == 0
    with pytest.raises(DataError, match=">= 0"):
        fragment_examples(train, -0.1, 0.0, seed=0)


def test_training_with_fragments_mines_the_train_split_alone(tmp_path, monkeypatch):
    # every pair carries its own word, wK in English and mK in French: a phrase pair shows which rows it came from
    rows = [(f"{s[:-2]} w{k} .", f"{t[:-2]} m{k} .") for k, (s, t) in enumerate(synthetic_pairs()[::8])]
    data = tmp_path / "fra.txt"
    data.write_text("".join(f"{s}\t{t}\n" for s, t in rows), encoding="utf-8")
    monkeypatch.setenv("HF_SEQ2SEQ_CACHE", str(tmp_path / "cache"))
    output_dir = tmp_path / "run"
    flags = [
        "--max_steps",
        "10",
        "--phrase_share",
        "0.5",
        "--phrase_min_count",
        "1",
        "--variant_share",
        "0.2",
    ]
    results = train_cli.main(tiny_args(data, output_dir, *flags))
    facts = json.loads((output_dir / "test_results.json").read_text())["training"]
    assert facts["train_pairs"] == 300
    assert (facts["phrase_examples"], facts["variant_examples"]) == (150, 60)
    assert results["training"]["phrase_examples"] == 150
    train_rows = {row[0] for row in rows if assign_split(row[0]) == "train"}
    held_out = {row[0].split()[-2] for row in rows if assign_split(row[0]) != "train"}
    first_300 = {source.split()[-2] for source in [row[0] for row in rows if row[0] in train_rows][:300]}
    [cached] = (tmp_path / "cache" / "phrase-pairs").glob("*.json")
    words = {word for pair in json.loads(cached.read_text()) for word in pair["source"].split()}
    assert held_out and not words & held_out  # nothing of the validation or test split
    assert words & first_300 and words & {f"w{k}" for k in range(len(rows))} <= first_300


def test_fragment_shares_are_refused_below_zero_and_with_streaming(synthetic_fra_txt, tmp_path, capsys):
    for flags, message in (
        (["--phrase_share", "-0.1"], "--phrase_share is a number of examples per train pair: >= 0"),
        (["--variant_share", "0.1", "--streaming", "--max_steps", "5"], "--variant_share adds examples"),
    ):
        with pytest.raises(SystemExit):
            train_cli.parse_args(tiny_args(synthetic_fra_txt, tmp_path, *flags))
        assert message in capsys.readouterr().err

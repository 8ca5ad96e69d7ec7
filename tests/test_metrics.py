"""BLEU/chrF scoring: agreement with sacrebleu, multi-reference handling, and the Trainer's compute_metrics."""

import json

import numpy as np
import pytest
import sacrebleu
from helpers import VOCAB, WordTranslator, tiny_tokenizer
from transformers import EvalPrediction, PreTrainedTokenizerFast

from hf_seq2seq.evaluation.evaluate import evaluate_translations
from hf_seq2seq.evaluation.metrics import (
    build_compute_metrics,
    empty_share,
    is_looping,
    loop_share,
    overlong_share,
    references_by_source,
    score_by_length,
    score_translations,
)
from hf_seq2seq.evaluation.report import EvalReport

pytestmark = pytest.mark.floors  # sacrebleu at its floor

PAD = VOCAB["<pad>"]  # also the start token of every generated sequence, as in the project's models

HYPS = ["the cat sat on the mat", "a dog is here", "the big red house", ""]
REFS = [
    ["the cat sat on a mat", "a cat sat on the mat", "the cat is on the mat"],
    ["a dog is here"],
    ["the big house is red", "a big red house"],
    ["nothing"],
]


def test_single_reference_scores_equal_sacrebleu():
    refs = [r[0] for r in REFS]
    scores = score_translations(HYPS, refs)
    assert scores["bleu"] == sacrebleu.corpus_bleu(HYPS, [refs]).score
    assert scores["chrf"] == sacrebleu.corpus_chrf(HYPS, [refs]).score
    assert scores["num_sentences"] == 4 and scores["num_references"] == 1
    # a list of one-element lists is the same thing
    assert score_translations(HYPS, [[r] for r in refs]) == scores


def test_a_perfect_translation_scores_100_and_makes_a_valid_report():
    """sacrebleu alone gives 100.00000000000004, which a report (scores 0-100) would refuse."""
    scores = score_translations(REFS[1] * 3, [REFS[1]] * 3)
    assert scores["bleu"] == scores["chrf"] == 100.0
    assert EvalReport(**scores).bleu == 100.0


def test_multi_reference_scores_equal_sacrebleu_with_none_padded_streams():
    streams = [
        [REFS[0][0], REFS[1][0], REFS[2][0], REFS[3][0]],
        [REFS[0][1], None, REFS[2][1], None],
        [REFS[0][2], None, None, None],
    ]
    scores = score_translations(HYPS, REFS)
    bleu, chrf = sacrebleu.BLEU(), sacrebleu.CHRF()
    assert scores["bleu"] == bleu.corpus_score(HYPS, streams).score
    assert scores["chrf"] == chrf.corpus_score(HYPS, streams).score
    assert scores["bleu_signature"] == str(bleu.get_signature())
    assert scores["chrf_signature"] == str(chrf.get_signature())
    assert scores["bleu_signature"].startswith("nrefs:var|") and "version:2." in scores["bleu_signature"]
    assert scores["num_sentences"] == 4 and scores["num_references"] == 3
    assert json.loads(json.dumps(scores)) == scores


def test_more_references_never_lower_bleu_and_a_matching_one_raises_it():
    hyps = ["the cat is here", "a big dog sat on the red mat"]
    single = [["a cat is here"], ["the big dog sat on a mat"]]
    # an extra reference that does not match the hypothesis better: BLEU does not drop
    unrelated = [refs + ["la chat est ici"] for refs in single]
    assert score_translations(hyps, unrelated)["bleu"] >= score_translations(hyps, single)["bleu"]
    # an extra reference equal to the hypothesis: strictly higher
    matching = [single[0] + [hyps[0]], single[1]]
    assert score_translations(hyps, matching)["bleu"] > score_translations(hyps, single)["bleu"]
    assert score_translations(hyps, matching)["chrf"] > score_translations(hyps, single)["chrf"]


def test_empty_hypotheses_score_zero_without_error():
    scores = score_translations(["", ""], ["the cat", "a dog"])
    assert scores["bleu"] == 0.0 and scores["chrf"] == 0.0


@pytest.mark.parametrize(
    ("hyps", "refs", "error", "match"),
    [
        (["a", "b"], ["a"], ValueError, "2 hypotheses but 1 reference"),
        (["a"], [[]], ValueError, "no reference"),
        ([], [], ValueError, "no hypotheses"),
        ("a cat", ["a cat"], TypeError, "sequence of strings"),
    ],
)
def test_bad_inputs_raise(hyps, refs, error, match):
    with pytest.raises(error, match=match):
        score_translations(hyps, refs)


def encode(tokenizer: PreTrainedTokenizerFast, texts: list[str]) -> list[list[int]]:
    return [tokenizer(text)["input_ids"] for text in texts]


def test_compute_metrics_decodes_ids_with_minus_100_and_special_tokens():
    tokenizer = tiny_tokenizer()
    hyps, refs = ["the cat sat on the mat", "a dog", ""], ["the cat sat on a mat", "a dog is here", "la chat"]
    # generated ids: the start token (pad), tokens, </s>, then pad and -100 (the Trainer pads across batches with -100)
    predictions = np.full((3, 10), -100)
    for i, ids in enumerate(encode(tokenizer, hyps)):
        predictions[i, : len(ids) + 2] = [PAD, *ids, PAD]
    labels = np.full((3, 8), -100)
    for i, ids in enumerate(encode(tokenizer, refs)):
        labels[i, : len(ids)] = ids
    metrics = build_compute_metrics(tokenizer)(EvalPrediction(predictions=predictions, label_ids=labels))

    expected = score_translations(hyps, refs)
    assert metrics == {
        "bleu": expected["bleu"],
        "chrf": expected["chrf"],
        "gen_len": (6 + 2 + 0) / 3,
    }
    assert metrics["bleu"] == sacrebleu.corpus_bleu(hyps, [refs]).score
    assert all(type(value) is float for value in metrics.values())


def test_compute_metrics_finds_all_references_by_source_ids_whatever_the_order():
    tokenizer = tiny_tokenizer()
    sources = ["the cat", "a dog"]
    hyps = ["the cat is here", "a big dog"]
    references = [["a cat is here", "the cat is here"], ["the big dog"]]
    keyed = references_by_source(encode(tokenizer, sources), references)

    def eval_pred(order: list[int]) -> EvalPrediction:
        """The Trainer's view: rows in `order`, inputs padded with pad then -100, labels = first reference."""
        predictions = np.full((2, 7), PAD)
        inputs = np.full((2, 6), -100)
        labels = np.full((2, 5), -100)
        for row, i in enumerate(order):
            ids = encode(tokenizer, [hyps[i]])[0]
            predictions[row, : len(ids) + 1] = [PAD, *ids]
            src = encode(tokenizer, [sources[i]])[0]
            inputs[row, : len(src) + 1] = [*src, PAD]
            ref = encode(tokenizer, [references[i][0]])[0]
            labels[row, : len(ref)] = ref
        return EvalPrediction(predictions=predictions, label_ids=labels, inputs=inputs)

    expected = score_translations(hyps, references)["bleu"]
    assert build_compute_metrics(tokenizer, keyed)(eval_pred([0, 1]))["bleu"] == expected
    assert build_compute_metrics(tokenizer, keyed)(eval_pred([1, 0]))["bleu"] == expected  # reordered rows
    assert expected > build_compute_metrics(tokenizer)(eval_pred([0, 1]))["bleu"]  # labels: first refs only
    with pytest.raises(ValueError, match="have no references"):
        build_compute_metrics(tokenizer, {(1, 2): ["x"]})(eval_pred([0, 1]))
    with pytest.raises(ValueError, match="include_for_metrics"):
        build_compute_metrics(tokenizer, keyed)(
            EvalPrediction(predictions=np.zeros((2, 3), dtype=int), label_ids=None)
        )


@pytest.mark.parametrize(
    ("text", "looping"),
    [
        ("de banque de banque de banque de banque", True),
        ("« « « « «", True),
        ("Tout ce que je veux est un nouveau tatatatatata", True),
        ("Je ne veux veux veux veux pas.", True),
        ("Non, non, non !", False),  # three times is speech, not a loop
        ("Il a gagné 1000000 euros...", False),
        ("Je vais bien.", False),
    ],
)
def test_looping_outputs_are_recognised(text, looping):
    assert is_looping(text) is looping


def test_scores_by_source_length_bucket():
    hyps = ["the cat sat on the mat", "a dog is here", "x y z", "the big red house"]
    refs = [[h] for h in hyps[:2]] + [["a b c"], ["the big red house"]]
    rows = score_by_length([3, 12, 25, 8], hyps, refs)
    assert [row["bucket"] for row in rows] == ["1-10", "11-20", "21-40", "41+"]
    assert [row["num_sentences"] for row in rows] == [2, 1, 1, 0]
    assert rows[0]["bleu"] == pytest.approx(100) and rows[2]["bleu"] == 0 and "bleu" not in rows[3]
    assert loop_share(["a a a a a", "b", "c", "d"]) == 0.25


def test_empty_and_overlong_outputs_are_counted_among_the_non_empty_sources():
    """`evaluate`'s shares, on a fake engine whose answers are known: "cat" deleted by the model (empty: the
    source comes back in its place, so not counted), "warning" answered with a seven-word sentence (more than 3 x 1
    word: replaced by the source, this engine having no n-best lists, and counted as replaced, not as over-long),
    "red" with exactly three words (not more than three times), "the dog" kept in two words, "beware of the dog"
    with 13 words (more than 3 x 4, and not short: kept and counted); the blank source counts in neither share nor
    in their denominator (5)."""
    lexicon = {
        "cat": "",
        "warning": "il y a un grand danger ici",
        "beware": "il y a un grand danger ici, faites attention à vous",
        "red": "rouge vif clair",
        "dog": "chien",
    }
    sources = ["cat", "Warning", "red", "the dog", "Beware of the dog", " "]
    scores, hypotheses = evaluate_translations(
        WordTranslator(lexicon),
        sources,
        [["chat"], ["Attention"], ["rouge"], ["le chien"], ["Attention au chien"], [""]],
        progress=False,
    )
    beware = "Il y a un grand danger ici, faites attention à vous of the chien"
    assert hypotheses == ["cat", "Warning", "rouge vif clair", "the chien", beware, ""]
    assert scores["empty_share"] == 0.0 and scores["overlong_share"] == 0.2
    assert scores["replaced_overlong"] == {"hypothesis": 0, "source": 1}
    # 3 of the 5 non-empty sources
    assert empty_share(sources, ["", "Attention", "", "le chien", "", ""]) == 0.6
    report = EvalReport(**scores)  # the report keeps them, as evaluate's JSON does
    assert (report.empty_share, report.overlong_share) == (0.0, 0.2)
    assert report.replaced_overlong == {"hypothesis": 0, "source": 1}
    assert overlong_share(["a b"], ["un deux trois quatre cinq six sept"]) == 1.0  # 7 > 3 x 2
    assert overlong_share(["a b"], ["un deux trois quatre cinq six"]) == 0.0  # 6 = 3 x 2: not more
    assert overlong_share(["a"], ["un deux"], ratio=1.5) == 1.0
    assert empty_share([""], [""]) == overlong_share([], []) == 0.0  # nothing to count
    with pytest.raises(ValueError, match="2 sources but 1 hypotheses"):
        empty_share(["a", "b"], [""])

"""Confidence and alternatives from the engines: `Translator.score` (the model's own log-probabilities of a
translation, teacher-forced), `Translator.translate_hypotheses` (the n best of beam search), a text's score
from its sentences in `translate_aligned(..., scores=True)`, the CTranslate2 engine against the torch one, and
measurements/measure_confidence.py, on the model that memorised `helpers.MEMORISED_PAIRS`."""

import json
import math
import runpy
from pathlib import Path

import pytest
import torch
from helpers import MEMORISED_PAIRS

from hf_seq2seq.engines.alignment import pharaoh
from hf_seq2seq.engines.base import Translator, UnsupportedFeature
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.engines.scoring import NO_SCORE, Score, joined
from hf_seq2seq.formats.aligned import translate_aligned

pytestmark = pytest.mark.floors  # the engines' scores: CTranslate2's and ONNX Runtime's APIs at their floors

ROOT = Path(__file__).resolve().parents[1]
SOURCES = [source for source, _ in MEMORISED_PAIRS]
TARGETS = [target for _, target in MEMORISED_PAIRS]


@pytest.fixture(scope="module")
def translator(memorising_folder):
    return load_translator(memorising_folder)


def teacher_forced_log_prob(translator, source: str, target: str) -> float:
    """The summed log-probability of `target` by the model's own loss path (labels shifted by the model)."""
    tokenizer, model = translator.tokenizer, translator.model
    batch = tokenizer([source], text_target=[target], return_tensors="pt")
    with torch.no_grad():
        logits = model(input_ids=batch["input_ids"], labels=batch["labels"]).logits
    return -torch.nn.functional.cross_entropy(logits[0], batch["labels"][0], reduction="sum").item()


def test_a_score_is_the_summed_log_probability_of_the_target_and_its_end_token(translator):
    scores = translator.score(SOURCES, TARGETS)
    for (source, target), score in zip(MEMORISED_PAIRS, scores, strict=True):
        tokens = len(translator.tokenizer(text_target=target)["input_ids"])  # the end token included
        assert score.tokens == tokens
        assert score.log_prob == pytest.approx(teacher_forced_log_prob(translator, source, target), abs=1e-4)
        assert 0.9 < score.confidence <= 1.0  # memorised
    # batched with padding, one at a time, and in another order: the same scores
    alone = [translator.score([s], [t])[0] for s, t in MEMORISED_PAIRS]
    assert [s.log_prob for s in scores] == pytest.approx([s.log_prob for s in alone], abs=1e-4)
    wrong = translator.score(SOURCES, TARGETS[1:] + TARGETS[:1])  # each source with another's translation
    assert all(w.confidence < s.confidence / 2 for w, s in zip(wrong, scores, strict=True))


def test_blank_pairs_score_nothing_and_mismatched_lists_are_refused(translator):
    assert translator.score(["", "how are you ?"], ["bonjour", " "]) == [NO_SCORE, NO_SCORE]
    assert NO_SCORE.confidence is None and translator.score([], []) == []
    with pytest.raises(ValueError, match="one target per source"):
        translator.score(["a"], [])


def test_a_texts_score_is_its_sentences_together(translator):
    text = f"{SOURCES[0]}\n{SOURCES[3]}"  # two sentences (lowercase ones are cut at line breaks only)
    (result,) = translate_aligned(translator, [text], alignments=False, scores=True)
    assert result.target == f"{TARGETS[0]}\n{TARGETS[3]}"
    parts = translator.score([SOURCES[0], SOURCES[3]], [TARGETS[0], TARGETS[3]])
    assert result.score.tokens == parts[0].tokens + parts[1].tokens
    assert result.score.log_prob == pytest.approx(parts[0].log_prob + parts[1].log_prob, abs=1e-4)
    weighted = math.exp(sum(p.log_prob for p in parts) / sum(p.tokens for p in parts))
    assert result.score.confidence == pytest.approx(weighted)
    blank, plain = translate_aligned(translator, ["  ", SOURCES[1]], alignments=False, scores=True)
    assert blank.score == NO_SCORE and blank.score.confidence is None
    assert translate_aligned(translator, [SOURCES[1]], alignments=False)[0].score is None
    assert joined([Score(-1.0, 2), Score(-3.0, 2)]) == Score(-4.0, 4)


def test_hypotheses_are_beam_searchs_best_first(translator):
    hypotheses = translator.translate_hypotheses(SOURCES + [""], 3)
    assert [h[0] for h in hypotheses[:-1]] == translator.translate_sentences(
        SOURCES, decoding=Decoding(num_beams=3)
    )
    assert [h[0] for h in hypotheses[:-1]] == TARGETS
    assert all(len(h) == 3 for h in hypotheses[:-1]) and hypotheses[-1] == [""]
    # more beams than hypotheses when the decoding asks for them
    wide = translator.translate_hypotheses(SOURCES[:2], 2, decoding=Decoding(num_beams=4))
    assert [h[0] for h in wide] == TARGETS[:2] and all(len(h) == 2 for h in wide)


def test_an_engine_without_scores_says_so():
    class Plain(Translator):
        engine = "plain"

        def translate_sentences(self, sentences, *args, **kwargs):
            return list(sentences)

    with pytest.raises(UnsupportedFeature, match="the plain engine gives no scores"):
        Plain().score([], [])
    with pytest.raises(UnsupportedFeature, match="no alternative translations"):
        Plain().translate_hypotheses([], 2)


def test_ctranslate2_scores_and_hypotheses_match_the_torch_engine(translator, memorising_folder, tmp_path):
    pytest.importorskip("ctranslate2")
    from hf_seq2seq.export.ctranslate2 import export_ctranslate2

    export_ctranslate2(memorising_folder, tmp_path / "ct2", quantization="float32")
    ct2 = load_translator(tmp_path / "ct2", "ctranslate2")
    expected = translator.score(SOURCES, TARGETS)
    got = ct2.score(SOURCES + [""], TARGETS + ["x"])
    assert got[-1] == NO_SCORE
    assert [s.tokens for s in got[:-1]] == [s.tokens for s in expected]
    assert [s.log_prob for s in got[:-1]] == pytest.approx([s.log_prob for s in expected], abs=1e-3)
    hypotheses = ct2.translate_hypotheses(SOURCES, 3)
    assert [h[0] for h in hypotheses] == TARGETS and all(len(h) == 3 for h in hypotheses)
    assert ct2.translate_sentences(SOURCES) == TARGETS  # the plain path is unchanged


def test_the_measuring_script_reports_correlation_and_the_worst_tenth(
    memorising_folder, synthetic_fra_txt, tmp_path
):
    script = runpy.run_path(str(ROOT / "measurements" / "measure_confidence.py"))
    assert script["spearman"]([1, 2, 3, 4], [10, 20, 30, 40]) == pytest.approx(1.0)
    assert script["spearman"]([1, 2, 3, 4], [4, 3, 2, 1]) == pytest.approx(-1.0)
    assert script["ranks"]([5, 1, 5, 3]) == [3.5, 1.0, 3.5, 2.0]
    out = tmp_path / "confidence.json"
    figures = script["main"](
        [
            str(memorising_folder),
            "--data-path",
            str(synthetic_fra_txt),
            "--max-sentences",
            "30",
            "--json",
            str(out),
        ]
    )
    saved = json.loads(out.read_text())
    assert saved["sentences"] == figures["sentences"] == 30 and saved["worst by chrF"] == 3
    assert -1 <= saved["spearman"] <= 1 and 0 <= saved["of them lowest by confidence"] <= 3
    assert sum(group["sentences"] for group in saved["fifths by confidence"]) == 30
    assert saved["command"].startswith("python measurements/measure_confidence.py")


def test_translate_scores_prints_each_confidence_after_a_tab(translator, memorising_folder, capsys):
    from hf_seq2seq.cli import translate as translate_cli

    lines = translate_cli.main([str(memorising_folder), SOURCES[0], "", SOURCES[1], "--scores"])
    expected = translate_aligned(translator, [SOURCES[0], SOURCES[1]], alignments=False, scores=True)
    assert lines == [
        f"{TARGETS[0]}\t{expected[0].score.confidence:.4f}",
        "\t",
        f"{TARGETS[1]}\t{expected[1].score.confidence:.4f}",
    ]
    assert capsys.readouterr().out.splitlines()[0] == lines[0]
    line = translate_cli.main([str(memorising_folder), SOURCES[0], "--scores", "--alignments"])[0]
    (aligned,) = translate_aligned(translator, [SOURCES[0]])
    assert line == f"{TARGETS[0]}\t{pharaoh(aligned.alignment)}\t{expected[0].score.confidence:.4f}"
    with pytest.raises(SystemExit):
        translate_cli.main([str(memorising_folder), "<p>a</p>", "--format", "html", "--scores"])
    assert "--scores is for plain text" in capsys.readouterr().err

"""The main job end to end on a few hundred synthetic pairs: train, save, reload, evaluate, resume, bad input,
and the loss curve of a short seeded run."""

import importlib.metadata
import json
import logging
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest
import torch
import transformers
from helpers import ROOT, tiny_args, tiny_config
from safetensors.torch import load_file
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    Seq2SeqTrainingArguments,
    TrainerControl,
    pipeline,
)

from hf_seq2seq.cli import evaluate as evaluate_cli
from hf_seq2seq.cli import translate as translate_cli
from hf_seq2seq.cli.train import main as train_main
from hf_seq2seq.cli.train import parse_args
from hf_seq2seq.data.fra_eng import load_fra_eng
from hf_seq2seq.engines.base import translate
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.torch_engine import TorchTranslator, load_model_and_tokenizer
from hf_seq2seq.evaluation.evaluate import evaluate_translations
from hf_seq2seq.evaluation.report import EVAL_REPORT, TRAINING_REPORT, EvalReport
from hf_seq2seq.models.folder import ModelFolderError, check_model_folder
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import TransformerMTForConditionalGeneration
from hf_seq2seq.training.final_evaluation import TRANSLATIONS_FILE, decoding_problem
from hf_seq2seq.training.time_budget import BudgetSchedule, TrainingBudget
from hf_seq2seq.training.trainer import BudgetSeq2SeqTrainer, TranslationTrainer

pytestmark = pytest.mark.floors  # the Trainer's paths at transformers' and accelerate's floors


@pytest.mark.releases  # the main job under the newest torch too
@pytest.mark.newest_torch
def test_pipeline_trains_saves_reloads_and_evaluates(tiny_run, synthetic_fra_txt):
    output_dir, results = tiny_run
    check_model_folder(output_dir)  # model, generation config, tokenizer and pipeline files are all there
    saved = EvalReport.load(output_dir / TRAINING_REPORT)
    assert saved.bleu == results["bleu"] and "nrefs:var" in saved.bleu_signature
    assert saved.training["global_step"] == 300 and saved.training["averaged_checkpoints"] == 2
    # the tiny preset decodes greedily: greedy search's scores are the report's own, and no problem is noted
    assert (saved.training["greedy_bleu"], saved.training["greedy_chrf"]) == (saved.bleu, saved.chrf)
    assert "decoding_problem" not in saved.training
    assert len((output_dir / TRANSLATIONS_FILE).read_text().splitlines()) == saved.num_sentences == 40
    assert [row["bucket"] for row in saved.by_length] == ["1-10", "11-20", "21-40", "41+"]
    generation_config = json.loads((output_dir / "generation_config.json").read_text())
    assert generation_config["num_beams"] == 1 and not generation_config["do_sample"]
    assert generation_config["no_repeat_ngram_size"] == 3
    assert generation_config["min_new_tokens"] == 1  # the end token never first: no empty translation
    assert generation_config["max_length_a"] > 0 and "max_length" not in generation_config  # one limit
    # the model's loss smooths the labels, not the Trainer's smoother (see test_finetune for another model)
    config = json.loads((output_dir / "config.json").read_text())
    assert config["label_smoothing"] == 0.1
    # the package version that trained it, in the config averaged from the run's checkpoints
    assert config["hf_seq2seq_version"] == importlib.metadata.version("hf_seq2seq")
    assert torch.load(output_dir / "training_args.bin", weights_only=False).label_smoothing_factor == 0.0

    model = AutoModelForSeq2SeqLM.from_pretrained(output_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(output_dir)
    train = load_fra_eng(synthetic_fra_txt)["train"].select(range(300))
    by_source: dict[str, list[str]] = {}
    for src, tgt in zip(train["src"], train["tgt"], strict=True):
        by_source.setdefault(src, []).append(tgt)
    sources, references = list(by_source), list(by_source.values())

    trained_scores, _ = evaluate_translations(
        TorchTranslator(model, tokenizer), sources, references, progress=False
    )
    torch.manual_seed(0)
    untrained = type(model)(model.config).eval()
    untrained.generation_config = model.generation_config
    untrained_scores, _ = evaluate_translations(
        TorchTranslator(untrained, tokenizer), sources, references, progress=False
    )
    assert untrained_scores["bleu"] < 5
    assert trained_scores["bleu"] > 30, trained_scores


def test_pipeline_translates_with_a_folder_saved_by_training(tiny_run):
    output_dir, _ = tiny_run
    model, tokenizer = load_model_and_tokenizer(output_dir, device="cpu")
    sentences = ["the girl buys a green hat .", "our neighbour draws a small dog ."]
    expected = translate(TorchTranslator(model, tokenizer), sentences, split_sentences=False)
    for task in ("translation", "translation_en_to_fr"):
        translator = pipeline(task, model=str(output_dir), trust_remote_code=True)
        assert [r["translation_text"] for r in translator(sentences)] == expected
    (paragraph,) = translator([f"{sentences[0]} {sentences[1]}\n"])  # split into sentences, joined back
    assert paragraph["translation_text"] == f"{expected[0]} {expected[1]}\n"


@pytest.mark.parametrize("budget", [(), ("--max_train_minutes", "60", "--lr_decay_to_budget", "true")])
def test_a_killed_run_resumes_from_its_last_checkpoint(tmp_path, synthetic_fra_txt, budget):
    """With a plain schedule, and under a budget whose learning rate decays to its end (as the presets train)."""
    run_dir = tmp_path / "run"
    args = tiny_args(
        synthetic_fra_txt, run_dir, "--max_steps", "60", "--save_steps", "20", "--eval_steps", "20", *budget
    )
    process = subprocess.Popen(
        [sys.executable, str(ROOT / "scripts" / "train.py"), *args],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        env=dict(os.environ, HF_HUB_OFFLINE="1"),
    )
    try:
        deadline = time.monotonic() + 240
        while not (run_dir / "checkpoint-20" / "trainer_state.json").is_file():  # the Trainer writes it last
            assert process.poll() is None and time.monotonic() < deadline, (
                "training ended before checkpoint-20"
            )
            time.sleep(0.2)
    finally:
        process.kill()
        process.wait()
    assert not (run_dir / "checkpoint-60").exists()

    train_main([*args, "--resume_from_checkpoint", "True"])
    state = json.loads((run_dir / "checkpoint-60" / "trainer_state.json").read_text())
    assert state["global_step"] == 60
    logged_steps = [entry["step"] for entry in state["log_history"] if "loss" in entry]
    assert logged_steps == list(range(10, 61, 10))  # the log continues where the killed run left it


def test_a_bf16_run_reloads_its_best_checkpoint_and_evaluates_quietly(
    tmp_path, synthetic_fra_txt, monkeypatch, caplog
):
    """The `cpu` presets train with bf16 autocast where the CPU has bf16 matmuls: the Trainer then leaves the
    model's forward wrapped in autocast, and the test evaluation at the end (beam search, which calls the
    forward) runs through that wrapper (the packed-weight Linear layers must step aside for it). Loading the
    best checkpoint must not report the tied embedding copies, which are saved once, as missing."""
    monkeypatch.setattr(logging.getLogger("transformers"), "propagate", True)  # its warnings into caplog
    args = tiny_args(synthetic_fra_txt, tmp_path / "run", "--max_steps", "20", "--eval_steps", "10")
    results = train_main(
        [*args, "--save_steps", "10", "--bf16", "true", "--use_cpu", "true", "--num_beams", "2"]
    )
    assert "missing keys" not in caplog.text
    # the test evaluation is of the model as saved, in fp32: `evaluate` on the folder gives the same
    model, tokenizer = load_model_and_tokenizer(tmp_path / "run", device="cpu")
    test = load_fra_eng(synthetic_fra_txt)["test"].select(range(40))
    scores, hypotheses = evaluate_translations(
        TorchTranslator(model, tokenizer),
        test["src"],
        test["references"],
        batch_size=64,
        decoding=Decoding(num_beams=2),
        progress=False,
    )
    assert (tmp_path / "run" / TRANSLATIONS_FILE).read_text().splitlines() == hypotheses
    assert results["training"]["global_step"] == 20 and results["bleu"] == pytest.approx(scores["bleu"])
    assert results["training"]["kept_checkpoint"] == "best"  # the tiny preset keeps the best by validation


def test_a_run_reloads_its_best_checkpoint_the_same_without_the_trainers_private_load_report(
    tmp_path, synthetic_fra_txt, monkeypatch, caplog
):
    """`TranslationTrainer` overrides transformers' private `Trainer._issue_warnings_after_load` so that loading
    the best checkpoint does not report the tied embedding copies (saved once) as missing. Without that method in
    transformers (deleted here) a run still reloads its best checkpoint and trains the same model."""
    monkeypatch.setattr(logging.getLogger("transformers"), "propagate", True)  # its warnings into caplog
    missing_before: list[list[str]] = []
    forgive = TranslationTrainer.without_unsaved_missing_keys

    def record(self, load_result):
        missing_before.append(list(load_result.missing_keys))
        return forgive(self, load_result)

    monkeypatch.setattr(TranslationTrainer, "without_unsaved_missing_keys", record)
    extra = ("--max_steps", "20", "--eval_steps", "10", "--save_steps", "10", "--max_test_samples", "10")
    results = train_main(tiny_args(synthetic_fra_txt, tmp_path / "with", *extra))
    assert missing_before and all(missing_before)  # the best checkpoint lacks the tied copies ...
    assert "missing keys" not in caplog.text  # ... which are not reported

    monkeypatch.delattr(transformers.Trainer, "_issue_warnings_after_load")
    without = train_main(tiny_args(synthetic_fra_txt, tmp_path / "without", *extra))
    assert len(missing_before) == 2 and "missing keys" not in caplog.text
    assert without["training"]["best_checkpoint"].endswith(Path(results["training"]["best_checkpoint"]).name)
    assert (without["bleu"], without["chrf"]) == (results["bleu"], results["chrf"])
    weights = load_file(tmp_path / "with" / "model.safetensors")
    weights_without = load_file(tmp_path / "without" / "model.safetensors")
    assert weights.keys() == weights_without.keys()
    assert all(torch.equal(weights[key], weights_without[key]) for key in weights)


def test_the_cpu_presets_train_on_fra_eng_and_the_software_messages(synthetic_fra_txt):
    """The set-up command's data: fra-eng's pairs and the package's software messages of at most 8 words (labels and
    messages that fra.txt lacks: docs/recipe.md, "Software messages") in train, validation fra-eng's alone;
    `--dataset fra-eng` trains on fra-eng alone."""
    from hf_seq2seq.data.loaders import load_named_dataset
    from hf_seq2seq.training.data_loading import load_splits

    fra_eng = load_named_dataset("fra-eng", data_path=synthetic_fra_txt)
    for preset in ("cpu", "cpu-long"):
        _, data_args, _, _ = parse_args(["--preset", preset, "--data_path", str(synthetic_fra_txt)])
        splits = load_splits(data_args)
        sources = set(splits["train"]["src"])
        assert {"Paste", "Save All"} <= sources and set(fra_eng["train"]["src"]) <= sources
        assert max(len(message.split()) for message in sources - set(fra_eng["train"]["src"])) == 8
        assert splits["validation"]["src"] == fra_eng["validation"]["src"][: len(splits["validation"])]
    _, data_args, _, _ = parse_args(
        ["--preset", "cpu", "--data_path", str(synthetic_fra_txt), "--dataset", "fra-eng"]
    )
    assert set(load_splits(data_args)["train"]["src"]) == set(fra_eng["train"]["src"])


def test_presets_set_defaults_that_flags_override():
    model_args, data_args, training_args, final_args = parse_args(
        ["--preset", "tiny", "--learning_rate", "1e-4", "--num_beams", "4"]
    )
    assert model_args.d_model == 64 and data_args.max_source_length == 24
    assert training_args.learning_rate == 1e-4 and training_args.predict_with_generate
    assert final_args.num_beams == 4
    model_args, _, training_args, _ = parse_args(["--preset", "cpu"])
    assert model_args.d_model == 192 and training_args.lr_scheduler_type == "inverse_sqrt"
    # 3 heads of 64 and a feed-forward 4x as wide, as cpu-long and gpu have (docs/recipe.md, "Width")
    assert (model_args.attention_heads, model_args.ffn_dim) == (3, 768)
    # cpu-long keeps the width its figures were measured with
    long_args, long_data_args, _, _ = parse_args(["--preset", "cpu-long"])
    assert (long_args.d_model, long_args.attention_heads, long_args.ffn_dim) == (256, 4, 1024)
    assert long_data_args.max_train_minutes == 50.0
    # the budgeted CPU presets: a warmup given as a share of the budget, and the last checkpoint kept
    assert training_args.warmup_steps == 0.3 and not training_args.load_best_model_at_end
    # AdamW in one fused kernel on the CPU too: more steps in the budget (docs/recipe.md)
    assert training_args.optim == "adamw_torch_fused"


def test_bad_input_to_translate(tiny_run, caplog):
    output_dir, _ = tiny_run
    model, tokenizer = load_model_and_tokenizer(output_dir, device="cpu")
    with caplog.at_level(logging.WARNING, logger="hf_seq2seq.engines.decoding"):
        texts = ["", "   ", "the king sees a red boat .", "the dog sees a cat . " * 30]
        out = translate(TorchTranslator(model, tokenizer), texts, max_source_length=64)
    assert out[0] == "" and out[1] == "" and out[2] != ""
    assert "truncated" in caplog.text


def test_model_folder_missing_files_is_named(tmp_path):
    with pytest.raises(ModelFolderError, match="does not exist"):
        check_model_folder(tmp_path / "nope")
    (tmp_path / "config.json").write_text("{}")
    with pytest.raises(ModelFolderError) as info:
        check_model_folder(tmp_path)
    for name in ("generation_config.json", "tokenizer.json", "tokenizer_config.json", "model.safetensors"):
        assert name in str(info.value)


def test_time_budget_schedule_warms_up_then_reaches_zero_when_the_budget_ends():
    budget = TrainingBudget(minutes=1.0)
    schedule = BudgetSchedule(warmup=10, budget=budget)
    assert schedule(0) == pytest.approx(0.1) and schedule(9) == pytest.approx(1.0)
    budget.elapsed = 30.0  # what on_step_end records (the slowest process's clock)
    assert schedule(100) == pytest.approx(0.5) and schedule(4) == pytest.approx(0.25)
    budget.elapsed = 75.0
    assert schedule(200) == 0.0


def test_budget_schedule_warmup_given_as_a_share_of_the_budget_has_one_shape_on_any_machine():
    # a fast and a slow machine reach the same factor at the same share of the budget, whatever the step
    budget = TrainingBudget(minutes=10.0)
    schedule = BudgetSchedule(warmup=0.1, budget=budget)
    budget.elapsed = 30.0  # 5% of the budget: half-way through the warmup
    assert schedule(40) == pytest.approx(0.5 * 0.95) and schedule(400) == pytest.approx(0.5 * 0.95)
    budget.elapsed = 60.0
    assert schedule(3) == pytest.approx(0.9)
    budget.elapsed = 300.0
    assert schedule(7) == pytest.approx(0.5)
    tokens = TrainingBudget(tokens=1000)
    tokens.tokens_trained = 25
    assert BudgetSchedule(warmup=0.05, budget=tokens)(1) == pytest.approx(0.5 * 0.975)


def test_the_trainer_reads_a_warmup_below_one_as_a_share_of_its_budget(tmp_path):
    # --warmup_steps 0.3 (the cpu preset): a share of the budget, not of num_training_steps (never reached)
    model = TransformerMTForConditionalGeneration(tiny_config())
    for warmup, elapsed, step, factor in [(0.25, 7.5, 500, 0.5 * 0.875), (100, 7.5, 49, 0.5 * 0.875)]:
        args = Seq2SeqTrainingArguments(tmp_path, warmup_steps=warmup, use_cpu=True, report_to="none")
        budget = TrainingBudget(minutes=1.0)
        trainer = BudgetSeq2SeqTrainer(model=model, args=args, budget=budget, decay_to_budget=True)
        trainer.create_optimizer_and_scheduler(num_training_steps=10**6)
        budget.elapsed = elapsed
        assert trainer.lr_scheduler.lr_lambdas[0](step) == pytest.approx(factor)


def test_evaluate_and_translate_verbs_on_the_saved_model(tiny_run, synthetic_fra_txt, tmp_path, capsys):
    output_dir, results = tiny_run
    report = evaluate_cli.main([str(output_dir), "--data-path", str(synthetic_fra_txt), "--max-samples", "40",
                                "--output-dir", str(tmp_path / "split")])  # fmt: skip
    assert report["bleu"] == pytest.approx(results["bleu"]) and report["num_sentences"] == 40
    assert json.loads((tmp_path / "split" / EVAL_REPORT).read_text())["chrf"] == report["chrf"]
    out = capsys.readouterr().out
    assert "nrefs:var" in out and "source tokens" in out and "looping outputs" in out

    for name, lines in [
        ("src.en", ["the boy likes a blue pen .", "my friend finds a big cat ."]),
        ("ref1.fr", ["le garçon aime un stylo bleu .", "mon ami trouve un chat grand ."]),
        ("ref2.fr", ["le garçon adore un stylo bleu .", "mon ami trouve un grand chat ."]),
    ]:
        (tmp_path / name).write_text("".join(f"{line}\n" for line in lines), encoding="utf-8")
    report = evaluate_cli.main([str(output_dir), "--src-file", str(tmp_path / "src.en"), "--ref-file",
                                str(tmp_path / "ref1.fr"), "--ref-file", str(tmp_path / "ref2.fr"),
                                "--output-dir", str(tmp_path / "files")])  # fmt: skip
    translations = (tmp_path / "files" / "translations.txt").read_text(encoding="utf-8").splitlines()
    assert report["num_sentences"] == 2 and report["num_references"] == 2 and len(translations) == 2
    (tmp_path / "short.fr").write_text("le garçon aime un stylo bleu .\n", encoding="utf-8")
    with pytest.raises(ValueError, match="has 1 lines but"):
        evaluate_cli.main([str(output_dir), "--src-file", str(tmp_path / "src.en"), "--ref-file",
                           str(tmp_path / "short.fr")])  # fmt: skip

    assert translate_cli.main([str(output_dir), "the boy likes a blue pen .", ""]) == [translations[0], ""]
    beam = translate_cli.main([str(output_dir), "--num-beams", "4", "the boy likes a blue pen ."])
    assert len(beam) == 1 and beam[0]


@pytest.mark.parametrize("precision", ["int8", "bf16"])
def test_reduced_precision_verbs_translate_like_fp32(tiny_run, synthetic_fra_txt, tmp_path, precision):
    """`--precision int8|bf16` of evaluate and translate: the report says which, and a trained model's
    translations hardly change."""
    output_dir, results = tiny_run
    report = evaluate_cli.main([str(output_dir), "--data-path", str(synthetic_fra_txt), "--max-samples", "40",
                                "--output-dir", str(tmp_path), "--precision", precision])  # fmt: skip
    assert report["decoding"]["precision"] == precision and report["parameters"] == results["parameters"]
    assert report["bleu"] == pytest.approx(results["bleu"], abs=3)
    sources = ["the boy likes a blue pen .", "my friend finds a big cat ."]
    reduced = translate_cli.main([str(output_dir), *sources, "--precision", precision])
    assert reduced == translate_cli.main([str(output_dir), *sources])


# Training losses at steps 5, 10, ..., 40 of the run below (30 warmup steps, then 10 of decay), to 4 decimals.
# Re-measure after an intended change to the model or the recipe with
# `PYTHONPATH=. python -m pytest tests/test_training.py -k loss_curve` and copy the list its failure message prints.
PINNED_LOSSES = [5.9824, 4.9709, 4.3344, 3.7853, 3.1512, 2.6554, 2.1715, 1.8817]


@pytest.mark.releases  # under the newest torch too
@pytest.mark.newest_torch
def test_a_short_seeded_run_follows_its_pinned_loss_curve(tmp_path, synthetic_fra_txt):
    """A silent change to the initialisation, the network, the loss or the optimiser schedule moves the curve;
    the tolerance only absorbs float reordering (e.g. another thread count). Pinned with `adamw_torch`; the presets'
    fused AdamW makes the same update and logs the same losses."""
    train_main(
        tiny_args(synthetic_fra_txt, tmp_path, "--max_steps", "40", "--logging_steps", "5", "--seed", "0")
    )
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    losses = [entry["loss"] for entry in state["log_history"] if "loss" in entry]
    measured = "[" + ", ".join(f"{loss:.4f}" for loss in losses) + "]"
    assert losses == pytest.approx(PINNED_LOSSES, rel=0.02), f"measured losses: {measured}"


def test_a_saved_decoding_far_below_greedy_search_is_called_broken():
    """Training scores the test split with greedy search too; beam search a little below it is a weak model, far
    below it a broken decoder (transformers 5.24 with model code that missed its cache rename: 7.5 against 36.5)."""
    beams = {"bleu": 7.5, "decoding": {"num_beams": 6}}
    problem = decoding_problem(beams, {"bleu": 36.5})
    assert "7.5, 29.0 points below greedy search's 36.5" in problem and "6 beams" in problem
    assert "do not publish this score" in problem
    assert decoding_problem(beams | {"bleu": 35.0}, {"bleu": 36.5}) is None
    assert decoding_problem(beams | {"bleu": 39.0}, {"bleu": 36.5}) is None


def test_train_prints_a_broken_decoding_under_its_score(monkeypatch, tmp_path, capsys):
    """The command's last words name the problem `run` recorded, on stderr, after the score and greedy search's."""
    from hf_seq2seq.cli import train as train_cli

    problem = decoding_problem({"bleu": 7.5, "decoding": {"num_beams": 6}}, {"bleu": 36.5})
    results = dict(
        bleu=7.5, chrf=36.8, num_sentences=1192, bleu_signature="nrefs:var", decoding={"num_beams": 6},
        training=dict(run_wall_time_s=1320.0, greedy_bleu=36.5, decoding_problem=problem),
    )  # fmt: skip
    monkeypatch.setattr(train_cli, "run", lambda *args: results)
    train_cli.main(["--preset", "tiny", "--output_dir", str(tmp_path)])
    out, err = capsys.readouterr()
    assert "test BLEU 7.5  chrF 36.8  (6 beams; greedy 36.5; 1192 sources, 22 min)" in out
    assert err.strip().endswith(f"WARNING: {problem}")


def test_budget_schedule_counts_its_time_from_the_end_of_the_first_step():
    """A first step that compiles the model (`--torch_compile`) can take a good share of a short budget: the warmup
    of a share of the budget still spans training steps, and the decay still ends with the budget."""
    budget = TrainingBudget(minutes=6.0)
    schedule = BudgetSchedule(warmup=0.1, budget=budget)
    args = SimpleNamespace(device="cpu", world_size=1, eval_strategy="no")
    budget.on_train_begin(args, None, None)
    budget.start -= 60.0  # the first step took a minute
    budget.on_step_end(args, SimpleNamespace(global_step=1), TrainerControl())
    assert budget.first_step_elapsed == pytest.approx(60.0, abs=1.0)
    assert budget.fraction_left() == pytest.approx(5 / 6, abs=0.01)  # the budget itself counts the minute
    assert schedule(1) < 0.01  # the warmup starts now, not a sixth of the budget ago
    budget.elapsed = budget.first_step_elapsed + 15.0  # half of the warmup: 10% of the 300 s left
    assert schedule(50) == pytest.approx(0.5 * 0.95)
    budget.elapsed = 360.0
    assert schedule(900) == 0.0

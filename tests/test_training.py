"""The main job end to end on a few hundred real pairs: train, save, reload, evaluate, resume, bad input."""

import json
import logging
import os
import subprocess
import sys
import time

import pytest
import torch
from conftest import FRA_TXT, ROOT, requires_data, tiny_args
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, pipeline

from hf_seq2seq.cli import evaluate as evaluate_cli
from hf_seq2seq.cli import translate as translate_cli
from hf_seq2seq.cli.train import main as train_main
from hf_seq2seq.cli.train import parse_args
from hf_seq2seq.data import load_fra_eng
from hf_seq2seq.folder import ModelFolderError, check_model_folder
from hf_seq2seq.inference import evaluate_translations, load_model_and_tokenizer, translate
from hf_seq2seq.report import EVAL_REPORT, TRAINING_REPORT, EvalReport
from hf_seq2seq.training import TRANSLATIONS_FILE, TimeBudgetCallback, TimeBudgetSchedule


@requires_data
def test_pipeline_trains_saves_reloads_and_evaluates(tiny_run):
    output_dir, results = tiny_run
    check_model_folder(output_dir)  # model, generation config, tokenizer and pipeline files are all there
    saved = EvalReport.load(output_dir / TRAINING_REPORT)
    assert saved.bleu == results["bleu"] and "nrefs:var" in saved.bleu_signature
    assert saved.training["global_step"] == 300 and saved.training["averaged_checkpoints"] == 2
    assert len((output_dir / TRANSLATIONS_FILE).read_text().splitlines()) == saved.num_sentences == 40
    assert [row["bucket"] for row in saved.by_length] == ["1-10", "11-20", "21-40", "41+"]
    generation_config = json.loads((output_dir / "generation_config.json").read_text())
    assert generation_config["num_beams"] == 1 and not generation_config["do_sample"]
    assert generation_config["max_length_a"] > 0 and "max_length" not in generation_config  # one limit

    model = AutoModelForSeq2SeqLM.from_pretrained(output_dir).eval()
    tokenizer = AutoTokenizer.from_pretrained(output_dir)
    train = load_fra_eng(FRA_TXT)["train"].select(range(300))
    by_source: dict[str, list[str]] = {}
    for src, tgt in zip(train["src"], train["tgt"], strict=True):
        by_source.setdefault(src, []).append(tgt)
    sources, references = list(by_source), list(by_source.values())

    trained_scores, _ = evaluate_translations(model, tokenizer, sources, references, progress=False)
    torch.manual_seed(0)
    untrained = type(model)(model.config).eval()
    untrained.generation_config = model.generation_config
    untrained_scores, _ = evaluate_translations(untrained, tokenizer, sources, references, progress=False)
    assert untrained_scores["bleu"] < 5
    assert trained_scores["bleu"] > 30, trained_scores


@requires_data
def test_pipeline_translates_with_a_folder_saved_by_training(tiny_run):
    output_dir, _ = tiny_run
    model, tokenizer = load_model_and_tokenizer(output_dir, device="cpu")
    sentences = ["Go.", "I see."]
    expected = translate(model, tokenizer, sentences, split_sentences=False)
    for task in ("translation", "translation_en_to_fr"):
        translator = pipeline(task, model=str(output_dir), trust_remote_code=True)
        assert [r["translation_text"] for r in translator(sentences)] == expected
    (paragraph,) = translator(["Go. I see.\n"])  # split into sentences, joined back with its layout
    assert paragraph["translation_text"] == f"{expected[0]} {expected[1]}\n"


@requires_data
def test_a_killed_run_resumes_from_its_last_checkpoint(tmp_path):
    run_dir = tmp_path / "run"
    args = tiny_args(run_dir, "--max_steps", "60", "--save_steps", "20", "--eval_steps", "20")
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


def test_presets_set_defaults_that_flags_override():
    model_args, data_args, training_args, final_args = parse_args(
        ["--preset", "tiny", "--learning_rate", "1e-4", "--num_beams", "4"]
    )
    assert model_args.d_model == 64 and data_args.max_source_length == 24
    assert training_args.learning_rate == 1e-4 and training_args.predict_with_generate
    assert final_args.num_beams == 4
    model_args, _, training_args, _ = parse_args(["--preset", "cpu"])
    assert model_args.d_model == 256 and training_args.lr_scheduler_type == "inverse_sqrt"


@requires_data
def test_bad_input_to_translate(tiny_run, caplog):
    output_dir, _ = tiny_run
    model, tokenizer = load_model_and_tokenizer(output_dir, device="cpu")
    with caplog.at_level(logging.WARNING, logger="hf_seq2seq.inference"):
        out = translate(model, tokenizer, ["", "   ", "Go.", "Run! " * 200], max_source_length=64)
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
    budget = TimeBudgetCallback(minutes=1.0)
    schedule = TimeBudgetSchedule(warmup_steps=10, budget=budget)
    assert schedule(0) == pytest.approx(0.1) and schedule(9) == pytest.approx(1.0)
    budget.elapsed = 30.0  # what on_step_end records (the slowest process's clock)
    assert schedule(100) == pytest.approx(0.5) and schedule(4) == pytest.approx(0.25)
    budget.elapsed = 75.0
    assert schedule(200) == 0.0


@requires_data
def test_evaluate_and_translate_verbs_on_the_saved_model(tiny_run, tmp_path, capsys):
    output_dir, results = tiny_run
    report = evaluate_cli.main([str(output_dir), "--data-path", str(FRA_TXT), "--max-samples", "40",
                                "--output-dir", str(tmp_path / "split")])  # fmt: skip
    assert report["bleu"] == pytest.approx(results["bleu"]) and report["num_sentences"] == 40
    assert json.loads((tmp_path / "split" / EVAL_REPORT).read_text())["chrf"] == report["chrf"]
    out = capsys.readouterr().out
    assert "nrefs:var" in out and "source tokens" in out and "looping outputs" in out

    (tmp_path / "src.en").write_text("Go.\nI see.\n", encoding="utf-8")
    (tmp_path / "ref1.fr").write_text("Va !\nJe vois.\n", encoding="utf-8")
    (tmp_path / "ref2.fr").write_text("Bouge !\nJe comprends.\n", encoding="utf-8")
    report = evaluate_cli.main([str(output_dir), "--src-file", str(tmp_path / "src.en"), "--ref-file",
                                str(tmp_path / "ref1.fr"), "--ref-file", str(tmp_path / "ref2.fr"),
                                "--output-dir", str(tmp_path / "files")])  # fmt: skip
    translations = (tmp_path / "files" / "translations.txt").read_text(encoding="utf-8").splitlines()
    assert report["num_sentences"] == 2 and report["num_references"] == 2 and len(translations) == 2
    (tmp_path / "short.fr").write_text("Va !\n", encoding="utf-8")
    with pytest.raises(ValueError, match="has 1 lines but"):
        evaluate_cli.main([str(output_dir), "--src-file", str(tmp_path / "src.en"), "--ref-file",
                           str(tmp_path / "short.fr")])  # fmt: skip

    assert translate_cli.main([str(output_dir), "Go.", ""]) == [translations[0], ""]
    beam = translate_cli.main([str(output_dir), "--num-beams", "4", "Go."])
    assert len(beam) == 1 and beam[0]

"""Training settings that cannot work are refused as `hf-seq2seq train` parses its flags, before any data is read
or a tokenizer trained, one line each that says what to change; `recipe.run` refuses them the same way."""

import pytest
from transformers import Seq2SeqTrainingArguments

from hf_seq2seq.cli import train as train_cli
from hf_seq2seq.training import recipe
from hf_seq2seq.training.arguments import DataArguments, ModelArguments
from hf_seq2seq.training.presets import PRESETS


@pytest.fixture
def no_data(monkeypatch):
    """Reading the corpus or training a tokenizer fails the test: a refusal must come before either."""

    def reached(*args, **kwargs):
        raise AssertionError("the run read its data before refusing its settings")

    monkeypatch.setattr(recipe, "load_splits", reached)
    monkeypatch.setattr(recipe, "build_tokenizer", reached)


def refusal(argv: list[str], capsys) -> list[str]:
    """The error lines of `hf-seq2seq train argv`, which must exit as a parser error (status 2)."""
    with pytest.raises(SystemExit) as exit_info:
        train_cli.main([*argv, "--output_dir", "runs/refused"])
    assert exit_info.value.code == 2
    err = capsys.readouterr().err
    return err[err.index("error: ") + len("error: ") :].strip().splitlines()


@pytest.mark.parametrize("preset", ["cpu", "gpu"])
def test_a_preset_that_joins_pairs_streamed_is_told_to_add_concat_share_0(preset, no_data, capsys):
    assert PRESETS[preset]["concat_share"] > 0
    lines = refusal(["--preset", preset, "--streaming", "true", "--max_steps", "10"], capsys)
    assert lines == [
        f"--concat_share {PRESETS[preset]['concat_share']} (set by --preset {preset} unless given) joins pairs of a "
        "train split held in memory, and --streaming reads a stream: add --concat_share 0"
    ]
    train_cli.parse_args(
        [
            "--preset",
            preset,
            "--streaming",
            "true",
            "--max_steps",
            "10",
            "--concat_share",
            "0",
            "--output_dir",
            "x",
        ]
    )


def test_every_problem_is_named_at_once(no_data, capsys):
    lines = refusal(["--preset", "cpu", "--streaming", "true"], capsys)
    assert len(lines) == 2
    assert lines[0].endswith("add --concat_share 0")
    assert lines[1].startswith("--streaming needs --max_steps N")


@pytest.mark.parametrize(
    ("argv", "line"),
    [
        (
            ["--concat_share", "-0.1"],
            "--concat_share must be >= 0 (joined examples per train pair; 0: none), not -0.1",
        ),
        (
            ["--concat_max_pairs", "1"],
            "--concat_max_pairs must be at least 2 (a joined example joins 2 or more pairs), not 1; or add "
            "--concat_share 0 to join none",
        ),
        (
            ["--max_position_shift", "256"],
            "--max_position_shift must be in 0..255, within the model's --max_position_embeddings 256 positions, "
            "not 256",
        ),
        (
            ["--max_position_shift", "-1"],
            "--max_position_shift must be in 0..255, within the model's --max_position_embeddings 256 positions, "
            "not -1",
        ),
        (
            ["--max_position_embeddings", "100", "--max_target_length", "100"],
            "--max_source_length 128 is past the model's --max_position_embeddings 100 positions: lower it to 100 or "
            "raise --max_position_embeddings",
        ),
        (
            ["--attention_heads", "5"],
            "--d_model (192) must be divisible by --attention_heads (5): each head gets d_model / heads dimensions",
        ),
        (["--dropout", "1"], "--dropout must be in [0, 1), got 1.0"),
        (["--vocab_size", "3"], "--vocab_size must exceed the tokenizer's 3 special tokens, not 3"),
        (["--tokenizer_model", "wordpiece"], "--tokenizer_model must be bpe or unigram, not 'wordpiece'"),
        (["--num_beams", "0"], "--num_beams must be at least 1, not 0"),
        (
            ["--average_last", "-2"],
            "--average_last must be a number of checkpoints (0: none averaged), not -2",
        ),
        (
            ["--max_train_minutes", "-5"],
            "--max_train_minutes must be >= 0 (0: no limit of that kind), not -5.0",
        ),
    ],
    ids=lambda value: " ".join(value) if isinstance(value, list) else "",
)
def test_a_setting_that_cannot_work_is_refused_in_one_line(argv, line, no_data, capsys):
    assert refusal(["--preset", "cpu", *argv], capsys) == [line]


def test_an_unknown_standard_test_set_is_refused_before_training_not_after(no_data, capsys):
    (line,) = refusal(["--preset", "cpu", "--standard_test_set", "tatoeba-test"], capsys)
    assert line.startswith("--standard_test_set 'tatoeba-test' is not a standard test set: one of ")
    assert line.endswith(", or none to skip it") and "tatoeba-test-v2021-08-07" in line
    train_cli.parse_args(["--preset", "cpu", "--standard_test_set", "none", "--output_dir", "x"])


def test_the_presets_and_a_fine_tuning_parse(no_data):
    for preset in PRESETS:
        train_cli.parse_args(["--preset", preset, "--output_dir", "x"])
    # a fine-tuned model keeps its own sizes: the flags of a fresh one are not checked against each other
    train_cli.parse_args(["--model_name_or_path", "runs/cpu", "--attention_heads", "5", "--output_dir", "x"])


def test_run_refuses_them_too_before_reading_data(no_data, tmp_path):
    with pytest.raises(ValueError, match="add --concat_share 0$"):
        recipe.run(
            ModelArguments(),
            DataArguments(streaming=True, concat_share=0.1),
            Seq2SeqTrainingArguments(str(tmp_path), max_steps=5, use_cpu=True, report_to="none"),
        )

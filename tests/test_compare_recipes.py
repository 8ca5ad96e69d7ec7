"""Comparing recipes (`hf-seq2seq compare`) and the token budget it trains them for: the budget stops a run once
it has trained on that many tokens and its learning rate decays to 0 there; a comparison of two tiny recipes
with two seeds each reports every figure, per run and per recipe, and its runs stop at about the same number of
training tokens."""

import json
from types import SimpleNamespace

import pytest
import torch
from helpers import tiny_args
from transformers import TrainerControl

from hf_seq2seq.benchmarks.comparison import MEANS
from hf_seq2seq.cli import compare
from hf_seq2seq.training.time_budget import BudgetSchedule, TrainingBudget, batch_tokens

ARGS = SimpleNamespace(world_size=1, device="cpu", eval_strategy="steps")


def batch(source_lengths: list[int], target_lengths: list[int]) -> dict:
    """A padded batch as the collator makes it: attention_mask over the sources, labels padded with -100."""
    mask = torch.tensor([[1] * n + [0] * (max(source_lengths) - n) for n in source_lengths])
    labels = torch.tensor([[5] * n + [-100] * (max(target_lengths) - n) for n in target_lengths])
    return {"input_ids": mask * 7, "attention_mask": mask, "labels": labels}


def step(budget: TrainingBudget, inputs: dict, global_step: int) -> TrainerControl:
    budget.count(inputs)
    return budget.on_step_end(ARGS, SimpleNamespace(global_step=global_step), TrainerControl())


def test_a_token_budget_counts_source_and_target_tokens_stops_at_the_budget_and_the_lr_decays_to_it():
    inputs = batch([3, 5], [4, 2])
    assert int(batch_tokens(inputs)) == 3 + 5 + 4 + 2  # padding excluded on both sides
    budget = TrainingBudget(tokens=100)
    schedule = BudgetSchedule(warmup=1, budget=budget)
    budget.on_train_begin(ARGS, None, None)
    assert schedule(0) == 1.0
    for global_step in range(1, 7):  # 14 tokens a step: 84 after 6 steps
        control = step(budget, inputs, global_step)
        assert not control.should_training_stop
    assert budget.tokens_trained == 84 and schedule(6) == pytest.approx(1 - 84 / 100)
    budget.count(inputs)  # gradient accumulation: two micro-batches before the optimizer step
    control = step(budget, inputs, 7)
    assert budget.tokens_trained == 112 and control.should_training_stop
    assert control.should_evaluate and control.should_save  # the last evaluation and checkpoint
    assert schedule(7) == 0.0

    both = TrainingBudget(minutes=10.0, tokens=100)  # the one that runs out first decides
    both.on_train_begin(ARGS, None, None)
    step(both, inputs, 1)
    both.elapsed = 300.0  # half the time, 14% of the tokens
    assert both.fraction_left() == pytest.approx(0.5) and both.describe() == "5.0/10.0 min, 14/100 tokens"
    with pytest.raises(ValueError, match="minutes or tokens"):
        TrainingBudget(minutes=0, tokens=None)


def test_variants_are_parsed_and_the_flags_compare_sets_itself_are_refused():
    parser = compare.build_parser()
    args = parser.parse_args(
        ["--variant", "base=cpu", "--variant", "deep-enc=cpu --encoder-layers 6 --decoder_layers=1",
         "--max-train-tokens", "1000", "--seeds", "3", "4", "--", "--data_path", "fra.txt"]
    )  # fmt: skip
    variants, runs = compare.plan(args)
    assert variants["deep-enc"] == {"preset": "cpu", "flags": ["--encoder-layers", "6", "--decoder_layers=1"]}
    assert [(run["variant"], run["seed"]) for run in runs] == [
        ("base", 3), ("deep-enc", 3), ("base", 4), ("deep-enc", 4)
    ]  # fmt: skip
    assert runs[1]["train_argv"] == [
        "--preset", "cpu", "--encoder-layers", "6", "--decoder_layers=1", "--data_path", "fra.txt",
        "--seed", "3", "--output_dir", "runs/compare/deep-enc-seed3",
        "--max_train_minutes", "0", "--max_train_tokens", "1000",
    ]  # fmt: skip
    for argv, message in [
        (["--variant", "a=cpu", "--variant", "b=cpu --seed 1", "--max-train-minutes", "1"], "sets --seed"),
        (["--variant", "a=cpu", "--variant", "b=cpu", "--max-train-minutes", "1", "--", "--output-dir=x"],
         "sets --output_dir"),
        (["--variant", "a=cpu", "--variant", "a=cpu", "--max-train-minutes", "1"], "given twice"),
        (["--variant", "a=cpu", "--variant", "b=cpu"], "the budget of every run"),
        (["--variant", "a=cpu", "--max-train-minutes", "1"], "two or more"),
        (["--variant", "a=cpu", "--variant", "b=--dropout 0.1", "--max-train-minutes", "1"], "NAME="),
    ]:  # fmt: skip
        with pytest.raises(ValueError, match=message):
            compare.plan(parser.parse_args(argv))


def test_two_tiny_recipes_with_two_seeds_for_a_token_budget(synthetic_fra_txt, tmp_path, capsys):
    # the flags of a tiny run (fewer validation and test sentences), but its preset and folder, which compare
    # sets; and a learning rate that decays to the budget's end
    flags = tiny_args(synthetic_fra_txt, tmp_path, "--max_eval_samples", "20", "--max_test_samples", "20")
    for name in ("--preset", "--output_dir"):
        del flags[flags.index(name) : flags.index(name) + 2]
    tokens = 10_000  # about 20 steps of 32 pairs
    result = compare.main(
        ["--variant", "base=tiny", "--variant", "deep-enc=tiny --encoder_layers 3 --decoder_layers 1",
         "--max-train-tokens", str(tokens), "--output-dir", str(tmp_path / "runs"), "--latency-sentences", "5",
         "--latency-repeats", "1", "--json", str(tmp_path / "compare.json"),
         "--", *flags, "--lr_decay_to_budget", "true", "--warmup_steps", "5"]
    )  # fmt: skip
    assert json.loads((tmp_path / "compare.json").read_text()) == json.loads(json.dumps(result))
    assert result["budget"] == {"minutes": None, "tokens": tokens} and result["seeds"] == [0, 1]
    assert {"cpu", "isa", "bf16_matmuls", "cores", "torch_threads"} <= set(result["machine"])
    runs = result["runs"]
    assert [(run["variant"], run["seed"]) for run in runs] == [
        ("base", 0), ("deep-enc", 0), ("base", 1), ("deep-enc", 1)
    ]  # fmt: skip
    per_step = max(run["train_tokens"] / run["steps"] for run in runs)
    for run in runs:
        assert set(MEANS) | {"num_beams", "train_runtime_s", "bf16", "output_dir", "train_argv"} <= set(run)
        # stopped once the budget was spent: within a step of it, as every other run
        assert tokens <= run["train_tokens"] < tokens + 2 * per_step
        assert run["latency_ms_per_sentence"] > 0 and run["train_tokens_per_s"] > 0
        state = json.loads(
            (tmp_path / "runs" / f"{run['variant']}-seed{run['seed']}" / "trainer_state.json").read_text()
        )
        rates = [entry["learning_rate"] for entry in state["log_history"] if "learning_rate" in entry]
        assert rates[-1] < 0.3 * max(rates)  # decaying to 0 at the token budget's end
    weights = {
        seed: (tmp_path / "runs" / f"base-seed{seed}" / "model.safetensors").read_bytes() for seed in (0, 1)
    }
    assert weights[0] != weights[1]  # the seeds differ
    for name in ("base", "deep-enc"):
        mean = result["variants"][name]["mean"]
        own = [run for run in runs if run["variant"] == name]
        assert mean["seeds"] == 2 and mean["bleu"] == pytest.approx(sum(r["bleu"] for r in own) / 2)
        assert set(MEANS) <= set(mean)
    assert result["variants"]["base"]["mean"]["bleu_vs_first"] == 0.0
    assert result["variants"]["deep-enc"]["flags"] == ["--encoder_layers", "3", "--decoder_layers", "1"]
    table = capsys.readouterr().out
    assert "machine: " in table and "10,000 training tokens" in table
    assert all(label in table for label in ("base-seed0", "deep-enc-seed1", "variant (mean)", "vs first"))

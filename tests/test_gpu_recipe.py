"""The `gpu` recipe without a GPU: its presets parse into the settings docs/training.md describes, and a training
step of it reads nothing back from the device (logging apart, every `logging_steps`) (on a GPU each read waits for the device)."""

import json
import os
import runpy
import subprocess
import sys

import pytest
import torch
from datasets import Dataset
from helpers import ROOT, TINY_VOCAB, tiny_config, tiny_tokenizer
from transformers import TrainerCallback

from hf_seq2seq.acceleration.attention_kernels import parse_sdpa_backends
from hf_seq2seq.cli.train import parse_args
from hf_seq2seq.models.transformer_mt import modeling_transformer_mt
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import TransformerMTForConditionalGeneration
from hf_seq2seq.training.time_budget import TrainingBudget
from hf_seq2seq.training.trainer import build_trainer

pytestmark = pytest.mark.newest_torch  # CI runs these under the newest torch on PyPI too: a lent GPU's


def test_the_gpu_preset_is_a_time_budget_recipe_on_token_batches(tmp_path):
    model_args, data_args, training_args, final_args = parse_args(
        ["--preset", "gpu", "--output_dir", str(tmp_path)]
    )
    assert (model_args.d_model, model_args.encoder_layers, model_args.ffn_dim) == (
        512,
        6,
        2048,
    )  # the base model
    assert model_args.normalize_before and model_args.dropout == 0.3
    assert data_args.max_tokens_per_batch == 25_000
    assert data_args.cuda_graphs is None  # CUDA graphs where the run can (build_trainer decides)
    assert (
        data_args.max_train_minutes == 6.0
        and data_args.lr_decay_to_budget
        and training_args.warmup_steps == 0.1
    )
    assert not training_args.load_best_model_at_end  # the last step, as the cpu preset
    assert training_args.optim == "adamw_torch_fused" and not training_args.logging_nan_inf_filter
    assert training_args.dataloader_num_workers == 4 and training_args.dataloader_persistent_workers
    # no cuDNN attention: it builds a plan for each new batch shape (1.26 s a step on an H200 instead of 42 ms)
    assert model_args.sdpa_backends == "flash,efficient,math"
    assert training_args.bf16 == (torch.cuda.is_available() and torch.cuda.is_bf16_supported())
    assert final_args.num_beams == 6
    # a flag given explicitly wins over the preset
    _, data_args, _, _ = parse_args(
        ["--preset", "gpu", "--max_tokens_per_batch", "4000", "--output_dir", "x"]
    )
    assert data_args.max_tokens_per_batch == 4000
    model_args, _, _, _ = parse_args(["--preset", "gpu", "--sdpa_backends", "", "--output_dir", "x"])
    assert parse_sdpa_backends(model_args.sdpa_backends) is None  # "": PyTorch's own choice again


def test_the_gpu_wmt_preset_keeps_the_papers_settings():
    model_args, data_args, training_args, final_args = parse_args(["--preset", "gpu-wmt"])
    assert not model_args.normalize_before and model_args.dropout == 0.1 and model_args.vocab_size == 32000
    assert data_args.streaming and data_args.dataset == "wmt14" and data_args.max_train_minutes is None
    assert data_args.max_tokens_per_batch == 25_000 and training_args.gradient_accumulation_steps == 2
    assert training_args.lr_scheduler_type == "inverse_sqrt" and training_args.warmup_steps == 4000
    assert (
        training_args.learning_rate == pytest.approx(7.0e-4, rel=0.01) and training_args.max_steps == 100_000
    )
    assert (final_args.average_last, final_args.num_beams, final_args.length_penalty) == (5, 4, 0.6)
    assert model_args.sdpa_backends == "flash,efficient,math"  # as `gpu`: its batches change shape too


class HostReads:
    """Counts the calls that read a tensor's value on the host (on a GPU, each waits for the device)."""

    names = ("item", "tolist", "numpy", "__bool__", "__int__", "__float__")

    def __init__(self, monkeypatch):
        self.count = 0
        for name in self.names:
            original = getattr(torch.Tensor, name)
            monkeypatch.setattr(torch.Tensor, name, self.counting(original))

    def counting(self, original):
        def read(tensor, *args, **kwargs):
            self.count += 1
            return original(tensor, *args, **kwargs)

        return read


class StepReads(TrainerCallback):
    """The host reads of each step: forward, backward, gradient clipping, optimizer and learning-rate steps, and the
    budget's check (the callbacks before this one). Not the batch loading before it or the logging after it."""

    def __init__(self, reads: HostReads):
        self.reads, self.started, self.per_step = reads, 0, {}

    def on_step_begin(self, args, state, control, **kwargs):
        self.started = self.reads.count

    def on_step_end(self, args, state, control, **kwargs):
        self.per_step[state.global_step] = self.reads.count - self.started


def test_a_step_of_the_gpu_recipe_reads_nothing_back_from_the_device(tmp_path, monkeypatch):
    tokenizer = tiny_tokenizer()
    rows = [
        {
            "input_ids": [5 + i % 7] * (2 + i % 9) + [2],
            "attention_mask": [1] * (3 + i % 9),
            "labels": [6] * (1 + i % 5),
        }
        for i in range(200)
    ]
    model_args, data_args, training_args, _ = parse_args(
        [
            "--preset", "gpu", "--output_dir", str(tmp_path), "--use_cpu", "true", "--bf16", "false",
            "--max_tokens_per_batch", "300", "--max_train_minutes", "5", "--logging_steps", "4",
            "--eval_strategy", "no", "--save_strategy", "no", "--disable_tqdm", "true",
            "--dataloader_num_workers", "0", "--dataloader_persistent_workers", "false",
        ]
    )  # fmt: skip
    training_args.max_steps = 13
    model = TransformerMTForConditionalGeneration(tiny_config(vocab_size=TINY_VOCAB, dropout=0.3))
    trainer = build_trainer(model, tokenizer, data_args, training_args, Dataset.from_list(rows), None, None)
    reads = HostReads(monkeypatch)
    steps = StepReads(reads)
    trainer.add_callback(steps)
    monkeypatch.setattr(modeling_transformer_mt, "fixed_shapes", lambda tensor: True)  # the model as on a GPU
    trainer.train()

    assert len(steps.per_step) == 13 and set(steps.per_step.values()) == {0}
    assert reads.count > 0  # the loss and gradient norm, read every 4 steps to be logged
    assert isinstance(trainer.budget, TrainingBudget) and trainer.budget.tokens_trained > 0


@pytest.mark.filterwarnings("ignore:.*pin_memory.*:UserWarning")  # no GPU here to pin memory for
def test_the_gpu_recipe_copies_its_batches_to_the_device_without_waiting(tmp_path, monkeypatch):
    """With pinned memory (the `gpu` preset's on a GPU), each batch goes to the device as an asynchronous copy: a
    blocking one waits until the GPU has run everything queued, at every step."""
    rows = [
        {"input_ids": [5] * (2 + i % 9) + [2], "attention_mask": [1] * (3 + i % 9), "labels": [6, 2]}
        for i in range(40)
    ]
    _, data_args, training_args, _ = parse_args(
        [
            "--preset", "gpu", "--output_dir", str(tmp_path), "--bf16", "false",
            "--max_tokens_per_batch", "100", "--dataloader_num_workers", "0",
            "--dataloader_persistent_workers", "false", "--dataloader_pin_memory", "true", "--eval_strategy", "no",
        ]
    )  # fmt: skip
    model = TransformerMTForConditionalGeneration(tiny_config(vocab_size=TINY_VOCAB))
    trainer = build_trainer(
        model, tiny_tokenizer(), data_args, training_args, Dataset.from_list(rows), None, None
    )
    copies = []
    to = torch.Tensor.to

    def recording_to(tensor, *args, **kwargs):
        copies.append(kwargs.get("non_blocking", False))
        return to(tensor, *args, **kwargs)

    monkeypatch.setattr(torch.Tensor, "to", recording_to)
    batch = next(iter(trainer.get_train_dataloader()))
    assert set(batch) >= {"input_ids", "labels"}
    assert len(copies) >= len(batch) and all(copies)


@pytest.mark.slow
@pytest.mark.device_check  # run under the newest torch (a lent GPU's), not in the main run: docs/tests.md
def test_the_device_check_runs_split_across_calls_and_writes_its_summary(tmp_path, synthetic_fra_txt):
    """measurements/gpu_check.sh as a lent GPU runs it, rehearsed on the CPU (`GPU_CHECK_DRY_RUN=1`): the variants of the
    step and the compiled benchmark in one call, the training (compiled, without cuDNN's attention) in the next, which
    writes a summary with the compiled benchmark's eager rows, the benchmark and the step profile in a third, which
    then writes the summary of all. A mistake here would otherwise
    show only on a GPU, whose time is scarce."""
    env = os.environ | {
        "GPU_CHECK_DRY_RUN": "1",
        "GPU_CHECK_OUT": str(tmp_path),
        "GPU_CHECK_MINUTES": "0.1",
        "HF_SEQ2SEQ_FRA_ENG": str(synthetic_fra_txt),
        "PYTHON": sys.executable,
    }

    def check(steps: str, train_flags: str = "", variants: str = "") -> str:
        done = subprocess.run(
            ["bash", str(ROOT / "measurements" / "gpu_check.sh")],
            env=env
            | {"GPU_CHECK_STEPS": steps, "GPU_CHECK_TRAIN_FLAGS": train_flags}
            | ({"GPU_CHECK_VARIANTS": variants} if variants else {}),
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr[-3000:]
        return done.stdout

    assert "no summary yet" in check("options compiled")
    # the model compiled whole (minutes on a GPU) and CUDA graphs are not among the default variants
    assert not (tmp_path / "dry-run-cpu_training_step_profile_compiled.json").exists()
    assert "no summary yet" in check("options", variants="compiled cudagraphs")
    compiled_training = "--torch_compile true --torch_compile_backend eager"
    # the compiled benchmark measured the eager models too: its eager rows make a summary until the plain
    # benchmark's replace them
    assert "wrote" in check("train", compiled_training)
    summary = json.loads((tmp_path / "dry-run-cpu_gpu_check.json").read_text())
    assert "--compile-training" in summary["commands"]["benchmark"]
    # a profile written by the script's earlier version (as docs/bench holds for the H100) has fewer figures
    earlier = ROOT / "docs" / "bench" / "nvidia-h100-80gb-hbm3_training_step_profile.json"
    (tmp_path / "dry-run-cpu_training_step_profile_earlier.json").write_text(earlier.read_text())
    printed = check("benchmark profile")
    summary = json.loads((tmp_path / "dry-run-cpu_gpu_check.json").read_text())
    assert "--compile-training" not in summary["commands"]["benchmark"]
    train = summary["train"]
    assert train["train_tokens_per_s"] == train["train_tokens"] / train["train_runtime_s"] > 0
    assert train["test_beams"] == 2 and 0 <= train["test_bleu"] <= 100
    assert summary["benchmark"]["train_token_batch_tokens"] == 300
    assert summary["wall_s"]["train"] > 0 and summary["wall_s"]["benchmark"] > 0  # kept across the calls
    assert summary["step_profile"]["new_shapes_train_tokens_per_s"] > 0
    assert f"{train['train_tokens']:,} tokens" in printed
    assert not (tmp_path / "dry-run-cpu_gpu_check_seconds.json").exists()  # folded into the summary
    # the training ran as its flags and the preset said, and the summary names how
    assert train["torch_compile_dynamic"] is True and train["sdpa_backends"] == "flash,efficient,math"
    variants = summary["step_variants"]
    assert set(variants) == {"default", "cudnn", "compiled", "compiled_regions", "cudagraphs", "earlier"}
    assert "reduce-overhead" in variants["cudagraphs"]["compile"]
    assert variants["earlier"]["warm_up_s"] is None and "warm-up ? s" in printed
    assert variants["compiled_regions"]["compile"].startswith("regional")
    # the step as the preset runs it (attention off cuDNN's kernels) beside PyTorch's own choice
    assert (
        variants["default"]["sdpa_backends"]
        == variants["compiled"]["sdpa_backends"]
        == "flash,efficient,math"
    )
    assert variants["cudnn"]["sdpa_backends"] == "default"
    assert "--sdpa-backends flash,efficient,math" in summary["commands"]["benchmark"]
    assert all(v["train_tokens_per_s"] > 0 for v in variants.values())
    assert summary["compiled_benchmark"]["ours_compile_and_first_pass_s"] > 0
    assert "step variant compiled_regions" in printed and "compiled benchmark" in printed


def test_the_device_checks_summary_names_the_cuda_graphs_rows(tmp_path, synthetic_fra_txt):
    """The summary of the H100's benchmark and 6-minute run with CUDA graphs (docs/bench), as a call that runs no
    step writes it from the JSON already there: the graphed rows beside the eager ones, the shapes recorded."""
    bench = ROOT / "docs" / "bench" / "nvidia-h100-80gb-hbm3"
    (tmp_path / "dry-run-cpu_benchmark_large_bf16.json").write_text(
        (bench.parent / f"{bench.name}_benchmark_large_bf16_cuda_graphs.json").read_text()
    )
    (tmp_path / "dry-run-cpu_gpu_preset_0.3min.json").write_text(
        (bench.parent / f"{bench.name}_gpu_preset_6min_cuda_graphs.json").read_text()
    )
    env = os.environ | {
        "GPU_CHECK_DRY_RUN": "1",
        "GPU_CHECK_OUT": str(tmp_path),
        "GPU_CHECK_STEPS": " ",
        "HF_SEQ2SEQ_FRA_ENG": str(synthetic_fra_txt),
        "PYTHON": sys.executable,
    }
    done = subprocess.run(
        ["bash", str(ROOT / "measurements" / "gpu_check.sh")],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    summary = json.loads((tmp_path / "dry-run-cpu_gpu_check.json").read_text())
    assert round(summary["benchmark"]["train_64_sentences_ours_cuda_graphs_over_marian"], 2) == 4.46
    assert (
        round(summary["benchmark"]["train_64_sentences_ours_over_marian"], 2) == 1.14
    )  # eager against eager
    assert summary["train"]["cuda_graph_shapes"] == 87
    assert (
        "with CUDA graphs (as the preset trains): 64 sentences 4.46x Marian (4.11x eager ours)" in done.stdout
    )
    assert "222,398,552 tokens in 361 s = 615,593 tokens/s" in done.stdout


@pytest.mark.slow
@pytest.mark.device_check  # run under the newest torch (a lent GPU's), not in the main run: docs/tests.md
def test_the_device_check_screens_recipes_and_keeps_each_runs_figures(tmp_path, synthetic_fra_txt):
    """The device check's `screen` (the gpu recipe's short screen, rehearsed on the CPU): `hf-seq2seq compare` of the
    preset beside a change of it, each for the screen's budget; the comparison's JSON, and each run's test figures
    kept apart as the run ends (a call stopped early keeps those), and the step's seconds."""
    done = subprocess.run(
        ["bash", str(ROOT / "measurements" / "gpu_check.sh")],
        env=os.environ
        | {
            "GPU_CHECK_DRY_RUN": "1",
            "GPU_CHECK_OUT": str(tmp_path),
            "GPU_CHECK_STEPS": "screen",
            "GPU_CHECK_SCREEN": "base=gpu;lr2e-3=gpu --learning_rate 2e-3",
            "GPU_CHECK_SCREEN_MINUTES": "0.05",
            "HF_SEQ2SEQ_FRA_ENG": str(synthetic_fra_txt),
            "PYTHON": sys.executable,
        },
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "--variant lr2e-3=gpu --learning_rate 2e-3" in done.stdout
    screen = json.loads((tmp_path / "dry-run-cpu_gpu_screen.json").read_text())
    assert list(screen["variants"]) == ["base", "lr2e-3"] and screen["budget"]["minutes"] == 0.05
    runs = {run["variant"]: run for run in screen["runs"]}
    for name in ("base", "lr2e-3"):
        report = json.loads((tmp_path / f"dry-run-cpu_gpu_screen_{name}-seed0.json").read_text())
        assert report["training"]["preset"] == "gpu" and report["bleu"] == runs[name]["bleu"]
    assert json.loads((tmp_path / "dry-run-cpu_gpu_check_seconds.json").read_text())["screen"] > 0


def test_the_trainer_counts_the_parameters_of_its_flops_estimate_once(tmp_path, monkeypatch):
    """The Trainer adds each step's FLOPs (6 x tokens x parameters outside the embeddings) to `total_flos`: the same
    figure, but without walking every module at every step (host time a GPU's step would wait on)."""
    model = TransformerMTForConditionalGeneration(tiny_config(vocab_size=TINY_VOCAB))
    _, data_args, training_args, _ = parse_args(
        ["--preset", "tiny", "--output_dir", str(tmp_path), "--eval_strategy", "no", "--save_strategy", "no"]
    )
    trainer = build_trainer(
        model, tiny_tokenizer(), data_args, training_args, Dataset.from_list([]), None, None
    )
    counted = []
    num_parameters = type(model).num_parameters

    def counting(self, *args, **kwargs):
        counted.append(kwargs)
        return num_parameters(self, *args, **kwargs)

    monkeypatch.setattr(type(model), "num_parameters", counting)
    batch = {"input_ids": torch.ones(4, 7, dtype=torch.long)}
    flops = [trainer.floating_point_ops(batch) for _ in range(3)]
    assert flops == [6 * 4 * 7 * num_parameters(model, exclude_embeddings=True)] * 3
    assert counted == [{"exclude_embeddings": True}]
    assert trainer.floating_point_ops({"labels": torch.ones(4, 7, dtype=torch.long)}) == 0


def test_a_step_of_the_gpu_recipe_launches_no_more_operators_than_counted():
    """The operators a training step of the base model's layers dispatches as on a GPU (each at least one kernel
    launch: host time that the GPU's step waits on when batches are small), counted as docs/training.md counts them
    (measurements/profile_training_step.py). A change to the model that launches more shows here, not only in a GPU's
    profile. The counts depend on the layers, not on the sizes."""
    script = runpy.run_path(str(ROOT / "measurements" / "profile_training_step.py"))
    config = tiny_config(
        vocab_size=200, d_model=32, encoder_ffn_dim=64, decoder_ffn_dim=64, encoder_layers=6, decoder_layers=6,
        dropout=0.3, normalize_before=True, label_smoothing=0.1,
    )  # fmt: skip
    batch = script["make_token_batches"](1, 300, 200, "cpu", seed=0)[0]
    phases, reads = script["counted_step"](config, batch, fused=True)
    counts = {phase: sum(ops.values()) for phase, ops in phases.items()}
    assert counts["forward"] <= 503 and counts["backward"] <= 564, counts
    assert counts["clip"] <= 8 and counts["optimizer"] <= 6, counts
    assert not reads
    # the gradients of each projection's parts (12 self-attentions' Q, K, V; 6 cross-attentions' K, V) join with
    # one concatenation each, without stacking heads and copying them into place
    assert phases["backward"]["aten.cat"] == 18 and not phases["backward"]["aten.stack"]

"""The `cpu` preset's training step on this CPU, where its time goes and its share of the matmul peak.

    python measurements/cpu_training_step.py --data_path ../shared/data/fra-eng/fra.txt [--steps 300]
        [--profile-steps 30] [--json out.json] [preset flags, e.g. --max_tokens_per_batch 1200]

It builds the run as `hf-seq2seq train --preset cpu` does (the same data, tokenizer, model, collator, sampler and
Trainer; flags after the script's own go to the preset), then, on the same batches, taken from the Trainer's
training loader:

1. the bare step, timed by phase: the loader's next batch, forward, backward, gradient clipping, the optimizer and
   the learning-rate schedule (the CPU runs each phase in the caller's thread, so wall time is the phase's time);
2. `Trainer.train` for the same number of steps, without evaluation or checkpoints: its time over the bare
   step's is the Trainer's own per step (callbacks, logging, the budget's bookkeeping, the progress bar);
3. a `torch.profiler` table of a few bare steps: the operators' self time per step, of it the matrix products'
   (mm, addmm, bmm) and attention's (sdpa's kernels), and the operators that take most (the profiled steps run
   slower than the timed ones: the profiler's own cost; what the operators' time leaves of the step is Python's
   and autograd's);
4. the matmul peak of this process (2048 x 2048, the best of 20, fp32, and bf16 where the CPU multiplies bf16 in
   hardware) and the step's share of it, its FLOPs counted as issue 86 counts them: 6 x the parameters each padded
   token passes through (source tokens: the encoder's layers; target tokens: the decoder's layers and the output
   layer).

Steps/s, training tokens/s and the share of the peak are the Trainer's (what `hf-seq2seq train` runs), over all
the batches it trained on. Evaluation inside the budget is read from a finished run's `trainer_state.json`
(`--run`).
"""

import argparse
import contextlib
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

import torch
from torch.profiler import ProfilerActivity, profile

from hf_seq2seq.acceleration.attention_kernels import parse_sdpa_backends, sdpa_backends
from hf_seq2seq.acceleration.compilation import compiled_for_training, sizes_apart
from hf_seq2seq.acceleration.cpu_features import cpu_has_matmuls
from hf_seq2seq.benchmarks.measuring import matmul_peak_flops, tokens
from hf_seq2seq.cli.train import parse_args
from hf_seq2seq.training import recipe

MATMULS = ("aten::mm", "aten::addmm", "aten::bmm")  # the Linear layers' products, forward and backward
ATTENTION = ("aten::_scaled_dot_product",)  # sdpa's kernels (their products inside)


def counted_flops(model: torch.nn.Module, batch: dict) -> int:
    """Issue 86's FLOPs of a step: 6 x parameters passed x padded tokens, encoder layers for the source's padded
    tokens, decoder layers and the output layer for the target's (embeddings and attention scores not counted)."""
    inner = model.get_encoder(), model.get_decoder()
    encoder, decoder = (sum(p.numel() for p in stack.layers.parameters()) for stack in inner)
    output = model.get_output_embeddings().weight.numel()
    return 6 * (batch["input_ids"].numel() * encoder + batch["labels"].numel() * (decoder + output))


def bare_steps(trainer, batches: list[dict], model: torch.nn.Module | None = None) -> dict[str, list[float]]:
    """Each phase's seconds on each batch: forward, backward, clipping, optimizer (with the schedule), of the
    Trainer's model or `model` (a compiled one sharing its parameters)."""
    model = model or trainer.model
    optimizer, scheduler = trainer.optimizer, trainer.lr_scheduler
    model.train()
    phases = {name: [] for name in ("forward", "backward", "clip", "optimizer")}
    autocast = torch.autocast("cpu", dtype=torch.bfloat16, enabled=trainer.args.bf16)
    for batch in batches:
        t0 = time.perf_counter()
        with autocast:
            loss = model(**batch).loss
        t1 = time.perf_counter()
        loss.backward()
        t2 = time.perf_counter()
        torch.nn.utils.clip_grad_norm_(model.parameters(), trainer.args.max_grad_norm)
        t3 = time.perf_counter()
        optimizer.step()
        scheduler.step()
        optimizer.zero_grad(set_to_none=True)
        t4 = time.perf_counter()
        for name, seconds in zip(phases, (t1 - t0, t2 - t1, t3 - t2, t4 - t3), strict=True):
            phases[name].append(seconds)
    return phases


def profiled(trainer, batches: list[dict]) -> tuple[dict[str, float], list[tuple[str, float, int]]]:
    """Milliseconds per step of the operators' self time over `batches`: all, the matrix products', attention's;
    and the 15 operators with most self time: (name, milliseconds per step, calls per step)."""
    with profile(activities=[ProfilerActivity.CPU]) as prof:
        bare_steps(trainer, batches)
    events = prof.key_averages()
    n = len(batches)
    per_step = {
        f"{kind}_ms": sum(event.self_cpu_time_total for event in events if event.key.startswith(names))
        / 1e3
        / n
        for kind, names in (("operators", ("",)), ("matmul", MATMULS), ("attention", ATTENTION))
    }
    top = sorted(events, key=lambda event: event.self_cpu_time_total, reverse=True)[:15]
    rows = [(event.key, event.self_cpu_time_total / 1e3 / n, event.count // n) for event in top]
    return per_step, rows


def budget_overheads(run: Path) -> dict:
    """Evaluation seconds and steps of a finished run (its newest checkpoint's trainer_state.json)."""
    state = json.loads(sorted(run.glob("checkpoint-*/trainer_state.json"))[-1].read_text())
    evaluations = [entry["eval_runtime"] for entry in state["log_history"] if "eval_runtime" in entry]
    return {"evaluations": len(evaluations), "evaluation_s": sum(evaluations), "steps": state["global_step"]}


def main() -> None:
    own = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    own.add_argument("--steps", type=int, default=300, help="timed steps (bare, then the Trainer's)")
    own.add_argument("--warmup", type=int, default=20, help="untimed steps before each timing")
    own.add_argument("--profile-steps", type=int, default=30)
    own.add_argument("--run", type=Path, help="a finished run's folder: its evaluations' time in the budget")
    own.add_argument("--json", type=Path)
    own.add_argument(
        "--compile",
        choices=("whole", "regions"),
        help="also time the bare step of the model compiled as `--torch_compile true` compiles it (regions: "
        "ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION=1), its first steps' seconds apart",
    )
    args, preset_flags = own.parse_known_args()
    with tempfile.TemporaryDirectory() as output_dir, contextlib.ExitStack() as stack:
        model_args, data_args, training_args, final_args = parse_args(
            ["--preset", "cpu", "--output_dir", output_dir, *preset_flags]
        )
        training_args.eval_strategy = training_args.save_strategy = "no"
        data_args.max_train_minutes, data_args.lr_decay_to_budget = 0, False  # no budget: `max_steps`
        training_args.warmup_steps = 100
        training_args.max_steps = args.warmup + args.steps
        training_args.disable_tqdm = True
        recipe.prepare_run(data_args, training_args, final_args)
        splits, tokenizer, tokenized = recipe.set_up_data(model_args, data_args, training_args, None)
        model = recipe.set_up_model(model_args, data_args, training_args, tokenizer, tokenized["train"])
        trainer = recipe.set_up_trainer(model, tokenizer, data_args, training_args, splits, tokenized)
        trainer.create_optimizer_and_scheduler(num_training_steps=training_args.max_steps)
        # as `recipe.run` trains: --sdpa_backends math, say, for every timing below
        stack.enter_context(sdpa_backends(parse_sdpa_backends(model_args.sdpa_backends)))
        loader = iter(trainer.get_train_dataloader())
        need = args.warmup + args.steps + args.profile_steps
        start = time.perf_counter()
        batches = [next(loader) for _ in range(need)]
        loading = (time.perf_counter() - start) / need
        warm, timed, profile_batches = (
            batches[: args.warmup],
            batches[args.warmup : args.warmup + args.steps],
            batches[args.warmup + args.steps :],
        )
        bare_steps(trainer, warm)
        phases = {name: statistics.mean(s) for name, s in bare_steps(trainer, timed).items()}
        operators, top = profiled(trainer, profile_batches)
        compiled = {}
        if args.compile:
            model_compiled = compiled_for_training(model, regions=args.compile == "regions")
            with sizes_apart(True):
                started = time.perf_counter()
                bare_steps(trainer, warm, model_compiled)
                compiled["compile_and_warmup_s"] = time.perf_counter() - started
                compiled_phases = bare_steps(trainer, timed, model_compiled)
            compiled |= {
                f"compiled_{name}_ms": 1e3 * statistics.mean(s) for name, s in compiled_phases.items()
            }
            compiled["compiled_bare_step_ms"] = sum(v for k, v in compiled.items() if k.endswith("_ms"))
        started = time.perf_counter()
        trainer.train()
        trainer_step = (time.perf_counter() - started) / training_args.max_steps
    bare = sum(phases.values())
    # the Trainer's loader deals the same batches from the start (the same sampler and seed): its steps trained on
    # the warm-up batches and the timed ones
    trained = warm + timed
    flops = statistics.mean(counted_flops(model, batch) for batch in trained)
    trained_tokens = statistics.mean(tokens(batch) for batch in trained)
    padded = statistics.mean(b["input_ids"].numel() + b["labels"].numel() for b in trained)
    peaks = {"fp32": matmul_peak_flops("cpu", None, n=2048, repeats=20)}
    if cpu_has_matmuls(torch.bfloat16):
        peaks["bf16"] = matmul_peak_flops("cpu", torch.bfloat16, n=2048, repeats=20)
    result = {
        "threads": torch.get_num_threads(),
        "bf16_autocast": bool(training_args.bf16),
        "max_tokens_per_batch": data_args.max_tokens_per_batch,
        "padded_tokens_per_step": padded,
        "training_tokens_per_step": trained_tokens,
        "counted_gflop_per_step": flops / 1e9,
        "loading_ms": 1e3 * loading,
        **{f"{name}_ms": 1e3 * seconds for name, seconds in phases.items()},
        "bare_step_ms": 1e3 * bare,
        "trainer_step_ms": 1e3 * trainer_step,
        **compiled,
        **{f"profiled_{name}": ms for name, ms in operators.items()},
        "steps_per_s": 1 / trainer_step,
        "training_tokens_per_s": trained_tokens / trainer_step,
        "gflop_per_s": flops / trainer_step / 1e9,
        **{f"{name}_peak_gflop_per_s": peak / 1e9 for name, peak in peaks.items()},
        **{f"share_of_{name}_peak": flops / trainer_step / peak for name, peak in peaks.items()},
        "top_operators": top,
    }
    if args.run:
        result["budget"] = budget_overheads(args.run)
    for key, value in result.items():
        if key != "top_operators":
            print(f"{key:34} {value:.4g}" if isinstance(value, float) else f"{key:34} {value}")
    print("operators with most self time (ms per step, calls per step):")
    for name, ms, calls in top:
        print(f"  {name:44} {ms:8.2f} {calls:6d}")
    if args.json:
        args.json.write_text(json.dumps(result, indent=1) + "\n")


if __name__ == "__main__":
    sys.exit(main())

"""An earlier commit of the package against the work tree, on this machine: the two take turns, so that a drift of
a busy machine falls on both alike. BEFORE is a commit (checked out into a temporary git worktree, removed after)
or the folder of a checkout.

    python measurements/ab.py BEFORE step [--repeats 9] [--batch-size 32]
    python measurements/ab.py BEFORE benchmark NAME RUNS OUT [benchmark flags...]
    python measurements/ab.py 6307576 benchmark cpu-avx2_layout 2 docs/bench --generate-only --repeats 7

`step`: the `cpu` preset's training step (forward, backward, AdamW) with the shipped model file of each, in one
process, taking turns on every batch (`measuring.seconds_in_turn`), with the same weights and batches. The model's
size is the preset's (`PRESETS["cpu"]`): d_model 256 in the A/Bs of docs/ before 2026-11-29, 192 since.

`benchmark`: `hf-seq2seq benchmark` of each in a process of its own, RUNS times in turn (before, after, after,
before, ...), with the same Python environment (the earlier commit's code first on PYTHONPATH); each run's table
and JSON go to OUT/NAME_{before,after}_runK.{txt,json}. Run it on a quiet machine.
"""

import argparse
import contextlib
import importlib.util
import os
import statistics
import subprocess
import sys
import tempfile
import types
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
SHIPPED = ("configuration_transformer_mt", "generation_transformer_mt", "modeling_transformer_mt")


@contextlib.contextmanager
def checkout(before: str) -> Iterator[Path]:
    """`before` as a folder: itself where it is one, else a detached git worktree of that commit, removed after."""
    if Path(before).is_dir():
        yield Path(before).resolve()
        return
    with tempfile.TemporaryDirectory() as parent:
        folder = Path(parent) / "before"
        git = ["git", "-C", str(ROOT), "worktree"]
        subprocess.run(
            [*git, "add", "--detach", "--force", str(folder), before], check=True, capture_output=True
        )
        try:
            yield folder
        finally:
            subprocess.run([*git, "remove", "--force", str(folder)], check=True)


def load_shipped(folder: Path) -> types.ModuleType:
    """The model file of the checkout `folder` (with its siblings), imported as a package of its own."""
    files = folder / "hf_seq2seq" / "models" / "transformer_mt"
    package = types.ModuleType("before_transformer_mt")
    package.__path__ = [str(files)]
    sys.modules[package.__name__] = package
    for name in SHIPPED:
        spec = importlib.util.spec_from_file_location(f"{package.__name__}.{name}", files / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules[f"{package.__name__}.modeling_transformer_mt"]


def cpu_preset_network() -> dict:
    """The `TransformerMTConfig` fields of the `cpu` preset's network (`PRESETS["cpu"]`), its label smoothing too."""
    from hf_seq2seq.training.presets import PRESETS

    preset = PRESETS["cpu"]
    return dict(
        vocab_size=preset["vocab_size"],
        d_model=preset["d_model"],
        encoder_layers=preset["encoder_layers"],
        decoder_layers=preset["decoder_layers"],
        encoder_attention_heads=preset["attention_heads"],
        decoder_attention_heads=preset["attention_heads"],
        encoder_ffn_dim=preset["ffn_dim"],
        decoder_ffn_dim=preset["ffn_dim"],
        dropout=preset["dropout"],
        normalize_before=preset["normalize_before"],
        label_smoothing=preset["label_smoothing_factor"],
    )


def training_step(before: Path, repeats: int, batch_size: int) -> None:
    """Prints the tokens/s of each training step, its passes, and the ratio of their median seconds."""
    import torch

    from hf_seq2seq.benchmarks.measuring import make_batches, seconds_in_turn, tokens, train_step_fn
    from hf_seq2seq.models.transformer_mt import modeling_transformer_mt

    config = cpu_preset_network()
    shipped = load_shipped(before)
    torch.manual_seed(0)
    after_model = modeling_transformer_mt.TransformerMTForConditionalGeneration(
        modeling_transformer_mt.TransformerMTConfig(**config)
    )
    before_model = shipped.TransformerMTForConditionalGeneration(shipped.TransformerMTConfig(**config))
    before_model.load_state_dict(after_model.state_dict())
    batches = make_batches(8, batch_size, config["vocab_size"], "cpu", seed=1)
    fns = {
        "before": train_step_fn(before_model, "cpu", None),
        "after": train_step_fn(after_model, "cpu", None),
    }
    runs = seconds_in_turn(fns, batches, repeats, "cpu", by_batch=True)
    n_tokens = sum(tokens(batch) for batch in batches)
    for name, seconds in runs.items():
        median = statistics.median(seconds)
        passes = ", ".join(f"{s:.2f}" for s in seconds)
        print(f"{name}: {n_tokens / median:,.0f} tokens/s (median {median:.3f} s a pass; passes {passes})")
    ratio = statistics.median(runs["after"]) / statistics.median(runs["before"])
    print(f"after / before seconds: {ratio:.3f}")


def benchmarks(before: Path, name: str, runs: int, out: Path, flags: list[str]) -> None:
    """`hf-seq2seq benchmark FLAGS` of each checkout in turn, printed and written to `out`."""
    out.mkdir(parents=True, exist_ok=True)
    for run in range(1, runs + 1):
        for label in ("before", "after") if run % 2 else ("after", "before"):
            folder = before if label == "before" else ROOT
            stem = out / f"{name}_{label}_run{run}"
            commit = subprocess.run(
                ["git", "-C", str(folder), "rev-parse", "--short", "HEAD"], capture_output=True, text=True
            ).stdout.strip()
            print(f"== {label} ({commit}{', work tree' if label == 'after' else ''})", flush=True)
            command = [sys.executable, "-m", "hf_seq2seq", "benchmark", *flags, "--json", f"{stem}.json"]
            env = os.environ | {"PYTHONPATH": str(folder)}
            with open(f"{stem}.txt", "w", encoding="utf-8") as table:
                with subprocess.Popen(
                    command, cwd=folder, env=env, stdout=subprocess.PIPE, text=True
                ) as process:
                    for line in process.stdout:
                        print(line, end="", flush=True)
                        table.write(line)
            if process.returncode:
                sys.exit(f"the benchmark of {label} failed (exit status {process.returncode})")


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("before", help="the earlier commit, or the folder of a checkout of it")
    measures = parser.add_subparsers(dest="measure", required=True)
    step = measures.add_parser("step", help="the cpu preset's training step, in one process")
    step.add_argument("--repeats", type=int, default=9)
    step.add_argument("--batch-size", type=int, default=32, help="pairs a batch (the cpu preset's)")
    bench = measures.add_parser(
        "benchmark", help="`hf-seq2seq benchmark`, in a process each", allow_abbrev=False
    )
    bench.add_argument("name", help="the stem of the files written")
    bench.add_argument("runs", type=int, help="benchmarks of each")
    bench.add_argument("out", type=Path, help="the folder the tables and JSON go to")
    args, flags = parser.parse_known_args()
    if flags and args.measure != "benchmark":
        parser.error(f"unrecognized arguments: {' '.join(flags)}")
    with checkout(args.before) as before:
        if args.measure == "step":
            training_step(before, args.repeats, args.batch_size)
        else:
            benchmarks(before, args.name, args.runs, args.out.resolve(), flags)


if __name__ == "__main__":
    main()

"""The `cpu` preset's training step (forward, backward, AdamW) with the shipped model file of another checkout
against the work tree's, in one process, the two taking turns on every batch (`measuring.seconds_in_turn`), so
that a busy machine's drift falls on both alike. The weights and batches are the same for both. The model's size
is the preset's (`PRESETS["cpu"]`): d_model 256 in the A/Bs of docs/ before 2026-11-29, 192 since.

    git worktree add --detach /tmp/before COMMIT
    python scripts/ab_training_step.py /tmp/before --repeats 9
"""

import argparse
import importlib.util
import statistics
import sys
import types
from pathlib import Path

import torch

from hf_seq2seq.benchmarks.measuring import make_batches, seconds_in_turn, tokens, train_step_fn
from hf_seq2seq.models.transformer_mt import modeling_transformer_mt
from hf_seq2seq.models.transformer_mt.configuration_transformer_mt import TransformerMTConfig
from hf_seq2seq.training.presets import PRESETS

SHIPPED = ("configuration_transformer_mt", "generation_transformer_mt", "modeling_transformer_mt")
_PRESET = PRESETS["cpu"]
CPU_PRESET = dict(
    vocab_size=_PRESET["vocab_size"],
    d_model=_PRESET["d_model"],
    encoder_layers=_PRESET["encoder_layers"],
    decoder_layers=_PRESET["decoder_layers"],
    encoder_attention_heads=_PRESET["attention_heads"],
    decoder_attention_heads=_PRESET["attention_heads"],
    encoder_ffn_dim=_PRESET["ffn_dim"],
    decoder_ffn_dim=_PRESET["ffn_dim"],
    dropout=_PRESET["dropout"],
    normalize_before=_PRESET["normalize_before"],
    label_smoothing=_PRESET["label_smoothing_factor"],
)


def load_shipped(checkout: Path) -> types.ModuleType:
    """The model file of `checkout` (with its siblings), imported as a package of its own."""
    folder = checkout / "hf_seq2seq" / "models" / "transformer_mt"
    package = types.ModuleType("before_transformer_mt")
    package.__path__ = [str(folder)]
    sys.modules[package.__name__] = package
    for name in SHIPPED:
        spec = importlib.util.spec_from_file_location(f"{package.__name__}.{name}", folder / f"{name}.py")
        module = importlib.util.module_from_spec(spec)
        sys.modules[spec.name] = module
        spec.loader.exec_module(module)
    return sys.modules[f"{package.__name__}.modeling_transformer_mt"]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("before", type=Path, help="a checkout of the other commit")
    p.add_argument("--repeats", type=int, default=9)
    p.add_argument("--batch-size", type=int, default=32, help="pairs a batch (the cpu preset's)")
    args = p.parse_args()
    before = load_shipped(args.before)
    torch.manual_seed(0)
    after_model = modeling_transformer_mt.TransformerMTForConditionalGeneration(
        TransformerMTConfig(**CPU_PRESET)
    )
    before_model = before.TransformerMTForConditionalGeneration(before.TransformerMTConfig(**CPU_PRESET))
    before_model.load_state_dict(after_model.state_dict())
    batches = make_batches(8, args.batch_size, CPU_PRESET["vocab_size"], "cpu", seed=1)
    fns = {
        "before": train_step_fn(before_model, "cpu", None),
        "after": train_step_fn(after_model, "cpu", None),
    }
    runs = seconds_in_turn(fns, batches, args.repeats, "cpu", by_batch=True)
    n_tokens = sum(tokens(batch) for batch in batches)
    for name, seconds in runs.items():
        median = statistics.median(seconds)
        passes = ", ".join(f"{s:.2f}" for s in seconds)
        print(f"{name}: {n_tokens / median:,.0f} tokens/s (median {median:.3f} s a pass; passes {passes})")
    ratio = statistics.median(runs["after"]) / statistics.median(runs["before"])
    print(f"after / before seconds: {ratio:.3f}")


if __name__ == "__main__":
    main()

"""What a training step of the `gpu` preset's model asks of the device.

Counted on the CPU (the default): the operators it dispatches (each non-view operator is at least one kernel
launch on a GPU) in the forward, the backward and the optimizer step, with AdamW as a loop over tensors
(`foreach`, the Trainer's `adamw_torch`) and fused (`adamw_torch_fused`), and the reads of a tensor's value on
the host (each a wait for the GPU). The model runs as it does on a GPU (`fixed_shapes`, and attention through
sdpa, which CPU training in bf16 leaves for the eager path), with autocast in bf16. The CPU's dropout is four
operators where CUDA's is one (`native_dropout`).

Measured with `--timed` (on a GPU: `--device cuda`): the step as the `gpu` preset runs it (bf16 autocast, fused
AdamW, gradient clipping) on batches by tokens, timed without the profiler twice over the same batches: first each
batch's shape is new (what a training's first epoch meets: on a GPU, new attention plans and allocations), then
each has been seen (every later epoch, as the batches are cut once). Then the seen batches once more under
`torch.profiler`: the kernels launched a step, the share of the step's wall time the GPU spends in kernels, the
attention kernels (which SDPA backend runs), and the host reads. `--sdpa-backends` restricts
`scaled_dot_product_attention` to the named backends, in that order of preference (as `hf-seq2seq train
--sdpa_backends` does), to compare them. `--compile full` times the model `torch.compile`d as `hf-seq2seq train
--torch_compile true` compiles it (dynamic shapes), `--compile regional` each of its layers alone (accelerate's regional
compilation, `ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION=1`); the warm-up pass then holds the compilation, and its
seconds are reported apart. `--cuda-graphs` replays the forward and backward as CUDA graphs (as `hf-seq2seq train
--cuda_graphs true`): the first pass runs eagerly, a second records each shape's graphs (its seconds reported
apart), the third replays them.

    python measurements/profile_training_step.py                       # the base model, a batch of 1,000 tokens
    python measurements/profile_training_step.py --d-model 256 --layers 3 --ffn-dim 1024 --heads 4
    python measurements/profile_training_step.py --device cuda --timed --batch-tokens 25000 --json profile.json
    python measurements/profile_training_step.py --device cuda --timed --batch-tokens 25000 --sdpa-backends flash,efficient
    python measurements/profile_training_step.py --device cuda --timed --batch-tokens 25000 --compile regional
"""

import argparse
import json
from collections import Counter
from unittest import mock

import torch
from torch.profiler import ProfilerActivity, profile
from torch.utils._python_dispatch import TorchDispatchMode

from hf_seq2seq.acceleration.attention_kernels import sdpa_backends
from hf_seq2seq.acceleration.compilation import compiled_for_training, sizes_apart
from hf_seq2seq.acceleration.cuda_graphs import GraphedTraining
from hf_seq2seq.benchmarks.measuring import make_token_batches, timed, tokens
from hf_seq2seq.cli._common import sdpa_backends_argument
from hf_seq2seq.models.transformer_mt import modeling_transformer_mt
from hf_seq2seq.models.transformer_mt.configuration_transformer_mt import TransformerMTConfig
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import TransformerMTForConditionalGeneration

# `_unsafe_view` is a view whose schema does not say so (its result is not marked as aliasing its input): torch
# 2.15's linear on a 3-D input reshapes its output with it where earlier releases used `view`
UNMARKED_VIEWS = {torch.ops.aten._unsafe_view.default}


class Dispatched(TorchDispatchMode):
    """Counts the operators dispatched below autograd, views apart (they launch no kernel)."""

    def __init__(self):
        super().__init__()
        self.ops: Counter[str] = Counter()

    def __torch_dispatch__(self, func, types, args=(), kwargs=None):
        if not func.is_view and func not in UNMARKED_VIEWS:
            self.ops[str(func.overloadpacket)] += 1
        return func(*args, **(kwargs or {}))


def host_reads() -> tuple[Counter, list]:
    """Patches that count `item`, `tolist`, `__bool__`, ... calls on tensors."""
    reads: Counter[str] = Counter()
    patches = []
    for name in ("item", "tolist", "numpy", "__bool__", "__int__", "__float__"):
        original = getattr(torch.Tensor, name)

        def read(tensor, *args, _name=name, _original=original, **kwargs):
            reads[_name] += 1
            return _original(tensor, *args, **kwargs)

        patches.append(mock.patch.object(torch.Tensor, name, read))
    return reads, patches


def counted_step(config: TransformerMTConfig, batch: dict, fused: bool) -> tuple[dict[str, Counter], Counter]:
    """The operators of a training step as on a GPU (see the module's text), by phase (forward, backward, clip,
    optimizer), and the host reads of the whole step: the second step's, as the first also creates the optimizer's
    state. AdamW `fused`, or as a loop over tensors (`foreach`)."""
    torch.manual_seed(0)
    model = TransformerMTForConditionalGeneration(config).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=fused or None, foreach=not fused)
    reads, patches = host_reads()
    phases = {}
    with (
        mock.patch.object(modeling_transformer_mt, "fixed_shapes", lambda tensor: True),
        mock.patch.object(modeling_transformer_mt, "cpu_training_in_reduced_precision", lambda *args: False),
    ):
        for patch in patches:
            patch.start()
        try:
            for step, phase in enumerate(("forward", "backward", "clip", "optimizer") * 2):
                with Dispatched() as counted:
                    if phase == "forward":
                        with torch.autocast("cpu", dtype=torch.bfloat16):
                            loss = model(**batch).loss
                    elif phase == "backward":
                        loss.backward()
                    elif phase == "clip":
                        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
                    else:
                        optimizer.step()
                        optimizer.zero_grad(set_to_none=True)
                if step >= 4:
                    phases[phase] = counted.ops
                else:
                    reads.clear()
        finally:
            for patch in patches:
                patch.stop()
    return phases, reads


def timed_step(
    config: TransformerMTConfig,
    device: str,
    batch_tokens: int,
    steps: int,
    backends: list[str] | None = None,
    compiled: str | None = None,
    compile_backend: str = "inductor",
    compile_mode: str | None = None,
    cuda_graphs: bool = False,
) -> dict:
    """The `--timed` figures of the preset's step on `device` (see the module's text)."""
    torch.manual_seed(0)
    model = TransformerMTForConditionalGeneration(config).to(device).train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    if compiled:
        model = compiled_for_training(model, compile_backend, compile_mode, regions=compiled == "regional")
    forward = GraphedTraining(model) if cuda_graphs else model
    batches = make_token_batches(steps + 3, batch_tokens, config.vocab_size, device, seed=0)
    warm_up, measured = batches[:3], batches[3:]
    n_tokens = sum(tokens(batch) for batch in measured)

    def step(batch: dict) -> None:
        with torch.autocast(device.split(":")[0], dtype=torch.bfloat16):
            loss = forward(**batch).loss
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    with sdpa_backends(backends), sizes_apart(compiled is not None):
        # warm-up: the optimizer's state, the allocator's first blocks, the kernels' choices, the compilation
        warm_up_s = timed(step, warm_up, device)
        new_shapes = timed(step, measured, device)
        # with CUDA graphs, a shape's second step records its graphs: timed apart, then they replay
        recording_s = timed(step, measured, device) if cuda_graphs else None
        seen_shapes = timed(step, measured, device)
        reads, patches = host_reads()
        activities = [ProfilerActivity.CPU] + ([ProfilerActivity.CUDA] if device.startswith("cuda") else [])
        for patch in patches:
            patch.start()
        try:
            with profile(activities=activities, acc_events=True) as profiler:
                profiled_seconds = timed(step, measured, device)
        finally:
            for patch in patches:
                patch.stop()
    kernels = [e for e in profiler.key_averages() if e.device_type == torch.autograd.DeviceType.CUDA]
    attention_words = ("flash", "fmha", "attention", "efficient", "cudnn", "sdpa")
    return {
        "device": torch.cuda.get_device_name() if device.startswith("cuda") else "cpu",
        "torch": torch.__version__,
        "sdpa_backends": ",".join(backends) if backends else "default",
        "compile": f"{compiled} ({compile_backend}{f', {compile_mode}' if compile_mode else ''}, dynamic shapes)"
        if compiled
        else None,
        "cuda_graphs": cuda_graphs,
        "warm_up_s": warm_up_s,  # 3 batches: with --compile, the compilation
        "recording_s": recording_s,  # with --cuda-graphs: the steps that recorded the measured batches' graphs
        "batch_tokens": batch_tokens,
        "sentences_per_batch": [len(batch["input_ids"]) for batch in measured],
        "train_tokens_per_s": n_tokens / seen_shapes,
        "ms_per_step": 1000 * seen_shapes / steps,
        "new_shapes_train_tokens_per_s": n_tokens / new_shapes,
        "new_shapes_ms_per_step": 1000 * new_shapes / steps,
        "profiled_ms_per_step": 1000 * profiled_seconds / steps,
        "kernels_per_step": sum(e.count for e in kernels) / steps,
        "kernel_busy_share": sum(e.self_device_time_total for e in kernels) / 1e6 / profiled_seconds,
        "attention_kernels": {
            e.key: e.count // steps for e in kernels if any(word in e.key.lower() for word in attention_words)
        },
        "top_kernels_ms_per_step": {
            e.key[:100]: e.self_device_time_total / 1000 / steps
            for e in sorted(kernels, key=lambda e: -e.self_device_time_total)[:10]
        },
        "host_reads_per_step": {name: n / steps for name, n in reads.items()},
    }


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--d-model", type=int, default=512)
    p.add_argument("--layers", type=int, default=6)
    p.add_argument("--heads", type=int, default=8)
    p.add_argument("--ffn-dim", type=int, default=2048)
    p.add_argument("--vocab-size", type=int, default=8000)
    p.add_argument("--batch-tokens", type=int, default=1000)
    p.add_argument("--device", default="cpu")
    p.add_argument("--timed", action="store_true", help="time and profile the step (see the module's text)")
    p.add_argument("--steps", type=int, default=10, help="--timed: batches timed (twice), then profiled")
    p.add_argument(
        "--sdpa-backends",
        type=sdpa_backends_argument,
        help="--timed: attention through these backends only, comma-separated in order of preference (flash, "
        "efficient, cudnn, math)",
    )
    p.add_argument("--compile", choices=("full", "regional"), help="--timed: the model torch.compile'd")
    p.add_argument("--compile-backend", default="inductor", help="--timed: torch.compile's backend")
    p.add_argument(
        "--compile-mode",
        help="--timed: torch.compile's mode, e.g. reduce-overhead (CUDA graphs, one per shape)",
    )
    p.add_argument(
        "--cuda-graphs",
        action="store_true",
        help="--timed: forward and backward replayed as CUDA graphs (as `hf-seq2seq train --cuda_graphs true`)",
    )
    p.add_argument("--json", help="--timed: also write the figures here")
    args = p.parse_args()
    config = TransformerMTConfig(
        vocab_size=args.vocab_size,
        d_model=args.d_model,
        encoder_layers=args.layers,
        decoder_layers=args.layers,
        encoder_attention_heads=args.heads,
        decoder_attention_heads=args.heads,
        encoder_ffn_dim=args.ffn_dim,
        decoder_ffn_dim=args.ffn_dim,
        dropout=0.3,
        normalize_before=True,
        label_smoothing=0.1,
    )
    if args.timed:
        figures = timed_step(
            config,
            args.device,
            args.batch_tokens,
            args.steps,
            args.sdpa_backends,
            args.compile,
            args.compile_backend,
            args.compile_mode,
            args.cuda_graphs,
        )
        print(json.dumps(figures, indent=2))
        if args.json:
            with open(args.json, "w") as f:
                json.dump(figures, f, indent=2)
        return
    batch = make_token_batches(1, args.batch_tokens, args.vocab_size, "cpu", seed=0)[0]
    print(f"batch of {tuple(batch['input_ids'].shape)} sources, {tuple(batch['labels'].shape)} targets")
    for fused in (False, True):
        phases, reads = counted_step(config, batch, fused)
        name = "adamw_torch_fused" if fused else "adamw_torch (foreach)"
        total = sum(sum(ops.values()) for ops in phases.values())
        counts = ", ".join(f"{phase} {sum(ops.values())}" for phase, ops in phases.items())
        print(f"{name}: {total} operators a step ({counts}); host reads: {dict(reads) or 'none'}")
        print(f"  most dispatched by the optimizer: {dict(phases['optimizer'].most_common(4))}")
        if not fused:
            top = (phases["forward"] + phases["backward"]).most_common(8)
            print("  most dispatched in forward + backward: " + ", ".join(f"{op} {n}" for op, n in top))


if __name__ == "__main__":
    main()

"""What the Trainer flags `--gradient_checkpointing` and `--torch_compile` give on this model
(`hf-seq2seq measure-training`): peak memory of a training step without and with activation checkpointing,
and training tokens/s of an eager and a `torch.compile`d model, at the sizes of
`hf_seq2seq.benchmarks.choices`; the measuring tools are in `hf_seq2seq.benchmarks.measuring`."""

import platform
from dataclasses import asdict, dataclass

import torch

from hf_seq2seq.acceleration.compilation import compiled_for_training, sizes_apart
from hf_seq2seq.benchmarks.choices import DTYPES, SIZES
from hf_seq2seq.benchmarks.measuring import (
    build_models,
    interleaved,
    make_batches,
    make_token_batches,
    peak_memory,
    timed,
    tokens,
    train_step_fn,
)


@dataclass(frozen=True)
class TrainingOptionsSettings:
    """What `measure_training_options` measures and how much: the flags of `hf-seq2seq measure-training`.

    Memory: peak memory of three training steps (forward, backward, AdamW) of `memory_batch_size` pairs at
    `memory_size` (default: the `gpu` preset's base model and batch), without and with checkpointing, each in
    a fresh process (see `hf_seq2seq.benchmarks.measuring.peak_memory` for what is measured on CPU and CUDA);
    not measured with `memory_size` None.
    Speed: training tokens/s of eager and compiled copies of one model at `compile_size` (`compiled_for_training`:
    dynamic shapes, whole or with `compile_regions` layer by layer, as `hf-seq2seq train` compiles, with
    `compile_backend` and `compile_mode`), with autocast to `dtype` (`DTYPES`: "bf16" as the `gpu` preset), after
    a full warm-up pass each, measured in turn (`repeats` timed passes, their median). The batches are
    `compile_batches` of `compile_batch_size` sentences, or with `compile_batch_tokens` batches by tokens as
    `--max_tokens_per_batch` makes them (each of another shape, as in training). `device` None: cuda if
    available, else cpu.
    """

    memory_size: str | None = "large"
    memory_batch_size: int = 256
    compile_size: str = "cpu"
    compile_batch_size: int = 128
    compile_batches: int = 8
    compile_batch_tokens: int | None = None
    compile_backend: str = "inductor"
    compile_mode: str | None = None
    compile_regions: bool = False
    dtype: str = "fp32"
    repeats: int = 5
    device: str | None = None


def measure_training_options(settings: TrainingOptionsSettings = TrainingOptionsSettings()) -> dict:
    """What the Trainer flags `--gradient_checkpointing` and `--torch_compile` give on this model, measured as
    `settings` says. The warm-up pass's seconds are reported too: for the compiled model they hold the
    compilation and the recompilations for new shapes, which a time-budgeted training pays out of its budget."""
    device = settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
    return {
        "device": device,
        "device_name": torch.cuda.get_device_name() if device.startswith("cuda") else platform.processor(),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "memory": _memory(settings, device) if settings.memory_size is not None else None,
        "compile": _speed(settings, device),
    }


def _memory(settings: TrainingOptionsSettings, device: str) -> dict:
    """Peak memory of a training step without and with activation checkpointing."""
    sizes, batch_size = SIZES[settings.memory_size], settings.memory_batch_size
    return {"size": settings.memory_size, "sizes": asdict(sizes), "batch_size": batch_size} | {
        key: peak_memory("ours", sizes, device, batch_size, None, checkpointing=on) / 2**20
        for key, on in (("without_checkpointing_mb", False), ("with_checkpointing_mb", True))
    }


def _speed(settings: TrainingOptionsSettings, device: str) -> dict:
    """Training tokens/s of an eager and a compiled copy of one model, and the seconds of their warm-up passes."""
    compile_sizes = SIZES[settings.compile_size]
    autocast_dtype = getattr(torch, DTYPES[settings.dtype]) if DTYPES[settings.dtype] else None
    eager = build_models(compile_sizes, device, names=("ours",))["ours"]
    compiled = compiled_for_training(
        build_models(compile_sizes, device, names=("ours",))["ours"],
        backend=settings.compile_backend,
        mode=settings.compile_mode,
        regions=settings.compile_regions,
    )
    vocab_size, batch_tokens = compile_sizes.vocab_size, settings.compile_batch_tokens
    if batch_tokens:
        batches = make_token_batches(settings.compile_batches, batch_tokens, vocab_size, device, seed=1)
    else:
        batches = make_batches(
            settings.compile_batches, settings.compile_batch_size, vocab_size, device, seed=1
        )
    steps = {
        "eager": train_step_fn(eager, device, autocast_dtype),
        "compiled": train_step_fn(compiled, device, autocast_dtype),
    }
    with sizes_apart(True):
        warm_up = {name: timed(step, batches, device) for name, step in steps.items()}
        seconds = interleaved(steps, batches, settings.repeats, device)
    n_tokens = sum(tokens(b) for b in batches)
    return {
        "size": settings.compile_size,
        "sizes": asdict(compile_sizes),
        "batch_size": None if batch_tokens else settings.compile_batch_size,
        "batch_tokens": batch_tokens,
        "sentences_per_batch": [len(b["input_ids"]) for b in batches],
        "dtype": settings.dtype,
        "backend": settings.compile_backend,
        "mode": settings.compile_mode,
        "regions": settings.compile_regions,
        "eager_tokens_per_s": n_tokens / seconds["eager"],
        "compiled_tokens_per_s": n_tokens / seconds["compiled"],
        "warm_up_seconds": warm_up,
    }


def format_training_options(result: dict) -> str:
    memory, speed = result["memory"], result["compile"]
    warm_up = speed["warm_up_seconds"]
    if speed["batch_tokens"]:
        batch = f"batches of up to {speed['batch_tokens']:,} tokens ({min(speed['sentences_per_batch'])}-"
        batch += f"{max(speed['sentences_per_batch'])} sentences)"
    else:
        batch = f"batch {speed['batch_size']}"
    lines = [
        f"device={result['device']} ({result['device_name'] or 'cpu'}), {result['threads']} threads, "
        f"torch {result['torch']}"
    ]
    if memory is not None:
        lines += [
            f"peak memory of a training step, size={memory['size']} {memory['sizes']}, "
            f"batch {memory['batch_size']}:",
            f"  without checkpointing  {memory['without_checkpointing_mb']:8,.0f} MB",
            f"  with checkpointing     {memory['with_checkpointing_mb']:8,.0f} MB",
        ]
    return "\n".join(
        lines
        + [
            f"training throughput, size={speed['size']} {speed['sizes']}, {batch}, {speed['dtype']}:",
            f"  eager                  {speed['eager_tokens_per_s']:8,.0f} tokens/s "
            f"(first pass {warm_up['eager']:.1f} s)",
            f"  torch.compile          {speed['compiled_tokens_per_s']:8,.0f} tokens/s "
            f"(first pass, compiling: {warm_up['compiled']:.1f} s; backend {speed['backend']}, "
            f"mode {speed['mode'] or 'default'})",
        ]
    )

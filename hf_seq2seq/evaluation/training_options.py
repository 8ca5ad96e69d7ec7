"""What the Trainer flags `--gradient_checkpointing` and `--torch_compile` give on this model
(`hf-seq2seq measure-training`): peak memory of a training step without and with activation checkpointing,
and training tokens/s of an eager and a `torch.compile`d model, at the sizes of
`hf_seq2seq.evaluation.benchmark_choices`; the measuring tools are in `hf_seq2seq.evaluation.measuring`."""

import platform
from dataclasses import asdict

import torch

from hf_seq2seq.evaluation.benchmark_choices import SIZES
from hf_seq2seq.evaluation.measuring import (
    build_models,
    interleaved,
    make_batches,
    peak_memory,
    timed,
    tokens,
    train_step_fn,
)


def measure_training_options(
    memory_size: str = "large",
    memory_batch_size: int = 256,
    compile_size: str = "cpu",
    compile_batch_size: int = 128,
    compile_batches: int = 8,
    repeats: int = 5,
    device: str | None = None,
) -> dict:
    """What the Trainer flags `--gradient_checkpointing` and `--torch_compile` give on this model.

    Memory: peak memory of three training steps (forward, backward, AdamW) of `memory_batch_size` pairs at
    `memory_size` (default: the `gpu` preset's base model and batch), without and with checkpointing, each in
    a fresh process (see `hf_seq2seq.evaluation.measuring.peak_memory` for what is measured on CPU and CUDA).
    Speed: training tokens/s of eager and `torch.compile`d copies of one model at `compile_size`, after a
    full warm-up pass each (compilation and recompilation for new shapes excluded), measured in turn.
    """
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    memory_sizes = SIZES[memory_size]
    memory = {
        key: peak_memory("ours", memory_sizes, device, memory_batch_size, None, checkpointing=on) / 2**20
        for key, on in (("without_checkpointing_mb", False), ("with_checkpointing_mb", True))
    }
    compile_sizes = SIZES[compile_size]
    eager = build_models(compile_sizes, device, names=("ours",))["ours"]
    compiled = torch.compile(build_models(compile_sizes, device, names=("ours",))["ours"])
    batches = make_batches(compile_batches, compile_batch_size, compile_sizes.vocab_size, device, seed=1)
    steps = {"eager": train_step_fn(eager, device, None), "compiled": train_step_fn(compiled, device, None)}
    for step in steps.values():
        timed(step, batches, device)
    seconds = interleaved(steps, batches, repeats, device)
    n_tokens = sum(tokens(b) for b in batches)
    return {
        "device": device,
        "device_name": torch.cuda.get_device_name() if device.startswith("cuda") else platform.processor(),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "memory": {
            "size": memory_size,
            "sizes": asdict(memory_sizes),
            "batch_size": memory_batch_size,
            **memory,
        },
        "compile": {
            "size": compile_size,
            "sizes": asdict(compile_sizes),
            "batch_size": compile_batch_size,
            "eager_tokens_per_s": n_tokens / seconds["eager"],
            "compiled_tokens_per_s": n_tokens / seconds["compiled"],
        },
    }


def format_training_options(result: dict) -> str:
    memory, speed = result["memory"], result["compile"]
    return "\n".join(
        [
            f"device={result['device']} ({result['device_name'] or 'cpu'}), {result['threads']} threads, "
            f"torch {result['torch']}",
            f"peak memory of a training step, size={memory['size']} {memory['sizes']}, "
            f"batch {memory['batch_size']}:",
            f"  without checkpointing  {memory['without_checkpointing_mb']:8,.0f} MB",
            f"  with checkpointing     {memory['with_checkpointing_mb']:8,.0f} MB",
            f"training throughput, size={speed['size']} {speed['sizes']}, batch {speed['batch_size']}:",
            f"  eager                  {speed['eager_tokens_per_s']:8,.0f} tokens/s",
            f"  torch.compile          {speed['compiled_tokens_per_s']:8,.0f} tokens/s",
        ]
    )

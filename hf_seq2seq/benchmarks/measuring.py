"""The measuring tools the speed and memory benchmarks share (`hf_seq2seq.benchmarks.marian`,
`hf_seq2seq.benchmarks.exports`, `hf_seq2seq.benchmarks.training_options`).

Ours and Marian at identical sizes (`build_models`; the sizes: `hf_seq2seq.benchmarks.choices`),
synthetic padded batches (`make_batches`), a training step (`train_step_fn`), greedy `generate()` of a fixed
number of new tokens (`generate_fn`, and which decoding loop it runs: `generate_path`), interleaved timing with
medians (`interleaved`), FLOPs of a training step and the device's matmul peak, and the peak memory of a
training step in a fresh process (`peak_memory`).
"""

import contextlib
import copy
import multiprocessing
import queue as queues
import statistics
import time
from collections.abc import Callable

import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import MarianConfig, MarianMTModel

from hf_seq2seq.acceleration.cuda_graphs import GraphedTraining
from hf_seq2seq.benchmarks.choices import Sizes
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.models.transformer_mt.configuration_transformer_mt import TransformerMTConfig
from hf_seq2seq.models.transformer_mt.generation_transformer_mt import greedy_search_arguments
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import TransformerMTForConditionalGeneration

PAD, EOS = 0, 1


def build_models(
    sizes: Sizes, device: str, seed: int = 0, names: tuple[str, ...] = ("ours", "marian")
) -> dict[str, torch.nn.Module]:
    """Ours and Marian with the same sizes, tied embeddings, ReLU, no dropout (so steps are comparable)."""
    common = dict(
        vocab_size=sizes.vocab_size,
        d_model=sizes.d_model,
        encoder_layers=sizes.layers,
        decoder_layers=sizes.layers,
        encoder_attention_heads=sizes.heads,
        decoder_attention_heads=sizes.heads,
        encoder_ffn_dim=sizes.ffn_dim,
        decoder_ffn_dim=sizes.ffn_dim,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        activation_function="relu",
        max_position_embeddings=256,
        scale_embedding=True,
        pad_token_id=PAD,
        eos_token_id=EOS,
        decoder_start_token_id=PAD,
        tie_word_embeddings=True,
    )
    builders = {
        "ours": lambda: TransformerMTForConditionalGeneration(
            TransformerMTConfig(**common, attn_implementation="sdpa")
        ),
        "marian": lambda: MarianMTModel(
            MarianConfig(**common, share_encoder_decoder_embeddings=True, attn_implementation="sdpa")
        ),
    }
    models = {}
    for name in names:
        torch.manual_seed(seed)
        models[name] = builders[name]().to(device)
    return models


def make_batches(n: int, batch_size: int, vocab_size: int, device: str, seed: int = 0) -> list[dict]:
    """Padded batches with source and target lengths uniform in [5, 20] (targets end in eos)."""
    g = torch.Generator().manual_seed(seed)
    return [_random_batch(batch_size, (5, 20), vocab_size, device, g) for _ in range(n)]


def make_token_batches(n: int, max_tokens: int, vocab_size: int, device: str, seed: int = 0) -> list[dict]:
    """Batches by tokens, as `--max_tokens_per_batch` makes them: each of sentences of similar lengths (sources and
    targets in [L, L + 2], L uniform in [5, 18]), as many as fit in `max_tokens` padded source + target tokens."""
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n):
        shortest = int(torch.randint(5, 19, (), generator=g))
        batch_size = max(1, max_tokens // (2 * (shortest + 2)))
        batches.append(_random_batch(batch_size, (shortest, shortest + 2), vocab_size, device, g))
    return batches


def _random_batch(
    batch_size: int, lengths: tuple[int, int], vocab_size: int, device: str, g: torch.Generator
) -> dict:
    """A padded batch of random ids, source and target lengths uniform in `lengths` (inclusive)."""
    src_len = torch.randint(lengths[0], lengths[1] + 1, (batch_size,), generator=g)
    tgt_len = torch.randint(lengths[0], lengths[1] + 1, (batch_size,), generator=g)
    src = torch.randint(2, vocab_size, (batch_size, int(src_len.max())), generator=g)
    src_mask = torch.arange(src.shape[1])[None] < src_len[:, None]
    labels = torch.randint(2, vocab_size, (batch_size, int(tgt_len.max())), generator=g)
    labels[torch.arange(batch_size), tgt_len - 1] = EOS
    labels = labels.masked_fill(torch.arange(labels.shape[1])[None] >= tgt_len[:, None], -100)
    batch = {
        "input_ids": src.masked_fill(~src_mask, PAD),
        "attention_mask": src_mask.long(),
        "labels": labels,
    }
    return {k: v.to(device) for k, v in batch.items()}


def tokens(batch: dict) -> int:
    return int(batch["attention_mask"].sum() + (batch["labels"] != -100).sum())


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def autocast(device: str, dtype: torch.dtype | None):
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device.split(":")[0], dtype=dtype)


def train_step_fn(
    model: torch.nn.Module, device: str, dtype: torch.dtype | None, cuda_graphs: bool = False
) -> Callable[[dict], None]:
    """One training step (forward, backward, AdamW) at autocast `dtype`; AdamW fused, as the presets'
    `adamw_torch_fused` (one kernel for all parameters instead of several per parameter). With
    `cuda_graphs`, the forward and backward replay CUDA graphs (`GraphedTraining`, as `hf-seq2seq train
    --cuda_graphs true`): recorded the second time a batch shape comes."""
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
    forward = GraphedTraining(model) if cuda_graphs else model

    def step(batch: dict) -> None:
        with autocast(device, dtype):
            loss = forward(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def generate_kwargs(batch: dict, new_tokens: int, compiled: bool = False) -> dict:
    """The arguments of the measured `generate()` calls: plain greedy search of exactly `new_tokens` tokens; with
    `compiled`, through the opt-in compiled path (`Decoding(compile=True)`: a static cache and the decoding step
    compiled by `torch.compile`)."""
    kwargs = dict(
        input_ids=batch["input_ids"],
        attention_mask=batch["attention_mask"],
        do_sample=False,
        num_beams=1,
        min_new_tokens=new_tokens,
        max_new_tokens=new_tokens,
    )
    return kwargs | (Decoding(compile=True).generate_kwargs() if compiled else {})


def generate_path(model: torch.nn.Module, batch: dict, new_tokens: int, compiled: bool = False) -> str:
    """Which decoding loop `model.generate(**generate_kwargs(...))` runs: our hand-written greedy search (the
    default for plain greedy calls) or transformers' `GenerationMixin` greedy search (compiled or not)."""
    if compiled:
        return "GenerationMixin, static cache, torch.compile"
    if (
        isinstance(model, TransformerMTForConditionalGeneration)
        and greedy_search_arguments(model, None, None, generate_kwargs(batch, new_tokens)) is not None
    ):
        return "greedy_search (hand-written)"
    return "GenerationMixin"


def generate_fn(model: torch.nn.Module, new_tokens: int, dtype: torch.dtype | None, compiled: bool = False):
    """Greedy generation of exactly `new_tokens` tokens, with the weights stored in `dtype` (a copy), through
    the compiled path if `compiled`."""
    if dtype is not None:
        model = copy.deepcopy(model).to(dtype)
    model.eval()

    def run(batch: dict) -> None:
        with torch.inference_mode():
            out = model.generate(**generate_kwargs(batch, new_tokens, compiled))
        assert out.shape[1] == new_tokens + 1

    return run


def timed(fn: Callable[[dict], None], batches: list[dict], device: str) -> float:
    synchronize(device)
    start = time.perf_counter()
    for batch in batches:
        fn(batch)
    synchronize(device)
    return time.perf_counter() - start


def seconds_in_turn(
    fns: dict[str, Callable[[dict], None]],
    batches: list[dict],
    repeats: int,
    device: str,
    by_batch: bool = False,
) -> dict[str, list[float]]:
    """Seconds of each of `repeats` passes over `batches`, per model, measuring the models in turn, after one
    warm-up batch each.

    `by_batch`: the models take turns on every batch (the first one rotating) instead of on every pass, so that
    the machine's drift within a pass, several percent on a shared VM, falls on every model alike."""
    for fn in fns.values():
        timed(fn, batches[:1], device)
    runs: dict[str, list[float]] = {name: [] for name in fns}
    names = list(fns)
    for _ in range(repeats):
        if not by_batch:
            for name, fn in fns.items():
                runs[name].append(timed(fn, batches, device))
            continue
        seconds = dict.fromkeys(names, 0.0)
        for i, batch in enumerate(batches):
            first = i % len(names)
            for name in names[first:] + names[:first]:
                seconds[name] += timed(fns[name], [batch], device)
        for name, total in seconds.items():
            runs[name].append(total)
    return runs


def interleaved(
    fns: dict[str, Callable[[dict], None]],
    batches: list[dict],
    repeats: int,
    device: str,
    by_batch: bool = False,
) -> dict:
    """Median seconds per pass over `batches` of each model (`seconds_in_turn`)."""
    runs = seconds_in_turn(fns, batches, repeats, device, by_batch)
    return {name: statistics.median(r) for name, r in runs.items()}


def matmul_peak_flops(
    device: str, dtype: torch.dtype | None = None, n: int | None = None, repeats: int = 5
) -> float:
    """Best FLOP/s of an n x n matmul in `dtype` (None: fp32), the dtype a training step runs its matmuls in: the
    practical ceiling on this device (an fp32 peak would flatter a bf16 run many times over on a GPU). n defaults
    to 8192 on CUDA (smaller products do not reach a large GPU's peak) and 4096 elsewhere."""
    n = n or (8192 if device.startswith("cuda") else 4096)
    a, b = (torch.randn(n, n, device=device, dtype=dtype or torch.float32) for _ in range(2))
    a @ b
    best = float("inf")
    for _ in range(repeats):
        synchronize(device)
        start = time.perf_counter()
        a @ b
        synchronize(device)
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best


def step_flops(model: torch.nn.Module, batch: dict) -> int:
    """FLOPs of one forward + backward (what the step really executes: no work on ignored labels is counted
    for a model that skips it)."""
    model.train()
    with FlopCounterMode(display=False) as counter:
        model(**batch).loss.backward()
    model.zero_grad(set_to_none=True)
    return counter.get_total_flops()


def _resident_bytes(field: str = "VmRSS") -> int:
    """Resident set size (`VmRSS`) or its peak (`VmHWM`) of this process, from /proc (Linux). Unlike
    `ru_maxrss`, the peak belongs to this process image alone (not inherited through fork/exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not found in /proc/self/status")


def enable_activation_checkpointing(model: torch.nn.Module) -> None:
    """Activation checkpointing on every layer: `activation_checkpointing_enable()` from transformers 5.23 (where
    `gradient_checkpointing_enable()` is a deprecated alias that warns), `gradient_checkpointing_enable()` before."""
    enable = getattr(model, "activation_checkpointing_enable", None) or model.gradient_checkpointing_enable
    enable()


def _peak_memory_child(
    name: str, sizes: Sizes, device: str, batch_size: int, dtype, checkpointing: bool, queue
) -> None:
    cuda = device.startswith("cuda")
    base = 0 if cuda else _resident_bytes()  # after imports: what torch/transformers cost is left out
    model = build_models(sizes, device, names=(name,))[name]
    if checkpointing:
        enable_activation_checkpointing(model)
    batches = make_batches(3, batch_size, sizes.vocab_size, device)
    step = train_step_fn(model, device, dtype)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    for batch in batches:
        step(batch)
    synchronize(device)
    if cuda:
        queue.put(torch.cuda.max_memory_allocated())
    else:
        queue.put(_resident_bytes("VmHWM") - base)


def peak_memory(
    name: str,
    sizes: Sizes,
    device: str,
    batch_size: int,
    dtype: torch.dtype | None,
    checkpointing: bool = False,
) -> int:
    """Peak bytes of the model, its gradients, AdamW state and the activations of a training step, in a
    fresh process (CUDA: allocator peak; CPU: peak resident set size above the process's size after imports),
    with activation checkpointing on every layer if `checkpointing`."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(
        target=_peak_memory_child, args=(name, sizes, device, batch_size, dtype, checkpointing, queue)
    )
    process.start()
    deadline = time.monotonic() + 600
    while True:  # the child's figure, or an error as soon as it ends without one (an exception, a crash)
        try:
            peak = queue.get(timeout=1)
            break
        except queues.Empty:
            if process.exitcode is not None and queue.empty():  # once exited, what it put is in the pipe
                raise RuntimeError(
                    f"measuring the peak memory of {name!r} failed: its process ended with exit status "
                    f"{process.exitcode} (its error, if any, is printed above)"
                ) from None
            if time.monotonic() > deadline:
                process.terminate()
                raise TimeoutError(f"measuring the peak memory of {name!r} took over 600 s") from None
    process.join()
    return peak

"""Speed of our model against Hugging Face's `MarianMTModel` at identical sizes, on identical batches
(`hf-seq2seq benchmark`).

Marian is the same architecture (post-LN, sinusoidal positions, scaled and tied embeddings), so at equal
vocab, width, depth, heads and FFN size the two do the same arithmetic and the ratio measures the
implementation. Measurements are interleaved (ours, Marian, ours, ...) and repeated; medians are reported.

1. training throughput: forward + backward + AdamW step, non-pad (source + target) tokens per second, on
   batches of 64 sentences and, with `train_batch_tokens`, also on batches by tokens as `--max_tokens_per_batch`
   makes them (a GPU needs batches of thousands of tokens to be busy: at 64 sentences it mostly waits for kernel
   launches);
2. greedy `generate()` throughput at batch 64 and latency at batch 1 (a fixed number of new tokens), through
   plain `model.generate(...)` calls: ours then runs its hand-written greedy search (see `generate_path`), on
   packed weights as `hf-seq2seq translate` runs it (`hf_seq2seq.engines.packed_weights.use_packed_weights`);
   at batch 64 also ours without them, as a Hub user runs a folder loaded with `trust_remote_code` and no
   hf_seq2seq; optionally also ours at an opt-in inference precision (bf16 weights, int8 Linear layers) and
   through the opt-in compiled path (static cache, decoding step compiled by `torch.compile`);
3. peak memory of one training step (CUDA: allocator peak; CPU: resident-set growth, in a fresh process);
4. achieved training FLOP/s (counted with `torch.utils.flop_counter`) as a fraction of a measured matmul peak on
   the same device, in the dtype each model trains in (bf16 for a bf16 run; fp32 on a CPU that emulates bf16
   matmuls: `peak_dtype`), never above 1 (`share_of_peak`);
5. optionally, training of `torch.compile`d copies of both models (as `hf-seq2seq train --torch_compile true`),
   against both eager Marian and compiled Marian, their compilation timed apart.

This module says what is measured and makes the result of it; the runs it times are
`hf_seq2seq.benchmarks.marian_runs`', the share of the matmul peak `hf_seq2seq.benchmarks.peak`'s, the printed table
`hf_seq2seq.benchmarks.marian_table`'s. The measuring tools are in `hf_seq2seq.benchmarks.measuring`, the model
sizes in `hf_seq2seq.benchmarks.choices`; the benchmark of the CTranslate2 and ONNX exports is
`hf_seq2seq.benchmarks.exports`.
"""

import copy
import platform
from dataclasses import asdict, dataclass

import torch

from hf_seq2seq.acceleration.compilation import compiled_for_training
from hf_seq2seq.benchmarks.choices import DTYPES, SIZES, Sizes
from hf_seq2seq.benchmarks.marian_runs import (
    GENERATE_B64,
    HUB_USER,
    Turns,
    compiled_training,
    generate_paths,
    graphed_training,
    opt_in_models,
    stage,
    time_generation,
    time_training,
)
from hf_seq2seq.benchmarks.measuring import (
    build_models,
    make_batches,
    make_token_batches,
    matmul_peak_flops,
    peak_memory,
    step_flops,
    tokens,
)
from hf_seq2seq.benchmarks.peak import dtype_name, peak_dtype, peak_note, ratios, scaled_share, share_of_peak
from hf_seq2seq.engines.packed_weights import use_packed_weights


@dataclass(frozen=True)
class BenchmarkSettings:
    """What `run_benchmark` measures and how much: the flags of `hf-seq2seq benchmark` (see `run_benchmark`)."""

    size: str = "cpu"
    device: str | None = None  # None: cuda if available, else cpu
    dtype: str = "fp32"
    marian_dtype: str | None = None  # None: `dtype`
    train_batch_size: int = 64
    train_batches: int = 8
    generate_batch_size: int = 64
    new_tokens: int = 20
    latency_runs: int = 5
    repeats: int = 5
    measure_memory: bool = True
    measure_training: bool = True
    precisions: tuple[str, ...] = ()
    compiled: bool = False
    train_batch_tokens: int | None = None
    peak_size: int | None = None
    compiled_training: bool = False
    compile_backend: str = "inductor"
    compile_regions: bool = False
    compile_mode: str | None = None
    cuda_graphs: bool | None = None  # None: on a CUDA device

    def amounts(self) -> dict:
        """How much was measured: the result's "settings"."""
        names = (
            "train_batch_size",
            "train_batches",
            "generate_batch_size",
            "new_tokens",
            "latency_runs",
            "repeats",
        )
        return {name: getattr(self, name) for name in names} | {
            "train_batch_tokens": self.train_batch_tokens if self.measure_training else None
        }


def run_benchmark(settings: BenchmarkSettings = BenchmarkSettings()) -> dict:
    """Measure both models as `settings` says; returns a JSON-serialisable dict of figures and ours/Marian ratios.

    `dtype` (and `marian_dtype`, default the same) is fp32, or bf16/fp16: autocast for training (fp32 master
    weights), weights stored in that dtype for generation. `measure_training=False` measures generation only
    (the training figures are then None). Ours generates on packed weights (`use_packed_weights`, as the torch
    engine does); "ours_as_hub_user" is its batch-64 generate() without them, against Marian's. Each of
    `precisions` ("bf16", "int8": `hf_seq2seq.engines.torch_engine.set_precision` on a copy of ours) adds an
    opt-in generation row, measured with the others and compared with Marian at its own dtype, under "opt_in";
    `compiled` adds rows of the compiled path (`Decoding(compile=True)`) at fp32 and at each of `precisions`
    but int8 (torch.compile cannot trace int8's packed weights). A compiled row first runs once over all
    measured batches, so that compilation for each shape is not timed (that pass's wall time is reported as
    "compile_and_first_pass_s").

    `train_batch_tokens`: training is also measured on `train_batches` batches by tokens of at most this many
    padded tokens each (`make_token_batches`), under "token_batches". The matmul peak that the FLOP/s are divided
    by is measured in each model's dtype, on `peak_size` x `peak_size` matrices (default: `matmul_peak_flops`'s).

    `compiled_training`: training is also measured on compiled copies of both models (`compiled_for_training` with
    `compile_backend`, `compile_mode` and `compile_regions`: as `hf-seq2seq train --torch_compile true` compiles), on
    each batch set, under "compiled_training" (`marian_runs.compiled_training`).

    `cuda_graphs` (CUDA only; None: on a CUDA device): training of ours is also measured with its forward and backward replayed as CUDA
    graphs (`GraphedTraining`, as `hf-seq2seq train --cuda_graphs true`), beside both eager models, on each batch
    set, under "cuda_graphs" (`marian_runs.graphed_training`). Marian is not: its forward reads the device's data on the
    host (a wait that a graph cannot record).
    """
    device = settings.device or ("cuda" if torch.cuda.is_available() else "cpu")
    cuda_graphs = (
        device.startswith("cuda") and settings.measure_training
        if settings.cuda_graphs is None
        else settings.cuda_graphs
    )
    if cuda_graphs and not device.startswith("cuda"):
        raise ValueError(f"--cuda-graphs needs a CUDA device, not {device}")
    train_batch_tokens = settings.train_batch_tokens if settings.measure_training else None
    dtypes = {"ours": settings.dtype, "marian": settings.marian_dtype or settings.dtype}
    amp = {k: getattr(torch, DTYPES[v]) if DTYPES[v] else None for k, v in dtypes.items()}
    sizes = SIZES[settings.size]
    models = build_models(sizes, device)
    turns = Turns(models, amp, settings.repeats, device)
    compiled_models = {  # copies with the same initial weights, before ours is packed for generation
        f"{name} compiled": compiled_for_training(
            copy.deepcopy(model),
            backend=settings.compile_backend,
            mode=settings.compile_mode,
            regions=settings.compile_regions,
        )
        for name, model in models.items()
        if settings.compiled_training and settings.measure_training
    }
    train = make_batches(settings.train_batches, settings.train_batch_size, sizes.vocab_size, device, seed=1)
    gen = make_batches(1, settings.generate_batch_size, sizes.vocab_size, device, seed=2)
    single = make_batches(settings.latency_runs, 1, sizes.vocab_size, device, seed=3)
    train_s = None
    if settings.measure_training:
        what = f"training, {settings.train_batch_size} sentences a batch"
        train_s = time_training(what, turns, train)
    by_tokens, by_tokens_s = None, {}
    if train_batch_tokens:
        by_tokens = make_token_batches(
            settings.train_batches, train_batch_tokens, sizes.vocab_size, device, seed=4
        )
        what = f"training, batches of up to {train_batch_tokens} tokens"
        by_tokens_s = time_training(what, turns, by_tokens)
    batch_sets = {"sentences": (train, train_s), "token_batches": (by_tokens, by_tokens_s)}
    compiled_rows = (
        compiled_training(turns.with_models(compiled_models), batch_sets) if compiled_models else None
    )
    graphed_rows = graphed_training(turns, batch_sets) if cuda_graphs else None
    hub_user = copy.deepcopy(models["ours"])  # the same weights, its greedy search on plain Linear layers
    use_packed_weights(models["ours"])
    opt_in = opt_in_models(models["ours"], settings.precisions, settings.compiled)
    with stage("generate()"):
        gen_s, lat_s, first_pass_s = time_generation(
            turns, opt_in, hub_user, (gen, single), settings.new_tokens
        )
    generation = {name: _generation_figures(settings, gen_s[name], lat_s[name]) for name in lat_s}
    peak_dtypes = {name: peak_dtype(device, dtype) for name, dtype in amp.items()}
    with stage("the matmul peak"):
        peaks = {
            dtype: matmul_peak_flops(device, dtype, settings.peak_size) for dtype in set(peak_dtypes.values())
        }
    peak = {name: peaks[peak_dtypes[name]] for name in amp}
    with stage("FLOPs and memory"):
        figures = _model_figures(settings, sizes, device, models, amp, train, train_s, generation, peak)
    token_batches = _token_batch_figures(models, by_tokens, by_tokens_s, peak) if by_tokens else None
    eager_figures = {"sentences": figures, "token_batches": token_batches}
    if graphed_rows:
        _add_scaled_shares(graphed_rows, eager_figures, {"ours cuda graphs": "ours"})
    if compiled_rows:
        _add_scaled_shares(
            compiled_rows, eager_figures, {"ours compiled": "ours", "marian compiled": "marian"}
        )
    return _environment(sizes, device, dtypes, settings) | {
        "matmul_peak_flops_per_s": peak["ours"],
        "matmul_peak_dtype": dtype_name(peak_dtypes["ours"]),
        "matmul_peak_note": peak_note(device, amp["ours"], peak_dtypes["ours"]),
        "marian_matmul_peak_flops_per_s": peak["marian"],
        "token_batches": token_batches,
        "compiled_training": compiled_rows,
        "compiled_training_settings": {
            "backend": settings.compile_backend,
            "mode": settings.compile_mode,
            "dynamic": True,
            "regions": settings.compile_regions,
        }
        if compiled_rows
        else None,
        "cuda_graphs": graphed_rows,
        "generate_path": generate_paths(models, opt_in, hub_user, gen[0], settings.new_tokens),
        "ours": figures["ours"],
        "marian": figures["marian"],
        "ratio_ours_over_marian": ratios(figures["ours"], figures["marian"]),
        "opt_in": _opt_in_figures(generation, first_pass_s, opt_in),
        "ours_packed_weights": getattr(models["ours"], "greedy_search_linear", None) is not None,
        "ours_as_hub_user": _hub_user_figures(settings, gen_s[HUB_USER], generation["marian"]),
    }


def _add_scaled_shares(rows_by_set: dict, eager_figures: dict, rows: dict[str, str]) -> None:
    """The share of the matmul peak of each of `rows` (row name -> the eager model it ran faster than) in each
    batch set: the eager model's on the same batches (the same arithmetic) times how much faster it ran (the
    row's `over_eager`, or its set's where one row is measured against the eager ones)."""
    for set_name, set_rows in rows_by_set.items():
        for name, eager in rows.items():
            row = set_rows[name]
            speed_up = row["over_eager"] if "over_eager" in row else set_rows["over_eager"]
            row["train_mfu"] = scaled_share(eager_figures[set_name][eager]["train_mfu"], speed_up, name)


def _hub_user_figures(settings: BenchmarkSettings, gen_s: float, marian: dict[str, float]) -> dict:
    """The `HUB_USER` row: its batch-64 generate() throughput and that over Marian's."""
    new_tokens_per_s = settings.generate_batch_size * settings.new_tokens / gen_s
    return {
        GENERATE_B64: new_tokens_per_s,
        "ratio_over_marian": {GENERATE_B64: new_tokens_per_s / marian[GENERATE_B64]},
    }


def _generation_figures(settings: BenchmarkSettings, gen_s: float, lat_s: float) -> dict[str, float]:
    """A generate() row's figures from its median seconds over the batch-64 batch and the batch-1 sentences."""
    return {
        GENERATE_B64: settings.generate_batch_size * settings.new_tokens / gen_s,
        "latency_b1_ms_per_token": 1000 * lat_s / (settings.latency_runs * settings.new_tokens),
    }


def _model_figures(
    settings: BenchmarkSettings,
    sizes: Sizes,
    device: str,
    models: dict[str, torch.nn.Module],
    amp: dict[str, torch.dtype | None],
    train: list[dict],
    train_s: dict[str, float] | None,
    generation: dict[str, dict[str, float]],
    peak: dict[str, float],
) -> dict[str, dict]:
    """Each model's figures: training throughput, generation, FLOP/s and peak memory (the training ones None
    when training was not measured, `train_s` None)."""
    measured = train_s is not None
    if measured:
        n_tokens = sum(tokens(b) for b in train)
        flops = {k: sum(step_flops(m, b) for b in train) for k, m in models.items()}
    return {
        name: {
            "train_tokens_per_s": n_tokens / train_s[name] if measured else None,
            **generation[name],
            "train_flops_per_s": flops[name] / train_s[name] if measured else None,
            "train_mfu": share_of_peak(flops[name] / train_s[name], peak[name], name) if measured else None,
            "peak_memory_mb": peak_memory(name, sizes, device, settings.train_batch_size, amp[name]) / 2**20
            if settings.measure_memory and measured
            else None,
        }
        for name in models
    }


def _token_batch_figures(
    models: dict[str, torch.nn.Module],
    batches: list[dict],
    seconds: dict[str, float],
    peak: dict[str, float],
) -> dict:
    """Training on batches by tokens: their sentences and tokens, each model's tokens/s, FLOP/s and share of its
    matmul peak, and ours over Marian."""
    n_tokens = sum(tokens(b) for b in batches)
    figures = {}
    for name, model in models.items():
        flops = sum(step_flops(model, b) for b in batches)
        figures[name] = {
            "train_tokens_per_s": n_tokens / seconds[name],
            "train_flops_per_s": flops / seconds[name],
            "train_mfu": share_of_peak(flops / seconds[name], peak[name], f"{name}, batches by tokens"),
        }
    return {
        "sentences_per_batch": [len(b["input_ids"]) for b in batches],
        "padded_tokens_per_batch": [b["input_ids"].numel() + b["labels"].numel() for b in batches],
        "tokens_per_batch": [tokens(b) for b in batches],
        **figures,
        "ratio_ours_over_marian": ratios(figures["ours"], figures["marian"]),
    }


def _opt_in_figures(
    generation: dict[str, dict[str, float]],
    first_pass_s: dict[str, float],
    opt_in: dict[str, tuple[torch.nn.Module, bool]],
) -> dict[str, dict]:
    """Each opt-in row's generation figures, their ratios over Marian's, and its compiled first pass (or None)."""
    return {
        name: generation[name]
        | {
            "ratio_over_marian": {
                key: value / generation["marian"][key] for key, value in generation[name].items()
            },
            "compile_and_first_pass_s": first_pass_s.get(name),
        }
        for name in opt_in
    }


def _environment(sizes: Sizes, device: str, dtypes: dict[str, str], settings: BenchmarkSettings) -> dict:
    """What the result was measured on and with: sizes, device, threads, dtypes, torch, settings."""
    return {
        "size": settings.size,
        "sizes": asdict(sizes),
        "device": device,
        "device_name": torch.cuda.get_device_name()
        if device.startswith("cuda")
        else platform.processor() or "cpu",
        "threads": torch.get_num_threads(),
        "dtype": dtypes,
        "torch": torch.__version__,
        "settings": settings.amounts(),
    }

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

The measuring tools are in `hf_seq2seq.benchmarks.measuring`, the model sizes in
`hf_seq2seq.benchmarks.choices`; the benchmark of the CTranslate2 and ONNX exports is
`hf_seq2seq.benchmarks.exports`.
"""

import contextlib
import copy
import logging
import platform
import time
from collections.abc import Callable, Iterator
from dataclasses import asdict, dataclass

import torch

from hf_seq2seq.acceleration.compilation import compiled_for_training
from hf_seq2seq.acceleration.cpu_features import cpu_has_matmuls
from hf_seq2seq.benchmarks.choices import DTYPES, SIZES, Sizes
from hf_seq2seq.benchmarks.measuring import (
    build_models,
    generate_fn,
    generate_path,
    interleaved,
    make_batches,
    make_token_batches,
    matmul_peak_flops,
    peak_memory,
    step_flops,
    timed,
    tokens,
    train_step_fn,
)
from hf_seq2seq.engines.packed_weights import use_packed_weights
from hf_seq2seq.engines.torch_engine import set_precision

logger = logging.getLogger(__name__)

HUB_USER = "ours as a Hub user"
"""The generate() row of ours without `use_packed_weights`: what a Hub user gets who loads the folder with
`trust_remote_code` and has no hf_seq2seq."""

HUB_USER_LABEL = "  as a Hub user (new tokens/s)"
"""The table's label of the `HUB_USER` row, under the batch-64 generate() row."""

GENERATE_B64 = "generate_b64_new_tokens_per_s"

RECOMPILE_LIMIT = 64
"""Dynamo's recompile limit while the compiled copies train (`_compiled_training`): room for both models' layers
in the code they share, at every shape."""


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


@contextlib.contextmanager
def _stage(what: str) -> Iterator[None]:
    """Log the start and the seconds of a stage of the benchmark: a run stopped early (a device lent for minutes, a
    compilation that takes longer than thought) still says how far it got and what took the time."""
    logger.info("%s ...", what)
    started = time.perf_counter()
    yield
    logger.info("%s: %.1f s", what, time.perf_counter() - started)


def _log_throughput(what: str, batches: list[dict], seconds: dict[str, float]) -> None:
    """Log each model's training tokens/s over `batches` as soon as they are measured (`seconds`: a pass's)."""
    n_tokens = sum(tokens(b) for b in batches)
    logger.info(
        "%s: %s", what, ", ".join(f"{name} {n_tokens / s:,.0f} tokens/s" for name, s in seconds.items())
    )


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
    each batch set, under "compiled_training" (`_compiled_training`).

    `cuda_graphs` (CUDA only; None: on a CUDA device): training of ours is also measured with its forward and backward replayed as CUDA
    graphs (`GraphedTraining`, as `hf-seq2seq train --cuda_graphs true`), beside both eager models, on each batch
    set, under "cuda_graphs" (`_graphed_training`). Marian is not: its forward reads the device's data on the
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
        train_s = _time_training(what, models, amp, train, settings.repeats, device)
    by_tokens, by_tokens_s = None, {}
    if train_batch_tokens:
        by_tokens = make_token_batches(
            settings.train_batches, train_batch_tokens, sizes.vocab_size, device, seed=4
        )
        what = f"training, batches of up to {train_batch_tokens} tokens"
        by_tokens_s = _time_training(what, models, amp, by_tokens, settings.repeats, device)
    batch_sets = {"sentences": (train, train_s), "token_batches": (by_tokens, by_tokens_s)}
    compiled_rows = (
        _compiled_training(compiled_models, amp, batch_sets, settings.repeats, device)
        if compiled_models
        else None
    )
    graphed_rows = (
        _graphed_training(models, amp, batch_sets, settings.repeats, device) if cuda_graphs else None
    )
    hub_user = copy.deepcopy(models["ours"])  # the same weights, its greedy search on plain Linear layers
    use_packed_weights(models["ours"])
    opt_in = _opt_in_models(models["ours"], settings.precisions, settings.compiled)
    with _stage("generate()"):
        gen_s, lat_s, first_pass_s = _time_generation(
            settings, device, models, amp, opt_in, hub_user, gen, single
        )
    generation = {name: _generation_figures(settings, gen_s[name], lat_s[name]) for name in lat_s}
    peak_dtypes = {name: peak_dtype(device, dtype) for name, dtype in amp.items()}
    with _stage("the matmul peak"):
        peaks = {
            dtype: matmul_peak_flops(device, dtype, settings.peak_size) for dtype in set(peak_dtypes.values())
        }
    peak = {name: peaks[peak_dtypes[name]] for name in amp}
    with _stage("FLOPs and memory"):
        figures = _model_figures(
            settings, sizes, device, models, amp, train, train_s, generation, peak, settings.measure_memory
        )
    token_batches = _token_batch_figures(models, by_tokens, by_tokens_s, peak) if by_tokens else None
    if graphed_rows:
        _add_graphed_mfu(graphed_rows, {"sentences": figures, "token_batches": token_batches})
    if compiled_rows:
        _add_compiled_mfu(compiled_rows, {"sentences": figures, "token_batches": token_batches})
    return _environment(sizes, device, dtypes, settings) | {
        "matmul_peak_flops_per_s": peak["ours"],
        "matmul_peak_dtype": _dtype_name(peak_dtypes["ours"]),
        "matmul_peak_note": _peak_note(device, amp["ours"], peak_dtypes["ours"]),
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
        "generate_path": _generate_paths(models, opt_in, hub_user, gen[0], settings.new_tokens),
        "ours": figures["ours"],
        "marian": figures["marian"],
        "ratio_ours_over_marian": _ratios(figures["ours"], figures["marian"]),
        "opt_in": _opt_in_figures(generation, first_pass_s, opt_in),
        "ours_packed_weights": getattr(models["ours"], "greedy_search_linear", None) is not None,
        "ours_as_hub_user": _hub_user_figures(settings, gen_s[HUB_USER], generation["marian"]),
    }


def peak_dtype(device: str, dtype: torch.dtype | None) -> torch.dtype | None:
    """The dtype whose matmul peak bounds a run in `dtype` (None: fp32): its own, but on a CPU without matmuls of
    that dtype (bf16 or fp16 on an AVX2-only CPU) fp32's, as its matmuls are emulated on fp32 units there (their
    own emulated peak, on 4096 x 4096 matrices, is far below what a step's small matmuls reach)."""
    if device == "cpu" and dtype is not None and not cpu_has_matmuls(dtype):
        return None
    return dtype


def _dtype_name(dtype: torch.dtype | None) -> str:
    return next(
        name for name, torch_name in DTYPES.items() if dtype == (torch_name and getattr(torch, torch_name))
    )


def _peak_note(device: str, dtype: torch.dtype | None, peak: torch.dtype | None) -> str | None:
    """Why the peak is not in the run's dtype, for the table's first line (None: it is)."""
    if dtype == peak:
        return None
    return f"this {device.upper()} has no {_dtype_name(dtype)} matmuls: they are emulated in fp32"


def share_of_peak(flops_per_s: float, peak: float, what: str) -> float | None:
    """FLOP/s as a share of the matmul peak; None (logged) where a step ran above the measured peak: the peak
    did not bound the run, so no share of it is a figure."""
    share = flops_per_s / peak
    if share > 1:
        logger.warning(
            "%s ran at %.0f%% of the measured matmul peak: the peak does not bound this run, no share of it is "
            "reported",
            what,
            100 * share,
        )
        return None
    return share


def _time_training(
    what: str,
    models: dict[str, torch.nn.Module],
    amp: dict[str, torch.dtype | None],
    train: list[dict],
    repeats: int,
    device: str,
) -> dict[str, float]:
    """Median seconds of each model's training steps over `train`, measured in turn; logged as the stage `what`,
    with each model's tokens/s."""
    with _stage(what):
        seconds = interleaved(
            {k: train_step_fn(m, device, amp[k]) for k, m in models.items()}, train, repeats, device
        )
    _log_throughput(what, train, seconds)
    return seconds


def _compiled_training(
    models: dict[str, torch.nn.Module],
    amp: dict[str, torch.dtype | None],
    batch_sets: dict[str, tuple[list[dict] | None, dict[str, float]]],
    repeats: int,
    device: str,
) -> dict[str, dict]:
    """Training of the compiled copies ("ours compiled", "marian compiled") on each measured batch set: a first
    pass over its batches (compilation, and recompilation for new shapes: its seconds reported apart), then
    median seconds per pass, measured in turn; their tokens/s, and over eager and compiled Marian's (the eager
    models' seconds, `batch_sets`' second items, were measured just before, in their own turns).

    Both models' layers run through the same code, transformers' `GradientCheckpointingLayer`, whose compilations
    dynamo counts together (one for each kind of layer, argument count and shape), and past its recompile limit
    (8) it runs the rest eagerly: on an H100, compiled Marian's layers reached it. The limit is raised while both
    are measured, so that every compiled row is compiled."""
    limit = max(torch._dynamo.config.recompile_limit, RECOMPILE_LIMIT)
    result = {}
    for set_name, (batches, eager_s) in batch_sets.items():
        if batches is None:
            continue
        steps = {
            name: train_step_fn(model, device, amp[name.removesuffix(" compiled")])
            for name, model in models.items()
        }
        first_pass_s = {}
        with torch._dynamo.config.patch(recompile_limit=limit):
            for name, step in steps.items():
                with _stage(f"{name}, {set_name}: the first pass (compiling)"):
                    first_pass_s[name] = timed(step, batches, device)
            with _stage(f"compiled training, {set_name}"):
                seconds = interleaved(steps, batches, repeats, device)
        _log_throughput(f"compiled training, {set_name}", batches, seconds)
        n_tokens = sum(tokens(b) for b in batches)
        result[set_name] = {
            name: {
                "train_tokens_per_s": n_tokens / seconds[name],
                "compile_and_first_pass_s": first_pass_s[name],
                "over_eager": eager_s[name.removesuffix(" compiled")] / seconds[name],
            }
            for name in models
        } | {
            "ours_compiled_over_marian": eager_s["marian"] / seconds["ours compiled"],
            "ours_compiled_over_marian_compiled": seconds["marian compiled"] / seconds["ours compiled"],
        }
    return result


def _graphed_training(
    models: dict[str, torch.nn.Module],
    amp: dict[str, torch.dtype | None],
    batch_sets: dict[str, tuple[list[dict] | None, dict[str, float]]],
    repeats: int,
    device: str,
) -> dict[str, dict]:
    """Training of ours with CUDA graphs (`GraphedTraining`) on each measured batch set, measured in turn with both
    eager models: two first passes over the batches (the first eager, the second recording each shape's graphs:
    their seconds reported apart), then median seconds per pass; tokens/s and ratios over both eager models."""
    result = {}
    for set_name, (batches, _) in batch_sets.items():
        if batches is None:
            continue
        steps = {
            "ours cuda graphs": train_step_fn(models["ours"], device, amp["ours"], cuda_graphs=True),
            "ours": train_step_fn(models["ours"], device, amp["ours"]),
            "marian": train_step_fn(models["marian"], device, amp["marian"]),
        }
        with _stage(f"ours with CUDA graphs, {set_name}: the first passes (eager, then recording)"):
            first_passes_s = [timed(steps["ours cuda graphs"], batches, device) for _ in range(2)]
        with _stage(f"training with CUDA graphs, {set_name}"):
            seconds = interleaved(steps, batches, repeats, device)
        _log_throughput(f"training with CUDA graphs, {set_name}", batches, seconds)
        n_tokens = sum(tokens(b) for b in batches)
        result[set_name] = {name: {"train_tokens_per_s": n_tokens / s} for name, s in seconds.items()} | {
            "first_passes_s": first_passes_s,
            "over_eager": seconds["ours"] / seconds["ours cuda graphs"],
            "over_marian": seconds["marian"] / seconds["ours cuda graphs"],
        }
    return result


def _add_graphed_mfu(graphed: dict, eager_figures: dict) -> None:
    """The graphed row's share of the matmul peak: the eager model's on the same batches (the same arithmetic)
    times how much faster it ran in the same turns."""
    for set_name, rows in graphed.items():
        eager = eager_figures[set_name]["ours"]["train_mfu"]
        rows["ours cuda graphs"]["train_mfu"] = _scaled_share(
            eager, rows["over_eager"], "ours with CUDA graphs"
        )


def _add_compiled_mfu(compiled: dict, eager_figures: dict) -> None:
    """Each compiled row's share of the matmul peak: the eager model's on the same batches (the same arithmetic)
    times how much faster it ran."""
    for set_name, rows in compiled.items():
        for name in ("ours", "marian"):
            row = rows[f"{name} compiled"]
            eager = eager_figures[set_name][name]["train_mfu"]
            row["train_mfu"] = _scaled_share(eager, row["over_eager"], f"{name} compiled")


def _ratios(ours: dict, marian: dict) -> dict[str, float]:
    """Ours over Marian for each figure both have (a figure not measured, or not reported, is None)."""
    return {key: ours[key] / marian[key] for key in ours if ours[key] is not None and marian[key]}


def _scaled_share(eager_share: float | None, speed_up: float, what: str) -> float | None:
    """The share of the peak of a row that ran `speed_up` times as fast as an eager row with `eager_share`."""
    return None if eager_share is None else share_of_peak(eager_share * speed_up, 1.0, what)


def _opt_in_models(
    ours: torch.nn.Module, precisions: tuple[str, ...], compiled: bool
) -> dict[str, tuple[torch.nn.Module, bool]]:
    """The opt-in rows of `run_benchmark`: name -> (a converted copy of ours, whether it runs compiled)."""
    opt_in = {
        f"ours {precision}": (set_precision(copy.deepcopy(ours).eval(), precision), False)
        for precision in precisions
    }
    if compiled:
        for precision in ("fp32", *precisions):
            if precision != "int8":
                model = set_precision(copy.deepcopy(ours).eval(), precision)
                opt_in[f"ours compiled {precision}"] = (model, True)
    return opt_in


def _time_generation(
    settings: BenchmarkSettings,
    device: str,
    models: dict[str, torch.nn.Module],
    amp: dict[str, torch.dtype | None],
    opt_in: dict[str, tuple[torch.nn.Module, bool]],
    hub_user: torch.nn.Module,
    gen: list[dict],
    single: list[dict],
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """Median seconds of each generate() row over `gen` (every row, `HUB_USER` included) and over `single`
    (every row but `HUB_USER`), measured in turn, and the seconds of each compiled row's first pass over both
    (compilation included)."""

    def generate_fns() -> dict[str, Callable[[dict], None]]:
        fns = {k: generate_fn(m, settings.new_tokens, amp[k]) for k, m in models.items()}
        return fns | {name: generate_fn(m, settings.new_tokens, None, c) for name, (m, c) in opt_in.items()}

    first_pass_s = {
        name: timed(generate_fns()[name], gen + single, device) for name, (_, c) in opt_in.items() if c
    }
    hub_user_fn = {HUB_USER: generate_fn(hub_user, settings.new_tokens, amp["ours"])}
    gen_s = interleaved(generate_fns() | hub_user_fn, gen, settings.repeats, device)
    lat_s = interleaved(generate_fns(), single, settings.repeats, device)
    return gen_s, lat_s, first_pass_s


def _generate_paths(
    models: dict[str, torch.nn.Module],
    opt_in: dict[str, tuple[torch.nn.Module, bool]],
    hub_user: torch.nn.Module,
    batch: dict,
    new_tokens: int,
) -> dict[str, str]:
    """Which decoding loop each generate() row runs (`generate_path`)."""
    paths = {name: generate_path(model.eval(), batch, new_tokens) for name, model in models.items()}
    paths |= {name: generate_path(model, batch, new_tokens, c) for name, (model, c) in opt_in.items()}
    return paths | {HUB_USER: generate_path(hub_user.eval(), batch, new_tokens)}


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
    measure_memory: bool,
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
            if measure_memory and measured
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
        "ratio_ours_over_marian": _ratios(figures["ours"], figures["marian"]),
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


def _cell(value: float | None, fmt: str) -> str:
    return "n/a" if value is None else fmt.format(value)


def _hub_user_line(result: dict, fmt: str) -> str:
    """The table's row of `HUB_USER` under ours' batch-64 generate() row, against the same Marian figure."""
    hub_user = result["ours_as_hub_user"]
    return (
        f"{HUB_USER_LABEL:34}{_cell(hub_user[GENERATE_B64], fmt):>12}"
        f"{_cell(result['marian'][GENERATE_B64], fmt):>12}{hub_user['ratio_over_marian'][GENERATE_B64]:>12.2f}x"
    )


def _token_batch_lines(result: dict) -> list[str]:
    """The table's rows of training on batches by tokens."""
    by_tokens = result["token_batches"]
    ours, marian, ratio = by_tokens["ours"], by_tokens["marian"], by_tokens["ratio_ours_over_marian"]
    sentences = by_tokens["sentences_per_batch"]
    lines = [
        f"training on batches of up to {result['settings']['train_batch_tokens']:,} padded tokens "
        f"({min(sentences)}-{max(sentences)} sentences):"
    ]
    for label, key, fmt, scale in [
        ("  training throughput (tokens/s)", "train_tokens_per_s", "{:,.0f}", 1),
        ("  training FLOP/s (G)", "train_flops_per_s", "{:.1f}", 1e9),
        ("  training FLOP/s / matmul peak", "train_mfu", "{:.1%}", 1),
    ]:
        a, b = (None if row[key] is None else row[key] / scale for row in (ours, marian))
        lines.append(
            f"{label:34}{_cell(a, fmt):>12}{_cell(b, fmt):>12}{ratio.get(key, float('nan')):>12.2f}x"
        )
    return lines


def _compiled_training_lines(result: dict) -> list[str]:
    """The table's rows of the compiled models' training (`compiled_training`)."""
    how = result["compiled_training_settings"]
    mode = f", {how['mode']}" if how.get("mode") else ""
    compiled = f"{how['backend']}{mode}, dynamic shapes" + (", layer by layer" if how["regions"] else "")
    lines = [
        f"training of torch.compile'd models ({compiled}; the first pass, compiling, timed apart):",
        f"{'':34}{'tokens/s':>12}{'peak':>8}{'x Marian':>10}{'x M. comp.':>12}{'first pass':>12}",
    ]
    for set_name, rows in result["compiled_training"].items():
        batches = (
            f"{result['settings']['train_batch_size']} sentences" if set_name == "sentences" else "by tokens"
        )
        for name, model in (("ours compiled", "ours"), ("marian compiled", "Marian")):
            row = rows[name]
            over = (
                f"{rows['ours_compiled_over_marian']:>9.2f}x{rows['ours_compiled_over_marian_compiled']:>11.2f}x"
                if name == "ours compiled"
                else f"{'':>10}{'':>12}"
            )
            lines.append(
                f"{'  ' + model + ', ' + batches:34}{row['train_tokens_per_s']:>12,.0f}"
                f"{_cell(row['train_mfu'], '{:.1%}'):>8}{over}{row['compile_and_first_pass_s']:>11.1f}s"
            )
    return lines


def _graphed_training_lines(result: dict) -> list[str]:
    """The table's rows of ours trained with CUDA graphs (`cuda_graphs`), beside both eager models in turn."""
    lines = [
        "training of ours with CUDA graphs, in turn with both eager models (the first passes timed apart):",
        f"{'':34}{'tokens/s':>12}{'peak':>8}{'x eager':>10}{'x Marian':>10}{'first passes':>16}",
    ]
    for set_name, rows in result["cuda_graphs"].items():
        batches = (
            f"{result['settings']['train_batch_size']} sentences" if set_name == "sentences" else "by tokens"
        )
        row = rows["ours cuda graphs"]
        first = " + ".join(f"{s:.1f}" for s in rows["first_passes_s"])
        lines.append(
            f"{'  ours, ' + batches:34}{row['train_tokens_per_s']:>12,.0f}{_cell(row['train_mfu'], '{:.1%}'):>8}"
            f"{rows['over_eager']:>9.2f}x{rows['over_marian']:>9.2f}x{first:>15}s"
        )
    return lines


def format_table(result: dict) -> str:
    """The printed table of a `run_benchmark` result: ours against Marian, row by row, then the opt-in rows."""
    rows = [
        ("training throughput (tokens/s)", "train_tokens_per_s", "{:,.0f}"),
        ("generate b=64 (new tokens/s)", "generate_b64_new_tokens_per_s", "{:,.0f}"),
        ("latency b=1 (ms/token)", "latency_b1_ms_per_token", "{:.2f}"),
        ("peak train memory (MB)", "peak_memory_mb", "{:.0f}"),
        ("training FLOP/s (G)", "train_flops_per_s", "{:.1f}"),
        ("training FLOP/s / matmul peak", "train_mfu", "{:.1%}"),
    ]
    ours, marian, ratio = result["ours"], result["marian"], result["ratio_ours_over_marian"]
    lines = [
        f"size={result['size']} {result['sizes']} device={result['device']} ({result['device_name']}), "
        f"{result['threads']} threads, {result['dtype']}; {result['matmul_peak_dtype']} matmul peak "
        f"{result['matmul_peak_flops_per_s'] / 1e9:.1f} GFLOP/s"
        + (f" ({result['matmul_peak_note']})" if result.get("matmul_peak_note") else ""),
        f"generate(): ours runs {result['generate_path']['ours']}, Marian {result['generate_path']['marian']}",
        "ours on "
        + (
            "packed weights (as `hf-seq2seq translate`)"
            if result["ours_packed_weights"]
            else "plain Linear layers"
        )
        + "; as a Hub user (the folder loaded with trust_remote_code, no hf_seq2seq) on plain Linear layers",
        f"{'':34}{'ours':>12}{'Marian':>12}{'ours/Marian':>13}",
    ]
    for label, key, fmt in rows:
        a, b = ours[key], marian[key]
        if a is None and b is None:
            continue  # not measured (--generate-only)
        if key == "train_flops_per_s" and a is not None:
            a, b = a / 1e9, b / 1e9
        lines.append(
            f"{label:34}{_cell(a, fmt):>12}{_cell(b, fmt):>12}{ratio.get(key, float('nan')):>12.2f}x"
        )
        if key == GENERATE_B64:
            lines.append(_hub_user_line(result, fmt))
    if result["token_batches"]:
        lines += _token_batch_lines(result)
    if result.get("cuda_graphs"):
        lines += _graphed_training_lines(result)
    if result.get("compiled_training"):
        lines += _compiled_training_lines(result)
    if result["opt_in"]:
        lines.append(f"opt-in generate() of ours, against Marian ({result['dtype']['marian']}):")
        lines.append(f"{'':34}{'b=64 tok/s':>12}{'x Marian':>10}{'b=1 ms/tok':>12}{'x Marian':>10}  path")
        for name, row in result["opt_in"].items():
            over = row["ratio_over_marian"]
            lines.append(
                f"{name:34}{row['generate_b64_new_tokens_per_s']:>12,.0f}"
                f"{over['generate_b64_new_tokens_per_s']:>9.2f}x{row['latency_b1_ms_per_token']:>12.2f}"
                f"{over['latency_b1_ms_per_token']:>9.2f}x  {result['generate_path'][name]}"
            )
    return "\n".join(lines)

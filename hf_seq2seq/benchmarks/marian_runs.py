"""The runs `hf_seq2seq.benchmarks.marian.run_benchmark` times, ours and Marian in turn: training (eager, compiled,
with CUDA graphs) and generate() (every row, the opt-in ones and the Hub user's included). Each returns median
seconds, or the rows made of them; each stage logs its seconds as it ends, so that a run stopped early (a device
lent for minutes, a compilation that takes longer than thought) still says how far it got and what took the time.
"""

import contextlib
import copy
import dataclasses
import logging
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass

import torch

from hf_seq2seq.benchmarks.measuring import (
    generate_fn,
    generate_path,
    interleaved,
    timed,
    tokens,
    train_step_fn,
)
from hf_seq2seq.engines.torch_engine import set_precision

logger = logging.getLogger(__name__)

HUB_USER = "ours as a Hub user"
"""The generate() row of ours without `use_packed_weights`: what a Hub user gets who loads the folder with
`trust_remote_code` and has no hf_seq2seq."""

GENERATE_B64 = "generate_b64_new_tokens_per_s"

RECOMPILE_LIMIT = 64
"""Dynamo's recompile limit while the compiled copies train (`compiled_training`): room for both models' layers
in the code they share, at every shape."""

BatchSets = dict[str, tuple[list[dict] | None, dict[str, float]]]
"""Training's batch sets by name: (the batches, None where not measured; each eager model's seconds on them)."""


@dataclass(frozen=True)
class Turns:
    """The models measured in turn (by name: "ours", "marian", and "... compiled" for their compiled copies), the
    autocast dtype of each model (by its eager name; None: fp32), the timed passes of a measurement (their median
    counts) and the device."""

    models: dict[str, torch.nn.Module]
    amp: dict[str, torch.dtype | None]
    repeats: int
    device: str

    def step(self, name: str, cuda_graphs: bool = False) -> Callable[[dict], None]:
        """A training step of the model `name` (`train_step_fn`)."""
        amp = self.amp[name.removesuffix(" compiled")]
        return train_step_fn(self.models[name], self.device, amp, cuda_graphs=cuda_graphs)

    def with_models(self, models: dict[str, torch.nn.Module]) -> "Turns":
        return dataclasses.replace(self, models=models)


@contextlib.contextmanager
def stage(what: str) -> Iterator[None]:
    """Log the start and the seconds of a stage of the benchmark."""
    logger.info("%s ...", what)
    started = time.perf_counter()
    yield
    logger.info("%s: %.1f s", what, time.perf_counter() - started)


def tokens_per_s(batches: list[dict], seconds: dict[str, float]) -> dict[str, float]:
    """Each model's training tokens/s over `batches` (`seconds`: a pass's)."""
    n_tokens = sum(tokens(b) for b in batches)
    return {name: n_tokens / s for name, s in seconds.items()}


def train_in_turn(what: str, steps: dict[str, Callable], batches: list[dict], turns: Turns) -> dict:
    """Median seconds of each of the training `steps` over `batches`, measured in turn (`interleaved`) as the stage
    `what`; each one's tokens/s logged as soon as they are measured."""
    with stage(what):
        seconds = interleaved(steps, batches, turns.repeats, turns.device)
    speed = tokens_per_s(batches, seconds)
    logger.info("%s: %s", what, ", ".join(f"{name} {s:,.0f} tokens/s" for name, s in speed.items()))
    return seconds


def time_training(what: str, turns: Turns, train: list[dict]) -> dict[str, float]:
    """Median seconds of each model's training steps over `train`, measured in turn as the stage `what`."""
    return train_in_turn(what, {name: turns.step(name) for name in turns.models}, train, turns)


def compiled_training(turns: Turns, batch_sets: BatchSets) -> dict[str, dict]:
    """Training of the compiled copies ("ours compiled", "marian compiled") on each measured batch set: a first
    pass over its batches (compilation, and recompilation for new shapes: its seconds reported apart), then
    median seconds per pass, measured in turn; their tokens/s, and over eager and compiled Marian's (the eager
    models' seconds, `batch_sets`' second items, were measured just before, in their own turns).

    Both models' layers run through the same code, transformers' `GradientCheckpointingLayer`, whose compilations
    dynamo counts together (one for each kind of layer, argument count and shape), and past its recompile limit
    it runs the rest eagerly: compiled Marian's layers reached it on a GPU (docs/training.md, "The benchmark on an
    H100"). The limit is raised while both are measured, so that every compiled row is compiled."""
    limit = max(torch._dynamo.config.recompile_limit, RECOMPILE_LIMIT)
    result = {}
    for set_name, (batches, eager_s) in batch_sets.items():
        if batches is None:
            continue
        steps = {name: turns.step(name) for name in turns.models}
        first_pass_s = {}
        with torch._dynamo.config.patch(recompile_limit=limit):
            for name, step in steps.items():
                with stage(f"{name}, {set_name}: the first pass (compiling)"):
                    first_pass_s[name] = timed(step, batches, turns.device)
            seconds = train_in_turn(f"compiled training, {set_name}", steps, batches, turns)
        speed = tokens_per_s(batches, seconds)
        result[set_name] = {
            name: {
                "train_tokens_per_s": speed[name],
                "compile_and_first_pass_s": first_pass_s[name],
                "over_eager": eager_s[name.removesuffix(" compiled")] / seconds[name],
            }
            for name in turns.models
        } | {
            "ours_compiled_over_marian": eager_s["marian"] / seconds["ours compiled"],
            "ours_compiled_over_marian_compiled": seconds["marian compiled"] / seconds["ours compiled"],
        }
    return result


def graphed_training(turns: Turns, batch_sets: BatchSets) -> dict[str, dict]:
    """Training of ours with CUDA graphs (`GraphedTraining`) on each measured batch set, measured in turn with both
    eager models: two first passes over the batches (the first eager, the second recording each shape's graphs:
    their seconds reported apart), then median seconds per pass; tokens/s and ratios over both eager models."""
    result = {}
    for set_name, (batches, _) in batch_sets.items():
        if batches is None:
            continue
        steps = {
            "ours cuda graphs": turns.step("ours", cuda_graphs=True),
            "ours": turns.step("ours"),
            "marian": turns.step("marian"),
        }
        with stage(f"ours with CUDA graphs, {set_name}: the first passes (eager, then recording)"):
            first_passes_s = [timed(steps["ours cuda graphs"], batches, turns.device) for _ in range(2)]
        seconds = train_in_turn(f"training with CUDA graphs, {set_name}", steps, batches, turns)
        speed = tokens_per_s(batches, seconds)
        result[set_name] = {name: {"train_tokens_per_s": s} for name, s in speed.items()} | {
            "first_passes_s": first_passes_s,
            "over_eager": seconds["ours"] / seconds["ours cuda graphs"],
            "over_marian": seconds["marian"] / seconds["ours cuda graphs"],
        }
    return result


def opt_in_models(
    ours: torch.nn.Module, precisions: tuple[str, ...], compiled: bool
) -> dict[str, tuple[torch.nn.Module, bool]]:
    """The opt-in generate() rows: name -> (a converted copy of ours, whether it runs compiled)."""
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


def time_generation(
    turns: Turns,
    opt_in: dict[str, tuple[torch.nn.Module, bool]],
    hub_user: torch.nn.Module,
    batches: tuple[list[dict], list[dict]],
    new_tokens: int,
) -> tuple[dict[str, float], dict[str, float], dict[str, float]]:
    """Median seconds of each generate() row over the batch-64 batch and over the batch-1 sentences (`batches`):
    every row over the first (`HUB_USER` included), every row but `HUB_USER` over the second, measured in turn;
    and the seconds of each compiled row's first pass over both (compilation included)."""
    (gen, single), amp, device = batches, turns.amp, turns.device

    def generate_fns() -> dict[str, Callable[[dict], None]]:
        fns = {k: generate_fn(m, new_tokens, amp[k]) for k, m in turns.models.items()}
        return fns | {name: generate_fn(m, new_tokens, None, c) for name, (m, c) in opt_in.items()}

    first_pass_s = {
        name: timed(generate_fns()[name], gen + single, device) for name, (_, c) in opt_in.items() if c
    }
    hub_user_fn = {HUB_USER: generate_fn(hub_user, new_tokens, amp["ours"])}
    gen_s = interleaved(generate_fns() | hub_user_fn, gen, turns.repeats, device)
    lat_s = interleaved(generate_fns(), single, turns.repeats, device)
    return gen_s, lat_s, first_pass_s


def generate_paths(
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

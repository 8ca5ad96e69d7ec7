"""What `hf-seq2seq compare` reports of recipes trained side by side: the machine they ran on, each run's
figures (from the results `hf-seq2seq train` returns, and its batch-1 latency measured here), each recipe's
mean over its seeds, and the printed table.

A run's figures: the test BLEU and chrF with the decoding the recipe evaluates with (`--num_beams`) and with
greedy search, optimizer steps, training tokens (source + target, padding excluded: what a token budget counts)
and their rate over the training time (in-budget validation included: it is part of the recipe's cost), and
the milliseconds per sentence of the saved model translating the same test sentences one at a time with its
saved decoding, as `hf-seq2seq translate` would.
"""

import functools
import os
import platform
import statistics
from collections.abc import Sequence

import torch

from hf_seq2seq.acceleration.cpu_features import cpu_has_matmuls, linux_cpu_flags
from hf_seq2seq.benchmarks.measuring import interleaved, timed
from hf_seq2seq.engines.base import Translator

MEANS = (
    "bleu",
    "greedy_bleu",
    "chrf",
    "greedy_chrf",
    "best_validation_bleu",
    "steps",
    "train_tokens",
    "train_tokens_per_s",
    "latency_ms_per_sentence",
)
"""The run figures a recipe's row averages over its seeds."""


def machine() -> dict:
    """The machine of a comparison: CPU model, its widest vector ISA, whether it has bf16 matmuls (avx512_bf16
    or AMX: the CPU presets train with bf16 autocast only then), the cores this process may use, torch's
    threads, and the GPU if there is one."""
    flags = linux_cpu_flags()
    model = next(
        (line.split(":", 1)[1].strip() for line in _cpuinfo().splitlines() if line.startswith("model name")),
        platform.processor() or platform.machine(),
    )
    isa = "AVX-512" if "avx512f" in flags else "AVX2" if "avx2" in flags else platform.machine()
    return {
        "cpu": model,
        "isa": isa,
        "bf16_matmuls": cpu_has_matmuls(torch.bfloat16),
        "cores": len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count(),
        "torch_threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "gpu": torch.cuda.get_device_name() if torch.cuda.is_available() else None,
    }


def _cpuinfo() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            return f.read()
    except OSError:
        return ""


def machine_line(facts: dict) -> str:
    """`machine()` as one line, e.g. "AMD EPYC (AVX-512, bf16 matmuls: no), 2 cores, torch 2.13.0 with 2
    threads"."""
    line = (
        f"{facts['cpu']} ({facts['isa']}, bf16 matmuls: {'yes' if facts['bf16_matmuls'] else 'no'}), "
        f"{facts['cores']} cores, torch {facts['torch']} with {facts['torch_threads']} threads"
    )
    return line + (f"; GPU {facts['gpu']}" if facts["gpu"] else "")


def batch_1_latency_ms(
    translators: dict[str, Translator], sentences: Sequence[str], repeats: int = 3
) -> dict[str, float]:
    """Milliseconds per sentence of each translator (name -> a loaded `Translator` of any engine; a model folder
    on the torch engine has packed weights, as `hf-seq2seq translate`) translating `sentences` one at a time with
    its saved decoding: the median over `repeats` passes, the translators taking turns on every sentence so that
    the machine's load falls on all alike, each after an untimed pass over all the sentences (the first call of
    each shape pays one-time costs)."""
    devices = {getattr(getattr(t, "model", None), "device", None) for t in translators.values()}
    device = "cuda" if any(getattr(d, "type", None) == "cuda" for d in devices) else "cpu"
    batches = [[sentence] for sentence in sentences]
    one_by_one = {
        name: functools.partial(translator.translate_sentences, batch_size=1)
        for name, translator in translators.items()
    }
    for fn in one_by_one.values():
        timed(fn, batches, device)
    seconds = interleaved(one_by_one, batches, repeats, device, by_batch=True)
    return {name: 1000 * s / len(sentences) for name, s in seconds.items()}


def run_figures(results: dict) -> dict:
    """A run's figures from the results `hf-seq2seq train` returned (its `test_results.json`), before its
    latency is measured."""
    facts = results["training"]
    return {
        "bleu": results["bleu"],
        "num_beams": results["decoding"].get("num_beams", 1),
        "greedy_bleu": facts["greedy_bleu"],
        "chrf": results["chrf"],
        "greedy_chrf": facts["greedy_chrf"],
        "best_validation_bleu": facts["best_validation_bleu"],
        "steps": facts["global_step"],
        "train_tokens": facts["train_tokens"],
        "train_runtime_s": facts["train_runtime_s"],
        "train_tokens_per_s": facts["train_tokens"] / facts["train_runtime_s"],
        "parameters": results["parameters"],
    }


def variant_means(runs: list[dict], variants: Sequence[str]) -> dict[str, dict]:
    """Each variant's mean of `MEANS` over its runs (its seeds), and its mean BLEU's difference from the first
    variant's (`bleu_vs_first`)."""
    means = {}
    for name in variants:
        own = [run for run in runs if run["variant"] == name]
        means[name] = {key: statistics.fmean(run[key] for run in own) for key in MEANS}
        means[name]["seeds"] = len(own)
    first = means[variants[0]]["bleu"]
    for figures in means.values():
        figures["bleu_vs_first"] = figures["bleu"] - first
    return means


_COLUMNS = (
    f"{'beams':>6}{'BLEU':>7}{'greedy':>8}{'chrF':>7}{'steps':>7}{'tokens':>13}{'tokens/s':>10}{'ms/sent':>9}"
)


def _row(label: str, width: int, figures: dict, beams: str) -> str:
    return (
        f"{label:<{width}}{beams:>6}{figures['bleu']:>7.1f}{figures['greedy_bleu']:>8.1f}{figures['chrf']:>7.1f}"
        f"{figures['steps']:>7.0f}{figures['train_tokens']:>13,.0f}{figures['train_tokens_per_s']:>10,.0f}"
        f"{figures['latency_ms_per_sentence']:>9.2f}"
    )


def format_comparison(result: dict) -> str:
    """The printed table of a comparison: the machine, the budget, one row per run, one per variant (the mean of
    its seeds, with its BLEU against the first variant's)."""
    budget, limits = result["budget"], []
    if budget["minutes"]:
        limits.append(f"{budget['minutes']:g} min")
    if budget["tokens"]:
        limits.append(f"{budget['tokens']:,} training tokens (source + target)")
    names = [f"{run['variant']}-seed{run['seed']}" for run in result["runs"]]
    width = max(map(len, [*names, *result["variants"], "variant (mean)"])) + 2
    lines = [
        f"machine: {machine_line(result['machine'])}",
        f"budget per run: {' or '.join(limits)}; seeds {' '.join(map(str, result['seeds']))}",
        "BLEU, chrF: test split, the recipe's test decoding (beams); greedy: greedy BLEU; ms/sent: batch 1, saved "
        f"decoding, {result['latency_sentences']} test sentences",
        f"{'run':<{width}}{_COLUMNS}",
    ]
    lines += [
        _row(name, width, run, str(run["num_beams"])) for name, run in zip(names, result["runs"], strict=True)
    ]
    lines.append(f"{'variant (mean)':<{width}}{_COLUMNS}{'vs first':>10}")
    for name, variant in result["variants"].items():
        beams = "/".join(sorted({str(run["num_beams"]) for run in result["runs"] if run["variant"] == name}))
        mean = variant["mean"]
        lines.append(_row(name, width, mean, beams) + f"{mean['bleu_vs_first']:>+10.1f}")
    return "\n".join(lines)

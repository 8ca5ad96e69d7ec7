"""`hf-seq2seq compare`: train two or more recipes (a preset and flags each) back to back on this machine, for
the same budget and with the same seeds, and compare them: test BLEU (the recipe's test decoding and greedy),
chrF, steps, training tokens/s and batch-1 latency, per run and per recipe (the mean of its seeds)."""

import argparse
import re
import shlex
from pathlib import Path

from ._common import parser, print_result, quiet_transformers, setup_logging

# the `hf-seq2seq train` flags that compare sets itself for every run, so that the runs differ only by recipe
OWN_FLAGS = ("preset", "seed", "output_dir", "max_train_minutes", "max_train_tokens")
NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")

EXAMPLE = """hf-seq2seq compare --variant base=cpu --variant deep-enc="cpu --encoder_layers 6 --decoder_layers 1" \\
      --max-train-tokens 20000000 --seeds 0 1 --output-dir runs/compare --json compare.json -- --data_path fra.txt"""


def build_parser() -> argparse.ArgumentParser:
    p = parser("compare", __doc__, EXAMPLE)
    p.add_argument(
        "--variant",
        action="append",
        required=True,
        metavar='NAME="PRESET [FLAGS]"',
        help="a recipe: its name (letters, digits, . _ -), then a preset and any `hf-seq2seq train` flags, "
        "quoted as one argument; give two or more (the first is the baseline of the 'vs first' column)",
    )
    p.add_argument(
        "--seeds", type=int, nargs="+", default=[0, 1], metavar="SEED", help="train each recipe once per seed"
    )
    p.add_argument("--max-train-minutes", type=float, metavar="MINUTES", help="every run's time budget")
    p.add_argument(
        "--max-train-tokens",
        type=int,
        metavar="TOKENS",
        help="every run's budget in training tokens (source + target, padding excluded); alone, it replaces "
        "the presets' time budget, so that the runs train on the same amount of data however fast they are",
    )
    p.add_argument(
        "--output-dir", default="runs/compare", help="each run trains into OUTPUT_DIR/<name>-seed<seed>"
    )
    p.add_argument(
        "--latency-sentences",
        type=int,
        metavar="N",
        default=100,
        help="the first this many test sentences, translated one at a time by every model (default 100)",
    )
    p.add_argument(
        "--latency-repeats",
        type=int,
        default=3,
        metavar="N",
        help="timed passes over them (their median counts)",
    )
    p.add_argument("--json", default=None, help="also write the result here")
    p.add_argument(
        "train_flags",
        nargs="*",
        metavar="-- FLAGS",
        help="after --: `hf-seq2seq train` flags for every run (e.g. -- --data_path fra.txt)",
    )
    return p


def flag_name(word: str) -> str | None:
    """The field a command-line word sets ("--output-dir=x" -> "output_dir"), or None for a value."""
    return word.split("=", 1)[0][2:].replace("-", "_") if word.startswith("--") else None


def parse_variant(text: str) -> tuple[str, str, list[str]]:
    """`(name, preset, flags)` of a `--variant NAME="PRESET [FLAGS]"`."""
    name, equals, spec = text.partition("=")
    words = shlex.split(spec)
    if not equals or not NAME.fullmatch(name) or not words or words[0].startswith("-"):
        raise ValueError(
            f'--variant {text!r}: write NAME="PRESET [FLAGS]", e.g. deep-enc="cpu --encoder_layers 6"'
        )
    return name, words[0], words[1:]


def check_flags(flags: list[str], where: str) -> None:
    """Refuse the flags that compare sets for every run itself (`OWN_FLAGS`)."""
    own = sorted({name for name in map(flag_name, flags) if name in OWN_FLAGS})
    if own:
        raise ValueError(
            f"{where}: compare sets {', '.join('--' + name for name in own)} itself for every run"
        )


def run_argv(
    preset: str, flags: list[str], args: argparse.Namespace, seed: int, output_dir: Path
) -> list[str]:
    """The `hf-seq2seq train` flags of one run: the recipe, the flags for every run, then the run's own
    (seed, folder, budget; without --max-train-minutes, no time budget: 0 lifts the preset's)."""
    own = [
        "--seed",
        str(seed),
        "--output_dir",
        str(output_dir),
        "--max_train_minutes",
        str(args.max_train_minutes or 0),
    ]
    if args.max_train_tokens:
        own += ["--max_train_tokens", str(args.max_train_tokens)]
    return ["--preset", preset, *flags, *args.train_flags, *own]


def plan(args: argparse.Namespace) -> tuple[dict[str, dict], list[dict]]:
    """`(variants, runs)`: each recipe's preset and flags, and each run's variant, seed, folder and train flags,
    seed by seed (every recipe's first seed, then every recipe's second, ...), so that a machine that slows
    down over the hours does so for every recipe alike."""
    if len(args.variant) < 2:
        raise ValueError("give two or more --variant to compare")
    if not (args.max_train_minutes or args.max_train_tokens):
        raise ValueError("give the budget of every run: --max-train-minutes and/or --max-train-tokens")
    if len(set(args.seeds)) != len(args.seeds):
        raise ValueError(f"--seeds {' '.join(map(str, args.seeds))}: each seed once")
    check_flags(args.train_flags, "the flags after --")
    variants = {}
    for text in args.variant:
        name, preset, flags = parse_variant(text)
        if name in variants:
            raise ValueError(f"--variant {name} is given twice")
        check_flags(flags, f"--variant {name}")
        variants[name] = {"preset": preset, "flags": flags}
    runs = []
    for seed in args.seeds:
        for name, variant in variants.items():
            output_dir = Path(args.output_dir) / f"{name}-seed{seed}"
            argv = run_argv(variant["preset"], variant["flags"], args, seed, output_dir)
            runs.append({"variant": name, "seed": seed, "output_dir": str(output_dir), "train_argv": argv})
    return variants, runs


def main(argv: list[str] | None = None) -> dict:
    args_parser = build_parser()
    args = args_parser.parse_args(argv)
    try:
        variants, runs = plan(args)
    except ValueError as error:
        args_parser.error(str(error))
    setup_logging()
    quiet_transformers()
    from hf_seq2seq.benchmarks.comparison import (
        batch_1_latency_ms,
        format_comparison,
        machine,
        machine_line,
        run_figures,
        variant_means,
    )
    from hf_seq2seq.engines.factory import load_translator
    from hf_seq2seq.training.data_loading import load_splits

    from . import train

    facts = machine()
    print(f"comparing {len(variants)} recipes x {len(args.seeds)} seeds on {machine_line(facts)}")
    # every run's flags parsed before hours of training, so that a wrong one stops the comparison now
    parsed = [train.parse_args(run["train_argv"]) for run in runs]
    _, data_args, training_args, _ = parsed[0]
    splits = load_splits(data_args, training_args.seed)
    if "test" not in splits:
        args_parser.error(f"{data_args.dataset} has no test split to score the recipes on")
    sentences = splits["test"]["src"][: args.latency_sentences]
    for run, (_, _, run_training_args, _) in zip(runs, parsed, strict=True):
        results = train.main(run["train_argv"])
        run.update(run_figures(results), bf16=run_training_args.bf16)
    translators = {run["output_dir"]: load_translator(run["output_dir"]) for run in runs}
    latency = batch_1_latency_ms(translators, sentences, args.latency_repeats)
    for run in runs:
        run["latency_ms_per_sentence"] = latency[run["output_dir"]]
    means = variant_means(runs, list(variants))
    result = {
        "machine": facts,
        "budget": {"minutes": args.max_train_minutes, "tokens": args.max_train_tokens},
        "seeds": args.seeds,
        "latency_sentences": len(sentences),
        "variants": {name: variant | {"mean": means[name]} for name, variant in variants.items()},
        "runs": runs,
    }
    return print_result(result, format_comparison(result), args.json)

"""What several verbs' parsers share."""

import argparse
import json
import logging

from hf_seq2seq.acceleration.attention_kernels import parse_sdpa_backends
from hf_seq2seq.engines.base import ENGINES, TORCH_PRECISIONS


def parser(verb: str, description: str, example: str) -> argparse.ArgumentParser:
    """A verb's parser: `hf-seq2seq <verb>` as its program name, and an example under its help."""
    return argparse.ArgumentParser(
        prog=f"hf-seq2seq {verb}",
        description=description,
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def sdpa_backends_argument(text: str) -> list[str] | None:
    """The `type` of a `--sdpa-backends` option: `parse_sdpa_backends`, its error shown as the option's."""
    try:
        return parse_sdpa_backends(text)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None


def setup_logging() -> None:
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)


def quiet_transformers() -> None:
    """What a verb calls once its arguments are parsed: no transformers progress bar ("Loading weights",
    "Writing model shards": the package's small models load and save at once, so they only clutter the
    output). Progress bars that tell the user something stay: the Trainer's, `translating` over a file, and
    huggingface_hub's downloads and uploads (transformers' switch turns those off too, so they are turned
    back on unless they were off already, e.g. through HF_HUB_DISABLE_PROGRESS_BARS). For the command line
    only: library code leaves the switches alone."""
    from huggingface_hub.utils import are_progress_bars_disabled, enable_progress_bars
    from transformers.utils import logging as transformers_logging

    hub_bars_off = are_progress_bars_disabled()
    transformers_logging.disable_progress_bar()
    if not hub_bars_off:
        enable_progress_bars()


def add_decoding_arguments(p: argparse.ArgumentParser) -> None:
    """--num-beams, --length-penalty, --max-new-tokens, --no-repeat-ngram-size (unset ones keep the model's
    generation_config.json), --compile."""
    group = p.add_argument_group("decoding (default: the model's generation_config.json, greedy)")
    group.add_argument("--num-beams", type=int, help="beam search with this many beams (1: greedy)")
    group.add_argument("--length-penalty", type=float, help="beam score / length**this (default 1.0)")
    group.add_argument(
        "--max-new-tokens",
        type=int,
        help="a fixed limit on each translation's length, instead of the saved rule a * source tokens + b",
    )
    group.add_argument(
        "--no-repeat-ngram-size",
        type=int,
        help="no n-gram of this many tokens twice in a translation (saved: 3; 0 allows repeats)",
    )
    group.add_argument(
        "--compile",
        action="store_true",
        help="decode with a static cache and the decoding step compiled by torch.compile (torch engine; for "
        "long jobs: each new batch shape first compiles, for tens of seconds)",
    )


def decoding_from(args: argparse.Namespace):
    from hf_seq2seq.engines.decoding import Decoding

    return Decoding(
        num_beams=args.num_beams,
        length_penalty=args.length_penalty,
        max_new_tokens=args.max_new_tokens,
        no_repeat_ngram_size=args.no_repeat_ngram_size,
        compile=args.compile,
    )


def add_engine_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--engine",
        choices=("auto", *ENGINES),
        default="auto",
        help="auto (the default): the engine the folder is for, from its files; torch: a saved model folder; "
        'ctranslate2: an export of `hf-seq2seq export ctranslate2` (needs pip install "hf_seq2seq[deploy]"); '
        'onnxruntime: an export of `hf-seq2seq export onnx` (needs pip install "hf_seq2seq[onnx]")',
    )


def resolve_engine(args: argparse.Namespace) -> None:
    """`args.engine` "auto" made the engine `args.model` is for (`hf_seq2seq.engines.factory.engine_of`)."""
    if args.engine == "auto":
        from hf_seq2seq.engines.factory import engine_of

        args.engine = engine_of(args.model)


def add_size_argument(p: argparse.ArgumentParser, flag: str, default: str, help: str | None = None) -> None:
    """A model-size flag of the measuring verbs: one of `hf_seq2seq.benchmarks.choices.SIZES`."""
    # imported here: the other verbs need nothing of the evaluation layer
    from hf_seq2seq.benchmarks.choices import SIZES

    p.add_argument(flag, choices=SIZES, default=default, help=help)


def add_measuring_arguments(p: argparse.ArgumentParser) -> None:
    """--device, --repeats, --json: what the measuring verbs (benchmark, measure-training) share."""
    p.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    p.add_argument(
        "--repeats", type=int, default=5, help="timed passes per measurement (their median counts)"
    )
    p.add_argument("--json", default=None, help="also write the result here")


def print_result(result: dict, table: str, json_path: str | None) -> dict:
    """A measuring verb's output: its table printed, and its result written to `json_path` (`--json`) if given."""
    print(table)
    if json_path:
        with open(json_path, "w") as f:
            json.dump(result, f, indent=2)
        print(f"wrote {json_path}")
    return result


def add_precision_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--precision",
        choices=TORCH_PRECISIONS,
        default="fp32",
        help="inference precision of the torch engine: fp32 (as trained), bf16 weights, or int8 weights for the "
        "Linear layers (dynamic quantization, CPU only); a CTranslate2 export keeps the weights it was exported "
        "with; an ONNX export runs its fp32 or (exported with --quantization int8) int8 graphs",
    )

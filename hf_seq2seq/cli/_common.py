"""What several verbs' parsers share."""

import argparse
import logging


def parser(verb: str, description: str, example: str) -> argparse.ArgumentParser:
    """A verb's parser: `hf-seq2seq <verb>` as its program name, and an example under its help."""
    return argparse.ArgumentParser(
        prog=f"hf-seq2seq {verb}",
        description=description,
        epilog=f"example:\n  {example}",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )


def setup_logging() -> None:
    logging.basicConfig(format="%(asctime)s %(levelname)s %(name)s: %(message)s", level=logging.INFO)


def add_decoding_arguments(p: argparse.ArgumentParser) -> None:
    """--num-beams, --length-penalty, --max-new-tokens, --no-repeat-ngram-size: unset ones keep the model's
    generation_config.json."""
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


def decoding_from(args: argparse.Namespace):
    from ..inference import Decoding

    return Decoding(
        num_beams=args.num_beams,
        length_penalty=args.length_penalty,
        max_new_tokens=args.max_new_tokens,
        no_repeat_ngram_size=args.no_repeat_ngram_size,
    )


def add_engine_argument(p: argparse.ArgumentParser) -> None:
    p.add_argument(
        "--engine",
        choices=["torch", "ctranslate2"],
        default="torch",
        help="torch: a saved model folder; ctranslate2: an export of `hf-seq2seq export ctranslate2` "
        '(needs pip install "hf_seq2seq[deploy]")',
    )

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

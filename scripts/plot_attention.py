#!/usr/bin/env python
"""Translate one sentence with a saved model and plot its encoder, decoder and cross-attention maps.

python scripts/plot_attention.py runs/base/final "Il fait beau aujourd'hui." --out_dir figures/attention
"""

import argparse

from hf_seq2seq.plotting import plot_checkpoint_attention


def main(argv: list[str] | None = None) -> None:
    """Parse the arguments, write the three PNGs, print their paths."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", help="folder (or Hub id) of a saved TransformerMT model")
    parser.add_argument("sentence", help="source sentence to translate")
    parser.add_argument("--out_dir", default="attention", help="folder for the PNGs (default: %(default)s)")
    parser.add_argument("--tokenizer", default=None, help="tokenizer folder (default: the model folder)")
    parser.add_argument(
        "--max_new_tokens", type=int, default=64, help="longest translation (default: %(default)s)"
    )
    args = parser.parse_args(argv)
    for path in plot_checkpoint_attention(
        args.model,
        args.sentence,
        args.out_dir,
        tokenizer_path=args.tokenizer,
        max_new_tokens=args.max_new_tokens,
    ):
        print(path)


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Translate sentences given as arguments, or one per line on stdin, with a saved model (greedy).

python scripts/translate.py runs/cpu "How are you?" "I like cheese."
echo "Where is the station?" | python scripts/translate.py runs/cpu
"""

import argparse
import sys

from hf_seq2seq.inference import load_model_and_tokenizer, translate


def main(argv: list[str] | None = None) -> list[str]:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", help="a saved model folder")
    parser.add_argument("sentences", nargs="*", help="sentences to translate (default: read stdin)")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--trust-remote-code", action="store_true")
    args = parser.parse_args(argv)
    sentences = args.sentences or sys.stdin.read().splitlines()
    model, tokenizer = load_model_and_tokenizer(args.model, trust_remote_code=args.trust_remote_code)
    translations = translate(model, tokenizer, sentences, batch_size=args.batch_size)
    print("\n".join(translations))
    return translations


if __name__ == "__main__":
    main()

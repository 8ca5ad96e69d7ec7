"""Mine the phrase pairs of `--phrase_share` from fra-eng's train split (as training does, into the same cache) and
print how many there are, a sample, and the pairs of a few single words and labels.

    python measurements/phrase_pairs.py [--data-path fra.txt] [--min-count 3] [--sample 20] [--cache-dir DIR]
"""

import argparse
import random

from hf_seq2seq.data.fragments import mine_phrase_pairs
from hf_seq2seq.data.loaders import load_corpora

WORDS = ("warning", "error", "next", "save", "done", "cat", "hello", "file", "open", "help", "thank you")


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--data-path", help="fra.txt (default: $HF_SEQ2SEQ_FRA_ENG or the download)")
    p.add_argument("--source-lang", default="en")
    p.add_argument("--target-lang", default="fr")
    p.add_argument("--min-count", type=int, default=3)
    p.add_argument("--sample", type=int, default=20)
    p.add_argument("--cache-dir", help="default: the package's cache, as training uses")
    args = p.parse_args()
    train = load_corpora(
        ["fra-eng"],
        None,
        seed=42,
        data_path=args.data_path,
        source_lang=args.source_lang,
        target_lang=args.target_lang,
        streaming=False,
        exclude_test_sets=["default"],
    )["train"]
    pairs = mine_phrase_pairs(train["src"][:], train["tgt"][:], args.min_count, cache_dir=args.cache_dir)
    by_words = [sum(len(pair.source.split()) == n for pair in pairs) for n in (1, 2, 3)]
    print(f"{len(pairs)} phrase pairs from {len(train)} train pairs (1 / 2 / 3 source words: {by_words})")
    for pair in random.Random(0).sample(pairs, min(args.sample, len(pairs))):
        print(f"  {pair.source} -> {pair.target}  ({pair.count} of {pair.source_count})")
    lookup = {pair.source.lower(): pair for pair in pairs}
    for word in WORDS:
        pair = lookup.get(word)
        print(
            f"  {word} -> {pair.target} ({pair.count} of {pair.source_count})" if pair else f"  {word}: none"
        )


if __name__ == "__main__":
    main()

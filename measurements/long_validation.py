"""Score saved models on a long-sentence validation set that no test set touches, to choose a recipe by.

fra-eng's validation split (the hash split of `hf_seq2seq.data.splits`, with every pair that shares a side with the
standard Tatoeba test set removed, as training removes them) holds short sentences, like its training split. This
joins its rows, in the split's order, into lines of 1, 2, 3, 4, 6 and 8 sentences in turn (source with source, first
reference with first reference, a space between), so that the lines reach the lengths of the long buckets of the
standard test set (21-40 and 41+ source tokens) while every sentence stays one the models never trained on. It is a
proxy: real long sentences have long-range structure that joined short ones lack, so the standard test set's
buckets, read after a recipe is chosen, say how far the choice carries.

    python measurements/long_validation.py runs/base runs/concat [--data-path fra.txt] [--json out.json]

Prints, per model, greedy BLEU and chrF of the whole set and by source length (the model's tokens), and the
share of looping outputs.
"""

import argparse
import itertools
import json

from hf_seq2seq.data.loaders import load_corpora
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.evaluation.evaluate import evaluate_translations

JOIN_SIZES = (1, 2, 3, 4, 6, 8)


def long_validation(data_path: str | None, source_lang: str, target_lang: str) -> tuple[list[str], list[str]]:
    """`(sources, references)`: the validation split's rows joined `JOIN_SIZES` at a time, in turn."""
    splits = load_corpora(
        ["fra-eng"],
        None,
        seed=42,
        data_path=data_path,
        source_lang=source_lang,
        target_lang=target_lang,
        streaming=False,
        exclude_test_sets=["default"],
    )
    rows = splits["validation"]
    pairs = list(zip(rows["src"], (references[0] for references in rows["references"]), strict=True))
    sources, references = [], []
    start = 0
    for size in itertools.cycle(JOIN_SIZES):
        if start >= len(pairs):
            break
        group = pairs[start : start + size]
        sources.append(" ".join(source for source, _ in group))
        references.append(" ".join(reference for _, reference in group))
        start += size
    return sources, references


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="+", help="saved model folders")
    p.add_argument("--data-path", help="fra.txt (default: $HF_SEQ2SEQ_FRA_ENG or the download)")
    p.add_argument("--source-lang", default="en")
    p.add_argument("--target-lang", default="fr")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--json", help="also write the scores here")
    args = p.parse_args()
    sources, references = long_validation(args.data_path, args.source_lang, args.target_lang)
    print(f"{len(sources)} lines joined from the validation split, {JOIN_SIZES} sentences each in turn")
    results = {}
    for folder in args.models:
        translator = load_translator(folder)
        scores, _ = evaluate_translations(
            translator,
            sources,
            [[reference] for reference in references],
            batch_size=args.batch_size,
            decoding=Decoding(num_beams=1),
            source_lang=args.source_lang,
        )
        results[folder] = scores
        buckets = "  ".join(
            f"{row['bucket']}: {row['bleu']:.1f} ({row['num_sentences']})"
            for row in scores["by_length"]
            if row["num_sentences"]
        )
        print(
            f"{folder}: BLEU {scores['bleu']:.2f} chrF {scores['chrf']:.2f} looping "
            f"{100 * scores['loop_share']:.1f}% | {buckets}"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=2, ensure_ascii=False)


if __name__ == "__main__":
    main()

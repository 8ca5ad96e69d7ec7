"""Score saved models on a fragment validation set that no test set touches, to choose `--phrase_share` and
`--variant_share` by.

fra-eng's validation split (the hash split of `hf_seq2seq.data.splits`, with every pair that shares a side with the
standard Tatoeba test set removed, as training removes them) gives two kinds of lines: its phrase pairs (1-3 source
words, mined as `--phrase_share` mines the train split's, each source phrase once, its most frequent target the
reference; the validation pairs are aligned together with the train split's, for the aligner's statistics, but
phrases are extracted from the validation rows alone) and its short pairs (3 source words or fewer, marks
included) as they are. Nothing of it is in the train split's pairs or in a test set.

    python measurements/fragment_validation.py runs/base runs/phrases [--data-path fra.txt] [--json out.json]
        [--write DIR]   # also the set as DIR/fragments.src and DIR/fragments.ref

Prints, per model, greedy BLEU and chrF, the share of empty translations and of translations more than three times
the source's words.
"""

import argparse
import json
from pathlib import Path

from hf_seq2seq.data.fragments import mine_phrase_pairs, word_spans
from hf_seq2seq.data.loaders import load_corpora
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.evaluation.evaluate import evaluate_translations

SHORT_WORDS = 3


def fragment_validation(
    data_path: str | None, source_lang: str, target_lang: str
) -> tuple[list[str], list[str]]:
    """`(sources, references)`: the validation split's phrase pairs, then its short pairs not among them."""
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
    train, validation = splits["train"], splits["validation"]
    sources = train["src"][:] + validation["src"][:]
    targets = train["tgt"][:] + [references[0] for references in validation["references"][:]]
    rows = range(len(train), len(sources))
    pairs = [(pair.source, pair.target) for pair in mine_phrase_pairs(sources, targets, 1, rows)]
    seen = {source.lower() for source, _ in pairs}
    for source, references in zip(validation["src"][:], validation["references"][:], strict=True):
        if len(word_spans(source)) <= SHORT_WORDS and source.lower() not in seen:
            pairs.append((source, references[0]))
            seen.add(source.lower())
    return [source for source, _ in pairs], [target for _, target in pairs]


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("models", nargs="*", help="saved model folders")
    p.add_argument("--data-path", help="fra.txt (default: $HF_SEQ2SEQ_FRA_ENG or the download)")
    p.add_argument("--source-lang", default="en")
    p.add_argument("--target-lang", default="fr")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--json", help="also write the scores here")
    p.add_argument("--write", help="also write the set into this folder (fragments.src, fragments.ref)")
    args = p.parse_args()
    sources, references = fragment_validation(args.data_path, args.source_lang, args.target_lang)
    print(f"{len(sources)} fragments of the validation split (phrase pairs, then short pairs)")
    if args.write:
        folder = Path(args.write)
        folder.mkdir(parents=True, exist_ok=True)
        (folder / "fragments.src").write_text("\n".join(sources) + "\n", encoding="utf-8")
        (folder / "fragments.ref").write_text("\n".join(references) + "\n", encoding="utf-8")
    results = {}
    for folder in args.models:
        scores, _ = evaluate_translations(
            load_translator(folder),
            sources,
            [[reference] for reference in references],
            batch_size=args.batch_size,
            decoding=Decoding(num_beams=1),
            source_lang=args.source_lang,
        )
        results[folder] = scores  # with evaluate's empty_share and overlong_share
        print(
            f"{folder}: BLEU {scores['bleu']:.2f} chrF {scores['chrf']:.2f} empty {100 * scores['empty_share']:.1f}% "
            f"over 3x the source's words {100 * scores['overlong_share']:.1f}%"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as out:
            json.dump(results, out, indent=2, ensure_ascii=False)


if __name__ == "__main__":
    main()

"""Choose `hf_seq2seq.engines.length_guard.LENGTH_RATIO` on the fragment validation set: translate it once
(greedy, as saved), ask the n best of every short piece over-long at the smallest ratio tried, and score the
guard at each ratio offline (BLEU, chrF, the share of outputs more than three times their source's words, the
pieces replaced by a candidate and by the source).

    python measurements/fragment_validation.py --write runs/fragment-validation   # the set, once
    python measurements/length_guard_ratio.py runs/cpu runs/fragment-validation/fragments.src \
        runs/fragment-validation/fragments.ref [--ratios 1.5 2 2.5 3 4] [--json out.json]
"""

import argparse
import json

from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.engines.length_guard import HYPOTHESES, overlong, replacement
from hf_seq2seq.evaluation.evaluate import read_lines
from hf_seq2seq.evaluation.metrics import overlong_share, score_translations
from hf_seq2seq.models.transformer_mt.protected_spans import ProtectedSplit


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("model")
    p.add_argument("src")
    p.add_argument("ref")
    p.add_argument("--ratios", type=float, nargs="+", default=[1.5, 2, 2.5, 3, 4, 6])
    p.add_argument("--json")
    args = p.parse_args()
    sources, references = read_lines(args.src), read_lines(args.ref)
    translator = load_translator(args.model)
    split = ProtectedSplit(sources)
    raw = translator.translate_sentences(split.pieces, 64, progress=True)
    todo = [
        i
        for i, (piece, text) in enumerate(zip(split.pieces, raw, strict=True))
        if overlong(piece, text, min(args.ratios))
    ]
    found = dict(
        zip(todo, translator.translate_hypotheses([split.pieces[i] for i in todo], HYPOTHESES), strict=True)
    )
    rows = []
    for ratio in [None, *args.ratios]:
        out, counts = list(raw), {"hypothesis": 0, "source": 0}
        if ratio is not None:
            for i, hypotheses in found.items():
                if overlong(split.pieces[i], raw[i], ratio):
                    out[i], kind = replacement(split.pieces[i], hypotheses, ratio)
                    counts[kind] += 1
        hypotheses = split.join(out)
        scores = score_translations(hypotheses, [[r] for r in references])
        row = {
            "ratio": ratio,
            "bleu": round(scores["bleu"], 2),
            "chrf": round(scores["chrf"], 2),
            "overlong_share": round(overlong_share(sources, hypotheses), 4),
            "replaced_overlong": counts,
        }
        rows.append(row)
        print(
            f"ratio {ratio or 'none':>4}: BLEU {row['bleu']:5.2f} chrF {row['chrf']:5.2f} over 3x "
            f"{100 * row['overlong_share']:4.1f}% replaced by a candidate {counts['hypothesis']}, by the source "
            f"{counts['source']}"
        )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(
                {"model": args.model, "set": args.src, "sentences": len(sources), "rows": rows}, f, indent=2
            )


if __name__ == "__main__":
    main()

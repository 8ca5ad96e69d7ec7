"""Does the confidence score point at the bad translations? On the fra-eng test split:

1. translate every source with the model's saved decoding and score each translation
   (`hf_seq2seq.formats.aligned.translate_aligned(..., scores=True)`: exp of the mean token log-probability,
   what `hf-seq2seq translate --scores` prints and the server's ``confidence`` answers);
2. score each translation's quality by sentence-level chrF against all its references (sacrebleu);
3. report the Spearman rank correlation between confidence and chrF, how many of the worst 10% by chrF are
   among the lowest 10% by confidence (chance: 10%), and the mean chrF of each fifth of the sentences by
   confidence.

    python measurements/measure_confidence.py runs/cpu --json docs/bench/confidence.json
"""

import argparse
import json
import math
import shlex
import sys

from sacrebleu.metrics import CHRF

from hf_seq2seq.data.fra_eng import load_fra_eng
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.formats.aligned import translate_aligned

FRACTION = 0.1
"""The share of sentences called "worst" by chrF and "lowest" by confidence."""
GROUPS = 5


def ranks(values: list[float]) -> list[float]:
    """The rank of each value from 1, ties given the mean of their ranks."""
    order = sorted(range(len(values)), key=values.__getitem__)
    out = [0.0] * len(values)
    start = 0
    while start < len(order):
        end = start
        while end + 1 < len(order) and values[order[end + 1]] == values[order[start]]:
            end += 1
        for k in range(start, end + 1):
            out[order[k]] = (start + end) / 2 + 1
        start = end + 1
    return out


def spearman(x: list[float], y: list[float]) -> float:
    """Spearman's rank correlation: Pearson's correlation of the ranks (NaN when either is constant)."""
    rx, ry = ranks(x), ranks(y)
    mx, my = sum(rx) / len(rx), sum(ry) / len(ry)
    cov = sum((a - mx) * (b - my) for a, b in zip(rx, ry, strict=True))
    sx = math.sqrt(sum((a - mx) ** 2 for a in rx))
    sy = math.sqrt(sum((b - my) ** 2 for b in ry))
    return cov / (sx * sy) if sx and sy else float("nan")


def lowest(values: list[float], count: int) -> set[int]:
    """The indices of the `count` lowest values (ties broken by position)."""
    return set(sorted(range(len(values)), key=lambda i: (values[i], i))[:count])


def measure(confidence: list[float], chrf: list[float]) -> dict:
    """The figures of the module docstring for paired confidence and chrF values."""
    n = len(chrf)
    count = max(1, math.ceil(FRACTION * n))
    caught = len(lowest(chrf, count) & lowest(confidence, count))
    by_confidence = sorted(range(n), key=lambda i: (confidence[i], i))
    groups = []
    for g in range(GROUPS):
        members = by_confidence[g * n // GROUPS : (g + 1) * n // GROUPS]
        if members:
            groups.append(
                {
                    "sentences": len(members),
                    "confidence from": confidence[members[0]],
                    "confidence to": confidence[members[-1]],
                    "mean chrF": sum(chrf[i] for i in members) / len(members),
                }
            )
    return {
        "sentences": n,
        "spearman": spearman(confidence, chrf),
        "worst by chrF": count,
        "of them lowest by confidence": caught,
        "share caught": caught / count,
        "share by chance": count / n,
        "fifths by confidence": groups,
    }


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a saved model folder (a CTranslate2 export with --engine ctranslate2)")
    parser.add_argument("--engine", default="torch", choices=("torch", "ctranslate2"))
    parser.add_argument("--data-path", help="fra.txt (default: $HF_SEQ2SEQ_FRA_ENG)")
    parser.add_argument("--max-sentences", type=int, help="the first N test sentences only")
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    test = load_fra_eng(args.data_path)["test"]
    sources, references = test["src"], test["references"]
    if args.max_sentences:
        sources, references = sources[: args.max_sentences], references[: args.max_sentences]
    translator = load_translator(args.model, args.engine)
    results = translate_aligned(
        translator, sources, batch_size=args.batch_size, alignments=False, scores=True, progress=True
    )
    chrf_metric = CHRF()
    chrf = [
        chrf_metric.sentence_score(r.target, refs).score for r, refs in zip(results, references, strict=True)
    ]
    confidence = [r.score.confidence or 0.0 for r in results]
    figures = {
        "model": args.model,
        "engine": args.engine,
        "command": shlex.join(
            ["python", "measurements/measure_confidence.py", *(sys.argv[1:] if argv is None else argv)]
        ),
        **measure(confidence, chrf),
    }
    print(f"{figures['sentences']} test sentences, model {args.model} ({args.engine})")
    print(f"Spearman correlation of confidence with sentence chrF: {figures['spearman']:.3f}")
    print(
        f"worst {FRACTION:.0%} by chrF ({figures['worst by chrF']} sentences): "
        f"{figures['of them lowest by confidence']} among the lowest {FRACTION:.0%} by confidence "
        f"({figures['share caught']:.1%}; chance {figures['share by chance']:.1%})"
    )
    print(f"{'fifth by confidence':<20} {'confidence':>17} {'mean chrF':>10}")
    for k, group in enumerate(figures["fifths by confidence"], 1):
        span = f"{group['confidence from']:.3f}-{group['confidence to']:.3f}"
        print(f"{k:<20} {span:>17} {group['mean chrF']:10.2f}")
    figures["examples"] = [
        {"source": s, "translation": r.target, "confidence": c, "chrF": q}
        for s, r, c, q in sorted(
            zip(sources, results, confidence, chrf, strict=True), key=lambda row: row[2]
        )[:10]
    ]
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(figures, f, indent=1, ensure_ascii=False)
    return figures


if __name__ == "__main__":
    main()

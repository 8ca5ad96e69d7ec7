"""Alignment error rate of the model's attention alignments against the hand-made gold set, for every decoder
layer (and their mean) and both rules for which step stands for a target token; a diagonal baseline beside them.
Prints a table; `--json` writes the figures. docs/formats.md quotes its output. With `--engine`, an export's
alignments: ONNX Runtime's for every layer as the torch engine's, CTranslate2's for the one layer its export
returns (the last, heads averaged), so its rows are named "export's layer".

    python measurements/measure_alignment.py runs/cpu --json docs/bench/alignment_aer.json
    python measurements/measure_alignment.py runs/cpu-ct2 --engine ctranslate2
"""

import argparse
import json
import time

from hf_seq2seq.engines.alignment import AlignmentRule, alignment_error_rate, parse_pharaoh
from hf_seq2seq.engines.factory import load_translator

GOLD = "docs/alignment/gold_en_fr.tsv"


def read_gold(path: str) -> tuple[list[str], list[str], list]:
    sources, targets, gold = [], [], []
    for line in open(path, encoding="utf-8"):
        if line.startswith("#") or not line.strip():
            continue
        source, target, pairs = line.rstrip("\n").split("\t")
        sources.append(source)
        targets.append(target)
        gold.append(parse_pharaoh(pairs))
    return sources, targets, gold


def diagonal(source: str, target: str) -> list[tuple[int, int]]:
    """Each target word aligned to the source word at the same relative position: what position alone gives."""
    n, m = len(source.split()), len(target.split())
    return [(min(n - 1, round((j + 0.5) * n / m - 0.5)), j) for j in range(m)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a saved model folder, or an export with --engine")
    parser.add_argument("--engine", default="torch", choices=["torch", "ctranslate2", "onnxruntime"])
    parser.add_argument("--precision", default="fp32", help="as `hf-seq2seq translate --precision`")
    parser.add_argument("--gold", default=GOLD)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    translator = load_translator(args.model, args.engine, args.precision)
    sources, targets, gold = read_gold(args.gold)
    layers = [] if args.engine == "ctranslate2" else range(translator.model.config.decoder_layers)
    rows = [
        (
            "diagonal baseline",
            alignment_error_rate([diagonal(s, t) for s, t in zip(sources, targets, strict=True)], gold),
            0.0,
        )
    ]
    for layer in [*layers, None]:
        for shift, both_ways in ((0, False), (0, True), (1, False), (1, True)):
            start = time.perf_counter()
            predicted = translator.align(sources, targets, rule=AlignmentRule(layer, shift, both_ways))
            seconds = time.perf_counter() - start
            which = (
                "export's layer"
                if args.engine == "ctranslate2"
                else f"layer {'mean' if layer is None else layer + 1}"
            )
            name = f"{which}, {'shift' if shift else 'no shift'}"
            name += ", both ways" if both_ways else ""
            rows.append((name, alignment_error_rate(predicted, gold), seconds / len(sources) * 1000))
    print(
        f"{len(sources)} sentence pairs, {sum(map(len, gold))} gold links ({args.gold}); model {args.model}, "
        f"{args.engine} {translator.precision}"
    )
    print(f"{'rule':<32} {'AER':>6} {'ms/pair':>8}")
    for name, aer, ms in rows:
        print(f"{name:<32} {aer:6.3f} {ms:8.2f}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(
                {"model": args.model, "engine": args.engine, "pairs": len(sources), "rows": rows}, f, indent=1
            )


if __name__ == "__main__":
    main()

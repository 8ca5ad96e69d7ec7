"""HTML translation measured: fragments of the shapes of `hf_seq2seq.evaluation.markup.SHAPES` built around
fra-eng test sentences are translated as HTML; prints how many are well formed with the tags of their source,
and the BLEU/chrF of their visible text against the references beside those of the same sentences translated as
plain text, per shape and overall.

    python scripts/measure_markup.py runs/cpu --fragments 180 --json docs/bench/markup.json
"""

import argparse
import json
import time
from collections import defaultdict

from hf_seq2seq.data.fra_eng import load_fra_eng
from hf_seq2seq.engines.base import translate
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.evaluation.markup import fragments, markup_problems, visible_text
from hf_seq2seq.evaluation.metrics import score_translations
from hf_seq2seq.formats.markup import translate_html


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a saved model folder")
    parser.add_argument("--fragments", type=int, default=180)
    parser.add_argument("--data-path", help="fra.txt (default: $HF_SEQ2SEQ_FRA_ENG)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    test = load_fra_eng(args.data_path)["test"]
    pairs = list(zip(test["src"], test["tgt"], strict=True))
    built = fragments(pairs, args.fragments)
    translator = load_translator(args.model)
    start = time.perf_counter()
    outputs = translate_html(translator, [document for _, document, _ in built])
    html_seconds = time.perf_counter() - start
    start = time.perf_counter()
    needed = sorted({k for _, _, seen in built for k in seen})
    plain = dict(
        zip(needed, translate(translator, [pairs[k][0] for k in needed], split_sentences=True), strict=True)
    )
    plain_seconds = time.perf_counter() - start
    by_shape = defaultdict(lambda: {"fragments": 0, "problems": 0, "html": [], "plain": [], "refs": []})
    failures = []
    for (shape, document, seen), output in zip(built, outputs, strict=True):
        row = by_shape[shape]
        problems = markup_problems(document, output)
        row["fragments"] += 1
        row["problems"] += bool(problems)
        if problems:
            failures.append({"source": document, "translation": output, "problems": problems})
        row["html"].append(visible_text(output).replace("\xa0", " "))
        row["plain"].append(" ".join(plain[k] for k in seen))
        row["refs"].append(" ".join(pairs[k][1] for k in seen))
    results = {"model": args.model, "fragments": len(built), "shapes": {}, "failures": failures[:10]}
    print(f"{len(built)} HTML fragments over {len(pairs)} test sentences; model {args.model}")
    print(
        f"{'shape':<24} {'n':>4} {'well-formed, same tags':>23} {'BLEU html':>10} {'BLEU plain':>11} {'chrF html':>10} {'chrF plain':>11}"
    )
    total = {"fragments": 0, "problems": 0, "html": [], "plain": [], "refs": []}
    for shape, row in [*by_shape.items(), ("all", total)]:
        if shape != "all":
            for key in total:
                total[key] += row[key]
        html_scores = score_translations(row["html"], row["refs"])
        plain_scores = score_translations(row["plain"], row["refs"])
        ok = (row["fragments"] - row["problems"]) / row["fragments"]
        results["shapes"][shape] = {
            "fragments": row["fragments"], "well_formed_same_tags": ok,
            "bleu_html": html_scores["bleu"], "bleu_plain": plain_scores["bleu"],
            "chrf_html": html_scores["chrf"], "chrf_plain": plain_scores["chrf"],
        }  # fmt: skip
        print(
            f"{shape:<24} {row['fragments']:>4} {ok:>23.1%} {html_scores['bleu']:>10.2f} {plain_scores['bleu']:>11.2f}"
            f" {html_scores['chrf']:>10.2f} {plain_scores['chrf']:>11.2f}"
        )
    print(
        f"time: {html_seconds:.1f} s for the fragments as HTML, {plain_seconds:.1f} s for their sentences as text"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()

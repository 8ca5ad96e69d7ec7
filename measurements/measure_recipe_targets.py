"""The targets of a recipe change (docs/recipe.md), measured on trained model folders side by side, on the
fra-eng test split:

1. BLEU with the test decoding the training run saved (`test_results.json`), and its longest bucket of source
   length (`by_length`: counted in each model's own subwords, so two vocabularies bucket different sentences);
2. BLEU of the same longest sentences for every model: the test sources of at least `--long-words` words (by
   default the longest tenth), from the translations the run saved (`test_translations.txt`);
3. looping with the n-gram ban off: every source translated again with `--beams` beams and with greedy search,
   `no_repeat_ngram_size=0`, and the share of translations in which a word trigram occurs twice (and the
   package's `loop_share`: a short unit four times in a row);
4. batch-1 latency (on a quiet machine only): milliseconds per sentence translating the first
   `--latency-sentences` test sources one at a time with each model's saved decoding
   (`hf_seq2seq.benchmarks.comparison.batch_1_latency_ms`: the models in turn, median of `--latency-repeats`
   passes).

    python measurements/measure_recipe_targets.py base-42=runs/cpu2 new-0=runs/ab/new-seed0 \\
        --data-path ../shared/data/fra-eng/fra.txt --json docs/bench/recipe_targets.json
"""

import argparse
import json
import shlex
import sys
from collections import Counter
from pathlib import Path

from hf_seq2seq.benchmarks.comparison import batch_1_latency_ms, machine, machine_line
from hf_seq2seq.data.fra_eng import load_fra_eng
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.evaluation.evaluate import evaluate_translations
from hf_seq2seq.evaluation.metrics import score_translations


def repeats_a_trigram(text: str) -> bool:
    """True when a word trigram occurs twice in `text` (whitespace words, as written)."""
    words = text.split()
    counts = Counter(zip(words, words[1:], words[2:], strict=False))
    return any(n > 1 for n in counts.values())


def longest_bucket(report: dict) -> dict:
    """The last bucket of `by_length` that holds sentences."""
    return [row for row in report["by_length"] if row.get("num_sentences")][-1]


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("models", nargs="+", metavar="NAME=FOLDER", help="trained model folders, each named")
    parser.add_argument("--data-path", help="local fra.txt (else downloaded)")
    parser.add_argument("--beams", type=int, default=6, help="beams of the ban-off decoding (the presets' 6)")
    parser.add_argument("--long-words", type=int, help="the long sentences: at least this many words")
    parser.add_argument("--latency-sentences", type=int, default=100, help="0: no latency (a busy machine)")
    parser.add_argument("--latency-repeats", type=int, default=3)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    folders = dict(model.split("=", 1) for model in args.models)

    test = load_fra_eng(args.data_path)["test"]
    sources, references = test["src"], [list(r) for r in test["references"]]
    words = [len(s.split()) for s in sources]
    long_words = args.long_words or sorted(words, reverse=True)[len(words) // 10]
    long_index = [i for i, n in enumerate(words) if n >= long_words]

    models = {}
    for name, folder in folders.items():
        saved = json.loads((Path(folder) / "test_results.json").read_text())
        saved_hypotheses = (Path(folder) / "test_translations.txt").read_text(encoding="utf-8").splitlines()
        if len(saved_hypotheses) != len(sources):
            raise SystemExit(
                f"{folder}: {len(saved_hypotheses)} saved translations for {len(sources)} sources"
            )
        long = score_translations(
            [saved_hypotheses[i] for i in long_index], [references[i] for i in long_index]
        )
        translator = load_translator(folder, "torch")
        figures = {
            "folder": folder,
            "bleu": saved["bleu"],
            "decoding": saved["decoding"],
            "longest_bucket": longest_bucket(saved),
            "long_sentences_bleu": long["bleu"],
        }
        for label, beams in (("beams", args.beams), ("greedy", 1)):
            report, hypotheses = evaluate_translations(
                translator, sources, references, decoding=Decoding(num_beams=beams, no_repeat_ngram_size=0)
            )
            figures[f"ban_off_{label}"] = {
                "num_beams": beams,
                "bleu": report["bleu"],
                "trigram_repeat_share": sum(map(repeats_a_trigram, hypotheses)) / len(hypotheses),
                "loop_share": report["loop_share"],
            }
        models[name] = figures
    if args.latency_sentences:
        translators = {name: load_translator(folder) for name, folder in folders.items()}
        latency = batch_1_latency_ms(translators, sources[: args.latency_sentences], args.latency_repeats)
        for name in models:
            models[name]["latency_ms_per_sentence"] = latency[name]

    facts = machine()
    print(f"machine: {machine_line(facts)}")
    print(f"long sentences: the {len(long_index)} test sources of {long_words}+ words")
    header = f"{'model':<12}{'BLEU':>7}{'longest bucket':>22}{'long BLEU':>11}"
    header += f"{'trigram rep. beams/greedy':>28}{'ms/sent':>9}"
    print(header)
    for name, m in models.items():
        bucket = m["longest_bucket"]
        repeats = f"{100 * m['ban_off_beams']['trigram_repeat_share']:.2f}% / "
        repeats += f"{100 * m['ban_off_greedy']['trigram_repeat_share']:.2f}%"
        print(
            f"{name:<12}{m['bleu']:>7.2f}{bucket['bleu']:>10.2f} ({bucket['bucket']}, {bucket['num_sentences']:>3})"
            f"{m['long_sentences_bleu']:>11.2f}{repeats:>28}{m.get('latency_ms_per_sentence', float('nan')):>9.2f}"
        )
    result = {
        "command": shlex.join(["python", "measurements/measure_recipe_targets.py", *sys.argv[1:]]),
        "machine": facts,
        "long_sentences": {"min_words": long_words, "num_sentences": len(long_index)},
        "latency_sentences": args.latency_sentences,
        "models": models,
    }
    if args.json:
        Path(args.json).write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
    return result


if __name__ == "__main__":
    main()

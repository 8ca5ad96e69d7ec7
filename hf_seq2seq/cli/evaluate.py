"""`hf-seq2seq evaluate`: translate a test set with a saved model and score it (sacrebleu BLEU and chrF)."""

import json
from dataclasses import fields

from ._common import (
    add_decoding_arguments,
    add_engine_argument,
    add_precision_argument,
    decoding_from,
    parser,
    quiet_transformers,
    resolve_engine,
    setup_logging,
)


def build_parser():
    p = parser(
        "evaluate",
        "Translate a test set with a saved model folder and score it against all references of each sentence "
        "(BLEU and chrF with their sacrebleu signatures); writes eval_report.json and translations.txt.",
        "hf-seq2seq evaluate runs/cpu --test-set tatoeba-test-v2021-08-07 --output-dir runs/cpu/tatoeba\n"
        "  hf-seq2seq evaluate runs/cpu --src-file news.en --ref-file news.fr --output-dir runs/cpu/news",
    )
    p.add_argument("model", help="a folder saved by `hf-seq2seq train` (or any compatible model folder)")
    p.add_argument(
        "--output-dir", help="where to write eval_report.json and translations.txt (default: model)"
    )
    p.add_argument(
        "--test-set",
        help="a standard English-French test set by name, scored one reference a line as its leaderboard scores: "
        "tatoeba-test-v2021-08-07 (the OPUS-MT leaderboard's), multi30k_test_2016_flickr (also 2017_flickr, "
        "2017_mscoco, 2018_flickr), newstest2009 to newstest2014, tico19-test; read from $HF_SEQ2SEQ_TEST_SETS or "
        "downloaded once at a pinned commit of Helsinki-NLP/OPUS-MT-testsets, checked by sha256; or software messages "
        "that come with the package: gettext-messages-v1, gettext-fragments-v1 (3 words or fewer)",
    )
    p.add_argument("--src-file", help="plain-text sources, one sentence per line")
    p.add_argument("--ref-file", action="append", default=[], help="aligned references (repeatable)")
    p.add_argument(
        "--data-path", help="local fra.txt / fra-eng.zip (default: $HF_SEQ2SEQ_FRA_ENG or download)"
    )
    p.add_argument(
        "--dataset", default="fra-eng", help="'fra-eng', 'multi30k', a Hub dataset or a local file"
    )
    p.add_argument("--dataset-config")
    p.add_argument("--source-lang", default="en")
    p.add_argument("--target-lang", default="fr")
    p.add_argument("--split", default="test")
    p.add_argument("--max-samples", type=int)
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--trust-remote-code", action="store_true", help="load the model's own code (Hub folders)")
    p.add_argument(
        "--split-sentences",
        action="store_true",
        help="cut each line into sentences before translating (default: one segment per line)",
    )
    add_engine_argument(p)
    add_precision_argument(p)
    add_decoding_arguments(p)
    return p


def format_buckets(buckets: list[dict]) -> str:
    lines = ["source tokens  sentences   BLEU   chrF  looping"]
    for row in buckets:
        scored = row["num_sentences"] > 0
        lines.append(
            f"{row['bucket']:>13}  {row['num_sentences']:>9}  "
            + (
                f"{row['bleu']:5.1f}  {row['chrf']:5.1f}  {100 * row['loop_share']:6.1f}%"
                if scored
                else "    -      -        -"
            )
        )
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    resolve_engine(args)
    setup_logging()
    quiet_transformers()
    from hf_seq2seq.evaluation.evaluate import EvaluationSettings, evaluate_folder
    from hf_seq2seq.evaluation.metrics import OVERLONG_RATIO

    # every setting is the flag of its name, but the reference files (--ref-file, given once each) and the decoding
    named = {
        field.name: vars(args)[field.name] for field in fields(EvaluationSettings) if field.name in vars(args)
    }
    settings = EvaluationSettings(**named, ref_files=args.ref_file, decoding=decoding_from(args))
    report = evaluate_folder(args.model, args.output_dir, settings)
    replaced = report.replaced_overlong
    print(
        f"BLEU {report.bleu:.2f}  chrF {report.chrf:.2f}  on {report.num_sentences} sentences "
        f"({report.test_set}), looping outputs {100 * report.loop_share:.1f}%\n"
        f"empty translations of non-empty sources {100 * report.empty_share:.1f}%, outputs more than "
        f"{OVERLONG_RATIO} times the source's words {100 * report.overlong_share:.1f}%\n"
        f"over-long translations of short sentences replaced: {replaced.get('hypothesis', 0)} by a shorter "
        f"candidate, {replaced.get('source', 0)} by the source as written\n"
        f"{report.bleu_signature}\n{report.chrf_signature}"
    )
    print(format_buckets(report.by_length))
    print(json.dumps(report.to_dict(), indent=2, ensure_ascii=False))
    return report.to_dict()

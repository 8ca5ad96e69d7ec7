#!/usr/bin/env python
"""Score a saved model folder with batched greedy decoding: BLEU/chrF (sacrebleu) + JSON report + translations.

python scripts/evaluate.py runs/cpu                                   # fra-eng test split, all references
python scripts/evaluate.py runs/cpu --src-file news.en --ref-file news.fr [--ref-file news2.fr]
"""

import argparse
import json

from hf_seq2seq.inference import evaluate_folder


def main(argv: list[str] | None = None) -> dict:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("model", help="a folder saved by scripts/train.py (or any compatible model folder)")
    parser.add_argument(
        "--output-dir", help="where to write eval_report.json and translations.txt (default: model)"
    )
    parser.add_argument("--src-file", help="plain-text sources, one sentence per line")
    parser.add_argument("--ref-file", action="append", default=[], help="aligned references (repeatable)")
    parser.add_argument(
        "--data-path", help="local fra.txt / fra-eng.zip (default: $HF_SEQ2SEQ_FRA_ENG or download)"
    )
    parser.add_argument("--dataset", default="fra-eng", help="'fra-eng', a Hub dataset or a local file")
    parser.add_argument("--dataset-config")
    parser.add_argument("--source-lang", default="en")
    parser.add_argument("--target-lang", default="fr")
    parser.add_argument("--split", default="test")
    parser.add_argument("--max-samples", type=int)
    parser.add_argument("--batch-size", type=int, default=64)
    parser.add_argument(
        "--trust-remote-code", action="store_true", help="load the model's own code (Hub folders)"
    )
    args = parser.parse_args(argv)
    report = evaluate_folder(
        args.model,
        args.output_dir,
        args.src_file,
        args.ref_file,
        args.data_path,
        args.dataset,
        args.dataset_config,
        args.source_lang,
        args.target_lang,
        args.split,
        args.max_samples,
        args.batch_size,
        args.trust_remote_code,
    )
    print(
        f"BLEU {report['bleu']:.2f}  chrF {report['chrf']:.2f}  on {report['num_sentences']} sentences "
        f"({report['test_set']})\n{report['bleu_signature']}\n{report['chrf_signature']}"
    )
    print(json.dumps(report, indent=2))
    return report


if __name__ == "__main__":
    main()

"""`hf-seq2seq train`: raw pairs -> tokenizer -> Seq2SeqTrainer -> saved model folder + test BLEU."""

import argparse
import math
import os
import sys

from transformers import HfArgumentParser, Seq2SeqTrainingArguments

from hf_seq2seq.acceleration.attention_kernels import parse_sdpa_backends
from hf_seq2seq.evaluation.report import STANDARD_REPORT
from hf_seq2seq.training.arguments import DataArguments, FinalArguments, ModelArguments
from hf_seq2seq.training.checks import setting_problems
from hf_seq2seq.training.presets import PRESETS, preset_defaults
from hf_seq2seq.training.recipe import run
from hf_seq2seq.training.trainer import cuda_graphs_needs

from ._common import quiet_transformers, setup_logging

EXAMPLES = """examples:
  hf-seq2seq train --preset cpu                      # fra-eng in a 22-minute training budget, into runs/cpu
  hf-seq2seq train --preset gpu --output-dir runs/base
  hf-seq2seq train --preset cpu --data-path fra.txt --max-train-minutes 5 --output-dir runs/quick

Every Seq2SeqTrainingArguments flag works, with dashes or underscores (--output-dir, --output_dir); a flag
given explicitly overrides the preset."""


def parse_args(
    argv: list[str] | None = None,
) -> tuple[ModelArguments, DataArguments, Seq2SeqTrainingArguments, FinalArguments]:
    """Parse command-line flags over the defaults of the chosen `--preset`."""
    pre = argparse.ArgumentParser(add_help=False)
    pre.add_argument("--preset", default="cpu", choices=sorted(PRESETS))
    preset = pre.parse_known_args(argv)[0].preset
    parser = HfArgumentParser(
        (ModelArguments, DataArguments, Seq2SeqTrainingArguments, FinalArguments),
        prog="hf-seq2seq train",
        description=__doc__,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    parser.set_defaults(**preset_defaults(preset))
    model_args, data_args, training_args, final_args = parser.parse_args_into_dataclasses(args=argv)
    # 0: batches of --per_device_train_batch_size pairs, as without a preset that batches by tokens
    if data_args.max_tokens_per_batch == 0:
        data_args.max_tokens_per_batch = None
    if data_args.max_tokens_per_batch is not None and data_args.max_tokens_per_batch < 0:
        parser.error(
            f"--max_tokens_per_batch must be a number of tokens (0: batches of --per_device_train_batch_size "
            f"pairs), not {data_args.max_tokens_per_batch}"
        )
    problems = setting_problems(model_args, data_args, training_args, final_args)
    if problems:  # each one line; all of them at once, so that one run of the command names every change
        parser.error("\n".join(problems))
    needs = cuda_graphs_needs(training_args) if data_args.cuda_graphs else []  # None: where the run can
    if needs:
        parser.error("--cuda_graphs needs " + "; ".join(needs))
    try:
        parse_sdpa_backends(model_args.sdpa_backends)
    except ValueError as error:
        parser.error(f"--sdpa_backends: {error}")
    return model_args, data_args, training_args, final_args


def main(argv: list[str] | None = None) -> dict:
    setup_logging()
    model_args, data_args, training_args, final_args = parse_args(argv)
    quiet_transformers()
    os.makedirs(training_args.output_dir, exist_ok=True)
    results = run(model_args, data_args, training_args, final_args)
    if "bleu" in results:
        facts = results["training"]
        minutes = math.floor(facts["run_wall_time_s"] / 60)
        beams = results["decoding"].get("num_beams", 1)
        decoding = "greedy" if beams == 1 else f"{beams} beams; greedy {facts['greedy_bleu']:.1f}"
        print(
            f"test BLEU {results['bleu']:.1f}  chrF {results['chrf']:.1f}  ({decoding}; {results['num_sentences']} "
            f"sources, {minutes} min)\n{results['bleu_signature']}\nmodel saved to {training_args.output_dir}"
        )
        if "standard_test_set" in facts:
            print(
                f"{facts['standard_test_set']}: BLEU {facts['standard_bleu']:.1f}  chrF {facts['standard_chrf']:.1f}  "
                f"(one reference a line, as its leaderboard scores: {STANDARD_REPORT})"
            )
        if "decoding_problem" in facts:
            print(f"WARNING: {facts['decoding_problem']}", file=sys.stderr)
    return results

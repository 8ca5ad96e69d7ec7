"""`hf-seq2seq benchmark`: speed and memory of this model against MarianMTModel at identical sizes."""

import argparse

from hf_seq2seq.acceleration.attention_kernels import sdpa_backends
from hf_seq2seq.benchmarks.choices import DTYPES

from ._common import (
    add_measuring_arguments,
    add_size_argument,
    parser,
    print_result,
    quiet_transformers,
    sdpa_backends_argument,
    setup_logging,
)

# --quick: one timed pass, one latency run, 3 new tokens, batches of QUICK_BATCH_SIZE sentences, no memory, the
# matmul peak on 1024 x 1024 matrices
QUICK = dict(repeats=1, latency_runs=1, new_tokens=3)
QUICK_BATCH_SIZE = 4


def build_parser():
    p = parser(
        "benchmark",
        "Measure training throughput, greedy generate() speed (batch 64 and batch-1 latency) and memory of this "
        "model and of MarianMTModel at the same size, in one process, and print a table with the ratios.",
        "hf-seq2seq benchmark --size cpu --json docs/benchmark_cpu.json\n"
        "  hf-seq2seq benchmark --size large --device cuda --dtype bf16 --train-batch-tokens 25000",
    )
    add_size_argument(p, "--size", "cpu")
    add_measuring_arguments(p)
    p.add_argument(
        "--dtype",
        choices=DTYPES,
        default="fp32",
        help="training autocast dtype and generation weight dtype (both models unless --marian-dtype)",
    )
    p.add_argument("--marian-dtype", choices=DTYPES, default=None)
    p.add_argument(
        "--train-batch-tokens",
        type=int,
        metavar="N",
        help="also measure training on batches by tokens of up to N padded source + target tokens, sentences of "
        "similar lengths (as `hf-seq2seq train --max_tokens_per_batch N`; the gpu preset's is 25000), beside the "
        "64-sentence batches",
    )
    p.add_argument(
        "--generate-only",
        action="store_true",
        help="measure greedy generate() only (batch-64 throughput and batch-1 latency), no training or memory",
    )
    p.add_argument(
        "--latency-runs", type=int, default=5, help="batch-1 sentences per latency measurement (default 5)"
    )
    p.add_argument(
        "--precision",
        nargs="+",
        choices=["bf16", "int8"],
        default=[],
        help="also measure greedy generate() of ours at these inference precisions (as `hf-seq2seq translate "
        "--precision`), as extra rows against Marian",
    )
    p.add_argument(
        "--compile",
        action="store_true",
        help="also measure ours through the compiled path (as `hf-seq2seq translate --compile`: static cache, "
        "torch.compile), at fp32 and each --precision but int8; compilation is not timed",
    )
    p.add_argument(
        "--compile-training",
        action="store_true",
        help="also measure training of torch.compile'd copies of both models (as `hf-seq2seq train "
        "--torch_compile true`), on every batch set, against eager and compiled Marian; compilation timed apart",
    )
    p.add_argument(
        "--compile-backend", default="inductor", help="torch.compile's backend for --compile-training"
    )
    p.add_argument(
        "--compile-mode",
        help="torch.compile's mode for --compile-training, e.g. reduce-overhead (CUDA graphs: a new shape is "
        "recorded once, then replayed), as `hf-seq2seq train --torch_compile_mode`",
    )
    p.add_argument(
        "--cuda-graphs",
        action=argparse.BooleanOptionalAction,
        help="also measure training of ours with its forward and backward replayed as CUDA graphs, as the gpu "
        "preset trains (`hf-seq2seq train --cuda_graphs true`), in turn with both eager models, recording timed "
        "apart (default: on a CUDA device)",
    )
    p.add_argument(
        "--compile-regions",
        action="store_true",
        help="--compile-training: compile each repeated layer alone (accelerate's regional compilation, as "
        "`ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION=1 hf-seq2seq train --torch_compile true`)",
    )
    p.add_argument(
        "--sdpa-backends",
        type=sdpa_backends_argument,
        help="attention kernels both models may use, comma-separated in order of preference, among flash, "
        "efficient, cudnn and math (as `hf-seq2seq train --sdpa_backends`; default: PyTorch's choice)",
    )
    p.add_argument("--quick", action="store_true", help="seconds-long smoke run (figures meaningless)")
    ct2 = p.add_argument_group(
        "exports of a trained model (needs the deploy extra; ONNX rows: the onnx extra)"
    )
    ct2.add_argument(
        "--exports",
        "--ctranslate2",
        dest="exports",
        metavar="MODEL_DIR",
        help="instead: export MODEL_DIR to CTranslate2 (float32, int8) and ONNX (fp32, int8) and compare agreement, "
        "BLEU on the fra-eng test split and speed with its generate() and Marian's (set CT2_FORCE_CPU_ISA to try "
        "another ISA)",
    )
    ct2.add_argument("--data-path", help="local fra.txt (default: $HF_SEQ2SEQ_FRA_ENG or download)")
    ct2.add_argument("--max-samples", type=int, help="test sentences for agreement and BLEU (default: all)")
    return p


def main(argv: list[str] | None = None) -> dict:
    args = build_parser().parse_args(argv)
    setup_logging()  # each stage's seconds as it ends: a run cut short still says how far it got
    quiet_transformers()
    amounts = QUICK if args.quick else dict(repeats=args.repeats, latency_runs=args.latency_runs)
    if args.exports:
        from hf_seq2seq.benchmarks.exports import format_exports_table, run_exports_benchmark

        if args.quick:
            amounts = dict(amounts, batch_size=QUICK_BATCH_SIZE)
        result = run_exports_benchmark(
            args.exports, data_path=args.data_path, max_samples=args.max_samples, **amounts
        )
        return print_result(result, format_exports_table(result), args.json)
    from hf_seq2seq.acceleration.compilation import sizes_apart
    from hf_seq2seq.benchmarks.marian import BenchmarkSettings, run_benchmark
    from hf_seq2seq.benchmarks.marian_table import format_table

    if args.quick:
        amounts = dict(
            amounts,
            train_batch_size=QUICK_BATCH_SIZE,
            train_batches=1,
            generate_batch_size=QUICK_BATCH_SIZE,
            measure_memory=False,
            peak_size=1024,
        )
    settings = BenchmarkSettings(
        size=args.size,
        device=args.device,
        dtype=args.dtype,
        marian_dtype=args.marian_dtype,
        measure_training=not args.generate_only,
        precisions=tuple(args.precision),
        compiled=args.compile,
        train_batch_tokens=args.train_batch_tokens,
        compiled_training=args.compile_training,
        compile_backend=args.compile_backend,
        compile_regions=args.compile_regions,
        compile_mode=args.compile_mode,
        cuda_graphs=args.cuda_graphs,
        **amounts,
    )
    with sdpa_backends(args.sdpa_backends), sizes_apart(args.compile_training):
        result = run_benchmark(settings)
    result["settings"]["sdpa_backends"] = ",".join(args.sdpa_backends) if args.sdpa_backends else "default"
    return print_result(result, format_table(result), args.json)

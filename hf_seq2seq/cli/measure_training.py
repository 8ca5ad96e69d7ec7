"""`hf-seq2seq measure-training`: peak memory with and without gradient checkpointing, tokens/s with and
without torch.compile, for this model's training step."""

from hf_seq2seq.benchmarks.choices import DTYPES

from ._common import add_measuring_arguments, add_size_argument, parser, print_result, quiet_transformers


def main(argv: list[str] | None = None) -> dict:
    args_parser = parser(
        "measure-training",
        __doc__,
        "hf-seq2seq measure-training --json training_options.json   # on a quiet machine",
    )
    add_size_argument(args_parser, "--memory-size", "large", help="gpu preset's size")
    args_parser.add_argument("--memory-batch-size", type=int, default=256, help="gpu preset's batch")
    args_parser.add_argument("--skip-memory", action="store_true", help="measure the speed only")
    add_size_argument(args_parser, "--compile-size", "cpu", help="cpu preset's size")
    args_parser.add_argument("--compile-batch-size", type=int, default=128, help="cpu preset's batch")
    args_parser.add_argument("--compile-batches", type=int, default=8, help="batches per timed pass")
    args_parser.add_argument(
        "--compile-batch-tokens",
        type=int,
        default=None,
        help="batches by tokens, as --max_tokens_per_batch makes them (the gpu preset: 25000), not by sentences",
    )
    args_parser.add_argument("--compile-backend", default="inductor", help="torch.compile's backend")
    args_parser.add_argument(
        "--compile-mode", default=None, help="torch.compile's mode, e.g. reduce-overhead"
    )
    args_parser.add_argument(
        "--compile-regions",
        action="store_true",
        help="compile each repeated layer alone (accelerate's regional compilation), not the whole model",
    )
    args_parser.add_argument(
        "--dtype", choices=DTYPES, default="fp32", help="autocast of the timed steps (the gpu preset: bf16)"
    )
    add_measuring_arguments(args_parser)
    args = args_parser.parse_args(argv)
    quiet_transformers()
    from hf_seq2seq.benchmarks.training_options import (
        TrainingOptionsSettings,
        format_training_options,
        measure_training_options,
    )

    settings = TrainingOptionsSettings(
        memory_size=None if args.skip_memory else args.memory_size,
        memory_batch_size=args.memory_batch_size,
        compile_size=args.compile_size,
        compile_batch_size=args.compile_batch_size,
        compile_batches=args.compile_batches,
        compile_batch_tokens=args.compile_batch_tokens,
        compile_backend=args.compile_backend,
        compile_mode=args.compile_mode,
        compile_regions=args.compile_regions,
        dtype=args.dtype,
        repeats=args.repeats,
        device=args.device,
    )
    result = measure_training_options(settings)
    return print_result(result, format_training_options(result), args.json)

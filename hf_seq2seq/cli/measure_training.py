"""`hf-seq2seq measure-training`: peak memory with and without gradient checkpointing, tokens/s with and
without torch.compile, for this model's training step."""

import json

from ..benchmark import SIZES, format_training_options, measure_training_options
from ._common import parser


def main(argv: list[str] | None = None) -> dict:
    args_parser = parser(
        "measure-training",
        __doc__,
        "hf-seq2seq measure-training --json training_options.json   # on a quiet machine",
    )
    args_parser.add_argument(
        "--memory-size", choices=sorted(SIZES), default="large", help="gpu preset's size"
    )
    args_parser.add_argument("--memory-batch-size", type=int, default=256, help="gpu preset's batch")
    args_parser.add_argument("--compile-size", choices=sorted(SIZES), default="cpu", help="cpu preset's size")
    args_parser.add_argument("--compile-batch-size", type=int, default=128, help="cpu preset's batch")
    args_parser.add_argument("--compile-batches", type=int, default=8, help="batches per timed pass")
    args_parser.add_argument("--repeats", type=int, default=5, help="timed passes per variant (median)")
    args_parser.add_argument("--device", default=None, help="cpu or cuda (default: cuda if available)")
    args_parser.add_argument("--json", default=None, help="also write the figures here")
    args = args_parser.parse_args(argv)
    result = measure_training_options(
        memory_size=args.memory_size,
        memory_batch_size=args.memory_batch_size,
        compile_size=args.compile_size,
        compile_batch_size=args.compile_batch_size,
        compile_batches=args.compile_batches,
        repeats=args.repeats,
        device=args.device,
    )
    print(format_training_options(result))
    if args.json:
        with open(args.json, "w") as f:
            json.dump(result, f, indent=2)
        print(f"wrote {args.json}")
    return result

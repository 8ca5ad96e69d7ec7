"""`hf-seq2seq serve-benchmark`: load-test `hf-seq2seq serve` on localhost beside the engine's offline speed."""

import json

from ._common import (
    add_engine_argument,
    add_precision_argument,
    parser,
    print_result,
    quiet_transformers,
    resolve_engine,
)

QUICK = dict(concurrency=(1, 8), duration=2.0, warmup=0.5, offline_batch_sizes=(1, 8), offline_seconds=1.0)


def build_parser():
    p = parser(
        "serve-benchmark",
        "Measure the engine's offline throughput (batch 1, 32, 64), then start `hf-seq2seq serve` on 127.0.0.1 "
        "and send fra-eng test sentences from 1, 8, 32 and 64 concurrent clients for a fixed time each: "
        "sentences/s, p50/p95/p99 latency, errors and the mean model batch. Localhost only, bounded in time. "
        'Needs the serve extra: pip install "hf_seq2seq[serve]".',
        "hf-seq2seq serve-benchmark runs/cpu --data-path ../shared/data/fra-eng/fra.txt --json serve_cpu.json",
    )
    p.add_argument(
        "model", help="a saved model folder (with --engine ctranslate2 or onnxruntime: an export folder)"
    )
    add_engine_argument(p)
    add_precision_argument(p)
    p.add_argument("--data-path", help="local fra.txt (default: $HF_SEQ2SEQ_FRA_ENG or download)")
    p.add_argument("--sentences-file", help="instead of fra-eng: one sentence per line")
    p.add_argument("--max-sentences", type=int, default=1000, help="test sentences to cycle through")
    p.add_argument("--concurrency", type=int, nargs="+", default=[1, 8, 32, 64], help="concurrent clients")
    p.add_argument("--duration", type=float, default=20.0, help="measured seconds per concurrency level")
    p.add_argument("--warmup", type=float, default=3.0, help="unmeasured seconds before each level")
    p.add_argument("--offline-batch-sizes", type=int, nargs="+", default=[1, 32, 64])
    p.add_argument("--offline-seconds", type=float, default=10.0, help="seconds per offline batch size")
    p.add_argument(
        "--server-option",
        action="append",
        default=[],
        metavar="OPTION",
        help="pass an option to `hf-seq2seq serve`, e.g. --server-option=--max-batch-size=32; repeatable",
    )
    p.add_argument(
        "--request-field",
        action="append",
        default=[],
        metavar="NAME=JSON",
        help="a field every request sends beside q, its value as JSON, e.g. --request-field alternatives=3 "
        "--request-field confidence=true; repeatable",
    )
    p.add_argument("--log-dir", help="where the server's log goes (default: a temporary folder)")
    p.add_argument("--json", default=None, help="also write the result here")
    p.add_argument("--quick", action="store_true", help="seconds-long smoke run (figures meaningless)")
    return p


def request_fields(p, items: list[str]) -> dict:
    """The ``--request-field NAME=JSON`` items as a dict (a usage error for one that is not)."""
    fields = {}
    for item in items:
        name, sep, value = item.partition("=")
        try:
            if not (sep and name):
                raise ValueError
            fields[name] = json.loads(value)
        except ValueError:
            p.error(f"--request-field takes NAME=JSON, e.g. alternatives=3; got {item!r}")
    return fields


def main(argv: list[str] | None = None) -> dict:
    p = build_parser()
    args = p.parse_args(argv)
    fields = request_fields(p, args.request_field)
    resolve_engine(args)
    quiet_transformers()
    from hf_seq2seq.serving.loadtest import (
        ServeBenchmarkSettings,
        format_result,
        load_sentences,
        run_serve_benchmark,
    )

    measuring = dict(
        concurrency=tuple(args.concurrency),
        duration=args.duration,
        warmup=args.warmup,
        offline_batch_sizes=tuple(args.offline_batch_sizes),
        offline_seconds=args.offline_seconds,
    )
    if args.quick:
        measuring |= QUICK
    sentences = load_sentences(args.data_path, args.sentences_file, args.max_sentences)
    settings = ServeBenchmarkSettings(
        engine=args.engine,
        precision=args.precision,
        server_options=tuple(args.server_option),
        log_dir=args.log_dir,
        request_fields=fields,
        **measuring,
    )
    result = run_serve_benchmark(args.model, sentences, settings)
    return print_result(result, format_result(result), args.json)

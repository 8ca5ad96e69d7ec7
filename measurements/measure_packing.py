"""Which Linear layers the torch engine's greedy search should run on oneDNN-packed weights
(`hf_seq2seq.engines.packed_weights.packing_pays`), measured two ways on this machine:

1. per layer shape, batch 1: microseconds of torch's own `F.linear` and of oneDNN's matmul on the packed
   weight, "cold" (cycling through copies of the weight that together fill 64 MB, so that each call reads
   its weight from memory, as in a decoding step, where the whole model's weights pass between two uses of
   one layer) and "warm" (one weight, called again and again: it stays in the cache);
2. per saved model folder and packing rule: batch-1 latency (ms per sentence translating the first
   `--sentences` test sources one at a time) and batch-64 throughput (sentences per second over the first
   `--batch-sentences`), greedy search with the saved settings, the rules taking turns on every sentence and
   every batch, median of `--repeats` passes. The tokens are the same under every rule (tests/test_packed_weights.py).

    python measurements/measure_packing.py runs/cpu2 runs/eq/new-seed0 --data-path ../shared/data/fra-eng/fra.txt \
        --json docs/bench/cpu-avx2_packing.json

Run it on a quiet machine: anything else running moves every figure.
"""

import argparse
import json
import statistics
import time
from pathlib import Path

import torch
import torch.nn.functional as F

from hf_seq2seq.benchmarks.comparison import machine, machine_line
from hf_seq2seq.benchmarks.measuring import seconds_in_turn
from hf_seq2seq.data.fra_eng import load_fra_eng
from hf_seq2seq.engines import packed_weights
from hf_seq2seq.engines.factory import load_translator

RULES = {
    "none": lambda layer, rows: False,
    # the rule until 2026-11-26: the output layer of an 8,000-subword vocabulary, and large batches
    "large weight": lambda layer, rows: (
        layer.in_features * layer.out_features >= 2**20
        or rows * layer.in_features * layer.out_features >= 2**23
    ),
    "package": packed_weights.packing_pays,  # the rule of this checkout
    "all": lambda layer, rows: True,
}


def microseconds(fn, args: list, calls: int) -> float:
    """Mean microseconds of `fn(*args[i % len(args)])` over `calls` calls."""
    start = time.perf_counter()
    for i in range(calls):
        fn(*args[i % len(args)])
    return 1e6 * (time.perf_counter() - start) / calls


def packed_call(x, weight, bias):
    return torch.ops.mkldnn._linear_pointwise(x, weight, bias, "none", [], "")


def shape_timings(shapes: list[tuple[int, int]], repeats: int) -> list[dict]:
    """Per (in, out) shape at batch 1: median microseconds per call, plain and packed, cold and warm."""
    rows = []
    for in_features, out_features in shapes:
        copies = max(2, (64 * 2**20) // (4 * in_features * out_features))
        weights = [torch.randn(out_features, in_features) for _ in range(copies)]
        bias, x = torch.randn(out_features), torch.randn(1, in_features)
        kernels = {
            "plain": (F.linear, [(x, w, bias) for w in weights]),
            "packed": (
                packed_call,
                [
                    (x, torch.ops.mkldnn._reorder_linear_weight(w, packed_weights.PACKED_FOR_ROWS), bias)
                    for w in weights
                ],
            ),
        }
        row, calls = {"in": in_features, "out": out_features}, max(copies, 1000)
        for name, (fn, args) in kernels.items():
            microseconds(fn, args, copies)  # untimed: the first touch of every copy
            for cache, used in (("cold", args), ("warm", args[:1])):
                row[f"{cache}_{name}_us"] = statistics.median(
                    microseconds(fn, used, calls) for _ in range(repeats)
                )
        rows.append(row)
    return rows


def model_timings(folder: str, sources: list[str], batch_sources: list[str], repeats: int) -> dict:
    """Per rule: batch-1 ms per sentence and batch-64 sentences per second, medians over `repeats` passes, after
    an untimed pass (one-time costs of each shape). The rules take turns on every sentence (batch 1) and every
    batch of 64 (`seconds_in_turn`), so that the machine's drift, which moves a pass by several percent on a
    shared VM, falls on every rule alike."""
    translator = load_translator(folder, "torch")

    def under(rule, batch_size):
        def run(sentences):
            packed_weights.packing_pays = RULES[rule]
            translator.translate_sentences(sentences, batch_size=batch_size)

        return run

    inputs = {
        1: [[s] for s in sources],
        64: [batch_sources[i : i + 64] for i in range(0, len(batch_sources), 64)],
    }
    original = packed_weights.packing_pays
    try:
        passes = {}
        for batch_size, batches in inputs.items():
            fns = {rule: under(rule, batch_size) for rule in RULES}
            seconds_in_turn(fns, batches, 1, "cpu", by_batch=True)  # untimed
            passes[batch_size] = seconds_in_turn(fns, batches, repeats, "cpu", by_batch=True)
    finally:
        packed_weights.packing_pays = original
    config = translator.model.config
    rules = {}
    for rule in RULES:
        batch_1 = [1000 * s / len(sources) for s in passes[1][rule]]
        batch_64 = [len(batch_sources) / s for s in passes[64][rule]]
        rules[rule] = {
            "batch_1_ms_per_sentence": statistics.median(batch_1),
            "batch_64_sentences_per_s": statistics.median(batch_64),
            "batch_1_passes": batch_1,
            "batch_64_passes": batch_64,
        }
    return {
        "vocab_size": config.vocab_size,
        "d_model": config.d_model,
        "layers": f"{config.encoder_layers}+{config.decoder_layers}",
        "rules": rules,
    }


def main(argv=None):
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("folders", nargs="+", help="saved model folders")
    parser.add_argument("--data-path", required=True, help="fra.txt: the test split's sources")
    parser.add_argument("--sentences", type=int, default=200, help="batch-1 test sources")
    parser.add_argument("--batch-sentences", type=int, default=1024, help="batch-64 test sources")
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args(argv)
    if not packed_weights.packing_available():
        parser.error("this torch has no oneDNN packed-weight ops")

    facts = machine()
    print(f"machine: {machine_line(facts)}")
    d_model = json.loads((Path(args.folders[0]) / "config.json").read_text())["d_model"]
    ffn = 4 * d_model
    shapes = [
        (d_model, d_model),
        (d_model, 2 * d_model),
        (d_model, 3 * d_model),
        (d_model, ffn),
        (ffn, d_model),
    ]
    shapes += [(d_model, vocab) for vocab in (2000, 4000, 8000)]
    print("batch 1, one Linear layer: microseconds per call, median of", args.repeats)
    print(f"{'in':>6}{'out':>6}{'cold plain':>12}{'cold packed':>13}{'warm plain':>12}{'warm packed':>13}")
    shape_rows = shape_timings(shapes, args.repeats)
    for row in shape_rows:
        print(
            f"{row['in']:>6}{row['out']:>6}{row['cold_plain_us']:>12.1f}{row['cold_packed_us']:>13.1f}"
            f"{row['warm_plain_us']:>12.1f}{row['warm_packed_us']:>13.1f}"
        )

    test = load_fra_eng(args.data_path)["test"]
    sources, batch_sources = test["src"][: args.sentences], test["src"][: args.batch_sentences]
    print(
        f"greedy search, saved settings: batch 1 over {len(sources)} test sources (ms per sentence), "
        f"batch 64 over {len(batch_sources)} (sentences per second); median of {args.repeats} passes"
    )
    models = {}
    for folder in args.folders:
        models[folder] = model_timings(folder, sources, batch_sources, args.repeats)
        m = models[folder]
        print(f"{folder} (vocabulary {m['vocab_size']:,}, d_model {m['d_model']}, layers {m['layers']})")
        for rule, r in m["rules"].items():
            print(
                f"  {rule:<14}{r['batch_1_ms_per_sentence']:>9.2f} ms/sentence"
                f"{r['batch_64_sentences_per_s']:>10.1f} sentences/s"
            )
    if args.json:
        report = {
            "machine": facts,
            "sentences": len(sources),
            "batch_sentences": len(batch_sources),
            "repeats": args.repeats,
            "shapes": shape_rows,
            "models": models,
        }
        Path(args.json).write_text(json.dumps(report, indent=2) + "\n")


if __name__ == "__main__":
    main()

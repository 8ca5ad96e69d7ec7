"""Each engine's speed on a user's jobs, as a user runs them: one `hf-seq2seq translate` command per file or
sentence, start-up included, the engines in turn on one machine.

* time to a first translation: `hf-seq2seq translate [--engine E] FOLDER "Where is the station?"` (median of
  `--repeats` runs);
* files: every `.html`/`.htm`/`.docx`/... of `--files`, each translated by its own command into a scratch folder
  (`--input-file F --output-file G`), the total wall time; pages or documents per second;
* with `--sentences FILE` (one a line), in one process: plain-text sentences per second (batches of 64, the
  saved decoding, after an untimed pass) and batch-1 latency (`--latency-sentences` of them one at a time, the
  engines taking turns: `hf_seq2seq.benchmarks.comparison.batch_1_latency_ms`).

Engines are given as NAME=ENGINE:FOLDER[:PRECISION] (torch=torch:runs/cpu, ct2=ctranslate2:runs/cpu-ct2,
onnx-int8=onnxruntime:runs/cpu-onnx:int8). BLEU per engine: `hf-seq2seq evaluate --engine E FOLDER`.

    python measurements/measure_engine_jobs.py torch=torch:runs/cpu ct2=ctranslate2:runs/cpu-ct2 \\
        --files tests/fixtures/real --sentences test.en --json docs/bench/engine_jobs.json
"""

import argparse
import json
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from measure_documents import files_under

from hf_seq2seq.benchmarks.comparison import batch_1_latency_ms
from hf_seq2seq.engines.factory import load_translator

SUFFIXES = (".html", ".htm", ".docx", ".pptx", ".odt", ".odp", ".epub", ".srt", ".vtt", ".txt")


def command(spec: str) -> list[str]:
    """The `hf-seq2seq translate` arguments that load one engine spec ENGINE:FOLDER[:PRECISION]."""
    engine, folder, *precision = spec.split(":")
    return [
        "hf-seq2seq",
        "translate",
        "--engine",
        engine,
        folder,
        *(["--precision", *precision] if precision else []),
    ]


def load(spec: str):
    """The `Translator` of an engine spec ENGINE:FOLDER[:PRECISION]."""
    engine, folder, *precision = spec.split(":")
    return load_translator(folder, engine, *precision)


def timed(argv: list[str]) -> float:
    start = time.perf_counter()
    subprocess.run(argv, check=True, capture_output=True)
    return time.perf_counter() - start


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("engines", nargs="+", help="NAME=ENGINE:FOLDER[:PRECISION]")
    parser.add_argument(
        "--files", nargs="*", default=[], help="files, or folders of them, to translate one by one"
    )
    parser.add_argument("--sentences", help="a file of sentences, one a line: throughput and batch-1 latency")
    parser.add_argument("--latency-sentences", type=int, default=100)
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    files = files_under(args.files, SUFFIXES)
    rows = {}
    for item in args.engines:
        name, spec = item.split("=", 1)
        base = command(spec)
        first = statistics.median(timed([*base, "Where is the station?"]) for _ in range(args.repeats))
        row = {"spec": spec, "first_translation_s": round(first, 2)}
        if files:
            with tempfile.TemporaryDirectory() as scratch:
                start = time.perf_counter()
                for k, path in enumerate(files):
                    subprocess.run(
                        [*base, "--input-file", str(path), "--output-file", f"{scratch}/{k}{path.suffix}"],
                        check=True,
                        capture_output=True,
                    )
                seconds = time.perf_counter() - start
            row |= {
                "files": len(files),
                "files_s": round(seconds, 1),
                "files_per_s": round(len(files) / seconds, 3),
            }
        rows[name] = row
        print(name, row, flush=True)
    if args.sentences:
        sentences = Path(args.sentences).read_text(encoding="utf-8").splitlines()
        translators = {name: load(spec["spec"]) for name, spec in rows.items()}
        for name, translator in translators.items():
            translator.translate_sentences(sentences[:64])  # untimed: one-time costs
            start = time.perf_counter()
            translator.translate_sentences(sentences, batch_size=64)
            rows[name]["sentences_per_s"] = round(len(sentences) / (time.perf_counter() - start), 1)
        latency = batch_1_latency_ms(translators, sentences[: args.latency_sentences], args.repeats)
        for name, ms in latency.items():
            rows[name]["batch_1_ms_per_sentence"] = round(ms, 1)
            print(name, rows[name], flush=True)
    names = list(rows)
    if files and len(names) > 1:
        for name in names[1:]:
            print(
                f"{name}: {rows[names[0]]['files_s'] / rows[name]['files_s']:.2f}x {names[0]}'s speed on the files"
            )
    if args.json:
        Path(args.json).write_text(
            json.dumps({"files": [str(f) for f in files], "engines": rows}, indent=1) + "\n"
        )


if __name__ == "__main__":
    main()

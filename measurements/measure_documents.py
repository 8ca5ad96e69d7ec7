"""What documents of every format lose in translation: each file given is translated as `hf-seq2seq translate
--input-file` does (`translate_document`), under a time limit, and what it held is counted before and after
(`counters.document_counts`): paragraphs or cues, their formattings (HTML's inline elements with text), links,
notes, Word's fields, cue lines and dialogue dashes, inline elements' blocks, whether an HTML page keeps its
tags, text left untranslated; a traceback, a hang or a refusal is a row of its own. Prints a row per file and
totals per format.

    python measurements/measure_documents.py runs/multi30k /work/data/outside --json docs/bench/outside_documents.json
    python measurements/measure_documents.py runs/multi30k-ct2 tests/fixtures/real --engine ctranslate2
"""

import argparse
import json
import signal
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

from counters import document_counts

from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.formats.documents import DOCUMENT_FORMATS, DocumentError, translate_document

PROBLEMS = (
    "untranslated", "units_losing_format", "links_lost", "links_added", "moved", "tags_differ", "units_missing",
    "cue_lines_changed", "dashes_changed", "cues_missing",
)  # fmt: skip
"""What counts as something lost, in the order printed."""


def files_under(paths, suffixes) -> list[Path]:
    """The files named and those anywhere in the folders named (each folder's sorted), whose suffix (any case) is
    one of `suffixes`: what a measuring script reads from its command line."""
    files = []
    for name in paths:
        path = Path(name)
        found = sorted(path.rglob("*")) if path.is_dir() else [path]
        files += [f for f in found if f.is_file() and f.suffix.lower() in suffixes]
    return files


class Hang(Exception):
    pass


def _alarm(signum, frame):
    raise Hang


def measure(translator, path: Path, limit: int) -> dict:
    row: dict = {"file": str(path), "format": path.suffix.lower()}
    with tempfile.TemporaryDirectory() as folder:
        output = Path(folder) / f"out{path.suffix}"
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(limit)
        start = time.perf_counter()
        try:
            translate_document(translator, path, output)
        except DocumentError as error:
            return row | {"refused": str(error)}
        except Hang:
            return row | {"hang": limit}
        except Exception as error:  # what the measure looks for: a traceback a user would see
            return row | {"traceback": f"{type(error).__name__}: {error}", "where": traceback.format_exc(-3)}
        finally:
            signal.alarm(0)
        row["seconds"] = round(time.perf_counter() - start, 2)
        try:
            counts = document_counts(path.read_bytes(), output.read_bytes(), path.suffix)
        except Exception as error:  # the output does not open with its format's own reader
            return row | {"unreadable": f"{type(error).__name__}: {error}"}
    return row | dict(counts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a saved model folder or an export (its engine found from its files)")
    parser.add_argument("paths", nargs="+", help="files, or folders searched for files of the formats taken")
    parser.add_argument("--engine", default="auto", choices=["auto", "torch", "ctranslate2", "onnxruntime"])
    parser.add_argument("--precision", default="fp32", help="as `hf-seq2seq translate --precision`")
    parser.add_argument("--limit", type=int, default=300, help="seconds a file may take before it is a hang")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    files = files_under(args.paths, set(DOCUMENT_FORMATS) - {".txt"})
    translator = load_translator(args.model, args.engine, args.precision)
    rows, totals = [], {}
    print(f"{'file':<58} {'units':>5} {'fmt kept':>9} {'links':>7} {'notes':>7}  lost")
    for path in files:
        row = measure(translator, path, args.limit)
        rows.append(row)
        total = totals.setdefault(row["format"], Counter())
        total["files"] += 1
        name = str(path)[-58:]
        failed = next((key for key in ("refused", "hang", "traceback", "unreadable") if key in row), None)
        if failed:
            total[failed] += 1
            print(f"{name:<58} {failed}: {str(row[failed])[:150]}", flush=True)
            continue
        counts = Counter({k: v for k, v in row.items() if isinstance(v, int)})
        total.update(counts)
        lost = [f"{key} {counts[key]}" for key in PROBLEMS if counts[key]]
        if counts["fields_after"] < counts["fields"]:  # a field the translation lost
            lost.append(f"fields_lost {counts['fields'] - counts['fields_after']}")
        total["files_losing"] += bool(lost)
        print(
            f"{name:<58} {counts['units']:>5} {counts['formats_after']:>4}/{counts['formats']:<4}"
            f" {counts['links']:>7} {counts['notes_after']:>3}/{counts['notes']:<3}  {', '.join(lost) or '-'}",
            flush=True,
        )
    print("\nper format:")
    for extension, total in sorted(totals.items()):
        whole = (
            total["files"]
            - total["files_losing"]
            - sum(total[k] for k in ("refused", "hang", "traceback", "unreadable"))
        )
        parts = [f"{extension}: {total['files']} files, {whole} whole"]
        parts += [
            f"{key} {total[key]}" for key in ("refused", "hang", "traceback", "unreadable") if total[key]
        ]
        parts += [
            f"units {total['units']}",
            f"formattings {total['formats_after']}/{total['formats']}",
            f"links {total['links'] - total['links_lost']}/{total['links']} (+{total['links_added']})",
            f"notes {total['notes_after']}/{total['notes']}",
        ]
        if total["fields"]:
            parts.append(f"fields {total['fields_after']}/{total['fields']}")
        parts += [f"{key} {total[key]}" for key in PROBLEMS if total[key]]
        print("  " + ", ".join(parts))
    if args.json:
        Path(args.json).write_text(json.dumps({"rows": rows}, indent=1) + "\n")


if __name__ == "__main__":
    main()

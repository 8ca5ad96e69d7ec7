"""What PDF translation does with real files from other projects: each file of a corpus manifest
(`gather_pdf_corpus.py`'s MANIFEST.tsv) is translated as `hf-seq2seq translate --input-file` does
(`translate_document`), under a time limit, and classified:

* translated whole: the output opens (pypdfium2) with as many pages as the input (where pypdfium2 opens the
  input: it refuses some encrypted files that pikepdf opens with an empty password);
* refused: `DocumentError`, with its message (a refused file with 20 words or more that have letters, as
  pypdfium2 reads it, is flagged: "refused, has text");
* failed: any other exception (its type and message), a hang, an output that does not open or whose page
  count differs.

A file longer than `--max-pages` is translated as a copy of that many of its pages, from `--from-page` on
(`cut_pages`; the row says which). Each row records the seconds, the warnings logged, pages, bytes and words
(pypdfium2's text) before and after (`bytes_in`: the file translated, so the cut copy where one is cut, the
whole file's size then in `bytes_file`; until 2026-12-08 `bytes_in` was always the whole file's), whether the
output is within issue 85's size limit (`within_size_limit`: at most twice `bytes_in` plus 1 MB, 10^6 bytes),
the share of the output's words that are the input's (a page left in English scores near 1), and the output's
lines of four words or more that are the input's as they were (text left untranslated). `--render DIR` writes
the first `--render-pages` pages before and after as PNG (`DIR/<project>/<file>.before.p1.png`,
`.after.p1.png`). Prints a row per file, the counts per result and kind, and the translations' largest size
ratio (output / input) and whether each is within the size limit; `--json` writes the rows, `--markdown` their
table, `--outputs DIR` keeps the translations. In place of a manifest, a folder: each `*.pdf` in it
(`tests/fixtures/pdf`, each file's project the start of its name). Needs the pdf extra (pikepdf) and pypdfium2
(`pip install pypdfium2`, which nothing else needs).

    python measurements/pdf_corpus.py /work/main/runs/base-ct2 /work/pdf-corpus/MANIFEST.tsv --max-pages 3 \
        --json docs/bench/pdf_corpus.json --render /tmp/pdf-renders
    python measurements/pdf_corpus.py runs/base /work/pdf-corpus/MANIFEST.tsv --only texlive/ --render /tmp/r
    python measurements/pdf_corpus.py /work/main/runs/base-ct2 tests/fixtures/pdf --max-pages 0
"""

import argparse
import csv
import json
import logging
import shutil
import signal
import tempfile
import time
import traceback
from collections import Counter
from pathlib import Path

import pypdfium2

from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.formats.documents import DocumentError, translate_document
from hf_seq2seq.models.languages import model_languages


class Hang(Exception):
    pass


class Warnings(logging.Handler):
    """The warnings the package logs while a file is translated (a paragraph set smaller to fit, ...)."""

    def __init__(self):
        super().__init__(logging.WARNING)
        self.messages: list[str] = []

    def emit(self, record: logging.LogRecord) -> None:
        self.messages.append(record.getMessage())


SIZE_ALLOWANCE = 1_000_000
"""Issue 85's limit on an output's size: at most twice its input's plus this (1 MB)."""


def _alarm(signum, frame):
    raise Hang


def read_manifest(path: Path) -> list[dict]:
    """The manifest's rows, each with its file's absolute path as "file"; for a folder, a row for each `*.pdf`
    in it, its project the start of its name (`pikepdf-fourpages.pdf`: pikepdf), its kind and licence "?"."""
    if path.is_dir():
        return [
            {
                "path": file.name,
                "file": str(file),
                "project": file.name.split("-")[0],
                "kind": "?",
                "licence": "?",
            }
            for file in sorted(path.glob("*.pdf"))
        ]
    with path.open(newline="", encoding="utf-8") as handle:
        rows = list(csv.DictReader(handle, delimiter="\t"))
    for row in rows:
        row["file"] = str(path.parent / row["path"])
    return rows


def open_pdf(path: Path):
    """The document, or None where pypdfium2 opens none (encrypted, broken)."""
    try:
        return pypdfium2.PdfDocument(path)
    except pypdfium2.PdfiumError:
        return None


def read_texts(path: Path) -> list[str] | None:
    """Each page's text as pypdfium2 extracts it, or None where it cannot open the file or one of its pages."""
    document = open_pdf(path)
    if document is None:
        return None
    texts = []
    try:
        for index in range(len(document)):
            page = document[index]
            texts.append(page.get_textpage().get_text_range())
            page.close()
    except pypdfium2.PdfiumError:
        return None
    finally:
        document.close()
    return texts


def kept_lines(before: list[str], after: list[str]) -> list[str]:
    """The output's lines of four words or more that are lines of the input, as they were: text left
    untranslated."""
    lines = {line.strip() for text in before for line in text.splitlines()}
    return [
        line.strip()
        for text in after
        for line in text.splitlines()
        if len(line.split()) >= 4 and line.strip() in lines and any(c.isalpha() for c in line)
    ]


def cut_pages(source: Path, start: int, count: int, target: Path) -> None:
    """A copy of `source` cut to its `count` pages from index `start` by pikepdf (the pdf extra's), which keeps
    the rest of the document as it was: fonts, form fields, outline (its entries to cut pages then lead
    nowhere)."""
    import pikepdf

    with pikepdf.open(source) as document:
        del document.pages[start + count :]
        del document.pages[:start]
        document.save(target)


def render(path: Path, pages: int, scale: float, stem: Path) -> list[str]:
    """The first `pages` pages of `path` as PNG files `stem.p<N>.png` (those pypdfium2 renders); the paths
    written."""
    document = open_pdf(path)
    if document is None:
        return []
    written = []
    try:
        for index in range(min(pages, len(document))):
            page = document[index]
            image = page.render(scale=scale).to_pil()
            target = stem.with_name(f"{stem.name}.p{index + 1}.png")
            image.save(target, optimize=True)
            written.append(str(target))
            page.close()
    except pypdfium2.PdfiumError:
        pass
    finally:
        document.close()
    return written


def shared_words(before: list[str], after: list[str]) -> float:
    """The share of `after`'s words (longer than two letters) found among `before`'s: near 1 for a page left
    untranslated, low for a translated one."""
    kept = [word for word in after if len(word) > 2 and any(c.isalpha() for c in word)]
    if not kept:
        return 0.0
    source = set(before)
    return round(sum(word in source for word in kept) / len(kept), 3)


def measure(translator, entry: dict, args, languages: tuple[str, str], renders: Path | None) -> dict:
    """One manifest entry translated and classified (see the module docstring)."""
    path = Path(entry["file"])
    row: dict = {key: entry[key] for key in ("path", "project", "kind", "licence")}
    with tempfile.TemporaryDirectory() as folder:
        source, texts_in = path, read_texts(path)
        if texts_in is not None:
            if args.max_pages and len(texts_in) > args.max_pages:
                start = max(0, min(args.from_page - 1, len(texts_in) - args.max_pages))
                source = Path(folder) / f"cut{path.suffix}"
                cut_pages(path, start, args.max_pages, source)
                row["cut"] = f"pages {start + 1}-{start + args.max_pages} of {len(texts_in)}"
                row["bytes_file"] = path.stat().st_size
                texts_in = read_texts(source) or []
            row["pages_in"], row["words_in"] = len(texts_in), sum(len(text.split()) for text in texts_in)
        row["bytes_in"] = source.stat().st_size  # what is translated: the cut copy where cut
        output = Path(folder) / f"out{path.suffix}"
        warnings = Warnings()
        logging.getLogger("hf_seq2seq").addHandler(warnings)
        signal.signal(signal.SIGALRM, _alarm)
        signal.alarm(args.limit)
        start = time.perf_counter()
        try:
            translate_document(translator, source, output, source_lang=languages[0], target_lang=languages[1])
        except DocumentError as error:
            row |= {"result": "refused", "reason": str(error)}
        except Hang:
            row |= {"result": "failed", "reason": f"hang: over {args.limit} s"}
        except Exception as error:  # what the measure looks for: a traceback a user would see
            row |= {"result": "failed", "reason": f"{type(error).__name__}: {error}"}
            row["where"] = traceback.format_exc(-3)
        finally:
            signal.alarm(0)
            logging.getLogger("hf_seq2seq").removeHandler(warnings)
        row["warnings"] = warnings.messages
        row["seconds"] = round(time.perf_counter() - start, 2)
        words = [word for text in texts_in or [] for word in text.split() if any(c.isalpha() for c in word)]
        if row.get("result") == "refused" and len(words) >= 20:
            row["refused_with_text"] = len(words)
        if "result" not in row:
            row["bytes_out"] = output.stat().st_size
            row["within_size_limit"] = row["bytes_out"] <= 2 * row["bytes_in"] + SIZE_ALLOWANCE
            texts_out = read_texts(output)
            if texts_out is None:
                row |= {"result": "failed", "reason": "the output does not open"}
            else:
                row["pages_out"], row["words_out"] = (
                    len(texts_out),
                    sum(len(text.split()) for text in texts_out),
                )
                words_in = [word for text in texts_in or [] for word in text.split()]
                row["shared_words"] = shared_words(
                    words_in, [word for text in texts_out for word in text.split()]
                )
                row["kept_lines"] = kept_lines(texts_in or [], texts_out)
                if "pages_in" in row and row["pages_out"] != row["pages_in"]:
                    row |= {"result": "failed", "reason": f"pages {row['pages_in']} -> {row['pages_out']}"}
                else:
                    row["result"] = "translated"
        if args.outputs and output.exists():
            kept = Path(args.outputs) / row["path"]
            kept.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(output, kept)
            if source != path:
                shutil.copyfile(source, kept.with_name(kept.stem + ".source.pdf"))
        if renders is not None:
            stem = renders / row["path"]
            stem.parent.mkdir(parents=True, exist_ok=True)
            row["renders"] = render(
                source, args.render_pages, args.scale, stem.with_name(stem.name + ".before")
            )
            if output.exists():
                row["renders"] += render(
                    output, args.render_pages, args.scale, stem.with_name(stem.name + ".after")
                )
    return row


def print_row(row: dict) -> None:
    pages = f"{row.get('pages_in', '?')}>{row.get('pages_out', '-')}"
    detail = row.get("reason", "")
    if row["result"] == "translated":
        detail = f"{row['seconds']:.1f} s, words {row.get('words_in', '?')}>{row['words_out']}, shared {row['shared_words']}"
        detail += f", bytes {row['bytes_in']}>{row['bytes_out']}" + (
            "" if row["within_size_limit"] else " (over 2x + 1 MB)"
        )
        detail += f", {len(row['kept_lines'])} lines kept" if row["kept_lines"] else ""
        detail += f", {len(row['warnings'])} warnings" if row["warnings"] else ""
    if row.get("cut"):
        detail += f" ({row['cut']})"
    if row.get("refused_with_text"):
        detail += f" [refused, has text: {row['refused_with_text']} words with letters]"
    print(
        f"{row['path'][-48:]:<48} {row['kind']:<9} {pages:>7} {row['result']:<10} {detail[:160]}", flush=True
    )


def markdown_table(rows: list[dict]) -> str:
    """The rows as docs/pdf-corpus.md's table: file, project, kind, pages, result, reason or time."""
    lines = [
        "| file | project | kind | pages | result | reason or time |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for row in rows:
        pages = str(row.get("pages_in", "?")) + (f" ({row['cut']})" if row.get("cut") else "")
        if row["result"] == "translated":
            detail = f"{row['seconds']:.1f} s, {row.get('words_in', '?')} -> {row['words_out']} words"
        else:
            detail = row["reason"].replace("|", "\\|").replace("\n", " ")
            if len(detail) > 200:
                detail = detail[:199] + "…"
        name = row["path"].split("/", 1)[-1]
        lines.append(
            f"| `{name}` | {row['project']} | {row['kind']} | {pages} | {row['result']} | {detail} |"
        )
    return "\n".join(lines) + "\n"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a saved model folder or an export (its engine found from its files)")
    parser.add_argument(
        "manifest", help="the corpus's MANIFEST.tsv (gather_pdf_corpus.py), or a folder of PDF files"
    )
    parser.add_argument("--engine", default="auto", choices=["auto", "torch", "ctranslate2", "onnxruntime"])
    parser.add_argument("--precision", default="fp32", help="as `hf-seq2seq translate --precision`")
    parser.add_argument("--source-lang", help="default: the model's")
    parser.add_argument("--target-lang", help="default: the model's")
    parser.add_argument(
        "--max-pages", type=int, default=3, help="translate that many pages of a longer file (0: all)"
    )
    parser.add_argument(
        "--from-page", type=int, default=1, help="where a longer file's pages start (1: first)"
    )
    parser.add_argument("--limit", type=int, default=300, help="seconds a file may take before it is a hang")
    parser.add_argument("--only", nargs="+", help="the manifest's paths that contain one of these")
    parser.add_argument("--render", help="write PNG pages before and after here")
    parser.add_argument("--render-pages", type=int, default=1, help="how many pages of each file to render")
    parser.add_argument("--scale", type=float, default=1.0, help="render scale (1: 72 dpi)")
    parser.add_argument("--outputs", help="keep the translated files here (and the cut copies translated)")
    parser.add_argument("--json", help="write the rows here")
    parser.add_argument("--markdown", help="write the table of docs/pdf-corpus.md here")
    args = parser.parse_args()
    entries = read_manifest(Path(args.manifest))
    if args.only:
        entries = [entry for entry in entries if any(part in entry["path"] for part in args.only)]
    pair = model_languages(args.model) or ("en", "fr")
    languages = (args.source_lang or pair[0], args.target_lang or pair[1])
    translator = load_translator(args.model, args.engine, args.precision)
    renders = Path(args.render) if args.render else None
    print(f"{'file':<48} {'kind':<9} {'pages':>7} {'result':<10} reason or time")
    rows = []
    for entry in entries:
        rows.append(measure(translator, entry, args, languages, renders))
        print_row(rows[-1])
    results = Counter(row["result"] for row in rows)
    print(f"\n{len(rows)} files from {len({row['project'] for row in rows})} projects: " + ", ".join(
        f"{results[key]} {key}" for key in ("translated", "refused", "failed")
    ))  # fmt: skip
    for kind in sorted({row["kind"] for row in rows}):
        counts = Counter(row["result"] for row in rows if row["kind"] == kind)
        print(
            f"  {kind}: " + ", ".join(f"{counts[key]} {key}" for key in ("translated", "refused", "failed"))
        )
    done = [row for row in rows if row["result"] == "translated"]
    if done:
        seconds, pages = sum(row["seconds"] for row in done), sum(row["pages_out"] for row in done)
        print(f"translated: {pages} pages in {seconds:.0f} s ({seconds / max(pages, 1):.1f} s a page)")
        largest = max(done, key=lambda row: row["bytes_out"] / row["bytes_in"])
        over = [row["path"] for row in done if not row["within_size_limit"]]
        print(
            f"size: largest output / input {largest['bytes_out'] / largest['bytes_in']:.2f} ({largest['path']}, "
            f"{largest['bytes_in']:,} -> {largest['bytes_out']:,} bytes); "
            + (f"over 2x + 1 MB: {', '.join(over)}" if over else f"all {len(done)} within 2x + 1 MB")
        )
    reasons = Counter(row["reason"].split(":")[0] for row in rows if row["result"] != "translated")
    for reason, count in reasons.most_common():
        print(f"  {count} x {reason}")
    flagged = [row["path"] for row in rows if row.get("refused_with_text")]
    if flagged:
        print("refused although they have text: " + ", ".join(flagged))
    if args.json:
        run = {
            "model": args.model,
            "engine": args.engine,
            "languages": languages,
            "max_pages": args.max_pages,
        }
        Path(args.json).write_text(json.dumps(run | {"rows": rows}, indent=1) + "\n")
    if args.markdown:
        Path(args.markdown).write_text(markdown_table(rows))


if __name__ == "__main__":
    main()

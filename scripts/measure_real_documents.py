"""Nothing lost in real documents: each HTML page and Word document given is translated as the CLI does, and
what it held is counted before and after: inline elements with text and links with text (HTML), hyperlinks,
fields and run formattings with text (.docx), and whether the tags are the source's.

    python scripts/measure_real_documents.py MODEL tests/fixtures/real --json docs/bench/real_documents.json
    python scripts/measure_real_documents.py EXPORT --engine ctranslate2 tests/fixtures/real
"""

import argparse
import json
import time
from collections import Counter
from pathlib import Path

from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.evaluation.documents import files_under
from hf_seq2seq.evaluation.markup import docx_kept, inline_elements_kept
from hf_seq2seq.formats.documents import DocumentError, translate_document_bytes
from hf_seq2seq.formats.markup import INLINE_ELEMENTS

HTML_KEYS = ("inline_with_text", "links_with_text")
DOCX_KEYS = ("hyperlinks", "fields", "run_formats")


def measure(translator, path: Path) -> dict:
    data = path.read_bytes()
    start = time.perf_counter()
    try:
        translated = translate_document_bytes(translator, data, path.suffix)
    except DocumentError as error:
        return {"file": path.name, "refused": str(error)}
    row = {"file": path.name, "seconds": round(time.perf_counter() - start, 2)}
    if path.suffix.lower() == ".docx":
        return row | docx_kept(data, translated)
    source, output = data.decode("utf-8-sig"), translated.decode("utf-8-sig")
    return row | inline_elements_kept(source, output, INLINE_ELEMENTS)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a saved model folder, or an export with --engine")
    parser.add_argument("--engine", default="torch", choices=["torch", "ctranslate2", "onnxruntime"])
    parser.add_argument("--precision", default="fp32", help="as `hf-seq2seq translate --precision`")
    parser.add_argument("paths", nargs="+", help=".html/.htm/.docx files, or folders of them")
    parser.add_argument("--json", help="write the rows here")
    args = parser.parse_args()
    files = files_under(args.paths, (".html", ".htm", ".docx"))
    translator = load_translator(args.model, args.engine, args.precision)
    rows = [measure(translator, path) for path in files]
    totals = Counter()
    print(f"{'file':<44} {'kept / with text':>18} {'links kept':>12} {'same tags':>9}  what")
    for row in rows:
        if "refused" in row:
            print(f"{row['file'][:44]:<44} refused: {row['refused']}")
            continue
        docx = row["file"].lower().endswith(".docx")
        keys = DOCX_KEYS if docx else HTML_KEYS
        for key in keys:
            totals[key] += row.get(key, 0)
            totals[key + "_after"] += row.get(key + "_after", 0)
        if docx:
            kept = f"{row.get('run_formats_after', 0)}/{row.get('run_formats', 0)}"
            links = f"{row.get('hyperlinks_after', 0)}/{row.get('hyperlinks', 0)}"
            same = "yes" if not row.get("paragraphs_differ") else "no"
            what = f"fields {row.get('fields_after', 0)}/{row.get('fields', 0)}"
            untranslated = row.get("paragraphs_unchanged", 0)
            what += f", {untranslated}/{row.get('paragraphs_with_letters', 0)} paragraphs unchanged"
        else:
            kept = f"{row['inline_with_text_after']}/{row['inline_with_text']}"
            links = f"{row['links_with_text_after']}/{row['links_with_text']}"
            same, what = ("yes" if row["same_tags"] else "no"), " ".join(row["emptied"][:3])
        print(f"{row['file'][:44]:<44} {kept:>18} {links:>12} {same:>9}  {what}")
    print(
        f"HTML: {totals['inline_with_text_after']}/{totals['inline_with_text']} inline elements with text kept,"
        f" {totals['links_with_text_after']}/{totals['links_with_text']} links;"
        f" .docx: {totals['run_formats_after']}/{totals['run_formats']} run formattings,"
        f" {totals['hyperlinks_after']}/{totals['hyperlinks']} hyperlinks,"
        f" {totals['fields_after']}/{totals['fields']} fields"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(
                {"model": args.model, "engine": args.engine, "totals": totals, "files": rows},
                f,
                indent=1,
                ensure_ascii=False,
            )


if __name__ == "__main__":
    main()

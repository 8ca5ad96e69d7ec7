"""The paragraphs of a PDF corpus that a column or page end cuts and that are read as one text with the one they
run on in (`pdf_reading._carry_on`): each join's end and start, to read and judge, and their count.

    python measurements/pdf_run_ons.py /work/pdf-corpus/MANIFEST.tsv --max-pages 3

The manifest is `measurements/pdf_corpus.py`'s (a `path` column, relative to its folder); a file pikepdf or
pdfminer cannot read is left out (pdf_corpus.py classifies those).
"""

import argparse
import csv
import io
from pathlib import Path

import pikepdf

from hf_seq2seq.formats.documents.pdf_reading import read_pages
from hf_seq2seq.formats.documents.pdf_setting import covered


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("manifest", type=Path)
    parser.add_argument("--max-pages", type=int, default=3, help="the first pages of each file (0: all)")
    args = parser.parse_args()
    rows = list(csv.DictReader(args.manifest.open(), delimiter="\t"))
    joins = files = 0
    for row in rows:
        try:
            with pikepdf.open(args.manifest.parent / row["path"]) as pdf:
                while args.max_pages and len(pdf.pages) > args.max_pages:
                    del pdf.pages[-1]
                data = io.BytesIO()
                pdf.save(data)
            pages, _ = read_pages(data.getvalue(), covered)
        except Exception:  # noqa: BLE001 (refused or failed: pdf_corpus.py says which)
            continue
        files += 1
        for number, page in enumerate(pages):
            for paragraph in page.paragraphs:
                if paragraph.following:
                    joins += 1
                    print(f"{row['path']} page {number + 1}: ...{paragraph.text[-50:]!r}")
                    for lower in paragraph.following:
                        print(f"    runs on, page {lower.page + 1}: {lower.text[:50]!r}...")
    print(f"{joins} paragraphs run on after a column or page end, in {files} files read")


if __name__ == "__main__":
    main()

"""Time one PDF's translation on each engine: the first pages of a file, translated twice per engine in one
process (the model loaded once), with the format's own split into reading, translating, setting and writing.

    hf-seq2seq export ctranslate2 runs/cpu runs/cpu-ct2 --quantization int8
    hf-seq2seq export onnx runs/cpu runs/cpu-onnx
    python measurements/pdf_engine_times.py /usr/share/doc/shared-mime-info/shared-mime-info-spec.pdf \
        --pages 10 --engine torch=runs/cpu --engine ctranslate2=runs/cpu-ct2 --engine onnxruntime=runs/cpu-onnx
"""

import argparse
import logging
import tempfile
import time
from pathlib import Path

import pikepdf

from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.formats.documents import translate_document


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("pdf")
    p.add_argument("--pages", type=int, default=10)
    p.add_argument("--engine", action="append", required=True, help="ENGINE=FOLDER, once per engine")
    p.add_argument("--runs", type=int, default=2)
    args = p.parse_args()
    logging.basicConfig(level=logging.WARNING, format="%(message)s")
    logging.getLogger("hf_seq2seq.formats.documents.pdf").setLevel(logging.INFO)  # its split of the time
    with tempfile.TemporaryDirectory() as folder:
        cut = Path(folder) / "cut.pdf"
        with pikepdf.open(args.pdf) as source:
            del source.pages[args.pages :]
            source.save(cut)
        for each in args.engine:
            engine, model = each.split("=", 1)
            translator = load_translator(model, engine)
            for run in range(args.runs):
                started = time.perf_counter()
                translate_document(translator, cut, Path(folder) / f"{engine}.pdf", target_lang="fr")
                print(f"{engine} run {run + 1}: {time.perf_counter() - started:.2f} s", flush=True)


if __name__ == "__main__":
    main()

"""`hf-seq2seq export`: convert a saved model folder for another inference engine (CTranslate2, ONNX Runtime)."""

import sys

from hf_seq2seq.cli._common import parser, quiet_transformers
from hf_seq2seq.export.folder import QUANTIZATIONS


def build_parser():
    p = parser(
        "export",
        "Convert a saved transformer_mt model folder, with its tokenizer and saved decoding beside it, to "
        'CTranslate2 (a fast C++ engine; needs pip install "hf_seq2seq[deploy]") or to ONNX (ONNX Runtime, '
        'Optimum\'s layout, which transformers.js loads in a browser; needs pip install "hf_seq2seq[onnx]"). '
        "Translate with it through `hf-seq2seq translate --engine ctranslate2|onnxruntime OUT_DIR ...`.",
        "hf-seq2seq export ctranslate2 runs/cpu runs/cpu-ct2-int8 --quantization int8\n"
        "  hf-seq2seq export onnx runs/cpu runs/cpu-onnx --quantization int8",
    )
    p.add_argument("format", choices=["ctranslate2", "onnx"], help="the export format")
    p.add_argument("model", help="a saved model folder")
    p.add_argument("output_dir", help="the export folder to write")
    p.add_argument(
        "--quantization",
        choices=QUANTIZATIONS,
        default=None,
        help="CTranslate2: the stored weight type (int8: int8 matmuls, float32 elsewhere; the default int8). ONNX: "
        "int8 also writes int8 graphs (onnx/*_quantized.onnx, transformers.js's q8) beside the fp32 ones; float32 "
        "(the default) the fp32 ones alone",
    )
    p.add_argument("--quantize", choices=["int8"], default=None, help="deprecated: --quantization int8")
    p.add_argument("--force", action="store_true", help="replace output_dir if it exists")
    return p


def main(argv: list[str] | None = None):
    p = build_parser()
    args = p.parse_args(argv)
    if args.quantize is not None:  # the ONNX export's flag before both exports took --quantization
        print(f"{p.prog}: --quantize is deprecated: use --quantization {args.quantize}", file=sys.stderr)
        if args.quantization not in (None, args.quantize):
            p.error(f"--quantize {args.quantize} contradicts --quantization {args.quantization}")
        args.quantization = args.quantize
    quiet_transformers()
    if args.format == "onnx":
        if args.quantization not in (None, "int8", "float32"):
            p.error(
                f"an ONNX export writes float32 graphs, and int8 ones beside them: not {args.quantization}"
            )
        from hf_seq2seq.export.onnx import export_onnx

        int8 = args.quantization == "int8"
        path = export_onnx(args.model, args.output_dir, quantize="int8" if int8 else None, force=args.force)
        print(f"exported {args.model} to {path} (fp32{' and int8' if int8 else ''} ONNX graphs)")
        return path
    from hf_seq2seq.export.ctranslate2 import export_ctranslate2

    quantization = args.quantization or "int8"
    path = export_ctranslate2(args.model, args.output_dir, quantization=quantization, force=args.force)
    print(f"exported {args.model} ({quantization}) to {path}")
    return path

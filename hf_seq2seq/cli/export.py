"""`hf-seq2seq export`: convert a saved model folder for another inference engine (CTranslate2, ONNX Runtime)."""

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
        "  hf-seq2seq export onnx runs/cpu runs/cpu-onnx --quantize int8",
    )
    p.add_argument("format", choices=["ctranslate2", "onnx"], help="the export format")
    p.add_argument("model", help="a saved model folder")
    p.add_argument("output_dir", help="the export folder to write")
    p.add_argument(
        "--quantization",
        choices=QUANTIZATIONS,
        default=None,
        help="CTranslate2: stored weight type (int8: int8 matmuls, float32 elsewhere; default int8)",
    )
    p.add_argument(
        "--quantize",
        choices=["int8"],
        default=None,
        help="ONNX: also write int8 graphs (onnx/*_quantized.onnx, transformers.js's q8) beside the fp32 ones",
    )
    p.add_argument("--force", action="store_true", help="replace output_dir if it exists")
    return p


def main(argv: list[str] | None = None):
    p = build_parser()
    args = p.parse_args(argv)
    if args.format == "onnx" and args.quantization is not None:
        p.error("--quantization is CTranslate2's; for ONNX use --quantize int8")
    if args.format == "ctranslate2" and args.quantize is not None:
        p.error("--quantize is ONNX's; for CTranslate2 use --quantization")
    quiet_transformers()
    if args.format == "onnx":
        from hf_seq2seq.export.onnx import export_onnx

        path = export_onnx(args.model, args.output_dir, quantize=args.quantize, force=args.force)
        print(f"exported {args.model} to {path} (fp32{' and int8' if args.quantize else ''} ONNX graphs)")
        return path
    from hf_seq2seq.export.ctranslate2 import export_ctranslate2

    quantization = args.quantization or "int8"
    path = export_ctranslate2(args.model, args.output_dir, quantization=quantization, force=args.force)
    print(f"exported {args.model} ({quantization}) to {path}")
    return path

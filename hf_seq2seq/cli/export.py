"""`hf-seq2seq export`: convert a saved model folder for another inference engine (CTranslate2)."""

from ._common import parser, quiet_transformers

QUANTIZATIONS = ["int8", "int8_float32", "bfloat16", "float32"]  # hf_seq2seq.export.QUANTIZATIONS


def build_parser():
    p = parser(
        "export",
        "Convert a saved transformer_mt model folder to CTranslate2 (a fast C++ engine that needs no PyTorch at "
        "serving time) with its tokenizer and saved decoding beside it; translate with it through "
        '`hf-seq2seq translate --engine ctranslate2 OUT_DIR ...`. Needs pip install "hf_seq2seq[deploy]".',
        "hf-seq2seq export ctranslate2 runs/cpu runs/cpu-ct2-int8 --quantization int8",
    )
    p.add_argument("format", choices=["ctranslate2"], help="the export format")
    p.add_argument("model", help="a saved model folder")
    p.add_argument("output_dir", help="the export folder to write")
    p.add_argument(
        "--quantization",
        choices=QUANTIZATIONS,
        default="int8",
        help="stored weight type (int8: int8 matmuls, float32 elsewhere; default int8)",
    )
    p.add_argument("--force", action="store_true", help="replace output_dir if it exists")
    return p


def main(argv: list[str] | None = None):
    args = build_parser().parse_args(argv)
    quiet_transformers()
    from ..export import export_ctranslate2

    path = export_ctranslate2(args.model, args.output_dir, quantization=args.quantization, force=args.force)
    print(f"exported {args.model} ({args.quantization}) to {path}")
    return path

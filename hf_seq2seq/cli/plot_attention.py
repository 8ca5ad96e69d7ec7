"""`hf-seq2seq plot-attention`: the attention maps of one translation, as PNG grids (layer x head)."""

from ._common import parser, quiet_transformers


def build_parser():
    p = parser(
        "plot-attention",
        "Translate one sentence with a saved model and plot its encoder self-attention, decoder self-attention "
        "and cross-attention maps (one PNG each, a panel per layer and head); prints the paths.",
        'hf-seq2seq plot-attention runs/cpu "The cat is sleeping on the sofa." --output-dir docs/attention',
    )
    p.add_argument("model", help="folder (or Hub id) of a saved TransformerMT model")
    p.add_argument("sentence", help="source sentence to translate")
    p.add_argument("--output-dir", default="attention", help="folder for the PNGs (default: %(default)s)")
    p.add_argument("--tokenizer", default=None, help="tokenizer folder (default: the model folder)")
    p.add_argument(
        "--max-new-tokens", type=int, default=64, help="longest translation (default: %(default)s)"
    )
    return p


def main(argv: list[str] | None = None) -> list:
    args = build_parser().parse_args(argv)
    quiet_transformers()
    from hf_seq2seq.apps.plotting import plot_checkpoint_attention

    paths = plot_checkpoint_attention(
        args.model,
        args.sentence,
        args.output_dir,
        tokenizer_path=args.tokenizer,
        max_new_tokens=args.max_new_tokens,
    )
    for path in paths:
        print(path)
    return paths

"""`hf-seq2seq upgrade`: give a saved model folder this release's model code, weights untouched."""

from ._common import parser


def build_parser():
    p = parser(
        "upgrade",
        "Replace the model code that a saved or downloaded Hub folder carries (configuration, modeling, decoding "
        "and pipeline files, which `trust_remote_code=True` runs) with this release's, leaving the weights, "
        "config, tokenizer and results untouched. A folder saved by an earlier release keeps the code of that "
        "release, which may not work with newer transformers releases (e.g. beam search under transformers 5.24 "
        "with folders saved before hf_seq2seq's fix). `push` always uploads this release's code.",
        "hf-seq2seq upgrade runs/cpu",
    )
    p.add_argument("folder", help="a saved model folder (training's --output-dir, or a downloaded Hub repo)")
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    from hf_seq2seq.models.folder import refresh_code

    written = refresh_code(args.folder)
    if written:
        print(f"{args.folder}: wrote {', '.join(written)} (weights, config and tokenizer untouched)")
    else:
        print(f"{args.folder}: the model code is already this release's; nothing written")
    return 0

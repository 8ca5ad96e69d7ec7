"""`hf-seq2seq plot-training`: training/validation loss, learning rate and validation BLEU of a run."""

from ._common import parser


def build_parser():
    p = parser(
        "plot-training",
        "Plot the training and validation loss, the learning rate and the validation BLEU of a Trainer run.",
        "hf-seq2seq plot-training runs/cpu docs/training_curves.png",
    )
    p.add_argument("run", help="training output dir, a checkpoint-<step> folder, or a trainer_state.json")
    p.add_argument("out", help="PNG file to write")
    return p


def main(argv: list[str] | None = None):
    args = build_parser().parse_args(argv)
    from hf_seq2seq.apps.plotting import plot_training_curves

    path = plot_training_curves(args.run, args.out)
    print(path)
    return path

"""`hf-seq2seq average`: the mean of the weights of several checkpoints, saved as a model folder."""

from ._common import parser, quiet_transformers


def build_parser():
    p = parser(
        "average",
        "Average the weights of a training run's last N checkpoints (or of the given model folders) and save "
        "them as a complete model folder that translate, evaluate and push take.",
        "hf-seq2seq average runs/cpu --last 3 --output-dir runs/cpu-avg3",
    )
    p.add_argument(
        "folders", nargs="+", help="a training output dir (with --last), or model/checkpoint folders"
    )
    p.add_argument("--last", type=int, help="average the last N checkpoint-* folders of the one run given")
    p.add_argument("--output-dir", required=True, help="where to save the averaged model folder")
    return p


def main(argv: list[str] | None = None):
    p = build_parser()
    args = p.parse_args(argv)
    quiet_transformers()
    from hf_seq2seq.models.folder import checkpoint_folders
    from hf_seq2seq.training.averaging import average_checkpoints

    folders = args.folders
    if args.last is not None:
        if len(folders) != 1:
            p.error("--last takes one training output dir")
        found = checkpoint_folders(folders[0])
        if len(found) < args.last:
            p.error(f"{folders[0]} has {len(found)} complete checkpoints, fewer than --last {args.last}")
        folders = found[-args.last :]
    print(f"averaged {len(folders)} checkpoints ({', '.join(map(str, folders))}) into", end=" ")
    path = average_checkpoints(folders, args.output_dir)
    print(path)
    return path

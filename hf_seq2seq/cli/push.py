"""`hf-seq2seq push`: publish a trained model on the Hugging Face Hub (build, validate offline, upload)."""

from hf_seq2seq.hub.layout import DEFAULT_SENTENCE

from ._common import parser, quiet_transformers


def build_parser():
    p = parser(
        "push",
        "Build the Hub folder of a trained model (weights, code, tokenizer, translation pipeline, model card with "
        "its results), load and translate it in a fresh offline process without this package, then upload it. "
        "The card publishes the folder's test_results.json and every --report. The token comes from --token, "
        "else from huggingface_hub (HF_TOKEN, `hf auth login`).",
        "hf-seq2seq push runs/cpu someone/transformer-en-fr --dry-run --output-dir hub/transformer-en-fr",
    )
    p.add_argument("trained_dir", help="folder saved by training (model, tokenizer, test_results.json)")
    p.add_argument("repo_id", help="Hub repo as namespace/name, e.g. someone/transformer-en-fr")
    p.add_argument(
        "--report",
        action="append",
        default=[],
        help="an eval_report.json of `hf-seq2seq evaluate` to publish too (repeatable)",
    )
    p.add_argument(
        "--output-dir",
        help="new or empty folder to build the upload in (default: a temporary folder, "
        "kept after --dry-run, deleted after a successful upload)",
    )
    p.add_argument("--dry-run", action="store_true", help="build and validate the folder, upload nothing")
    p.add_argument("--private", action="store_true", help="create the repo as private (new repos only)")
    p.add_argument("--token", help="Hub token (default: HF_TOKEN or the `hf auth login` token)")
    p.add_argument("--commit-message", help="default: 'Upload <repo>: BLEU x, chrF y (<test set>)'")
    p.add_argument("--sentence", default=DEFAULT_SENTENCE, help="sentence translated to validate the folder")
    p.add_argument(
        "--with-ctranslate2",
        nargs="?",
        const="int8",
        choices=["int8", "int8_float32", "bfloat16", "float32"],
        help="also put a CTranslate2 export (default int8) in the repo's ctranslate2/ folder (deploy extra)",
    )
    p.add_argument(
        "--with-onnx",
        action="store_true",
        help="also put the ONNX export (fp32 and int8 graphs, for ONNX Runtime and transformers.js) in the repo's "
        "onnx/ folder (onnx extra)",
    )
    p.add_argument(
        "--with-space",
        nargs="?",
        const="",
        metavar="SPACE_ID",
        help="also build (beside the folder) and upload a Gradio Space that runs the model, and link it from the "
        "card (default Space id: <repo_id>-demo)",
    )
    return p


def main(argv: list[str] | None = None) -> int:
    args = build_parser().parse_args(argv)
    quiet_transformers()
    from hf_seq2seq.hub.push import PushSettings, push_to_hub

    settings = PushSettings(
        reports=args.report,
        ctranslate2=args.with_ctranslate2,
        space=(args.with_space or f"{args.repo_id}-demo") if args.with_space is not None else None,
        onnx=args.with_onnx,
        sentence=args.sentence,
        dry_run=args.dry_run,
        private=args.private,
        token=args.token,
        commit_message=args.commit_message,
    )
    result = push_to_hub(args.trained_dir, args.repo_id, args.output_dir, settings)
    check = result.validation
    print(
        f"Validated {check.model_class} / {check.tokenizer_class} / pipeline {', '.join(check.pipeline_tasks)}"
    )
    print(f"  {check.sentence!r} -> {check.translation!r}")
    if result.space_folder is not None:
        print(f"Space folder: {result.space_folder}")
    if result.uploaded:
        print(f"Uploaded to {result.repo_url}\n  commit: {result.commit_url}")
        if result.space_url:
            print(f"Space: {result.space_url}")
    else:
        print(f"Dry run: nothing uploaded. Folder: {result.folder}")
    return 0

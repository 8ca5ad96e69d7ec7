"""Publish a trained model on the Hugging Face Hub: build the folder, validate it offline, upload it.

    python scripts/push_to_hub.py runs/base someone/transformer-en-fr --dry-run   # build + validate only
    python scripts/push_to_hub.py runs/base someone/transformer-en-fr             # ... and upload

The trained folder is what training saves (model, tokenizer, test_results.json); see `hf_seq2seq.hub`.
The token comes from `--token`, else from huggingface_hub (`HF_TOKEN`, `hf auth login`).
"""

import argparse
import sys

from hf_seq2seq import hub


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    """Command-line arguments."""
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("trained_dir", help="folder saved by training (model, tokenizer, test_results.json)")
    parser.add_argument("repo_id", help="Hub repo as namespace/name, e.g. someone/transformer-en-fr")
    parser.add_argument(
        "--output-dir",
        help="new or empty folder to build the upload in (default: a temporary folder, "
        "kept after --dry-run, deleted after a successful upload)",
    )
    parser.add_argument(
        "--dry-run", action="store_true", help="build and validate the folder, upload nothing"
    )
    parser.add_argument("--private", action="store_true", help="create the repo as private (new repos only)")
    parser.add_argument("--token", help="Hub token (default: HF_TOKEN or the `hf auth login` token)")
    parser.add_argument("--commit-message", help="default: 'Upload <repo>: BLEU x, chrF y (test)'")
    parser.add_argument(
        "--sentence", default=hub.DEFAULT_SENTENCE, help="sentence translated to validate the folder"
    )
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    """Run the CLI; return the exit status."""
    args = parse_args(argv)
    try:
        result = hub.push_to_hub(
            args.trained_dir,
            args.repo_id,
            args.output_dir,
            private=args.private,
            token=args.token,
            commit_message=args.commit_message,
            dry_run=args.dry_run,
            sentence=args.sentence,
        )
    except (
        hub.InvalidRepoIdError,
        hub.MissingFileError,
        hub.HubFolderError,
        hub.HubValidationError,
    ) as error:
        print(f"error: {error}", file=sys.stderr)
        return 1
    check = result.validation
    print(
        f"Validated {check.model_class} / {check.tokenizer_class} / pipeline {', '.join(check.pipeline_tasks)}"
    )
    print(f"  {check.sentence!r} -> {check.translation!r}")
    if result.uploaded:
        print(f"Uploaded to {result.repo_url}\n  commit: {result.commit_url}")
    else:
        print(f"Dry run: nothing uploaded. Folder: {result.folder}")
    return 0


if __name__ == "__main__":
    sys.exit(main())

"""`hf-seq2seq demo`: try a model in the browser (a local Gradio app)."""

import logging
import warnings

from hf_seq2seq.models.languages import parse_pair

from ._common import parser, quiet_transformers, setup_logging


def build_parser():
    p = parser(
        "demo",
        "Serve a Gradio app for a saved model folder or a Hub repository (the pair the folder "
        "records, or the one given), or several, one per direction, to pick from: greedy or beam search, the "
        "cross-attention map of each translation, example sentences, the model's BLEU (from its result files) "
        'and the decoding time of each request. Needs the demo extra: pip install "hf_seq2seq[demo]".',
        "hf-seq2seq demo runs/cpu --port 7860\n  hf-seq2seq demo runs/en-fr runs/fr-en",
    )
    p.add_argument(
        "model", nargs="+", help="a saved model folder or a Hub repository id; several: one per direction"
    )
    p.add_argument("--port", type=int, default=None, help="local port (default: 7860 or the next free one)")
    p.add_argument("--share", action="store_true", help="also open a public gradio.live link for 72 hours")
    p.add_argument(
        "--report",
        action="append",
        default=[],
        help="an extra result file (eval_report.json of `hf-seq2seq evaluate`) to show; repeatable",
    )
    p.add_argument(
        "--languages",
        metavar="SRC-TGT",
        action="append",
        help="a model's language pair, e.g. fr-en, once per model in their order (default: what each folder "
        "records; one that records none is refused unless given)",
    )
    p.add_argument("--trust-remote-code", action="store_true", help="load the model's own code (Hub folders)")
    return p


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    languages = [parse_pair(text) for text in args.languages or ()]
    if None in languages or (languages and len(languages) != len(args.model)):
        p.error(
            f"--languages takes SRC-TGT (e.g. fr-en), once per model in their order; got {args.languages}"
        )
    setup_logging()
    quiet_transformers()
    logging.getLogger("httpx").setLevel(logging.WARNING)  # gradio's own requests to its server, at INFO
    from hf_seq2seq.apps.demo import launch_demo

    # gradio's queue calls pandas options that pandas 3 deprecates: a warning per request, nothing to act on
    warnings.filterwarnings("ignore", module="gradio.queueing")
    launch_demo(
        args.model,
        port=args.port,
        share=args.share,
        reports=args.report,
        trust_remote_code=args.trust_remote_code,
        languages=languages,
    )
    return 0

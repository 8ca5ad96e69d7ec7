"""`hf-seq2seq <verb>`: the package's one command-line tool.

Each verb is a module of this package (`hf_seq2seq/cli/<verb>.py`, dashes as underscores) with its own parser
and `main(argv)`; it is imported only when it runs, so `hf-seq2seq --help` is instant. `VERBS` below is their
index; `_common` holds the flags and helpers several verbs' parsers share. An error of the package
(`hf_seq2seq.errors.HfSeq2SeqError`) that a verb raises ends the command one way, here: `hf-seq2seq VERB:
message`, exit status 1, without a traceback; a verb need not catch them itself.
"""

import importlib
import sys

from hf_seq2seq.errors import HfSeq2SeqError

VERBS = {
    "train": "train a model and evaluate it on the test split (presets: cpu, cpu-long, gpu, gpu-wmt, tiny)",
    "compare": "train recipes back to back for one budget and seeds; compare BLEU, chrF, tokens/s, latency",
    "evaluate": "translate a test set with a saved model and score it (BLEU, chrF)",
    "translate": "translate sentences given as arguments, or the paragraphs of stdin or a file, or a document",
    "export": "convert a saved model folder to CTranslate2 (int8, bfloat16, float32) for fast CPU serving",
    "average": "average the weights of a run's last checkpoints into a model folder",
    "push": "build a Hub folder with its model card, check it offline, and upload it",
    "upgrade": "give a saved model folder this release's model code (for newer transformers), weights untouched",
    "plot-attention": "plot the encoder, decoder and cross-attention maps of one translation",
    "plot-training": "plot the loss, learning rate and validation BLEU of a training run",
    "benchmark": "measure speed and memory against MarianMTModel at the same size",
    "measure-training": "peak training memory with/without gradient checkpointing, tokens/s with/without compile",
    "demo": "try a model in the browser: a Gradio app with the translation and its cross-attention map",
    "serve": "a LibreTranslate-compatible translation API with dynamic batching (uvicorn, or Ray Serve)",
    "serve-benchmark": "load-test `serve` on localhost (1-64 clients) beside the engine's offline throughput",
    "web": "a page that translates inside the browser (transformers.js, WebAssembly) from an ONNX export",
}

USAGE = "usage: hf-seq2seq <verb> [options]   (hf-seq2seq <verb> --help for a verb's options)"


def overview() -> str:
    width = max(map(len, VERBS))
    lines = [USAGE, "", "A from-scratch Transformer for translation, as a Hugging Face model.", "", "verbs:"]
    lines += [f"  {verb:<{width}}  {text}" for verb, text in VERBS.items()]
    lines += [
        "",
        "hf-seq2seq --version prints the package's version.",
        "",
        "example: hf-seq2seq train --preset cpu && hf-seq2seq translate runs/cpu 'How are you?'",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    if not argv or argv[0] in ("-h", "--help"):
        print(overview())
        return 0 if argv else 2
    if argv[0] == "--version":
        from hf_seq2seq import __version__

        print(f"hf-seq2seq {__version__}")
        return 0
    verb, rest = argv[0], argv[1:]
    if verb not in VERBS:
        print(f"{USAGE}\nhf-seq2seq: unknown verb {verb!r}; choose from {', '.join(VERBS)}", file=sys.stderr)
        return 2
    module = importlib.import_module(f"{__name__}.{verb.replace('-', '_')}")
    try:
        status = module.main(rest)
    except HfSeq2SeqError as error:  # the message says what is wrong and what to do; a traceback adds nothing
        raise SystemExit(f"hf-seq2seq {verb}: {error}") from None
    return status if isinstance(status, int) else 0

"""`hf-seq2seq translate`: translate sentences with a saved model."""

import sys

from ._common import (
    add_decoding_arguments,
    add_engine_argument,
    add_precision_argument,
    decoding_from,
    parser,
    quiet_transformers,
)


def build_parser():
    p = parser(
        "translate",
        "Translate texts given as arguments, else the lines of --input-file, else the lines of stdin; prints "
        "one translation per text. A text of several sentences is cut into sentences, translated, and joined "
        "back with its own spacing (--no-split to translate each text whole).",
        'hf-seq2seq translate runs/cpu "How are you?" "Where is the station?"',
    )
    p.add_argument(
        "model", help="a saved model folder (with --engine ctranslate2 or onnxruntime: an export folder)"
    )
    p.add_argument("sentences", nargs="*", help="sentences to translate (default: --input-file or stdin)")
    p.add_argument("--input-file", help="plain text, one sentence per line")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--trust-remote-code", action="store_true", help="load the model's own code (Hub folders)")
    p.add_argument(
        "--no-split", action="store_true", help="translate each text whole, not sentence by sentence"
    )
    p.add_argument("--source-lang", default="en", help="language of the texts, for the sentence splitter")
    add_engine_argument(p)
    add_precision_argument(p)
    add_decoding_arguments(p)
    return p


def main(argv: list[str] | None = None) -> list[str]:
    args = build_parser().parse_intermixed_args(argv)  # options may come after the sentences
    quiet_transformers()
    from hf_seq2seq.engines.base import translate
    from hf_seq2seq.engines.factory import load_translator
    from hf_seq2seq.evaluation.evaluate import read_lines

    if args.sentences:
        sentences = args.sentences
    elif args.input_file:
        sentences = read_lines(args.input_file)
    else:
        sentences = sys.stdin.read().splitlines()
    translator = load_translator(args.model, args.engine, args.precision, args.trust_remote_code)
    translations = translate(
        translator,
        sentences,
        batch_size=args.batch_size,
        decoding=decoding_from(args),
        split_sentences=not args.no_split,
        source_lang=args.source_lang,
    )
    print("\n".join(translations))
    return translations

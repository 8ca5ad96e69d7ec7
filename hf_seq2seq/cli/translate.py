"""`hf-seq2seq translate`: translate sentences with a saved model."""

import sys

from ..inference import load_model_and_tokenizer, read_lines, translate
from ._common import parser


def build_parser():
    p = parser(
        "translate",
        "Translate sentences given as arguments, else the lines of --input-file, else the lines of stdin; "
        "prints one translation per line.",
        'hf-seq2seq translate runs/cpu "How are you?" "Where is the station?"',
    )
    p.add_argument("model", help="a saved model folder")
    p.add_argument("sentences", nargs="*", help="sentences to translate (default: --input-file or stdin)")
    p.add_argument("--input-file", help="plain text, one sentence per line")
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--trust-remote-code", action="store_true", help="load the model's own code (Hub folders)")
    return p


def main(argv: list[str] | None = None) -> list[str]:
    args = build_parser().parse_args(argv)
    if args.sentences:
        sentences = args.sentences
    elif args.input_file:
        sentences = read_lines(args.input_file)
    else:
        sentences = sys.stdin.read().splitlines()
    model, tokenizer = load_model_and_tokenizer(args.model, trust_remote_code=args.trust_remote_code)
    translations = translate(model, tokenizer, sentences, batch_size=args.batch_size)
    print("\n".join(translations))
    return translations

"""`hf-seq2seq translate`: translate sentences, HTML or a document with a saved model."""

import sys
from pathlib import Path

from hf_seq2seq.formats.documents import DOCUMENT_FORMATS

from ._common import (
    add_decoding_arguments,
    add_engine_argument,
    add_precision_argument,
    decoding_from,
    parser,
    quiet_transformers,
    resolve_engine,
)


def build_parser():
    p = parser(
        "translate",
        "Translate texts given as arguments, else the paragraphs of --input-file, else those of stdin; prints "
        "one translation per text. A hard-wrapped paragraph's lines (an e-mail, an RFC, a book saved at 72 "
        "columns) are joined into one text, printed on one line; blank lines and the lines of a file that is not "
        "hard-wrapped (one sentence per line) are kept (--line-by-line: each line a text, as in a line-aligned "
        "file). A text of several sentences is cut into sentences, translated, and joined "
        "back with its own spacing (--no-split to translate each text whole). With --output-file, translates "
        f"the document --input-file by its extension ({', '.join(DOCUMENT_FORMATS)}), keeping its layout, markup, "
        "timings or formatting. HTML, documents other than .txt, --glossary and --alignments use the model's "
        "word alignments, which every engine gives (an export made before exports kept the attention: export it "
        "again).",
        'hf-seq2seq translate runs/cpu "How are you?" "Where is the station?"\n'
        "  hf-seq2seq translate runs/cpu --input-file talk.srt --output-file talk.fr.srt --glossary terms.tsv\n"
        '  hf-seq2seq translate runs/cpu --format html "<p>Click <a href=/go>here</a>.</p>"',
    )
    p.add_argument(
        "model", help="a saved model folder (with --engine ctranslate2 or onnxruntime: an export folder)"
    )
    p.add_argument("sentences", nargs="*", help="sentences to translate (default: --input-file or stdin)")
    p.add_argument(
        "--input-file",
        help="plain text, each paragraph a text (its wrapped lines joined); with --output-file, a document "
        "translated by its extension",
    )
    p.add_argument(
        "--line-by-line",
        action="store_true",
        help="each line of --input-file or stdin (or of a .txt document) a text, never joined with the next: for "
        "line-aligned files (one sentence or segment per line, whose output must keep the input's lines)",
    )
    p.add_argument(
        "--output-file",
        help="write the translated document --input-file here (the same extension), whole or not at all",
    )
    p.add_argument(
        "--format",
        choices=("text", "html"),
        default="text",
        help="what the texts are: plain text, or HTML fragments whose tags are kept and moved with the words "
        "they wrap (for a whole page: --input-file page.html --output-file)",
    )
    p.add_argument(
        "--glossary",
        help="a file of the user's own terms, source term -> target term: TSV (source<TAB>target per line) or a "
        "JSON object; each term found in a source (any case, inflected) is translated by its target term",
    )
    p.add_argument(
        "--alignments",
        action="store_true",
        help="print each translation, a TAB, and its word alignment as Pharaoh i-j pairs (source word i, target "
        "word j, counting whitespace-separated words from 0)",
    )
    p.add_argument(
        "--scores",
        action="store_true",
        help="print each translation, a TAB, and the model's confidence in it: exp of the mean log-probability of "
        "its tokens, 0 to 1 (after the alignment with --alignments)",
    )
    p.add_argument("--batch-size", type=int, default=64)
    p.add_argument("--trust-remote-code", action="store_true", help="load the model's own code (Hub folders)")
    p.add_argument(
        "--no-split", action="store_true", help="translate each text whole, not sentence by sentence"
    )
    p.add_argument(
        "--source-lang",
        help="language of the texts, for the sentence splitter (default: the source of the model's recorded pair; "
        "a model that records none, such as an export made by 0.1.0, needs it)",
    )
    p.add_argument(
        "--target-lang",
        help="language of the translation (fr, fr-CA), marked on a document's text (Word, PowerPoint, OpenDocument, "
        "HTML, EPUB) so that spelling checkers and screen readers read it as that language (default: the model "
        "folder's)",
    )
    add_engine_argument(p)
    add_precision_argument(p)
    add_decoding_arguments(p)
    return p


def check_arguments(p, args) -> None:
    """Flags that cannot go together end the command with a usage error, before anything is loaded."""
    if args.output_file:
        if not args.input_file:
            p.error("--output-file needs --input-file, the document to translate")
        if args.sentences:
            p.error("give sentences or a document (--input-file with --output-file), not both")
        if Path(args.output_file).suffix.lower() != Path(args.input_file).suffix.lower():
            p.error(
                f"--output-file must have the extension of --input-file ({Path(args.input_file).suffix or 'none'})"
            )
        if args.format != "text":
            p.error("--format is for texts: a document's format is its extension")
        for flag in ("alignments", "scores"):
            if getattr(args, flag):
                p.error(f"--{flag} is for texts: a document is written with its formatting instead")
    # read as plain text, a catalogue's keywords, comments and msgids would be translated with the rest
    catalogue = Path(args.input_file or "").suffix.lower()
    if catalogue in (".po", ".pot") and not args.output_file:
        p.error(
            f"a gettext catalogue is translated into another: give --output-file (messages.fr{catalogue})"
        )
    for flag in ("alignments", "scores"):
        if getattr(args, flag) and args.format != "text":
            p.error(f"--{flag} is for plain text (--format text)")
    if args.line_by_line and (args.sentences or args.format != "text"):
        p.error(
            "--line-by-line is for plain text from --input-file or stdin (HTML is read a fragment a line, and "
            "each argument is a text)"
        )
    if args.line_by_line and args.output_file and Path(args.input_file).suffix.lower() != ".txt":
        p.error("--line-by-line is for plain text: a document other than .txt keeps its own structure")


def main(argv: list[str] | None = None) -> list[str]:
    p = build_parser()
    args = p.parse_intermixed_args(argv)  # options may come after the sentences
    check_arguments(p, args)
    resolve_engine(args)
    # CTranslate2's engine imports no transformers (a command on it starts in about a second): nothing to quiet
    if args.engine != "ctranslate2":
        quiet_transformers()
    from hf_seq2seq.engines.base import UnsupportedFeature
    from hf_seq2seq.formats.documents import DocumentError, MissingExtra
    from hf_seq2seq.formats.glossary import GlossaryError

    try:
        return run(args)
    except (DocumentError, GlossaryError, UnsupportedFeature, MissingExtra) as error:
        raise SystemExit(f"hf-seq2seq translate: {error}") from None


def recorded_languages(model: str) -> tuple[str, str] | None:
    """The pair that the model folder or export `model` records (`models.languages.model_languages`); for a Hub
    repository id, that of its config.json (downloaded, or from the cache when offline)."""
    from hf_seq2seq.models.languages import model_languages

    if Path(model).exists():
        return model_languages(model)
    try:
        from huggingface_hub import hf_hub_download

        return model_languages(Path(hf_hub_download(model, "config.json")).parent)
    except Exception:  # noqa: BLE001 (not a repository, or not reachable: loading it will say which)
        return None


def run(args) -> list[str]:
    """The job the arguments ask for; returns what it prints."""
    from hf_seq2seq.engines.factory import load_translator
    from hf_seq2seq.formats.documents import DocumentError, document_format, translate_document
    from hf_seq2seq.formats.glossary import Glossary
    from hf_seq2seq.formats.paragraphs import paragraphs
    from hf_seq2seq.models.languages import require_languages

    glossary = Glossary.load(args.glossary) if args.glossary else None
    document = args.output_file is not None
    if document:
        if not Path(args.input_file).is_file():
            raise DocumentError(f"no such file: {args.input_file}")
        aligns = glossary is not None or document_format(Path(args.input_file).suffix).extensions != (".txt",)
    else:
        aligns = glossary is not None or args.alignments or args.format == "html"
        if args.sentences:
            prefixes, texts = [""] * len(args.sentences), args.sentences
        else:
            if args.input_file and not Path(args.input_file).is_file():
                raise DocumentError(f"no such file: {args.input_file}")
            text = (
                Path(args.input_file).read_text(encoding="utf-8-sig") if args.input_file else sys.stdin.read()
            )
            # HTML fragments one a line, as before; plain text by paragraph (a trailing newline makes no text),
            # quoted-mail markers and indentation printed before each translation, not translated
            layout = paragraphs(text, line_by_line=args.line_by_line or args.format == "html")
            prefixes, texts = layout.prefixes, layout.texts
    translator = load_translator(args.model, args.engine, args.precision, args.trust_remote_code)
    recorded = recorded_languages(args.model)
    if args.source_lang is None:  # the model's, never a guess: one that records none needs it given
        args.source_lang = require_languages(args.model, recorded, "--source-lang, the texts' language,")[0]
    if aligns:
        translator.align([], [])  # an engine that cannot align says so now, before anything is translated
    options = dict(batch_size=args.batch_size, decoding=decoding_from(args), source_lang=args.source_lang)
    if document:
        target_lang = args.target_lang or (recorded[1] if recorded else None)
        warnings: list[str] = []
        output = translate_document(
            translator,
            args.input_file,
            args.output_file,
            glossary=glossary,
            target_lang=target_lang,
            line_by_line=args.line_by_line,
            warnings=warnings,
            **options,
        )
        for warning in warnings:  # what came out worse than its source, and where (a PDF paragraph squeezed)
            print(f"hf-seq2seq translate: warning: {warning}", file=sys.stderr)
        lines = [f"wrote {output}"]
    elif args.format == "html":
        from hf_seq2seq.formats.markup import translate_html

        lines = translate_html(translator, texts, glossary=glossary, **options)
    elif glossary or args.alignments or args.scores:
        from hf_seq2seq.engines.alignment import pharaoh
        from hf_seq2seq.formats.aligned import translate_aligned

        results = translate_aligned(
            translator,
            texts,
            glossary=glossary,
            alignments=args.alignments,
            scores=args.scores,
            split=not args.no_split,
            **options,
        )
        shifts = [
            len(prefix.split()) for prefix in prefixes
        ]  # a line's `>` markers: its first words, both sides
        lines = [
            "\t".join(
                [r.target]
                + ([pharaoh([(i + n, j + n) for i, j in r.alignment])] if args.alignments else [])
                + ([f"{r.score.confidence:.4f}" if r.score.tokens else ""] if args.scores else [])
            )
            for n, r in zip(shifts, results, strict=True)
        ]
    else:
        from hf_seq2seq.engines.base import translate

        lines = translate(translator, texts, split_sentences=not args.no_split, **options)
    if not document:
        lines = [prefix + line for prefix, line in zip(prefixes, lines, strict=True)]
    print("\n".join(lines))
    return lines

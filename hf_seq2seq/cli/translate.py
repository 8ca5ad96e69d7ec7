"""`hf-seq2seq translate`: translate sentences, HTML or a document with a saved model."""

import sys
from pathlib import Path

from hf_seq2seq.formats.documents import DOCUMENT_FORMATS
from hf_seq2seq.formats.documents.html_pages import HtmlPage
from hf_seq2seq.formats.documents.plain_text import PlainText

from ._common import (
    add_decoding_arguments,
    add_engine_argument,
    add_precision_argument,
    decoding_from,
    parser,
    quiet_transformers,
    resolve_engine,
)

DOCUMENTS_ONLY = tuple(
    extension for extension, kind in DOCUMENT_FORMATS.items() if not isinstance(kind, PlainText | HtmlPage)
)
"""The extensions that only their document format reads (subtitles, office files, e-books, catalogues, PDF): a
file of one is a document even without --output-file. Plain text and HTML are read as texts too (paragraphs,
fragments a line) and printed, so they are documents only with --output-file."""


def only_a_document(path: str | None) -> bool:
    """Whether the file name `path` has an extension of `DOCUMENTS_ONLY` (any case)."""
    return path is not None and Path(path).suffix.lower() in DOCUMENTS_ONLY


def build_parser():
    p = parser(
        "translate",
        "Translate texts given as arguments, else the paragraphs of --input-file, else those of stdin; prints "
        "one translation per text. A hard-wrapped paragraph's lines (an e-mail, an RFC, a book saved at 72 "
        "columns) are joined into one text, printed on one line; blank lines and the lines of a file that is not "
        "hard-wrapped (one sentence per line) are kept (--line-by-line: each line a text, as in a line-aligned "
        "file). A text of several sentences is cut into sentences, translated, and joined "
        "back with its own spacing (--no-split to translate each text whole). A document is translated by its "
        f"extension ({', '.join(DOCUMENT_FORMATS)}), keeping its layout, markup, timings or formatting, and "
        "written whole into --output-file or, without it, beside the input as STEM.TARGET.EXT (paper.pdf -> "
        "paper.fr.pdf; TARGET: --target-lang, else the model's target language), never over an existing file. A "
        f"file of {' '.join(DOCUMENTS_ONLY)} is a document given as --input-file or as the one argument (an "
        "argument that names no existing file is a sentence: 'report.pdf'); a .txt or .html file, which also reads "
        "as texts, is one only with --output-file (without it, --input-file's paragraphs, or its fragments with "
        "--format html, are printed). HTML, documents other than .txt, --glossary and --alignments use the "
        "model's word alignments, which every engine gives (an export made before exports kept the attention: "
        "export it again).",
        'hf-seq2seq translate runs/cpu "How are you?" "Where is the station?"\n'
        "  hf-seq2seq translate runs/cpu paper.pdf   # writes paper.fr.pdf\n"
        "  hf-seq2seq translate runs/cpu --input-file talk.srt --output-file talk.fr.srt --glossary terms.tsv\n"
        '  hf-seq2seq translate runs/cpu --format html "<p>Click <a href=/go>here</a>.</p>"',
    )
    p.add_argument(
        "model", help="a saved model folder (with --engine ctranslate2 or onnxruntime: an export folder)"
    )
    p.add_argument(
        "sentences",
        nargs="*",
        help="sentences to translate (default: --input-file or stdin); one alone that names an existing "
        f"{' '.join(DOCUMENTS_ONLY)} file is that document, as if given with --input-file",
    )
    p.add_argument(
        "--input-file",
        help="plain text, each paragraph a text (its wrapped lines joined); a document translated by its "
        f"extension when it is {' '.join(DOCUMENTS_ONLY)}, or with --output-file",
    )
    p.add_argument(
        "--line-by-line",
        action="store_true",
        help="each line of --input-file or stdin (or of a .txt document) a text, never joined with the next: for "
        "line-aligned files (one sentence or segment per line, whose output must keep the input's lines)",
    )
    p.add_argument(
        "--output-file",
        help="write the translated document here (the same extension), whole or not at all (default for "
        f"{' '.join(DOCUMENTS_ONLY)}: STEM.TARGET.EXT beside it, never over an existing file)",
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


def is_document(args) -> bool:
    """Whether the arguments (once checked) translate a document into a file rather than print texts."""
    return args.output_file is not None or only_a_document(args.input_file)


def check_arguments(p, args) -> None:
    """Flags that cannot go together end the command with a usage error, before anything is loaded. A lone
    argument that names an existing file of `DOCUMENTS_ONLY` becomes --input-file."""
    named = [text for text in args.sentences if only_a_document(text) and Path(text).is_file()]
    if named and len(args.sentences) > 1:
        p.error(f"a document is translated alone: {named[0]} is a file, given with other texts")
    if named:
        if args.input_file:
            p.error(f"give one document: {named[0]} or --input-file {args.input_file}, not both")
        args.input_file, args.sentences = named[0], []
    if is_document(args):
        if not args.input_file:
            p.error("--output-file needs --input-file, the document to translate")
        if args.sentences:
            p.error("give sentences or a document (a file, or --input-file), not both")
        if args.output_file and Path(args.output_file).suffix.lower() != Path(args.input_file).suffix.lower():
            p.error(
                f"--output-file must have the extension of --input-file ({Path(args.input_file).suffix or 'none'})"
            )
        if args.format != "text":
            p.error("--format is for texts: a document's format is its extension")
        for flag in ("alignments", "scores"):
            if getattr(args, flag):
                p.error(f"--{flag} is for texts: a document is written with its formatting instead")
    for flag in ("alignments", "scores"):
        if getattr(args, flag) and args.format != "text":
            p.error(f"--{flag} is for plain text (--format text)")
    if args.line_by_line and (args.sentences or args.format != "text"):
        p.error(
            "--line-by-line is for plain text from --input-file or stdin (HTML is read a fragment a line, and "
            "each argument is a text)"
        )
    if args.line_by_line and is_document(args) and Path(args.input_file).suffix.lower() != ".txt":
        p.error("--line-by-line is for plain text: a document other than .txt keeps its own structure")


def default_output(args, recorded: tuple[str, str] | None) -> Path:
    """Where a document goes without --output-file: beside it, STEM.TARGET.EXT (paper.pdf -> paper.fr.pdf), the
    target language --target-lang's or the model's `recorded` pair's; `DocumentError` where that file exists."""
    from hf_seq2seq.formats.documents import DocumentError
    from hf_seq2seq.models.languages import require_languages

    source, target = Path(args.input_file), args.target_lang
    if target is None:
        give = "--target-lang, the translation's language, or --output-file,"
        target = require_languages(args.model, recorded, give)[1]
    output = source.with_name(f"{source.stem}.{target}{source.suffix}")
    if output.exists():
        raise DocumentError(
            f"{output} exists: give --output-file to write the translation elsewhere (or over it)"
        )
    return output


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
    recorded = recorded_languages(args.model)
    document = is_document(args)
    if document:
        if not Path(args.input_file).is_file():
            raise DocumentError(f"no such file: {args.input_file}")
        aligns = glossary is not None or document_format(Path(args.input_file).suffix).extensions != (".txt",)
        # refused now if it exists, before the model loads
        output_file = args.output_file or default_output(args, recorded)
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
            output_file,
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

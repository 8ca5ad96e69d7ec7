"""HTML translation measured: fragments of the shapes web pages have (`SHAPES`: a link, emphasis, nested inline
tags, a list, a table, entities, an image with alt text, a title attribute, a comment and inline code) built
around fra-eng test sentences are translated as HTML; prints how many are well formed with the tags of their
source (`markup_problems`, read by `counters.HtmlReader`, independently of `hf_seq2seq.formats.markup`'s reading),
and the BLEU/chrF of their visible text against the references beside those of the same sentences translated as
plain text, per shape and overall (docs/formats.md).

    python measurements/measure_markup.py runs/cpu --fragments 180 --json docs/bench/markup.json
"""

import argparse
import html
import json
import time
from collections import defaultdict
from collections.abc import Callable, Sequence

from counters import HtmlReader

from hf_seq2seq.data.fra_eng import load_fra_eng
from hf_seq2seq.engines.base import translate
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.evaluation.metrics import score_translations
from hf_seq2seq.formats.markup import translate_html


def _words(sentence: str) -> list[str]:
    return sentence.split()


def _wrap(words: list[str], start: int, end: int, opening: str, closing: str) -> str:
    inner = " ".join(words[start:end])
    return " ".join([*words[:start], opening + inner + closing, *words[end:]]).strip()


LINK = '<a href="https://example.com/?a=1&amp;b=2">'


def link(a: str, b: str) -> str:
    w = _words(a)
    return f"<p>{_wrap(w, len(w) // 2, len(w) // 2 + 1, LINK, '</a>')}</p>"


def emphasis(a: str, b: str) -> str:
    w = _words(a)
    return f"<p>{_wrap(w, 0, min(2, len(w)), '<strong>', '</strong>')}</p>"


def nested(a: str, b: str) -> str:
    w = _words(a)
    n = len(w)
    inner = _wrap(w[1 : n - 1], 0, 1, "<i>", "</i>").split(" ") if n > 3 else w[1 : n - 1]
    return f"<div>{w[0]} <b>{' '.join(inner)}</b> {w[-1]}</div>" if n > 2 else f"<div><b><i>{a}</i></b></div>"


def listing(a: str, b: str) -> str:
    return f"<ul>\n  <li>{html.escape(a, quote=False)}</li>\n  <li>{html.escape(b, quote=False)}</li>\n</ul>"


def table(a: str, b: str) -> str:
    return (
        f'<table class="t">\n<tr><th scope="col">{html.escape(a, quote=False)}</th></tr>\n'
        f"<tr><td>{html.escape(b, quote=False)}</td></tr>\n</table>"
    )


def entities(a: str, b: str) -> str:
    escaped = html.escape(a, quote=True).replace("&#x27;", "&#39;")
    return f'<p>{escaped}&nbsp;<span lang="en">{html.escape(b, quote=False)}</span></p>'


def image(a: str, b: str) -> str:
    w = _words(a)
    picture = f'<img src="pic.png" alt="{html.escape(b, quote=True)}">'
    return f"<p>{' '.join(w[:1] + [picture] + w[1:])}</p>"


def titled(a: str, b: str) -> str:
    return f'<p title="{html.escape(b, quote=True)}"><em>{html.escape(a, quote=False)}</em></p>'


def commented(a: str, b: str) -> str:
    return f"<!-- {b} -->\n<p>{html.escape(a, quote=False)} <code>x = 1</code></p>\n<script>var s = '<b>';</script>"


SHAPES: dict[str, tuple[Callable[[str, str], str], int]] = {
    "link": (link, 1),
    "emphasis": (emphasis, 1),
    "nested inline": (nested, 1),
    "list": (listing, 2),
    "table": (table, 2),
    "entities": (entities, 2),
    "image alt": (image, 2),
    "title attribute": (titled, 2),
    "comment, code, script": (commented, 1),
}
"""Shape name -> (a function of two sentences that returns an HTML fragment, how many of the two a reader
sees: the first, or both; a comment's is not seen)."""


def markup_problems(source: str, translation: str) -> list[str]:
    """What is wrong with `translation` as the translation of the HTML `source`: end tags that close another
    element than the innermost open one, elements left open, tags (by the attributes a translation keeps) that
    differ from the source's."""
    before, after = HtmlReader(source), HtmlReader(translation)
    problems = after.errors + [f"<{tag}> left open" for tag in after.left_open]
    if before.tags != after.tags:
        problems.append(
            f"tags differ: {dict(before.tags - after.tags)} lost, {dict(after.tags - before.tags)} new"
        )
    return problems


def fragments(pairs: Sequence[tuple[str, str]], count: int) -> list[tuple[str, str, list[int]]]:
    """`count` fragments `(shape name, html, indices of the pairs a reader sees, in `HtmlReader.text`'s order)`,
    the shapes in turn, each over two consecutive pairs' sources."""
    out = []
    names = list(SHAPES)
    for k in range(count):
        a, b = 2 * k % len(pairs), (2 * k + 1) % len(pairs)
        name = names[k % len(names)]
        build, seen = SHAPES[name]
        out.append((name, build(pairs[a][0], pairs[b][0]), [a, b][:seen]))
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a saved model folder")
    parser.add_argument("--fragments", type=int, default=180)
    parser.add_argument("--data-path", help="fra.txt (default: $HF_SEQ2SEQ_FRA_ENG)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    test = load_fra_eng(args.data_path)["test"]
    pairs = list(zip(test["src"], test["tgt"], strict=True))
    built = fragments(pairs, args.fragments)
    translator = load_translator(args.model)
    start = time.perf_counter()
    outputs = translate_html(translator, [document for _, document, _ in built])
    html_seconds = time.perf_counter() - start
    start = time.perf_counter()
    needed = sorted({k for _, _, seen in built for k in seen})
    plain = dict(
        zip(needed, translate(translator, [pairs[k][0] for k in needed], split_sentences=True), strict=True)
    )
    plain_seconds = time.perf_counter() - start
    by_shape = defaultdict(lambda: {"fragments": 0, "problems": 0, "html": [], "plain": [], "refs": []})
    failures = []
    for (shape, document, seen), output in zip(built, outputs, strict=True):
        row = by_shape[shape]
        problems = markup_problems(document, output)
        row["fragments"] += 1
        row["problems"] += bool(problems)
        if problems:
            failures.append({"source": document, "translation": output, "problems": problems})
        row["html"].append(HtmlReader(output).text.replace("\xa0", " "))
        row["plain"].append(" ".join(plain[k] for k in seen))
        row["refs"].append(" ".join(pairs[k][1] for k in seen))
    results = {"model": args.model, "fragments": len(built), "shapes": {}, "failures": failures[:10]}
    print(f"{len(built)} HTML fragments over {len(pairs)} test sentences; model {args.model}")
    print(
        f"{'shape':<24} {'n':>4} {'well-formed, same tags':>23} {'BLEU html':>10} {'BLEU plain':>11} {'chrF html':>10} {'chrF plain':>11}"
    )
    total = {"fragments": 0, "problems": 0, "html": [], "plain": [], "refs": []}
    for shape, row in [*by_shape.items(), ("all", total)]:
        if shape != "all":
            for key in total:
                total[key] += row[key]
        html_scores = score_translations(row["html"], row["refs"])
        plain_scores = score_translations(row["plain"], row["refs"])
        ok = (row["fragments"] - row["problems"]) / row["fragments"]
        results["shapes"][shape] = {
            "fragments": row["fragments"], "well_formed_same_tags": ok,
            "bleu_html": html_scores["bleu"], "bleu_plain": plain_scores["bleu"],
            "chrf_html": html_scores["chrf"], "chrf_plain": plain_scores["chrf"],
        }  # fmt: skip
        print(
            f"{shape:<24} {row['fragments']:>4} {ok:>23.1%} {html_scores['bleu']:>10.2f} {plain_scores['bleu']:>11.2f}"
            f" {html_scores['chrf']:>10.2f} {plain_scores['chrf']:>11.2f}"
        )
    print(
        f"time: {html_seconds:.1f} s for the fragments as HTML, {plain_seconds:.1f} s for their sentences as text"
    )
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()

"""What must not be translated, measured on test-split sentences given a URL, e-mail address, path, inline code,
placeholder or formatted number each (the kinds in turn, in the source and in the reference), in two sets:

* `appended`: the first N sentences, the span put before the final punctuation (`I am fat /etc/hosts.`);
* `in place of a name`: the sentences where "Tom" occurs once on both sides, the span in his place
  (`/etc/hosts is fat.`), so that it stands where a noun stands.

Each set is translated as plain text by the model alone (`Translator.translate_sentences`) and as the package
translates it (`translate`, which keeps the spans out of the model), and as HTML; prints how many translations
hold their span byte for byte, and the BLEU/chrF of the rest (the translation with the span taken out, against
the reference without it) beside the same sentences translated without a span (with "Tom" taken out of the
translation in the second set).

    python measurements/measure_protected.py runs/cpu --sentences 300 --json docs/bench/protected.json
"""

import argparse
import html as markup
import json
import re
import time

from hf_seq2seq.data.fra_eng import load_fra_eng
from hf_seq2seq.engines.base import translate
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.evaluation.metrics import score_translations
from hf_seq2seq.formats.markup import translate_html

ITEMS = {
    "url": ["https://github.com/huggingface/transformers/issues/123", "www.example.org/docs?lang=en&page=2"],
    "e-mail": ["jean.dupont@example.fr", "support+billing@example.com"],
    "path": ["/etc/nginx/nginx.conf", "C:\\Users\\Tom\\report.docx", "src/main.py", "./run.sh"],
    "inline code": ["`git status`", "`pip install -e .`"],
    "placeholder": ["{name}", "{{count}}", "%s", "%(user)s", "%d", "{total:.2f}"],
    "number": ["1,234.56", "3.5%", "2026-11-27", "10:30"],
}
"""The spans put in, by kind: each sentence gets the next one in turn."""
TOM = re.compile(r"\bTom\b")


def appended(sentence: str, item: str) -> str:
    body = sentence.rstrip(".!?…")
    return f"{body} {item}{sentence[len(body) :]}"


def without(text: str, item: str) -> str:
    return " ".join(text.replace(item, " ").split())


def measure(translator, pairs: list[tuple[str, str]], place, items: list[tuple[str, str]]) -> dict:
    """Figures for `pairs` with `place(sentence, item)` putting each one's span in."""
    sources = [place(src, item) for (src, _), (_, item) in zip(pairs, items, strict=True)]
    start = time.perf_counter()
    raw = translator.translate_sentences(sources)
    seconds = {"model_alone": time.perf_counter() - start}
    start = time.perf_counter()
    kept = translate(translator, sources)
    seconds["translate"] = time.perf_counter() - start
    pages = translate_html(translator, [f"<p>{markup.escape(source, quote=False)}</p>" for source in sources])
    html = [markup.unescape(page) for page in pages]  # the text a reader sees
    plain = translator.translate_sentences([src for src, _ in pairs])
    if place is not appended:  # the same sentence with Tom, Tom taken out of its translation
        plain = [" ".join(TOM.sub(" ", text).split()) for text in plain]
    references = [without(place(tgt, item), item) for (_, tgt), (_, item) in zip(pairs, items, strict=True)]
    out = {"sentences": len(pairs), "kinds": {}, "seconds": {k: round(v, 2) for k, v in seconds.items()}}
    for kind in [*ITEMS, "all"]:
        rows = [k for k, (name, _) in enumerate(items) if kind in (name, "all")]
        out["kinds"][kind] = {
            "sentences": len(rows),
            **{
                f"kept_{name}": sum(items[k][1] in texts[k] for k in rows) / len(rows)
                for name, texts in (("model_alone", raw), ("translate", kept), ("html", html))
            },
        }
    rests = {
        "model_alone": [without(text, item) for text, (_, item) in zip(raw, items, strict=True)],
        "translate": [without(text, item) for text, (_, item) in zip(kept, items, strict=True)],
        "no_span": plain,
    }
    out["rest"] = {}
    for name, texts in rests.items():
        scores = score_translations(texts, references)
        out["rest"][name] = {"bleu": round(scores["bleu"], 2), "chrf": round(scores["chrf"], 2)}
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a saved model folder")
    parser.add_argument("--sentences", type=int, default=300, help="at most this many in each set")
    parser.add_argument("--data-path", help="fra.txt (default: $HF_SEQ2SEQ_FRA_ENG)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    test = load_fra_eng(args.data_path)["test"]
    pairs = list(zip(test["src"], test["tgt"], strict=True))
    named = [(src, tgt) for src, tgt in pairs if len(TOM.findall(src)) == len(TOM.findall(tgt)) == 1]
    every = [(kind, item) for kind, found in ITEMS.items() for item in found]
    translator = load_translator(args.model)
    results = {"model": args.model, "sets": {}}
    for name, chosen, place in (
        ("appended", pairs[: args.sentences], appended),
        ("in place of a name", named[: args.sentences], lambda text, item: TOM.sub(lambda _: item, text)),
    ):
        items = [every[k % len(every)] for k in range(len(chosen))]
        found = results["sets"][name] = measure(translator, chosen, place, items)
        print(f"{name}: {found['sentences']} test sentences with a span each; model {args.model}")
        print(f"  {'kind':<12} {'n':>4} {'kept: model alone':>18} {'translate':>10} {'HTML':>6}")
        for kind, row in found["kinds"].items():
            print(
                f"  {kind:<12} {row['sentences']:>4} {row['kept_model_alone']:>18.1%} "
                f"{row['kept_translate']:>10.1%} {row['kept_html']:>6.1%}"
            )
        for label, scores in found["rest"].items():
            print(f"  the rest, {label:<12} BLEU {scores['bleu']:6.2f}  chrF {scores['chrf']:6.2f}")
        print(f"  seconds: {found['seconds']}")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()

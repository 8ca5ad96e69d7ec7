"""What must not be translated, measured: test-split sentences each given one URL, e-mail address, path, inline
code, placeholder or formatted number (before its final punctuation, in the source and in the reference) are
translated as plain text and as HTML; prints how many come back with it byte for byte, without and with
`keep_protected`, the BLEU/chrF of the whole sentences, and the BLEU/chrF of the rest (the translation with the
span taken out) beside the same sentences translated without a span.

    python scripts/measure_protected.py runs/cpu --sentences 300 --json docs/bench/protected.json
"""

import argparse
import html as markup
import json
import time

from hf_seq2seq.data.fra_eng import load_fra_eng
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.evaluation.metrics import score_translations
from hf_seq2seq.formats.markup import translate_html
from hf_seq2seq.models.transformer_mt.protected_spans import keep_protected

ITEMS = {
    "url": ["https://github.com/huggingface/transformers/issues/123", "www.example.org/docs?lang=en&page=2"],
    "e-mail": ["jean.dupont@example.fr", "support+billing@example.com"],
    "path": ["/etc/nginx/nginx.conf", "C:\\Users\\Tom\\report.docx", "src/main.py", "./run.sh"],
    "inline code": ["`git status`", "`pip install -e .`"],
    "placeholder": ["{name}", "{{count}}", "%s", "%(user)s", "%d", "{total:.2f}"],
    "number": ["1,234.56", "3.5%", "2026-11-27", "10:30"],
}
"""The spans put in, by kind: each sentence gets the next one in turn."""


def with_item(sentence: str, item: str) -> str:
    body = sentence.rstrip(".!?…")
    return f"{body} {item}{sentence[len(body) :]}"


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a saved model folder")
    parser.add_argument("--sentences", type=int, default=300)
    parser.add_argument("--data-path", help="fra.txt (default: $HF_SEQ2SEQ_FRA_ENG)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    test = load_fra_eng(args.data_path)["test"]
    pairs = list(zip(test["src"], test["tgt"], strict=True))[: args.sentences]
    items = [(kind, item) for kind, found in ITEMS.items() for item in found]
    chosen = [items[k % len(items)] for k in range(len(pairs))]
    sources = [with_item(src, item) for (src, _), (_, item) in zip(pairs, chosen, strict=True)]
    references = [with_item(tgt, item) for (_, tgt), (_, item) in zip(pairs, chosen, strict=True)]
    translator = load_translator(args.model)
    start = time.perf_counter()
    raw = translator.translate_sentences(sources)
    seconds = time.perf_counter() - start
    start = time.perf_counter()
    kept = keep_protected(sources, raw)
    keep_seconds = time.perf_counter() - start
    plain = translator.translate_sentences([src for src, _ in pairs])
    pages = translate_html(translator, [f"<p>{markup.escape(source, quote=False)}</p>" for source in sources])
    html = [markup.unescape(page) for page in pages]  # the text a reader sees
    results = {"model": args.model, "sentences": len(pairs), "kinds": {}}
    print(f"{len(pairs)} test sentences with a span each; model {args.model}")
    print(f"{'kind':<12} {'n':>4} {'kept as text, before':>21} {'after':>7} {'kept as HTML':>13}")
    for kind in [*ITEMS, "all"]:
        rows = [k for k, (name, _) in enumerate(chosen) if kind in (name, "all")]
        row = {
            "sentences": len(rows),
            "kept_without": sum(chosen[k][1] in raw[k] for k in rows) / len(rows),
            "kept_with": sum(chosen[k][1] in kept[k] for k in rows) / len(rows),
            "kept_html": sum(chosen[k][1] in html[k] for k in rows) / len(rows),
        }
        results["kinds"][kind] = row
        print(
            f"{kind:<12} {len(rows):>4} {row['kept_without']:>21.1%} {row['kept_with']:>7.1%} {row['kept_html']:>13.1%}"
        )
    rest = [" ".join(k.replace(item, " ").split()) for k, (_, item) in zip(kept, chosen, strict=True)]
    plain_refs = [tgt for _, tgt in pairs]
    scores = {
        "whole_without": score_translations(raw, references),
        "whole_with": score_translations(kept, references),
        "rest_with": score_translations(rest, plain_refs),
        "no_span": score_translations(plain, plain_refs),
    }
    results["scores"] = {name: {"bleu": s["bleu"], "chrf": s["chrf"]} for name, s in scores.items()}
    results["seconds"] = {"translate": round(seconds, 2), "keep_protected": round(keep_seconds, 4)}
    for name, s in scores.items():
        print(f"{name:<14} BLEU {s['bleu']:6.2f}  chrF {s['chrf']:6.2f}")
    print(f"translating: {seconds:.1f} s; keep_protected: {keep_seconds * 1000:.1f} ms")
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()

"""Does a glossary get its terms into translations, at what cost in BLEU and time? On the fra-eng test split:

1. translate every source with the model's saved decoding, and align each source with its first reference;
2. a sentence gets a term where a source content word (4+ letters) is aligned to exactly one reference word
   (3+ letters) that the model's translation does not contain: "a term the model gets wrong today", forced to
   the reference's word (`source word -> reference word`, one glossary of one term per sentence);
3. those sentences are translated one at a time (batch 1, as a user of the server would send them) without and
   with their glossary: the share of terms that appear in the output, BLEU/chrF against all references, and
   the time per sentence of each.

    python measurements/measure_glossary.py runs/cpu --json docs/bench/glossary.json
"""

import argparse
import json
import time

from hf_seq2seq.data.fra_eng import load_fra_eng
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.evaluation.metrics import score_translations
from hf_seq2seq.formats.aligned import translate_aligned
from hf_seq2seq.formats.glossary import Glossary

PUNCTUATION = "\"'«»“”()[].,;:!?…"
STOPWORDS = set(
    "that this with have what there their they them then than were will would could should from".split()
)


def bare(word: str) -> str:
    return word.strip(PUNCTUATION).lower()


def pick_term(source: str, reference: str, output: str, pairs) -> tuple[str, str] | None:
    """The first source content word aligned to one reference word that the output lacks, and that word."""
    target = reference.split()
    output_words = {bare(w) for w in output.split()}
    for i, word in enumerate(source.split()):
        aligned = [j for s, j in pairs if s == i]
        term = bare(word)
        if len(aligned) != 1 or len(term) < 4 or not term.isalpha() or term in STOPWORDS:
            continue
        wanted = bare(target[aligned[0]])
        if len(wanted) >= 3 and wanted.replace("-", "").isalpha() and wanted not in output_words:
            return term, wanted
    return None


def timed(translator, sentences, glossaries) -> tuple[list[str], float]:
    start, out = time.perf_counter(), []
    for sentence, glossary in zip(sentences, glossaries, strict=True):
        out += [
            r.target for r in translate_aligned(translator, [sentence], glossary=glossary, alignments=False)
        ]
    return out, (time.perf_counter() - start) / len(sentences)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", help="a saved model folder")
    parser.add_argument("--data-path", help="fra.txt (default: $HF_SEQ2SEQ_FRA_ENG)")
    parser.add_argument("--json", help="write the figures here")
    args = parser.parse_args()
    test = load_fra_eng(args.data_path)["test"]
    translator = load_translator(args.model)
    sources, references = test["src"], test["references"]
    outputs = translator.translate_sentences(sources)
    alignments = translator.align(sources, [refs[0] for refs in references])
    chosen = []
    for k, (source, refs, output, pairs) in enumerate(
        zip(sources, references, outputs, alignments, strict=True)
    ):
        term = pick_term(source, refs[0], output, pairs)
        if term:
            chosen.append((k, term))
    sentences = [sources[k] for k, _ in chosen]
    refs = [references[k] for k, _ in chosen]
    glossaries = [Glossary({source: target}) for _, (source, target) in chosen]
    timed(translator, sentences[:10], [None] * 10)  # warm-up
    plain, plain_time = timed(translator, sentences, [None] * len(sentences))
    forced, forced_time = timed(translator, sentences, glossaries)

    def has(output, wanted):
        return wanted in {bare(w) for w in output.split()}

    rows = {
        "without glossary": (plain, plain_time),
        "with glossary": (forced, forced_time),
    }
    results = {"model": args.model, "sentences": len(chosen), "test sentences": len(sources)}
    print(
        f"{len(chosen)} of {len(sources)} test sentences have a term the model gets wrong; model {args.model}"
    )
    print(f"{'':<18} {'terms':>7} {'BLEU':>6} {'chrF':>6} {'ms/sentence':>12}")
    for name, (outs, seconds) in rows.items():
        terms = sum(has(o, t) for o, (_, (_, t)) in zip(outs, chosen, strict=True)) / len(chosen)
        scores = score_translations(outs, refs)
        results[name] = {"terms": terms, "bleu": scores["bleu"], "chrf": scores["chrf"], "ms": seconds * 1000}
        print(f"{name:<18} {terms:7.1%} {scores['bleu']:6.2f} {scores['chrf']:6.2f} {seconds * 1000:12.1f}")
    print(f"time with / without: {forced_time / plain_time:.2f}x")
    results["examples"] = [
        {"source": s, "term": list(t), "without": p, "with": f}
        for s, (_, t), p, f in list(zip(sentences, chosen, plain, forced, strict=True))[:20]
    ]
    if args.json:
        with open(args.json, "w", encoding="utf-8") as f:
            json.dump(results, f, indent=1, ensure_ascii=False)


if __name__ == "__main__":
    main()

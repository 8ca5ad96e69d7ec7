"""Corpus BLEU and chrF with sacrebleu, for whole test sets and for `Seq2SeqTrainer` evaluation.

A source sentence may have several valid translations (Tatoeba-style data keeps all of them), so references
are given *per sentence* as a list of variable length. sacrebleu wants reference *streams* instead
(stream k holds the k-th reference of every sentence); `reference_streams` transposes and pads the shorter
lists with `None`. sacrebleu 2.x drops `None` entries per segment before extracting n-grams (see
`Metric._cache_references`), so a sentence with fewer references is scored against exactly those it has;
the signature then reads `nrefs:var`. An empty string would *not* be dropped: it would count as a real,
empty reference (and pull BLEU's closest reference length to 0), which is why `None` is the padding.

Extra references take the best n-gram matches over all references, but BLEU's brevity penalty uses the
reference length *closest* to the hypothesis, so an extra, longer reference can occasionally lower BLEU.

This module knows nothing about the model or the data modules; it only needs a tokenizer to decode ids.
"""

import re
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import sacrebleu
from transformers import EvalPrediction, PreTrainedTokenizerBase


def normalize_references(references: Sequence[Sequence[str] | str]) -> list[list[str]]:
    """Per-sentence references as lists: a bare string is one reference. Raises `ValueError` on an empty one."""
    normalized = []
    for i, refs in enumerate(references):
        refs = [refs] if isinstance(refs, str) else list(refs)
        if not refs:
            raise ValueError(f"sentence {i} has no reference; every sentence needs at least one")
        if not all(isinstance(ref, str) for ref in refs):
            raise TypeError(f"references of sentence {i} must be strings, got {refs!r}")
        normalized.append(refs)
    return normalized


def reference_streams(references: Sequence[Sequence[str]]) -> list[list[str | None]]:
    """Transpose per-sentence reference lists into sacrebleu streams, padding shorter lists with `None`."""
    width = max(len(refs) for refs in references)
    return [[refs[k] if k < len(refs) else None for refs in references] for k in range(width)]


def score_translations(
    hypotheses: Sequence[str], references: Sequence[Sequence[str]] | Sequence[str]
) -> dict[str, Any]:
    """Corpus BLEU and chrF of `hypotheses` against all references of each sentence, with sacrebleu signatures.

    Args:
        hypotheses: one detokenized translation per source sentence (empty strings are allowed).
        references: per sentence, a list of its reference translations (any number >= 1), or a single string.

    Returns:
        A JSON-serialisable dict: `bleu` and `chrf` (0-100), `bleu_signature`, `chrf_signature`,
        `num_sentences`, and `num_references` (the largest number of references of one sentence).
    """
    if isinstance(hypotheses, str) or not all(isinstance(hyp, str) for hyp in hypotheses):
        raise TypeError("`hypotheses` must be a sequence of strings, one per sentence")
    if not hypotheses:
        raise ValueError("no hypotheses to score: pass at least one sentence")
    refs = normalize_references(references)
    if len(refs) != len(hypotheses):
        raise ValueError(
            f"{len(hypotheses)} hypotheses but {len(refs)} reference entries: give one entry "
            f"(a string or a list of strings) per hypothesis, in the same order"
        )
    streams = reference_streams(refs)
    hyps = list(hypotheses)
    bleu, chrf = sacrebleu.BLEU(), sacrebleu.CHRF()
    return {  # sacrebleu's BLEU of a perfect match is 100.00000000000004 (exp of a sum of logs): cap it
        "bleu": min(100.0, float(bleu.corpus_score(hyps, streams).score)),
        "chrf": float(chrf.corpus_score(hyps, streams).score),
        "bleu_signature": str(bleu.get_signature()),
        "chrf_signature": str(chrf.get_signature()),
        "num_sentences": len(hyps),
        "num_references": len(streams),
    }


# a unit of up to 30 characters (one or a few words, or a syllable) repeated four or more times in a row
_REPEAT = re.compile(r"(?=((\S.{0,29}?)(?:\s*\2){3,}))")
LENGTH_BUCKETS = (10, 20, 40)  # source tokens: 1-10, 11-20, 21-40, 41+


def is_looping(text: str) -> bool:
    """True when `text` repeats a short unit with a letter in it four or more times in a row
    (``de banque de banque de banque de banque``, ``« « « «``, ``tatatata``; not ``1000`` or ``...``)."""
    return any(re.search(r"[^\W\d_]|«|»", m.group(2)) for m in _REPEAT.finditer(text))


def loop_share(hypotheses: Sequence[str]) -> float:
    """The share (0-1) of `hypotheses` that loop (`is_looping`)."""
    return sum(map(is_looping, hypotheses)) / len(hypotheses) if hypotheses else 0.0


OVERLONG_RATIO = 3
"""An output with more than this many times its source's words counts in `overlong_share`."""


def _non_empty(sources: Sequence[str], hypotheses: Sequence[str]) -> list[tuple[str, str]]:
    if len(sources) != len(hypotheses):
        raise ValueError(f"{len(sources)} sources but {len(hypotheses)} hypotheses")
    return [
        (source, hypothesis) for source, hypothesis in zip(sources, hypotheses, strict=True) if source.strip()
    ]


def empty_share(sources: Sequence[str], hypotheses: Sequence[str]) -> float:
    """The share (0-1) of the non-empty `sources` whose translation is empty (or blank): content a translator
    deleted. 0 when no source has a word."""
    pairs = _non_empty(sources, hypotheses)
    return sum(not hypothesis.strip() for _, hypothesis in pairs) / len(pairs) if pairs else 0.0


def overlong_share(sources: Sequence[str], hypotheses: Sequence[str], ratio: float = OVERLONG_RATIO) -> float:
    """The share (0-1) of the non-empty `sources` whose translation has more than `ratio` times their words
    (split at spaces): a sentence invented for a word or a label ("Edit" -> "Les soulagers se sont élevés.")."""
    pairs = _non_empty(sources, hypotheses)
    return (
        sum(len(hypothesis.split()) > ratio * len(source.split()) for source, hypothesis in pairs)
        / len(pairs)
        if pairs
        else 0.0
    )


def score_by_length(
    source_lengths: Sequence[int],
    hypotheses: Sequence[str],
    references: Sequence[Sequence[str]],
    edges: Sequence[int] = LENGTH_BUCKETS,
) -> list[dict[str, Any]]:
    """BLEU, chrF and loop share per bucket of source length (in tokens): 1-10, 11-20, 21-40, 41+ by default.

    A bucket with no sentence is listed with `num_sentences` 0 and no scores.
    """
    bounds = [1, *(e + 1 for e in edges)]
    rows = []
    for low, high in zip(bounds, [*bounds[1:], None], strict=True):
        name = f"{low}-{high - 1}" if high else f"{low}+"
        index = [i for i, n in enumerate(source_lengths) if n >= low and (high is None or n < high)]
        row: dict[str, Any] = {"bucket": name, "num_sentences": len(index)}
        if index:
            hyps = [hypotheses[i] for i in index]
            scores = score_translations(hyps, [references[i] for i in index])
            row |= {"bleu": scores["bleu"], "chrf": scores["chrf"], "loop_share": loop_share(hyps)}
        rows.append(row)
    return rows


def decode_ids(tokenizer: PreTrainedTokenizerBase, ids: np.ndarray) -> list[str]:
    """Decode a (N, L) id array: -100 (the Trainer's padding and ignored labels) becomes pad, special tokens go."""
    ids = np.where(np.asarray(ids) == -100, tokenizer.pad_token_id, ids)
    return [text.strip() for text in tokenizer.batch_decode(ids.tolist(), skip_special_tokens=True)]


def references_by_source(
    source_ids: Sequence[Sequence[int]], references: Sequence[Sequence[str]]
) -> dict[tuple[int, ...], list[str]]:
    """Key each evaluation sentence's references by its source token ids (as the model receives them).

    The Trainer may reorder evaluation rows (length-grouped sampling, gathering across processes), so
    `compute_metrics` finds the references of each prediction through its input ids, never by position.
    Sources that tokenize identically share their references.
    """
    if len(source_ids) != len(references):
        raise ValueError(f"{len(source_ids)} sources but {len(references)} reference lists")
    keyed: dict[tuple[int, ...], list[str]] = {}
    for ids, refs in zip(source_ids, normalize_references(references), strict=True):
        merged = keyed.setdefault(tuple(ids), [])
        merged.extend([r for r in refs if r not in merged])
    return keyed


def build_compute_metrics(
    tokenizer: PreTrainedTokenizerBase, references: dict[tuple[int, ...], list[str]] | None = None
) -> Callable[[EvalPrediction], dict[str, float]]:
    """A `compute_metrics` for `Seq2SeqTrainer(predict_with_generate=True)`.

    Predictions (generated ids) and labels are decoded with -100 replaced by pad and special tokens skipped.
    Without `references`, each decoded label is the single reference of its sentence. With `references`
    (from `references_by_source`), BLEU/chrF use all references of each source, looked up by the prediction's
    input ids: the Trainer must pass them (`include_for_metrics=["inputs"]`).

    The function returns floats only, as the Trainer logs them with an `eval_` prefix: `bleu`, `chrf`, and
    `gen_len`, the mean number of non-special tokens per generated sequence.
    """
    if tokenizer.pad_token_id is None:
        raise ValueError("the tokenizer has no pad token; -100 positions are decoded as pad, so set one")
    special_ids = np.array(tokenizer.all_special_ids)
    padding = (-100, tokenizer.pad_token_id)

    def compute_metrics(eval_pred: EvalPrediction) -> dict[str, float]:
        predictions = eval_pred.predictions
        if isinstance(predictions, tuple):  # some models return (generated ids, ...) tuples
            predictions = predictions[0]
        predictions = np.asarray(predictions)
        hypotheses = decode_ids(tokenizer, predictions)
        if references is None:
            refs: Sequence[Sequence[str]] | Sequence[str] = decode_ids(tokenizer, eval_pred.label_ids)
        elif eval_pred.inputs is None:
            raise ValueError(
                "multi-reference compute_metrics needs the inputs: set include_for_metrics=['inputs']"
            )
        else:
            keys = [tuple(int(i) for i in row if i not in padding) for row in np.asarray(eval_pred.inputs)]
            missing = sum(key not in references for key in keys)
            if missing:
                raise ValueError(f"{missing} of {len(keys)} evaluated sources have no references")
            refs = [references[key] for key in keys]
        scores = score_translations(hypotheses, refs)
        kept = (predictions != -100) & ~np.isin(predictions, special_ids)
        return {"bleu": scores["bleu"], "chrf": scores["chrf"], "gen_len": float(kept.sum(axis=1).mean())}

    return compute_metrics

"""Word alignments: which source words each target word translates, read from the model's cross-attention.

A word is a whitespace-separated token of the text as written (the words of fast_align, Marian and the
Pharaoh format: `"chanson."` is one word, a French `"?"` written apart is another). An alignment is a sorted
list of `(source word, target word)` index pairs, written as Pharaoh `i-j` pairs (`pharaoh`).

`attention_alignment` turns one sentence pair's cross-attention (target tokens x source tokens, heads
averaged) into word pairs; `AlignmentRule` says how. The default, the best of the rules measured against a
hand-made gold set (docs/formats.md, `measurements/measure_alignment.py`):

* the cross-attention of all decoder layers, averaged (heads too);
* a target token's row is the attention of the step that predicts it (not of the step whose input it is:
  "shift" in Chen et al. 2020, which measured worse here);
* the source's end-of-sentence token, where attention rests when it has nowhere better to go, is left out;
* each target token is aligned to the source token it attends to most, and each source token to the target
  token that attends to it most (the union of the two directions); token pairs become word pairs.

`align_pairs` is every engine's `Translator.align`: it tokenizes and batches the pairs, the engine gives each
batch's attention (the torch engine and ONNX Runtime from a teacher-forced pass, CTranslate2 from its decoding
forced through the target), and `attention_alignment` makes the word pairs. This module imports neither torch
nor an engine's package: an engine hands the attention here as nested lists or a numpy array.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

Alignment = list[tuple[int, int]]
"""Sorted `(source word, target word)` index pairs."""


@dataclass(frozen=True)
class AlignmentRule:
    """How attention becomes word pairs (the default is the rule measured best: docs/formats.md, Word alignments).

    * `layer`: the decoder layer whose cross-attention is read, heads averaged (an index as in a list, so -1
      is the last); None averages all layers;
    * `shift`: 1 reads a target token's attention at the step whose input it is, 0 at the step that predicts it;
    * `both_ways`: also align each source token to the target token that attends to it most (the union of the
      two directions, as symmetrised aligners do).
    """

    layer: int | None = None
    shift: int = 0
    both_ways: bool = True

    def __post_init__(self):
        if self.shift not in (0, 1):
            raise ValueError(f"shift must be 0 or 1, got {self.shift}")


DEFAULT_RULE = AlignmentRule()


def word_spans(text: str) -> list[tuple[int, int]]:
    """The `(start, end)` character spans of the whitespace-separated words of `text`."""
    spans, start = [], None
    for i, char in enumerate(text):
        if char.isspace():
            if start is not None:
                spans.append((start, i))
                start = None
        elif start is None:
            start = i
    if start is not None:
        spans.append((start, len(text)))
    return spans


def words(text: str) -> list[str]:
    """The whitespace-separated words of `text` (what the indices of an `Alignment` count)."""
    return text.split()


def token_words(offsets: Sequence[tuple[int, int]], text: str) -> list[int | None]:
    """For each token (given by its character `offsets` into `text`), the index of the word it belongs to;
    None for a token with no characters (special tokens such as `</s>`)."""
    spans = word_spans(text)
    out: list[int | None] = []
    word = 0
    for start, end in offsets:
        if end <= start:
            out.append(None)
            continue
        while word < len(spans) and spans[word][1] <= start:
            word += 1
        if word < len(spans) and spans[word][0] < end:
            out.append(word)
        else:  # a token of whitespace only (the Metaspace marker alone): its next word's
            out.append(word if word < len(spans) else None)
    return out


def attention_alignment(
    attention: Sequence[Sequence[float]],
    source_words: Sequence[int | None],
    target_words: Sequence[int | None],
    rule: AlignmentRule = DEFAULT_RULE,
) -> Alignment:
    """Word pairs of one sentence pair from its cross-attention.

    `attention` has one row per decoder input position, `[decoder start] + target tokens`, so
    `len(target_words) + 1` rows, and one column per source token; `source_words` / `target_words` map the
    tokens to words (`token_words`; None: a special token, never aligned); `rule` says which row stands for a
    target token and whether source tokens pick target tokens too (its `layer` is the caller's business)."""
    shift = rule.shift
    columns = [s for s, word in enumerate(source_words) if word is not None]
    pairs = set()
    if not columns:
        return []
    rows = [t for t, word in enumerate(target_words) if word is not None]
    for t in rows:
        row = attention[t + shift]
        best = max(columns, key=lambda s: row[s])
        pairs.add((source_words[best], target_words[t]))
    if rule.both_ways and rows:  # and each source token to the target token that attends to it most
        for s in columns:
            best = max(rows, key=lambda t: attention[t + shift][s])
            pairs.add((source_words[s], target_words[best]))
    return sorted(pairs)


AttentionOf = Callable[[list[list[int]], list[list[int]]], Sequence[Sequence[Sequence[float]]]]
"""What an engine gives `align_pairs`: for a batch of source ids and target ids (each with its end token), each
pair's cross-attention, `[decoder start] + target` rows by source-token columns (padding rows and columns
beyond a pair's own are never read), as `rule.layer` asks where the engine can choose."""


def align_pairs(
    tokenizer: PreTrainedTokenizerBase,
    sources: Sequence[str],
    targets: Sequence[str],
    max_length: int,
    attention_of: AttentionOf,
    batch_size: int = 64,
    rule: AlignmentRule = DEFAULT_RULE,
) -> list[Alignment]:
    """The word alignment of each `(source, target)` pair (`Translator.align`), every engine's way: the pairs with
    text on both sides, in batches of `batch_size`, tokenized (sources cut to `max_length` tokens, targets to
    one fewer, as the decoder reads them after its start token), their attention from the engine
    (`attention_of`) turned into word pairs by `attention_alignment`; a blank side aligns nothing."""
    if len(sources) != len(targets):
        raise ValueError(f"{len(sources)} sources but {len(targets)} targets: give one target per source")
    out: list[Alignment] = [[] for _ in sources]
    todo = [i for i, (s, t) in enumerate(zip(sources, targets, strict=True)) if s.strip() and t.strip()]
    for first in range(0, len(todo), batch_size):
        index = todo[first : first + batch_size]
        source = tokenizer(
            [sources[i] for i in index], max_length=max_length, truncation=True, return_offsets_mapping=True
        )
        target = tokenizer(
            text_target=[targets[i] for i in index], max_length=max_length - 1, truncation=True,
            return_offsets_mapping=True,
        )  # fmt: skip
        attention = attention_of(source["input_ids"], target["input_ids"])
        for row, i in enumerate(index):
            out[i] = attention_alignment(
                attention[row],
                token_words(source["offset_mapping"][row], sources[i]),
                token_words(target["offset_mapping"][row], targets[i]),
                rule,
            )
    return out


def pharaoh(alignment: Alignment) -> str:
    """`alignment` in the Pharaoh format: `"0-0 1-2 2-1"` (source index first)."""
    return " ".join(f"{i}-{j}" for i, j in alignment)


def parse_pharaoh(line: str) -> Alignment:
    """The pairs of a Pharaoh line (`"0-0 1-2"`; `p` links written `0p1` count as pairs too)."""
    pairs = []
    for item in line.split():
        i, sep, j = item.replace("p", "-").partition("-")
        if not sep:
            raise ValueError(f"not a Pharaoh pair: {item!r} (expected i-j)")
        pairs.append((int(i), int(j)))
    return sorted(set(pairs))


def alignment_error_rate(predicted: Sequence[Alignment], gold: Sequence[Alignment]) -> float:
    """AER (Och & Ney 2003) over a corpus with sure links only: 1 - 2|A∩S| / (|A| + |S|)."""
    hits = sum(len(set(a) & set(s)) for a, s in zip(predicted, gold, strict=True))
    total = sum(len(a) + len(s) for a, s in zip(predicted, gold, strict=True))
    return 1.0 - 2.0 * hits / total if total else 0.0

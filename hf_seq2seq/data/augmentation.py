"""Concatenation augmentation: training examples made of several random training pairs joined into one, so that a
model trained on a corpus of short pairs also learns long inputs and the positions they reach.

A corpus of short sentences (fra-eng: 99.9% of its sources are 30 subwords or fewer) trains positions it has seen
only: a longer sentence at translation time is read at positions that training never reached, and its translation
falls apart (Varis & Bojar 2021, "Sequence length is a domain"). Joining random pairs, source with source and target
with target, makes long pairs from short ones (Kondo et al. 2021; Nguyen et al. 2021, who join each pair with one
random other): each joined example is a valid translation of a long input, as a translation of several sentences
in a row is the translations of each in a row.

:func:`join_random_pairs` works on the tokenized train split: the token ids of the pairs are joined with the `</s>`
between them dropped, which is what tokenizing the texts joined by a space gives (the pre-tokenizer splits on
spaces, so no subword spans the join; `tests/test_augmentation.py` checks this against the tokenizer).
"""

import numpy as np
from datasets import Dataset, concatenate_datasets

INPUT_COLUMNS = ("input_ids", "attention_mask", "labels")
JOINED_PER_CHUNK = 2048  # joined examples made at a time: what bounds the memory of joining


def join_random_pairs(
    train: Dataset,
    share: float,
    max_pairs: int,
    max_source_length: int,
    max_target_length: int,
    seed: int,
) -> Dataset:
    """`train` (columns `input_ids`, `attention_mask`, `labels`, each sequence ending in `</s>`) followed by
    `round(share * len(train))` joined examples. Each joins k random pairs (k drawn uniformly from 2..`max_pairs`,
    pairs drawn with replacement) in the order drawn; a pair that would take the joined source past
    `max_source_length` or the target past `max_target_length` tokens ends the example there, so an example may
    join fewer than k (at least one pair when a pair alone is that long). The same seed gives the same examples.

    The pairs are drawn first, then read a chunk of examples at a time, only the rows drawn: the memory it takes
    is bounded by the chunk and the joined examples (kept in Arrow), not by the size of `train`."""
    if not 0 <= share:
        raise ValueError(f"the share of joined examples must be >= 0, got {share}")
    if max_pairs < 2:
        raise ValueError(f"joining needs at least 2 pairs an example, got {max_pairs}")
    count = round(share * len(train))
    if count == 0:
        return train
    generator = np.random.default_rng(seed)
    sizes = generator.integers(2, max_pairs + 1, size=count)  # (count,)
    drawn = generator.integers(0, len(train), size=int(sizes.sum()))  # (sum of sizes,)
    # (count + 1,): example i joins the pairs drawn[starts[i] : starts[i + 1]]
    starts = np.concatenate([[0], np.cumsum(sizes)])
    pairs = train.select_columns(("input_ids", "labels"))
    features = train.select_columns(INPUT_COLUMNS).features
    pieces = []
    # a chunk of examples at a time, each reading only the rows it draws: the columns are never read whole (on a
    # corpus of millions of pairs, as Python lists, they would cost gigabytes)
    for first in range(0, count, JOINED_PER_CHUNK):
        last = min(first + JOINED_PER_CHUNK, count)
        rows = pairs[drawn[starts[first] : starts[last]].tolist()]  # {column: the drawn rows, in drawn order}
        joined = _join(
            rows["input_ids"], rows["labels"], sizes[first:last], max_source_length, max_target_length
        )
        joined["attention_mask"] = [[1] * len(ids) for ids in joined["input_ids"]]
        pieces.append(Dataset.from_dict({name: joined[name] for name in INPUT_COLUMNS}, features=features))
    return concatenate_datasets([train.select_columns(INPUT_COLUMNS), *pieces])


def _join(
    sources: list[list[int]],
    targets: list[list[int]],
    sizes: np.ndarray,
    max_source_length: int,
    max_target_length: int,
) -> dict[str, list[list[int]]]:
    """Join `sources`/`targets` (the drawn pairs, in order) into `len(sizes)` examples, `sizes[i]` pairs drawn for
    example i, each ending where the next pair would pass a length limit."""
    joined: dict[str, list[list[int]]] = {"input_ids": [], "labels": []}
    start = 0
    for size in sizes:
        source: list[int] = []
        target: list[int] = []
        for index in range(start, start + size):
            # each sequence ends in </s>: drop the one before the join, keep the last
            next_source, next_target = source[:-1] + sources[index], target[:-1] + targets[index]
            if source and (len(next_source) > max_source_length or len(next_target) > max_target_length):
                break
            source, target = next_source, next_target
        start += size
        joined["input_ids"].append(source)
        joined["labels"].append(target)
    return joined

"""Batches by tokens (`--max_tokens_per_batch N`, fairseq's `--max-tokens`): pairs of similar lengths grouped so
that each batch, padded, holds at most N source + target tokens.

A batch of b pairs whose longest source has s tokens and longest target t costs b * (s + t) padded tokens: what the
collator pads it to and the step computes on. Sorting the pairs by length before cutting keeps that padding small,
so a batch of short pairs holds many of them and one of long pairs few, each filling the GPU about as much.

`TokenBatchSampler` batches a corpus held in memory (a `datasets.Dataset`): the batches are cut once, and each
epoch shuffles, with the seed and the epoch, both the pairs of the same lengths among themselves and the order of the
batches; so an epoch holds every pair once, the same seed gives the same order, and every epoch has the same number
of batches (the Trainer counts its steps from it). `TokenBatchStream` batches a stream (`--streaming`): it reads the
pairs into a pool of `pool_size`, batches the pool as above, yields its batches in a shuffled order, and goes on.

With several processes accelerate gives each its own batches: batch i of the epoch to process i mod n (it wraps the
sampler in `BatchSamplerShard`, the stream in `IterableDatasetShard`). The sampler makes the number of batches a
multiple of the processes, by halving its largest batches, so every process trains on as many distinct batches as
the others and none waits for the rest at the end of an epoch; a stream's last round is filled up by accelerate
with batches from the start of the epoch, as it does for a stream batched by sentences.

A pair longer than N tokens alone cannot be batched within the limit: it is refused with an error naming the flag
(fairseq does the same), instead of being trained on in a batch over the limit or dropped without a word.
"""

from collections.abc import Callable, Iterable, Iterator, Sequence

import numpy as np
import torch
from torch.utils.data import BatchSampler

from hf_seq2seq.errors import HfSeq2SeqError

SOURCE_COLUMN, TARGET_COLUMN = "input_ids", "labels"


class PairTooLongError(HfSeq2SeqError, ValueError):
    """A pair that alone holds more tokens than `--max_tokens_per_batch` allows."""


def check_fits(source_length: int, target_length: int, max_tokens: int) -> None:
    if source_length + target_length > max_tokens:
        raise PairTooLongError(
            f"--max_tokens_per_batch {max_tokens} is below a pair of {source_length} + {target_length} tokens "
            "(source + target): raise it to at least the longest pair's tokens, or cut the pairs shorter with "
            "--max_source_length / --max_target_length"
        )


def cut_batches(
    source_lengths: Sequence[int], target_lengths: Sequence[int], order: Sequence[int], max_tokens: int
) -> list[list[int]]:
    """Cut `order` (pair indices, sorted by length) into consecutive batches of at most `max_tokens` padded tokens
    (batch size * (longest source + longest target)), each as full as the next pair allows."""
    batches: list[list[int]] = []
    batch: list[int] = []
    longest_source = longest_target = 0
    for index in order:
        source, target = int(source_lengths[index]), int(target_lengths[index])
        check_fits(source, target, max_tokens)
        widest = max(longest_source, source) + max(longest_target, target)
        if batch and (len(batch) + 1) * widest > max_tokens:
            batches.append(batch)
            batch, longest_source, longest_target = [], 0, 0
        batch.append(index)
        longest_source, longest_target = max(longest_source, source), max(longest_target, target)
    if batch:
        batches.append(batch)
    return batches


def length_order(source_lengths: Sequence[int], target_lengths: Sequence[int]) -> np.ndarray:
    """Pair indices sorted by (source length, target length), ties in index order."""
    return np.lexsort((np.asarray(target_lengths), np.asarray(source_lengths)))


def shuffle_ties(order: np.ndarray, keys: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """`order` with the indices of each run of equal `keys` (in `order`'s order) shuffled among themselves."""
    shuffled = order.copy()
    starts = np.flatnonzero(np.r_[True, keys[1:] != keys[:-1], True])
    for start, end in zip(starts[:-1], starts[1:], strict=True):
        if end - start > 1:
            shuffled[start:end] = rng.permutation(order[start:end])
    return shuffled


class TokenBatchSampler(BatchSampler):
    """The batches of a corpus in memory, by tokens, for `DataLoader(batch_sampler=...)` (see the module's text).

    `num_processes`: the number of batches is made a multiple of it (each process then gets as many). The order
    of an epoch depends on `seed` and the epoch only: `set_epoch` (which the Trainer and accelerate call) sets the
    epoch, and each pass over the sampler moves on to the next one, for a caller that does not call it."""

    def __init__(
        self,
        source_lengths: Sequence[int],
        target_lengths: Sequence[int],
        max_tokens: int,
        seed: int = 0,
        num_processes: int = 1,
    ):
        if max_tokens <= 0:
            raise ValueError(f"--max_tokens_per_batch must be positive, not {max_tokens}")
        self.max_tokens = max_tokens
        self.seed = seed
        self.epoch = 0
        self.batch_size = None  # varies: accelerate's BatchSamplerShard then deals out whole batches
        self.drop_last = False
        sources, targets = np.asarray(source_lengths), np.asarray(target_lengths)
        self._order = length_order(sources, targets)
        self._keys = sources[self._order] * (targets.max(initial=0) + 1) + targets[self._order]
        # batches as (start, size) slices of the sorted order: which pairs of equal lengths fill a slice changes
        # each epoch, its lengths (so its padded tokens) do not
        sizes = [len(batch) for batch in cut_batches(sources, targets, self._order, max_tokens)]
        starts = np.cumsum([0, *sizes[:-1]]).tolist()
        self._bounds = even_out(list(zip(starts, sizes, strict=True)), num_processes)

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)

    def __len__(self) -> int:
        return len(self._bounds)

    def __iter__(self) -> Iterator[list[int]]:
        rng = np.random.default_rng([self.seed, self.epoch])
        self.epoch += 1
        order = shuffle_ties(self._order, self._keys, rng)
        for batch in rng.permutation(len(self._bounds)):
            start, size = self._bounds[batch]
            yield order[start : start + size].tolist()


def even_out(bounds: list[tuple[int, int]], num_processes: int) -> list[tuple[int, int]]:
    """(start, size) batches -> as many more as make their number a multiple of `num_processes`, by halving the
    largest batches (a half never holds more tokens than the whole); as they are when too few can be halved."""
    bounds = list(bounds)
    while len(bounds) % num_processes:
        largest = max(range(len(bounds)), key=lambda i: bounds[i][1])
        start, size = bounds[largest]
        if size < 2:
            break
        half = size // 2
        bounds[largest : largest + 1] = [(start, half), (start + half, size - half)]
    return bounds


class TokenBatchStream(torch.utils.data.IterableDataset):
    """The batches of a stream of tokenized pairs, by tokens: lists of pairs, one per item, for a `DataLoader` of
    `batch_size=1` whose collate function takes the list (`collate_batches`). Each pool of `pool_size` pairs is
    batched as `TokenBatchSampler` batches a corpus, its batches shuffled with the seed, the epoch and the pool's
    number. `set_epoch` reaches the stream too (which reshuffles its buffer and data files)."""

    def __init__(self, stream: Iterable[dict], max_tokens: int, seed: int = 0, pool_size: int = 10_000):
        if max_tokens <= 0:
            raise ValueError(f"--max_tokens_per_batch must be positive, not {max_tokens}")
        self.stream = stream
        self.max_tokens = max_tokens
        self.seed = seed
        self.pool_size = max(1, pool_size)
        self.epoch = 0

    def set_epoch(self, epoch: int) -> None:
        self.epoch = int(epoch)
        if hasattr(self.stream, "set_epoch"):
            self.stream.set_epoch(epoch)

    def __iter__(self) -> Iterator[list[dict]]:
        pool: list[dict] = []
        pool_number = 0
        for pair in self.stream:
            pool.append(pair)
            if len(pool) == self.pool_size:
                yield from self._batches(pool, pool_number)
                pool, pool_number = [], pool_number + 1
        if pool:
            yield from self._batches(pool, pool_number)

    def _batches(self, pool: list[dict], pool_number: int) -> Iterator[list[dict]]:
        sources = [len(pair[SOURCE_COLUMN]) for pair in pool]
        targets = [len(pair[TARGET_COLUMN]) for pair in pool]
        batches = cut_batches(sources, targets, length_order(sources, targets), self.max_tokens)
        rng = np.random.default_rng([self.seed, self.epoch, pool_number])
        for batch in rng.permutation(len(batches)):
            yield [pool[i] for i in batches[batch]]


def collate_batches(collator: Callable[[list[dict]], dict]) -> Callable[[list[list[dict]]], dict]:
    """The collate function of a `DataLoader(TokenBatchStream, batch_size=1)`: its one item is a batch of pairs."""

    def collate(items: list[list[dict]]) -> dict:
        (pairs,) = items
        return collator(pairs)

    return collate

"""The contract every corpus loader keeps: the split columns, the leakage-free hash split, reference grouping.

Column contract
---------------
Every loader (:func:`hf_seq2seq.data.fra_eng.load_fra_eng`, the loaders of :mod:`hf_seq2seq.data.loaders`)
returns a :class:`datasets.DatasetDict` (an :class:`datasets.IterableDatasetDict` when ``streaming=True``)
with exactly the splits ``train``, ``validation`` and ``test``:

* ``train``: one row per sentence pair. Columns ``src`` (``str``, the source-language sentence)
  and ``tgt`` (``str``, its translation).
* ``validation`` and ``test``: one row per unique source sentence. Columns ``src``, ``tgt`` (the
  first reference, for the loss) and ``references`` (``list[str]``, every translation of that
  source in input order, for multi-reference BLEU; the number of references varies by row).

Texts are passed through unchanged (no normalisation, no lowercasing); rows of a generic dataset
whose source or target is missing or blank are dropped.

Split rule
----------
A dataset that comes without validation/test splits is split by *source sentence*, never by row,
so a source sentence and all its translations end up in one split. The key of a sentence is its
NFKC form with runs of whitespace collapsed to one space and the ends stripped (so variants that
differ only in no-break spaces share a key). ``u = int(blake2b(key as UTF-8, digest_size=8),
big-endian) / 2**64``; ``u < test_fraction`` is test, ``u < test_fraction + validation_fraction``
is validation, the rest is train. The rule depends on nothing but the sentence: the same split on
every run and machine, whatever the file order. Evaluation splits group rows by the same key.
Splits a dataset already has (e.g. WMT's validation/test) are kept as they are.
"""

from __future__ import annotations

import hashlib
import unicodedata
from collections.abc import Callable, Iterable, Iterator, Mapping
from typing import Any, Literal

from datasets import Dataset, DatasetDict, Features, IterableDataset, IterableDatasetDict, List, Value

Split = Literal["train", "validation", "test"]
AnyDataset = Dataset | IterableDataset
AnyDatasetDict = DatasetDict | IterableDatasetDict
PAIR_FEATURES = Features({"src": Value("string"), "tgt": Value("string")})
"""Schema of the ``train`` split."""


EVAL_FEATURES = Features(
    {"src": Value("string"), "tgt": Value("string"), "references": List(Value("string"))}
)
"""Schema of the ``validation`` and ``test`` splits."""


def _source_key(text: str) -> str:
    """The identity of a source sentence for splitting and grouping (NFKC, whitespace collapsed)."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


def assign_split(source: str, validation_fraction: float = 0.01, test_fraction: float = 0.01) -> Split:
    """Return the split of a source sentence under the hash rule described in the module docstring."""
    digest = hashlib.blake2b(_source_key(source).encode("utf-8"), digest_size=8).digest()
    position = int.from_bytes(digest, "big") / 2**64
    if position < test_fraction:
        return "test"
    if position < test_fraction + validation_fraction:
        return "validation"
    return "train"


def check_fractions(validation_fraction: float, test_fraction: float) -> None:
    """Raise :class:`ValueError` unless both fractions are in [0, 1) and sum to less than 1."""
    if not (
        0 <= validation_fraction < 1 and 0 <= test_fraction < 1 and validation_fraction + test_fraction < 1
    ):
        raise ValueError(
            f"validation_fraction ({validation_fraction}) and test_fraction ({test_fraction}) must be "
            "in [0, 1) and sum to less than 1"
        )


def _grouped_rows(rows: Iterable[Mapping[str, Any]]) -> Iterator[dict[str, Any]]:
    """Merge rows by source key, in order of first appearance (holds the groups in memory)."""
    groups: dict[str, dict[str, Any]] = {}
    for row in rows:
        group = groups.setdefault(
            _source_key(row["src"]), {"src": row["src"], "tgt": row["tgt"], "references": []}
        )
        group["references"].append(row["tgt"])
    yield from groups.values()


def group_references(dataset: AnyDataset) -> AnyDataset:
    """Turn a ``src``/``tgt`` dataset into one row per unique source with all its ``references``.

    ``tgt`` is the first reference. On an :class:`IterableDataset` the grouping happens while
    iterating and keeps the whole (evaluation-sized) split in memory.
    """
    if isinstance(dataset, IterableDataset):
        return IterableDataset.from_generator(
            _grouped_rows, features=EVAL_FEATURES, gen_kwargs={"rows": dataset}
        )
    columns = dataset[:]
    rows = list(
        _grouped_rows({"src": s, "tgt": t} for s, t in zip(columns["src"], columns["tgt"], strict=True))
    )
    return Dataset.from_dict(
        {name: [row[name] for row in rows] for name in EVAL_FEATURES}, features=EVAL_FEATURES
    )


def _select_buckets(
    dataset: AnyDataset,
    buckets: Mapping[str, frozenset[str]],
    validation_fraction: float,
    test_fraction: float,
) -> dict[str, AnyDataset]:
    """Return, for each name in ``buckets``, the rows whose :func:`assign_split` falls in its buckets."""
    if isinstance(dataset, IterableDataset):

        def predicate(wanted: frozenset[str]) -> Callable[[dict[str, list[Any]]], list[bool]]:
            return lambda batch: [
                assign_split(s, validation_fraction, test_fraction) in wanted for s in batch["src"]
            ]

        return {name: dataset.filter(predicate(wanted), batched=True) for name, wanted in buckets.items()}
    assigned = [
        assign_split(s, validation_fraction, test_fraction)
        for batch in dataset.iter(batch_size=10_000)
        for s in batch["src"]
    ]
    return {
        name: dataset.select([i for i, bucket in enumerate(assigned) if bucket in wanted])
        for name, wanted in buckets.items()
    }


def finish_splits(
    splits: dict[str, AnyDataset], validation_fraction: float, test_fraction: float
) -> dict[str, AnyDataset]:
    """Carve missing validation/test splits out of ``train`` by hash; group the evaluation splits.

    The hash buckets do not move: the bucket of a split the dataset already has stays in ``train``.
    """
    missing = [name for name in ("validation", "test") if name not in splits]
    if missing:
        buckets = {"train": frozenset({"train", "validation", "test"}.difference(missing))}
        buckets.update((name, frozenset({name})) for name in missing)
        splits.update(_select_buckets(splits["train"], buckets, validation_fraction, test_fraction))
    return {
        "train": splits["train"],
        "validation": group_references(splits["validation"]),
        "test": group_references(splits["test"]),
    }

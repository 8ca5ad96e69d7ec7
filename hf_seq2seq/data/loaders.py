"""Loading any translation corpus into the split contract of :mod:`hf_seq2seq.data.splits`.

:func:`load_translation_dataset` reads what :func:`datasets.load_dataset` reads (a Hub dataset, a
builder with ``data_files=``, a local folder) or a local data file, picks the source and target
columns and fills in missing evaluation splits by the hash rule. :func:`load_named_dataset` adds
``"fra-eng"`` (:mod:`hf_seq2seq.data.fra_eng`) and ``"multi30k"`` (:mod:`hf_seq2seq.data.multi30k`) and keeps
test sets out of training
(:func:`keep_test_sets_out`); :func:`load_corpora` joins several corpora into one ``train`` split.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable, Sequence
from pathlib import Path
from typing import Any

from datasets import (
    Dataset,
    DatasetDict,
    Features,
    IterableDataset,
    IterableDatasetDict,
    Translation,
    concatenate_datasets,
    interleave_datasets,
    load_dataset,
)

from hf_seq2seq.data.errors import ColumnError, DataError, DataFormatError, DataNotFoundError
from hf_seq2seq.data.fra_eng import load_fra_eng
from hf_seq2seq.data.multi30k import load_multi30k
from hf_seq2seq.data.software_messages import (
    SOFTWARE_CORPORA,
    SOFTWARE_MESSAGES_SHORT,
    load_software_messages,
)
from hf_seq2seq.data.splits import (
    PAIR_FEATURES,
    AnyDataset,
    AnyDatasetDict,
    check_fractions,
    finish_splits,
)
from hf_seq2seq.data.test_sets import (
    PACKAGED_TEST_SETS,
    STANDARD_TEST_SET,
    drop_overlap,
    excluded_sentences,
    shares_a_side,
)

logger = logging.getLogger(__name__)

_SPLIT_ALIASES = {
    "train": "train",
    "validation": "validation",
    "valid": "validation",
    "dev": "validation",
    "test": "test",
}
_BUILDERS: dict[str, tuple[str, dict[str, str]]] = {
    ".json": ("json", {}),
    ".jsonl": ("json", {}),
    ".csv": ("csv", {}),
    ".tsv": ("csv", {"delimiter": "\t"}),
    ".parquet": ("parquet", {}),
}
_COMPRESSION_SUFFIXES = {".gz", ".bz2", ".xz", ".zst"}


def _builder_for(path: Path) -> tuple[str, dict[str, str]] | None:
    """The ``datasets`` builder (and its options) for a data file, from its extension."""
    suffixes = [s.lower() for s in path.suffixes]
    if suffixes and suffixes[-1] in _COMPRESSION_SUFFIXES:
        suffixes.pop()
    return _BUILDERS.get(suffixes[-1]) if suffixes else None


def _load_raw(
    path: str | os.PathLike[str], name: str | None, streaming: bool, load_kwargs: dict[str, Any]
) -> AnyDatasetDict:
    """Load a Hub dataset, a builder (``"json"`` + ``data_files=``), a local folder or a local data file.

    A single split (``split=`` in ``load_kwargs``) is returned as the ``train`` split.
    """
    location = Path(path).expanduser()
    builder = _builder_for(location)
    if builder is None:
        if location.is_file():
            raise DataFormatError(
                f"Unsupported data file {location}: use {sorted(_BUILDERS)} (optionally compressed), "
                "or load_fra_eng(path) for English<TAB>French text files"
            )
        loaded = load_dataset(str(path), name, streaming=streaming, **load_kwargs)
    elif location.is_file():
        builder_name, options = builder
        loaded = load_dataset(
            builder_name, data_files=str(location), streaming=streaming, **{**options, **load_kwargs}
        )
    else:
        raise DataNotFoundError(f"Data file not found: {location}")
    if isinstance(loaded, Dataset | IterableDataset):
        return IterableDatasetDict(train=loaded) if streaming else DatasetDict(train=loaded)
    return loaded


def _column_picker(
    columns: Iterable[str],
    features: Features | None,
    source_lang: str,
    target_lang: str,
    source_column: str | None,
    target_column: str | None,
) -> Callable[[dict[str, list[Any]]], dict[str, list[str]]]:
    """Check the columns and return a batched function mapping them to ``src``/``tgt``."""
    columns = list(columns)
    if source_column is not None or target_column is not None:
        wanted = [c for c in (source_column, target_column) if c is not None]
        unknown = [c for c in wanted if c not in columns]
        if len(wanted) != 2 or unknown:
            raise ColumnError(
                f"source_column and target_column must both name columns of the dataset; "
                f"unknown: {unknown or 'one of them is not given'}; columns: {columns}"
            )
        src_col, tgt_col = source_column, target_column
    elif "translation" in columns:
        feature = features.get("translation") if features is not None else None
        languages = feature.languages if isinstance(feature, Translation) else feature
        if isinstance(languages, Iterable):
            absent = [lang for lang in (source_lang, target_lang) if lang not in languages]
            if absent:
                raise ColumnError(f"The translation column has languages {list(languages)}, not {absent}")
        src_col = tgt_col = None
    elif source_lang in columns and target_lang in columns:
        src_col, tgt_col = source_lang, target_lang
    else:
        raise ColumnError(
            f"Cannot find {source_lang!r}->{target_lang!r} text in the columns {columns}: expected a "
            f"'translation' column of {{{source_lang!r}: ..., {target_lang!r}: ...}} dicts, columns named "
            f"{source_lang!r} and {target_lang!r}, or source_column=/target_column="
        )

    def pick_pairs(batch: dict[str, list[Any]]) -> dict[str, list[str]]:
        if src_col is None:
            try:
                sources = [row[source_lang] for row in batch["translation"]]
                targets = [row[target_lang] for row in batch["translation"]]
            except (KeyError, TypeError) as exc:
                raise ColumnError(
                    f"A 'translation' entry lacks {source_lang!r} or {target_lang!r}: {exc!r}"
                ) from exc
        else:
            sources, targets = batch[src_col], batch[tgt_col]
        kept = [
            (s, t)
            for s, t in zip(sources, targets, strict=True)
            if isinstance(s, str) and isinstance(t, str) and s.strip() and t.strip()
        ]
        return {"src": [s for s, _ in kept], "tgt": [t for _, t in kept]}

    return pick_pairs


def to_pairs(
    dataset: AnyDataset,
    source_lang: str,
    target_lang: str,
    source_column: str | None,
    target_column: str | None,
) -> AnyDataset:
    """Normalise a split to the ``src``/``tgt`` schema, dropping rows with a blank side."""
    columns = dataset.column_names
    if columns is None:  # a stream whose schema is only known once read
        columns = list(next(iter(dataset), {}))
    pick_pairs = _column_picker(
        columns, dataset.features, source_lang, target_lang, source_column, target_column
    )
    return dataset.map(pick_pairs, batched=True, remove_columns=columns, features=PAIR_FEATURES)


def load_translation_dataset(
    path: str | os.PathLike[str],
    name: str | None = None,
    *,
    source_lang: str = "en",
    target_lang: str = "fr",
    source_column: str | None = None,
    target_column: str | None = None,
    streaming: bool = False,
    validation_fraction: float = 0.01,
    test_fraction: float = 0.01,
    **load_kwargs: Any,
) -> AnyDatasetDict:
    """Load any translation corpus as ``src``/``tgt`` (+ ``references``) splits (:mod:`hf_seq2seq.data.splits`).

    ``path``/``name`` are what :func:`datasets.load_dataset` takes (a Hub dataset and config such as
    ``"wmt14", "fr-en"``, a builder such as ``"json"`` with ``data_files=``, or a local folder), or a
    local ``.json``/``.jsonl``/``.csv``/``.tsv``/``.parquet`` file (optionally compressed; csv/tsv need
    a header row). Text is taken from ``source_column``/``target_column`` when given, else from a
    ``translation`` column of ``{lang: text}`` dicts, else from columns named ``source_lang`` and
    ``target_lang``. ``validation``/``dev``/``valid`` and ``test`` splits are used when present; missing
    ones are carved from ``train`` with :func:`assign_split`. ``streaming=True`` returns an
    :class:`IterableDatasetDict` (each split re-reads the stream; evaluation splits are grouped in
    memory as they are read). Extra keyword arguments go to :func:`datasets.load_dataset`.
    """
    check_fractions(validation_fraction, test_fraction)
    if source_lang == target_lang and source_column is None:
        raise ColumnError(f"source_lang and target_lang are both {source_lang!r}")
    raw = _load_raw(path, name, streaming, load_kwargs)
    splits: dict[str, AnyDataset] = {}
    for split_name, dataset in raw.items():
        canonical = _SPLIT_ALIASES.get(split_name)
        if canonical is None and len(raw) == 1:
            canonical = "train"
        if canonical is None or canonical in splits:
            logger.warning("Ignoring split %r of %s", split_name, path)
            continue
        splits[canonical] = to_pairs(dataset, source_lang, target_lang, source_column, target_column)
    if "train" not in splits:
        raise ColumnError(f"{path} has no train split (splits: {list(raw)})")
    finished = finish_splits(splits, validation_fraction, test_fraction)
    return IterableDatasetDict(finished) if streaming else DatasetDict(finished)


DEFAULT_EXCLUSIONS = {
    "fra-eng": (STANDARD_TEST_SET,),
    "multi30k": ("multi30k_test_2016_flickr",),
    **{corpus: tuple(PACKAGED_TEST_SETS) for corpus in SOFTWARE_CORPORA},
}
"""The test sets kept out of a corpus's training data by default ("default" in `exclude_test_sets`): fra-eng's
sentences are Tatoeba's, as half of the standard Tatoeba test set's are; Multi30k's, the captions of its test set
of 2016 (the one its results here are scored on); the software messages', the gettext test sets (software messages
too; it was built without them, and the run's report then names them)."""


def exclusions(dataset: str, exclude_test_sets: Sequence[str]) -> list[str]:
    """The test sets and files to keep out of `dataset`: `exclude_test_sets` with "default" standing for
    :data:`DEFAULT_EXCLUSIONS`' ones of the corpus and "none" for nothing."""
    entries = []
    for entry in exclude_test_sets:
        if entry == "default":
            names = DEFAULT_EXCLUSIONS.get(dataset, ())
        elif entry == "none":
            names = ()
        else:
            names = (entry,)
        entries += [name for name in names if name not in entries]
    return entries


def keep_test_sets_out(
    splits: AnyDatasetDict, entries: Sequence[str], languages: tuple[str, str], dataset: str
) -> AnyDatasetDict:
    """`splits` with every pair of train and every source of validation that shares a side with a test set of
    `entries` (names of :data:`hf_seq2seq.data.test_sets.TEST_SETS`, or files of one sentence a line) dropped,
    compared by :func:`hf_seq2seq.data.test_sets.overlap_key`; logs how many went (test stays as it is)."""
    if not entries:
        return splits
    keys = excluded_sentences(entries, languages)
    dropped = {}
    for name in ("train", "validation"):
        if isinstance(splits[name], IterableDataset):  # a stream: filtered as it is read, not counted
            splits[name] = splits[name].filter(lambda row: not shares_a_side(row, keys))
            dropped[name] = "uncounted (a stream)"
        else:
            before = len(splits[name])
            splits[name], n = drop_overlap(splits[name], keys)
            dropped[name] = f"{n:,} of {before:,}"
    logger.info(
        "%s: kept %s out of training: dropped %s train pairs and %s validation sources that share a side with "
        "them (compared without case, spacing and punctuation)",
        dataset,
        ", ".join(entries),
        dropped["train"],
        dropped["validation"],
    )
    return splits


def load_named_dataset(
    dataset: str = "fra-eng",
    dataset_config: str | None = None,
    *,
    data_path: str | os.PathLike[str] | None = None,
    source_lang: str = "en",
    target_lang: str = "fr",
    streaming: bool = False,
    exclude_test_sets: Sequence[str] = ("default",),
) -> AnyDatasetDict:
    """``"fra-eng"`` (from ``data_path``, ``$HF_SEQ2SEQ_FRA_ENG`` or the download), ``"multi30k"`` (from
    ``$HF_SEQ2SEQ_MULTI30K`` or the download), ``"software-messages-v1"`` or ``"software-messages-v1-short"`` (from the package) or any corpus that :func:`load_translation_dataset` reads, as the same ``src``/``tgt`` (+ ``references``) splits, with the test
    sets of `exclude_test_sets` kept out of train and validation (:func:`exclusions`, :func:`keep_test_sets_out`:
    by default, the standard Tatoeba test set out of fra-eng)."""
    if dataset == "fra-eng":
        splits = load_fra_eng(data_path, source_lang=source_lang, target_lang=target_lang)
    elif dataset == "multi30k":
        splits = load_multi30k(source_lang=source_lang, target_lang=target_lang)
    elif dataset in SOFTWARE_CORPORA:
        splits = load_software_messages(
            dataset == SOFTWARE_MESSAGES_SHORT, source_lang=source_lang, target_lang=target_lang
        )
    else:
        splits = load_translation_dataset(
            dataset, dataset_config, source_lang=source_lang, target_lang=target_lang, streaming=streaming
        )
    entries = exclusions(dataset, exclude_test_sets)
    return keep_test_sets_out(splits, entries, (source_lang, target_lang), dataset)


def load_corpora(
    datasets: Sequence[str],
    configs: Sequence[str | None] | None = None,
    *,
    probabilities: Sequence[float] | None = None,
    seed: int = 0,
    data_path: str | os.PathLike[str] | None = None,
    source_lang: str = "en",
    target_lang: str = "fr",
    streaming: bool = False,
    exclude_test_sets: Sequence[str] = ("default",),
) -> AnyDatasetDict:
    """Several corpora (each as :func:`load_named_dataset` reads it, with `exclude_test_sets`) as one set of
    splits.

    ``train`` is the corpora's train splits one after the other, or, with ``probabilities`` (one per corpus,
    summing to 1), interleaved: each pair is drawn from corpus ``i`` with probability ``probabilities[i]``
    (``seed`` fixes the draws) until every corpus has been read once, the smaller ones starting over as
    needed (:func:`datasets.interleave_datasets`, ``all_exhausted``). ``validation`` and ``test`` are those of
    the first corpus. With ``streaming``, a corpus read into memory (fra-eng, Multi30k) joins as a stream.
    """
    configs = list(configs) if configs else [None] * len(datasets)
    if len(configs) != len(datasets):
        raise DataError(f"{len(configs)} dataset configs for {len(datasets)} datasets: give one per dataset")
    if probabilities is not None:
        if (
            len(probabilities) != len(datasets)
            or min(probabilities) < 0
            or abs(sum(probabilities) - 1) > 1e-6
        ):
            raise DataError(
                f"dataset probabilities {list(probabilities)} must be one per dataset ({len(datasets)}), "
                "non-negative, and sum to 1"
            )
    loaded = [
        load_named_dataset(
            name,
            config,
            data_path=data_path,
            source_lang=source_lang,
            target_lang=target_lang,
            streaming=streaming,
            exclude_test_sets=exclude_test_sets,
        )
        for name, config in zip(datasets, configs, strict=True)
    ]
    if len(loaded) == 1:
        return loaded[0]
    trains = [split["train"] for split in loaded]
    if streaming:
        trains = [t.to_iterable_dataset() if isinstance(t, Dataset) else t for t in trains]
    if probabilities is None:
        train = concatenate_datasets(trains)
    else:
        train = interleave_datasets(
            trains, probabilities=list(probabilities), seed=seed, stopping_strategy="all_exhausted"
        )
    container = IterableDatasetDict if streaming else DatasetDict
    return container(train=train, validation=loaded[0]["validation"], test=loaded[0]["test"])

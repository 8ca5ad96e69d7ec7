"""Translation data: loading, validation and a leakage-free train/validation/test split.

Column contract
---------------
Every loader returns a :class:`datasets.DatasetDict` (an :class:`datasets.IterableDatasetDict`
when ``streaming=True``) with exactly the splits ``train``, ``validation`` and ``test``:

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

fra-eng
-------
:func:`load_fra_eng` reads the d2l/Tatoeba English-French pairs (``English<TAB>French`` lines), from
``path=``, else from ``$HF_SEQ2SEQ_FRA_ENG``, else from the user cache (``$HF_SEQ2SEQ_CACHE``, else
``$XDG_CACHE_HOME/hf_seq2seq``, else ``~/.cache/hf_seq2seq``), downloading :data:`FRA_ENG_URL` and
checking its sha1 on first use. Downloads go to a temporary file in the cache and are renamed into
place only once verified, so the cache never holds a partial or corrupt file.
Data: Tatoeba (https://tatoeba.org), CC-BY 2.0 FR; "www.manythings.org/anki and tatoeba.org".
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import tempfile
import unicodedata
import urllib.error
import urllib.request
import zipfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any, Literal

from datasets import (
    Dataset,
    DatasetDict,
    Features,
    IterableDataset,
    IterableDatasetDict,
    List,
    Translation,
    Value,
    concatenate_datasets,
    interleave_datasets,
    load_dataset,
)

__all__ = [
    "CACHE_ENV",
    "EVAL_FEATURES",
    "FRA_ENG_ENV",
    "FRA_ENG_SHA1",
    "FRA_ENG_URL",
    "PAIR_FEATURES",
    "ChecksumError",
    "ColumnError",
    "DataError",
    "DataFormatError",
    "DataNotFoundError",
    "DownloadError",
    "assign_split",
    "default_cache_dir",
    "download_fra_eng",
    "group_references",
    "load_corpora",
    "load_fra_eng",
    "load_named_dataset",
    "load_translation_dataset",
    "read_pairs",
]

logger = logging.getLogger(__name__)

FRA_ENG_URL = "http://d2l-data.s3-accelerate.amazonaws.com/fra-eng.zip"
"""Canonical d2l download of the fra-eng archive (holds ``fra-eng/fra.txt``)."""
FRA_ENG_SHA1 = "94646ad1522d915e7b0f9296181140edcf86a4f5"
"""sha1 of the archive at :data:`FRA_ENG_URL` (d2l ``DATA_HUB['fra-eng']``)."""
FRA_ENG_ENV = "HF_SEQ2SEQ_FRA_ENG"
"""Environment variable: a local ``fra.txt``, ``fra-eng.zip`` or folder holding ``fra.txt``."""
CACHE_ENV = "HF_SEQ2SEQ_CACHE"
"""Environment variable: the cache directory for downloads."""

Split = Literal["train", "validation", "test"]
AnyDataset = Dataset | IterableDataset
AnyDatasetDict = DatasetDict | IterableDatasetDict

PAIR_FEATURES = Features({"src": Value("string"), "tgt": Value("string")})
"""Schema of the ``train`` split."""
EVAL_FEATURES = Features(
    {"src": Value("string"), "tgt": Value("string"), "references": List(Value("string"))}
)
"""Schema of the ``validation`` and ``test`` splits."""

_FRA_ENG_LANGUAGES = ("en", "fr")
_FRA_ENG_MEMBER = "fra.txt"
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


class DataError(ValueError):
    """Invalid data or arguments: the base class of this module's value errors."""


class DataFormatError(DataError):
    """A file is not in the expected format: a bad line, an empty file, a zip without ``fra.txt``."""


class ColumnError(DataError):
    """The requested columns, languages or splits are not in the dataset."""


class ChecksumError(DataError):
    """A downloaded file does not have the expected sha1."""


class DataNotFoundError(FileNotFoundError):
    """A data file was not found where it was said to be."""


class DownloadError(OSError):
    """A download failed (network error, HTTP error, unreachable host)."""


def default_cache_dir() -> Path:
    """Return the download cache: ``$HF_SEQ2SEQ_CACHE``, ``$XDG_CACHE_HOME/hf_seq2seq`` or ``~/.cache/hf_seq2seq``."""
    if os.environ.get(CACHE_ENV):
        return Path(os.environ[CACHE_ENV]).expanduser()
    xdg = os.environ.get("XDG_CACHE_HOME")
    return (Path(xdg) if xdg else Path.home() / ".cache") / "hf_seq2seq"


def _how_to_supply() -> str:
    return (
        f"Pass path= a fra.txt, the fra-eng.zip or a folder holding fra.txt, or set ${FRA_ENG_ENV} to one; "
        f"with neither, {FRA_ENG_URL} is downloaded into {default_cache_dir()} (set ${CACHE_ENV} to move it)."
    )


def download_fra_eng(
    cache_dir: str | os.PathLike[str] | None = None, *, url: str = FRA_ENG_URL, sha1: str = FRA_ENG_SHA1
) -> Path:
    """Return the cached ``fra.txt``, downloading, verifying and extracting the archive on first use.

    The archive is cached under ``cache_dir`` (default :func:`default_cache_dir`) in a folder named
    after its checksum, next to the extracted ``fra.txt``. Raises :class:`DownloadError` when the
    download fails and :class:`ChecksumError` when its sha1 is not ``sha1``; neither leaves a file behind.
    """
    folder = (Path(cache_dir) if cache_dir is not None else default_cache_dir()) / f"fra-eng-{sha1[:12]}"
    text_path = folder / _FRA_ENG_MEMBER
    if text_path.is_file():
        return text_path
    folder.mkdir(parents=True, exist_ok=True)
    zip_path = folder / "fra-eng.zip"
    if not zip_path.is_file():
        logger.info("Downloading %s to %s", url, zip_path)
        _download(url, zip_path, sha1)
    _atomic_write(text_path, _read_zip_member(zip_path))
    return text_path


def _download(url: str, dest: Path, sha1: str) -> None:
    """Stream ``url`` into a temporary file beside ``dest``; rename it to ``dest`` once its sha1 matches."""
    digest = hashlib.sha1()
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as response:
            while chunk := response.read(1 << 20):
                digest.update(chunk)
                out.write(chunk)
        if digest.hexdigest() != sha1:
            raise ChecksumError(
                f"Checksum mismatch for {url}: expected sha1 {sha1}, got {digest.hexdigest()}. "
                f"The file was discarded. {_how_to_supply()}"
            )
        os.replace(tmp, dest)
    except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DownloadError(f"Could not download {url}: {reason}. {_how_to_supply()}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def _atomic_write(path: Path, data: bytes) -> None:
    """Write ``data`` to ``path`` through a temporary file and a rename."""
    fd, tmp_name = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".part")
    try:
        with os.fdopen(fd, "wb") as out:
            out.write(data)
        os.replace(tmp_name, path)
    finally:
        Path(tmp_name).unlink(missing_ok=True)


def _read_zip_member(zip_path: Path) -> bytes:
    """Return the bytes of the (single) ``fra.txt`` in the archive, wherever it sits in the tree."""
    try:
        with zipfile.ZipFile(zip_path) as archive:
            members = [n for n in archive.namelist() if n.rsplit("/", 1)[-1] == _FRA_ENG_MEMBER]
            if len(members) != 1:
                raise DataFormatError(
                    f"{zip_path} must hold exactly one {_FRA_ENG_MEMBER}, found {len(members)} "
                    f"among {archive.namelist()[:10]}"
                )
            return archive.read(members[0])
    except zipfile.BadZipFile as exc:
        raise DataFormatError(f"{zip_path} is not a valid zip archive: {exc}") from exc


def _locate_fra_eng(path: str | os.PathLike[str] | None, cache_dir: str | os.PathLike[str] | None) -> Path:
    """Resolve the fra-eng file: the argument, else ``$HF_SEQ2SEQ_FRA_ENG``, else the (downloaded) cache."""
    if path is not None:
        origin = "the path argument"
    elif os.environ.get(FRA_ENG_ENV):
        path, origin = os.environ[FRA_ENG_ENV], f"${FRA_ENG_ENV}"
    else:
        return download_fra_eng(cache_dir)
    location = Path(path).expanduser()
    if location.is_dir():
        location = location / _FRA_ENG_MEMBER
    if not location.is_file():
        raise DataNotFoundError(
            f"fra-eng data not found: {location} (from {origin}) does not exist. {_how_to_supply()}"
        )
    return location


def read_pairs(path: str | os.PathLike[str]) -> list[tuple[str, str]]:
    """Read ``sentence<TAB>translation`` lines from a UTF-8 text file or the ``fra.txt`` inside a zip.

    Every line must hold exactly one tab and two non-empty sentences; ``\\r\\n`` endings and a BOM
    are accepted. Raises :class:`DataFormatError` naming the file and line otherwise, or when the
    file holds no pairs.
    """
    location = Path(path)
    if zipfile.is_zipfile(location):
        raw, name = _read_zip_member(location), f"{location}!{_FRA_ENG_MEMBER}"
    else:
        raw, name = location.read_bytes(), str(location)
    try:
        text = raw.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise DataFormatError(f"{name} is not UTF-8 text: {exc}") from exc
    lines = text.split("\n")
    if lines[-1] == "":
        lines.pop()
    pairs: list[tuple[str, str]] = []
    for number, line in enumerate(lines, start=1):
        fields = line.removesuffix("\r").split("\t")
        if len(fields) != 2:
            raise DataFormatError(
                f"{name}, line {number}: expected exactly one tab (source<TAB>target), "
                f"found {len(fields) - 1}: {line[:80]!r}"
            )
        if not fields[0].strip() or not fields[1].strip():
            raise DataFormatError(f"{name}, line {number}: empty sentence: {line[:80]!r}")
        pairs.append((fields[0], fields[1]))
    if not pairs:
        raise DataFormatError(f"{name} is empty: expected source<TAB>target lines")
    return pairs


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


def _check_fractions(validation_fraction: float, test_fraction: float) -> None:
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


def _finish_splits(
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


def load_fra_eng(
    path: str | os.PathLike[str] | None = None,
    *,
    source_lang: str = "en",
    target_lang: str = "fr",
    validation_fraction: float = 0.01,
    test_fraction: float = 0.01,
    cache_dir: str | os.PathLike[str] | None = None,
) -> DatasetDict:
    """Load the d2l/Tatoeba English-French pairs as ``train``/``validation``/``test``.

    ``path`` (or ``$HF_SEQ2SEQ_FRA_ENG``) is a ``fra.txt``, the ``fra-eng.zip`` or a folder holding
    ``fra.txt``; without either the archive is downloaded into ``cache_dir``. ``source_lang`` and
    ``target_lang`` (``"en"``/``"fr"``) choose the direction; splitting and reference grouping follow
    the source side.
    """
    if sorted((source_lang, target_lang)) != sorted(_FRA_ENG_LANGUAGES):
        raise ColumnError(
            f"fra-eng has the languages {_FRA_ENG_LANGUAGES}; got source_lang={source_lang!r}, "
            f"target_lang={target_lang!r}"
        )
    _check_fractions(validation_fraction, test_fraction)
    pairs = read_pairs(_locate_fra_eng(path, cache_dir))
    src_index = _FRA_ENG_LANGUAGES.index(source_lang)
    train = Dataset.from_dict(
        {"src": [pair[src_index] for pair in pairs], "tgt": [pair[1 - src_index] for pair in pairs]},
        features=PAIR_FEATURES,
    )
    return DatasetDict(_finish_splits({"train": train}, validation_fraction, test_fraction))


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

    def to_pairs(batch: dict[str, list[Any]]) -> dict[str, list[str]]:
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

    return to_pairs


def _to_pairs(
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
    to_pairs = _column_picker(
        columns, dataset.features, source_lang, target_lang, source_column, target_column
    )
    return dataset.map(to_pairs, batched=True, remove_columns=columns, features=PAIR_FEATURES)


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
    """Load any translation corpus into the module's ``src``/``tgt`` (+ ``references``) contract.

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
    _check_fractions(validation_fraction, test_fraction)
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
        splits[canonical] = _to_pairs(dataset, source_lang, target_lang, source_column, target_column)
    if "train" not in splits:
        raise ColumnError(f"{path} has no train split (splits: {list(raw)})")
    finished = _finish_splits(splits, validation_fraction, test_fraction)
    return IterableDatasetDict(finished) if streaming else DatasetDict(finished)


def load_named_dataset(
    dataset: str = "fra-eng",
    dataset_config: str | None = None,
    *,
    data_path: str | os.PathLike[str] | None = None,
    source_lang: str = "en",
    target_lang: str = "fr",
    streaming: bool = False,
) -> AnyDatasetDict:
    """``"fra-eng"`` (from ``data_path``, ``$HF_SEQ2SEQ_FRA_ENG`` or the download) or any corpus that
    :func:`load_translation_dataset` reads, as the same ``src``/``tgt`` (+ ``references``) splits."""
    if dataset == "fra-eng":
        return load_fra_eng(data_path, source_lang=source_lang, target_lang=target_lang)
    return load_translation_dataset(
        dataset, dataset_config, source_lang=source_lang, target_lang=target_lang, streaming=streaming
    )


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
) -> AnyDatasetDict:
    """Several corpora (each as :func:`load_named_dataset` reads it) as one set of splits.

    ``train`` is the corpora's train splits one after the other, or, with ``probabilities`` (one per corpus,
    summing to 1), interleaved: each pair is drawn from corpus ``i`` with probability ``probabilities[i]``
    (``seed`` fixes the draws) until every corpus has been read once, the smaller ones starting over as
    needed (:func:`datasets.interleave_datasets`, ``all_exhausted``). ``validation`` and ``test`` are those of
    the first corpus. With ``streaming``, a corpus read into memory (fra-eng) joins as a stream.
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

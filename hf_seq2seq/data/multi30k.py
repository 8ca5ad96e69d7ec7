"""Multi30k's English-French image captions (task 1 of GitHub ``multi30k/dataset``), a named dataset as fra-eng is.

:func:`load_multi30k` reads the raw files of the dataset's ``data/task1/raw/`` pinned at :data:`MULTI30K_COMMIT`
(``train.{en,fr}.gz``: 29,000 caption pairs; ``val.{en,fr}.gz``: 1,014), every file's sha256 checked, a local
copy's too: from ``path=``, else ``$HF_SEQ2SEQ_MULTI30K`` (a folder holding them), else the user cache (as
:func:`hf_seq2seq.data.fra_eng.default_cache_dir`), downloading them on first use. ``train`` and ``validation``
are the dataset's own; ``test`` is carved from ``train`` by the hash rule of :mod:`hf_seq2seq.data.splits`.
Multi30k's own test sets are scored by name (``multi30k_test_2016_flickr`` ... of
:data:`hf_seq2seq.data.test_sets.TEST_SETS`).
"""

from __future__ import annotations

import gzip
import os
from pathlib import Path

from datasets import Dataset, DatasetDict

from hf_seq2seq.data.errors import ColumnError, DataNotFoundError
from hf_seq2seq.data.fra_eng import default_cache_dir, pinned_file
from hf_seq2seq.data.splits import PAIR_FEATURES, check_fractions, finish_splits

MULTI30K_COMMIT = "a3d2e0d26b56f3846f66a952536ffed4e401d05a"
"""The commit of ``multi30k/dataset`` whose raw files :data:`MULTI30K_SHA256` pins."""

MULTI30K_URL = "https://raw.githubusercontent.com/multi30k/dataset/{commit}/data/task1/raw/{file}"

MULTI30K_ENV = "HF_SEQ2SEQ_MULTI30K"
"""Environment variable: a folder holding the raw files (a local copy of ``data/task1/raw/``)."""

MULTI30K_SHA256 = {
    "train.en.gz": "d79cfa999dd4c51d2cb42499b6796d5a882c3a8a961923c25a898c90f8bbd56f",
    "train.fr.gz": "622e75069e9f4c577425c4f277116ce66e63a2401c0a2312d90073cb12379a3c",
    "val.en.gz": "14f7d25ddd868909a9213e361768460edcacdd6ab9d1e77b92560dc10c10dc28",
    "val.fr.gz": "ca3106f1a72390591d25f6c45cb4cd39dec4cd3f123e099748a3ce5256c160e9",
}
"""Each raw file's sha256 at :data:`MULTI30K_COMMIT`."""

SPLITS = {"train": "train", "validation": "val"}
"""Our split name: the raw files' prefix."""

_LANGUAGES = ("en", "fr")


def _how_to_supply() -> str:
    return (
        f"Pass path= or set ${MULTI30K_ENV} to a folder holding {', '.join(MULTI30K_SHA256)} (multi30k/dataset's "
        f"data/task1/raw/ at {MULTI30K_COMMIT[:12]}); without either they are downloaded into {default_cache_dir()}."
    )


def multi30k_file(
    name: str, path: str | os.PathLike[str] | None = None, cache_dir: str | os.PathLike[str] | None = None
) -> Path:
    """The checked raw file `name` (a key of :data:`MULTI30K_SHA256`): from the folder `path`, else
    ``$HF_SEQ2SEQ_MULTI30K``, else the cache, downloading it on first use. Raises :class:`ChecksumError` for a
    file that is not the pinned one, :class:`DataNotFoundError` for a folder that lacks it, :class:`DownloadError`
    when it cannot come."""
    folder = path if path is not None else os.environ.get(MULTI30K_ENV)
    local = Path(folder).expanduser() / name if folder else None
    if local is not None and not local.is_file():
        raise DataNotFoundError(f"Multi30k's {name} is not in {Path(folder)}. {_how_to_supply()}")
    return pinned_file(
        local,
        Path(cache_dir or default_cache_dir()) / f"multi30k-{MULTI30K_COMMIT[:12]}" / name,
        MULTI30K_URL.format(commit=MULTI30K_COMMIT, file=name),
        MULTI30K_SHA256[name],
        f"Multi30k's {name} of {MULTI30K_COMMIT[:12]}",
        _how_to_supply(),
    )


def _lines(file: Path) -> list[str]:
    with gzip.open(file, "rt", encoding="utf-8") as handle:
        return [line.strip() for line in handle.read().splitlines()]


def load_multi30k(
    path: str | os.PathLike[str] | None = None,
    *,
    source_lang: str = "en",
    target_lang: str = "fr",
    test_fraction: float = 0.01,
    cache_dir: str | os.PathLike[str] | None = None,
) -> DatasetDict:
    """Multi30k's English-French captions as ``train``/``validation``/``test`` (the split contract of
    :mod:`hf_seq2seq.data.splits`): its own train and validation pairs (a pair with a blank side dropped), and
    a test split carved from train by the hash rule. ``path`` is a folder holding the raw files (else
    ``$HF_SEQ2SEQ_MULTI30K``, else the download into ``cache_dir``, :func:`multi30k_file`)."""
    if sorted((source_lang, target_lang)) != sorted(_LANGUAGES):
        raise ColumnError(
            f"Multi30k has the languages {_LANGUAGES}; got source_lang={source_lang!r}, target_lang={target_lang!r}"
        )
    check_fractions(0.0, test_fraction)
    splits = {}
    for split, prefix in SPLITS.items():
        sources, targets = (
            _lines(multi30k_file(f"{prefix}.{lang}.gz", path, cache_dir))
            for lang in (source_lang, target_lang)
        )
        pairs = [(s, t) for s, t in zip(sources, targets, strict=True) if s and t]
        splits[split] = Dataset.from_dict(
            {"src": [s for s, _ in pairs], "tgt": [t for _, t in pairs]}, features=PAIR_FEATURES
        )
    return DatasetDict(finish_splits(splits, 0.0, test_fraction))

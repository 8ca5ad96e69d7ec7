"""The d2l/Tatoeba English-French pairs: locating, downloading and checking, reading, splitting.

:func:`load_fra_eng` reads the d2l/Tatoeba English-French pairs (``English<TAB>French`` lines), from
``path=``, else from ``$HF_SEQ2SEQ_FRA_ENG``, else from the user cache (``$HF_SEQ2SEQ_CACHE``, else
``$XDG_CACHE_HOME/hf_seq2seq``, else ``~/.cache/hf_seq2seq``), downloading :data:`FRA_ENG_URL` and
checking its sha1 on first use. Downloads go to a temporary file in the cache and are renamed into
place only once verified, so the cache never holds a partial or corrupt file. The splits follow the
contract and the hash rule of :mod:`hf_seq2seq.data.splits`.
Data: Tatoeba (https://tatoeba.org), CC-BY 2.0 FR; "www.manythings.org/anki and tatoeba.org".
"""

from __future__ import annotations

import hashlib
import http.client
import logging
import os
import tempfile
import urllib.error
import urllib.request
import zipfile
from pathlib import Path

from datasets import Dataset, DatasetDict

from hf_seq2seq.data.errors import (
    ChecksumError,
    ColumnError,
    DataFormatError,
    DataNotFoundError,
    DownloadError,
)
from hf_seq2seq.data.splits import PAIR_FEATURES, check_fractions, finish_splits

logger = logging.getLogger(__name__)

FRA_ENG_URL = "http://d2l-data.s3-accelerate.amazonaws.com/fra-eng.zip"
"""Canonical d2l download of the fra-eng archive (holds ``fra-eng/fra.txt``)."""


FRA_ENG_SHA1 = "94646ad1522d915e7b0f9296181140edcf86a4f5"
"""sha1 of the archive at :data:`FRA_ENG_URL` (d2l ``DATA_HUB['fra-eng']``)."""


FRA_ENG_ENV = "HF_SEQ2SEQ_FRA_ENG"
"""Environment variable: a local ``fra.txt``, ``fra-eng.zip`` or folder holding ``fra.txt``."""


CACHE_ENV = "HF_SEQ2SEQ_CACHE"
"""Environment variable: the cache directory for downloads."""


_FRA_ENG_LANGUAGES = ("en", "fr")
_FRA_ENG_MEMBER = "fra.txt"


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
        download_verified(url, zip_path, sha1)
    _atomic_write(text_path, _read_zip_member(zip_path))
    return text_path


def download_verified(
    url: str, dest: Path, digest: str, algorithm: str = "sha1", how_to_supply: str = ""
) -> None:
    """Stream ``url`` into a temporary file beside ``dest``; rename it to ``dest`` once its `algorithm` digest is
    ``digest``. Raises :class:`DownloadError` or :class:`ChecksumError` (then with `how_to_supply`, default the
    fra-eng advice), leaving no file behind."""
    how_to_supply = how_to_supply or _how_to_supply()
    hasher = hashlib.new(algorithm)
    fd, tmp_name = tempfile.mkstemp(dir=dest.parent, prefix=f".{dest.name}.", suffix=".part")
    tmp = Path(tmp_name)
    try:
        with os.fdopen(fd, "wb") as out, urllib.request.urlopen(url, timeout=60) as response:
            while chunk := response.read(1 << 20):
                hasher.update(chunk)
                out.write(chunk)
        if hasher.hexdigest() != digest:
            raise ChecksumError(
                f"Checksum mismatch for {url}: expected {algorithm} {digest}, got {hasher.hexdigest()}. "
                f"The file was discarded. {how_to_supply}"
            )
        os.replace(tmp, dest)
    except (urllib.error.URLError, http.client.HTTPException, TimeoutError, ConnectionError) as exc:
        reason = getattr(exc, "reason", exc)
        raise DownloadError(f"Could not download {url}: {reason}. {how_to_supply}") from exc
    finally:
        tmp.unlink(missing_ok=True)


def pinned_file(
    local: Path | None, cached: Path, url: str, sha256: str, what: str, how_to_supply: str
) -> Path:
    """A pinned file, checked by its sha256: `local` (a copy the user gave) where given, else `cached`, downloaded
    from `url` on first use (:func:`download_verified`). Raises :class:`ChecksumError` naming the file as `what`
    (with `how_to_supply`) for a file that is not the pinned one, :class:`DownloadError` when it cannot come."""
    path = local
    if path is None:
        path = cached
        if not path.is_file():
            path.parent.mkdir(parents=True, exist_ok=True)
            logger.info("Downloading %s to %s", url, path)
            download_verified(url, path, sha256, "sha256", how_to_supply)
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    if actual != sha256:
        raise ChecksumError(f"{path} is not {what}: sha256 {actual}, expected {sha256}. {how_to_supply}")
    return path


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
    check_fractions(validation_fraction, test_fraction)
    pairs = read_pairs(_locate_fra_eng(path, cache_dir))
    src_index = _FRA_ENG_LANGUAGES.index(source_lang)
    train = Dataset.from_dict(
        {"src": [pair[src_index] for pair in pairs], "tgt": [pair[1 - src_index] for pair in pairs]},
        features=PAIR_FEATURES,
    )
    return DatasetDict(finish_splits({"train": train}, validation_fraction, test_fraction))

"""The errors the data layer raises: bad files, unknown columns, failed downloads, missing data."""

from __future__ import annotations

from hf_seq2seq.errors import HfSeq2SeqError


class DataError(HfSeq2SeqError, ValueError):
    """Invalid data or arguments: the base class of the data layer's value errors."""


class DataFormatError(DataError):
    """A file is not in the expected format: a bad line, an empty file, a zip without ``fra.txt``."""


class ColumnError(DataError):
    """The requested columns, languages or splits are not in the dataset."""


class ChecksumError(DataError):
    """A downloaded (or local, pinned) file does not have the expected checksum."""


class DataNotFoundError(HfSeq2SeqError, FileNotFoundError):
    """A data file was not found where it was said to be."""


class DownloadError(HfSeq2SeqError, OSError):
    """A download failed (network error, HTTP error, unreachable host)."""

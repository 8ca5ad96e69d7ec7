"""Translated files waiting for their download (``POST /translate_file``, ``GET /download_file/<name>``):
`FileStore`, and the names the files get.

A file is named as LibreTranslate names it: ``<uuid4>.<stem>_<target><extension>`` (``report.docx`` translated
to French: ``0b3e...-9c1f.report_fr.docx``), the uuid unguessable, the rest the upload's name made safe the way
werkzeug's ``secure_filename`` does (ASCII letters, digits, ``_.-``); the download is offered under the name
without the uuid (``report_fr.docx``). A file is written under a hidden temporary name and renamed into place
(`os.replace`, atomic), so nothing half-written is ever served; it is served for `expiry_seconds` after it was
written (by its modification time), then deleted, by `sweep` or by the download that finds it expired. The
files kept take at most `max_bytes` together: the oldest are deleted to make room for a new one.
"""

from __future__ import annotations

import os
import re
import shutil
import tempfile
import threading
import time
import unicodedata
import uuid
from pathlib import Path, PureWindowsPath

NAME = re.compile(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\.[A-Za-z0-9_.-]+")
"""What a stored file's name looks like; nothing else is ever served."""
PARTIAL = ".partial-"
"""The prefix of a file being written (never matches `NAME`)."""
MEDIA_TYPES = {
    ".txt": "text/plain; charset=utf-8",
    ".html": "text/html; charset=utf-8",
    ".htm": "text/html; charset=utf-8",
    ".srt": "application/x-subrip; charset=utf-8",
    ".vtt": "text/vtt; charset=utf-8",
    ".docx": "application/vnd.openxmlformats-officedocument.wordprocessingml.document",
    ".pptx": "application/vnd.openxmlformats-officedocument.presentationml.presentation",
    ".odt": "application/vnd.oasis.opendocument.text",
    ".odp": "application/vnd.oasis.opendocument.presentation",
    ".epub": "application/epub+zip",
    ".po": "text/x-gettext-translation; charset=utf-8",
    ".pot": "text/x-gettext-translation-template; charset=utf-8",
    ".pdf": "application/pdf",
}
"""The Content-Type of each document format's download."""
MAX_STEM = 100
"""Longest stem kept from an upload's name."""
MAX_NAME = 200
"""Longer than any name a store gives (a uuid, `MAX_STEM`, a language code and an extension)."""


def safe_stem(filename: str) -> str:
    """The stem of an upload's file name (the last part of a path, either separator) as werkzeug's
    ``secure_filename`` writes it: accents dropped, whitespace as ``_``, only ASCII letters, digits and
    ``_.-``, no leading or trailing ``._``; "file" when nothing is left."""
    stem = PureWindowsPath(filename).stem  # a Windows path's separators and a POSIX one's
    stem = unicodedata.normalize("NFKD", stem).encode("ascii", "ignore").decode("ascii")
    stem = re.sub(r"[^A-Za-z0-9_.-]", "", "_".join(stem.split())).strip("._")
    return stem[:MAX_STEM] or "file"


def extension_of(filename: str) -> str:
    """The extension of an upload's file name, lowercase, with its dot ("" when it has none)."""
    return PureWindowsPath(filename).suffix.lower()


def download_name(name: str) -> str:
    """The name a stored file is offered under: without its uuid (as LibreTranslate's ``download_file``)."""
    return name.split(".", 1)[1]


class FileStore:
    """The folder of translated files (see the module docstring): `folder`, or a temporary folder of its own
    that `close` removes."""

    def __init__(
        self, folder: str | os.PathLike[str] | None, expiry_seconds: float, max_bytes: int | None = None
    ):
        self.expiry_seconds, self.max_bytes = expiry_seconds, max_bytes
        self._saving = threading.Lock()
        self.owned = folder is None
        self.folder = Path(tempfile.mkdtemp(prefix="hf-seq2seq-files-") if folder is None else folder)
        self.folder.mkdir(parents=True, exist_ok=True)

    def new_name(self, filename: str, target_lang: str) -> str:
        """A fresh name for the translation of upload `filename` into `target_lang`."""
        return f"{uuid.uuid4()}.{safe_stem(filename)}_{target_lang}{extension_of(filename)}"

    def save(self, name: str, data: bytes) -> None:
        """Write `data` as `name`: to a temporary file first, renamed into place once complete."""
        descriptor, partial = tempfile.mkstemp(prefix=PARTIAL, dir=self.folder)
        try:
            with os.fdopen(descriptor, "wb") as file:
                file.write(data)
            with self._saving:
                self._make_room(len(data))
                os.replace(partial, self.folder / name)
        except BaseException:
            Path(partial).unlink(missing_ok=True)
            raise

    def _make_room(self, size: int) -> None:
        """Delete the oldest stored files until `size` more bytes fit in `max_bytes`."""
        if self.max_bytes is None:
            return
        stored = []
        for path in self.folder.iterdir():
            try:
                if NAME.fullmatch(path.name):
                    stat = path.stat()
                    stored.append((stat.st_mtime_ns, stat.st_size, path))
            except FileNotFoundError:
                continue
        total = sum(size for _, size, _ in stored)
        for _, stored_size, path in sorted(stored):
            if total + size <= self.max_bytes:
                break
            path.unlink(missing_ok=True)
            total -= stored_size

    def read(self, name: str) -> bytes | None:
        """The content of stored file `name`; None when no such file is served (never stored, expired, or not
        a name this store gives). An expired file is deleted."""
        if len(name) > MAX_NAME or not NAME.fullmatch(name):
            return None
        path = self.folder / name
        try:
            if time.time() - path.stat().st_mtime > self.expiry_seconds:
                path.unlink(missing_ok=True)
                return None
            return path.read_bytes()
        except FileNotFoundError:
            return None

    def sweep(self) -> int:
        """Delete the files older than the expiry (stored or left half-written by a crash); how many."""
        deleted, now = 0, time.time()
        for path in self.folder.iterdir():
            try:
                if (NAME.fullmatch(path.name) or path.name.startswith(PARTIAL)) and (
                    now - path.stat().st_mtime > self.expiry_seconds
                ):
                    path.unlink()
                    deleted += 1
            except FileNotFoundError:  # deleted meanwhile by a download or another replica
                continue
        return deleted

    def close(self) -> None:
        """Remove the folder if it is the store's own."""
        if self.owned:
            shutil.rmtree(self.folder, ignore_errors=True)

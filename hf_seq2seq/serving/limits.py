"""Who may use the service and how much: `ApiKeys` (the API keys, each with its own limits, from the server's
settings and a file that is re-read when it changes) and `RateLimiter` (requests per minute per client),
LibreTranslate's ``--api-keys``, ``--req-limit`` and ``--char-limit`` as this server keeps them.

The keys file has one key a line, optionally followed by the key's own request limit (requests per minute) and
character limit (per text), `-` for the server's; blank lines and lines starting with ``#`` are skipped::

    # key                                  req/min  chars
    3f9c2a61-5b7e-4d0e-9a51-2c8e7f1b6d40
    partner-key-7d1e                       600      20000
    batch-key-a02c                         -        50000

The file is checked for a change at most once a second (its modification time and size); a change is read at
once, so keys are added, removed or given new limits without a restart. A file that cannot be read or parsed
then keeps the keys it had, and the error is logged.
"""

from __future__ import annotations

import logging
import os
import time
from collections import deque
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from hf_seq2seq.errors import HfSeq2SeqError

logger = logging.getLogger(__name__)

CHECK_SECONDS = 1.0
"""How often the keys file is checked for a change, at most."""
WINDOW_SECONDS = 60.0
"""The request limit's window: requests per minute, counted over the last 60 s (a moving window)."""


@dataclass(frozen=True)
class KeyLimits:
    """A key's own limits; None: the server's (`ServeConfig.req_limit`, `ServeConfig.char_limit`)."""

    req_limit: int | None = None
    char_limit: int | None = None


class KeysFileError(HfSeq2SeqError, ValueError):
    """A keys file that cannot be read or parsed; the message names the file and the line."""


def parse_keys(lines: Iterable[str], source: str = "the keys file") -> dict[str, KeyLimits]:
    """The keys of a keys file's `lines` (see the module docstring), each with its limits."""
    keys = {}
    for number, line in enumerate(lines, 1):
        fields = line.split()
        if not fields or fields[0].startswith("#"):
            continue
        if len(fields) > 3:
            raise KeysFileError(
                f"{source}, line {number}: expected KEY [REQ_LIMIT [CHAR_LIMIT]], got {line!r}"
            )
        limits = []
        for name, value in zip(("request limit", "character limit"), fields[1:], strict=False):
            if value == "-":
                limits.append(None)
            elif value.isdigit() and int(value) > 0:
                limits.append(int(value))
            else:
                raise KeysFileError(
                    f"{source}, line {number}: the {name} must be a positive integer or -, got {value!r}"
                )
        keys[fields[0]] = KeyLimits(*limits)
    return keys


def read_keys_file(path: str | os.PathLike[str]) -> dict[str, KeyLimits]:
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as error:
        raise KeysFileError(f"cannot read the API keys file {path}: {error}") from None
    return parse_keys(text.splitlines(), str(path))


class ApiKeys:
    """The API keys the service takes: `fixed` ones (the server's settings, without limits of their own) and a
    keys file's (`path`, see the module docstring), re-read when it changes. No key at all: none is needed.

    Reading `path` here raises `KeysFileError` when it cannot be read: a server does not start on a bad file;
    later changes that cannot be read are logged and leave the keys as they were."""

    def __init__(
        self,
        fixed: Iterable[str] = (),
        path: str | os.PathLike[str] | None = None,
        clock: Callable[[], float] = time.monotonic,
    ):
        self.fixed = {key: KeyLimits() for key in fixed}
        self.path, self.clock = path, clock
        self._from_file: dict[str, KeyLimits] = {}
        self._stamp: tuple[int, int] | None = None
        self._checked = float("-inf")
        if path is not None:
            self._stamp = self._file_stamp()
            self._from_file = read_keys_file(path)

    def _file_stamp(self) -> tuple[int, int] | None:
        try:
            stat = os.stat(self.path)
        except OSError:
            return None
        return stat.st_mtime_ns, stat.st_size

    def _refresh(self) -> None:
        """Re-read the file if it changed (checked at most once per `CHECK_SECONDS`)."""
        now = self.clock()
        if self.path is None or now - self._checked < CHECK_SECONDS:
            return
        self._checked = now
        stamp = self._file_stamp()
        if stamp == self._stamp:
            return
        self._stamp = stamp
        try:
            self._from_file = read_keys_file(self.path)
        except KeysFileError as error:
            logger.error("%s; keeping the %d keys read before", error, len(self._from_file))
            return
        logger.info("read %d API keys from %s", len(self._from_file), self.path)

    @property
    def required(self) -> bool:
        """Whether requests need a key (some key is configured)."""
        self._refresh()
        return bool(self.fixed or self._from_file)

    def lookup(self, key: str) -> KeyLimits | None:
        """`key`'s limits, or None for a key the service does not take. Keys are found by their hash (seeded
        at random per process), so the time a lookup takes tells nothing of a key's characters."""
        self._refresh()
        return self._from_file.get(key) or self.fixed.get(key)


class RateLimiter:
    """Requests per minute per client (an API key, or a client address), over a moving window of the last
    `WINDOW_SECONDS`: each client's recent request times, forgotten once a window old."""

    def __init__(self, clock: Callable[[], float] = time.monotonic):
        self.clock = clock
        self._times: dict[str, deque[float]] = {}
        self._swept = clock()

    def hit(self, client: str, limit: int, cost: int = 1) -> float | None:
        """Count a request of `client` costing `cost` against `limit` per window: None when it is within the
        limit (and counted), else the seconds until it would be (it is then not counted)."""
        now = self.clock()
        if now - self._swept > WINDOW_SECONDS:
            self._sweep(now)
        times = self._times.setdefault(client, deque())
        while times and times[0] <= now - WINDOW_SECONDS:
            times.popleft()
        if len(times) + cost > limit:
            if cost > limit or not times:
                return WINDOW_SECONDS
            return times[len(times) + cost - limit - 1] + WINDOW_SECONDS - now
        times.extend([now] * cost)
        return None

    def over(self, client: str, limit: int) -> float | None:
        """The seconds until `client` is under `limit` again when it has reached it in the last window, else
        None; counts nothing."""
        now = self.clock()
        times = self._times.get(client)
        while times and times[0] <= now - WINDOW_SECONDS:
            times.popleft()
        if not times or len(times) < limit:
            return None
        return times[len(times) - limit] + WINDOW_SECONDS - now

    def _sweep(self, now: float) -> None:
        """Forget the clients with no request in the last window."""
        self._swept = now
        for client in [
            c for c, times in self._times.items() if not times or times[-1] <= now - WINDOW_SECONDS
        ]:
            del self._times[client]

"""The translation cache (`hf-seq2seq serve --cache-entries N`): what a model made of a sentence, kept so that
the same sentence costs no model work the next time (a menu, a footer, a subtitle's recurring line, a page
fetched again).

An entry is one sentence's result, keyed by the model (its pair), what was asked of it (the decoding, the
number of alternatives, whether it was scored: `hf_seq2seq.serving.worker.Task`) and the exact sentence; the
word alignments and scores that markup, glossaries and confidence need are kept the same way, keyed by the
model, the source sentence and its translation. A glossary never enters the cache: its terms are put into a
translation after the model made it (`hf_seq2seq.formats.glossary`), so every request gets its own glossary's
terms, whoever translated the sentence before. The cache is bounded by entries and by bytes (the sizes Python
gives the strings it keeps); past either bound the least recently used entries go.

It is off by default: it keeps clients' sentences in the server's memory after their requests are answered,
and a cached sentence comes back sooner than a fresh one, which tells a client whether someone translated it
recently. Where clients trust each other (or there is one), turn it on.
"""

from __future__ import annotations

import sys
import threading
from collections import OrderedDict
from collections.abc import Hashable
from dataclasses import fields, is_dataclass

MISSING = object()
"""What `TranslationCache.get` returns for a key it does not hold."""


def size_of(value) -> int:
    """About the bytes `value` takes: a string, a number, a list or tuple of them, a dataclass of them."""
    size = sys.getsizeof(value)
    if isinstance(value, list | tuple):
        size += sum(size_of(item) for item in value)
    elif is_dataclass(value):
        size += sum(size_of(getattr(value, field.name)) for field in fields(value))
    return size


class TranslationCache:
    """A least-recently-used map of at most `max_entries` entries and `max_bytes` bytes (keys and values, by
    `size_of`); safe to use from several threads."""

    def __init__(self, max_entries: int, max_bytes: int):
        if max_entries < 1 or max_bytes < 1:
            raise ValueError(f"a cache holds at least one entry and one byte; got {max_entries}, {max_bytes}")
        self.max_entries, self.max_bytes = max_entries, max_bytes
        self.bytes = 0
        self._entries: OrderedDict[Hashable, tuple[object, int]] = OrderedDict()
        self._lock = threading.Lock()

    def __len__(self) -> int:
        return len(self._entries)

    def get(self, key: Hashable):
        """The value kept for `key` (now the most recently used), or `MISSING`."""
        with self._lock:
            entry = self._entries.get(key)
            if entry is None:
                return MISSING
            self._entries.move_to_end(key)
            return entry[0]

    def put(self, key: Hashable, value) -> None:
        """Keep `value` for `key`, dropping the least recently used entries past the bounds (a value larger
        than `max_bytes` alone is not kept)."""
        size = size_of(key) + size_of(value)
        if size > self.max_bytes:
            return
        with self._lock:
            old = self._entries.pop(key, None)
            if old is not None:
                self.bytes -= old[1]
            self._entries[key] = (value, size)
            self.bytes += size
            while len(self._entries) > self.max_entries or self.bytes > self.max_bytes:
                _, (_, dropped) = self._entries.popitem(last=False)
                self.bytes -= dropped

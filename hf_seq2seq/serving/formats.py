"""Markup, glossaries and documents in the service: `BatchedTranslator`, the `Translator` that
`hf_seq2seq.formats` translates with inside the server.

`hf_seq2seq.formats` (`translate_aligned`, `translate_html`, `translate_document_bytes`) is synchronous: it
parses, calls `translate_sentences` on all its sentences, `align` on those it needs, and puts the result
together. In the server it runs in a thread of its own (the app's formats threads, off the event loop), on a
`BatchedTranslator` per request, which sends

* its sentences through the model's cache (`hf_seq2seq.serving.cache`, when on) and dynamic batcher
  (`hf_seq2seq.serving.batcher`), as a plain request's: they share
  model batches with concurrent requests, the queue's limits and `QueueFull` apply, and the one model call at
  a time stays one; a document's sentences go in slices of one batch each, one slice after another, so that a
  long document neither fills the queue nor holds the model from the requests that arrive meanwhile;
* its alignments and scores (`Translator.align`, `Translator.score`: one teacher-forced pass each), those the
  cache lacks, to the model thread, between two batches: the batcher merges translations only, and the model and its tokenizer are
  used by one thread at a time. A wait for the model thread is bounded (twice the batch timeout: the batch
  before, then this call): past it the request gets 504.

A document's sentences and their characters are counted as they are sent: past `ServeConfig.max_document_sentences`
or `ServeConfig.max_document_chars` the request gets 413 before the model sees any of them.

Cancelling the request (its client gone, or the server stopping) drops the slice it waits for from the queue
and ends its thread at its next call of the translator (each slice of sentences, each alignment or scoring)
with `ClientGone`.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
from collections.abc import Sequence

from hf_seq2seq.engines.alignment import DEFAULT_RULE, Alignment, AlignmentRule
from hf_seq2seq.engines.base import Translator
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.scoring import Score
from hf_seq2seq.serving.errors import ClientGone, ServeError
from hf_seq2seq.serving.served import ServedModel
from hf_seq2seq.serving.worker import Task


class BatchedTranslator(Translator):
    """A served model's `Translator` as one request of the server sees it (see the module docstring):
    sentences through the model's cache and batcher (`ServedModel.translate`), alignments and scores through its
    cache on its model thread, both awaited from a thread other than the event loop's and the model's. Its
    `tokenizer` is the worker's `split_tokenizer`, which the model thread does not use."""

    def __init__(
        self,
        model: ServedModel,
        loop: asyncio.AbstractEventLoop,
        decoding: Decoding,
        slice_sentences: int,
    ):
        worker = model.worker
        translator = worker.translator
        self.engine, self.tokenizer = translator.engine, worker.split_tokenizer
        self.generation_config, self.precision = translator.generation_config, translator.precision
        self.parameters, self.max_source_length = translator.parameters, translator.max_source_length
        self.model, self.worker, self.config, self.loop = model, worker, model.batcher.config, loop
        self.decoding, self.slice_sentences = decoding, slice_sentences
        self.sentences = self.chars = 0
        self._cancelled = threading.Event()
        self._waiting: concurrent.futures.Future | None = None

    def translate_sentences(
        self,
        sentences: Sequence[str],
        batch_size: int = 64,
        decoding: Decoding | None = None,
        max_source_length: int | None = None,
        progress: bool = False,
    ) -> list[str]:
        """Translations of `sentences` by the model's cache and batcher (the request's decoding unless
        `decoding` is given); `batch_size`, `max_source_length` and `progress` are the batcher's and the
        worker's to decide."""
        decoding = decoding or self.decoding
        self._count(sentences)
        out: list[str] = []
        for start in range(0, len(sentences), self.slice_sentences):
            part = list(sentences[start : start + self.slice_sentences])
            lengths = [self.worker.length(sentence) for sentence in part]
            out += self._wait(
                asyncio.run_coroutine_threadsafe(
                    self.model.translate(part, lengths, Task(decoding)), self.loop
                )
            )
        return out

    def align(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        batch_size: int = 64,
        rule: AlignmentRule = DEFAULT_RULE,
    ) -> list[Alignment]:
        """The worker's `Translator.align` of the pairs the cache lacks, on the model thread."""

        def align(sources: list[str], targets: list[str], rule: AlignmentRule) -> list[Alignment]:
            return self.worker.translator.align(sources, targets, batch_size, rule)

        return self._on_model_thread(self.model.pairs, "align", align, sources, targets, rule)

    def score(self, sources: Sequence[str], targets: Sequence[str], batch_size: int = 64) -> list[Score]:
        """The worker's `Translator.score` of the pairs the cache lacks, on the model thread."""

        def score(sources: list[str], targets: list[str]) -> list[Score]:
            return self.worker.translator.score(sources, targets, batch_size)

        return self._on_model_thread(self.model.pairs, "score", score, sources, targets)

    def _count(self, sentences: Sequence[str]) -> None:
        """Count `sentences` against the document's limits (413 past them)."""
        self._check()
        config = self.config
        self.sentences += len(sentences)
        self.chars += sum(map(len, sentences))
        if self.sentences > config.max_document_sentences:
            raise ServeError(
                413, f"the document has more than {config.max_document_sentences} sentences to translate"
            )
        if self.chars > config.max_document_chars:
            raise ServeError(
                413,
                f"the document has more than {config.max_document_chars} characters to translate "
                f"({self.chars} so far)",
            )

    def _check(self) -> None:
        """`ClientGone` once the request is cancelled."""
        if self._cancelled.is_set():
            raise ClientGone()

    def _on_model_thread(self, function, *args, **kwargs):
        self._check()
        timeout = 2 * self.config.batch_timeout_s
        try:
            return self._wait(self.model.thread.submit(function, *args, **kwargs), timeout)
        except TimeoutError:
            raise ServeError(504, f"the model has not answered in {timeout:g} s") from None

    def cancel(self) -> None:
        """Called from the event loop once the request's wait has ended: a thread still at work drops what it
        waits for and stops at its next step (nothing happens to a thread that has finished)."""
        self._cancelled.set()
        waiting = self._waiting
        if waiting is not None:
            waiting.cancel()

    def _wait(self, future: concurrent.futures.Future, timeout: float | None = None):
        self._waiting = future
        if self._cancelled.is_set():  # cancelled before `cancel` could see this future
            future.cancel()
        try:
            return future.result(timeout)
        except concurrent.futures.CancelledError:
            raise ClientGone() from None
        finally:
            self._waiting = None

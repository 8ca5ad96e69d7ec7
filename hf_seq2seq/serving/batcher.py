"""The dynamic batcher: merges the sentences of concurrent requests into model batches.

Each request's sentences are queued; one worker task takes the oldest request's decoding and as many queued
sentences with the same decoding as fit `max_batch_sentences` and `max_batch_tokens` (longest sentence x
count, the padded size). A batch that is not full waits for more while the model is idle: until requests stop
arriving for `arrival_gap_ms`, at most `max_wait_ms` from the oldest request's arrival or from the end of the
last batch, whichever is later. (Clients that a batch has just answered send their next requests then:
without that wait, closed-loop clients settle into two alternating half-full batches.) Exactly one model call
runs at a time, in a thread of its own, so the event loop keeps answering health checks and metrics during a
slow batch. Each request gets its own translations in order; a request whose client has gone is dropped from
the queue. When a batch of several requests fails, each request is retried alone, so one poisonous input
fails its own request only. The queue holds at most `max_queue_sentences` sentences: past that a request is
refused with `QueueFull` (503 and ``Retry-After``).

No wait is unbounded: a model call that takes longer than `batch_timeout_s` fails its requests with 504 and
every queued one with 503, and the batcher is `stalled` (new requests 503) until that call returns; a worker
task that dies fails the queue the same way and stays `failed`. The batch call takes the sentences and the
oldest request's decoding, which may be anything hashable (the service gives a `worker.Task`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field

from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.serving.config import ServeConfig
from hf_seq2seq.serving.errors import BatchFailed, BatchTimeout, QueueFull, ServeError
from hf_seq2seq.serving.metrics import ModelMetrics

logger = logging.getLogger(__name__)


@dataclass(eq=False)
class _Job:
    """One request's sentences on their way through the queue."""

    sentences: list[str]
    lengths: list[int]
    decoding: Decoding
    future: asyncio.Future
    arrived: float
    taken: int = 0  # sentences handed to batches so far
    done: int = 0
    dropped: bool = False
    results: list[str | None] = field(default_factory=list)

    def __post_init__(self) -> None:
        self.results = [None] * len(self.sentences)


_Piece = tuple[_Job, int, int]  # a job's sentences [start, end) in a batch


class Batcher:
    """Merges the sentences of concurrent requests into model batches; one model call at a time, in a thread.

    `translate(sentences, lengths, decoding)` is awaited by each request; `start()` and `close()` run the
    worker task (in the app's lifespan). `call(sentences, decoding)` is the batch call (a `BatchWorker`'s
    `translate`).
    """

    def __init__(
        self,
        call: Callable[[list[str], Decoding], list[str]],
        config: ServeConfig,
        metrics: ModelMetrics | None = None,
        executor: ThreadPoolExecutor | None = None,
    ):
        self.call, self.config, self.metrics = call, config, metrics
        self.executor = executor or ThreadPoolExecutor(1, thread_name_prefix="hf-seq2seq-model")
        self.queued = 0  # sentences not yet in a batch
        self._jobs: deque[_Job] = deque()
        self._wake = asyncio.Event()
        self._task: asyncio.Task | None = None
        self._rate = None  # sentences/s of recent batches, for Retry-After
        self._idle_since = 0.0  # when the last model call returned (event-loop time)
        self._last_arrival = 0.0
        self.stalled: str | None = None
        """Why no batch can run now (a model call past `batch_timeout_s`, still running); None: none."""
        self.failed: str | None = None
        """Why the worker task ended (it should never); None while it runs."""

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="hf-seq2seq-batcher")
        self._task.add_done_callback(self._ended)

    def _ended(self, task: asyncio.Task) -> None:
        """The worker task ended: by `close`, or by an error (then nothing would ever answer the queue)."""
        if task.cancelled() or task.exception() is None:
            return
        logger.error("the batcher stopped", exc_info=task.exception())
        self.failed = f"the batcher stopped: {type(task.exception()).__name__}: {task.exception()}"
        self._fail_queue(ServeError(503, f"the server cannot translate: {self.failed}"))

    def _fail_queue(self, error: ServeError) -> None:
        """Answer every queued request with `error` and empty the queue."""
        for job in self._jobs:
            if not job.future.done():
                job.future.set_exception(error)
            self._drop(job)
        self._jobs.clear()

    async def close(self) -> None:
        """Stop the worker task; requests still queued (none after a graceful shutdown) fail with 503."""
        if self._task is not None and not self._task.done():  # one that failed has been reported (`_ended`)
            self._task.cancel()
            try:
                await self._task
            except asyncio.CancelledError:
                pass
        for job in self._jobs:
            if not job.future.done():
                job.future.set_exception(ServeError(503, "the server is shutting down"))
        self._jobs.clear()

    def retry_after(self) -> int:
        """Seconds until the queue has likely drained, by the recent throughput (1 to 60)."""
        if not self._rate:
            return 1
        return max(1, min(60, math.ceil(self.queued / self._rate)))

    async def translate(
        self, sentences: Sequence[str], lengths: Sequence[int], decoding: Decoding
    ) -> list[str]:
        """The translations of one request's sentences, in order. Raises `QueueFull` when they do not fit the
        queue, `BatchFailed` when the batch call failed on them; cancelling the wait drops them from the
        queue."""
        if not sentences:
            return []
        if self.failed or self.stalled:
            raise ServeError(
                503, f"the server cannot translate now: {self.failed or self.stalled}", {"Retry-After": "5"}
            )
        if self.queued + len(sentences) > self.config.max_queue_sentences:
            raise QueueFull(self.queued, self.retry_after())
        loop = asyncio.get_running_loop()
        job = _Job(list(sentences), list(lengths), decoding, loop.create_future(), loop.time())
        self._last_arrival = job.arrived
        self._jobs.append(job)
        self._set_queued(self.queued + len(sentences))
        self._wake.set()
        try:
            return await job.future
        finally:
            if not job.future.done() or job.future.cancelled():
                self._drop(job)

    def _set_queued(self, value: int) -> None:
        self.queued = value
        if self.metrics:
            self.metrics.queue.set(value)

    def _drop(self, job: _Job) -> None:
        if not job.dropped:
            job.dropped = True
            self._set_queued(self.queued - (len(job.sentences) - job.taken))

    def _pending(self) -> bool:
        while self._jobs and (self._jobs[0].dropped or self._jobs[0].taken == len(self._jobs[0].sentences)):
            self._jobs.popleft()
        return bool(self._jobs)

    async def _run(self) -> None:
        """The worker task: wait for a request, let its batch fill, run it; forever."""
        while True:
            while self.stalled or not self._pending():
                self._wake.clear()
                await self._wake.wait()
            await self._wait_to_fill()
            if self._pending():
                await self._run_batch(*self._take())

    async def _wait_to_fill(self) -> None:
        """Return when the batch is full, or `max_wait_ms` after the oldest arrival or the end of the last
        batch (whichever is later: the clients that batch answered send their next requests then), or once
        requests have stopped arriving for `arrival_gap_ms` after the first one since that moment."""
        loop = asyncio.get_running_loop()
        config = self.config
        start = max(self._jobs[0].arrived, self._idle_since)
        hard = start + config.max_wait_ms / 1000
        while self.queued < config.max_batch_sentences:
            deadline = hard
            if self._last_arrival >= start:
                deadline = min(hard, self._last_arrival + config.arrival_gap_ms / 1000)
            timeout = deadline - loop.time()
            if timeout <= 0:
                return
            self._wake.clear()
            try:
                await asyncio.wait_for(self._wake.wait(), timeout)
            except TimeoutError:
                return

    def _take(self) -> tuple[list[_Piece], Decoding]:
        """The next batch: (job, start, end) pieces, oldest first, all with the oldest job's decoding."""
        config = self.config
        pieces, decoding, count, longest, full = [], None, 0, 0, False
        for job in self._jobs:
            if job.dropped or job.taken == len(job.sentences):
                continue
            if decoding is None:
                decoding = job.decoding
            elif job.decoding != decoding:
                continue
            start = end = job.taken
            while end < len(job.sentences) and count < config.max_batch_sentences:
                widest = max(longest, job.lengths[end])
                if count and widest * (count + 1) > config.max_batch_tokens:
                    full = True
                    break
                longest, count, end = widest, count + 1, end + 1
            if end > start:
                pieces.append((job, start, end))
                job.taken = end
            if full or count >= config.max_batch_sentences:
                break
        self._set_queued(self.queued - count)
        self._jobs = deque(j for j in self._jobs if not j.dropped and j.taken < len(j.sentences))
        return pieces, decoding

    async def _call(self, sentences: list[str], decoding: Decoding) -> list[str]:
        """One model call in the executor's thread; updates the throughput estimate and the metrics. Raises
        `BatchTimeout` after `batch_timeout_s` (see `_stall`)."""
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        call = loop.run_in_executor(self.executor, self.call, sentences, decoding)
        try:
            outputs = await asyncio.wait_for(asyncio.shield(call), self.config.batch_timeout_s)
        except TimeoutError:
            raise BatchTimeout(self.config.batch_timeout_s, call) from None
        if len(outputs) != len(sentences):
            raise RuntimeError(
                f"the engine returned {len(outputs)} translations for {len(sentences)} sentences"
            )
        seconds = time.perf_counter() - started
        rate = len(sentences) / max(seconds, 1e-6)
        self._rate = rate if self._rate is None else 0.8 * self._rate + 0.2 * rate
        if self.metrics:
            self.metrics.batch_seconds.observe(seconds)
            self.metrics.sentences.inc(len(sentences))
        return outputs

    def _stall(self, call: asyncio.Future, sentences: int) -> None:
        """A model call ran past `batch_timeout_s`: a thread cannot be stopped, so until it returns no batch
        runs, the queue is answered 503 (new requests too) and the model is not ready (``/health``, the service
        tells it from `stalled`)."""
        seconds = self.config.batch_timeout_s
        logger.error(
            "a model call on %d sentences has run past %g s; no batch runs until it returns",
            sentences,
            seconds,
        )
        self.stalled = f"a model call has run past the batch timeout of {seconds:g} s"
        self._fail_queue(
            ServeError(503, f"the server cannot translate now: {self.stalled}", {"Retry-After": "5"})
        )

        def returned(done: asyncio.Future) -> None:
            if not done.cancelled() and done.exception() is not None:
                logger.warning("the late model call failed: %r", done.exception())
            logger.warning("the late model call has returned; batches run again")
            self.stalled = None
            self._wake.set()

        call.add_done_callback(returned)

    async def _run_batch(self, pieces: list[_Piece], decoding: Decoding) -> None:
        sentences = [s for job, start, end in pieces for s in job.sentences[start:end]]
        if self.metrics:
            self.metrics.batch_sentences.observe(len(sentences))
            longest = max(length for job, start, end in pieces for length in job.lengths[start:end])
            self.metrics.batch_tokens.observe(longest * len(sentences))
        try:
            outputs = await self._call(sentences, decoding)
        except BatchTimeout as error:
            if self.metrics:
                self.metrics.batch_failures.inc()
            for job, _, _ in pieces:
                if not job.future.done():
                    job.future.set_exception(ServeError(504, str(error)))
                self._drop(job)
            self._stall(error.call, len(sentences))
            return
        except Exception as error:
            self._idle_since = asyncio.get_running_loop().time()
            await self._batch_failed(pieces, decoding, error)
            return
        self._idle_since = asyncio.get_running_loop().time()
        self._deliver(pieces, outputs)

    async def _batch_failed(self, pieces: list[_Piece], decoding: Decoding, error: Exception) -> None:
        """Fail a batch of one request; retry a batch of several one request at a time."""
        if self.metrics:
            self.metrics.batch_failures.inc()
        if len(pieces) == 1:
            logger.exception("the engine failed on a batch of %d sentences", pieces[0][2] - pieces[0][1])
            self._fail(pieces[0][0], error)
            return
        logger.warning("the engine failed on a batch of %d requests (%r): retrying each", len(pieces), error)
        for piece in pieces:  # one bad input must not fail its batch-mates
            await self._run_batch([piece], decoding)

    @staticmethod
    def _deliver(pieces: list[_Piece], outputs: list[str]) -> None:
        """Hand each piece its translations; a job whose sentences are all translated gets its result."""
        position = 0
        for job, start, end in pieces:
            job.results[start:end] = outputs[position : position + end - start]
            position += end - start
            job.done += end - start
            if job.done == len(job.sentences) and not job.future.done():
                job.future.set_result(job.results)

    def _fail(self, job: _Job, error: Exception) -> None:
        if not job.future.done():
            job.future.set_exception(BatchFailed(f"{type(error).__name__}: {error}"))
        self._drop(job)

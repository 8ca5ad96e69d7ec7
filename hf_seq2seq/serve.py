"""A translation service: a LibreTranslate-compatible HTTP API whose dynamic batcher merges the sentences of
concurrent requests into model batches.

`create_app(load_engine, config)` builds a Starlette (ASGI) app; `hf-seq2seq serve` runs it on uvicorn, and
`hf_seq2seq.serve_ray` runs the same app as a Ray Serve deployment. Endpoints:

* ``POST /translate``: LibreTranslate's request (JSON, url-encoded or multipart form): ``q`` a string or a
  list of strings, ``source`` (or ``"auto"``) and ``target`` language codes, ``format`` ``"text"``,
  ``api_key``; optional decoding fields ``num_beams``, ``length_penalty``, ``max_new_tokens``,
  ``no_repeat_ngram_size``. Answer: ``{"translatedText": "..."}`` (a list for a list).
* ``GET /languages``: LibreTranslate's list, ``[{"code": "en", "name": "English", "targets": ["fr"]}, ...]``.
* ``GET /health``: 200 once the model is loaded, else 503 (loading, or the load failed).
* ``GET /metrics``: Prometheus text format (`prometheus_client`).

Errors are ``{"error": "<message>"}`` with their status: 400 malformed request or unknown language pair, 403
missing or wrong API key, 413 over-long request, 415 unsupported body type, 503 (with ``Retry-After``) model
still loading or queue full, 500 when the engine fails on a batch (for that batch's requests only).

The batcher (`Batcher`): each request's texts are split into sentences (`hf_seq2seq.segmentation`, the
package's splitter, off the event loop), its sentences queued; one worker takes the oldest request's decoding
and as many queued sentences with the same decoding as fit `max_batch_sentences` and `max_batch_tokens`
(longest sentence x count, the padded size). A batch that is not full waits for more while the model is
idle: until requests stop arriving for `arrival_gap_ms`, at most `max_wait_ms` from the oldest request's
arrival or from the end of the last batch, whichever is later. (Clients that a batch has just answered send
their next requests then: without that wait, closed-loop clients settle into two alternating half-full
batches.) Exactly one model call runs at a time, in a thread of its own, so the event
loop keeps answering health checks and metrics during a slow batch. Each request gets its own translations
in order; a request whose client has gone is dropped from the queue. When a batch of several requests fails,
each request is retried alone, so one poisonous input fails its own request only. The queue holds at most
`max_queue_sentences` sentences: past that a request is refused with 503 and ``Retry-After``.
"""

from __future__ import annotations

import asyncio
import copy
import hmac
import json
import logging
import math
import os
import time
from collections import deque
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

from prometheus_client import (
    CONTENT_TYPE_LATEST,
    CollectorRegistry,
    Counter,
    Gauge,
    Histogram,
    generate_latest,
)
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from .decoding import Decoding
from .segmentation import Segmented, split_sentences

logger = logging.getLogger(__name__)

LANGUAGE_NAMES = {
    "am": "Amharic", "ar": "Arabic", "bg": "Bulgarian", "da": "Danish", "de": "German", "el": "Greek",
    "en": "English", "es": "Spanish", "fa": "Persian", "fr": "French", "hi": "Hindi", "hy": "Armenian",
    "it": "Italian", "ja": "Japanese", "kk": "Kazakh", "mr": "Marathi", "my": "Burmese", "nl": "Dutch",
    "pl": "Polish", "pt": "Portuguese", "ru": "Russian", "sk": "Slovak", "ur": "Urdu", "zh": "Chinese",
}  # fmt: skip
DECODING_FIELDS = ("num_beams", "length_penalty", "max_new_tokens", "no_repeat_ngram_size")
INLINE_SPLIT_CHARS = 300  # longer requests are split into sentences in a thread, off the event loop
CLIENT_CLOSED = 499  # nginx's status for a request whose client went away before the answer


@dataclass(frozen=True)
class ServeConfig:
    """The service's limits and batching. Sizes count sentences after splitting; `max_chars` counts the
    characters of all texts of one request."""

    max_batch_sentences: int = 64
    """Most sentences in one model call."""
    max_batch_tokens: int = 8192
    """Most padded source tokens (longest sentence x sentences) in one model call."""
    max_wait_ms: float = 30.0
    """How long a batch may wait to fill while the model is idle: counted from the oldest queued request's
    arrival, or from the end of the last batch when that is later."""
    arrival_gap_ms: float = 8.0
    """A batch that is not full leaves once no request has arrived for this long (after a first one). On 2
    busy cores the clients a batch answered take several ms to send their next requests: 2 ms (and a 10 ms
    wait) split 32 closed-loop clients into batches of 23 on average and served 0.67 of the offline batch-32
    throughput; 8 ms (and 30 ms) made batches of 27 and 0.75 (docs/serving.md)."""
    max_queue_sentences: int = 2048
    """Most sentences waiting for a batch; a request that does not fit gets 503 with Retry-After."""
    max_chars: int = 10_000
    """Most characters (all texts together) in one request: 413 past it."""
    max_texts: int = 128
    """Most texts (``q`` entries) in one request: 413 past it."""
    max_body_bytes: int = 1 << 20
    """Largest request body read: 413 past it."""
    max_beams: int = 8
    max_new_tokens: int = 512
    api_keys: frozenset[str] = frozenset()
    """When not empty, ``/translate`` needs one of these in its ``api_key`` field (403 otherwise)."""
    decoding: Decoding = field(default_factory=Decoding)
    """The server's decoding; a request's decoding fields override it."""
    watch_disconnect: bool = True
    """Drop the queued sentences of a request whose client disconnected."""

    def __post_init__(self) -> None:
        for name in (
            "max_batch_sentences",
            "max_batch_tokens",
            "max_queue_sentences",
            "max_chars",
            "max_texts",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("max_wait_ms", "arrival_gap_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")


class ServeError(Exception):
    """An error answered as ``{"error": message}`` with `status` (and `headers`)."""

    def __init__(self, status: int, message: str, headers: dict[str, str] | None = None):
        super().__init__(message)
        self.status, self.message, self.headers = status, message, headers or {}


class QueueFull(ServeError):
    def __init__(self, queued: int, retry_after: int):
        super().__init__(
            503,
            f"the server is busy: {queued} sentences are queued; retry in {retry_after} s",
            {"Retry-After": str(retry_after)},
        )


class BatchFailed(Exception):
    """The engine raised on the batch that held a request's sentences."""


class ClientGone(Exception):
    """The client disconnected before its translations were ready."""


# ---------------------------------------------------------------------------------------------------- engines


class Engine:
    """What the server translates with: a language pair, sentence splitting with lengths in model tokens, and
    a batch call. Subclass it to wrap another engine (tests inject slow or failing ones this way)."""

    name = "engine"
    source_lang = "en"
    target_lang = "fr"
    max_length: int | None = None
    """Sentences longer than this (by `length`) are cut further by the splitter."""

    def length(self, sentence: str) -> int:
        """A sentence's length in the model's source tokens."""
        return len(sentence.split()) + 1

    def segment(self, text: str) -> Segmented:
        """The sentences of `text` and what lies between them (`hf_seq2seq.segmentation.split_sentences`)."""
        return split_sentences(text, _splitter_language(self.source_lang), self.max_length, self.length)

    def translate(self, sentences: list[str], decoding: Decoding) -> list[str]:
        """Translations of `sentences`, in order: one model batch. Called from one thread at a time."""
        raise NotImplementedError

    def describe(self) -> dict:
        return {"engine": self.name, "source": self.source_lang, "target": self.target_lang}


class TranslatorEngine(Engine):
    """Any engine's `hf_seq2seq.translator.Translator` (e.g. of `hf_seq2seq.translator.load_translator`),
    translated by `hf_seq2seq.inference.translate`; named by its `engine`, described by its `describe()`."""

    def __init__(self, translator, source_lang: str, target_lang: str):
        from .inference import trained_length

        self.translator, tokenizer = translator, translator.tokenizer
        self.source_lang, self.target_lang, self.name = source_lang, target_lang, translator.engine
        self.max_length = trained_length(tokenizer)
        # a fast tokenizer's settings (truncation, padding) live in its Rust object, which the model thread
        # changes per call: measuring lengths from another thread uses a copy of its own
        self._length_tokenizer = copy.deepcopy(tokenizer)

    def length(self, sentence: str) -> int:
        return len(self._length_tokenizer(sentence)["input_ids"])

    def translate(self, sentences: list[str], decoding: Decoding) -> list[str]:
        from .inference import translate

        return translate(self.translator, sentences, batch_size=len(sentences), decoding=decoding)

    def describe(self) -> dict:
        return super().describe() | self.translator.describe()


def _splitter_language(language: str) -> str:
    from pysbd.languages import LANGUAGE_CODES

    return language if language in LANGUAGE_CODES else "en"


def model_languages(folder: str | os.PathLike[str]) -> tuple[str, str] | None:
    """The (source, target) languages a saved folder records: the ``translation_<src>_to_<tgt>`` pipeline
    task of its ``config.json`` (training registers it), else the ``direction`` of its result files
    (``test_results.json``, ``eval_report.json``); None when it records none (e.g. a CTranslate2 export)."""
    folder = Path(folder)
    try:
        config = json.loads((folder / "config.json").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        config = {}
    for task in (config.get("custom_pipelines") or {}) if isinstance(config, dict) else ():
        parts = task.split("_")
        if len(parts) == 4 and parts[0] == "translation" and parts[2] == "to":
            return parts[1], parts[3]
    from .report import EVAL_REPORT, TRAINING_REPORT

    for name in (TRAINING_REPORT, EVAL_REPORT):
        try:
            direction = json.loads((folder / name).read_text(encoding="utf-8")).get("direction", "")
        except (OSError, ValueError, AttributeError):
            continue
        parts = direction.split("-") if isinstance(direction, str) else []
        if len(parts) == 2 and all(parts):
            return parts[0], parts[1]
    return None


def engine_loader(
    folder: str | os.PathLike[str],
    engine: str = "torch",
    precision: str = "fp32",
    languages: tuple[str, str] | None = None,
    trust_remote_code: bool = False,
) -> Callable[[], TranslatorEngine]:
    """A function that loads `folder` with `hf_seq2seq.translator.load_translator` (`engine`, `precision`)
    into a `TranslatorEngine` (the server calls it in the background, answering 503 until it returns).
    `languages` is the (source, target) pair; default: what the folder records (`model_languages`), else
    en-fr."""

    def load() -> TranslatorEngine:
        from .translator import load_translator

        pair = languages or model_languages(folder)
        if pair is None:
            logger.warning("%s records no language pair; serving it as en-fr (set --languages)", folder)
            pair = ("en", "fr")
        return TranslatorEngine(load_translator(folder, engine, precision, trust_remote_code), *pair)

    return load


# ---------------------------------------------------------------------------------------------------- metrics


class Metrics:
    """The service's Prometheus metrics, in a registry of its own (one per app)."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        self.requests = Counter(
            "hf_seq2seq_http_requests", "HTTP requests answered, by path and status", ["path", "status"],
            registry=r,
        )  # fmt: skip
        self.latency = Histogram(
            "hf_seq2seq_translate_latency_seconds",
            "Time from receiving a /translate request to its answer",
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60),
            registry=r,
        )
        self.in_progress = Gauge(
            "hf_seq2seq_translate_in_progress", "/translate requests being answered", registry=r
        )
        self.queue = Gauge("hf_seq2seq_queue_sentences", "Sentences waiting for a model batch", registry=r)
        self.batch_sentences = Histogram(
            "hf_seq2seq_batch_sentences",
            "Sentences per model batch",
            buckets=(1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 256),
            registry=r,
        )
        self.batch_tokens = Histogram(
            "hf_seq2seq_batch_padded_tokens",
            "Padded source tokens per model batch (longest sentence x sentences)",
            buckets=(16, 64, 256, 512, 1024, 2048, 4096, 8192, 16384),
            registry=r,
        )
        self.batch_seconds = Histogram(
            "hf_seq2seq_batch_seconds",
            "Duration of one model call",
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=r,
        )
        self.batch_failures = Counter(
            "hf_seq2seq_batch_failures", "Model batches whose engine call raised", registry=r
        )
        self.sentences = Counter("hf_seq2seq_sentences_translated", "Sentences translated", registry=r)
        self.ready = Gauge("hf_seq2seq_model_ready", "1 once the model is loaded", registry=r)


# ---------------------------------------------------------------------------------------------------- batcher


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


class Batcher:
    """Merges the sentences of concurrent requests into model batches; one model call at a time, in a thread.

    `translate(sentences, lengths, decoding)` is awaited by each request; `start()` and `close()` run the
    worker (in the app's lifespan). `call(sentences, decoding)` is the engine's batch call.
    """

    def __init__(
        self,
        call: Callable[[list[str], Decoding], list[str]],
        config: ServeConfig,
        metrics: Metrics | None = None,
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

    def start(self) -> None:
        self._task = asyncio.get_running_loop().create_task(self._run(), name="hf-seq2seq-batcher")

    async def close(self) -> None:
        """Stop the worker; requests still queued (none after a graceful shutdown) fail with 503."""
        if self._task is not None:
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
        queue, `BatchFailed` when the engine failed on them; cancelling the wait drops them from the queue."""
        if not sentences:
            return []
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
        loop = asyncio.get_running_loop()
        config = self.config
        while True:
            while not self._pending():
                self._wake.clear()
                await self._wake.wait()
            # the batch leaves when full, or `max_wait_ms` after the oldest arrival or the end of the last batch
            # (whichever is later: the clients that batch answered send their next requests then), or once
            # requests have stopped arriving for `arrival_gap_ms` after the first one since that moment
            start = max(self._jobs[0].arrived, self._idle_since)
            hard = start + config.max_wait_ms / 1000
            while self.queued < config.max_batch_sentences:
                deadline = hard
                if self._last_arrival >= start:
                    deadline = min(hard, self._last_arrival + config.arrival_gap_ms / 1000)
                timeout = deadline - loop.time()
                if timeout <= 0:
                    break
                self._wake.clear()
                try:
                    await asyncio.wait_for(self._wake.wait(), timeout)
                except TimeoutError:
                    break
            if self._pending():
                await self._run_batch(*self._take())

    def _take(self) -> tuple[list[tuple[_Job, int, int]], Decoding]:
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
        loop = asyncio.get_running_loop()
        started = time.perf_counter()
        outputs = await loop.run_in_executor(self.executor, self.call, sentences, decoding)
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

    async def _run_batch(self, pieces: list[tuple[_Job, int, int]], decoding: Decoding) -> None:
        sentences = [s for job, start, end in pieces for s in job.sentences[start:end]]
        if self.metrics:
            self.metrics.batch_sentences.observe(len(sentences))
            longest = max(length for job, start, end in pieces for length in job.lengths[start:end])
            self.metrics.batch_tokens.observe(longest * len(sentences))
        try:
            outputs = await self._call(sentences, decoding)
        except Exception as error:
            self._idle_since = asyncio.get_running_loop().time()
            if self.metrics:
                self.metrics.batch_failures.inc()
            if len(pieces) == 1:
                logger.exception("the engine failed on a batch of %d sentences", len(sentences))
                self._fail(pieces[0][0], error)
                return
            logger.warning(
                "the engine failed on a batch of %d requests (%r): retrying each", len(pieces), error
            )
            for piece in pieces:  # one bad input must not fail its batch-mates
                await self._run_batch([piece], decoding)
            return
        self._idle_since = asyncio.get_running_loop().time()
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


# ---------------------------------------------------------------------------------------------------- requests


async def read_fields(request: Request, max_bytes: int) -> dict:
    """The fields of a JSON, url-encoded or multipart body (a repeated form field ``q`` gives a list)."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > max_bytes:
        raise ServeError(413, f"the request body has {length} bytes; the limit is {max_bytes}")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > max_bytes:
            raise ServeError(413, f"the request body is over the limit of {max_bytes} bytes")
    body = bytes(body)
    if not body.strip():
        raise ServeError(400, 'empty body: send JSON such as {"q": "Hello!", "source": "en", "target": "fr"}')
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind == "application/json" or (not kind and body.lstrip()[:1] in (b"{", b"[")):
        try:
            data = json.loads(body)
        except (ValueError, UnicodeDecodeError) as error:
            raise ServeError(400, f"the body is not valid JSON: {error}") from None
        if not isinstance(data, dict):
            raise ServeError(400, f"the JSON body must be an object, got {type(data).__name__}")
        return data
    if kind in ("application/x-www-form-urlencoded", "multipart/form-data"):

        async def replay() -> dict:
            return {"type": "http.request", "body": body, "more_body": False}

        try:
            form = await Request(request.scope, replay).form()
        except Exception as error:  # python-multipart's or starlette's parse errors
            raise ServeError(400, f"the form body cannot be parsed: {error}") from None
        fields = {}
        for key in form:
            values = form.getlist(key)
            if not all(isinstance(value, str) for value in values):
                raise ServeError(400, f"form field {key!r} must be text, not a file")
            fields[key] = values if key == "q" and len(values) > 1 else values[0]
        return fields
    raise ServeError(
        415,
        f"unsupported content type {kind!r}: send application/json, application/x-www-form-urlencoded or "
        "multipart/form-data",
    )


def parse_texts(fields: dict) -> tuple[list[str], bool]:
    """The texts of ``q`` and whether it was a single string."""
    if "q" not in fields:
        raise ServeError(400, "missing field q: the text to translate (a string or a list of strings)")
    q = fields["q"]
    if isinstance(q, str):
        return [q], True
    if isinstance(q, list) and all(isinstance(text, str) for text in q):
        return q, False
    raise ServeError(400, f"q must be a string or a list of strings, got {type(q).__name__}")


def parse_decoding(fields: dict, config: ServeConfig) -> Decoding:
    """The server's decoding with the request's decoding fields over it (form fields arrive as text)."""
    overrides = {}
    limits = {
        "num_beams": (int, 1, config.max_beams),
        "max_new_tokens": (int, 1, config.max_new_tokens),
        "no_repeat_ngram_size": (int, 0, 16),
        "length_penalty": (float, -10.0, 10.0),
    }
    for name, (kind, low, high) in limits.items():
        value = fields.get(name)
        if value is None or value == "":
            continue
        try:
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise ValueError
            number = kind(value)
            if kind is int and isinstance(value, float) and value != number:
                raise ValueError
        except ValueError:
            raise ServeError(
                400, f"{name} must be {'an integer' if kind is int else 'a number'}, got {value!r}"
            ) from None
        if not (low <= number <= high) or (kind is float and not math.isfinite(number)):
            raise ServeError(400, f"{name} must be between {low} and {high}, got {number}")
        overrides[name] = number
    decoding = config.decoding
    if overrides:
        decoding = Decoding(
            **({k: getattr(decoding, k) for k in DECODING_FIELDS} | overrides), compile=decoding.compile
        )
    return decoding


def check_languages(fields: dict, engine: Engine) -> None:
    source, target = fields.get("source", engine.source_lang), fields.get("target", engine.target_lang)
    for name, value in (("source", source), ("target", target)):
        if not isinstance(value, str):
            raise ServeError(
                400, f"{name} must be a language code such as {engine.source_lang!r}, got {value!r}"
            )
    if source == "auto":  # one source language: nothing to detect
        source = engine.source_lang
    if (source, target) != (engine.source_lang, engine.target_lang):
        raise ServeError(
            400,
            f"unknown language pair {source}-{target}: this model translates {engine.source_lang} to "
            f"{engine.target_lang} only (source {engine.source_lang!r} or 'auto', target {engine.target_lang!r}); "
            "see GET /languages",
        )


def check_format(fields: dict) -> None:
    text_format = fields.get("format", "text")
    if text_format != "text":
        raise ServeError(
            400, f"format {text_format!r} is not supported: this server translates plain text ('text')"
        )


def check_api_key(fields: dict, keys: frozenset[str]) -> None:
    if not keys:
        return
    key = fields.get("api_key")
    if not key:
        raise ServeError(403, "missing api_key: this server needs an API key in the api_key field")
    if not isinstance(key, str) or not any(hmac.compare_digest(key.encode(), k.encode()) for k in keys):
        raise ServeError(403, "invalid API key")


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)


# ---------------------------------------------------------------------------------------------------- the app


class _Service:
    """The app's state: the engine once loaded, the batcher, the metrics."""

    def __init__(self, load_engine: Callable[[], Engine], config: ServeConfig):
        self.load_engine, self.config = load_engine, config
        self.metrics = Metrics()
        self.engine: Engine | None = None
        self.load_error: str | None = None
        self.batcher: Batcher | None = None
        self.model_thread = ThreadPoolExecutor(1, thread_name_prefix="hf-seq2seq-model")
        self.split_thread = ThreadPoolExecutor(1, thread_name_prefix="hf-seq2seq-split")
        self._loading: asyncio.Task | None = None

    async def start(self, background: bool = True) -> None:
        if background:
            self._loading = asyncio.get_running_loop().create_task(self._load())
            return
        await self._load()
        if self.load_error:
            raise RuntimeError(f"the model failed to load: {self.load_error}")

    async def _load(self) -> None:
        started = time.perf_counter()
        try:
            engine = await asyncio.get_running_loop().run_in_executor(self.model_thread, self.load_engine)
        except Exception as error:
            logger.exception("loading the model failed")
            self.load_error = f"{type(error).__name__}: {error}"
            return
        self.batcher = Batcher(engine.translate, self.config, self.metrics, self.model_thread)
        self.batcher.start()
        self.engine = engine
        self.metrics.ready.set(1)
        logger.info("model ready in %.1f s: %s", time.perf_counter() - started, engine.describe())

    async def stop(self) -> None:
        if self._loading is not None and not self._loading.done():
            self._loading.cancel()
        if self.batcher is not None:
            await self.batcher.close()
        self.model_thread.shutdown(wait=False, cancel_futures=True)
        self.split_thread.shutdown(wait=False, cancel_futures=True)

    def ready_engine(self) -> Engine:
        if self.engine is None:
            if self.load_error:
                raise ServeError(503, f"the model failed to load: {self.load_error}")
            raise ServeError(503, "the model is loading; retry shortly", {"Retry-After": "5"})
        return self.engine

    def split(self, texts: list[str]) -> tuple[list[Segmented], list[str], list[int]]:
        engine = self.engine
        segmented = [engine.segment(text) for text in texts]
        sentences = [sentence for parts in segmented for sentence in parts.sentences]
        return segmented, sentences, [engine.length(sentence) for sentence in sentences]

    async def translate(self, request: Request) -> dict:
        config = self.config
        fields = await read_fields(request, config.max_body_bytes)
        check_api_key(fields, config.api_keys)
        engine = self.ready_engine()
        texts, single = parse_texts(fields)
        check_languages(fields, engine)
        check_format(fields)
        decoding = parse_decoding(fields, config)
        if len(texts) > config.max_texts:
            raise ServeError(
                413, f"too many texts: {len(texts)}; the limit is {config.max_texts} per request"
            )
        chars = sum(map(len, texts))
        if chars > config.max_chars:
            raise ServeError(413, f"the request has {chars} characters; the limit is {config.max_chars}")
        if chars <= INLINE_SPLIT_CHARS:  # a sentence or two: quicker here than through a thread
            segmented, sentences, lengths = self.split(texts)
        else:
            loop = asyncio.get_running_loop()
            segmented, sentences, lengths = await loop.run_in_executor(self.split_thread, self.split, texts)
        if len(sentences) > config.max_queue_sentences:
            raise ServeError(
                413, f"the request has {len(sentences)} sentences; the limit is {config.max_queue_sentences}"
            )
        work = self.batcher.translate(sentences, lengths, decoding)
        translations = await (self._unless_disconnected(request, work) if config.watch_disconnect else work)
        out, position = [], 0
        for parts in segmented:
            out.append(parts.join(translations[position : position + len(parts.sentences)]))
            position += len(parts.sentences)
        return {"translatedText": out[0] if single else out}

    @staticmethod
    async def _unless_disconnected(request: Request, work):
        """`work`'s result, or `ClientGone` (with `work` cancelled) if the client disconnects first."""

        async def disconnected() -> None:
            while (await request.receive())["type"] != "http.disconnect":
                pass

        work = asyncio.ensure_future(work)
        watcher = asyncio.ensure_future(disconnected())
        try:
            await asyncio.wait({work, watcher}, return_when=asyncio.FIRST_COMPLETED)
        finally:
            for task in (work, watcher):
                if not task.done():
                    task.cancel()
        if work.done() and not work.cancelled():
            return work.result()
        raise ClientGone()


def create_app(
    load_engine: Callable[[], Engine], config: ServeConfig | None = None, load_in_background: bool = True
) -> Starlette:
    """The service as an ASGI app. `load_engine` returns the `Engine` (e.g. `engine_loader(folder)`); it runs
    in a thread when the app starts, and `/health` and `/translate` answer 503 until it has returned. Without
    `load_in_background` the app's startup waits for it (and fails if it fails): for a host such as Ray Serve
    that routes requests to a replica once it has started."""
    config = config or ServeConfig()
    service = _Service(load_engine, config)
    metrics = service.metrics

    async def translate(request: Request) -> Response:
        started = time.perf_counter()
        metrics.in_progress.inc()
        try:
            result = await service.translate(request)
        except ServeError as error:
            return error_response(error.status, error.message, error.headers)
        except BatchFailed as error:
            return error_response(500, f"translation failed: {error}")
        except ClientGone:
            logger.info("a client disconnected before its translation was ready")
            return Response(status_code=CLIENT_CLOSED)
        finally:
            metrics.in_progress.dec()
        metrics.latency.observe(time.perf_counter() - started)
        return JSONResponse(result)

    async def languages(request: Request) -> Response:
        engine = service.ready_engine()
        codes = [(engine.source_lang, [engine.target_lang]), (engine.target_lang, [])]
        return JSONResponse(
            [
                {"code": code, "name": LANGUAGE_NAMES.get(code, code), "targets": targets}
                for code, targets in codes
            ]
        )

    async def health(request: Request) -> Response:
        if service.engine is not None:
            return JSONResponse({"status": "ready", **service.engine.describe()})
        if service.load_error:
            return JSONResponse({"status": "failed", "error": service.load_error}, status_code=503)
        return JSONResponse({"status": "loading"}, status_code=503, headers={"Retry-After": "5"})

    async def metrics_endpoint(request: Request) -> Response:
        return Response(generate_latest(metrics.registry), media_type=CONTENT_TYPE_LATEST)

    async def index(request: Request) -> Response:
        return JSONResponse(
            {
                "service": "hf-seq2seq translation API (LibreTranslate-compatible)",
                "endpoints": ["POST /translate", "GET /languages", "GET /health", "GET /metrics"],
            }
        )

    async def on_serve_error(request: Request, error: ServeError) -> Response:
        return error_response(error.status, error.message, error.headers)

    async def on_http_error(request: Request, error: HTTPException) -> Response:
        return error_response(
            error.status_code, f"{request.method} {request.url.path}: {error.detail}", error.headers
        )

    async def on_error(request: Request, error: Exception) -> Response:
        return error_response(500, f"internal error: {type(error).__name__}: {error}")

    @asynccontextmanager
    async def lifespan(app: Starlette):
        await service.start(load_in_background)
        try:
            yield
        finally:
            await service.stop()

    routes = [
        Route("/", index, methods=["GET"]),
        Route("/translate", translate, methods=["POST"]),
        Route("/languages", languages, methods=["GET", "POST"]),
        Route("/health", health, methods=["GET"]),
        Route("/metrics", metrics_endpoint, methods=["GET"]),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(CountRequests, metrics=metrics, paths={route.path for route in routes})],
        exception_handlers={ServeError: on_serve_error, HTTPException: on_http_error, Exception: on_error},
        lifespan=lifespan,
    )
    app.state.service = service
    return app


class CountRequests:
    """ASGI middleware: counts every HTTP answer by path (unknown paths as "other") and status."""

    def __init__(self, app, metrics: Metrics, paths: set[str]):
        self.app, self.metrics, self.paths = app, metrics, paths

    async def __call__(self, scope, receive, send) -> None:
        if scope["type"] != "http":
            return await self.app(scope, receive, send)
        status = 500  # an exception that escapes becomes a 500

        async def send_counting(message) -> None:
            nonlocal status
            if message["type"] == "http.response.start":
                status = message["status"]
            await send(message)

        try:
            await self.app(scope, receive, send_counting)
        finally:
            path = scope["path"] if scope["path"] in self.paths else "other"
            self.metrics.requests.labels(path, str(status)).inc()


__all__ = [
    "Batcher",
    "Engine",
    "ServeConfig",
    "ServeError",
    "TranslatorEngine",
    "create_app",
    "engine_loader",
    "model_languages",
]

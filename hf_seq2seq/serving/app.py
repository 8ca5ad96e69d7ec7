"""The translation service as an ASGI app: a LibreTranslate-compatible HTTP API whose dynamic batcher
(`hf_seq2seq.serving.batcher`) merges the sentences of concurrent requests into model batches.

`create_app(load_worker, config)` builds a Starlette app; `hf-seq2seq serve` runs it on uvicorn, and
`hf_seq2seq.serving.ray_serve` runs the same app as a Ray Serve deployment. Endpoints:

* ``POST /translate``: LibreTranslate's request (JSON, url-encoded or multipart form): ``q`` a string or a
  list of strings, ``source`` (or ``"auto"``: each text's language is detected, `hf_seq2seq.serving.detection`)
  and ``target`` language codes, ``format`` ``"text"`` or ``"html"`` (`hf_seq2seq.formats.markup`),
  ``alternatives`` (a count), ``api_key``; this server's own ``confidence`` (true: each translation's score,
  `hf_seq2seq.engines.scoring`), decoding fields ``num_beams``, ``length_penalty``, ``max_new_tokens``,
  ``no_repeat_ngram_size``, and ``glossary``, an object of source term -> target term
  (`hf_seq2seq.formats.glossary`; in a form, as JSON text). Answer: ``{"translatedText": "..."}`` (a list
  for a list), with ``detectedLanguage``, ``alternatives`` and ``confidence`` when asked for.
* ``POST /detect``: LibreTranslate's ``[{"language": "en", "confidence": 97.2}, ...]`` for ``q``.
* ``POST /translate_file``: LibreTranslate's document request (multipart form): ``file`` (one of
  `hf_seq2seq.formats.documents.DOCUMENT_FORMATS`), ``source``, ``target``, ``api_key``, and the decoding
  fields and ``glossary`` of ``/translate``. Answer: ``{"translatedFileUrl": ".../download_file/<name>"}``.
* ``GET /download_file/<name>``: the translated file (`hf_seq2seq.serving.files`), for
  ``--file-expiry-minutes`` after it was made.
* ``GET /languages``: LibreTranslate's list, ``[{"code": "en", "name": "English", "targets": ["fr"]}, ...]``.
* ``GET /frontend/settings``: what LibreTranslate's web page and browser extensions read first.
* ``GET /health``: 200 once the model is loaded, else 503 (loading, or the load failed).
* ``GET /metrics``: Prometheus text format (`prometheus_client`).

Errors are ``{"error": "<message>"}`` with their status: 400 malformed request, unknown language pair, a text
detected in another language, over LibreTranslate's per-text character or per-request text limit, a file of
another format or that cannot be read, markup or a glossary on an engine without word alignments, 403 missing
or wrong API key, 404 unknown or expired download, 413 over-long request or file, 415 unsupported body type,
429 over the client's requests per minute (`hf_seq2seq.serving.limits`), 503 (with ``Retry-After``) model
still loading, queue full or model stalled, 504 a model call past the batch timeout, 500 when the engine fails
on a batch (for that batch's requests only); a client that leaves before its answer is logged as 499.

A plain request's texts are split into sentences (`hf_seq2seq.data.segmentation`, the package's splitter; long
requests off the event loop) before they are queued for the batcher. Markup, glossaries and files are
translated by `hf_seq2seq.formats` in threads of their own, whose sentences go through the same batcher
(`hf_seq2seq.serving.formats`).
"""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager
from dataclasses import dataclass
from functools import partial
from typing import TypeVar

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hf_seq2seq.data.segmentation import Segmented
from hf_seq2seq.engines.base import Translator, UnsupportedFeature
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.scoring import joined
from hf_seq2seq.formats.aligned import translate_aligned
from hf_seq2seq.formats.documents import DOCUMENT_FORMATS, DocumentError, translate_document_bytes
from hf_seq2seq.formats.glossary import Glossary
from hf_seq2seq.formats.markup import translate_html
from hf_seq2seq.serving.api import (
    LANGUAGE_NAMES,
    check_api_key,
    check_languages,
    check_sentence_count,
    check_text_limits,
    check_texts_size,
    error_response,
    frontend_settings,
    language_list,
    parse_alternatives,
    parse_decoding,
    parse_flag,
    parse_format,
    parse_glossary,
    parse_texts,
    read_fields,
    read_upload,
)
from hf_seq2seq.serving.batcher import Batcher
from hf_seq2seq.serving.config import ServeConfig
from hf_seq2seq.serving.detection import LanguageDetector, percent
from hf_seq2seq.serving.errors import BatchFailed, ClientGone, ServeError
from hf_seq2seq.serving.files import MEDIA_TYPES, FileStore, download_name, extension_of
from hf_seq2seq.serving.formats import BatchedTranslator
from hf_seq2seq.serving.limits import ApiKeys, KeyLimits, RateLimiter
from hf_seq2seq.serving.metrics import CountRequests, Metrics
from hf_seq2seq.serving.worker import BatchWorker, Hypotheses, Task, join_alternatives

logger = logging.getLogger(__name__)
T = TypeVar("T")

INLINE_SPLIT_CHARS = 300  # longer requests are split into sentences in a thread, off the event loop
CLIENT_CLOSED = 499  # nginx's status for a request whose client went away before the answer
FORMAT_THREADS = 4
"""Requests with markup, a glossary or a file translated at once, each in a thread that mostly waits for the
batcher; more wait for a thread."""
SWEEP_SECONDS = 60.0
"""How often expired files are deleted (more often when they expire sooner)."""
INDEX = {
    "service": "hf-seq2seq translation API (LibreTranslate-compatible)",
    "endpoints": [
        "POST /translate", "POST /translate_file", "GET /download_file/<name>", "POST /detect", "GET /languages",
        "GET /frontend/settings", "GET /health", "GET /metrics",
    ],
}  # fmt: skip


@dataclass(frozen=True)
class TranslateRequest:
    """A checked ``/translate`` request: its texts, whether ``q`` was one string, its decoding, its format
    ("text" or "html"), its glossary (None: none), how many alternatives it asks for, whether it asks for
    confidence, and whether its source is "auto"."""

    texts: list[str]
    single: bool
    decoding: Decoding
    text_format: str
    glossary: Glossary | None
    alternatives: int = 0
    confidence: bool = False
    auto: bool = False

    @property
    def plain(self) -> bool:
        """Plain text without a glossary: what the batcher translates alone."""
        return self.text_format == "text" and not self.glossary


class _Service:
    """The app's state (the worker once loaded, the batcher, the translated files, the metrics) and its
    endpoints."""

    def __init__(self, load_worker: Callable[[], BatchWorker], config: ServeConfig):
        self.load_worker, self.config = load_worker, config
        self.metrics = Metrics()
        self.worker: BatchWorker | None = None
        self.load_error: str | None = None
        self.batcher: Batcher | None = None
        self.model_thread = ThreadPoolExecutor(1, thread_name_prefix="hf-seq2seq-model")
        self.split_thread = ThreadPoolExecutor(1, thread_name_prefix="hf-seq2seq-split")
        self.formats_threads = ThreadPoolExecutor(FORMAT_THREADS, thread_name_prefix="hf-seq2seq-formats")
        self.files: FileStore | None = None
        self.keys = ApiKeys(config.api_keys, config.api_keys_file)
        self.rates = RateLimiter()
        self.detector = LanguageDetector()
        self._loading: asyncio.Task | None = None
        self._sweeping: asyncio.Task | None = None

    # ------------------------------------------------------------------------------------------ lifespan
    async def start(self, background: bool = True) -> None:
        self.files = FileStore(self.config.file_dir, self.config.file_expiry_minutes * 60)
        self._sweeping = asyncio.get_running_loop().create_task(self._sweep())
        if background:
            self._loading = asyncio.get_running_loop().create_task(self._load())
            return
        await self._load()
        if self.load_error:
            raise RuntimeError(f"the model failed to load: {self.load_error}")

    async def _load(self) -> None:
        started = time.perf_counter()
        try:
            worker = await asyncio.get_running_loop().run_in_executor(self.model_thread, self.load_worker)
        except Exception as error:
            logger.exception("loading the model failed")
            self.load_error = f"{type(error).__name__}: {error}"
            return
        self.batcher = Batcher(worker.run, self.config, self.metrics, self.model_thread)
        self.batcher.start()
        self.worker = worker
        self.metrics.ready.set(1)
        logger.info("model ready in %.1f s: %s", time.perf_counter() - started, worker.describe())

    async def _sweep(self) -> None:
        """Delete expired files, forever."""
        while True:
            await asyncio.sleep(min(SWEEP_SECONDS, self.files.expiry_seconds / 2))
            try:
                await asyncio.to_thread(self.files.sweep)
            except OSError:
                logger.exception("deleting expired files in %s failed", self.files.folder)

    async def stop(self) -> None:
        for task in (self._loading, self._sweeping):
            if task is not None and not task.done():
                task.cancel()
        if self.batcher is not None:
            await self.batcher.close()
        self.model_thread.shutdown(wait=False, cancel_futures=True)
        self.split_thread.shutdown(wait=False, cancel_futures=True)
        self.formats_threads.shutdown(wait=False, cancel_futures=True)
        if self.files is not None:
            self.files.close()

    # ------------------------------------------------------------------------------------- translating
    def ready_worker(self) -> BatchWorker:
        if self.worker is None:
            if self.load_error:
                raise ServeError(503, f"the model failed to load: {self.load_error}")
            raise ServeError(503, "the model is loading; retry shortly", {"Retry-After": "5"})
        return self.worker

    def limit_rate(self, request: Request, key: KeyLimits | None, cost: int) -> None:
        """429 (LibreTranslate's "Slowdown: ...", with Retry-After) when the client is over its requests per
        minute: the key's own limit, else `ServeConfig.req_limit`. The client is its API key when keys are
        configured, else its address; `cost` counts one per text, as LibreTranslate does."""
        limit = key.req_limit if key is not None and key.req_limit is not None else self.config.req_limit
        if limit is None:
            return
        api_key = request.state.api_key if key is not None else None
        client = f"key:{api_key}" if api_key else f"address:{request.client.host if request.client else ''}"
        wait = self.rates.hit(client, limit, cost)
        if wait is not None:
            raise ServeError(
                429, f"Slowdown: {limit} per 1 minute", {"Retry-After": str(max(1, math.ceil(wait)))}
            )

    def admit(self, request: Request, fields: dict) -> KeyLimits | None:
        """403 without a valid API key (when keys are configured); the key's limits. The key is kept on the
        request for `limit_rate`."""
        key = check_api_key(fields, self.keys)
        request.state.api_key = fields.get("api_key") if key is not None else None
        return key

    def split(self, texts: list[str]) -> tuple[list[Segmented], list[str], list[int]]:
        """Each text's sentences, all sentences in order, and their lengths in the model's tokens."""
        worker = self.worker
        segmented = [worker.segment(text) for text in texts]
        sentences = [sentence for parts in segmented for sentence in parts.sentences]
        return segmented, sentences, [worker.length(sentence) for sentence in sentences]

    @staticmethod
    def check_formats(worker: BatchWorker, aligning: str | None) -> None:
        """400 unless `worker` can translate markup, glossaries and files; `aligning` names what in the
        request needs word alignments (None: nothing)."""
        if worker.translator is None:
            raise ServeError(400, f"the {worker.name} engine of this server translates plain text only")
        if aligning and worker.alignment_error:
            raise ServeError(400, f"{aligning} needs word alignments: {worker.alignment_error}")

    async def read_request(self, request: Request) -> TranslateRequest:
        """A checked ``/translate`` request."""
        config = self.config
        fields = await read_fields(request, config.max_body_bytes)
        key = self.admit(request, fields)
        texts, single = parse_texts(fields)
        self.limit_rate(request, key, max(1, len(texts)))
        worker = self.ready_worker()
        auto = check_languages(fields, worker)
        text_format = parse_format(fields)
        decoding = parse_decoding(fields, config, worker.max_positions)
        glossary = parse_glossary(fields, config)
        alternatives = parse_alternatives(fields, config)
        confidence = parse_flag(fields, "confidence")
        check_text_limits(texts, config, key)
        check_texts_size(texts, config)
        job = TranslateRequest(texts, single, decoding, text_format, glossary, alternatives, confidence, auto)
        if not job.plain:
            self.check_formats(worker, "format 'html'" if text_format == "html" else "a glossary")
        if confidence:
            if text_format == "html":
                raise ServeError(400, "confidence is given for format 'text' only")
            if worker.score_error:
                raise ServeError(400, f"confidence needs the model's scores: {worker.score_error}")
        if alternatives and job.plain and worker.hypotheses_error:
            raise ServeError(400, f"alternatives: {worker.hypotheses_error}")
        return job

    async def translate(self, request: Request) -> dict:
        """The answer to a ``/translate`` request: the source checked by language detection when "auto"
        (`detect_source`); plain text through the batcher (`translate_text`, `translate_more` for alternatives
        or confidence); markup or a glossary by `hf_seq2seq.formats` (`translate_formats`), without
        alternatives (an empty list per text, as LibreTranslate answers for HTML)."""
        job = await self.read_request(request)
        detected = await self.detect_source(job.texts) if job.auto else None
        alternatives = confidence = None
        if not job.plain:
            out, confidence = await self.translate_formats(request, job)
            alternatives = [[] for _ in job.texts]
        elif job.alternatives or job.confidence:
            out, alternatives, confidence = await self.translate_more(request, job)
        else:
            out = await self.translate_text(request, job.texts, job.decoding)

        def each(values: list):
            return values[0] if job.single else values

        answer = {"translatedText": each(out)}
        if detected is not None:
            answer["detectedLanguage"] = each(detected)
        if job.alternatives:
            answer["alternatives"] = each(alternatives)
        if job.confidence:
            answer["confidence"] = each(confidence)
        return answer

    async def detect_source(self, texts: list[str]) -> list[dict]:
        """Each text's ``detectedLanguage`` for ``source: "auto"``: the model's source language with the
        detector's confidence in it; 400 naming the language of a text that is reliably in another one
        (`hf_seq2seq.serving.detection`). In a thread when long, or before the detector has loaded (about a
        second, on first use)."""
        source = self.worker.source_lang

        def guess() -> list:
            return [self.detector.guess(text, source) for text in texts]

        if self.detector.loaded and sum(map(len, texts)) <= INLINE_SPLIT_CHARS:
            guesses = guess()
        else:
            guesses = await asyncio.get_running_loop().run_in_executor(self.split_thread, guess)
        for number, found in enumerate(guesses, 1):
            if found.other_language:
                which = "the text" if len(texts) == 1 else f"text {number} of q"
                raise ServeError(
                    400,
                    f"{which} is in {LANGUAGE_NAMES.get(found.language, found.language)} ({found.language}, "
                    f"{percent(found.probability)}% confidence), not {LANGUAGE_NAMES.get(source, source)}: this "
                    f"model translates {source} to {self.worker.target_lang} only",
                )
        return [{"language": source, "confidence": percent(g.expected_probability)} for g in guesses]

    async def through_batcher(
        self, request: Request, texts: list[str], task: Task
    ) -> tuple[list[Segmented], list]:
        """Each text's sentences, and the batcher's results for all of them in order (`Task`)."""
        if sum(map(len, texts)) <= INLINE_SPLIT_CHARS:  # a sentence or two: quicker here than in a thread
            segmented, sentences, lengths = self.split(texts)
        else:
            loop = asyncio.get_running_loop()
            segmented, sentences, lengths = await loop.run_in_executor(self.split_thread, self.split, texts)
        check_sentence_count(sentences, self.config)
        work = self.batcher.translate(sentences, lengths, task)
        if self.config.watch_disconnect:
            work = self._unless_disconnected(request, work)
        return segmented, await work

    async def translate_text(self, request: Request, texts: list[str], decoding: Decoding) -> list[str]:
        """Plain texts: split into sentences, translated by the batcher, joined back."""
        segmented, translations = await self.through_batcher(request, texts, Task(decoding))
        out, position = [], 0
        for parts in segmented:
            out.append(parts.join(translations[position : position + len(parts.sentences)]))
            position += len(parts.sentences)
        return out

    async def translate_more(
        self, request: Request, job: TranslateRequest
    ) -> tuple[list[str], list[list[str]], list[float | None]]:
        """Plain texts with alternatives or confidence: each sentence's hypotheses and score from the batcher
        (a `Task` of its own), joined back into each text's translation, alternatives (`join_alternatives`) and
        confidence (of its sentences together, `hf_seq2seq.engines.scoring.joined`)."""
        task = Task(job.decoding, job.alternatives + 1, job.confidence)
        segmented, results = await self.through_batcher(request, job.texts, task)
        out, alternatives, confidence, position = [], [], [], 0
        for parts in segmented:
            mine: list[Hypotheses] = results[position : position + len(parts.sentences)]
            position += len(parts.sentences)
            out.append(parts.join([h.translations[0] for h in mine]))
            alternatives.append(join_alternatives(parts, mine, job.alternatives))
            confidence.append(rounded(joined(h.score for h in mine).confidence) if job.confidence else None)
        return out, alternatives, confidence

    async def translate_formats(
        self, request: Request, job: TranslateRequest
    ) -> tuple[list[str], list[float | None] | None]:
        """HTML texts (`translate_html`), or plain texts with a glossary (`translate_aligned`, with their
        confidence when asked for)."""
        options = dict(
            batch_size=self.config.max_batch_sentences,
            decoding=job.decoding,
            source_lang=self.worker.splitter_language,
            glossary=job.glossary,
        )
        if job.text_format == "html":
            work = partial(translate_html, documents=job.texts, **options)
            return await self.run_formats(request, job.decoding, work), None
        work = partial(translate_aligned, texts=job.texts, alignments=False, scores=job.confidence, **options)
        results = await self.run_formats(request, job.decoding, work)
        confidence = [rounded(r.score.confidence) for r in results] if job.confidence else None
        return [result.target for result in results], confidence

    async def run_formats(self, request: Request, decoding: Decoding, work: Callable[[Translator], T]) -> T:
        """`work(translator)` in a formats thread, with a `BatchedTranslator` of this request and `decoding`
        (`hf_seq2seq.serving.formats`): cancelled when the client disconnects (with `watch_disconnect`). An
        engine that cannot do what `work` needs answers 400."""
        loop = asyncio.get_running_loop()
        config = self.config
        translator = BatchedTranslator(
            self.worker, self.batcher, self.model_thread, loop, decoding,
            min(config.max_batch_sentences, config.max_queue_sentences),
        )  # fmt: skip
        future = loop.run_in_executor(self.formats_threads, work, translator)
        work = self._unless_disconnected(request, future) if config.watch_disconnect else future
        try:
            return await work
        except UnsupportedFeature as error:
            raise ServeError(400, str(error)) from None
        finally:  # a thread that has not finished (its wait cancelled) stops at its next step
            translator.cancel()

    async def translate_file(self, request: Request) -> dict:
        """The answer to a ``/translate_file`` request: the file translated by
        `hf_seq2seq.formats.documents` and stored for its download."""
        config = self.config
        fields, filename, data = await read_upload(request, config)
        self.limit_rate(request, self.admit(request, fields), 1)
        worker = self.ready_worker()
        check_languages(fields, worker)
        extension = extension_of(filename)
        if extension not in DOCUMENT_FORMATS:
            raise ServeError(
                400,
                f"file format {extension or '(no extension)'} of {filename!r} is not supported; this server "
                f"translates {', '.join(sorted(DOCUMENT_FORMATS))}",
            )
        decoding = parse_decoding(fields, config, worker.max_positions)
        glossary = parse_glossary(fields, config)
        self.check_formats(worker, "a glossary" if glossary else None)
        name = self.files.new_name(filename, worker.target_lang)

        def translate_and_save(translator: BatchedTranslator) -> None:
            translated = translate_document_bytes(
                translator, data, extension, batch_size=config.max_batch_sentences, decoding=decoding,
                source_lang=worker.splitter_language, glossary=glossary,
            )  # fmt: skip
            self.files.save(name, translated)

        try:
            await self.run_formats(request, decoding, translate_and_save)
        except DocumentError as error:
            raise ServeError(400, f"cannot translate {filename!r}: {error}") from None
        return {"translatedFileUrl": str(request.url_for("download_file", name=name))}

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

    # ---------------------------------------------------------------------------------------- endpoints
    @staticmethod
    async def answer(work: Awaitable[dict]) -> Response:
        """`work`'s result as JSON, or the answer to the error it raised."""
        try:
            return JSONResponse(await work)
        except ServeError as error:
            return error_response(error.status, error.message, error.headers)
        except BatchFailed as error:
            return error_response(500, f"translation failed: {error}")
        except (ClientGone, ClientDisconnect):
            logger.info("a client disconnected before its answer was ready")
            return Response(status_code=CLIENT_CLOSED)

    async def translate_endpoint(self, request: Request) -> Response:
        metrics = self.metrics
        started = time.perf_counter()
        metrics.in_progress.inc()
        try:
            response = await self.answer(self.translate(request))
        finally:
            metrics.in_progress.dec()
        if response.status_code == 200:
            metrics.latency.observe(time.perf_counter() - started)
        return response

    async def translate_file_endpoint(self, request: Request) -> Response:
        return await self.answer(self.translate_file(request))

    async def download_file_endpoint(self, request: Request) -> Response:
        name = request.path_params["name"]
        data = await asyncio.to_thread(self.files.read, name)
        if data is None:
            raise ServeError(
                404,
                f"no file {name!r}: not made here, or expired (files are kept "
                f"{self.config.file_expiry_minutes:g} minutes)",
            )
        return Response(
            data,
            media_type=MEDIA_TYPES.get(extension_of(name), "application/octet-stream"),
            headers={"Content-Disposition": f'attachment; filename="{download_name(name)}"'},
        )

    async def detect(self, request: Request) -> list[dict]:
        """The answer to a ``/detect`` request: the likeliest languages of ``q`` (a list of texts: of all of
        them together), LibreTranslate's way (`hf_seq2seq.serving.detection`)."""
        config = self.config
        fields = await read_fields(request, config.max_body_bytes)
        key = self.admit(request, fields)
        if not fields.get("q"):
            raise ServeError(400, "Invalid request: missing q parameter")
        texts, _ = parse_texts(fields)
        self.limit_rate(request, key, 1)
        check_texts_size(texts, config)
        loop = asyncio.get_running_loop()
        return await loop.run_in_executor(self.split_thread, self.detector.top, "\n".join(texts))

    async def detect_endpoint(self, request: Request) -> Response:
        return await self.answer(self.detect(request))

    async def languages_endpoint(self, request: Request) -> Response:
        return JSONResponse(language_list(self.ready_worker()))

    async def frontend_settings_endpoint(self, request: Request) -> Response:
        worker = self.ready_worker()
        formats = sorted(DOCUMENT_FORMATS)
        if worker.translator is None or worker.alignment_error:
            formats = [".txt"] if worker.translator is not None else []  # the formats that need no alignment
        return JSONResponse(frontend_settings(worker, self.config, self.keys, formats))

    async def health_endpoint(self, request: Request) -> Response:
        batcher = self.batcher
        if batcher is not None and (batcher.failed or batcher.stalled):
            status = "failed" if batcher.failed else "stalled"
            return JSONResponse(
                {"status": status, "error": batcher.failed or batcher.stalled}, status_code=503,
                headers={"Retry-After": "5"},
            )  # fmt: skip
        if self.worker is not None:
            return JSONResponse({"status": "ready", **self.worker.describe()})
        if self.load_error:
            return JSONResponse({"status": "failed", "error": self.load_error}, status_code=503)
        return JSONResponse({"status": "loading"}, status_code=503, headers={"Retry-After": "5"})

    async def metrics_endpoint(self, request: Request) -> Response:
        return Response(generate_latest(self.metrics.registry), media_type=CONTENT_TYPE_LATEST)


def rounded(confidence: float | None) -> float | None:
    """A confidence as answered: 4 decimals (None for a text with nothing to translate)."""
    return None if confidence is None else round(confidence, 4)


async def index_endpoint(request: Request) -> Response:
    return JSONResponse(INDEX)


async def on_serve_error(request: Request, error: ServeError) -> Response:
    return error_response(error.status, error.message, error.headers)


async def on_http_error(request: Request, error: HTTPException) -> Response:
    return error_response(
        error.status_code, f"{request.method} {request.url.path}: {error.detail}", error.headers
    )


async def on_error(request: Request, error: Exception) -> Response:
    return error_response(500, f"internal error: {type(error).__name__}: {error}")


def create_app(
    load_worker: Callable[[], BatchWorker], config: ServeConfig | None = None, load_in_background: bool = True
) -> Starlette:
    """The service as an ASGI app. `load_worker` returns the `BatchWorker` (e.g. `worker_loader(folder)`); it
    runs in a thread when the app starts, and `/health` and `/translate` answer 503 until it has returned.
    Without `load_in_background` the app's startup waits for it (and fails if it fails): for a host such as
    Ray Serve that routes requests to a replica once it has started."""
    service = _Service(load_worker, config or ServeConfig())

    @asynccontextmanager
    async def lifespan(app: Starlette):
        await service.start(load_in_background)
        try:
            yield
        finally:
            await service.stop()

    routes = [
        Route("/", index_endpoint, methods=["GET"]),
        Route("/translate", service.translate_endpoint, methods=["POST"]),
        Route("/translate_file", service.translate_file_endpoint, methods=["POST"]),
        Route("/download_file/{name}", service.download_file_endpoint, methods=["GET"], name="download_file"),
        Route("/detect", service.detect_endpoint, methods=["POST"]),
        Route("/languages", service.languages_endpoint, methods=["GET", "POST"]),
        Route("/frontend/settings", service.frontend_settings_endpoint, methods=["GET"]),
        Route("/health", service.health_endpoint, methods=["GET"]),
        Route("/metrics", service.metrics_endpoint, methods=["GET"]),
    ]
    middleware = [Middleware(CountRequests, metrics=service.metrics, routes=routes)]
    if service.config.cors_origins:  # browser pages of other origins (LibreTranslate answers "*")
        middleware.append(
            Middleware(
                CORSMiddleware, allow_origins=list(service.config.cors_origins), allow_methods=["GET", "POST"],
                allow_headers=["Authorization", "Content-Type"], max_age=86400,
            )
        )  # fmt: skip
    app = Starlette(
        routes=routes,
        middleware=middleware,
        exception_handlers={ServeError: on_serve_error, HTTPException: on_http_error, Exception: on_error},
        lifespan=lifespan,
    )
    app.state.service = service
    return app

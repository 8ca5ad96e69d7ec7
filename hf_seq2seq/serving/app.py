"""The translation service as an ASGI app: a LibreTranslate-compatible HTTP API whose dynamic batcher
(`hf_seq2seq.serving.batcher`) merges the sentences of concurrent requests into model batches.

`create_app(load_worker, config)` builds a Starlette app; `hf-seq2seq serve` runs it on uvicorn, and
`hf_seq2seq.serving.ray_serve` runs the same app as a Ray Serve deployment. Endpoints:

* ``POST /translate``: LibreTranslate's request (JSON, url-encoded or multipart form): ``q`` a string or a
  list of strings, ``source`` (or ``"auto"``) and ``target`` language codes, ``format`` ``"text"`` or
  ``"html"`` (`hf_seq2seq.formats.markup`), ``api_key``; optional decoding fields ``num_beams``,
  ``length_penalty``, ``max_new_tokens``, ``no_repeat_ngram_size``, and ``glossary``, an object of source
  term -> target term (`hf_seq2seq.formats.glossary`; in a form, as JSON text). Answer:
  ``{"translatedText": "..."}`` (a list for a list).
* ``POST /translate_file``: LibreTranslate's document request (multipart form): ``file`` (one of
  `hf_seq2seq.formats.documents.DOCUMENT_FORMATS`), ``source``, ``target``, ``api_key``, and the decoding
  fields and ``glossary`` of ``/translate``. Answer: ``{"translatedFileUrl": ".../download_file/<name>"}``.
* ``GET /download_file/<name>``: the translated file (`hf_seq2seq.serving.files`), for
  ``--file-expiry-minutes`` after it was made.
* ``GET /languages``: LibreTranslate's list, ``[{"code": "en", "name": "English", "targets": ["fr"]}, ...]``.
* ``GET /health``: 200 once the model is loaded, else 503 (loading, or the load failed).
* ``GET /metrics``: Prometheus text format (`prometheus_client`).

Errors are ``{"error": "<message>"}`` with their status: 400 malformed request, unknown language pair, a
file of another format or that cannot be read, markup or a glossary on an engine without word alignments, 403
missing or wrong API key, 404 unknown or expired download, 413 over-long request or file, 415 unsupported body
type, 503 (with ``Retry-After``) model still loading or queue full, 500 when the engine fails on a batch (for
that batch's requests only).

A plain request's texts are split into sentences (`hf_seq2seq.data.segmentation`, the package's splitter; long
requests off the event loop) before they are queued for the batcher. Markup, glossaries and files are
translated by `hf_seq2seq.formats` in threads of their own, whose sentences go through the same batcher
(`hf_seq2seq.serving.formats`).
"""

from __future__ import annotations

import asyncio
import logging
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
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hf_seq2seq.data.segmentation import Segmented
from hf_seq2seq.engines.base import Translator, UnsupportedFeature
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.formats.aligned import translate_aligned
from hf_seq2seq.formats.documents import DOCUMENT_FORMATS, DocumentError, translate_document_bytes
from hf_seq2seq.formats.glossary import Glossary
from hf_seq2seq.formats.markup import translate_html
from hf_seq2seq.serving.api import (
    check_api_key,
    check_languages,
    check_sentence_count,
    check_texts_size,
    error_response,
    language_list,
    parse_decoding,
    parse_format,
    parse_glossary,
    parse_texts,
    read_fields,
    read_upload,
)
from hf_seq2seq.serving.batcher import Batcher
from hf_seq2seq.serving.config import ServeConfig
from hf_seq2seq.serving.errors import BatchFailed, ClientGone, ServeError
from hf_seq2seq.serving.files import MEDIA_TYPES, FileStore, download_name, extension_of
from hf_seq2seq.serving.formats import BatchedTranslator
from hf_seq2seq.serving.metrics import CountRequests, Metrics
from hf_seq2seq.serving.worker import BatchWorker

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
        "POST /translate", "POST /translate_file", "GET /download_file/<name>", "GET /languages", "GET /health",
        "GET /metrics",
    ],
}  # fmt: skip


@dataclass(frozen=True)
class TranslateRequest:
    """A checked ``/translate`` request: its texts, whether ``q`` was one string, its decoding, its format
    ("text" or "html") and its glossary (None: none)."""

    texts: list[str]
    single: bool
    decoding: Decoding
    text_format: str
    glossary: Glossary | None


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
        self.batcher = Batcher(worker.translate, self.config, self.metrics, self.model_thread)
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
        check_api_key(fields, config.api_keys)
        worker = self.ready_worker()
        texts, single = parse_texts(fields)
        check_languages(fields, worker)
        text_format = parse_format(fields)
        decoding = parse_decoding(fields, config)
        glossary = parse_glossary(fields, config)
        check_texts_size(texts, config)
        if text_format == "html" or glossary:
            self.check_formats(worker, "format 'html'" if text_format == "html" else "a glossary")
        return TranslateRequest(texts, single, decoding, text_format, glossary)

    async def translate(self, request: Request) -> dict:
        """The answer to a ``/translate`` request: plain text through the batcher (`translate_text`); markup or
        a glossary by `hf_seq2seq.formats` (`translate_formats`)."""
        job = await self.read_request(request)
        if job.text_format == "html" or job.glossary:
            out = await self.translate_formats(request, job)
        else:
            out = await self.translate_text(request, job.texts, job.decoding)
        return {"translatedText": out[0] if job.single else out}

    async def translate_text(self, request: Request, texts: list[str], decoding: Decoding) -> list[str]:
        """Plain texts: split into sentences, translated by the batcher, joined back."""
        if sum(map(len, texts)) <= INLINE_SPLIT_CHARS:  # a sentence or two: quicker here than in a thread
            segmented, sentences, lengths = self.split(texts)
        else:
            loop = asyncio.get_running_loop()
            segmented, sentences, lengths = await loop.run_in_executor(self.split_thread, self.split, texts)
        check_sentence_count(sentences, self.config)
        work = self.batcher.translate(sentences, lengths, decoding)
        if self.config.watch_disconnect:
            work = self._unless_disconnected(request, work)
        translations = await work
        out, position = [], 0
        for parts in segmented:
            out.append(parts.join(translations[position : position + len(parts.sentences)]))
            position += len(parts.sentences)
        return out

    async def translate_formats(self, request: Request, job: TranslateRequest) -> list[str]:
        """HTML texts (`translate_html`), or plain texts with a glossary (`translate_aligned`)."""
        options = dict(
            batch_size=self.config.max_batch_sentences,
            decoding=job.decoding,
            source_lang=self.worker.splitter_language,
            glossary=job.glossary,
        )
        if job.text_format == "html":
            return await self.run_formats(
                request, job.decoding, partial(translate_html, documents=job.texts, **options)
            )
        work = partial(translate_aligned, texts=job.texts, alignments=False, **options)
        return [result.target for result in await self.run_formats(request, job.decoding, work)]

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
        check_api_key(fields, config.api_keys)
        worker = self.ready_worker()
        check_languages(fields, worker)
        extension = extension_of(filename)
        if extension not in DOCUMENT_FORMATS:
            raise ServeError(
                400,
                f"file format {extension or '(no extension)'} of {filename!r} is not supported; this server "
                f"translates {', '.join(sorted(DOCUMENT_FORMATS))}",
            )
        decoding = parse_decoding(fields, config)
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
        except ClientGone:
            logger.info("a client disconnected before its translation was ready")
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

    async def languages_endpoint(self, request: Request) -> Response:
        return JSONResponse(language_list(self.ready_worker()))

    async def health_endpoint(self, request: Request) -> Response:
        if self.worker is not None:
            return JSONResponse({"status": "ready", **self.worker.describe()})
        if self.load_error:
            return JSONResponse({"status": "failed", "error": self.load_error}, status_code=503)
        return JSONResponse({"status": "loading"}, status_code=503, headers={"Retry-After": "5"})

    async def metrics_endpoint(self, request: Request) -> Response:
        return Response(generate_latest(self.metrics.registry), media_type=CONTENT_TYPE_LATEST)


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
        Route("/languages", service.languages_endpoint, methods=["GET", "POST"]),
        Route("/health", service.health_endpoint, methods=["GET"]),
        Route("/metrics", service.metrics_endpoint, methods=["GET"]),
    ]
    app = Starlette(
        routes=routes,
        middleware=[Middleware(CountRequests, metrics=service.metrics, routes=routes)],
        exception_handlers={ServeError: on_serve_error, HTTPException: on_http_error, Exception: on_error},
        lifespan=lifespan,
    )
    app.state.service = service
    return app

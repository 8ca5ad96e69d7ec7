"""The translation service as an ASGI app: a LibreTranslate-compatible HTTP API whose dynamic batcher
(`hf_seq2seq.serving.batcher`) merges the sentences of concurrent requests into model batches.

`create_app(load_worker, config)` builds a Starlette app; `hf-seq2seq serve` runs it on uvicorn, and
`hf_seq2seq.serving.ray_serve` runs the same app as a Ray Serve deployment. Endpoints:

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

Each request's texts are split into sentences (`hf_seq2seq.data.segmentation`, the package's splitter; long
requests off the event loop) before they are queued for the batcher.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from contextlib import asynccontextmanager

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hf_seq2seq.data.segmentation import Segmented
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.serving.api import (
    check_api_key,
    check_format,
    check_languages,
    check_sentence_count,
    check_texts_size,
    error_response,
    language_list,
    parse_decoding,
    parse_texts,
    read_fields,
)
from hf_seq2seq.serving.batcher import Batcher
from hf_seq2seq.serving.config import ServeConfig
from hf_seq2seq.serving.errors import BatchFailed, ClientGone, ServeError
from hf_seq2seq.serving.metrics import CountRequests, Metrics
from hf_seq2seq.serving.worker import BatchWorker

logger = logging.getLogger(__name__)

INLINE_SPLIT_CHARS = 300  # longer requests are split into sentences in a thread, off the event loop
CLIENT_CLOSED = 499  # nginx's status for a request whose client went away before the answer
INDEX = {
    "service": "hf-seq2seq translation API (LibreTranslate-compatible)",
    "endpoints": ["POST /translate", "GET /languages", "GET /health", "GET /metrics"],
}


class _Service:
    """The app's state (the worker once loaded, the batcher, the metrics) and its endpoints."""

    def __init__(self, load_worker: Callable[[], BatchWorker], config: ServeConfig):
        self.load_worker, self.config = load_worker, config
        self.metrics = Metrics()
        self.worker: BatchWorker | None = None
        self.load_error: str | None = None
        self.batcher: Batcher | None = None
        self.model_thread = ThreadPoolExecutor(1, thread_name_prefix="hf-seq2seq-model")
        self.split_thread = ThreadPoolExecutor(1, thread_name_prefix="hf-seq2seq-split")
        self._loading: asyncio.Task | None = None

    # ------------------------------------------------------------------------------------------ lifespan
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

    async def stop(self) -> None:
        if self._loading is not None and not self._loading.done():
            self._loading.cancel()
        if self.batcher is not None:
            await self.batcher.close()
        self.model_thread.shutdown(wait=False, cancel_futures=True)
        self.split_thread.shutdown(wait=False, cancel_futures=True)

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

    async def read_request(self, request: Request) -> tuple[list[str], bool, Decoding]:
        """A checked ``/translate`` request: its texts, whether ``q`` was one string, and its decoding."""
        config = self.config
        fields = await read_fields(request, config.max_body_bytes)
        check_api_key(fields, config.api_keys)
        worker = self.ready_worker()
        texts, single = parse_texts(fields)
        check_languages(fields, worker)
        check_format(fields)
        decoding = parse_decoding(fields, config)
        check_texts_size(texts, config)
        return texts, single, decoding

    async def translate(self, request: Request) -> dict:
        """The answer to a ``/translate`` request: its texts split, translated by the batcher, joined back."""
        texts, single, decoding = await self.read_request(request)
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

    # ---------------------------------------------------------------------------------------- endpoints
    async def translate_endpoint(self, request: Request) -> Response:
        metrics = self.metrics
        started = time.perf_counter()
        metrics.in_progress.inc()
        try:
            result = await self.translate(request)
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
        Route("/languages", service.languages_endpoint, methods=["GET", "POST"]),
        Route("/health", service.health_endpoint, methods=["GET"]),
        Route("/metrics", service.metrics_endpoint, methods=["GET"]),
    ]
    app = Starlette(
        routes=routes,
        middleware=[
            Middleware(CountRequests, metrics=service.metrics, paths={route.path for route in routes})
        ],
        exception_handlers={ServeError: on_serve_error, HTTPException: on_http_error, Exception: on_error},
        lifespan=lifespan,
    )
    app.state.service = service
    return app

"""The service behind the app: `Service`, its state (the models once loaded, each with its batcher and thread,
and their routes; the translation cache; the threads, the translated files, the keys and request limits, the
metrics), its start and stop, who it admits, and its endpoints, each answering JSON or ``{"error": message}``
with its status. What the translating endpoints do with a request is `hf_seq2seq.serving.translation`'s."""

from __future__ import annotations

import asyncio
import logging
import math
import time
from collections.abc import Awaitable, Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from prometheus_client import CONTENT_TYPE_LATEST, generate_latest
from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse, Response

from hf_seq2seq import __version__
from hf_seq2seq.formats.documents import DOCUMENT_FORMATS
from hf_seq2seq.serving import documents, sources, translation
from hf_seq2seq.serving.answers import error_response, frontend_settings, language_list
from hf_seq2seq.serving.cache import TranslationCache
from hf_seq2seq.serving.config import ServeConfig
from hf_seq2seq.serving.detection import LanguageDetector
from hf_seq2seq.serving.errors import BatchFailed, ClientGone, ServeError
from hf_seq2seq.serving.fields import check_api_key
from hf_seq2seq.serving.files import MAX_NAME, MEDIA_TYPES, FileStore, download_name, extension_of
from hf_seq2seq.serving.limits import ApiKeys, KeyLimits, RateLimiter
from hf_seq2seq.serving.metrics import Metrics
from hf_seq2seq.serving.routing import Routes
from hf_seq2seq.serving.served import ServedModel, load_models
from hf_seq2seq.serving.worker import BatchWorker

logger = logging.getLogger(__name__)

CLIENT_CLOSED = 499  # nginx's status for a request whose client went away before the answer
FORMAT_THREADS = 4
"""Requests with markup, a glossary or a file translated at once, each in a thread that mostly waits for the
batcher; more wait for a thread."""
SWEEP_SECONDS = 60.0
"""How often expired files are deleted (more often when they expire sooner)."""


class Service:
    """The app's state and its endpoints (see the module docstring)."""

    def __init__(self, loaders: Sequence[Callable[[], BatchWorker]], config: ServeConfig):
        self.loaders, self.config = list(loaders), config
        self.metrics = Metrics()
        self.metrics.ready.set_function(lambda: 1 if self.routes is not None and not self.trouble() else 0)
        self.cache = None
        if config.cache_entries:
            self.cache = TranslationCache(config.cache_entries, config.cache_bytes)
            self.metrics.cache_entries.set_function(lambda: len(self.cache))
            self.metrics.cache_bytes.set_function(lambda: self.cache.bytes)
        self.models: list[ServedModel] = []
        self.routes: Routes | None = None
        """The pairs the models translate, once every model is loaded; None before."""
        self.load_error: str | None = None
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
        config = self.config
        self.files = FileStore(config.file_dir, config.file_expiry_minutes * 60, config.max_stored_bytes)
        self._sweeping = asyncio.get_running_loop().create_task(self._sweep())
        if background:
            self._loading = asyncio.get_running_loop().create_task(self._load())
            return
        await self._load()
        if self.load_error:
            raise RuntimeError(f"the model failed to load: {self.load_error}")

    async def _load(self) -> None:
        """Load every model, then route their pairs and start their batchers; a model that fails to load, or
        two of one pair, leave the service failed (503 with the reason)."""
        started = time.perf_counter()
        try:
            self.models = await load_models(self.loaders, self.config, self.metrics, self.cache)
            routes = Routes(self.models, self.config.pivot)
        except Exception as error:
            logger.exception("loading the models failed")
            self.load_error = f"{type(error).__name__}: {error}"
            return
        for model in self.models:
            model.batcher.start()
        self.routes = routes
        logger.info(
            "%d model(s) ready in %.1f s: %s", len(self.models), time.perf_counter() - started,
            ", ".join(model.name for model in self.models),
        )  # fmt: skip

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
        for model in self.models:
            await model.close()
        self.split_thread.shutdown(wait=False, cancel_futures=True)
        self.formats_threads.shutdown(wait=False, cancel_futures=True)
        if self.files is not None:
            self.files.close()

    # ----------------------------------------------------------------------------------------- admission
    def ready_routes(self) -> Routes:
        """The routes once every model is loaded; 503 before, or when one failed to load."""
        if self.routes is None:
            if self.load_error:
                raise ServeError(503, f"the model failed to load: {self.load_error}")
            raise ServeError(503, "the model is loading; retry shortly", {"Retry-After": "5"})
        return self.routes

    def trouble(self) -> tuple[str, str] | None:
        """("failed" or "stalled", why) for the first model whose batcher failed or stalled; None if none."""
        for model in self.models:
            if model.trouble:
                kind = "failed" if model.batcher.failed else "stalled"
                return kind, model.trouble if len(self.models) == 1 else f"{model.name}: {model.trouble}"
        return None

    def admit(self, request: Request, fields: dict) -> KeyLimits | None:
        """When keys are configured: 429 to an address past `ServeConfig.max_key_failures` requests with a
        missing or wrong key in the last minute (whatever key it sends now), else LibreTranslate's 400 or 403
        for a missing or wrong key, counted against its address. The key's limits; the key is kept on the
        request for `limit_rate`."""
        request.state.api_key = None
        if not self.keys.required:
            return None
        failures, limit = f"failed-key:{address(request)}", self.config.max_key_failures
        wait = self.rates.over(failures, limit)
        if wait is not None:
            raise slow_down(f"{limit} requests with a missing or wrong API key per 1 minute", wait)
        try:
            key = check_api_key(fields, self.keys)
        except ServeError:
            self.rates.hit(failures, limit)
            raise
        request.state.api_key = fields.get("api_key")
        return key

    def limit_rate(self, request: Request, key: KeyLimits | None, cost: int) -> None:
        """429 (LibreTranslate's "Slowdown: ...", with Retry-After) when the client is over its requests per
        minute: the key's own limit, else `ServeConfig.req_limit`. The client is its API key when keys are
        configured, else its address; `cost` counts one per text, as LibreTranslate does."""
        limit = key.req_limit if key is not None and key.req_limit is not None else self.config.req_limit
        if limit is None:
            return
        api_key = request.state.api_key if key is not None else None
        client = f"key:{api_key}" if api_key else f"address:{address(request)}"
        wait = self.rates.hit(client, limit, cost)
        if wait is not None:
            raise slow_down(f"{limit} per 1 minute", wait)

    # ---------------------------------------------------------------------------------------- endpoints
    async def answer(self, work: Awaitable) -> Response:
        """`work`'s result as JSON (413 past `ServeConfig.max_answer_bytes`), or the answer to the error it
        raised."""
        try:
            response = JSONResponse(await work)
        except ServeError as error:
            return error_response(error.status, error.message, error.headers)
        except BatchFailed as error:
            return error_response(500, f"translation failed: {error}")
        except (ClientGone, ClientDisconnect):
            logger.info("a client disconnected before its answer was ready")
            return Response(status_code=CLIENT_CLOSED)
        if len(response.body) > self.config.max_answer_bytes:
            return error_response(
                413, f"the answer has {len(response.body)} bytes; the limit is {self.config.max_answer_bytes}"
            )
        return response

    async def translate_endpoint(self, request: Request) -> Response:
        metrics = self.metrics
        started = time.perf_counter()
        metrics.in_progress.inc()
        try:
            response = await self.answer(translation.translate(self, request))
        finally:
            metrics.in_progress.dec()
        if response.status_code == 200:
            metrics.latency.observe(time.perf_counter() - started)
        return response

    async def translate_file_endpoint(self, request: Request) -> Response:
        return await self.answer(documents.translate_file(self, request))

    async def detect_endpoint(self, request: Request) -> Response:
        return await self.answer(sources.detect(self, request))

    async def download_file_endpoint(self, request: Request) -> Response:
        name = request.path_params["name"]
        if len(name) > MAX_NAME:
            raise ServeError(
                400, f"the file name has {len(name)} characters: the files made here have at most {MAX_NAME}"
            )
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
        return JSONResponse(language_list(self.ready_routes()))

    async def frontend_settings_endpoint(self, request: Request) -> Response:
        routes = self.ready_routes()
        formats = sorted(DOCUMENT_FORMATS)
        for model in routes.models:
            worker = model.worker
            if worker.translator is None or worker.alignment_error:  # the formats that need no alignment
                formats = [f for f in formats if f == ".txt"] if worker.translator is not None else []
        return JSONResponse(frontend_settings(routes, self.config, self.keys, formats))

    async def health_endpoint(self, request: Request) -> Response:
        """LibreTranslate's ``{"status": "ok"}`` once every model is loaded, with each model's facts (engine,
        pair, bytes of its weights), whether pairs pivot through English and the package's version; 503 with another status before,
        or while a model's batcher is stalled or has failed."""
        trouble = self.trouble()
        if trouble is not None:
            return JSONResponse(
                {"status": trouble[0], "error": trouble[1]}, status_code=503, headers={"Retry-After": "5"}
            )
        if self.routes is not None:
            models = [model.describe() for model in self.models]
            return JSONResponse(
                {"status": "ok", "models": models, "pivot": self.routes.pivot, "version": __version__}
            )
        if self.load_error:
            return JSONResponse({"status": "failed", "error": self.load_error}, status_code=503)
        return JSONResponse({"status": "loading"}, status_code=503, headers={"Retry-After": "5"})

    async def metrics_endpoint(self, request: Request) -> Response:
        return Response(generate_latest(self.metrics.registry), media_type=CONTENT_TYPE_LATEST)


def address(request: Request) -> str:
    """The client's address: the connection's peer (a proxy's forwarded address only where the server was
    told to trust it: `hf-seq2seq serve --trust-forwarded-for`)."""
    return request.client.host if request.client else ""


def slow_down(limit: str, wait: float) -> ServeError:
    """LibreTranslate's 429 ``Slowdown: <limit>``, with the seconds to wait."""
    return ServeError(429, f"Slowdown: {limit}", {"Retry-After": str(max(1, math.ceil(wait)))})

"""The translation service as an ASGI app: a LibreTranslate-compatible HTTP API whose dynamic batcher
(`hf_seq2seq.serving.batcher`) merges the sentences of concurrent requests into model batches.

`create_app(load_workers, config)` builds a Starlette app over one model or several, each with its own batcher
and pair (`hf_seq2seq.serving.served`): a pair without a model of its own goes through English where both halves
are served (`hf_seq2seq.serving.routing`). `hf-seq2seq serve` runs it on uvicorn, and
`hf_seq2seq.serving.ray_serve` runs the same app as a Ray Serve deployment. Endpoints:

* ``POST /translate``: LibreTranslate's request (JSON, url-encoded or multipart form): ``q`` a string or a
  list of strings, ``source`` (or ``"auto"``: each text's language is detected, `hf_seq2seq.serving.detection`)
  and ``target`` language codes, ``format`` ``"text"`` or ``"html"`` (`hf_seq2seq.formats.markup`),
  ``alternatives`` (a count), ``api_key``; this server's own ``confidence`` (true: each translation's score,
  `hf_seq2seq.engines.scoring`), decoding fields ``num_beams``, ``length_penalty``, ``max_new_tokens``,
  ``no_repeat_ngram_size``, and ``glossary``, an object of source term -> target term
  (`hf_seq2seq.formats.glossary`; in a form, as JSON text). Answer: ``{"translatedText": "..."}`` (a list
  for a list), with ``detectedLanguage``, ``alternatives`` and ``confidence`` when asked for, and
  ``pivotLanguage`` (``"en"``) where a text went through English.
* ``POST /detect``: LibreTranslate's ``[{"language": "en", "confidence": 97.2}, ...]`` for ``q``.
* ``POST /translate_file``: LibreTranslate's document request (multipart form): ``file`` (one of
  `hf_seq2seq.formats.documents.DOCUMENT_FORMATS`), ``source``, ``target``, ``api_key``, and the decoding
  fields and ``glossary`` of ``/translate``. Answer: ``{"translatedFileUrl": ".../download_file/<name>"}``.
* ``GET /download_file/<name>``: the translated file (`hf_seq2seq.serving.files`), for
  ``--file-expiry-minutes`` after it was made.
* ``GET /languages``: LibreTranslate's list, ``[{"code": "en", "name": "English", "targets": ["fr"]}, ...]``.
* ``GET /frontend/settings``: what LibreTranslate's web page and browser extensions read first.
* ``GET /health``: LibreTranslate's 200 ``{"status": "ok", "models": [...], "pivot": ..., "version": ...}`` once
  every model is loaded (each with its engine, pair and the bytes of its weights; the package's version), else 503 (loading, or a load failed).
* ``GET /metrics``: Prometheus text format (`prometheus_client`); the models' work labelled by pair, the
  translation cache's hits and misses (`hf_seq2seq.serving.cache`).
* ``GET /spec``: this API as an OpenAPI document (`hf_seq2seq.serving.spec`).
* ``POST /suggest``: LibreTranslate's 403 ``Suggestions are disabled on this server.``.

Errors are ``{"error": "<message>"}`` with their status: 400 malformed request (text that is not valid
Unicode, markup nested too deeply, a missing field), unknown language or pair, a text detected in another
language, over LibreTranslate's per-text character or per-request text limit, a file of another format or that
cannot be read, markup or a glossary on an engine without word alignments, a missing API key, 403 a wrong API
key, 404 unknown or expired download, 408 a body that does not arrive in time, 413 over-long request, file,
document or answer, 415 unsupported body type, 429 over the client's requests per minute, or its address over
its missing or wrong keys per minute (`hf_seq2seq.serving.limits`), 503 (with ``Retry-After``) model
still loading, queue full or model stalled, 504 a model call past the batch timeout, 500 when the engine fails
on a batch (for that batch's requests only); a client that leaves before its answer is logged as 499.

The endpoints are `hf_seq2seq.serving.service.Service`'s; what a translation request goes through,
`hf_seq2seq.serving.translation`'s (a file's, `hf_seq2seq.serving.documents`'); its fields, how they are read
and checked, `hf_seq2seq.serving.bodies`' and `hf_seq2seq.serving.fields`'. This module puts them together: the
routes, CORS (any origin by default, as LibreTranslate), the error handlers.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from contextlib import asynccontextmanager

from starlette.applications import Starlette
from starlette.exceptions import HTTPException
from starlette.middleware import Middleware
from starlette.middleware.cors import CORSMiddleware
from starlette.requests import Request
from starlette.responses import JSONResponse, Response
from starlette.routing import Route

from hf_seq2seq.serving.answers import error_response
from hf_seq2seq.serving.config import ServeConfig
from hf_seq2seq.serving.errors import ServeError
from hf_seq2seq.serving.metrics import CountRequests
from hf_seq2seq.serving.service import Service
from hf_seq2seq.serving.spec import openapi_document
from hf_seq2seq.serving.worker import BatchWorker

logger = logging.getLogger(__name__)

SUGGESTIONS_DISABLED = "Suggestions are disabled on this server."
"""LibreTranslate's answer to ``/suggest`` on a server without suggestions (403)."""
CORS_MAX_AGE = 20 * 24 * 3600
"""How long a browser may keep a CORS preflight's answer: LibreTranslate's 20 days."""


def routes_of(service: Service) -> list[Route]:
    """The app's routes, each with its methods (others get 405)."""

    async def index(request: Request) -> Response:
        return JSONResponse(
            {
                "service": "hf-seq2seq translation API (LibreTranslate-compatible)",
                "endpoints": [
                    f"{method} {route.path}"
                    for route in routes
                    for method in sorted(route.methods - {"HEAD"})
                ],
            }
        )

    async def spec(request: Request) -> Response:
        return JSONResponse(openapi_document(service.config))

    async def suggest(request: Request) -> Response:
        return error_response(403, SUGGESTIONS_DISABLED)

    routes = [
        Route("/", index, methods=["GET"]),
        Route("/translate", service.translate_endpoint, methods=["POST"]),
        Route("/translate_file", service.translate_file_endpoint, methods=["POST"]),
        Route("/download_file/{name}", service.download_file_endpoint, methods=["GET"], name="download_file"),
        Route("/detect", service.detect_endpoint, methods=["POST"]),
        Route("/languages", service.languages_endpoint, methods=["GET"]),
        Route("/frontend/settings", service.frontend_settings_endpoint, methods=["GET"]),
        Route("/suggest", suggest, methods=["POST"]),
        Route("/health", service.health_endpoint, methods=["GET"]),
        Route("/metrics", service.metrics_endpoint, methods=["GET"]),
        Route("/spec", spec, methods=["GET"]),
    ]
    return routes


async def on_serve_error(request: Request, error: ServeError) -> Response:
    return error_response(error.status, error.message, error.headers)


async def on_http_error(request: Request, error: HTTPException) -> Response:
    return error_response(
        error.status_code, f"{request.method} {request.url.path}: {error.detail}", error.headers
    )


async def on_error(request: Request, error: Exception) -> Response:
    """500 for what no handler expected: its kind only (its message may name the server's files); logged."""
    logger.error("%s %s failed", request.method, request.url.path, exc_info=error)
    return error_response(500, f"internal error ({type(error).__name__}); the server's log has the details")


def create_app(
    load_workers: Callable[[], BatchWorker] | Sequence[Callable[[], BatchWorker]],
    config: ServeConfig | None = None,
    load_in_background: bool = True,
) -> Starlette:
    """The service as an ASGI app, over one model or several (one per pair: `hf_seq2seq.serving.routing`).
    `load_workers` returns a `BatchWorker` (e.g. `worker_loader(folder)`), or is a list of such functions; they
    run one after another in threads when the app starts, and `/health` and `/translate` answer 503 until all
    have returned. Without `load_in_background` the app's startup waits for them (and fails if one fails): for
    a host such as Ray Serve that routes requests to a replica once it has started."""
    loaders = [load_workers] if callable(load_workers) else list(load_workers)
    service = Service(loaders, config or ServeConfig())

    @asynccontextmanager
    async def lifespan(app: Starlette):
        await service.start(load_in_background)
        try:
            yield
        finally:
            await service.stop()

    routes = routes_of(service)
    middleware = [Middleware(CountRequests, metrics=service.metrics, routes=routes)]
    if service.config.trust_forwarded_for:  # the client's address from a reverse proxy's X-Forwarded-For
        from uvicorn.middleware.proxy_headers import ProxyHeadersMiddleware

        middleware.insert(0, Middleware(ProxyHeadersMiddleware, trusted_hosts="*"))
    if service.config.cors_origins:  # browser pages of other origins
        middleware.append(
            Middleware(
                CORSMiddleware, allow_origins=list(service.config.cors_origins), allow_methods=["GET", "POST"],
                allow_headers=["Authorization", "Content-Type"], expose_headers=["Authorization"],
                max_age=CORS_MAX_AGE,
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

"""The translation service's Prometheus metrics (`Metrics`, one registry per app) and the ASGI middleware that
counts every HTTP answer (`CountRequests`)."""

from __future__ import annotations

from collections.abc import Sequence

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram
from starlette.routing import Match, Route


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


class CountRequests:
    """ASGI middleware: counts every HTTP answer by the path of its route (``/download_file/{name}`` for every
    download; unknown paths as "other") and status."""

    def __init__(self, app, metrics: Metrics, routes: Sequence[Route]):
        self.app, self.metrics, self.routes = app, metrics, routes

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
            matched = (route.path for route in self.routes if route.matches(scope)[0] != Match.NONE)
            path = next(matched, "other")
            self.metrics.requests.labels(path, str(status)).inc()

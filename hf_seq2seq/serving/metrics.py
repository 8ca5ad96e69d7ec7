"""The translation service's Prometheus metrics (`Metrics`, one registry per app) and the ASGI middleware that
counts every HTTP answer (`CountRequests`)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, fields

from prometheus_client import CollectorRegistry, Counter, Gauge, Histogram, ProcessCollector
from starlette.routing import Match, Route


class Metrics:
    """The service's Prometheus metrics, in a registry of its own (one per app). Those of the models' work carry
    a ``model`` label, the model's pair ("en-fr"): `for_model` gives one model's."""

    def __init__(self) -> None:
        self.registry = CollectorRegistry()
        r = self.registry
        ProcessCollector(
            registry=r
        )  # process_resident_memory_bytes and the rest, where the platform has them
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
        self.ready = Gauge(
            "hf_seq2seq_model_ready", "1 once every model is loaded and none is stalled or failed", registry=r
        )
        model = ["model"]
        self.queue = Gauge(
            "hf_seq2seq_queue_sentences", "Sentences waiting for a model batch", model, registry=r
        )
        self.batch_sentences = Histogram(
            "hf_seq2seq_batch_sentences",
            "Sentences per model batch",
            model,
            buckets=(1, 2, 4, 8, 16, 32, 48, 64, 96, 128, 256),
            registry=r,
        )
        self.batch_tokens = Histogram(
            "hf_seq2seq_batch_padded_tokens",
            "Padded source tokens per model batch (longest sentence x sentences)",
            model,
            buckets=(16, 64, 256, 512, 1024, 2048, 4096, 8192, 16384),
            registry=r,
        )
        self.batch_seconds = Histogram(
            "hf_seq2seq_batch_seconds",
            "Duration of one model call",
            model,
            buckets=(0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30),
            registry=r,
        )
        self.batch_failures = Counter(
            "hf_seq2seq_batch_failures", "Model batches whose engine call raised", model, registry=r
        )
        self.sentences = Counter(
            "hf_seq2seq_sentences_translated", "Sentences the model translated", model, registry=r
        )
        self.aligned = Counter(
            "hf_seq2seq_sentences_aligned",
            "Translations the model aligned or scored (one teacher-forced pass each: markup, glossaries, "
            "confidence)",
            model,
            registry=r,
        )
        self.overlong_shortened = Counter(
            "hf_seq2seq_overlong_shortened",
            "Over-long translations of short sentences replaced by a shorter one of the model's n best",
            model,
            registry=r,
        )
        self.overlong_copied = Counter(
            "hf_seq2seq_overlong_copied",
            "Over-long translations of short sentences replaced by the sentence as written (no candidate fitted)",
            model,
            registry=r,
        )
        self.cache_hits = Counter(
            "hf_seq2seq_cache_hits",
            "Sentences, alignments and scores answered without the model: from the translation cache, or a "
            "repeat within the request",
            model,
            registry=r,
        )
        self.cache_misses = Counter(
            "hf_seq2seq_cache_misses",
            "Lookups of the translation cache that went to the model",
            model,
            registry=r,
        )
        self.cache_entries = Gauge(
            "hf_seq2seq_cache_entries", "Entries the translation cache holds", registry=r
        )
        self.cache_bytes = Gauge(
            "hf_seq2seq_cache_bytes",
            "Bytes of the sentences and results the translation cache holds",
            registry=r,
        )
        self.weights = Gauge(
            "hf_seq2seq_model_weights_bytes", "Bytes the model's weights take in memory", model, registry=r
        )

    def for_model(self, name: str) -> ModelMetrics:
        """The metrics of the model `name` (its pair, "en-fr")."""
        return ModelMetrics(*(getattr(self, field.name).labels(name) for field in fields(ModelMetrics)))


@dataclass(frozen=True)
class ModelMetrics:
    """One model's metrics (`Metrics.for_model`): what its batcher and its cache lookups count."""

    queue: Gauge
    batch_sentences: Histogram
    batch_tokens: Histogram
    batch_seconds: Histogram
    batch_failures: Counter
    sentences: Counter
    aligned: Counter
    overlong_shortened: Counter
    overlong_copied: Counter
    cache_hits: Counter
    cache_misses: Counter
    weights: Gauge


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

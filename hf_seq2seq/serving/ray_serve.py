"""The translation service as a Ray Serve deployment: the same app (`hf_seq2seq.serving.app.create_app`) in
every replica, each replica with its own copy of every model served (one app that routes each pair to its
model, each model with its own batcher, as in `hf-seq2seq serve`); Ray's HTTP proxies spread requests over the
replicas, and autoscaling adds or removes replicas by ongoing requests.

Started by `hf-seq2seq serve MODEL [MODEL ...] --ray [--replicas N] [--max-replicas M]` (a local Ray instance,
or `--ray-address` of a running cluster), or on a cluster by Ray's own CLI with the application builder
`build_app`::

    serve run hf_seq2seq.serving.ray_serve:build_app model=/models/en-fr,/models/fr-en
    serve deploy docs/serve_ray.yaml          # a config file: replicas, autoscaling, CPUs per replica

Every node that may host a replica needs the package (with the ray extra) and the model folders at the
same paths (a shared file system, or a copy on each node).
"""

from __future__ import annotations

import logging
import signal
import threading
from dataclasses import fields

from ray import serve

from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.models.languages import require_languages
from hf_seq2seq.serving.app import create_app
from hf_seq2seq.serving.config import (
    CPUS_PER_REPLICA,
    DECODING_FIELDS,
    DEFAULT_HOST,
    DEFAULT_PORT,
    TARGET_ONGOING_REQUESTS,
    ServeConfig,
)
from hf_seq2seq.serving.worker import worker_loader

logger = logging.getLogger(__name__)


APP_NAME = "hf-seq2seq"
DEPLOYMENT_NAME = "TranslationService"


@serve.ingress()
class TranslationService:
    """One replica: loads the models (before Ray routes requests to it) and serves `create_app`'s routes.
    `loader_args` are `worker_loader`'s arguments, one dict per model (or one dict: one model)."""

    def __init__(self, loader_args: list[dict] | dict, config: ServeConfig):
        self.loader_args = [loader_args] if isinstance(loader_args, dict) else list(loader_args)
        self.config = config

    def __serve_build_asgi_app__(self):
        loaders = [worker_loader(**each) for each in self.loader_args]
        return create_app(loaders, self.config, load_in_background=False)


def deployment(
    loader_args: list[dict] | dict,
    config: ServeConfig,
    replicas: int | None = None,
    max_replicas: int | None = None,
    target_ongoing_requests: float = TARGET_ONGOING_REQUESTS,
    cpus_per_replica: float = CPUS_PER_REPLICA,
    max_ongoing_requests: int = 256,
    max_queued_requests: int = 1024,
):
    """The bound application: `replicas` replicas (default: Ray's, or a config file's `deployments` section), or
    autoscaling from `replicas` to `max_replicas`.

    `max_ongoing_requests` lets a replica hold enough requests to fill its batches (Ray's default of a few
    would starve the batcher); past `max_queued_requests` waiting at the proxies, Ray answers 503."""
    options = dict(
        name=DEPLOYMENT_NAME,
        ray_actor_options={"num_cpus": cpus_per_replica},
        max_ongoing_requests=max_ongoing_requests,
        max_queued_requests=max_queued_requests,
    )
    if max_replicas and max_replicas > (replicas or 1):
        options["autoscaling_config"] = {
            "min_replicas": replicas or 1,
            "max_replicas": max_replicas,
            "target_ongoing_requests": target_ongoing_requests,
        }
    elif replicas is not None:
        options["num_replicas"] = replicas
    return serve.deployment(TranslationService, **options).bind(loader_args, config)


def build_app(args: dict):
    """Ray Serve's application builder (`serve run hf_seq2seq.serving.ray_serve:build_app model=...
    key=value`, or `import_path` with `args` in a config file): `model` (required: a folder, or several, a list
    or comma-separated), `engine` (default auto: each folder's own), `precision`, `languages` ("en-fr", one per
    model, a list or comma-separated), `trust_remote_code`, any `ServeConfig` field (limits, batching, `pivot`,
    `cache_entries`; `api_keys` comma-separated) and the decoding fields (`DECODING_FIELDS`). Replicas and
    autoscaling: the config file's `deployments` section, or `replicas`, `max_replicas`,
    `target_ongoing_requests`, `cpus_per_replica` here."""
    args = dict(args)
    if "model" not in args:
        raise ValueError(
            "build_app needs model=<a saved model folder or export, or several, comma-separated>"
        )
    models = _items(args.pop("model"))
    languages = [tuple(pair.split("-")) for pair in _items(args.pop("languages", None) or [])]
    if languages and len(languages) != len(models):
        raise ValueError(f"languages names {len(languages)} pairs for {len(models)} models: one per model")
    shared = {
        "engine": args.pop("engine", "auto"),
        "precision": args.pop("precision", "fp32"),
        "trust_remote_code": _flag(args.pop("trust_remote_code", False)),
    }
    loader_args = [  # a folder that records no pair is refused now, not by each replica in the background
        {
            "folder": str(model),
            "languages": require_languages(
                model, languages[number] if languages else None, "languages=SRC-TGT"
            ),
            **shared,
        }
        for number, model in enumerate(models)
    ]
    decoding = {name: args.pop(name) for name in DECODING_FIELDS if name in args}
    scaling = {
        name: args.pop(name)
        for name in ("replicas", "max_replicas", "target_ongoing_requests", "cpus_per_replica")
        if name in args
    }
    config = serve_config(args, decoding)
    scaling = {k: (int(v) if k in ("replicas", "max_replicas") else float(v)) for k, v in scaling.items()}
    return deployment(loader_args, config, **scaling)


def _items(value) -> list[str]:
    """A list given as a list, or as comma-separated text (Ray's command line)."""
    items = value.split(",") if isinstance(value, str) else value
    return [str(item).strip() for item in items if str(item).strip()]


def serve_config(args: dict, decoding: dict) -> ServeConfig:
    """A `ServeConfig` from `build_app`'s remaining arguments (text, as on Ray's command line, or typed) and
    its decoding fields."""
    config = {}
    types = {f.name: f.type for f in fields(ServeConfig)}
    for name, value in args.items():
        if name not in types or name == "decoding":
            raise ValueError(
                f"unknown argument {name!r}; known: model, engine, precision, languages, {', '.join(types)}"
            )
        if name in ("api_keys", "cors_origins"):
            items = (k.strip() for k in (value.split(",") if isinstance(value, str) else value) if k.strip())
            value = frozenset(items) if name == "api_keys" else tuple(items)
        elif name in ("watch_disconnect", "trust_forwarded_for", "pivot"):
            value = _flag(value)
        elif name in (
            "max_wait_ms",
            "arrival_gap_ms",
            "file_expiry_minutes",
            "batch_timeout_s",
            "body_timeout_s",
        ):
            value = float(value)
        elif name in ("file_dir", "api_keys_file", "public_url"):
            value = str(value)
        else:
            value = int(value)
        config[name] = value
    if decoding:
        kinds = {"length_penalty": float}
        config["decoding"] = Decoding(**{k: kinds.get(k, int)(v) for k, v in decoding.items()})
    return ServeConfig(**config)


def _flag(value) -> bool:
    return value if isinstance(value, bool) else str(value).lower() in ("1", "true", "yes")


def run(
    loader_args: list[dict],
    config: ServeConfig,
    host: str = DEFAULT_HOST,
    port: int = DEFAULT_PORT,
    address: str | None = None,
    **scaling,
) -> None:
    """`hf-seq2seq serve --ray`: start (or join, with `address`) Ray, run the deployment with Ray's HTTP proxy
    on `host`:`port`, and wait for SIGTERM or Ctrl-C; then remove the application (and stop the local Ray
    instance this started). Ray drains each replica's ongoing requests as it stops it."""
    import ray

    ray.init(address=address, logging_level=logging.WARNING)
    stop = threading.Event()
    for signum in (signal.SIGTERM, signal.SIGINT):
        signal.signal(signum, lambda *_: stop.set())
    try:
        serve.start(http_options={"host": host, "port": port})
        serve.run(deployment(loader_args, config, **scaling), name=APP_NAME, route_prefix="/")
        logger.info("serving on http://%s:%d with Ray Serve; SIGTERM or Ctrl-C stops", host, port)
        while not stop.wait(1):
            pass
        logger.info("stopping")
    finally:
        if address is None:
            serve.shutdown()
            ray.shutdown()
        else:
            serve.delete(APP_NAME)

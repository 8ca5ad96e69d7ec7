"""`hf-seq2seq serve`: a LibreTranslate-compatible translation API with dynamic batching (uvicorn or Ray Serve)."""

import argparse
import os
from pathlib import Path

from hf_seq2seq.errors import HfSeq2SeqError
from hf_seq2seq.serving.config import (
    CPUS_PER_REPLICA,
    DEFAULT_HOST,
    DEFAULT_PORT,
    TARGET_ONGOING_REQUESTS,
    ServeConfig,
)

from ._common import (
    add_decoding_arguments,
    add_engine_argument,
    add_precision_argument,
    decoding_from,
    parser,
    setup_logging,
)

API_KEYS_ENV = "HF_SEQ2SEQ_API_KEYS"
GRACEFUL_TIMEOUT_S = 30.0
"""How long SIGTERM waits for accepted requests: gunicorn's default, so one slow client cannot hold a
shutdown."""
BATCHING_FLAGS = (  # flag, the ServeConfig field it sets (its default and type), help
    ("--max-batch-size", "max_batch_sentences", "most sentences per model call"),
    (
        "--max-batch-tokens",
        "max_batch_tokens",
        "most padded source tokens (longest sentence x sentences) per model call",
    ),
    (
        "--max-wait-ms",
        "max_wait_ms",
        "how long a batch that is not full may wait for more requests while the model is idle, from the "
        "oldest request's arrival or the end of the last batch",
    ),
    (
        "--arrival-gap-ms",
        "arrival_gap_ms",
        "a batch that is not full leaves once no request has arrived for this long",
    ),
    (
        "--max-queue",
        "max_queue_sentences",
        "most sentences waiting for a batch; past it requests get 503 with Retry-After",
    ),
    ("--max-chars", "max_chars", "most characters per request (413)"),
    ("--max-texts", "max_texts", "most texts (q entries) per request (413)"),
    ("--max-beams", "max_beams", "largest num_beams a request may ask for"),
    (
        "--alternatives-limit",
        "alternatives_limit",
        "most alternatives a request may ask for (400 past it; below --max-beams: each is one more beam; "
        "default 3, what LibreTranslate's web page asks for)",
    ),
    (
        "--batch-timeout",
        "batch_timeout_s",
        "seconds a model call may take: past it its requests get 504, the queue 503, and /health says stalled "
        "until it returns",
    ),
    ("--max-glossary-terms", "max_glossary_terms", "most terms in a request's glossary (413; default 1000)"),
    ("--max-file-bytes", "max_file_bytes", "largest file /translate_file takes (413; default 5 MiB)"),
    (
        "--max-document-sentences",
        "max_document_sentences",
        "most sentences a file, or the HTML or glossary texts of one request, sends to the model (413)",
    ),
    ("--max-document-chars", "max_document_chars", "most characters of those sentences (413)"),
    ("--max-glossary-chars", "max_glossary_chars", "most characters of a glossary's terms together (413)"),
    ("--max-answer-bytes", "max_answer_bytes", "largest answer or translated file (413; default 16 MiB)"),
    (
        "--max-stored-bytes",
        "max_stored_bytes",
        "most bytes of translated files kept for download; the oldest go first (default 512 MiB)",
    ),
    ("--body-timeout", "body_timeout_s", "seconds a request's body may take to arrive (408; default 60)"),
    (
        "--max-key-failures",
        "max_key_failures",
        "requests with a missing or wrong API key per minute from one address before it gets 429 (default 30)",
    ),
    (
        "--file-expiry-minutes",
        "file_expiry_minutes",
        "how long a translated file can be downloaded; then it is deleted (default 30, as LibreTranslate)",
    ),
)


def build_parser() -> argparse.ArgumentParser:
    p = parser(
        "serve",
        "Serve one model or several (one per language pair; a pair without one goes through English) over HTTP: "
        "LibreTranslate's POST /translate (JSON or form; q a string or a list; source or auto, detected among "
        "the languages served; format text or html; alternatives; this server's confidence and glossary of source "
        "term -> target term), POST /translate_file (multipart: a .txt, .html, .srt, .vtt, .docx, .pptx, .odt, .odp, "
        ".epub, .po, .pot or .pdf file) with "
        "GET /download_file/<name>, POST /detect, GET /languages, GET /frontend/settings, GET /health (200 once "
        "every model is loaded) and GET /metrics (Prometheus); LibreTranslate's request, character and batch "
        "limits, per API key from a keys file re-read when it changes. Concurrent requests are split into "
        "sentences and merged into model batches. SIGTERM stops accepting, answers the accepted requests (at "
        'most --graceful-timeout s), then exits. Needs the serve extra: pip install "hf_seq2seq[serve]" (and '
        'for --ray: "hf_seq2seq[ray]").',
        "hf-seq2seq serve runs/en-fr runs/fr-en --port 5000\n  curl -s localhost:5000/translate -H 'Content-Type: "
        'application/json\' -d \'{"q": "How are you?", "source": "en", "target": "fr"}\'\n'
        "  curl -s localhost:5000/translate_file -F file=@notes.srt -F source=en -F target=fr",
    )
    p.add_argument(
        "model",
        nargs="+",
        help="a saved model folder or an export folder (CTranslate2, ONNX); several, one per language pair, "
        "serve every pair from this one process (each model its own batcher), e.g. runs/en-fr runs/fr-en",
    )
    add_engine_argument(p)
    add_precision_argument(p)
    p.add_argument("--host", default=DEFAULT_HOST, help="address to listen on (0.0.0.0: every interface)")
    p.add_argument(
        "--port", type=int, default=DEFAULT_PORT, help=f"port (default {DEFAULT_PORT}, as LibreTranslate)"
    )
    p.add_argument(
        "--languages",
        metavar="SRC-TGT",
        action="append",
        help="the model's language pair, e.g. en-fr; with several models, once per model in their order "
        "(default: what each folder records: config.json, an export's metadata or its result files; a folder "
        "that records none, such as an export made by 0.1.0, is refused unless given)",
    )
    p.add_argument(
        "--no-pivot",
        action="store_true",
        help="refuse a pair no model translates (de-fr) instead of translating it through English where both "
        "halves are served (de-en, en-fr), as LibreTranslate does by default",
    )
    p.add_argument(
        "--cache-entries",
        type=int,
        default=0,
        metavar="N",
        help="keep up to N sentences' translations (and alignments, scores) so that a sentence seen again costs "
        "no model work (default 0: off; it keeps clients' sentences in memory and a quicker answer tells one "
        "client what another translated: docs/serving.md)",
    )
    p.add_argument(
        "--cache-mib",
        type=float,
        default=ServeConfig.cache_bytes / (1 << 20),
        metavar="MIB",
        help="most memory the translation cache takes (default %(default)g MiB)",
    )
    p.add_argument(
        "--api-keys-file",
        help="a file of API keys, one per line, each optionally followed by its own requests per minute and "
        "characters per text (- for the server's): /translate, /translate_file and /detect then need one in "
        f"their api_key field (400 without one, 403 for a wrong one); re-read when it changes; ${API_KEYS_ENV} (comma-separated) adds "
        "more",
    )
    limits = p.add_argument_group("LibreTranslate's limits (default: none)")
    for flag, help in (
        (
            "--req-limit",
            "most requests per minute per client (its API key when keys are configured, else its address), a "
            "request counting one per text: 429 past it",
        ),
        ("--char-limit", "most characters in each text of a request: 400 past it"),
        ("--batch-limit", "most texts in one request: 400 past it"),
    ):
        limits.add_argument(flag, type=int, default=None, help=help)
    p.add_argument(
        "--cors-origin",
        action="append",
        default=[],
        metavar="ORIGIN",
        help="a web origin whose pages may call the API from a browser, e.g. https://example.org; repeatable "
        "(default: '*', any, as LibreTranslate answers)",
    )
    p.add_argument("--no-cors", action="store_true", help="no CORS headers: only the server's own pages")
    p.add_argument(
        "--trust-forwarded-for",
        action="store_true",
        help="take the client's address from X-Forwarded-For (behind a proxy; as LibreTranslate's flag); "
        "without it the connection's address counts, whatever the headers say",
    )
    p.add_argument(
        "--public-url",
        default=None,
        metavar="URL",
        help="the server's address as clients reach it, e.g. https://translate.example.org: translatedFileUrl "
        "starts with it (default: the link is relative, /download_file/<name>)",
    )
    p.add_argument("--trust-remote-code", action="store_true", help="load the model's own code (Hub folders)")
    batching = p.add_argument_group("batching, limits and translated files")
    for flag, name, help in BATCHING_FLAGS:
        default = getattr(ServeConfig, name)
        batching.add_argument(flag, type=type(default), default=default, help=help)
    batching.add_argument(
        "--file-dir",
        default=None,
        help="where translated files wait for their download (default: a temporary folder of the server's own, "
        "removed when it stops; with --ray and several replicas on a node, a folder they share)",
    )
    p.add_argument(
        "--graceful-timeout",
        type=float,
        default=GRACEFUL_TIMEOUT_S,
        help="on SIGTERM, wait at most this many seconds for accepted requests, then close their connections "
        f"(default {GRACEFUL_TIMEOUT_S:g})",
    )
    p.add_argument("--log-level", default="info", choices=["critical", "error", "warning", "info", "debug"])
    p.add_argument("--access-log", action="store_true", help="log every request (uvicorn's access log)")
    add_decoding_arguments(p)
    add_ray_arguments(p)
    return p


def add_ray_arguments(p: argparse.ArgumentParser) -> None:
    ray = p.add_argument_group("Ray Serve (scale out: replicas of the same app and batcher)")
    ray.add_argument("--ray", action="store_true", help="run as a Ray Serve deployment instead of uvicorn")
    ray.add_argument(
        "--ray-address", default=None, help="an existing Ray cluster (default: start a local one)"
    )
    ray.add_argument("--replicas", type=int, default=1, help="replicas (each loads the model once)")
    ray.add_argument(
        "--max-replicas",
        type=int,
        default=None,
        help="autoscale between --replicas and this many replicas by ongoing requests",
    )
    ray.add_argument(
        "--target-ongoing-requests",
        type=float,
        default=TARGET_ONGOING_REQUESTS,
        help="autoscaling: requests per replica to aim at (about a full batch)",
    )
    ray.add_argument(
        "--cpus-per-replica", type=float, default=CPUS_PER_REPLICA, help="CPUs Ray reserves per replica"
    )


def api_keys() -> frozenset[str]:
    """The keys of ${API_KEYS_ENV} (comma-separated)."""
    return frozenset(key.strip() for key in os.environ.get(API_KEYS_ENV, "").split(",") if key.strip())


def cors_origins(args: argparse.Namespace) -> tuple[str, ...]:
    """The origins given, "*" when none is, none with --no-cors."""
    return () if args.no_cors else tuple(args.cors_origin) or ("*",)


def serve_config(args: argparse.Namespace) -> ServeConfig:
    """The service's settings from the batching and limit flags, the API keys and the decoding flags; a keys
    file that cannot be read or parsed ends the command with the reason."""
    from hf_seq2seq.serving.limits import ApiKeys

    flags = {name: getattr(args, flag[2:].replace("-", "_")) for flag, name, _ in BATCHING_FLAGS}
    keys_file = str(Path(args.api_keys_file).resolve()) if args.api_keys_file else None
    ApiKeys(
        path=keys_file
    )  # a keys file that cannot be read: a KeysFileError, which the command line reports
    return ServeConfig(
        **flags, req_limit=args.req_limit, char_limit=args.char_limit, batch_limit=args.batch_limit,
        file_dir=args.file_dir, api_keys=api_keys(), api_keys_file=keys_file, cors_origins=cors_origins(args),
        public_url=args.public_url, decoding=decoding_from(args), trust_forwarded_for=args.trust_forwarded_for,
        pivot=not args.no_pivot, cache_entries=args.cache_entries, cache_bytes=int(args.cache_mib * (1 << 20)),
    )  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    p = build_parser()
    args = p.parse_args(argv)
    setup_logging()
    try:
        config = serve_config(args)
    except HfSeq2SeqError:
        raise  # a file of the user's that cannot be used (the keys file): the command line reports it
    except ValueError as error:  # limits that do not go together
        p.error(str(error))
    loader_args = model_loaders(p, args)
    if args.ray:
        run_ray(loader_args, config, args)
    else:
        run_uvicorn(loader_args, config, args)
    return 0


def model_loaders(p: argparse.ArgumentParser, args: argparse.Namespace) -> list[dict]:
    """`worker_loader`'s arguments for each model, checked now rather than in the background: each folder loads
    with its engine (`hf_seq2seq.engines.factory.check_folder`), a CTranslate2 export keeps its precision,
    `--languages` is given once per model or not at all, and no two models translate one pair."""
    from hf_seq2seq.engines.factory import check_folder
    from hf_seq2seq.models.languages import UnknownLanguagePair, parse_pair, require_languages

    given = [parse_pair(text) for text in args.languages or ()]
    if None in given:
        p.error(f"--languages must be SRC-TGT, e.g. en-fr; got {args.languages[given.index(None)]!r}")
    if given and len(given) != len(args.model):
        p.error(
            f"--languages is given {len(given)} times for {len(args.model)} models: once per model, in order"
        )
    loaders, pairs = [], {}
    for number, model in enumerate(args.model):
        engine = check_folder(model, args.engine)  # a FolderError ends the command with its message
        if engine == "ctranslate2" and args.precision not in ("fp32", export_quantization(model)):
            p.error(  # as `load_translator` decides, but now rather than in the background
                "--precision is for the torch engine; a CTranslate2 export keeps the precision it was exported "
                f"with ({model}: {export_quantization(model)})"
            )
        try:
            pair = require_languages(model, given[number] if given else None)
        except UnknownLanguagePair as error:
            p.error(str(error))
        shown = "-".join(pair)
        if shown in pairs:
            p.error(
                f"{pairs[shown]} and {model} both translate {shown}: serve one model per pair, or give each its "
                "pair with --languages"
            )
        pairs[shown] = model
        loaders.append(
            dict(
                folder=str(Path(model).resolve()),
                engine=engine,
                precision=args.precision if engine != "ctranslate2" else "fp32",
                languages=pair,
                trust_remote_code=args.trust_remote_code,
            )
        )
    return loaders


def run_ray(loader_args: list[dict], config: ServeConfig, args: argparse.Namespace) -> None:
    from hf_seq2seq.serving.ray_serve import run

    run(
        loader_args,
        config,
        host=args.host,
        port=args.port,
        address=args.ray_address,
        replicas=args.replicas,
        max_replicas=args.max_replicas,
        target_ongoing_requests=args.target_ongoing_requests,
        cpus_per_replica=args.cpus_per_replica,
    )


def run_uvicorn(loader_args: list[dict], config: ServeConfig, args: argparse.Namespace) -> None:
    import uvicorn

    from hf_seq2seq.serving.app import create_app
    from hf_seq2seq.serving.worker import worker_loader

    app = create_app([worker_loader(**each) for each in loader_args], config)
    uvicorn.Server(uvicorn_config(app, args)).run()


def uvicorn_config(app, args: argparse.Namespace):
    """uvicorn's settings for `app`. uvicorn reads no X-Forwarded-For (its default trusts the header from
    127.0.0.1, which lets a local client claim any address): the app does, with --trust-forwarded-for
    (`ServeConfig.trust_forwarded_for`)."""
    import uvicorn

    return uvicorn.Config(
        app,
        host=args.host,
        port=args.port,
        log_level=args.log_level,
        access_log=args.access_log,
        timeout_graceful_shutdown=args.graceful_timeout,
        proxy_headers=False,
    )


def export_quantization(folder: str) -> str | None:
    """The weight type a CTranslate2 export keeps (its metadata's quantization)."""
    from hf_seq2seq.export.metadata import read_metadata

    return read_metadata(Path(folder)).quantization

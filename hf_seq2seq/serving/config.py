"""The translation service's settings: `ServeConfig` (limits, batching and decoding, with their defaults), the
decoding fields a request may set, and the defaults the command line and the Ray Serve deployment share.

Imports neither torch nor transformers: `hf-seq2seq serve --help` builds its flags from this module.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hf_seq2seq.engines.decoding import Decoding

DEFAULT_HOST = "127.0.0.1"
DEFAULT_PORT = 5000  # LibreTranslate's
DECODING_FIELDS = ("num_beams", "length_penalty", "max_new_tokens", "no_repeat_ngram_size")
"""The `Decoding` fields a request (or Ray Serve's application arguments) may set over the server's."""

# Ray Serve replicas (`hf_seq2seq.serving.ray_serve.deployment`)
TARGET_ONGOING_REQUESTS = 32
"""Autoscaling: requests per replica to aim at (about a full batch)."""
CPUS_PER_REPLICA = 1.0
"""CPUs Ray reserves for each replica."""


@dataclass(frozen=True)
class ServeConfig:
    """The service's limits, batching and translated files. Sizes count sentences after splitting;
    `max_chars` counts the characters of all texts of one request (as sent: HTML with its markup)."""

    max_batch_sentences: int = 64
    """Most sentences in one model call."""
    max_batch_tokens: int = 8192
    """Most padded source tokens (longest sentence x sentences) in one model call."""
    max_wait_ms: float = 30.0
    """How long a batch may wait to fill while the model is idle: counted from the oldest queued request's
    arrival, or from the end of the last batch when that is later."""
    arrival_gap_ms: float = 8.0
    """A batch that is not full leaves once no request has arrived for this long (after a first one). The
    clients a batch answered take a few ms to send their next requests; this default and `max_wait_ms`'s
    come from the load test (docs/serving.md)."""
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
    """Largest ``max_new_tokens`` a request may ask for, within the model's positions."""
    alternatives_limit: int = 3
    """Most ``alternatives`` a request may ask for (LibreTranslate's ``--alternatives-limit``; its web page asks
    for 3): 400 past it. Each alternative is one more beam, so the limit stays below `max_beams`."""
    char_limit: int | None = None
    """LibreTranslate's ``--char-limit``: most characters in each text of a request (400 past it); an API key's
    own limit overrides it. None: no limit but `max_chars`."""
    batch_limit: int | None = None
    """LibreTranslate's ``--batch-limit``: most texts in one request (400 past it). None: no limit but
    `max_texts`."""
    req_limit: int | None = None
    """LibreTranslate's ``--req-limit``: most requests per minute of one client (its API key when keys are
    configured, else its address) to ``/translate``, ``/translate_file`` and ``/detect``, a request costing one
    per text of ``q`` and a file its bytes divided by the character limit (at least one), as in LibreTranslate:
    429 past it; an API key's own limit overrides it. None: no limit."""
    batch_timeout_s: float = 120.0
    """Longest a model call may take: past it its requests get 504, the queued ones 503, new ones 503 and
    ``/health`` says "stalled" until the call returns."""
    max_glossary_terms: int = 1000
    """Most terms in a request's glossary: 413 past it."""
    max_file_bytes: int = 5 << 20
    """Largest file ``/translate_file`` takes (5 MiB): 413 past it, counted while the upload is read."""
    file_expiry_minutes: float = 30.0
    """How long a translated file can be downloaded (LibreTranslate's 30 minutes); then it is deleted."""
    file_dir: str | None = None
    """Where translated files wait for their download; None: a temporary folder of the server's own, removed
    when it stops. Ray Serve replicas that share a node share their files through a folder given here."""
    api_keys: frozenset[str] = frozenset()
    """When not empty (or `api_keys_file` has keys), ``/translate``, ``/translate_file`` and ``/detect`` need
    one of these in their ``api_key`` field (LibreTranslate's 400 without one, 403 for a wrong one)."""
    api_keys_file: str | None = None
    """A file of more API keys, each with its own limits if it says so; re-read when it changes
    (`hf_seq2seq.serving.limits`)."""
    cors_origins: tuple[str, ...] = ("*",)
    """Web origins whose pages may call the API from a browser (CORS headers); "*" (the default): any, as
    LibreTranslate answers. Empty: no CORS headers, so only pages of the server's own origin can."""
    max_document_sentences: int = 5000
    """Most sentences one document (a file, or the HTML or glossary texts of one request) sends to the model:
    413 past it, before the model translates any."""
    max_document_chars: int = 200_000
    """Most characters those sentences have together: 413 past it."""
    max_glossary_chars: int = 20_000
    """Most characters of a glossary's terms, sources and targets together: 413 past it (a long target term
    put in at every match would make an answer far larger than its request)."""
    max_answer_bytes: int = 16 << 20
    """Largest answer: a ``/translate`` answer's JSON or a translated file (16 MiB); 413 past it."""
    max_stored_bytes: int = 512 << 20
    """Most bytes of translated files kept for their download, all together: the oldest are deleted to make
    room for a new one (512 MiB)."""
    body_timeout_s: float = 60.0
    """Longest a request's body may take to arrive, from its first read: 408 past it, and the connection is
    closed (a client sending a byte a second holds no connection for long)."""
    max_key_failures: int = 30
    """Most requests per minute with a missing or wrong API key from one address (when keys are configured):
    past it, every request of that address gets 429 for the rest of the minute, a right key too, so keys cannot
    be guessed at speed."""
    trust_forwarded_for: bool = False
    """Take the client's address (for the request limits) from ``X-Forwarded-For``, as a reverse proxy in front
    writes it (LibreTranslate's ``--trust-forwarded-for``); else the connection's address counts, whatever the
    headers say. The app reads the header itself, so the same holds under uvicorn and under Ray Serve."""
    public_url: str | None = None
    """The server's address as clients reach it (e.g. ``https://translate.example.org``): ``translatedFileUrl``
    is this plus ``/download_file/<name>``. None: the link is relative (``/download_file/<name>``), never built
    from the request's ``Host`` header, which the client chooses."""
    pivot: bool = True
    """Translate a pair no model translates through English where both halves are served (``de-fr``: ``de-en``
    then ``en-fr``), as LibreTranslate does (`hf_seq2seq.serving.routing`); False: such a pair is refused."""
    cache_entries: int = 0
    """Most entries of the translation cache (a sentence's translation, alignment or score,
    `hf_seq2seq.serving.cache`); 0, the default: no cache (why: that module's docstring)."""
    cache_bytes: int = 64 << 20
    """Most bytes the translation cache holds (64 MiB)."""
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
            "max_glossary_terms",
            "max_file_bytes",
            "max_document_sentences",
            "max_document_chars",
            "max_glossary_chars",
            "max_answer_bytes",
            "max_stored_bytes",
            "max_key_failures",
            "cache_bytes",
        ):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)}")
        for name in ("char_limit", "batch_limit", "req_limit"):
            if getattr(self, name) is not None and getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1 (or None: no limit), got {getattr(self, name)}")
        if not 0 <= self.alternatives_limit < self.max_beams:
            raise ValueError(
                f"alternatives_limit must be from 0 to max_beams - 1 ({self.max_beams - 1}): each alternative is "
                f"one more beam; got {self.alternatives_limit}"
            )
        if self.cache_entries < 0:
            raise ValueError(f"cache_entries must be >= 0 (0: no cache), got {self.cache_entries}")
        if not self.batch_timeout_s > 0:
            raise ValueError(f"batch_timeout_s must be positive, got {self.batch_timeout_s}")
        for name in ("max_wait_ms", "arrival_gap_ms"):
            if getattr(self, name) < 0:
                raise ValueError(f"{name} must be >= 0, got {getattr(self, name)}")
        if self.max_answer_bytes > self.max_stored_bytes:
            raise ValueError(
                f"max_answer_bytes ({self.max_answer_bytes}) must not be over max_stored_bytes "
                f"({self.max_stored_bytes}): a translated file must fit in the store"
            )
        if not self.body_timeout_s > 0:
            raise ValueError(f"body_timeout_s must be positive, got {self.body_timeout_s}")
        if not self.file_expiry_minutes > 0:
            raise ValueError(f"file_expiry_minutes must be positive, got {self.file_expiry_minutes}")

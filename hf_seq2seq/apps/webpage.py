"""`hf-seq2seq web`: a static page that translates inside the browser with transformers.js, from an ONNX export,
or several, one per direction (e.g. en->fr and fr->en: the user picks the direction on the page).

The page (`hf_seq2seq/apps/web/index.html` and `app.js`) loads an export folder of `hf-seq2seq export
onnx` with transformers.js (`AutoTokenizer`, `AutoModelForSeq2SeqLM`, `generate`): the model runs in the
browser, in ONNX Runtime Web's WebAssembly build; the server only hands out files. Each export is served under
its pair, ``/models/<source>-<target>/`` (the one given, or the pair it records,
`hf_seq2seq.models.languages.model_languages`; an export that records none, made by 0.1.0, is refused unless
given), and ``/settings.json`` lists them. Nothing comes from
a CDN or the Hub:

* transformers.js and ONNX Runtime Web are npm packages, pinned by `hf_seq2seq/apps/web/package.json` and its
  `package-lock.json`; `install_js()` runs `npm ci` once into a cache folder named after the lock file's hash
  (`~/.cache/hf_seq2seq/web/<hash>`, or `$HF_SEQ2SEQ_WEB_CACHE/<hash>`) and later runs reuse it;
* this module's standard-library HTTP server serves the page, the two JavaScript files the page needs from that
  folder (transformers.js's self-contained browser bundle, ONNX Runtime Web's wasm build), and the export
  folders, read-only (GET and HEAD), on localhost by default.

Only the standard library is imported here (no torch, no transformers), the export check of
`hf_seq2seq.export.folder` and the languages of `hf_seq2seq.models.languages`.
"""

from __future__ import annotations

import hashlib
import http.server
import json
import logging
import os
import shutil
import subprocess
import threading
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import unquote, urlsplit

from hf_seq2seq.errors import HfSeq2SeqError
from hf_seq2seq.export.folder import SUBFOLDER, NotAnExport, check_onnx_export
from hf_seq2seq.models.languages import language_name, require_languages

logger = logging.getLogger(__name__)


PAGE_DIR = Path(__file__).resolve().parent / "web"
PAGE_FILES = ("index.html", "app.js")
CACHE_ENV = "HF_SEQ2SEQ_WEB_CACHE"


# what the page takes from node_modules: URL path -> path under node_modules
TRANSFORMERS_BUNDLE = "@huggingface/transformers/dist/transformers.min.js"  # bundles ONNX Runtime Web's JS
ORT_DIST = "onnxruntime-web/dist"
ORT_FILES = ("ort-wasm-simd-threaded.asyncify.mjs", "ort-wasm-simd-threaded.asyncify.wasm")
MODELS_URL = "/models/"  # transformers.js: env.localModelPath; an export's model id is its pair ("en-fr")
JS_DTYPES = {"fp32": "fp32", "int8": "q8"}  # the export's precision -> transformers.js's dtype of its graphs
MIME_TYPES = {
    ".html": "text/html; charset=utf-8",
    ".js": "text/javascript; charset=utf-8",
    ".mjs": "text/javascript; charset=utf-8",
    ".wasm": "application/wasm",
    ".onnx": "application/octet-stream",
    ".onnx_data": "application/octet-stream",
    ".json": "application/json; charset=utf-8",
    ".txt": "text/plain; charset=utf-8",
    ".md": "text/markdown; charset=utf-8",
    ".model": "application/octet-stream",
}


class JavaScriptMissing(HfSeq2SeqError, RuntimeError):
    """transformers.js / ONNX Runtime Web are not installed and cannot be (no npm, or `npm ci` failed)."""


def lock_hash() -> str:
    """The first 12 hex digits of the SHA-256 of the pinned package.json and package-lock.json."""
    digest = hashlib.sha256()
    for name in ("package.json", "package-lock.json"):
        digest.update((PAGE_DIR / name).read_bytes())
    return digest.hexdigest()[:12]


def js_cache_dir() -> Path:
    """Where `npm ci` installs the pinned packages: one folder per lock file, so that a new pin installs anew."""
    root = os.environ.get(CACHE_ENV) or Path.home() / ".cache" / "hf_seq2seq" / "web"
    return Path(root) / lock_hash()


def js_files(cache_dir: Path | None = None) -> dict[str, Path]:
    """The files the page needs from the installed packages, by URL path under /vendor/."""
    modules = (cache_dir or js_cache_dir()) / "node_modules"
    files = {"transformers.js": modules / TRANSFORMERS_BUNDLE}
    files |= {f"ort/{name}": modules / ORT_DIST / name for name in ORT_FILES}
    return files


def js_installed(cache_dir: Path | None = None) -> bool:
    cache_dir = cache_dir or js_cache_dir()
    return (cache_dir / ".installed").is_file() and all(
        path.is_file() for path in js_files(cache_dir).values()
    )


def install_js(cache_dir: Path | None = None, quiet: bool = False) -> Path:
    """Install the pinned transformers.js and ONNX Runtime Web into `cache_dir` with `npm ci` (from the npm
    registry; once: a complete install is reused) and return the folder.

    `npm ci` installs exactly the lock file's versions and checks their integrity hashes; `--ignore-scripts`
    (no install script runs) and package.json's overrides keep out what only Node.js would use (the native
    onnxruntime-node and sharp, most of the download: docs/web.md): the page needs the browser bundle and the wasm
    build alone.
    """
    cache_dir = cache_dir or js_cache_dir()
    if js_installed(cache_dir):
        return cache_dir
    npm = shutil.which("npm")
    if npm is None:
        raise JavaScriptMissing(
            f"the page needs transformers.js and ONNX Runtime Web, installed once with npm into {cache_dir}, "
            "but npm is not on PATH: install Node.js (e.g. apt-get install npm), or copy such a folder there"
        )
    cache_dir.mkdir(parents=True, exist_ok=True)
    for name in ("package.json", "package-lock.json"):
        shutil.copyfile(PAGE_DIR / name, cache_dir / name)
    if not quiet:
        print(
            f"installing transformers.js and ONNX Runtime Web (pinned, ~170 MB) into {cache_dir} ...",
            flush=True,
        )
    command = [
        npm,
        "ci",
        "--ignore-scripts",
        "--omit=optional",
        "--no-audit",
        "--no-fund",
        "--loglevel=error",
    ]
    done = subprocess.run(command, cwd=cache_dir, capture_output=True, text=True)
    if done.returncode != 0:
        raise JavaScriptMissing(f"`{' '.join(command[1:])}` in {cache_dir} failed:\n{done.stderr[-3000:]}")
    missing = [str(path) for path in js_files(cache_dir).values() if not path.is_file()]
    if missing:
        raise JavaScriptMissing(f"npm ci ran, yet these files are missing: {', '.join(missing)}")
    (cache_dir / ".installed").write_text(lock_hash() + "\n", encoding="utf-8")
    return cache_dir


@dataclass(frozen=True)
class PageSettings:
    """What the page reads from /settings.json of one export: its pair (its model id for transformers.js is
    "<source>-<target>"), its dtype and its limits."""

    dtype: str  # "fp32" or "q8"
    max_source_length: int
    source: str = "en"
    target: str = "fr"

    @property
    def model(self) -> str:
        return f"{self.source}-{self.target}"

    def to_dict(self) -> dict:
        return {
            "model": self.model,
            "source": self.source,
            "target": self.target,
            "sourceName": language_name(self.source),
            "targetName": language_name(self.target),
            "dtype": self.dtype,
            "maxSourceLength": self.max_source_length,
        }


def settings_json(settings: Sequence[PageSettings]) -> bytes:
    """/settings.json: where the exports are and each one's settings, the first the page starts with."""
    return json.dumps(
        {"localModelPath": MODELS_URL, "models": [each.to_dict() for each in settings]}
    ).encode()


def page_settings(
    folder: str | os.PathLike, dtype: str | None = None, languages: tuple[str, str] | None = None
) -> PageSettings:
    """The page's settings for the export `folder` (checked by `export.folder.check_onnx_export`, which raises
    NotAnExport naming what is missing): `dtype` "fp32" (onnx/*.onnx) or "q8" (onnx/*_quantized.onnx),
    None: fp32 if exported, else q8; `languages` its pair, None: what the folder records (`UnknownLanguagePair`
    where it records none)."""
    export = check_onnx_export(folder)
    if not export.top_level:
        raise NotAnExport(
            f"{folder} keeps its ONNX export in {SUBFOLDER}/ beside a PyTorch model (a Hub repository's layout); "
            f"the page serves an export folder: hf-seq2seq export onnx {folder} {Path(folder)}-onnx"
        )
    available = [JS_DTYPES[precision] for precision in export.precisions]
    if dtype is None:
        dtype = available[0]
    elif dtype not in available:
        raise NotAnExport(f"{folder} has no {dtype} graphs (it has: {', '.join(available)})")
    source, target = require_languages(folder, languages)
    return PageSettings(dtype=dtype, max_source_length=export.max_source_length, source=source, target=target)


class PageServer(http.server.ThreadingHTTPServer):
    """Serves the page, /settings.json, /vendor/ (the npm files) and /models/<pair>/ (each export folder, with
    its `PageSettings`); two exports of one pair are refused (ValueError)."""

    daemon_threads = True

    def __init__(self, address, exports: Sequence[tuple[Path, PageSettings]], vendor: dict[str, Path]):
        self.exports: dict[str, Path] = {}
        for folder, settings in exports:
            if settings.model in self.exports:
                raise ValueError(f"{self.exports[settings.model]} and {folder} are both {settings.model}")
            self.exports[settings.model] = Path(folder).resolve()
        self.settings = [settings for _, settings in exports]
        self.vendor = vendor
        super().__init__(address, PageHandler)


class PageHandler(http.server.BaseHTTPRequestHandler):
    server: PageServer
    server_version = "hf-seq2seq-web"

    def log_message(self, format, *args):  # noqa: A002 (the base class's name)
        logger.debug("%s " + format, self.address_string(), *args)

    def resolve(self, path: str) -> Path | bytes | None:
        """The file (or the generated bytes) a URL path names, or None: only known files, never a listing."""
        if path in ("/", "/index.html"):
            return PAGE_DIR / "index.html"
        if path.lstrip("/") in PAGE_FILES:
            return PAGE_DIR / path.lstrip("/")
        if path == "/settings.json":
            return settings_json(self.server.settings)
        if path.startswith("/vendor/"):
            return self.server.vendor.get(path.removeprefix("/vendor/"))
        if path.startswith(MODELS_URL):
            model, _, rest = path.removeprefix(MODELS_URL).partition("/")
            root = self.server.exports.get(model)
            target = (root / rest).resolve() if root is not None else None
            if target is not None and target.is_relative_to(root) and target.is_file():
                return target
        return None

    def do_GET(self):
        self.answer(send_body=True)

    def do_HEAD(self):
        self.answer(send_body=False)

    def answer(self, send_body: bool) -> None:
        path = unquote(urlsplit(self.path).path)
        found = None if "\x00" in path else self.resolve(path)
        if found is None or (isinstance(found, Path) and not found.is_file()):
            self.send_error(404, "Not Found")
            return
        name = "settings.json" if isinstance(found, bytes) else found.name
        suffix = os.path.splitext(name)[1]
        size = len(found) if isinstance(found, bytes) else found.stat().st_size
        self.send_response(200)
        self.send_header("Content-Type", MIME_TYPES.get(suffix, "application/octet-stream"))
        self.send_header("Content-Length", str(size))
        self.send_header("Cache-Control", "no-cache")  # a new export in the same folder is seen on reload
        # cross-origin isolation: lets ONNX Runtime Web run its wasm on several threads (SharedArrayBuffer)
        self.send_header("Cross-Origin-Opener-Policy", "same-origin")
        self.send_header("Cross-Origin-Embedder-Policy", "require-corp")
        self.send_header("Cross-Origin-Resource-Policy", "same-origin")
        self.send_header("X-Content-Type-Options", "nosniff")
        self.end_headers()
        if not send_body:
            return
        try:
            if isinstance(found, bytes):
                self.wfile.write(found)
            else:
                with found.open("rb") as file:
                    shutil.copyfileobj(file, self.wfile, 1 << 20)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the browser went away (a reload)

    def do_POST(self):
        self.send_error(405, "Method Not Allowed (this server is read-only)")

    do_PUT = do_DELETE = do_PATCH = do_POST


def make_server(
    export_dirs: str | os.PathLike | Sequence[str | os.PathLike],
    host: str = "127.0.0.1",
    port: int = 8000,
    dtype: str | None = None,
    install: bool = True,
    languages: Sequence[tuple[str, str]] | None = None,
) -> PageServer:
    """A server for the page and an export, or several (one per direction; each checked: NotAnExport), each
    with its pair from `languages` (one per export, in order) or what it records (`page_settings`); installs the
    JavaScript first when `install` (else JavaScriptMissing if it is not installed). Not started:
    `serve_forever()` or `start_in_thread()`."""
    folders = [export_dirs] if isinstance(export_dirs, str | os.PathLike) else list(export_dirs)
    if languages and len(languages) != len(folders):
        raise ValueError(f"{len(languages)} language pairs for {len(folders)} exports: give one per export")
    exports = [
        (Path(folder), page_settings(folder, dtype, languages[number] if languages else None))
        for number, folder in enumerate(folders)
    ]
    if install:
        install_js()
    elif not js_installed():
        raise JavaScriptMissing(
            f"transformers.js is not installed in {js_cache_dir()}: run hf-seq2seq web --install-js"
        )
    return PageServer((host, port), exports, js_files())


def start_in_thread(server: PageServer) -> threading.Thread:
    thread = threading.Thread(target=server.serve_forever, name="hf-seq2seq-web", daemon=True)
    thread.start()
    return thread

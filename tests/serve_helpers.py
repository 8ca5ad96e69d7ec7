"""What the serving tests share: a free local port, the server as a subprocess (`python -m hf_seq2seq serve`)
or in a thread of the test process (to serve an injected worker), and a fake batch worker that can be held,
slowed or made to fail."""

import contextlib
import json
import os
import signal
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from pathlib import Path

from helpers import free_port

from hf_seq2seq.serving.worker import BatchWorker

ROOT = Path(__file__).resolve().parents[1]
HOST = "127.0.0.1"


def get(url: str, timeout: float = 10) -> tuple[int, dict | str, dict]:
    """(status, JSON body or text, headers) of a GET."""
    return request(url, None, timeout=timeout)


def post_json(url: str, body, timeout: float = 60) -> tuple[int, dict | str, dict]:
    return request(url, json.dumps(body).encode(), {"Content-Type": "application/json"}, timeout)


def request(url: str, data: bytes | None, headers: dict | None = None, timeout: float = 60):
    req = urllib.request.Request(url, data=data, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=timeout) as response:
            status, raw, headers = response.status, response.read(), dict(response.headers)
    except urllib.error.HTTPError as error:
        status, raw, headers = error.code, error.read(), dict(error.headers)
    try:
        return status, json.loads(raw), headers
    except ValueError:
        return status, raw.decode(), headers


def wait_ready(url: str, process: subprocess.Popen | None = None, timeout: float = 180) -> None:
    """Poll GET /health until it answers 200 (the model is loaded)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process is not None and process.poll() is not None:
            output = process.log.read_text() if process.stdout is None else process.stdout.read()
            raise RuntimeError(f"the server exited with {process.returncode}:\n{output}")
        try:
            if get(f"{url}/health", timeout=5)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise TimeoutError(f"{url} was not ready after {timeout} s")


def start_server(
    model: Path | list[Path], port: int, *options: str, log: Path | None = None
) -> subprocess.Popen:
    """`python -m hf_seq2seq serve MODEL [MODEL ...] --port PORT ...` from the repository root; its output goes
    to `log`."""
    env = dict(os.environ, HF_HUB_OFFLINE="1", TOKENIZERS_PARALLELISM="false")
    models = [str(each) for each in (model if isinstance(model, list) else [model])]
    command = [sys.executable, "-m", "hf_seq2seq", "serve", *models, "--port", str(port), *options]
    if log is None:
        return subprocess.Popen(
            command, cwd=ROOT, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
        )
    with log.open("w") as output:  # the server writes through its own copy of the descriptor
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=output, stderr=subprocess.STDOUT)
    process.log = log  # what `wait_ready` shows if the server exits
    return process


@contextlib.contextmanager
def serving(model: Path | list[Path], *options: str, log: Path):
    """A `start_server` on a free port, ready: yields its URL, and stops it with SIGTERM on leaving."""
    port = free_port()
    process = start_server(model, port, *options, log=log)
    url = f"http://{HOST}:{port}"
    try:
        wait_ready(url, process)
        yield url
    finally:
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)


def metric(url: str, name: str, **labels: str) -> float:
    """The value of a sample of GET /metrics: summed over the samples of that name with `labels` (every
    model's, when `labels` names none)."""
    from prometheus_client.parser import text_string_to_metric_families

    text = get(f"{url}/metrics")[1]
    values = [
        sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
        if sample.name == name and labels.items() <= sample.labels.items()
    ]
    if not values:
        raise KeyError(name)
    return sum(values)


def wait_for(condition, timeout: float = 30, message: str = "condition") -> None:
    deadline = time.monotonic() + timeout
    while not condition():
        if time.monotonic() > deadline:
            raise TimeoutError(f"{message} not met after {timeout} s")
        time.sleep(0.02)


class ThreadServer:
    """A uvicorn server for `app` on a free local port, in a thread of this process (a context manager)."""

    def __init__(self, app):
        import uvicorn

        self.port = free_port(HOST)
        self.url = f"http://{HOST}:{self.port}"
        self.server = uvicorn.Server(uvicorn.Config(app, host=HOST, port=self.port, log_level="warning"))
        self.thread = threading.Thread(target=self.server.run, daemon=True)

    def __enter__(self) -> "ThreadServer":
        self.thread.start()
        wait_for(lambda: self.server.started, message="server started")
        return self

    def __exit__(self, *exc) -> None:
        self.server.should_exit = True
        self.thread.join(timeout=30)


class FakeWorker(BatchWorker):
    """Translates a sentence into its upper case; `gate` (set by default) holds every model call until set;
    a sentence containing "FAIL" makes its whole batch raise. `calls` records each batch."""

    name = "fake"

    def __init__(self):
        self.gate = threading.Event()
        self.gate.set()
        self.calls: list[list[str]] = []

    def translate(self, sentences, decoding):
        self.calls.append(list(sentences))
        if not self.gate.wait(timeout=60):
            raise TimeoutError("the test never opened the gate")
        if any("FAIL" in sentence for sentence in sentences):
            raise RuntimeError("worker failure on purpose")
        return [sentence.upper() for sentence in sentences]

"""Load test of `hf-seq2seq serve` on this machine, beside the same engine's offline throughput.

1. Offline, in this process: the engine's batch call (`TranslatorWorker.translate`, what the server's batcher
   calls) on the test sentences in batches of each `offline_batch_sizes` (1 is the one-at-a-time figure),
   for `offline_seconds` each: sentences/s.
2. Served: the server (`python -m hf_seq2seq serve`, same model, engine and precision) on 127.0.0.1; for each
   number of concurrent clients, that many clients each send one sentence per request (JSON, as
   LibreTranslate's clients do), the next as soon as the last is answered, for `warmup` then `duration`
   seconds. Counted: the requests answered within the measured window: sentences/s, latency percentiles
   (p50, p95, p99), errors (any status but 200, or a failed connection), and the mean model batch the
   server's /metrics reports over the window.

Everything runs on localhost, bounded in time: each level stops issuing requests at its end and waits at
most `request_timeout` for those in flight. The clients are asyncio (aiohttp), in this one process, so they
take little CPU from the server.
"""

from __future__ import annotations

import asyncio
import os
import signal
import statistics
import subprocess
import sys
import time
import urllib.request
from dataclasses import dataclass, field
from pathlib import Path

HOST = "127.0.0.1"


def load_sentences(
    data_path: str | None = None, sentences_file: str | None = None, max_sentences: int = 1000
) -> list[str]:
    """The fra-eng test split's English sources (or the non-blank lines of `sentences_file`)."""
    if sentences_file:
        sentences = [
            line for line in Path(sentences_file).read_text(encoding="utf-8").splitlines() if line.strip()
        ]
    else:
        from hf_seq2seq.data.loaders import load_named_dataset

        test = load_named_dataset("fra-eng", data_path=data_path, exclude_test_sets=["none"])["test"]
        sentences = list(test["src"])  # the test split only: no test set kept out of training, none read
    if not sentences:
        raise ValueError("no sentences to send")
    return sentences[:max_sentences]


def offline_throughput(
    worker, sentences: list[str], batch_sizes: list[int], seconds: float, decoding=None
) -> dict[int, float]:
    """Sentences/s of `worker`'s batch call (a `hf_seq2seq.serving.worker.BatchWorker`) at each batch size,
    over `seconds` each (after one warm-up)."""
    from hf_seq2seq.engines.decoding import Decoding

    decoding = decoding or Decoding()
    result = {}
    for batch_size in batch_sizes:
        batches = [sentences[i : i + batch_size] for i in range(0, len(sentences), batch_size)]
        batches = [b for b in batches if len(b) == batch_size] or batches[:1]
        worker.translate(batches[0], decoding)  # warm-up
        done, started, k = 0, time.perf_counter(), 0
        while True:
            batch = batches[k % len(batches)]
            worker.translate(batch, decoding)
            done, k = done + len(batch), k + 1
            elapsed = time.perf_counter() - started
            if elapsed >= seconds:
                break
        result[batch_size] = done / elapsed
    return result


def percentile(values: list[float], q: float) -> float | None:
    if not values:
        return None
    if len(values) == 1:
        return values[0]
    return statistics.quantiles(values, n=100, method="inclusive")[round(q) - 1]


async def load_level(
    url: str,
    sentences: list[str],
    clients: int,
    warmup: float,
    duration: float,
    request_timeout: float,
    request_fields: dict | None = None,
) -> dict:
    """`clients` concurrent clients for `warmup` + `duration` seconds, each request with `request_fields`
    beside its text (e.g. ``{"alternatives": 3, "confidence": true}``); what was answered in the window."""
    import aiohttp

    loop = asyncio.get_running_loop()
    start = loop.time()
    window = (start + warmup, start + warmup + duration)
    latencies, errors, error_kinds = [], 0, {}
    counter = iter(range(10**9))

    async def client(session) -> None:
        nonlocal errors
        while loop.time() < window[1]:
            text = sentences[next(counter) % len(sentences)]
            sent = loop.time()
            try:
                body = {"q": text, "source": "auto", "target": "fr", **(request_fields or {})}
                async with session.post(url, json=body) as response:
                    await response.read()
                    ok, kind = response.status == 200, str(response.status)
            except (aiohttp.ClientError, TimeoutError) as error:
                ok, kind = False, type(error).__name__
            answered = loop.time()
            if window[0] <= answered <= window[1]:
                if ok:
                    latencies.append(answered - sent)
                else:
                    errors += 1
                    error_kinds[kind] = error_kinds.get(kind, 0) + 1

    timeout = aiohttp.ClientTimeout(total=request_timeout)
    connector = aiohttp.TCPConnector(limit=clients)
    async with aiohttp.ClientSession(timeout=timeout, connector=connector) as session:
        await asyncio.gather(*(client(session) for _ in range(clients)))
    return {
        "clients": clients,
        "sentences_per_s": len(latencies) / duration,
        "answered": len(latencies),
        "errors": errors,
        "error_kinds": error_kinds,
        "p50_ms": _ms(percentile(latencies, 50)),
        "p95_ms": _ms(percentile(latencies, 95)),
        "p99_ms": _ms(percentile(latencies, 99)),
    }


def _ms(seconds: float | None) -> float | None:
    return None if seconds is None else round(seconds * 1000, 1)


def batch_counts(base_url: str) -> tuple[float, float]:
    """(model batches, sentences in them) so far, from the server's /metrics."""
    from prometheus_client.parser import text_string_to_metric_families

    with urllib.request.urlopen(f"{base_url}/metrics", timeout=10) as response:
        text = response.read().decode()
    values = {}  # every model's batches together
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            values[sample.name] = values.get(sample.name, 0.0) + sample.value
    return values.get("hf_seq2seq_batch_sentences_count", 0.0), values.get(
        "hf_seq2seq_batch_sentences_sum", 0.0
    )


def start_server(model: str, port: int, engine: str, precision: str, options: list[str], log: Path):
    command = [sys.executable, "-m", "hf_seq2seq", "serve", model, "--host", HOST, "--port", str(port)]
    command += ["--engine", engine, "--precision", precision, *options]
    env = dict(os.environ, HF_HUB_OFFLINE="1")
    return subprocess.Popen(command, stdout=log.open("w"), stderr=subprocess.STDOUT, env=env)


def wait_ready(base_url: str, process: subprocess.Popen, timeout: float = 300) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"the server exited with status {process.returncode}")
        try:
            with urllib.request.urlopen(f"{base_url}/health", timeout=5) as response:
                if response.status == 200:
                    return
        except OSError:
            pass
        time.sleep(0.5)
    raise TimeoutError(f"the server was not ready after {timeout} s")


def free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind((HOST, 0))
        return sock.getsockname()[1]


@dataclass(frozen=True)
class ServeBenchmarkSettings:
    """How `run_serve_benchmark` measures: the engine and precision, the load levels (`concurrency` clients,
    `warmup` then `duration` seconds each, a request waited for at most `request_timeout`), the offline
    batch sizes and seconds, the server's extra options, where its log goes (None: a temporary folder), and
    the fields every request sends beside its text (`alternatives`, `confidence`, ...)."""

    engine: str = "torch"
    precision: str = "fp32"
    concurrency: tuple[int, ...] = (1, 8, 32, 64)
    duration: float = 20.0
    warmup: float = 3.0
    offline_batch_sizes: tuple[int, ...] = (1, 32, 64)
    offline_seconds: float = 10.0
    server_options: tuple[str, ...] = ()
    request_timeout: float = 60.0
    log_dir: str | None = None
    request_fields: dict = field(default_factory=dict)


def run_serve_benchmark(
    model: str, sentences: list[str], settings: ServeBenchmarkSettings = ServeBenchmarkSettings()
) -> dict:
    """Offline throughput, then the served load levels (see the module docstring), measured as `settings`
    says. Returns a dict for JSON."""
    import platform
    import tempfile

    from hf_seq2seq.serving.worker import worker_loader

    engine, precision, duration, warmup = (
        settings.engine,
        settings.precision,
        settings.duration,
        settings.warmup,
    )
    server_options, request_fields = settings.server_options, settings.request_fields
    model = str(Path(model).resolve())
    loaded = worker_loader(model, engine, precision)()
    offline = offline_throughput(
        loaded, sentences, list(settings.offline_batch_sizes), settings.offline_seconds
    )
    del loaded
    log_dir = Path(settings.log_dir or tempfile.mkdtemp(prefix="hf-seq2seq-serve-benchmark-"))
    log_dir.mkdir(parents=True, exist_ok=True)
    port = free_port()
    base_url = f"http://{HOST}:{port}"
    process = start_server(model, port, engine, precision, list(server_options), log_dir / "server.log")
    try:
        wait_ready(base_url, process)
        levels = served_levels(
            base_url,
            sentences,
            settings.concurrency,
            warmup,
            duration,
            settings.request_timeout,
            request_fields,
        )
    finally:
        process.send_signal(signal.SIGTERM)
        try:
            process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            process.kill()
    result = {
        "model": model,
        "engine": engine,
        "precision": precision if engine == "torch" else None,
        "sentences": len(sentences),
        "mean_words": round(statistics.mean(len(s.split()) for s in sentences), 1),
        "duration_s": duration,
        "warmup_s": warmup,
        "server_options": list(server_options),
        "request_fields": request_fields or {},
        "machine": {"cpus": os.cpu_count(), "processor": platform.processor() or platform.machine()},
        "offline_sentences_per_s": {str(size): round(rate, 1) for size, rate in offline.items()},
        "served": levels,
        "server_log": str(log_dir / "server.log"),
    }
    result["ratios"] = ratios(result)
    return result


def served_levels(
    base_url: str,
    sentences: list[str],
    concurrency: tuple[int, ...],
    warmup: float,
    duration: float,
    request_timeout: float,
    request_fields: dict | None = None,
) -> list[dict]:
    """Each load level against the running server, with the mean model batch over its window; each printed
    as it ends."""
    levels = []
    print(HEADER, flush=True)
    for clients in concurrency:
        batches_before = batch_counts(base_url)
        level = asyncio.run(
            load_level(
                f"{base_url}/translate", sentences, clients, warmup, duration, request_timeout, request_fields
            )
        )
        batches_after = batch_counts(base_url)
        count = batches_after[0] - batches_before[0]
        level["mean_batch"] = round((batches_after[1] - batches_before[1]) / count, 1) if count else None
        levels.append(level)
        print(format_level(level), flush=True)
    return levels


def ratios(result: dict) -> dict:
    """Served throughput at 32 clients against the offline batch-32 and one-at-a-time figures (if measured)."""
    served = {level["clients"]: level["sentences_per_s"] for level in result["served"]}
    offline = {int(size): rate for size, rate in result["offline_sentences_per_s"].items()}
    out = {}
    if 32 in served and offline.get(32):
        out["served32_over_offline_batch32"] = round(served[32] / offline[32], 2)
    if 32 in served and offline.get(1):
        out["served32_over_offline_batch1"] = round(served[32] / offline[1], 2)
    if 32 in served and served.get(1):
        out["served32_over_served1"] = round(served[32] / served[1], 2)
    return out


def format_level(level: dict) -> str:
    def cell(value):
        return "-" if value is None else f"{value:,.1f}"

    return (
        f"{level['clients']:>7} | {level['sentences_per_s']:>11,.1f} | {cell(level['p50_ms']):>8} | "
        f"{cell(level['p95_ms']):>8} | {cell(level['p99_ms']):>8} | {level['errors']:>6} | "
        f"{cell(level['mean_batch']):>10}"
    )


HEADER = (
    "clients | sentences/s |  p50 ms |  p95 ms |  p99 ms | errors | mean batch\n"
    "------- | ----------- | ------- | ------- | ------- | ------ | ----------"
)


def format_result(result: dict) -> str:
    engine = result["engine"] + (f" {result['precision']}" if result.get("precision") else "")
    lines = [
        f"hf-seq2seq serve on {HOST}, {engine}, {result['sentences']} test sentences "
        f"({result['mean_words']} words on average), {result['duration_s']:g} s per level after "
        f"{result['warmup_s']:g} s of warm-up, {result['machine']['cpus']} CPUs",
        "",
        "offline (the engine's batch call in one process): "
        + ", ".join(
            f"batch {size}: {rate:,.1f} sentences/s"
            for size, rate in result["offline_sentences_per_s"].items()
        ),
        "",
        HEADER,
        *(format_level(level) for level in result["served"]),
    ]
    r = result["ratios"]
    if r:
        lines.append("")
        if "served32_over_offline_batch32" in r:
            lines.append(
                f"32 clients / offline batch 32: {r['served32_over_offline_batch32']:.2f} (target >= 0.70)"
            )
        if "served32_over_offline_batch1" in r:
            lines.append(
                f"32 clients / offline one at a time: {r['served32_over_offline_batch1']:.2f} (target >= 5)"
            )
        if "served32_over_served1" in r:
            lines.append(f"32 clients / 1 client: {r['served32_over_served1']:.2f}")
    return "\n".join(lines)

"""`hf-seq2seq serve`: the real server on a local port. LibreTranslate's own client translates through it;
every error case gets its status and message and the server answers afterwards; concurrent requests get their
own translations; SIGTERM loses no accepted request. Failing batches, a full queue, slow batches and
disconnecting clients are tested on an injected fake worker (`serve_helpers.FakeWorker`)."""

import asyncio
import importlib.metadata
import json
import random
import signal
import socket
import threading
import time
from concurrent.futures import ThreadPoolExecutor

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("prometheus_client")

from helpers import free_port  # noqa: E402
from serve_helpers import (  # noqa: E402
    HOST,
    FakeWorker,
    ThreadServer,
    get,
    metric,
    post_json,
    request,
    serving,
    start_server,
    wait_for,
    wait_ready,
)

from hf_seq2seq.engines.base import translate  # noqa: E402
from hf_seq2seq.engines.decoding import Decoding  # noqa: E402
from hf_seq2seq.engines.factory import load_translator  # noqa: E402
from hf_seq2seq.models.languages import model_languages  # noqa: E402
from hf_seq2seq.serving.app import create_app  # noqa: E402
from hf_seq2seq.serving.batcher import Batcher  # noqa: E402
from hf_seq2seq.serving.config import ServeConfig  # noqa: E402
from hf_seq2seq.serving.worker import worker_loader  # noqa: E402

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

API_KEY = "test-key-1"
WORDS = "how are you i like cheese good morning the a cat dog sat on mat is here big small red house".split()


def random_texts(n: int, seed: int = 0) -> list[str]:
    """`n` different texts of one or two sentences over the tiny tokenizer's words."""
    rng = random.Random(seed)
    texts = set()
    while len(texts) < n:
        sentences = [
            " ".join(rng.choices(WORDS, k=rng.randint(2, 7))) + " ." for _ in range(rng.randint(1, 2))
        ]
        texts.add(" ".join(sentences))
    return sorted(texts)


# A random model never ends a translation: its length is the limit, which the saved length rule takes from a
# batch's longest source. A fixed limit makes a sentence's translation the same in any batch.
MAX_NEW_TOKENS = 8


@pytest.fixture(scope="module")
def reference(trained):
    """Translations one sentence at a time with the package's `translate`, as `hf-seq2seq translate` gives
    them (with the same fixed length limit as the servers under test)."""
    translator = load_translator(trained)
    decoding = Decoding(max_new_tokens=MAX_NEW_TOKENS)

    def one(text: str) -> str:
        if not text.strip():  # translate() fails on a call with no sentence at all
            return text
        return translate(translator, [text], 1, decoding, split_sentences=True)[0]

    return one


@pytest.fixture(scope="module")
def server(trained, tmp_path_factory):
    """`python -m hf_seq2seq serve` on the tiny model, with an API key and small request limits."""
    folder = tmp_path_factory.mktemp("serve")
    keys = folder / "keys.txt"
    keys.write_text(f"# keys\n{API_KEY}\n")
    with serving(
        trained, "--api-keys-file", str(keys), "--max-chars", "400", "--max-texts", "80",
        "--max-new-tokens", str(MAX_NEW_TOKENS), log=folder / "server.log",
    ) as url:  # fmt: skip
        yield url


def test_the_folder_records_its_languages(trained):
    assert model_languages(trained) == ("en", "fr")


def test_libretranslate_client_translates_through_the_server(server, reference):
    from libretranslatepy import LibreTranslateAPI

    client = LibreTranslateAPI(server, api_key=API_KEY)
    text = "the cat sat on the mat . i like cheese ."
    assert client.translate(text, "en", "fr") == reference(text)
    assert client.translate(text, "auto", "fr") == reference(text)
    assert client.languages() == [
        {"code": "en", "name": "English", "targets": ["fr"]},
        {"code": "fr", "name": "French", "targets": []},
    ]
    # libretranslatepy's translate() url-encodes q as one string, so a list goes as LibreTranslate's other
    # clients send it: a JSON list, or a repeated form field
    texts = ["the cat sat on the mat .", "", "good morning ! how are you ?"]
    status, body, _ = post_json(
        f"{server}/translate", {"q": texts, "source": "en", "target": "fr", "api_key": API_KEY}
    )
    assert status == 200 and body == {"translatedText": [reference(t) for t in texts]}
    form = (
        "&".join(f"q={t.replace(' ', '+')}" for t in texts[::2]) + f"&source=en&target=fr&api_key={API_KEY}"
    )
    status, body, _ = request(f"{server}/translate", form.encode())  # urllib's default: url-encoded form
    assert status == 200 and body == {"translatedText": [reference(t) for t in texts[::2]]}


def test_health_and_prometheus_metrics(server, trained):
    from prometheus_client.parser import text_string_to_metric_families

    status, body, _ = get(f"{server}/health")
    (model,) = body["models"]
    assert status == 200 and body["status"] == "ok" and body["pivot"] is True
    assert body["version"] == importlib.metadata.version("hf_seq2seq")
    assert model == {
        "engine": "torch", "source": "en", "target": "fr", "precision": "fp32",
        "weights_bytes": model["weights_bytes"],
    }  # fmt: skip
    assert (
        model["weights_bytes"] >= 4 * load_translator(trained).parameters
    )  # fp32 weights, and their buffers
    status, text, headers = get(f"{server}/metrics")
    assert status == 200 and headers["content-type"].startswith("text/plain")
    names = {family.name for family in text_string_to_metric_families(text)}
    assert {
        "hf_seq2seq_http_requests", "hf_seq2seq_translate_latency_seconds", "hf_seq2seq_batch_sentences",
        "hf_seq2seq_queue_sentences", "hf_seq2seq_model_ready",
    } <= names  # fmt: skip
    assert metric(server, "hf_seq2seq_model_ready") == 1


def form(**fields) -> bytes:
    from urllib.parse import urlencode

    return urlencode(fields).encode()


GOOD = {"q": "the cat .", "source": "en", "target": "fr", "api_key": API_KEY}
ERRORS = {
    "invalid JSON": (b'{"q": "the cat"', {"Content-Type": "application/json"}, 400, "Invalid JSON format: "),
    "JSON not an object": (b'["the cat"]', {"Content-Type": "application/json"}, 400, "Invalid JSON format"),
    "missing q": (json.dumps({"source": "en", "api_key": API_KEY}).encode(), {}, 400, "missing q parameter"),
    "q a number": (json.dumps(GOOD | {"q": 3}).encode(), {}, 400, "q must be a string or a list"),
    "q a list of numbers": (
        json.dumps(GOOD | {"q": [1, 2]}).encode(),
        {},
        400,
        "q must be a string or a list",
    ),
    "unknown source": (form(**GOOD | {"source": "de"}), {}, 400, "de is not supported"),
    "reversed pair": (
        form(**GOOD | {"source": "fr", "target": "en"}),
        {},
        400,
        "English (en) is not available as a target language from French (fr)",
    ),
    "unknown target": (form(**GOOD | {"target": "es"}), {}, 400, "es is not supported"),
    "unknown format": (form(**GOOD | {"format": "xml"}), {}, 400, "xml format is not supported"),
    "num_beams not a number": (form(**GOOD | {"num_beams": "many"}), {}, 400, "num_beams must be an integer"),
    "num_beams too large": (form(**GOOD | {"num_beams": 99}), {}, 400, "num_beams must be between 1 and 8"),
    "empty body": (b"", {"Content-Type": "application/x-www-form-urlencoded"}, 400, "empty body"),
    "unsupported content type": (b"the cat", {"Content-Type": "text/plain"}, 415, "unsupported content type"),
    "too many characters": (form(**GOOD | {"q": "the cat . " * 50}), {}, 413, "the limit is 400"),
    "too many texts": (json.dumps(GOOD | {"q": ["a"] * 81}).encode(), {}, 413, "too many texts: 81"),
    "missing API key": (form(q="the cat ."), {}, 400, "Please contact the server operator to get an API key"),
    "wrong API key": (form(**GOOD | {"api_key": "nope"}), {}, 403, "Invalid API key"),
}


@pytest.mark.parametrize("case", ERRORS, ids=ERRORS)
def test_each_error_gets_its_status_and_message_and_the_server_goes_on(server, reference, case):
    body, headers, status, message = ERRORS[case]
    if body.startswith(b"{") and not headers:
        headers = {"Content-Type": "application/json"}
    got_status, got_body, _ = request(f"{server}/translate", body, headers)
    assert got_status == status and message in got_body["error"], got_body
    assert post_json(f"{server}/translate", GOOD)[1] == {"translatedText": reference("the cat .")}


def test_a_body_over_the_limit_is_refused_before_it_is_read(server, reference):
    with socket.create_connection((HOST, int(server.rsplit(":", 1)[1])), timeout=30) as sock:
        sock.sendall(
            b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: 2000000\r\n\r\n{"
        )  # the server answers without waiting for the rest
        answer = sock.makefile("rb").read().decode()
    assert answer.startswith("HTTP/1.1 413 ")
    assert '{"error":"the request body has 2000000 bytes; the limit is 1048576"}' in answer
    assert post_json(f"{server}/translate", GOOD)[1] == {"translatedText": reference("the cat .")}


def test_unknown_paths_and_methods_are_json_errors(server):
    assert get(f"{server}/nowhere")[:2] == (404, {"error": "GET /nowhere: Not Found"})
    assert get(f"{server}/translate")[:2] == (405, {"error": "GET /translate: Method Not Allowed"})


def test_64_concurrent_requests_each_get_their_own_translations(server, reference):
    texts = random_texts(64, seed=1)
    expected = [reference(text) for text in texts]
    batches_before = metric(server, "hf_seq2seq_batch_sentences_count")
    barrier = threading.Barrier(64)

    def send(text):
        barrier.wait()
        return post_json(f"{server}/translate", GOOD | {"q": text})

    with ThreadPoolExecutor(64) as pool:
        answers = list(pool.map(send, texts))
    assert [status for status, _, _ in answers] == [200] * 64
    assert [body["translatedText"] for _, body, _ in answers] == expected
    sentences = sum(text.count(" .") for text in texts)
    batches = metric(server, "hf_seq2seq_batch_sentences_count") - batches_before
    assert batches < sentences / 2, f"{sentences} sentences went in {batches} batches: not merged"


def test_sigterm_during_a_burst_answers_every_accepted_request(trained, tmp_path, reference):
    port = free_port()
    url = f"http://{HOST}:{port}"
    # a long wait for the batch to fill keeps the burst's requests queued when SIGTERM comes
    options = ["--max-wait-ms", "4000", "--arrival-gap-ms", "4000", "--max-new-tokens", str(MAX_NEW_TOKENS)]
    process = start_server(trained, port, *options, log=tmp_path / "server.log")
    try:
        wait_ready(url, process)
        texts = random_texts(24, seed=2)
        with ThreadPoolExecutor(len(texts)) as pool:
            futures = [
                pool.submit(post_json, f"{url}/translate", {"source": "en", "target": "fr", "q": text})
                for text in texts
            ]
            wait_for(
                lambda: metric(url, "hf_seq2seq_translate_in_progress") == len(texts), message="accepted"
            )
            process.send_signal(signal.SIGTERM)
            time.sleep(0.5)
            with pytest.raises(OSError):  # no longer accepting
                socket.create_connection((HOST, port), timeout=2).close()
            answers = [future.result() for future in futures]
        assert process.wait(timeout=60) in (0, -signal.SIGTERM)
    finally:
        if process.poll() is None:
            process.kill()
    assert [status for status, _, _ in answers] == [200] * len(texts)
    assert [body["translatedText"] for _, body, _ in answers] == [reference(text) for text in texts]
    assert "Waiting for application shutdown" in (tmp_path / "server.log").read_text()


# ------------------------------------------------------------------------------------- an injected worker


def fake_server(worker: FakeWorker, **config) -> ThreadServer:
    return ThreadServer(create_app(lambda: worker, ServeConfig(**config)))


def post_in_thread(url: str, text) -> tuple[threading.Thread, list]:
    result = []
    thread = threading.Thread(
        target=lambda: result.append(
            post_json(f"{url}/translate", {"source": "en", "target": "fr", "q": text})
        )
    )
    thread.start()
    return thread, result


def test_a_worker_error_fails_only_the_requests_of_its_input():
    worker = FakeWorker()
    with fake_server(worker, max_wait_ms=300, arrival_gap_ms=300) as server:
        worker.gate.clear()
        bad, bad_result = post_in_thread(server.url, "This will FAIL. Sadly.")
        good, good_result = post_in_thread(server.url, ["Fine.", "Also fine."])
        wait_for(lambda: worker.calls, message="a batch in the worker")
        worker.gate.set()
        bad.join(30), good.join(30)
        # one batch of both requests (in the order they arrived, which two client threads do not fix), retried
        assert sorted(worker.calls[0]) == sorted(["This will FAIL.", "Sadly.", "Fine.", "Also fine."])
        status, body, _ = bad_result[0]
        assert status == 500 and body == {
            "error": "translation failed: RuntimeError: worker failure on purpose"
        }
        assert good_result[0][:2] == (200, {"translatedText": ["FINE.", "ALSO FINE."]})
        assert post_json(f"{server.url}/translate", {"source": "en", "target": "fr", "q": "Still here?"})[
            :2
        ] == (
            200,
            {"translatedText": "STILL HERE?"},
        )
        assert (
            metric(server.url, "hf_seq2seq_batch_failures_total") == 2
        )  # the batch, then the bad input alone


def test_a_full_queue_answers_503_with_retry_after_and_then_serves_the_queue():
    worker = FakeWorker()
    with fake_server(worker, max_wait_ms=0, max_queue_sentences=3) as server:
        worker.gate.clear()
        threads = [post_in_thread(server.url, "First.")]
        wait_for(lambda: worker.calls, message="a batch in the worker")  # taken off the queue, held
        threads.append(post_in_thread(server.url, "Second. Third. Fourth."))
        wait_for(lambda: metric(server.url, "hf_seq2seq_queue_sentences") == 3, message="queue full")
        status, body, headers = post_json(
            f"{server.url}/translate", {"source": "en", "target": "fr", "q": "One more."}
        )
        assert status == 503 and "the server is busy: 3 sentences are queued" in body["error"]
        assert int(headers["retry-after"]) >= 1
        worker.gate.set()
        for thread, _ in threads:
            thread.join(30)
        assert [result[0][:2] for _, result in threads] == [
            (200, {"translatedText": "FIRST."}),
            (200, {"translatedText": "SECOND. THIRD. FOURTH."}),
        ]
        assert (
            post_json(f"{server.url}/translate", {"source": "en", "target": "fr", "q": "One more."})[0] == 200
        )


def test_health_and_metrics_answer_during_a_slow_batch():
    worker = FakeWorker()
    with fake_server(worker) as server:
        worker.gate.clear()
        thread, result = post_in_thread(server.url, "Slow.")
        wait_for(lambda: worker.calls, message="a batch in the worker")
        started = time.monotonic()
        assert get(f"{server.url}/health")[0] == 200
        assert metric(server.url, "hf_seq2seq_translate_in_progress") == 1
        assert time.monotonic() - started < 2
        worker.gate.set()
        thread.join(30)
        assert result[0][:2] == (200, {"translatedText": "SLOW."})


def test_a_client_that_disconnects_is_dropped_and_disturbs_no_one():
    worker = FakeWorker()
    with fake_server(worker, max_wait_ms=0) as server:
        worker.gate.clear()
        first, first_result = post_in_thread(server.url, "Held.")
        wait_for(lambda: worker.calls, message="a batch in the worker")
        body = json.dumps({"q": "Gone.", "source": "en", "target": "fr"}).encode()
        leaving = socket.create_connection((HOST, server.port))
        leaving.sendall(
            b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            b"Content-Length: %d\r\n\r\n%s" % (len(body), body)
        )
        staying, staying_result = post_in_thread(server.url, "Staying.")
        wait_for(lambda: metric(server.url, "hf_seq2seq_queue_sentences") == 2, message="both queued")
        leaving.close()
        wait_for(lambda: metric(server.url, "hf_seq2seq_queue_sentences") == 1, message="dropped")
        worker.gate.set()
        first.join(30), staying.join(30)
        assert first_result[0][:2] == (200, {"translatedText": "HELD."})
        assert staying_result[0][:2] == (200, {"translatedText": "STAYING."})
        assert worker.calls == [["Held."], ["Staying."]]


def test_the_service_answers_503_while_the_model_loads():
    loaded = threading.Event()
    worker = FakeWorker()

    def load():
        loaded.wait(30)
        return worker

    with ThreadServer(create_app(load)) as server:
        status, body, headers = get(f"{server.url}/health")
        assert (status, body, headers["retry-after"]) == (503, {"status": "loading"}, "5")
        status, body, _ = post_json(f"{server.url}/translate", {"source": "en", "target": "fr", "q": "Hi."})
        assert status == 503 and "loading" in body["error"]
        assert metric(server.url, "hf_seq2seq_model_ready") == 0
        loaded.set()
        wait_ready(server.url)
        assert post_json(f"{server.url}/translate", {"source": "en", "target": "fr", "q": "Hi."})[:2] == (
            200,
            {"translatedText": "HI."},
        )


def test_a_model_that_fails_to_load_is_reported_by_health():
    def load():
        raise FileNotFoundError("no such model")

    with ThreadServer(create_app(load)) as server:
        wait_for(lambda: get(f"{server.url}/health")[1]["status"] == "failed", message="failed")
        status, body, _ = get(f"{server.url}/health")
        assert (status, body["error"]) == (503, "FileNotFoundError: no such model")


def test_batches_respect_size_tokens_and_decoding():
    calls = []

    def call(sentences, decoding):
        calls.append((list(sentences), decoding.num_beams))
        return [s.upper() for s in sentences]

    async def main():
        config = ServeConfig(max_batch_sentences=3, max_batch_tokens=12, max_wait_ms=20)
        batcher = Batcher(call, config)
        batcher.start()
        greedy, beams = Decoding(), Decoding(num_beams=2)
        jobs = [
            batcher.translate(["a", "b"], [2, 2], greedy),
            batcher.translate(["c"], [2], beams),
            batcher.translate(["d", "e", "f"], [2, 2, 7], greedy),
        ]
        results = await asyncio.gather(*jobs)
        await batcher.close()
        return results

    assert asyncio.run(main()) == [["A", "B"], ["C"], ["D", "E", "F"]]
    # greedy first (size limit 3), then the beam request; "f" (7 tokens) would make 2 x 7 > 12 with "e"
    assert calls == [(["a", "b", "d"], None), (["c"], 2), (["e"], None), (["f"], None)]


def test_the_load_benchmark_counts_answers_latencies_and_errors():
    pytest.importorskip("aiohttp")
    from hf_seq2seq.serving.loadtest import load_level

    worker = FakeWorker()
    with fake_server(worker) as server:
        # 2 s measured: 1 s answered nothing once, beside another test worker and two pip installs
        level = asyncio.run(load_level(f"{server.url}/translate", ["Hello.", "FAIL."], 4, 0.2, 2.0, 10))
    assert level["answered"] > 0 and level["errors"] > 0 and set(level["error_kinds"]) == {"500"}
    assert level["p50_ms"] <= level["p95_ms"] <= level["p99_ms"]
    assert level["sentences_per_s"] == level["answered"] / 2.0


def test_the_ctranslate2_engine_serves_an_export(trained, tmp_path):
    pytest.importorskip("ctranslate2")
    from hf_seq2seq.export.ctranslate2 import export_ctranslate2

    export = export_ctranslate2(trained, tmp_path / "ct2", quantization="int8")
    translator = load_translator(export, "ctranslate2")
    decoding = Decoding(max_new_tokens=MAX_NEW_TOKENS)
    texts = random_texts(12, seed=3)
    expected = [translate(translator, [t], 1, decoding, split_sentences=True)[0] for t in texts]
    app = create_app(worker_loader(export, "ctranslate2"), ServeConfig(decoding=decoding))
    with ThreadServer(app) as server:
        wait_ready(server.url)
        (model,) = get(f"{server.url}/health")[1]["models"]
        assert model == {
            "engine": "ctranslate2", "source": "en", "target": "fr", "quantization": "int8",
            "weights_bytes": (export / "model.bin").stat().st_size,
        }  # fmt: skip
        with ThreadPoolExecutor(len(texts)) as pool:
            answers = list(
                pool.map(
                    lambda t: post_json(f"{server.url}/translate", {"source": "en", "target": "fr", "q": t}),
                    texts,
                )
            )
    assert [body["translatedText"] for _, body, _ in answers] == expected


def test_clients_answered_by_a_batch_join_the_next_one_with_those_already_waiting():
    """Without the wait after a batch, closed-loop clients split into two alternating half-full batches."""
    calls, release = [], threading.Event()

    def call(sentences, decoding):
        calls.append(list(sentences))
        release.wait(30)
        return sentences

    async def main():
        batcher = Batcher(call, ServeConfig(max_wait_ms=1000, arrival_gap_ms=200))
        batcher.start()
        first = asyncio.ensure_future(batcher.translate(["a"], [2], Decoding()))
        while not calls:
            await asyncio.sleep(0.01)
        waiting = asyncio.ensure_future(batcher.translate(["x"], [2], Decoding()))  # queued during [a]
        await asyncio.sleep(0.05)
        release.set()
        await first
        await asyncio.sleep(0.02)  # the client answered by [a] sends its next request
        again = await batcher.translate(["a2"], [2], Decoding())
        results = [await waiting, again]
        await batcher.close()
        return results

    assert asyncio.run(main()) == [["x"], ["a2"]]
    assert calls == [["a"], ["x", "a2"]]

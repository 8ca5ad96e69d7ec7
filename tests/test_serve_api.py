"""The rest of LibreTranslate's API on `hf-seq2seq serve`: ``alternatives``, ``POST /detect`` and
``source: "auto"``, ``GET /frontend/settings``, the server's own ``confidence``; LibreTranslate's limits (requests
per minute per key or address, characters per text, texts per request, per-key limits from a keys file that
is re-read when it changes); and the hardening cases (infinite numbers, ``max_new_tokens`` past the model's
positions, deeply nested JSON, a client that leaves mid-upload, a hung model call, a slow client at shutdown,
a wrong export folder).

The fields are tested in process on the model that memorised `helpers.MEMORISED_PAIRS` (its answers compared
with the engine called directly) or on `serve_helpers.FakeWorker`; client addresses, disconnects and timeouts
on a real uvicorn in a thread; LibreTranslate's own Python client, the limits under concurrent clients, the
shutdown and the command's checks on the real server process."""

import json
import os
import signal
import socket
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from http.client import HTTPConnection

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("py3langid")

from helpers import WordTranslator, free_port  # noqa: E402
from serve_helpers import (  # noqa: E402
    HOST,
    ROOT,
    FakeWorker,
    ThreadServer,
    get,
    post_json,
    serving,
    start_server,
    wait_for,
    wait_ready,
)
from starlette.testclient import TestClient  # noqa: E402

from hf_seq2seq.engines.base import Translator  # noqa: E402
from hf_seq2seq.engines.factory import load_translator  # noqa: E402
from hf_seq2seq.formats.aligned import translate_aligned  # noqa: E402
from hf_seq2seq.formats.documents import DOCUMENT_FORMATS  # noqa: E402
from hf_seq2seq.formats.glossary import Glossary  # noqa: E402
from hf_seq2seq.serving import limits  # noqa: E402
from hf_seq2seq.serving.app import create_app  # noqa: E402
from hf_seq2seq.serving.config import ServeConfig  # noqa: E402
from hf_seq2seq.serving.limits import KeyLimits, KeysFileError, RateLimiter, parse_keys  # noqa: E402
from hf_seq2seq.serving.worker import TranslatorWorker  # noqa: E402

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

ENGLISH = "Where is the station? It is very late."
GERMAN = "Wo ist der Bahnhof? Es ist schon sehr spät."


@pytest.fixture(scope="module")
def worker(memorising_folder) -> TranslatorWorker:
    """The memorising model as the server's worker, shared by the in-process apps of this module."""
    return TranslatorWorker(load_translator(memorising_folder), "en", "fr")


def client(worker=None, **config) -> TestClient:
    """A test client of the app over `worker` (a new `FakeWorker` when None), the model loaded at startup."""
    load = (lambda: worker) if worker is not None else FakeWorker
    return TestClient(create_app(load, ServeConfig(**config), load_in_background=False))


def translate(c: TestClient, **body):
    response = c.post("/translate", json={"source": "en", "target": "fr"} | body)
    return response.status_code, response.json()


# --------------------------------------------------------------------------------------------- alternatives


def test_alternatives_are_the_n_best_of_beam_search_per_text(worker):
    engine = worker.translator
    with client(worker) as c:
        status, body = translate(c, q="how are you ?", alternatives=2)
        best, *others = engine.translate_hypotheses(["how are you ?"], 3)[0]
        assert status == 200 and body["translatedText"] == best == "comment allez vous ?"
        assert body["alternatives"] == [h for h in dict.fromkeys(others) if h != best]
        assert len(body["alternatives"]) <= 2 and "confidence" not in body
        # a list gets a list per text; a text of two sentences joins each sentence's k-th best
        status, body = translate(c, q=["how are you ?", "", "thank you !\ngood morning !"], alternatives=1)
        thanks, morning = engine.translate_hypotheses(["thank you !", "good morning !"], 2)
        assert body["translatedText"] == ["comment allez vous ?", "", "merci !\nbonjour !"]
        joined = f"{thanks[1]}\n{morning[1]}"
        assert body["alternatives"][1:] == [[], [joined] if joined != "merci !\nbonjour !" else []]
        # LibreTranslate's web page sends alternatives=3 in a form
        response = c.post(
            "/translate", data={"q": "thank you !", "source": "en", "target": "fr", "alternatives": "3"}
        )
        assert response.status_code == 200 and len(response.json()["alternatives"]) <= 3
        # no alternatives asked: LibreTranslate's plain answer
        assert translate(c, q="thank you !", alternatives=0)[1] == {"translatedText": "merci !"}
        # HTML gets none, as LibreTranslate answers
        status, body = translate(c, q="<p>thank you !</p>", format="html", alternatives=2)
        assert status == 200 and body == {"translatedText": "<p>merci !</p>", "alternatives": []}


@pytest.mark.parametrize(
    "value, message",
    [
        (b"4", "Invalid request: alternatives parameter must be <= 3"),
        (b'"many"', "Invalid request: alternatives parameter is not a number"),
        (b"1e999", "Invalid request: alternatives parameter is not a number"),
    ],
)
def test_alternatives_past_the_limit_or_not_a_number_get_libretranslates_400(value, message):
    with client() as c:
        body = b'{"source": "en", "target": "fr", "q": "a", "alternatives": ' + value + b"}"
        response = c.post("/translate", content=body, headers={"Content-Type": "application/json"})
        assert (response.status_code, response.json()) == (400, {"error": message})


def test_the_alternatives_limit_stays_below_the_beams():
    with pytest.raises(ValueError, match="alternatives_limit must be from 0 to max_beams - 1"):
        ServeConfig(max_beams=4, alternatives_limit=4)
    assert ServeConfig(max_beams=4, alternatives_limit=0).alternatives_limit == 0


# ----------------------------------------------------------------------------------------------- confidence


def test_confidence_is_the_models_score_of_each_text(worker):
    texts = ["how are you ?", "thank you !\ngood morning !", ""]
    expected = translate_aligned(worker.translator, texts, alignments=False, scores=True)
    with client(worker) as c:
        status, body = translate(c, q=texts, confidence=True)
        assert status == 200 and body["translatedText"] == [e.target for e in expected]
        assert body["confidence"][2] is None  # nothing to translate
        assert body["confidence"][:2] == pytest.approx([e.score.confidence for e in expected[:2]], abs=2e-4)
        assert all(0.9 < value <= 1 for value in body["confidence"][:2])  # memorised
        form = c.post(
            "/translate",
            data={
                "source": "en",
                "target": "fr",
                "q": "i like cheese .",
                "confidence": "true",
                "alternatives": "1",
            },
        )
        body = form.json()
        assert body["translatedText"] == "je aime le fromage ." and isinstance(body["confidence"], float)
        assert set(body) == {"translatedText", "alternatives", "confidence"}
        # a glossary's terms are scored as they stand in the translation
        glossary = Glossary({"cheese": "brie"})
        (forced,) = translate_aligned(
            worker.translator, ["i like cheese ."], glossary=glossary, alignments=False, scores=True
        )
        status, body = translate(c, q="i like cheese .", glossary={"cheese": "brie"}, confidence=True)
        assert body == {
            "translatedText": forced.target,
            "confidence": pytest.approx(forced.score.confidence, abs=2e-4),
        }
        assert forced.target == "je aime le brie ." and body["confidence"] < expected[0].score.confidence
        assert translate(c, q="<p>a</p>", format="html", confidence=True) == (
            400,
            {"error": "confidence is given for format 'text' only"},
        )
        assert translate(c, q="a", confidence="maybe") == (
            400,
            {"error": "confidence must be true or false, got 'maybe'"},
        )


def test_an_engine_without_scores_or_alternatives_says_so():
    with client() as c:  # FakeWorker: a batch call and nothing else
        assert translate(c, q="a", confidence=True) == (
            400,
            {"error": "confidence needs the model's scores: this server's engine gives no scores"},
        )
        assert translate(c, q="a", alternatives=1) == (
            400,
            {"error": "alternatives: this server's engine gives no alternative translations"},
        )


# --------------------------------------------------------------------------------- /detect, source "auto"


def test_detect_lists_the_likeliest_languages_as_libretranslate_does(worker):
    with client(worker) as c:
        body = c.post("/detect", data={"source": "en", "target": "fr", "q": ENGLISH}).json()
        assert len(body) == 3 and body[0]["language"] == "en" and body[0]["confidence"] >= 90
        assert all(set(entry) == {"language", "confidence"} for entry in body)
        assert (
            c.post("/detect", json={"source": "en", "target": "fr", "q": [GERMAN, GERMAN]}).json()[0][
                "language"
            ]
            == "de"
        )
        response = c.post("/detect", json={"source": "en"})
        assert (response.status_code, response.json()) == (
            400,
            {"error": "Invalid request: missing q parameter"},
        )


def test_source_auto_answers_the_detected_language_and_refuses_another_one(worker):
    with client(worker) as c:
        status, body = translate(c, q="the big dog sat on the mat .", source="auto")
        assert status == 200 and body["translatedText"] == "le grand chien est sur le tapis ."
        assert body["detectedLanguage"]["language"] == "en" and body["detectedLanguage"]["confidence"] > 80
        status, body = translate(c, q=GERMAN, source="auto")
        assert status == 400 and body["error"].startswith("the text is in German (de, ")
        assert body["error"].endswith("% confidence), not English: this server translates en to fr only")
        # too short to judge: let through
        status, body = translate(c, q="hallo !", source="auto")
        assert status == 200 and body["detectedLanguage"]["language"] == "en"
        status, body = translate(c, q=["how are you ?", ""], source="auto")
        assert [d["language"] for d in body["detectedLanguage"]] == ["en", "en"]
        status, body = translate(c, q=["how are you ?", GERMAN], source="auto")
        assert status == 400 and body["error"].startswith("text 2 of q is in German (de, ")
        # a source given is trusted, as LibreTranslate does
        status, body = translate(c, q=GERMAN, source="en")
        assert status == 200 and "detectedLanguage" not in body


# ------------------------------------------------------------------------------------------ frontend settings


def test_frontend_settings_tell_libretranslates_page_what_this_server_does(worker, tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("a-key\n")
    with client(worker, char_limit=500) as c:
        assert c.get("/frontend/settings").json() == {
            "charLimit": 500,
            "frontendTimeout": 500,
            "apiKeys": False,
            "keyRequired": False,
            "suggestions": False,
            "filesTranslation": True,
            "supportedFilesFormat": sorted(DOCUMENT_FORMATS),
            "language": {
                "source": {"code": "en", "name": "English"},
                "target": {"code": "fr", "name": "French"},
            },
        }
    with client(worker, api_keys_file=str(keys)) as c:
        settings = c.get("/frontend/settings").json()
        assert settings["charLimit"] == ServeConfig.max_chars
        assert settings["apiKeys"] is settings["keyRequired"] is True

    class WithoutAlignments(WordTranslator):
        align = Translator.align

    plain = TranslatorWorker(WithoutAlignments({}), "en", "fr")
    with client(plain, cors_origins=()) as c:
        assert c.get("/frontend/settings").json()["supportedFilesFormat"] == [".txt"]
        assert (
            "access-control-allow-origin"
            not in c.get("/languages", headers={"Origin": "https://a.org"}).headers
        )


def test_cors_lets_the_origins_given_call_from_a_browser():
    with client() as c:  # "*" by default, as LibreTranslate
        answer = c.post(
            "/translate", json={"source": "en", "target": "fr", "q": "a"}, headers={"Origin": "https://a.org"}
        )
        assert answer.headers["access-control-allow-origin"] == "*"
        preflight = c.options(
            "/translate",
            headers={"Origin": "https://a.org", "Access-Control-Request-Method": "POST",
                     "Access-Control-Request-Headers": "content-type"},
        )  # fmt: skip
        assert preflight.status_code == 200 and "POST" in preflight.headers["access-control-allow-methods"]


# ----------------------------------------------------------------------------------------------------- limits


def test_the_request_limit_counts_a_moving_minute_per_client():
    now = [0.0]
    rates = RateLimiter(clock=lambda: now[0])
    assert rates.hit("a", 2) is None
    now[0] = 10.0
    assert rates.hit("a", 2) is None
    now[0] = 20.0
    assert rates.hit("a", 2) == pytest.approx(40.0)  # the first request leaves the window at 60 s
    assert rates.hit("b", 2) is None  # another client is not touched
    now[0] = 60.5
    assert rates.hit("a", 2) is None
    assert rates.hit("a", 3, cost=2) == pytest.approx(9.5)  # 10 s and 60.5 s in the window: one must go
    assert rates.hit("c", 3, cost=4) == limits.WINDOW_SECONDS  # never within its limit
    now[0] = 200.0
    rates.hit("d", 1)
    assert set(rates._times) == {"d"}  # idle clients are forgotten


def test_keys_files_give_each_key_its_limits_and_bad_lines_are_refused():
    assert parse_keys(["# comment", "", "one", "two 60", "three - 500", "four 5 -"]) == {
        "one": KeyLimits(), "two": KeyLimits(60), "three": KeyLimits(None, 500), "four": KeyLimits(5, None),
    }  # fmt: skip
    for line, problem in (
        ("k 0", "request limit"),
        ("k 5 x", "character limit"),
        ("a b c d", "expected KEY"),
    ):
        with pytest.raises(KeysFileError, match=problem):
            parse_keys([line], "keys.txt")


def test_each_key_gets_its_own_request_and_character_limits(tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("slow 2\nwide - 40\nplain\n")
    with client(req_limit=4, char_limit=20, api_keys_file=str(keys)) as c:

        def send(key, q="a b ."):
            response = c.post("/translate", json={"source": "en", "target": "fr", "q": q, "api_key": key})
            return response.status_code, response.json(), response.headers

        assert [send("slow")[0] for _ in range(2)] == [200, 200]
        status, body, headers = send("slow")
        assert (status, body) == (429, {"error": "Slowdown: 2 per 1 minute"})
        assert 1 <= int(headers["retry-after"]) <= 60
        # a key without its own limit has the server's; a list of texts counts one per text
        assert send("plain", ["a .", "b .", "c ."])[:2] == (200, {"translatedText": ["A .", "B .", "C ."]})
        assert send("plain", ["d .", "e ."])[:2] == (429, {"error": "Slowdown: 4 per 1 minute"})
        assert send("plain")[0] == 200
        # characters per text: LibreTranslate's 400 and message; a key's own limit overrides the server's
        assert send("wide", "x" * 21)[0] == 200
        assert send("wide", "x" * 41)[:2] == (
            400,
            {"error": "Invalid request: request (41) exceeds text limit (40)"},
        )
        assert send("wide", ["x", "x" * 30])[0] == 200
        status, body, _ = send("slow2", "x")
        assert (status, body) == (403, {"error": "Invalid API key"})
    with client(batch_limit=2) as c:
        response = c.post("/translate", json={"source": "en", "target": "fr", "q": ["a", "b", "c"]})
        assert response.status_code == 400
        assert response.json() == {"error": "Invalid request: request (3) exceeds text limit (2)"}
        assert c.post("/translate", json={"source": "en", "target": "fr", "q": ["a", "b"]}).status_code == 200


def test_the_keys_file_is_read_again_when_it_changes(tmp_path, monkeypatch):
    monkeypatch.setattr(limits, "CHECK_SECONDS", 0.0)
    keys = tmp_path / "keys.txt"
    keys.write_text("one\n")
    with client(api_keys_file=str(keys)) as c:

        def status(key):
            return c.post(
                "/translate", json={"source": "en", "target": "fr", "q": "a", "api_key": key}
            ).status_code

        assert (status("one"), status("two")) == (200, 403)
        keys.write_text("one\ntwo 1\n")
        assert (status("two"), status("two")) == (200, 429)
        keys.write_text("two 1\n")
        assert status("one") == 403
        keys.write_text("two 1 with too many fields\n")  # a bad file keeps the keys it had
        assert (status("one"), status("two")) == (403, 429)
        keys.unlink()
        assert status("two") == 429
        keys.write_text("# no keys: none is needed\n")
        assert status("anyone") == 200


def test_the_limit_is_per_client_address_without_keys():
    with ThreadServer(create_app(FakeWorker, ServeConfig(req_limit=2))) as server:

        def send(address: str) -> int:
            connection = HTTPConnection(HOST, server.port, timeout=30, source_address=(address, 0))
            body = json.dumps({"q": "a .", "source": "en", "target": "fr"})
            connection.request("POST", "/translate", body, {"Content-Type": "application/json"})
            status = connection.getresponse().status
            connection.close()
            return status

        assert [send("127.0.0.1") for _ in range(3)] == [200, 200, 429]
        assert [send("127.0.0.2") for _ in range(2)] == [200, 200]
        assert send("127.0.0.1") == 429


# -------------------------------------------------------------------------------------------------- hardening


@pytest.mark.parametrize(
    "body, message",
    [
        (
            b'{"source": "en", "target": "fr", "q": "a", "num_beams": 1e999}',
            "num_beams must be an integer, got inf",
        ),
        (
            b'{"source": "en", "target": "fr", "q": "a", "num_beams": -Infinity}',
            "num_beams must be an integer, got -inf",
        ),
        (
            b'{"source": "en", "target": "fr", "q": "a", "num_beams": NaN}',
            "num_beams must be an integer, got nan",
        ),
        (
            b'{"source": "en", "target": "fr", "q": "a", "max_new_tokens": 1e400}',
            "max_new_tokens must be an integer, got inf",
        ),
        (
            b'{"source": "en", "target": "fr", "q": "a", "length_penalty": Infinity}',
            "length_penalty must be between -10.0 and 10.0, got inf",
        ),
        (
            b'{"source": "en", "target": "fr", "q": ' + b"[" * 100_000 + b"]" * 100_000 + b"}",
            "Invalid JSON format: nested too deeply",
        ),
    ],
    ids=["1e999", "-Infinity", "NaN", "max_new_tokens 1e400", "length_penalty Infinity", "nested"],
)
def test_infinite_numbers_and_deep_nesting_are_400(body, message):
    with client() as c:
        response = c.post("/translate", content=body, headers={"Content-Type": "application/json"})
        assert (response.status_code, response.json()) == (400, {"error": message})
        nested = c.post(
            "/translate",
            data={"source": "en", "target": "fr", "q": "a", "glossary": "[" * 100_000 + "]" * 100_000},
        )
        assert nested.status_code == 400 and "glossary must be a JSON object" in nested.json()["error"]


def test_max_new_tokens_stops_at_the_models_positions(worker):
    positions = worker.translator.model.config.max_position_embeddings  # 32
    with client(worker) as c:
        assert translate(c, q="thank you !", max_new_tokens=positions)[0] == 200
        assert translate(c, q="thank you !", max_new_tokens=positions + 1) == (
            400,
            {"error": f"max_new_tokens must be between 1 and {positions}, got {positions + 1}"},
        )


def http_requests(url: str) -> dict[tuple[str, str], float]:
    """``hf_seq2seq_http_requests_total`` by (path, status)."""
    from prometheus_client.parser import text_string_to_metric_families

    out = {}
    for family in text_string_to_metric_families(get(f"{url}/metrics")[1]):
        for sample in family.samples:
            if sample.name == "hf_seq2seq_http_requests_total":
                out[sample.labels["path"], sample.labels["status"]] = sample.value
    return out


def test_a_client_that_leaves_mid_upload_is_a_499_not_a_server_error():
    with ThreadServer(create_app(FakeWorker, ServeConfig())) as server:
        for path, kind, start in (
            ("/translate", "application/json", b'{"source": "en", "target": "fr", "q": "a'),
            (
                "/translate_file",
                "multipart/form-data; boundary=b",
                b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\nabc',
            ),
        ):
            with socket.create_connection((HOST, server.port)) as sock:
                sock.sendall(
                    f"POST {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {kind}\r\nContent-Length: 5000\r\n\r\n".encode()
                    + start
                )
                time.sleep(0.2)
            wait_for(lambda p=path: (p, "499") in http_requests(server.url), message=f"{path} counted")
        counted = http_requests(server.url)
        assert not [key for key in counted if key[1].startswith("5")], counted
        assert post_json(f"{server.url}/translate", {"source": "en", "target": "fr", "q": "Still here."})[
            :2
        ] == (
            200,
            {"translatedText": "STILL HERE."},
        )


def test_a_hung_model_call_times_out_and_health_says_so_until_it_returns():
    hung = FakeWorker()
    hung.gate.clear()
    with client(hung, batch_timeout_s=0.5) as c:
        started = time.monotonic()
        response = c.post("/translate", json={"source": "en", "target": "fr", "q": "Held."})
        assert response.status_code == 504 and time.monotonic() - started < 10
        assert response.json() == {
            "error": "translation timed out: the model took more than 0.5 s on the batch"
        }
        health = c.get("/health")
        assert health.status_code == 503 and health.json()["status"] == "stalled"
        refused = c.post("/translate", json={"source": "en", "target": "fr", "q": "Next."})
        assert refused.status_code == 503 and "the server cannot translate now" in refused.json()["error"]
        assert "hf_seq2seq_model_ready 0.0" in c.get("/metrics").text
        hung.gate.set()  # the late call returns
        wait_for(lambda: c.get("/health").status_code == 200, message="ready again")
        assert c.post("/translate", json={"source": "en", "target": "fr", "q": "Next."}).json() == {
            "translatedText": "NEXT."
        }


def test_a_batcher_that_dies_fails_its_queue_and_health():
    with client() as c:
        service = c.app.state.service

        def broken():
            raise RuntimeError("a bug")

        service.models[0].batcher._take = broken
        response = c.post("/translate", json={"source": "en", "target": "fr", "q": "a ."})
        assert (
            response.status_code == 503
            and "the batcher stopped: RuntimeError: a bug" in response.json()["error"]
        )
        assert c.get("/health").json()["status"] == "failed"
        assert c.post("/translate", json={"source": "en", "target": "fr", "q": "a ."}).status_code == 503


# ------------------------------------------------------------------------------------- the server process


@pytest.fixture(scope="module")
def server(memorising_folder, tmp_path_factory):
    """`python -m hf_seq2seq serve` on the memorising model, with two keys: one limited to 5 requests a
    minute, one with the server's (no) limit."""
    folder = tmp_path_factory.mktemp("serve-api")
    keys = folder / "keys.txt"
    keys.write_text("limited 5\nfree\n")
    with serving(memorising_folder, "--api-keys-file", str(keys), log=folder / "server.log") as url:
        yield url


def test_libretranslates_client_translates_detects_and_lists_languages(server):
    from libretranslatepy import LibreTranslateAPI

    lt = LibreTranslateAPI(server, api_key="free")
    assert lt.translate("the big dog sat on the mat .\nthank you !", "en", "fr") == (
        "le grand chien est sur le tapis .\nmerci !"
    )
    assert lt.translate("the big dog sat on the mat .", "auto", "fr") == "le grand chien est sur le tapis ."
    detected = lt.detect(ENGLISH)
    assert detected[0]["language"] == "en" and 90 <= detected[0]["confidence"] <= 100
    assert [language["code"] for language in lt.languages()] == ["en", "fr"]
    status, body, _ = post_json(
        f"{server}/translate",
        {
            "q": ["how are you ?"],
            "source": "auto",
            "target": "fr",
            "alternatives": 2,
            "confidence": True,
            "api_key": "free",
        },
    )
    assert status == 200 and body["translatedText"] == ["comment allez vous ?"]
    assert set(body) == {"translatedText", "detectedLanguage", "alternatives", "confidence"}
    assert get(f"{server}/frontend/settings")[1]["keyRequired"] is True


def test_under_concurrent_clients_only_the_one_over_its_limit_gets_429(server):
    def send(key: str) -> int:
        return post_json(
            f"{server}/translate", {"source": "en", "target": "fr", "q": "thank you !", "api_key": key}
        )[0]

    with ThreadPoolExecutor(16) as pool:
        limited = pool.map(send, ["limited"] * 12)
        free = pool.map(send, ["free"] * 24)
        limited, free = list(limited), list(free)
    assert sorted(limited) == [200] * 5 + [429] * 7
    assert free == [200] * 24


def test_sigterm_does_not_wait_past_the_graceful_timeout_for_a_slow_client(memorising_folder, tmp_path):
    port = free_port()
    process = start_server(memorising_folder, port, "--graceful-timeout", "2", log=tmp_path / "server.log")
    wait_ready(f"http://{HOST}:{port}", process)
    with socket.create_connection((HOST, port)) as slow:  # a body that never comes
        slow.sendall(
            b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n{"
        )
        time.sleep(0.5)
        started = time.monotonic()
        process.send_signal(signal.SIGTERM)
        process.wait(timeout=60)
        assert time.monotonic() - started < 20
    assert process.returncode in (0, -signal.SIGTERM)  # uvicorn ends by raising the signal it caught
    assert "timeout graceful shutdown exceeded" in (tmp_path / "server.log").read_text()


def test_serve_exits_with_the_folder_error_on_a_wrong_onnx_folder(memorising_folder):
    pytest.importorskip("onnxruntime")
    done = subprocess.run(
        [sys.executable, "-m", "hf_seq2seq", "serve", str(memorising_folder), "--engine", "onnxruntime",
         "--port", str(free_port())],
        cwd=ROOT, env=dict(os.environ, HF_HUB_OFFLINE="1"), capture_output=True, text=True, timeout=120,
    )  # fmt: skip
    assert done.returncode != 0
    assert "is a saved model folder, not an ONNX export" in done.stderr


def test_serve_refuses_a_bad_keys_file_and_limits_that_do_not_go_together(
    memorising_folder, tmp_path, monkeypatch, capsys
):
    """The command's own checks, in this process (a refused start loads no model): it ends with the reason
    before a server starts."""
    from hf_seq2seq.cli import main, serve

    def start(*args):
        raise AssertionError("the server started")

    monkeypatch.setattr(serve, "run_uvicorn", start)
    monkeypatch.setattr(serve, "setup_logging", lambda: None)  # the test session's logging stays as it is
    keys = tmp_path / "keys.txt"
    keys.write_text("key 0\n")
    for options, message in (
        (["--api-keys-file", str(keys)], "the request limit must be a positive integer"),
        (["--api-keys-file", str(tmp_path / "none.txt")], "cannot read the API keys file"),
        (["--alternatives-limit", "8"], "alternatives_limit must be from 0 to max_beams - 1 (7)"),
    ):
        with pytest.raises(SystemExit) as ended:
            main(["serve", str(memorising_folder), *options])  # as `hf-seq2seq serve` runs it
        said = f"{ended.value.code}\n{capsys.readouterr().err}"  # SystemExit(reason) or argparse's error
        assert ended.value.code not in (0, None) and message in said, said


def test_the_load_benchmark_sends_the_request_fields_given():
    pytest.importorskip("aiohttp")
    import argparse
    import asyncio

    from hf_seq2seq.cli.serve_benchmark import request_fields
    from hf_seq2seq.serving.loadtest import load_level

    p = argparse.ArgumentParser()
    assert request_fields(p, ["alternatives=3", "confidence=true"]) == {"alternatives": 3, "confidence": True}
    with pytest.raises(SystemExit):
        request_fields(p, ["alternatives"])
    with ThreadServer(create_app(FakeWorker, ServeConfig())) as server:  # a worker without alternatives: 400
        level = asyncio.run(
            load_level(f"{server.url}/translate", ["Hello."], 2, 0.1, 2.0, 10, {"alternatives": 1})
        )
    assert level["answered"] == 0 and set(level["error_kinds"]) == {"400"}


# ----------------------------------------------------------------------------------------------------- /spec


def test_the_openapi_document_describes_every_route_and_method_and_no_other():
    from starlette.routing import Route

    with client() as c:
        spec = c.get("/spec").json()
        routes = {
            (route.path, method.lower())
            for route in c.app.routes
            if isinstance(route, Route)
            for method in route.methods - {"HEAD"}
        }
        documented = {(path, method) for path, methods in spec["paths"].items() for method in methods}
        assert documented == routes
        assert spec["openapi"].startswith("3.") and spec["info"]["version"]
        fields = spec["paths"]["/translate"]["post"]["requestBody"]["content"]["application/json"]["schema"]
        assert {
            "q",
            "source",
            "target",
            "format",
            "alternatives",
            "confidence",
            "glossary",
            "num_beams",
        } <= set(fields["properties"])
        assert fields["properties"]["alternatives"]["maximum"] == ServeConfig.alternatives_limit
        index = c.get("/").json()["endpoints"]
        assert sorted(index) == sorted(f"{method.upper()} {path}" for path, method in routes)

"""LibreTranslate's own expectations of its API, over HTTP against `hf-seq2seq serve` on the memorising models:
the assertions of LibreTranslate's ``libretranslate/tests/test_api/*.py`` (github.com/LibreTranslate/LibreTranslate,
AGPL-3.0; ported, not copied: its tests use ``en``/``es``, these the models' ``en``/``fr``), and the status codes,
error texts and field sources its ``libretranslate/app.py`` defines, replayed on a default server serving both
directions (an en->fr and an fr->en model in one process, as LibreTranslate serves every pair it has), one with a
request limit and one with API keys and LibreTranslate's character and batch limits (en->fr only; three
processes, started together). Where this server differs on purpose, docs/serving.md says so."""

import json
import signal
import urllib.parse

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pytest.importorskip("py3langid")

from helpers import free_port  # noqa: E402
from serve_helpers import HOST, get, post_json, request, start_server, wait_ready  # noqa: E402

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

PAIR = {"source": "en", "target": "fr"}


@pytest.fixture(scope="session")
def servers(memorising_folder, memorising_fr_en_folder, tmp_path_factory):
    """{"default": url, "limited": url, "keys": url}: the three servers, started at once; the default one
    serves en->fr and fr->en. For the session, not the module: a pytest-xdist worker that comes back to this file
    after another's tests would start all three again (22-29 s each time on 2 cores)."""
    folder = tmp_path_factory.mktemp("compat")
    (folder / "keys.txt").write_text("free\n")
    options = {
        "default": ([memorising_folder, memorising_fr_en_folder],),
        "limited": (memorising_folder, "--req-limit", "3"),
        "keys": (
            memorising_folder, "--api-keys-file", str(folder / "keys.txt"), "--char-limit", "20",
            "--batch-limit", "2",
        ),
    }  # fmt: skip
    processes, urls = {}, {}
    try:
        for name, (models, *flags) in options.items():
            port = free_port()
            processes[name] = start_server(models, port, *flags, log=folder / f"{name}.log")
            urls[name] = f"http://{HOST}:{port}"
        for name, url in urls.items():
            wait_ready(url, processes[name])
        yield urls
    finally:
        for process in processes.values():
            process.send_signal(signal.SIGTERM)
        for process in processes.values():
            process.wait(timeout=60)


@pytest.fixture(scope="module")
def url(servers):
    return servers["default"]


def post_form(url: str, fields: dict | None = None, query: dict | None = None):
    """A url-encoded POST (as LibreTranslate's tests send ``data=``); `query` in the URL."""
    if query:
        url += "?" + urllib.parse.urlencode(query)
    body = urllib.parse.urlencode(fields, doseq=True).encode() if fields else b""
    return request(url, body, {"Content-Type": "application/x-www-form-urlencoded"})


def upload(url: str, fields: dict, name: str, data: bytes):
    import requests

    response = requests.post(f"{url}/translate_file", data=fields, files={"file": (name, data)}, timeout=60)
    return response.status_code, response.json()


# -------------------------------------------------------------------- LibreTranslate's tests/test_api, ported


def test_api_detect_language(url):
    status, body, _ = post_form(f"{url}/detect", {"q": "Hello"})
    assert status == 200 and len(body) >= 1
    assert "confidence" in body[0] and "language" in body[0]


def test_api_detect_language_must_fail_without_parameters(url):
    status, body, _ = post_form(f"{url}/detect")
    assert status == 400 and "error" in body


def test_api_detect_language_must_fail_bad_request_type(url):
    assert get(f"{url}/detect")[0] == 405


def test_api_get_frontend_settings(url):
    assert get(f"{url}/frontend/settings")[0] == 200


def test_api_get_languages(url):
    status, body, _ = get(f"{url}/languages")
    assert status == 200 and len(body) >= 1
    assert "code" in body[0] and "name" in body[0]
    assert body == [
        {"code": "en", "name": "English", "targets": ["fr"]},
        {"code": "fr", "name": "French", "targets": ["en"]},
    ]  # each source with its targets: the two pairs, as LibreTranslate lists them


@pytest.mark.parametrize("path", ["/languages", "/health", "/spec"])
def test_get_endpoints_must_fail_bad_request_type(url, path):
    assert post_form(f"{url}{path}", {"q": "x"})[0] == 405


def test_api_get_health(url):
    status, body, _ = get(f"{url}/health")
    assert status == 200 and body["status"] == "ok"  # this server adds the engine's facts


def test_api_get_spec(url):
    status, body, _ = get(f"{url}/spec")
    assert status == 200 and body["openapi"].startswith("3.")


def test_api_translate(url):
    status, body, _ = post_form(f"{url}/translate", {"q": "thank you !", "format": "text"} | PAIR)
    assert status == 200 and body == {"translatedText": "merci !"}


def test_api_translate_both_directions(url):
    status, body, _ = post_form(f"{url}/translate", {"q": "merci !", "source": "fr", "target": "en"})
    assert status == 200 and body == {"translatedText": "thank you !"}
    status, body, _ = post_json(
        f"{url}/translate", {"q": ["merci !", "bonjour !"], "source": "fr", "target": "en"}
    )
    assert status == 200 and body == {"translatedText": ["thank you !", "good morning !"]}


def test_api_translate_auto_routes_each_text_to_the_model_of_its_language(url):
    english, french = "the big dog sat on the mat .", "le grand chien est sur le tapis ."
    status, body, _ = post_json(f"{url}/translate", {"q": english, "source": "auto", "target": "fr"})
    assert status == 200 and body["translatedText"] == french and body["detectedLanguage"]["language"] == "en"
    status, body, _ = post_json(f"{url}/translate", {"q": french, "source": "auto", "target": "en"})
    assert (
        status == 200 and body["translatedText"] == english and body["detectedLanguage"]["language"] == "fr"
    )
    # a French text into French: no model translates it, so it is refused rather than sent to en->fr
    status, body, _ = post_json(f"{url}/translate", {"q": french, "source": "auto", "target": "fr"})
    assert status == 400 and body["error"].startswith("the text is in French (fr, ")


def test_api_translate_batch(url):
    status, body, _ = post_json(
        f"{url}/translate", {"q": ["thank you !", "how are you ?"], "format": "text"} | PAIR
    )
    assert status == 200 and body["translatedText"] == ["merci !", "comment allez vous ?"]


@pytest.mark.parametrize("field", ["source", "target"])
def test_api_translate_unsupported_language(url, field):
    status, body, _ = post_form(f"{url}/translate", {"q": "Hello", "format": "text"} | PAIR | {field: "zz"})
    assert (status, body) == (400, {"error": "zz is not supported"})


def test_api_translate_missing_parameter(url):
    status, body, _ = post_form(f"{url}/translate", {"format": "text"} | PAIR)
    assert (status, body) == (400, {"error": "Invalid request: missing q parameter"})


# --------------------------------------------------------------- what LibreTranslate's app.py defines, replayed


@pytest.mark.parametrize("q", ["", []])
def test_an_empty_q_is_a_missing_q(url, q):
    assert post_json(f"{url}/translate", {"q": q} | PAIR)[1] == {
        "error": "Invalid request: missing q parameter"
    }


@pytest.mark.parametrize("field", ["source", "target"])
def test_a_missing_language_is_named(url, field):
    body = {"q": "thank you !"} | {k: v for k, v in PAIR.items() if k != field}
    expected = (400, {"error": f"Invalid request: missing {field} parameter"})
    assert post_json(f"{url}/translate", body)[:2] == expected
    assert upload(url, {k: v for k, v in PAIR.items() if k != field}, "a.txt", b"thank you !") == expected


def test_a_pair_the_server_does_not_translate_gets_libretranslates_text(servers):
    body = {"q": "merci", "source": "fr", "target": "en", "api_key": "free"}
    status, body, _ = post_json(f"{servers['keys']}/translate", body)  # the en->fr server
    assert (status, body) == (
        400,
        {"error": "English (en) is not available as a target language from French (fr)"},
    )


def test_format_json_key_and_file_errors_are_libretranslates(url):
    assert post_json(f"{url}/translate", {"q": "hi", "format": "xml"} | PAIR)[:2] == (
        400,
        {"error": "xml format is not supported"},
    )
    assert request(f"{url}/translate", b'["hi"]', {"Content-Type": "application/json"})[:2] == (
        400,
        {"error": "Invalid JSON format"},
    )
    status, body, _ = request(f"{url}/translate", b'{"q": ', {"Content-Type": "application/json"})
    assert status == 400 and body["error"].startswith("Invalid JSON format")
    assert upload(url, PAIR, "sheet.xlsx", b"PK\x03\x04") == (
        400,
        {"error": "Invalid request: file format not supported"},
    )
    assert post_json(f"{url}/translate", {"q": "hi", "alternatives": 4} | PAIR)[:2] == (
        400,
        {"error": "Invalid request: alternatives parameter must be <= 3"},
    )
    assert post_form(f"{url}/translate", {"q": "hi", "alternatives": "many"} | PAIR)[:2] == (
        400,
        {"error": "Invalid request: alternatives parameter is not a number"},
    )


def test_suggestions_are_disabled_as_on_a_default_libretranslate(url):
    assert post_json(f"{url}/suggest", {"q": "hi", "s": "salut"} | PAIR)[:2] == (
        403,
        {"error": "Suggestions are disabled on this server."},
    )


def test_any_origin_may_call_from_a_browser_by_default(url):
    status, _, headers = request(f"{url}/languages", None, {"Origin": "https://elsewhere.example"})
    assert status == 200 and headers["access-control-allow-origin"] == "*"
    preflight = urllib.request.Request(
        f"{url}/translate",
        method="OPTIONS",
        headers={
            "Origin": "https://elsewhere.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "content-type",
        },
    )
    with urllib.request.urlopen(preflight, timeout=10) as response:
        assert response.status == 200 and "POST" in response.headers["access-control-allow-methods"]


def test_fields_in_the_query_string_of_a_post_are_read(url):
    query = {"q": "thank you !"} | PAIR
    assert post_form(f"{url}/translate", query=query)[:2] == (200, {"translatedText": "merci !"})
    status, body, _ = post_form(f"{url}/translate", {"q": "thank you !"}, query=PAIR)
    assert (status, body) == (200, {"translatedText": "merci !"})


def test_libretranslates_python_client(url):
    from libretranslatepy import LibreTranslateAPI

    lt = LibreTranslateAPI(url)
    assert lt.translate("thank you !", "en", "fr") == "merci !"
    assert lt.translate("merci !", "fr", "en") == "thank you !"  # the swap button
    assert lt.detect("Where is the station? It is very late.")[0]["language"] == "en"
    assert [language["code"] for language in lt.languages()] == ["en", "fr"]


# ------------------------------------------------------------------------------ limits, keys, forwarded addresses


def test_keys_missing_and_wrong_get_libretranslates_status_and_text(servers):
    url = servers["keys"]
    assert post_json(f"{url}/translate", {"q": "thank you !"} | PAIR)[:2] == (
        400,
        {"error": "Please contact the server operator to get an API key"},
    )
    assert post_json(f"{url}/translate", {"q": "thank you !", "api_key": "nope"} | PAIR)[:2] == (
        403,
        {"error": "Invalid API key"},
    )
    status, body, _ = post_form(f"{url}/translate", {"q": "thank you !"} | PAIR, query={"api_key": "free"})
    assert (status, body) == (200, {"translatedText": "merci !"})


def test_the_character_and_batch_limits_count_as_libretranslate(servers):
    url = servers["keys"]
    key = {"api_key": "free"} | PAIR
    assert post_json(f"{url}/translate", {"q": "x" * 21} | key)[:2] == (
        400,
        {"error": "Invalid request: request (21) exceeds text limit (20)"},
    )
    assert post_json(f"{url}/translate", {"q": ["a", "b", "c"]} | key)[:2] == (
        400,
        {"error": "Invalid request: request (3) exceeds text limit (2)"},
    )
    crlf = "thank you !\r\n" + "x" * 8  # 21 characters as sent, 20 once CRLF is LF
    status, body, _ = post_form(f"{url}/translate", {"q": crlf} | key)
    assert status == 200, body
    assert post_json(f"{url}/translate", {"q": crlf} | key)[0] == 400  # JSON is counted as sent


def test_forwarded_addresses_are_not_trusted_without_the_flag(servers):
    """12 requests, each claiming another address, against --req-limit 3: the connection's address counts."""
    url = servers["limited"]
    statuses = []
    for n in range(12):
        body = json.dumps({"q": "thank you !"} | PAIR).encode()
        headers = {"Content-Type": "application/json", "X-Forwarded-For": f"203.0.113.{n}"}
        statuses.append(request(f"{url}/translate", body, headers))
    assert [status for status, _, _ in statuses] == [200] * 3 + [429] * 9
    assert statuses[-1][1] == {"error": "Slowdown: 3 per 1 minute"}

"""Requests meant to knock the server over (issue 48's fourteen kinds), each answered with a clear 4xx and
quickly: subtitles that made line wrapping quadratic, markup nested a thousand deep, lone surrogates, over-long
download names, absurd timestamps, a zip bomb, a glossary that multiplies an answer, documents of too many
sentences, uploads that fill the disk, a body sent a byte at a time, wrong API keys guessed at speed, a file
that costs one request whatever its size, a ``Host`` header echoed into links. (Forwarded addresses, which need
the command's uvicorn settings, are in `test_libretranslate_compat.py`.)

In process, on `helpers.WordTranslator` (instant, and it aligns): what is measured is the server's own work."""

import io
import json
import socket
import time
import zipfile

import pytest

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")

from helpers import WordTranslator  # noqa: E402
from serve_helpers import HOST, ThreadServer, request  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from hf_seq2seq.serving.app import create_app  # noqa: E402
from hf_seq2seq.serving.config import ServeConfig  # noqa: E402
from hf_seq2seq.serving.worker import TranslatorWorker  # noqa: E402

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

LEXICON = {"the": "le", "cat": "chat", "dog": "chien", "sees": "voit", "is": "est", "here": "ici"}
PAIR = {"source": "en", "target": "fr"}


def app(**config):
    return create_app(
        lambda: TranslatorWorker(WordTranslator(LEXICON), "en", "fr"),
        ServeConfig(**config),
        load_in_background=False,
    )


def client(**config) -> TestClient:
    return TestClient(app(**config))


@pytest.fixture(scope="module")
def c():
    with client() as c:
        yield c


def upload(c: TestClient, name: str, data: bytes, **fields):
    return c.post("/translate_file", data=PAIR | fields, files={"file": (name, data)})


def raw_json(c: TestClient, path: str, text: str):
    """POST `text` as a JSON body as it is (JSON may spell a lone surrogate: ``"\\ud800"``)."""
    return c.post(path, content=text.encode(), headers={"Content-Type": "application/json"})


# ------------------------------------------------------------------------------- 1, 5: subtitles (branch subs)


def test_a_cue_of_1500_lines_is_answered_within_seconds():
    """Line wrapping was O(lines x words^2): this 11 KiB cue kept a worker busy for over 10 minutes."""
    cue = "\n".join("the cat" for _ in range(1500))
    data = f"1\n00:00:01,000 --> 00:00:04,000\n{cue}\n".encode()
    boundary = "hostile-boundary"
    body = (
        (
            f'--{boundary}\r\nContent-Disposition: form-data; name="source"\r\n\r\nen\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="target"\r\n\r\nfr\r\n'
            f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="long.srt"\r\n\r\n'
        ).encode()
        + data
        + f"\r\n--{boundary}--\r\n".encode()
    )
    with ThreadServer(app()) as server:
        started = time.monotonic()
        status, answer, _ = request(
            f"{server.url}/translate_file",
            body,
            {"Content-Type": f"multipart/form-data; boundary={boundary}"},
            10,
        )
        assert status == 200, answer
        assert time.monotonic() - started < 10


def test_an_absurd_subtitle_timestamp_is_a_400_naming_it(c):
    data = b"1\n99999999999:00:01,000 --> 99999999999:00:04,000\nthe cat\n"
    response = upload(c, "absurd.srt", data)
    assert response.status_code == 400, response.text
    assert "time" in response.json()["error"].lower()


# ---------------------------------------------------------------------------------- 2, 8: markup, documents


@pytest.mark.parametrize("tag", ["b", "span"])
def test_markup_nested_a_thousand_deep_is_a_400_not_a_recursion_error(c, tag):
    html = f"<{tag}>a" * 1000 + f"</{tag}>"  # 7 KB at most: within the character limit
    for response in (
        c.post("/translate", json={"q": html, "format": "html"} | PAIR),
        upload(c, "deep.html", html.encode()),
    ):
        assert response.status_code == 400, response.text
        assert "nested more than 100 deep" in response.json()["error"]


def test_five_thousand_unclosed_inline_tags_are_refused_at_once(c):
    started = time.monotonic()
    response = upload(c, "unclosed.html", b"<b>the cat " * 5000)
    assert response.status_code == 400 and "nested" in response.json()["error"]
    assert time.monotonic() - started < 5


def test_a_document_past_its_sentences_or_characters_is_a_413_before_the_model_sees_it():
    with client() as c:  # the default: 5,000 sentences
        response = upload(c, "long.txt", b"The cat is here.\n" * 5001)
        assert response.status_code == 413 and "more than 5000 sentences" in response.json()["error"]
    worker = TranslatorWorker(WordTranslator(LEXICON), "en", "fr")
    config = ServeConfig(max_document_chars=100)
    with TestClient(create_app(lambda: worker, config, load_in_background=False)) as c:
        response = upload(c, "a.txt", b"The cat sees the dog here.\n" * 3)  # 78 characters
        assert response.status_code == 200
        response = upload(c, "b.txt", b"The cat sees the dog here.\n" * 4)  # 104
        assert response.status_code == 413 and "more than 100 characters" in response.json()["error"]
        response = c.post(
            "/translate", json={"q": "<p>The cat sees the dog here.</p>" * 5, "format": "html"} | PAIR
        )
        assert response.status_code == 413
        assert len(worker.translator.calls) == 1  # the one document within the limit


# ------------------------------------------------------------------------------------------ 3: surrogates


@pytest.mark.parametrize("field", ["q", "source", "target"])
def test_a_lone_surrogate_is_a_400_naming_the_field(c, field):
    body = {"q": "the cat", **PAIR, field: "PLACEHOLDER"}
    response = raw_json(c, "/translate", json.dumps(body).replace("PLACEHOLDER", "the \\ud800 cat"))
    assert response.status_code == 400
    assert (
        response.json()["error"] == f"{field} is not valid Unicode: a lone surrogate (U+D800) at character 4"
    )
    response = raw_json(c, "/detect", '{"q": ["fine", "\\udfff"]}')
    assert response.status_code == 400 and "q is not valid Unicode" in response.json()["error"]


# ------------------------------------------------------------------------------------- 4, 9, 14: files


def test_an_over_long_download_name_is_a_400_without_the_servers_folder(c):
    folder = str(c.app.state.service.files.folder)
    for length in (300, 5000):
        response = c.get("/download_file/" + "a" * length)
        assert response.status_code == 400
        assert folder not in response.text and "file name has" in response.json()["error"]


def test_stored_files_stay_within_their_quota_the_oldest_removed_first():
    with client(max_stored_bytes=120, max_answer_bytes=100) as c:
        urls = []
        for n in range(4):
            response = upload(c, f"f{n}.txt", b"The cat is here. " * 2)  # 34 bytes translated
            assert response.status_code == 200
            urls.append(response.json()["translatedFileUrl"])
            time.sleep(0.01)  # distinct modification times
        assert [c.get(url).status_code for url in urls] == [404, 200, 200, 200]
        folder = c.app.state.service.files.folder
        assert sum(path.stat().st_size for path in folder.iterdir()) <= 120


def test_file_links_never_come_from_the_host_header():
    with client() as c:
        response = c.post(
            "/translate_file",
            data=PAIR,
            files={"file": ("a.txt", b"the cat")},
            headers={"Host": "evil.example"},
        )
        url = response.json()["translatedFileUrl"]
        assert "evil.example" not in url and url.startswith("/download_file/")
        assert c.get(url).content == b"le chat"
    with client(public_url="https://translate.example.org/") as c:
        response = c.post(
            "/translate_file",
            data=PAIR,
            files={"file": ("a.txt", b"the cat")},
            headers={"Host": "evil.example"},
        )
        assert response.json()["translatedFileUrl"].startswith("https://translate.example.org/download_file/")


# ------------------------------------------------------------------------------------------- 6: zip bomb


def test_a_docx_that_unpacks_past_the_ceiling_is_refused_before_it_is_parsed(c):
    document = (
        '<?xml version="1.0" encoding="UTF-8"?><w:document xmlns:w="http://schemas.openxmlformats.org/'
        'wordprocessingml/2006/main"><w:body>' + "<w:p/>" * (3 << 20) + "</w:body></w:document>"
    )  # 18 MiB of empty paragraphs
    packed = io.BytesIO()
    with zipfile.ZipFile(packed, "w", zipfile.ZIP_DEFLATED) as archive:
        archive.writestr("word/document.xml", document)
    assert len(packed.getvalue()) < 100_000
    started = time.monotonic()
    response = upload(c, "bomb.docx", packed.getvalue())
    assert response.status_code == 400 and "of markup is refused" in response.json()["error"]
    assert time.monotonic() - started < 5


# ------------------------------------------------------------------------------------- 7: answer size


def test_a_glossary_cannot_multiply_an_answer():
    with client() as c:
        glossary = {"cat": "x" * 200_000}
        response = c.post("/translate", json={"q": "cat " * 50, "glossary": glossary} | PAIR)
        assert response.status_code == 413 and "the glossary's terms have 200003 characters" in response.text
    with client(max_answer_bytes=1000) as c:
        assert c.post("/translate", json={"q": "the cat " * 50} | PAIR).status_code == 200
        response = c.post("/translate", json={"q": "The cat. " * 20, "glossary": {"cat": "x" * 60}} | PAIR)
        assert response.status_code == 413 and "the limit is 1000" in response.json()["error"]
        response = upload(c, "a.txt", b"the cat " * 200)
        assert response.status_code == 413 and "translated file has" in response.json()["error"]


# ----------------------------------------------------------------------------------------- 10: slow body


def test_a_body_sent_a_byte_at_a_time_gets_408_and_the_connection_closed():
    with ThreadServer(app(body_timeout_s=1)) as server, socket.create_connection((HOST, server.port)) as sock:
        body = json.dumps({"q": "the cat"} | PAIR).encode()
        sock.sendall(
            b"POST /translate HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
            + f"Content-Length: {len(body)}\r\n\r\n".encode()
        )
        sock.settimeout(0.3)
        started, answer = time.monotonic(), b""
        for byte in body:
            sock.sendall(bytes([byte]))
            try:
                answer = sock.recv(4096)
            except TimeoutError:
                continue
            break
        assert answer.startswith(b"HTTP/1.1 408"), answer
        assert time.monotonic() - started < 5
        assert b"did not arrive within 1 s" in answer


# -------------------------------------------------------------------------------------- 12, 13: limits


def test_wrong_keys_are_throttled_per_address_and_then_even_a_right_key_waits():
    with client(api_keys=frozenset({"right"}), max_key_failures=5) as c:
        statuses = [
            c.post("/translate", json={"q": "cat", "api_key": f"guess{n}"} | PAIR).status_code
            for n in range(8)
        ]
        assert statuses == [403] * 5 + [429] * 3
        response = c.post("/translate", json={"q": "cat", "api_key": "right"} | PAIR)
        assert response.status_code == 429 and int(response.headers["Retry-After"]) >= 1
        assert response.json()["error"].startswith("Slowdown:")


def test_a_file_costs_its_bytes_over_the_character_limit_against_the_request_limit():
    with client(req_limit=5, char_limit=100) as c:
        assert upload(c, "big.txt", b"the cat " * 125).status_code == 429  # 1,000 bytes: 10 requests
        assert upload(c, "small.txt", b"the cat " * 50).status_code == 200  # 400 bytes: 4
        assert upload(c, "tiny.txt", b"the cat").status_code == 200  # at least 1
        assert upload(c, "tiny.txt", b"the cat").status_code == 429


def test_forwarded_addresses_are_read_only_with_the_flag():
    """With --trust-forwarded-for the app itself reads X-Forwarded-For (so under uvicorn and Ray Serve alike):
    three requests claiming three addresses against a limit of one a minute. uvicorn never reads the header
    (`test_libretranslate_compat.py` sends it to a server process started without the flag)."""
    from hf_seq2seq.cli import serve

    for flags, trusted in (([], False), (["--trust-forwarded-for"], True)):
        args = serve.build_parser().parse_args(["model", *flags])
        assert serve.uvicorn_config(None, args).proxy_headers is False
        assert serve.serve_config(args).trust_forwarded_for is trusted
        with client(req_limit=1, trust_forwarded_for=trusted) as c:
            statuses = [
                c.post("/translate", json={"q": "cat"} | PAIR, headers={"X-Forwarded-For": f"203.0.113.{n}"})
                for n in range(3)
            ]
        assert [r.status_code for r in statuses] == ([200] * 3 if trusted else [200, 429, 429])

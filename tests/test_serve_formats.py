"""The server's markup, glossaries and documents: ``format: "html"`` and ``glossary`` in ``POST /translate``,
LibreTranslate's ``POST /translate_file`` + ``GET /download_file/<name>``.

The fields, their errors and the files' lifetime are tested in process on `helpers.WordTranslator` (a fake
engine whose translations and alignments are known, so that the server's answer can be compared with
`hf_seq2seq.formats` called directly); the order of batches and a client that leaves on a real uvicorn in a
thread; every document format's round trip, the size limits and the downloads on the real server
(`python -m hf_seq2seq serve` on the memorising model) with a real multipart client (requests)."""

import io
import json
import socket
import threading
import time
from collections import Counter
from html.parser import HTMLParser

import pytest

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
try:  # the real multipart client of the tests on the server process (installed with the ray extra)
    import requests
except ImportError:
    requests = None
needs_requests = pytest.mark.skipif(requests is None, reason="requests is not installed")

from helpers import (  # noqa: E402
    GETTEXT,
    WordTranslator,
    check_filled_catalogue,
    msgfmt_check,
    needs_pdf_extra,
    pdf_page_texts,
    text_pdf,
)
from serve_helpers import (  # noqa: E402
    HOST,
    FakeWorker,
    ThreadServer,
    get,
    metric,
    post_json,
    request,
    serving,
    wait_for,
    wait_ready,
)
from starlette.testclient import TestClient  # noqa: E402

from hf_seq2seq.engines.base import Translator  # noqa: E402
from hf_seq2seq.engines.factory import load_translator  # noqa: E402
from hf_seq2seq.formats.aligned import translate_aligned  # noqa: E402
from hf_seq2seq.formats.glossary import Glossary  # noqa: E402
from hf_seq2seq.formats.markup import translate_html  # noqa: E402
from hf_seq2seq.serving.app import create_app  # noqa: E402
from hf_seq2seq.serving.config import ServeConfig  # noqa: E402
from hf_seq2seq.serving.files import FileStore, download_name, safe_stem  # noqa: E402
from hf_seq2seq.serving.worker import TranslatorWorker  # noqa: E402

LEXICON = {
    "the": "le", "a": "un", "cat": "chat", "dog": "chien", "sees": "voit", "red": "rouge", "big": "grand",
    "house": "maison", "is": "est", "here": "ici", "invoice": "note", "hello": "bonjour", "world": "monde",
    "pay": "payez", "your": "votre",
}  # fmt: skip
ADJECTIVES = frozenset({"red", "big"})
API_KEY = "file-key"
PAIR = {"source": "en", "target": "fr"}


class AligningWords(WordTranslator):
    """`WordTranslator`, counting its `align` calls."""

    def __init__(self):
        super().__init__(LEXICON, ADJECTIVES)
        self.aligned = 0

    def align(self, sources, targets, *args, **kwargs):
        self.aligned += 1
        return super().align(sources, targets, *args, **kwargs)


class WordsWithoutAlignments(WordTranslator):
    """An engine that gives no word alignments (an export made before its engine aligned, say)."""

    align = Translator.align


class GatedWorker(TranslatorWorker):
    """A `TranslatorWorker` over `WordTranslator` whose batch calls wait for `gate` and are recorded."""

    def __init__(self, translator: Translator):
        super().__init__(translator, "en", "fr")
        self.gate = threading.Event()
        self.gate.set()
        self.calls: list[list[str]] = []

    def translate(self, sentences, decoding):
        self.calls.append(list(sentences))
        if not self.gate.wait(timeout=60):
            raise TimeoutError("the test never opened the gate")
        return super().translate(sentences, decoding)


def client(translator: Translator | None = None, **config) -> TestClient:
    """A test client of the app over `translator` (a `FakeWorker` when None), the model loaded at startup."""
    worker = (lambda: TranslatorWorker(translator, "en", "fr")) if translator is not None else FakeWorker
    return TestClient(create_app(worker, ServeConfig(**config), load_in_background=False))


def words() -> WordTranslator:
    return WordTranslator(LEXICON, ADJECTIVES)


class TextAndTags(HTMLParser):
    """The text of an HTML document (its text nodes apart, whitespace runs as one space) and the multiset of
    its tags."""

    def __init__(self, document: str):
        super().__init__()
        self.text, self.tags = "", Counter()
        self.feed(document)
        self.close()
        self.text = " ".join(self.text.split())

    def handle_starttag(self, tag, attrs):
        self.tags[f"<{tag}>"] += 1

    def handle_endtag(self, tag):
        self.tags[f"</{tag}>"] += 1

    def handle_data(self, data):
        self.text += f" {data}"  # apart from its neighbours: "<title>a</title><style>b" reads "a b"


# ------------------------------------------------------------------------------------ /translate: html, glossary

HTML = [
    '<p>The <b>red cat</b> sees <a href="/dog.html">the big dog</a>.</p>',
    '<ul><li>Hello <i>world</i>!</li><li><img src="a.png" alt="a red house"> is here.</li></ul>',
]


def test_html_is_translated_with_its_tags_and_through_the_batcher():
    with client(words()) as c:
        before = metric_value(c, "hf_seq2seq_sentences_translated_total")
        answer = c.post("/translate", json={"q": HTML[0], "source": "en", "target": "fr", "format": "html"})
        assert answer.status_code == 200
        expected = '<p>Le <b>chat rouge</b> voit <a href="/dog.html">le chien grand</a>.</p>'
        assert answer.json() == {"translatedText": expected}
        # a list, as a form: the same as `translate_html` gives, every sentence through the batcher
        answer = c.post("/translate", data={"source": "en", "target": "fr", "q": HTML, "format": "html"})
        assert answer.json() == {"translatedText": translate_html(words(), HTML)}
        # the first page; then the list: the first page again, the second's two passages and its alt text
        assert metric_value(c, "hf_seq2seq_sentences_translated_total") - before == 1 + 1 + 3


def metric_value(c: TestClient, name: str) -> float:
    from prometheus_client.parser import text_string_to_metric_families

    for family in text_string_to_metric_families(c.get("/metrics").text):
        for sample in family.samples:
            if sample.name == name:
                return sample.value
    raise KeyError(name)


def test_a_glossary_puts_its_terms_in_from_json_and_from_a_form():
    terms = {"invoice": "facture", "pay": "réglez"}
    texts = ["Pay your invoice.", "The invoices are here. The cat is here."]
    expected = [
        r.target for r in translate_aligned(words(), texts, glossary=Glossary(terms), alignments=False)
    ]
    assert "facture" in expected[0] and "réglez" in expected[0].lower()
    with client(words()) as c:
        assert c.post(
            "/translate", json={"source": "en", "target": "fr", "q": texts, "glossary": terms}
        ).json() == {"translatedText": expected}
        # a form field holds the glossary as JSON text, url-encoded or multipart
        form = {"q": texts[0], "source": "en", "target": "fr", "glossary": json.dumps(terms)}
        assert c.post("/translate", data=form).json() == {"translatedText": expected[0]}
        html = c.post(
            "/translate",
            json={
                "source": "en",
                "target": "fr",
                "q": "<p>Pay <b>your invoice</b>.</p>",
                "format": "html",
                "glossary": terms,
            },
        )
        assert html.json() == {"translatedText": "<p>Réglez <b>votre facture</b>.</p>"}


def test_plain_requests_keep_the_plain_path_and_align_nothing():
    translator = AligningWords()
    with client(translator) as c:
        loaded = translator.aligned  # the worker asks the engine once whether it aligns
        plain = c.post(
            "/translate", json={"source": "en", "target": "fr", "q": "The invoice is here."}
        ).json()
        assert plain == {"translatedText": "Le note est ici."}
        empty = c.post(
            "/translate", json={"source": "en", "target": "fr", "q": "The invoice is here.", "glossary": {}}
        ).json()
        unused = c.post(
            "/translate",
            json={"source": "en", "target": "fr", "q": "The invoice is here.", "glossary": {"dog": "toutou"}},
        ).json()
        assert empty == unused == plain
        assert translator.aligned == loaded  # no term occurs: nothing to align
        c.post(
            "/translate",
            json={
                "source": "en",
                "target": "fr",
                "q": "The invoice is here.",
                "glossary": {"invoice": "facture"},
            },
        )
        assert translator.aligned == loaded + 1


FIELD_ERRORS = {
    "unknown format": ({"format": "xml"}, 400, "xml format is not supported"),
    "glossary not JSON": ({"glossary": "{invoice: facture"}, 400, "glossary must be a JSON object"),
    "glossary a list": ({"glossary": ["invoice"]}, 400, "invalid glossary: a glossary is an object"),
    "glossary a number": ({"glossary": "3"}, 400, "invalid glossary: a glossary is an object"),
    "glossary target not text": ({"glossary": {"invoice": 3}}, 400, "glossary terms must be strings"),
    "glossary empty term": ({"glossary": {"invoice": " "}}, 400, "empty glossary term"),
    "glossary too long": (
        {"glossary": {"a": "b", "c": "d", "e": "f"}}, 413, "the glossary has 3 terms; the limit is 2"
    ),
    "html over the limit as sent": (
        {"format": "html", "q": "<p><b><i>the cat</i></b></p>" * 3},
        413,
        "the request has 84 characters; the limit is 80",
    ),
}  # fmt: skip


@pytest.mark.parametrize("case", FIELD_ERRORS, ids=FIELD_ERRORS)
def test_bad_format_and_glossary_fields_get_their_status_and_message(case):
    fields, status, message = FIELD_ERRORS[case]
    with client(words(), max_glossary_terms=2, max_chars=80) as c:
        answer = c.post("/translate", json={"q": "The invoice.", "source": "en", "target": "fr"} | fields)
        assert answer.status_code == status and message in answer.json()["error"], answer.json()


def test_an_engine_without_alignments_refuses_markup_and_glossaries_but_takes_plain_text():
    with client(WordsWithoutAlignments(LEXICON)) as c:
        for fields, what in (
            ({"format": "html"}, "format 'html'"),
            ({"glossary": {"cat": "minou"}}, "a glossary"),
        ):
            answer = c.post("/translate", json={"source": "en", "target": "fr", "q": "The cat."} | fields)
            assert answer.status_code == 400
            assert answer.json()["error"].startswith(
                f"{what} needs word alignments: the words engine gives no word"
            )
        assert c.post("/translate", json={"source": "en", "target": "fr", "q": "The cat."}).json() == {
            "translatedText": "Le chat."
        }
        # a text file needs no alignment; an HTML file does, and so does a glossary
        text = c.post("/translate_file", data=PAIR, files={"file": ("a.txt", b"The cat.\n")})
        assert c.get(text.json()["translatedFileUrl"]).content == b"Le chat.\n"
        page = c.post("/translate_file", data=PAIR, files={"file": ("a.html", b"<p>The cat.</p>")})
        assert page.status_code == 400 and "gives no word alignments" in page.json()["error"]
        terms = c.post(
            "/translate_file", files={"file": ("a.txt", b"x")}, data=PAIR | {"glossary": '{"cat": "minou"}'}
        )
        assert terms.status_code == 400 and terms.json()["error"].startswith(
            "a glossary needs word alignments"
        )


def test_a_worker_without_an_engine_translates_plain_text_only():
    with client() as c:  # FakeWorker: upper case, no Translator behind it
        assert c.post("/translate", json={"source": "en", "target": "fr", "q": "the cat ."}).json() == {
            "translatedText": "THE CAT ."
        }
        for answer in (
            c.post(
                "/translate", json={"source": "en", "target": "fr", "q": "<b>the cat</b>", "format": "html"}
            ),
            c.post("/translate_file", data=PAIR, files={"file": ("a.txt", b"the cat .")}),
        ):
            assert answer.status_code == 400
            assert answer.json() == {"error": "the fake engine of this server translates plain text only"}


# ------------------------------------------------------------------------------------ /translate_file, in process


def docx_type() -> str:
    return "application/vnd.openxmlformats-officedocument.wordprocessingml.document"


def word_document() -> bytes:
    import docx

    document = docx.Document()
    document.add_paragraph("The red cat.")
    data = io.BytesIO()
    document.save(data)
    return data.getvalue()


FORMATS = {  # the upload's name: the extra its content needs, its content, the download's type and name
    "Notes été.txt": (None, lambda: b"The cat.\n", "text/plain; charset=utf-8", "Notes_ete_fr.txt"),
    "page.htm": (None, lambda: b"<p>The cat.</p>", "text/html; charset=utf-8", "page_fr.htm"),
    "film.srt": (
        "srt", lambda: b"1\n00:00:01,000 --> 00:00:02,000\nThe cat.\n", "application/x-subrip; charset=utf-8",
        "film_fr.srt",
    ),
    "film.vtt": (
        "webvtt", lambda: b"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nThe cat.\n", "text/vtt; charset=utf-8",
        "film_fr.vtt",
    ),
    "C:\\Users\\me\\Report.DOCX": ("docx", word_document, docx_type(), "Report_fr.docx"),
    "messages.po": (
        "polib", lambda: b'msgid "The cat."\nmsgstr ""\n', "text/x-gettext-translation; charset=utf-8",
        "messages_fr.po",
    ),
    "Paper.pdf": ("pdf", lambda: text_pdf([["The red cat."]]), "application/pdf", "Paper_fr.pdf"),
}  # fmt: skip


@pytest.mark.parametrize("filename", FORMATS, ids=[name.rsplit(".", 1)[1].lower() for name in FORMATS])
def test_each_format_is_offered_with_its_name_type_and_disposition(filename):
    extra, content, media_type, download_as = FORMATS[filename]
    if extra == "pdf":
        needs_pdf_extra()
    elif extra is not None:
        pytest.importorskip(extra)
    with client(words()) as c:
        answer = c.post(
            "/translate_file", data={"source": "en", "target": "fr"}, files={"file": (filename, content())}
        )
        assert answer.status_code == 200, answer.json()
        url = answer.json()["translatedFileUrl"]
        assert url == f"/download_file/{url.rsplit('/', 1)[1]}"  # relative: never from the Host header
        download = c.get(url)
        assert download.status_code == 200 and download.headers["content-type"] == media_type
        assert download.headers["content-disposition"] == f'attachment; filename="{download_as}"'
        if extra == "docx":
            import docx

            assert docx.Document(io.BytesIO(download.content)).paragraphs[0].text == "Le chat rouge."
        elif extra == "pdf":
            assert pdf_page_texts(download.content) == ["Le chat rouge."]  # its one page
        else:
            assert b"Le chat." in download.content
        assert c.get(url).status_code == 200  # downloads can be repeated until the file expires


@pytest.mark.parametrize("name", ["django_fr.po", "wtforms.pot"])
def test_a_gettext_catalogue_round_trips_with_its_untranslated_messages_filled(trained, name, tmp_path):
    pytest.importorskip("polib")
    source = (GETTEXT / name).read_bytes()
    with client(load_translator(trained, "torch")) as c:
        answer = c.post(
            "/translate_file", data={"source": "en", "target": "fr"}, files={"file": (name, source)}
        )
        assert answer.status_code == 200, answer.json()
        download = c.get(answer.json()["translatedFileUrl"])
    assert download.status_code == 200
    filled = check_filled_catalogue(source.decode("utf-8"), download.content.decode("utf-8"))
    assert filled == {"django_fr.po": 7, "wtforms.pot": 39}[name]
    assert b'"Language: fr\\n"' in download.content
    (tmp_path / "out.po").write_bytes(download.content)
    msgfmt_check(tmp_path / "out.po")


def multipart(fields: dict, file: tuple[str, bytes] | None) -> tuple[bytes, str]:
    """A multipart/form-data body of text `fields` (the model's source and target unless given) and `file`
    (name, content) in field file, and its type."""
    boundary = "hf-seq2seq-test-boundary"
    fields = {"source": "en", "target": "fr", **fields}
    parts = [
        f'--{boundary}\r\nContent-Disposition: form-data; name="{name}"\r\n\r\n{value}\r\n'.encode()
        for name, value in fields.items()
    ]
    if file:
        disposition = f'form-data; name="file"; filename="{file[0]}"'
        parts.append(
            f"--{boundary}\r\nContent-Disposition: {disposition}\r\n\r\n".encode() + file[1] + b"\r\n"
        )
    return b"".join(parts) + f"--{boundary}--\r\n".encode(), f"multipart/form-data; boundary={boundary}"


FILE_ERRORS = {
    "unsupported extension": ({}, ("sheet.xlsx", b"PK\x03\x04"), 400, "Invalid request: file format not supported"),
    "no extension": ({}, ("README", b"the cat"), 400, "Invalid request: file format not supported"),
    "corrupt docx": ({}, ("report.docx", b"PK\x03\x04 not really"), 400, "cannot translate 'report.docx': "),
    "text not UTF-8": ({}, ("notes.txt", "été".encode("latin-1")), 400, "is not UTF-8 text"),
    "missing file": ({"source": "en"}, None, 400, "missing field file: send the file to translate as multipart"),
    "file as text": ({"file": "the cat"}, None, 400, "field file must be a file"),
    "over the size limit": (
        {}, ("big.txt", b"the cat .\n" * 30), 413, "the file has 300 bytes; the limit is 200 bytes per file"
    ),
    "unknown target": ({"target": "de"}, ("a.txt", b"the cat"), 400, "de is not supported"),
    "missing source": ({"source": ""}, ("a.txt", b"the cat"), 400, "Invalid request: missing source parameter"),
    "bad glossary": ({"glossary": "[1]"}, ("a.txt", b"the cat"), 400, "invalid glossary"),
    "bad decoding": ({"num_beams": "99"}, ("a.txt", b"the cat"), 400, "num_beams must be between 1 and 8"),
    "missing API key": (
        {"api_key": ""}, ("a.txt", b"the cat"), 400, "Please contact the server operator to get an API key"
    ),
    "wrong API key": ({"api_key": "nope"}, ("a.txt", b"the cat"), 403, "Invalid API key"),
}  # fmt: skip


@pytest.mark.parametrize("case", FILE_ERRORS, ids=FILE_ERRORS)
def test_each_bad_upload_gets_its_status_and_message(case):
    fields, file, status, message = FILE_ERRORS[case]
    body, content_type = multipart({"source": "en", "target": "fr", "api_key": API_KEY} | fields, file)
    with client(words(), max_file_bytes=200, api_keys=frozenset({API_KEY})) as c:
        answer = c.post("/translate_file", content=body, headers={"Content-Type": content_type})
        assert answer.status_code == status and message in answer.json()["error"], answer.json()
        good = c.post(
            "/translate_file", files={"file": ("a.txt", b"The cat.")}, data=PAIR | {"api_key": API_KEY}
        )
        assert good.status_code == 200


def test_uploads_are_counted_while_read_and_must_be_multipart():
    body, content_type = multipart({}, ("big.txt", b"x" * 5000))
    with client(words(), max_file_bytes=100, max_body_bytes=1000) as c:
        # a streamed body (no Content-Length) is refused once it passes the limit
        answer = c.post(
            "/translate_file",
            content=iter([body[:3000], body[3000:]]),
            headers={"Content-Type": content_type},
        )
        assert answer.status_code == 413
        assert answer.json() == {"error": "the upload is over the limit of 100 bytes per file"}
        answer = c.post("/translate_file", content=body, headers={"Content-Type": content_type})
        assert answer.json() == {
            "error": f"the upload has {len(body)} bytes; the limit is 100 bytes per file"
        }
        answer = c.post("/translate_file", json={"file": "the cat"})
        assert answer.status_code == 415 and "send the file as multipart/form-data" in answer.json()["error"]


# ------------------------------------------------------------------------------------------------- downloads


def test_unknown_expired_and_half_written_files_are_not_served(tmp_path):
    with client(words(), file_dir=str(tmp_path), file_expiry_minutes=0.05) as c:  # 3 s
        url = c.post("/translate_file", data=PAIR, files={"file": ("a.txt", b"The cat.")}).json()[
            "translatedFileUrl"
        ]
        name = url.rsplit("/", 1)[1]
        assert [p.name for p in tmp_path.iterdir()] == [name]  # nothing else: no half-written file left
        (tmp_path / ".partial-abc").write_bytes(b"half")
        (tmp_path / "secret.txt").write_bytes(b"not a translation")
        for path in (
            "/download_file/0b3e1b8e-0000-4000-8000-000000000000.a_fr.txt",  # never made
            "/download_file/.partial-abc",
            "/download_file/secret.txt",
            "/download_file/..%2Fsecret.txt",
            "/download_file/%2E%2E",
            f"/download_file/{name[:-4]}",
        ):
            answer = c.get(path)
            assert answer.status_code == 404 and "error" in answer.json(), path
        assert c.get(url).content == b"Le chat."
        time.sleep(3.5)
        answer = c.get(url)
        assert answer.status_code == 404
        assert answer.json() == {
            "error": f"no file {name!r}: not made here, or expired (files are kept 0.05 minutes)"
        }
        assert not (tmp_path / name).exists()
        # the sweep deletes what nobody downloads (and half-written files as old)
        c.post("/translate_file", data=PAIR, files={"file": ("b.txt", b"The dog.")})
        wait_for(lambda: {p.name for p in tmp_path.iterdir()} == {"secret.txt"}, timeout=10, message="sweep")
    assert (tmp_path / "secret.txt").exists()  # a folder given is the user's: only its own files go


def test_the_servers_own_folder_goes_when_it_stops():
    with client(words()) as c:
        folder = c.app.state.service.files.folder
        c.post("/translate_file", data=PAIR, files={"file": ("a.txt", b"The cat.")})
        assert len(list(folder.iterdir())) == 1
    assert not folder.exists()


def test_file_names_are_made_safe_as_libretranslate_makes_them():
    assert safe_stem("../../etc/passwd") == "passwd"
    assert safe_stem("C:\\Users\\me\\My Notes (v2).final.txt") == "My_Notes_v2.final"
    assert safe_stem("été à Noël.srt") == "ete_a_Noel"
    assert safe_stem("日本語.txt") == safe_stem("..txt") == "file"
    store = FileStore(None, 60)
    try:
        name = store.new_name("Mes notes.TXT", "fr")
        uuid, rest = name.split(".", 1)
        assert len(uuid) == 36 and rest == "Mes_notes_fr.txt" == download_name(name)
        assert store.new_name("a.txt", "fr") != store.new_name("a.txt", "fr")
    finally:
        store.close()


# ------------------------------------------------------------------- batching and disconnects, on uvicorn


def test_a_document_shares_the_batcher_and_leaves_room_for_other_requests():
    worker = GatedWorker(words())
    app = create_app(lambda: worker, ServeConfig(max_batch_sentences=1, max_wait_ms=0))
    lines = ["The cat.", "The dog.", "The house."]
    with ThreadServer(app) as server:
        wait_ready(server.url)
        worker.gate.clear()
        results = {}

        def upload() -> None:
            body, content_type = multipart({}, ("a.txt", "\n".join(lines).encode()))
            answer = request(f"{server.url}/translate_file", body, {"Content-Type": content_type})[1]
            results["file"] = get(server.url + answer["translatedFileUrl"])[1]

        def plain() -> None:
            results["plain"] = post_json(
                f"{server.url}/translate", {"source": "en", "target": "fr", "q": "Hello world."}
            )[1]

        threads = [threading.Thread(target=upload)]
        threads[0].start()
        wait_for(lambda: len(worker.calls) == 1, message="the document's first batch")
        assert get(f"{server.url}/health")[0] == 200  # the event loop answers while the document waits
        threads.append(threading.Thread(target=plain))
        threads[1].start()
        wait_for(
            lambda: metric(server.url, "hf_seq2seq_queue_sentences") == 1, message="the plain request queued"
        )
        worker.gate.set()
        for thread in threads:
            thread.join(timeout=60)
    assert results == {
        "file": "Le chat.\nLe chien.\nLe maison.",
        "plain": {"translatedText": "Bonjour monde."},
    }
    # one sentence per batch: the plain request went between the document's first and second slice
    assert worker.calls == [["The cat."], ["Hello world."], ["The dog."], ["The house."]]


def test_a_client_that_leaves_stops_its_document():
    worker = GatedWorker(words())
    app = create_app(lambda: worker, ServeConfig(max_batch_sentences=1, max_wait_ms=0))
    body, content_type = multipart({}, ("a.txt", b"The cat.\nThe dog.\nThe house.\n"))
    with ThreadServer(app) as server:
        wait_ready(server.url)
        worker.gate.clear()
        with socket.create_connection((HOST, server.port), timeout=30) as sock:
            sock.sendall(
                f"POST /translate_file HTTP/1.1\r\nHost: x\r\nContent-Type: {content_type}\r\n"
                f"Content-Length: {len(body)}\r\n\r\n".encode()
                + body
            )
            wait_for(lambda: len(worker.calls) == 1, message="the document's first batch")
        gone = 'hf_seq2seq_http_requests_total{path="/translate_file",status="499"} 1.0'
        wait_for(lambda: gone in get(f"{server.url}/metrics")[1], message="the server saw the client leave")
        worker.gate.set()
        assert post_json(f"{server.url}/translate", {"source": "en", "target": "fr", "q": "Hello."})[1] == {
            "translatedText": "Bonjour."
        }
    assert worker.calls == [["The cat."], ["Hello."]]  # the rest of the document was never translated


# ----------------------------------------------------------------------------------- the real server process

MAX_FILE_BYTES = 100_000  # a .docx of python-docx's template is about 36 kB


@pytest.fixture(scope="module")
def server(memorising_folder, tmp_path_factory):
    """`python -m hf_seq2seq serve` on the memorising model, files kept in a folder the tests can see."""
    folder = tmp_path_factory.mktemp("serve-files")
    with serving(
        memorising_folder, "--max-file-bytes", str(MAX_FILE_BYTES), "--file-dir", str(folder / "files"),
        log=folder / "server.log",
    ) as url:  # fmt: skip
        yield url, folder / "files"


def round_trip(url: str, filename: str, content: bytes, **fields):
    """Upload `content` as `filename` with requests' multipart encoder, then download the translation."""
    fields = {"source": "en", "target": "fr", **fields}
    answer = requests.post(
        f"{url}/translate_file", files={"file": (filename, content)}, data=fields, timeout=120
    )
    assert answer.status_code == 200, answer.text
    assert set(answer.json()) == {"translatedFileUrl"}
    download = requests.get(url + answer.json()["translatedFileUrl"], timeout=30)
    assert download.status_code == 200
    return download


@needs_requests
def test_text_html_and_subtitle_files_round_trip_through_the_server(server):
    url, _ = server
    text = "the cat is here .\r\n\r\n2024\r\ni like cheese .\r\n"
    assert (
        round_trip(url, "notes.txt", text.encode()).text
        == "le chat est ici .\r\n\r\n2024\r\nje aime le fromage .\r\n"
    )

    page = (
        "<!DOCTYPE html>\n<html><head><title>thank you !</title><style>p { color: red; }</style></head>\n"
        "<body><p>i like <b>cheese</b> .</p>\n<!-- the cat is here . -->\n<p>good morning !</p></body></html>\n"
    )
    translated = round_trip(url, "page.html", page.encode()).text
    assert TextAndTags(translated).tags == TextAndTags(page).tags
    assert TextAndTags(translated).text == "merci ! p { color: red; } je aime le fromage . bonjour !"
    for kept in (
        "<!DOCTYPE html>\n<html><head><title>",
        "<style>p { color: red; }</style>",
        "<!-- the cat is here . -->",
    ):
        assert kept in translated

    subtitles = (
        "1\n00:00:01,000 --> 00:00:02,000\nthe cat is here .\n\n"
        "2\n00:00:03,000 --> 00:00:04,500\nthe big dog sat\non the mat .\n\n"
        "3\n00:00:05,000 --> 00:00:06,000\n<i>thank you !</i>\n"
    )
    cues = round_trip(url, "film.srt", subtitles.encode()).text.strip().split("\n\n")
    assert [cue.split("\n")[:2] for cue in cues] == [
        cue.split("\n")[:2] for cue in subtitles.strip().split("\n\n")
    ]
    assert cues[0].split("\n")[2:] == ["le chat est ici ."]
    second = cues[1].split("\n")[2:]
    assert len(second) == 2 and " ".join(second) == "le grand chien est sur le tapis ."
    assert cues[2].split("\n")[2:] == ["<i>merci !</i>"]

    vtt = (
        "WEBVTT\n\n00:00:01.000 --> 00:00:02.000\nthe cat is here .\n\n"
        "note-2\n00:00:03.000 --> 00:00:04.000\ni like cheese .\n"
    )
    expected = vtt.replace("the cat is here .", "le chat est ici .").replace(
        "i like cheese .", "je aime le fromage ."
    )
    assert round_trip(url, "film.vtt", vtt.encode()).text.rstrip("\n") == expected.rstrip("\n")


@needs_requests
def test_a_word_document_round_trips_with_its_formatting(server):
    docx = pytest.importorskip("docx")
    url, _ = server
    document = docx.Document()
    paragraph = document.add_paragraph("the cat is ")
    paragraph.add_run("here").bold = True
    paragraph.add_run(" .")
    document.add_paragraph("i like cheese .", style="Heading 1")
    document.add_table(rows=1, cols=1).cell(0, 0).text = "thank you !"
    data = io.BytesIO()
    document.save(data)
    download = round_trip(url, "report.docx", data.getvalue())
    assert download.headers["content-type"] == docx_type()
    assert download.headers["content-disposition"] == 'attachment; filename="report_fr.docx"'
    translated = docx.Document(io.BytesIO(download.content))
    assert [(p.text, p.style.name) for p in translated.paragraphs] == [
        ("le chat est ici .", "Normal"), ("je aime le fromage .", "Heading 1")
    ]  # fmt: skip
    # the bold run is kept, on the words the tiny model's attention aligns to "here"
    assert any(run.bold for run in translated.paragraphs[0].runs)
    assert translated.tables[0].cell(0, 0).text == "merci !"


@needs_requests
def test_bad_files_and_downloads_get_their_status_on_the_server(server):
    url, _ = server
    uploads = {
        "unsupported": ({"file": ("a.xlsx", b"PK\x03\x04")}, 400, "Invalid request: file format not supported"),
        "corrupt": ({"file": ("a.docx", b"PK\x03\x04")}, 400, "cannot translate 'a.docx': not a Word document"),
        "no file field": ({"x": ("a.txt", b"the cat")}, 400, "the file to translate goes in field file"),
        "too big": (
            {"file": ("a.txt", b"the cat is here .\n" * 6000)}, 413,
            "the file has 108000 bytes; the limit is 100000 bytes per file",
        ),
    }  # fmt: skip
    for case, (files, status, message) in uploads.items():
        answer = requests.post(f"{url}/translate_file", files=files, data={"source": "en", "target": "fr"})
        assert answer.status_code == status and message in answer.json()["error"], (case, answer.text)
    for path in (
        "/download_file/nothing.txt",
        "/download_file/..%2F..%2Fetc%2Fpasswd",
        "/download_file/%2E%2E",
    ):
        status, body, _ = get(f"{url}{path}")  # urllib sends the path as written
        assert status == 404 and "error" in body, path


@needs_requests
def test_an_upload_over_the_limit_is_refused_while_it_is_read(server):
    url, _ = server
    port = int(url.rsplit(":", 1)[1])
    head = "POST /translate_file HTTP/1.1\r\nHost: x\r\nContent-Type: multipart/form-data; boundary=b\r\n"
    # a Content-Length over the limit: answered before the body is read
    with socket.create_connection((HOST, port), timeout=30) as sock:
        sock.sendall(f"{head}Content-Length: 9000000\r\n\r\n--b\r\n".encode())
        status, body, closes = http_answer(sock)
    assert (status, closes) == (413, "close") and body == {
        "error": "the upload has 9000000 bytes; the limit is 100000 bytes per file"
    }
    # a chunked body of no announced length: cut once it passes the limit (the file's plus the form's)
    with socket.create_connection((HOST, port), timeout=30) as sock:
        sock.sendall(
            f"{head}Transfer-Encoding: chunked\r\n\r\n".encode()
            + chunk(b'--b\r\nContent-Disposition: form-data; name="file"; filename="a.txt"\r\n\r\n')
        )
        piece = chunk(b"the cat is here .\n" * 3600)  # 64 kB
        try:
            for _ in range(40):  # 2.6 MB, past 100 kB + 1 MiB
                sock.sendall(piece)
        except OSError:  # the server has answered and closed
            pass
        status, body, closes = http_answer(sock)
    assert (status, closes) == (413, "close") and body == {
        "error": "the upload is over the limit of 100000 bytes per file"
    }
    assert round_trip(url, "a.txt", b"thank you !").text == "merci !"


def http_answer(sock: socket.socket) -> tuple[int, dict, str | None]:
    """The status, JSON body and Connection header of the answer waiting on `sock`."""
    from http.client import HTTPResponse

    response = HTTPResponse(sock)
    response.begin()
    return response.status, json.loads(response.read()), response.getheader("connection")


def chunk(data: bytes) -> bytes:
    return f"{len(data):x}\r\n".encode() + data + b"\r\n"


@needs_requests
def test_html_and_a_glossary_through_the_server(server):
    url, _ = server
    answer = requests.post(
        f"{url}/translate",
        json={"q": ["<p>i like <b>cheese</b> .</p>", "the cat is here ."], "source": "en", "target": "fr",
              "format": "html", "glossary": {"cheese": "camembert"}},
        timeout=60,
    )  # fmt: skip
    assert answer.status_code == 200
    page, text = answer.json()["translatedText"]
    assert TextAndTags(page).tags == Counter({"<p>": 1, "</p>": 1, "<b>": 1, "</b>": 1})
    assert "camembert" in TextAndTags(page).text and text == "le chat est ici ."
    form = {
        "q": "i like cheese .",
        "source": "en",
        "target": "fr",
        "glossary": json.dumps({"cheese": "camembert"}),
    }
    assert "camembert" in requests.post(f"{url}/translate", data=form, timeout=60).json()["translatedText"]

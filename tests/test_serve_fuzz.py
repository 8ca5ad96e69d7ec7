"""A fuzz test of the server's request handling (`hypothesis`): generated ``/translate``, ``/detect``,
``/translate_file`` and ``/download_file`` requests (fields of every type, bodies of every kind, lone surrogates,
markup, subtitles, odd file names) each get an answer below 500 within `TIME_BOUND` seconds.

In process, on `helpers.WordTranslator` (instant, and it aligns), so what is measured is the server's own work.
`HF_SEQ2SEQ_FUZZ_EXAMPLES` sets the examples per endpoint (default 100: seconds in CI); a longer run:
``HF_SEQ2SEQ_FUZZ_EXAMPLES=2000 python -m pytest tests/test_serve_fuzz.py``."""

import json
import os
import time
import urllib.parse

import pytest

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

pytest.importorskip("starlette")
hypothesis = pytest.importorskip("hypothesis")

from helpers import WordTranslator  # noqa: E402
from hypothesis import HealthCheck, given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from hf_seq2seq.serving.app import create_app  # noqa: E402
from hf_seq2seq.serving.config import ServeConfig  # noqa: E402
from hf_seq2seq.serving.worker import TranslatorWorker  # noqa: E402

EXAMPLES = int(os.environ.get("HF_SEQ2SEQ_FUZZ_EXAMPLES", "100"))
TIME_BOUND = 5.0
"""Seconds any one answer may take (the worst case of a default server's limits, on an instant engine)."""
FUZZ = settings(
    max_examples=EXAMPLES,
    deadline=None,  # the bound is asserted per request, not per example
    suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large],
    derandomize=True,  # the same examples on every run: a CI failure can be replayed
)
LEXICON = {"the": "le", "cat": "chat", "dog": "chien", "sees": "voit", "is": "est", "here": "ici"}

WORDS = st.sampled_from(
    ["the", "cat", "dog", "sees", "is", "here", ".", "!", "\n", "\r\n", " ", "<b>", "</b>"]
)
TEXT = st.one_of(
    st.text(max_size=40),
    st.lists(WORDS, max_size=30).map(" ".join),
    st.sampled_from(
        ["", " ", "\ud800", "the \udfff cat", "<b>" * 200, "a" * 2000, "1" * 50, "\x00", "\u2028"]
    ),
)
SCALAR = st.one_of(st.none(), st.booleans(), st.integers(-(10**20), 10**20), st.floats(allow_nan=True), TEXT)
ANY = st.recursive(
    SCALAR, lambda inner: st.lists(inner, max_size=4) | st.dictionaries(TEXT, inner, max_size=4), max_leaves=8
)
LANGUAGE = st.one_of(st.sampled_from(["en", "fr", "auto", "zz", "", "EN"]), SCALAR)
FIELDS = st.fixed_dictionaries(
    {},
    optional={
        "q": st.one_of(TEXT, st.lists(TEXT, max_size=5), ANY),
        "source": LANGUAGE,
        "target": LANGUAGE,
        "format": st.one_of(st.sampled_from(["text", "html", "xml"]), SCALAR),
        "alternatives": st.one_of(st.integers(-5, 10), SCALAR),
        "confidence": SCALAR,
        "glossary": st.one_of(st.dictionaries(TEXT, TEXT, max_size=3), ANY),
        "num_beams": SCALAR,
        "length_penalty": SCALAR,
        "max_new_tokens": SCALAR,
        "no_repeat_ngram_size": SCALAR,
        "api_key": SCALAR,
    },
)
LIKELY = st.fixed_dictionaries(
    {
        "q": st.one_of(TEXT, st.lists(TEXT, min_size=1, max_size=4)),
        "source": st.just("en"),
        "target": st.just("fr"),
    },
    optional={
        "format": st.sampled_from(["text", "html"]),
        "glossary": st.dictionaries(TEXT, TEXT, max_size=2),
    },
)
CONTENT_TYPES = st.sampled_from(
    ["application/json", "application/x-www-form-urlencoded", "multipart/form-data", "text/plain", ""]
)
DOCUMENT = st.one_of(
    st.binary(max_size=300),
    TEXT.map(lambda text: text.encode("utf-8", "surrogatepass")),
    st.builds(
        lambda start, end, text: f"1\n{start} --> {end}\n{text}\n".encode("utf-8", "surrogatepass"),
        st.sampled_from(["00:00:01,000", "99999999999:00:00,000", "-1:00:00,000", "00:61:00,000", "x"]),
        st.sampled_from(["00:00:02,000", "00:00:00,000", "99:99:99,999"]),
        TEXT,
    ),
    st.builds(
        lambda text: f"WEBVTT\n\n00:00:01.000 --> 00:00:02.000\n{text}\n".encode(),
        st.lists(WORDS).map(" ".join),
    ),
)
FILE_NAME = st.one_of(
    st.sampled_from(["a.txt", "a.html", "a.srt", "a.vtt", "a.docx", "a.pdf", "", ".srt", "../../a.txt"]),
    st.builds(
        lambda stem, ext: stem + ext, st.text(max_size=300), st.sampled_from([".txt", ".srt", ".html", ""])
    ),
)


@pytest.fixture(scope="module")
def c():
    worker = TranslatorWorker(WordTranslator(LEXICON), "en", "fr")
    with TestClient(
        create_app(lambda: worker, ServeConfig(), load_in_background=False), raise_server_exceptions=False
    ) as c:
        yield c


def answered(send) -> None:
    """`send()`'s answer is below 500 and came within `TIME_BOUND`."""
    started = time.monotonic()
    response = send()
    assert response.status_code < 500, response.text
    assert time.monotonic() - started < TIME_BOUND


def encoded(fields: dict, content_type: str) -> bytes:
    """`fields` as a body of `content_type` (JSON as Python writes it: lone surrogates escaped)."""
    if content_type == "application/x-www-form-urlencoded":
        flat = {k: v if isinstance(v, str) else json.dumps(v) for k, v in fields.items()}
        return urllib.parse.urlencode(flat, encoding="utf-8", errors="surrogatepass").encode()
    return json.dumps(fields).encode()


@FUZZ
@given(st.one_of(FIELDS, LIKELY), CONTENT_TYPES, st.sampled_from(["/translate", "/detect"]))
def test_translate_and_detect_answer_every_request_below_500_in_time(c, fields, content_type, path):
    body = encoded(fields, content_type)
    answered(lambda: c.post(path, content=body, headers={"Content-Type": content_type}))


@FUZZ
@given(st.binary(max_size=200), CONTENT_TYPES, st.sampled_from(["/translate", "/detect", "/translate_file"]))
def test_raw_bodies_answer_below_500(c, body, content_type, path):
    answered(lambda: c.post(path, content=body, headers={"Content-Type": content_type}))


@FUZZ
@given(FILE_NAME, DOCUMENT, st.one_of(st.just({"source": "en", "target": "fr"}), FIELDS))
def test_translate_file_answers_every_upload_below_500_in_time(c, name, data, fields):
    form = {k: v if isinstance(v, str) else json.dumps(v) for k, v in fields.items()}
    form = {k: v.encode("utf-8", "surrogatepass").decode("utf-8", "replace") for k, v in form.items()}
    name = name.encode("utf-8", "surrogatepass").decode("utf-8", "replace")
    answered(lambda: c.post("/translate_file", data=form, files={"file": (name, data)}))


@FUZZ
@given(st.text(min_size=1, max_size=400))
def test_download_file_answers_every_name_below_500(c, name):
    quoted = urllib.parse.quote(name.encode("utf-8", "surrogatepass"), safe="")
    answered(lambda: c.get(f"/download_file/{quoted}"))

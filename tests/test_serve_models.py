"""A server of several models, as LibreTranslate serves every pair it has: `hf-seq2seq serve M1 M2 ...` answers
each pair with its model, lists every source with its targets, routes ``source: "auto"`` to the model of each
text's language, translates a pair without a model through English (and says so), and refuses the rest with
LibreTranslate's message; each model has its own batcher. The translation cache: a page translated twice costs
no model work the second time, with the same translations, and a glossary never reaches another request.

The models are the memorising ones (tests/conftest.py): en->fr, its fr->en reverse, and de->en over German words
whose English the en->fr model knows, so that German reaches French only through English."""

import json
import threading
from pathlib import Path

import pytest

pytest.importorskip("starlette")
pytest.importorskip("py3langid")

from helpers import GERMAN_PAIRS, LEGACY_FOLDER, MEMORISED_PAIRS, copy_without_pair  # noqa: E402
from serve_helpers import FakeWorker, ThreadServer, metric, post_json, wait_for  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from hf_seq2seq.models.languages import EXPORT_FILE, UnknownLanguagePair  # noqa: E402
from hf_seq2seq.serving.app import create_app  # noqa: E402
from hf_seq2seq.serving.cache import MISSING, TranslationCache  # noqa: E402
from hf_seq2seq.serving.config import ServeConfig  # noqa: E402
from hf_seq2seq.serving.worker import worker_loader  # noqa: E402

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

FRENCH = dict(MEMORISED_PAIRS)
ENGLISH = {french: english for english, french in MEMORISED_PAIRS}


@pytest.fixture(scope="module")
def workers(memorising_folder, memorising_fr_en_folder, memorising_de_en_folder) -> list:
    """The three models as the server loads them, each with the pair its folder records: en-fr, fr-en, de-en."""
    return [
        worker_loader(folder)()
        for folder in (memorising_folder, memorising_fr_en_folder, memorising_de_en_folder)
    ]


def client(workers, **config) -> TestClient:
    """A test client of the app over `workers`, loaded at startup."""
    loaders = [lambda worker=worker: worker for worker in workers]
    return TestClient(create_app(loaders, ServeConfig(**config), load_in_background=False))


def translate(c: TestClient, **body) -> tuple[int, dict]:
    response = c.post("/translate", json=body)
    return response.status_code, response.json()


def model_work(c: TestClient) -> float:
    """The sentences the models translated, aligned or scored so far, all models together."""
    from prometheus_client.parser import text_string_to_metric_families

    names = ("hf_seq2seq_sentences_translated_total", "hf_seq2seq_sentences_aligned_total")
    return sum(
        sample.value
        for family in text_string_to_metric_families(c.get("/metrics").text)
        for sample in family.samples
        if sample.name in names
    )


# ------------------------------------------------------------------------------------------------- the pairs


def test_languages_lists_each_source_with_its_targets(workers):
    with client(workers) as c:
        assert c.get("/languages").json() == [
            {"code": "de", "name": "German", "targets": ["en", "fr"]},  # fr: through English
            {"code": "en", "name": "English", "targets": ["fr"]},
            {"code": "fr", "name": "French", "targets": ["en"]},
        ]
        settings = c.get("/frontend/settings").json()["language"]
        assert (settings["source"]["code"], settings["target"]["code"]) == ("en", "fr")  # the first model's
    with client(workers, pivot=False) as c:
        assert c.get("/languages").json()[0] == {"code": "de", "name": "German", "targets": ["en"]}


def test_every_pair_goes_to_its_model(workers):
    with client(workers) as c:
        for source, target, pairs in (("en", "fr", MEMORISED_PAIRS), ("de", "en", GERMAN_PAIRS)):
            texts = [text for text, _ in pairs]
            assert translate(c, q=texts, source=source, target=target) == (
                200,
                {"translatedText": [translation for _, translation in pairs]},
            )
        assert translate(c, q="merci !", source="fr", target="en") == (200, {"translatedText": "thank you !"})
        assert translate(c, q="merci !", source="fr", target="de") == (
            400,
            {"error": "German (de) is not available as a target language from French (fr)"},
        )
        assert translate(c, q="merci !", source="fr", target="es")[1] == {"error": "es is not supported"}


def test_a_pair_without_a_model_goes_through_english_and_says_so(workers):
    german = [text for text, _ in GERMAN_PAIRS]
    french = [FRENCH[english] for _, english in GERMAN_PAIRS]
    with client(workers) as c:
        assert translate(c, q=german, source="de", target="fr") == (
            200,
            {"translatedText": french, "pivotLanguage": ["en"] * len(german)},
        )
        # the alternatives are the second model's, of the English text
        status, english = translate(c, q="thank you !", source="en", target="fr", alternatives=2)
        assert status == 200 and english["translatedText"] == "merci !" and len(english["alternatives"]) == 2
        assert translate(c, q="danke !", source="de", target="fr", alternatives=2) == (
            200,
            {"translatedText": "merci !", "alternatives": english["alternatives"], "pivotLanguage": "en"},
        )
        assert translate(c, q="<p><b>danke</b> !</p>", source="de", target="fr", format="html") == (
            200,
            {"translatedText": "<p><b>merci</b> !</p>", "pivotLanguage": "en"},
        )
        for refused in ({"glossary": {"danke": "merci bien"}}, {"confidence": True}):
            status, body = translate(c, q="danke !", source="de", target="fr", **refused)
            assert status == 400 and "is translated through en here (de-en-fr)" in body["error"]
        # a file: into English, then that file into French
        response = c.post(
            "/translate_file",
            data={"source": "de", "target": "fr"},
            files={"file": ("thanks.txt", b"danke !\nguten morgen !\n")},
        )
        assert response.status_code == 200 and response.json()["pivotLanguage"] == "en"
        assert c.get(response.json()["translatedFileUrl"]).text == "merci !\nbonjour !\n"
        # a direct pair says nothing of a pivot
        assert translate(c, q="thank you !", source="en", target="fr") == (200, {"translatedText": "merci !"})
    with client(workers, pivot=False) as c:
        assert translate(c, q="danke !", source="de", target="fr") == (
            400,
            {"error": "French (fr) is not available as a target language from German (de)"},
        )


def test_source_auto_sends_each_text_to_the_model_of_its_language(workers):
    with client(workers) as c:
        status, body = translate(
            c, q=["wie geht es dir ?", "le grand chien est sur le tapis ."], source="auto", target="en"
        )
        assert status == 200 and body["translatedText"] == ["how are you ?", "the big dog sat on the mat ."]
        assert [d["language"] for d in body["detectedLanguage"]] == ["de", "fr"]
        assert "pivotLanguage" not in body
        status, body = translate(
            c, q=["the big dog sat on the mat .", "wie geht es dir ?"], source="auto", target="fr"
        )
        assert status == 200 and body["translatedText"] == [
            "le grand chien est sur le tapis .",
            "comment allez vous ?",
        ]
        assert [d["language"] for d in body["detectedLanguage"]] == ["en", "de"]
        assert body["pivotLanguage"] == [None, "en"]
        # English into English: no model does it; an English text to a target only French and German reach
        status, body = translate(c, q="the big dog sat on the mat .", source="auto", target="en")
        assert status == 400 and body["error"].startswith("the text is in English (en, ")
        assert body["error"].endswith("not German or French: this server translates de or fr to en only")
        assert translate(c, q="danke !", source="auto", target="de") == (
            400,
            {"error": "nothing is translated into German (de) here"},
        )


def test_auto_is_refused_before_detection_when_no_route_could_answer():
    """What no model into the target can give (here alternatives, from engines without them) is refused at
    once, without detecting a language first."""
    back = FakeWorker()
    back.source_lang, back.target_lang = "fr", "en"
    with client([FakeWorker(), back]) as c:
        status, body = translate(
            c, q="the cat is here, on the mat .", source="auto", target="fr", alternatives=1
        )
        assert (status, body) == (
            400,
            {"error": "alternatives: this server's engine gives no alternative translations"},
        )
        assert not c.app.state.service.detector.loaded


def test_each_model_has_its_own_batcher_and_memory(workers):
    """A held model call of one pair holds no request of another; /health and /metrics state each model's
    weights."""
    held, free = FakeWorker(), FakeWorker()
    free.source_lang, free.target_lang = "fr", "en"
    held.gate.clear()
    with ThreadServer(create_app([lambda: held, lambda: free], ServeConfig())) as server:
        wait_for(lambda: post_json(f"{server.url}/languages", None)[0] == 405, message="loaded")
        waiting = threading.Thread(
            target=post_json, args=(f"{server.url}/translate", {"q": "Held.", "source": "en", "target": "fr"})
        )
        waiting.start()
        wait_for(lambda: held.calls, message="the en-fr batch in its model")
        assert post_json(f"{server.url}/translate", {"q": "Free.", "source": "fr", "target": "en"})[:2] == (
            200,
            {"translatedText": "FREE."},
        )
        assert (
            metric(server.url, "hf_seq2seq_queue_sentences", model="en-fr") == 0
        )  # in the model, not queued
        held.gate.set()
        waiting.join(timeout=30)
    with client(workers) as c:
        health = c.get("/health").json()
        assert health["status"] == "ok" and health["pivot"] is True
        weights = {f"{m['source']}-{m['target']}": m["weights_bytes"] for m in health["models"]}
        assert list(weights) == ["en-fr", "fr-en", "de-en"]
        for worker in workers:
            name = f"{worker.source_lang}-{worker.target_lang}"
            assert weights[name] == worker.translator.weights_bytes >= 4 * worker.translator.parameters
            assert (
                f'hf_seq2seq_model_weights_bytes{{model="{name}"}} {float(weights[name])}'
                in c.get("/metrics").text
            )


def test_two_models_of_one_pair_are_refused(workers):
    with pytest.raises(RuntimeError, match="two models translate en-fr: serve one of them"):
        with client([workers[0], workers[0]]):
            pass


# ------------------------------------------------------------------------------------------------- the cache

PAGE = (
    "<nav><ul><li><a href='/'>good morning !</a></li><li><a href='/thanks'>thank you !</a></li></ul></nav>"
    "<main><p>how are you ?</p><p>i like cheese .</p><p>the cat is here .</p></main>"
    "<footer><a href='/thanks'>thank you !</a></footer>"
)


def test_a_page_translated_twice_costs_no_model_work_the_second_time(workers):
    with client(workers[:1]) as c:  # no cache: the translations to hold the cached ones to
        fresh = translate(c, q=PAGE, source="en", target="fr", format="html")
        assert fresh[0] == 200 and "bonjour !" in fresh[1]["translatedText"]
    with client(workers[:1], cache_entries=1000) as c:
        before = model_work(c)
        first = translate(c, q=PAGE, source="en", target="fr", format="html")
        work = model_work(c) - before
        second = translate(c, q=PAGE, source="en", target="fr", format="html")
        assert first == second == fresh
        assert work > 0 and model_work(c) - before - work <= 0.1 * work  # none, in fact
        assert model_work(c) - before == work
        hits = metric_of(c, "hf_seq2seq_cache_hits_total")
        misses = metric_of(c, "hf_seq2seq_cache_misses_total")
        assert misses == work and hits >= work  # the second page's, and the footer's repeat in the first
        text = c.get("/metrics").text
        assert "hf_seq2seq_cache_entries " in text and "hf_seq2seq_cache_bytes " in text


def test_cached_answers_are_the_fresh_ones_each_kept_under_its_model_decoding_and_count(workers):
    """Each ask is a `Task` of its own model, kept under the model, the decoding and the count of alternatives:
    the first round misses every sentence of every ask (no ask is answered from another's entries), the second
    hits every one, and both answer as a server without a cache does."""
    texts = [english for english, _ in MEMORISED_PAIRS]
    asks = [
        {"source": "en", "target": "fr"},
        {"source": "en", "target": "fr", "max_new_tokens": 2},  # another decoding: a shorter output
        {"source": "en", "target": "fr", "num_beams": 4, "alternatives": 1},
        {"source": "en", "target": "fr", "num_beams": 4, "alternatives": 2},  # the same decoding, one more
        {"source": "en", "target": "fr", "confidence": True},
        {"source": "fr", "target": "en"},  # the same sentences and task, another model
    ]
    with client(workers[:2]) as c:
        fresh = [translate(c, q=texts, **ask) for ask in asks]
    assert fresh[1][1]["translatedText"] != fresh[0][1]["translatedText"]
    assert fresh[5][1]["translatedText"] != fresh[0][1]["translatedText"]
    with client(workers[:2], cache_entries=1000) as c:
        assert [translate(c, q=texts, **ask) for ask in asks] == fresh
        sentences = len(asks) * len(texts)
        assert metric_of(c, "hf_seq2seq_cache_misses_total") == sentences
        assert metric_of(c, "hf_seq2seq_cache_hits_total") == 0
        assert [translate(c, q=texts, **ask) for ask in asks] == fresh
        assert metric_of(c, "hf_seq2seq_cache_misses_total") == sentences
        assert metric_of(c, "hf_seq2seq_cache_hits_total") == sentences


def test_a_glossary_never_reaches_another_request(workers, tmp_path):
    keys = tmp_path / "keys.txt"
    keys.write_text("alice\nbob\ncarol\n")
    sentence = {"q": "i like cheese .", "source": "en", "target": "fr"}
    with client(workers[:1], cache_entries=1000, api_keys_file=str(keys)) as c:
        alice = translate(c, api_key="alice", glossary={"cheese": "gruyère"}, **sentence)
        bob = translate(c, api_key="bob", **sentence)
        carol = translate(c, api_key="carol", glossary=json.dumps({"cheese": "comté"}), **sentence)
        assert alice == (200, {"translatedText": "je aime le gruyère ."})
        assert bob == (200, {"translatedText": "je aime le fromage ."})
        assert carol == (200, {"translatedText": "je aime le comté ."})
        assert translate(c, api_key="alice", glossary={"cheese": "gruyère"}, **sentence) == alice
        assert metric_of(c, "hf_seq2seq_cache_hits_total") > 0


def test_the_cache_keeps_the_most_recently_used_within_its_bounds():
    cache = TranslationCache(max_entries=2, max_bytes=10_000)
    cache.put("a", "A")
    cache.put("b", "B")
    assert cache.get("a") == "A"  # now the most recent
    cache.put("c", "C")
    assert cache.get("b") is MISSING and cache.get("a") == "A" and cache.get("c") == "C"
    small = TranslationCache(max_entries=100, max_bytes=300)
    for number in range(10):
        small.put(number, "x" * 50)
    assert 0 < len(small) < 10 and small.bytes <= 300 and small.get(9) == "x" * 50
    small.put("huge", "x" * 1000)  # larger than the whole cache: not kept
    assert small.get("huge") is MISSING


def metric_of(c: TestClient, name: str) -> float:
    """A metric's samples of that name, summed over their labels."""
    from prometheus_client.parser import text_string_to_metric_families

    return sum(
        sample.value
        for family in text_string_to_metric_families(c.get("/metrics").text)
        for sample in family.samples
        if sample.name == name
    )


# ------------------------------------------------------------------------------------------- the command line


def test_serve_checks_the_models_before_it_starts(
    memorising_folder, memorising_fr_en_folder, monkeypatch, capsys, tmp_path
):
    """One model per pair, --languages once per model: the command ends with the reason before a server
    starts; else each model gets its folder's pair and engine."""
    from hf_seq2seq.cli import serve

    started = []
    monkeypatch.setattr(serve, "run_uvicorn", lambda loaders, config, args: started.append((loaders, config)))
    monkeypatch.setattr(serve, "setup_logging", lambda: None)
    en_fr, fr_en = str(memorising_folder), str(memorising_fr_en_folder)
    for argv, message in (
        ([en_fr, en_fr], "both translate en-fr"),
        ([en_fr, fr_en, "--languages", "en-fr"], "--languages is given 1 times for 2 models"),
        ([en_fr, "--languages", "english"], "--languages must be SRC-TGT"),
    ):
        with pytest.raises(SystemExit):
            serve.main(argv)
        assert message in capsys.readouterr().err
    assert not started
    serve.main([en_fr, fr_en, "--no-pivot", "--cache-entries", "500"])
    ((loaders, config),) = started
    assert [(each["languages"], each["engine"]) for each in loaders] == [
        (("en", "fr"), "torch"),
        (("fr", "en"), "torch"),
    ]
    assert config.pivot is False and config.cache_entries == 500
    started.clear()
    # a folder saved by 0.1.0 is served as the pair it records; without that record it is refused, never taken
    # as en-fr, and served as the pair given
    serve.main([str(LEGACY_FOLDER)])
    unlabelled = copy_without_pair(LEGACY_FOLDER, tmp_path / "unlabelled")
    with pytest.raises(SystemExit):
        serve.main([str(unlabelled)])
    assert "unlabelled records no language pair" in capsys.readouterr().err
    serve.main([str(unlabelled), "--languages", "fr-en"])
    assert [[each["languages"] for each in loaders] for loaders, _ in started] == [
        [("en", "fr")],
        [("fr", "en")],
    ]


# ------------------------------------------------------------------------------------------------ the exports


@pytest.fixture(scope="module")
def fr_en_export(memorising_fr_en_folder, tmp_path_factory):
    """A CTranslate2 export of the fr->en model, which records its pair."""
    from hf_seq2seq.export.ctranslate2 import export_ctranslate2

    return export_ctranslate2(
        memorising_fr_en_folder, tmp_path_factory.mktemp("exports") / "fr-en", "float32"
    )


def test_an_export_is_served_as_the_pair_it_records(fr_en_export):
    """The export says fr->en, so the server lists French into English and translates French as French."""
    metadata = json.loads((fr_en_export / EXPORT_FILE).read_text(encoding="utf-8"))
    assert (metadata["source_language"], metadata["target_language"]) == ("fr", "en")
    with client([worker_loader(fr_en_export, engine="ctranslate2")()]) as c:
        assert c.get("/languages").json() == [
            {"code": "en", "name": "English", "targets": []},
            {"code": "fr", "name": "French", "targets": ["en"]},
        ]
        french = list(ENGLISH)[:2]
        assert translate(c, q=french, source="fr", target="en") == (
            200,
            {"translatedText": [ENGLISH[text] for text in french]},
        )
        assert translate(c, q=french[0], source="en", target="fr")[0] == 400  # not en-fr


def test_an_export_that_records_no_pair_is_served_only_as_the_pair_given(fr_en_export, tmp_path, capsys):
    """An export made by 0.1.0 (its metadata without the pair) is refused by the command and by the loader,
    with the flag to give, and served as the pair given."""
    import shutil

    from hf_seq2seq.cli import serve

    old = Path(shutil.copytree(fr_en_export, tmp_path / "old"))
    metadata = json.loads((old / EXPORT_FILE).read_text(encoding="utf-8"))
    for name in ("source_language", "target_language"):
        del metadata[name]
    (old / EXPORT_FILE).write_text(json.dumps(metadata), encoding="utf-8")
    with pytest.raises(SystemExit):
        serve.main([str(old)])
    assert "old records no language pair" in capsys.readouterr().err
    with pytest.raises(UnknownLanguagePair, match="give it with --languages SRC-TGT"):
        worker_loader(old, engine="ctranslate2")()
    with client([worker_loader(old, engine="ctranslate2", languages=("fr", "en"))()]) as c:
        assert c.get("/languages").json() == [
            {"code": "en", "name": "English", "targets": []},
            {"code": "fr", "name": "French", "targets": ["en"]},
        ]
        french = list(ENGLISH)[0]
        assert translate(c, q=french, source="fr", target="en") == (200, {"translatedText": ENGLISH[french]})

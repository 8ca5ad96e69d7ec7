"""No invented sentences: a short source whose translation runs far longer than it (a label answered with a
sentence) gets the best of the model's n best that fits, or the source as written; on every engine and path,
counted in `evaluate`'s report and the server's /metrics. The models here babble one word up to their length
limit (`save_babbling_model`), whatever they read."""

import json
import urllib.request
from collections import Counter

import pytest
from helpers import every_engine, save_babbling_model, tiny_tokenizer
from serve_helpers import ThreadServer, post_json, wait_ready

from hf_seq2seq.engines.base import translate
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.engines.length_guard import fitting, overlong
from hf_seq2seq.evaluation.evaluate import evaluate_translations

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

SHORT = ["cat", "thank you", "Hello ."]  # 1-3 words: guarded
LONG = "the cat is here ."  # 5 words: translated as the model writes it


def test_a_short_source_answered_with_a_sentence_is_overlong():
    assert overlong("Edit", "Les soulagers se sont élevés.")
    assert not overlong("Edit", "Modifier")
    assert not overlong("thank you", "merci beaucoup à vous")  # 4 words for 2: within three times
    assert not overlong("Save as", "Enregistrer sous le nom de fichier")  # 6 words for 2: three times
    assert overlong("Save as", "Enregistrer sous le nom de ce fichier")  # 7 words for 2
    assert not overlong("Save the file as", "un " * 20)  # 4 words: not short
    assert not overlong("", "quelque chose")
    assert fitting("Edit", ["Il a mangé une pomme.", " ", "Modifier", "Édition"]) == "Modifier"
    assert fitting("Edit", ["Il a mangé une pomme.", ""]) is None


@pytest.fixture(scope="module")
def babbling(tmp_path_factory):
    """Two folders of models that write "chat" at every step: one whose end token comes a close second (its
    n best hold shorter translations), one whose end token never comes (every candidate as long as the limit)."""
    folder = tmp_path_factory.mktemp("babbling")
    tokenizer = tiny_tokenizer()
    return {
        ends: save_babbling_model(tokenizer, folder / ends, "chat", {"close": 49.0, "never": 0.0}[ends])
        for ends in ("close", "never")
    }


def test_the_models_here_answer_a_word_with_a_sentence(babbling):
    """Without the guard, the engines' own decoding answers every source with the word up to the limit: the tests
    below are about the guard, not about a model that happens to stop."""
    translator = load_translator(babbling["close"])
    for source, translation in zip(SHORT, translator.translate_sentences(SHORT), strict=True):
        assert overlong(source, translation) and set(translation.split()) == {"chat"}


@pytest.mark.slow  # two exports (CTranslate2 twice, ONNX once)
def test_every_engine_replaces_an_overlong_translation_of_a_short_source(babbling, tmp_path):
    """A shorter one of the n best where one ends in time, else the source as written; a long source's
    translation is left as the model wrote it; greedy and beams alike; each replacement counted."""
    from hf_seq2seq.export.onnx import export_onnx

    for ends in ("close", "never"):
        # ONNX Runtime's n best on the first model (an export takes a minute); the source copied where none fits
        # is the guard's own, engine-independent, step
        onnx = export_onnx(babbling[ends], tmp_path / "onnx") if ends == "close" else None
        for translator in every_engine(babbling[ends], tmp_path / ends, onnx):
            name = f"{ends}: {translator.engine} {translator.precision}"
            for decoding in (None, Decoding(num_beams=3)):
                raw = translator.translate_sentences([*SHORT, LONG], decoding=decoding)
                before = translator.replaced_overlong.copy()
                found = translate(translator, [*SHORT, LONG], decoding=decoding)
                assert not any(overlong(s, t) for s, t in zip(SHORT, found[:-1], strict=True)), name
                assert found[-1] == raw[-1], name
                if ends == "close":
                    assert all(t.split() and set(t.split()) == {"chat"} for t in found[:-1]), name
                else:
                    assert found[:-1] == SHORT, name
                replaced = translator.replaced_overlong - before
                guarded = sum(overlong(s, t) for s, t in zip(SHORT, raw, strict=False))
                assert guarded == len(SHORT) or decoding, name  # greedy babbles every time
                assert replaced == Counter({"hypothesis" if ends == "close" else "source": guarded}), name


def test_documents_and_evaluate_replace_and_count(babbling):
    from hf_seq2seq.formats.markup import translate_html

    translator = load_translator(babbling["never"])
    page = '<h1>Contents</h1><button>Save as</button><img alt="cat" src="x.png">'
    assert translate_html(translator, [page]) == [page]  # no label made a sentence: each left as written
    result, hypotheses = evaluate_translations(translator, SHORT, [[s] for s in SHORT], progress=False)
    assert hypotheses == SHORT
    assert result["overlong_share"] == 0.0
    # this call's replacements, not the page's
    assert result["replaced_overlong"] == {"hypothesis": 0, "source": len(SHORT)}


def test_the_server_replaces_and_counts_in_its_metrics(babbling):
    from hf_seq2seq.serving.app import create_app
    from hf_seq2seq.serving.config import ServeConfig
    from hf_seq2seq.serving.worker import worker_loader

    with ThreadServer(create_app(worker_loader(babbling["never"]), ServeConfig())) as server:
        wait_ready(server.url)
        status, body, _ = post_json(f"{server.url}/translate", {"q": SHORT, "source": "en", "target": "fr"})
        with urllib.request.urlopen(f"{server.url}/metrics") as response:
            metrics = response.read().decode()
    assert status == 200, json.dumps(body)
    assert body["translatedText"] == SHORT
    assert f'hf_seq2seq_overlong_copied_total{{model="en-fr"}} {float(len(SHORT))}' in metrics
    assert 'hf_seq2seq_overlong_shortened_total{model="en-fr"} 0.0' in metrics

"""A non-empty source never gets an empty translation, on every engine and path, whatever the model's quality:
what a reader expects unchanged (a list letter, an identifier, a file name...) is copied whole, the end token is
forbidden before a first token, and a translation still blank is the source as written. The models here would
translate everything into nothing (`save_end_first_model`): the end token is their first choice at every step."""

import json

import pytest
import torch
from helpers import every_engine, random_model_tokenizer, save_end_first_model
from serve_helpers import ThreadServer, post_json, wait_ready

from hf_seq2seq import TransformerMTForConditionalGeneration
from hf_seq2seq.engines.base import translate, translate_alternatives
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.models.folder import register_pipeline, save_model_folder
from hf_seq2seq.models.transformer_mt.protected_spans import ProtectedSplit
from hf_seq2seq.training.saved_decoding import greedy_generation_config

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

# texts a document, a page or an application sends that are not sentences: each is copied as written
VERBATIM = [
    "a", "B)", "(c)", "iv.", "3", "1.", "42", "—", "•", "$100", "10:30", "5 m",  # letters, list marks, numbers
    "github-logo", "nav-bar", "snake_case", "MAX_SIZE", "iPhone", "PowerPoint", "GitHub",  # identifiers, names
    "A4", "H2O", "mp3", "COVID-19", "x86_64",  # codes
    "report.docx", "archive.tar.gz", ".pdf", "docx", "PDF", "README.md",  # file names and extensions
]  # fmt: skip
# words, labels and titles: translated (a label "Sign-in", a compound "built-in", an ordinal "1st", a word)
TRANSLATED = [
    "cat", "Warning", "Sign-in", "Read-only", "built-in", "up-to-date", "e-mail", "1st", "OK", "Hello.", "e.g.",
    "Contents", "chat", "Fichier",
]  # fmt: skip


@pytest.mark.parametrize("text", VERBATIM)
def test_what_a_reader_expects_unchanged_is_copied_without_the_model(text):
    for written in (text, f"  {text}\n"):
        split = ProtectedSplit([written])
        assert split.pieces == []  # the model never sees it
        assert split.join([]) == [written]


@pytest.mark.parametrize("text", TRANSLATED)
def test_words_and_labels_go_to_the_model(text):
    assert ProtectedSplit([text]).pieces == [text]


def test_a_translation_that_comes_back_blank_is_the_source_as_written():
    sources = ["the cat", "See {name}.", "", "  "]
    split = ProtectedSplit(sources)
    assert split.pieces == ["the cat", "See Tom.", "See.", "", "  "]
    # nothing, or only the final punctuation a piece between spans loses; a blank source stays blank
    assert split.join(["", " ", ".", "", ""]) == ["the cat", "See {name}.", "", ""]
    assert split.join(["le chat", "Voir Tom.", "Voir.", "", ""]) == ["le chat", "Voir {name}.", "", ""]


@pytest.fixture(scope="module")
def end_first(tmp_path_factory):
    """Two folders of models that would end every translation at once: the second choice is the word "chat", or
    (None) the padding token, which decodes to nothing. The first is `end_first_export`'s model."""
    folder = tmp_path_factory.mktemp("end-first")
    tokenizer = random_model_tokenizer()
    return {
        first: save_end_first_model(tokenizer, folder / str(first), token)
        for first, token in (("chat", "▁chat"), (None, None))
    }


SOURCES = ["cat", "good morning !", "the cat is here .", "thank you"]


def test_the_models_here_would_translate_everything_into_nothing(end_first):
    """Without the engines' rule, `generate()` gives an empty translation of every source: the tests below are
    about the engines, not about a model that happens to write something."""
    translator = load_translator(end_first["chat"])
    inputs = translator.tokenizer(SOURCES, padding=True, return_tensors="pt")
    with torch.inference_mode():
        generated = translator.model.generate(**inputs, max_new_tokens=5)
    assert translator.tokenizer.batch_decode(generated, skip_special_tokens=True) == [""] * len(SOURCES)


@pytest.mark.slow  # two CTranslate2 exports, and the ONNX export
@pytest.mark.parametrize("first", ["chat", None])
def test_every_engine_writes_a_first_token_or_gives_the_source_back(
    end_first, end_first_export, tmp_path, first
):
    """The end token forbidden before a first token: the model's second choice ("chat"); where that decodes to
    nothing (padding), the source as written (ONNX Runtime decodes through the torch engine's `generate()` call,
    tested with "chat"). Greedy, beams and alternatives alike."""
    expected = ["chat"] * len(SOURCES) if first else SOURCES
    for translator in every_engine(end_first[first], tmp_path, end_first_export[1] if first else None):
        name = f"{translator.engine} {translator.precision}"
        assert translator.translate_sentences(SOURCES) == expected, name
        assert translate(translator, SOURCES, decoding=Decoding(num_beams=3)) == expected, name
        assert translate(translator, ["github-logo", "a", *SOURCES]) == ["github-logo", "a", *expected], name
        found = translate_alternatives(translator, SOURCES[:2], 2)
        assert all(all(each.strip() for each in alternatives) for alternatives in found), name


def test_training_saves_a_decoding_that_writes_a_first_token(end_first, tmp_path):
    """The saved decoding (what the shipped pipeline and a Hub user's `generate()` read) forbids the end token
    before a first token, without the package's engines."""
    from transformers import pipeline

    model = TransformerMTForConditionalGeneration.from_pretrained(end_first["chat"])
    model.generation_config = greedy_generation_config(model, (1.5, 4))
    assert model.generation_config.min_new_tokens == 1
    register_pipeline(model, "en", "fr")
    save_model_folder(model, random_model_tokenizer(), tmp_path)
    translator = pipeline("translation", model=str(tmp_path), trust_remote_code=True)
    assert [each["translation_text"] for each in translator(SOURCES)] == ["chat"] * len(SOURCES)


def test_documents_keep_every_cell_label_and_attribute(end_first):
    from hf_seq2seq.formats.markup import translate_html

    translator = load_translator(end_first[None])
    page = (
        "<ul><li>a</li><li>b</li></ul><table><tr><td>cat</td><td>3</td></tr></table>"
        '<a href="/" aria-label="github-logo" title="thank you"><img src="x.png" alt="cat"></a>'
    )
    assert translate_html(translator, [page]) == [page]  # every text the source, none emptied


def test_the_demo_answers_a_word(end_first):
    from hf_seq2seq.apps.demo import answer

    assert answer(load_translator(end_first["chat"]), "cat").translation == "chat"


def test_the_server_answers_every_text(end_first):
    from hf_seq2seq.serving.app import create_app
    from hf_seq2seq.serving.config import ServeConfig
    from hf_seq2seq.serving.worker import worker_loader

    texts = ["cat", "a", "github-logo", "good morning !"]
    with ThreadServer(create_app(worker_loader(end_first["chat"]), ServeConfig())) as server:
        wait_ready(server.url)
        status, body, _ = post_json(
            f"{server.url}/translate", {"q": texts, "source": "en", "target": "fr", "alternatives": 1}
        )
    assert status == 200, json.dumps(body)
    assert body["translatedText"] == ["chat", "a", "github-logo", "chat"]
    assert all(all(each.strip() for each in alternatives) for alternatives in body["alternatives"])

"""One sentence splitter: the pipeline shipped in every saved folder, `hf-seq2seq translate` and the server cut a
text into the same sentences.

The splitter itself (`models/transformer_mt/sentence_splitting.py`) is pinned on tricky texts: abbreviations,
decimals, quotes, ellipses, line breaks, URLs and placeholders (kept out of the model alike), a text with no final stop, and a sentence longer than training's sources,
which is cut further at its commas. Each way of translating a text is then checked against the translations of
exactly those sentences, each translated alone and joined back with the text's own spacing: a path that cut
elsewhere would translate other sentences, or another number of them.
"""

import json

import pytest
from helpers import run_without_package
from transformers import AutoTokenizer

from hf_seq2seq.cli.translate import main as translate_command
from hf_seq2seq.engines.base import translate
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.models.transformer_mt.sentence_splitting import split_text, trained_length

pytestmark = pytest.mark.floors  # the shipped splitter and pipeline at the floors too

LONG = (
    "the cat is here, the big dog sat on the mat, i like cheese and the cat is here, good morning and thank "
    "you, how are you and the big dog sat on the mat, the cat is here and i like cheese"
)  # 43 words and 6 commas: longer than the 32 tokens of the sources the tiny model was trained on

TRICKY = {
    "abbreviations": ("Mr. Smith met Dr. Brown. They talked.", ["Mr. Smith met Dr. Brown.", "They talked."]),
    "decimals": ("It costs $3.50 today. The cat is 2.5 years old.", ["It costs $3.50 today.", "The cat is 2.5 years old."]),
    "quotes": ('He said "Stop!" and left. "Why?" she asked. Fine.', ['He said "Stop!" and left.', '"Why?" she asked.', "Fine."]),
    "ellipses": ("Wait... what? I see... Good.", ["Wait... what?", "I see...", "Good."]),
    "line breaks": ("how are you ?\n\nthank you !\ngood morning", ["how are you ?", "thank you !", "good morning"]),
    "protected spans": (
        "See https://example.com/a?b=1 now. Mail tom@example.com about {count} files.",
        ["See https://example.com/a?b=1 now.", "Mail tom@example.com about {count} files."],
    ),
    "no final stop": ("The cat is here. The dog sat on the mat", ["The cat is here.", "The dog sat on the mat"]),
    "long sentence": (
        LONG,
        [
            "the cat is here, the big dog sat on the mat, i like cheese and the cat is here, good morning and thank you,",
            "how are you and the big dog sat on the mat, the cat is here and i like cheese",
        ],
    ),
}  # fmt: skip
TEXTS = [text for text, _ in TRICKY.values()]


@pytest.mark.releases
def test_the_splitter_cuts_tricky_texts_into_their_sentences(memorising_folder):
    tokenizer = AutoTokenizer.from_pretrained(memorising_folder)
    limit = trained_length(tokenizer)
    assert limit == 32

    def length(sentence: str) -> int:
        return len(tokenizer(sentence, verbose=False)["input_ids"])

    for name, (text, expected) in TRICKY.items():
        sentences, separators = split_text(text, "en", limit, length)
        assert sentences == expected, name
        assert "".join(s + t for s, t in zip(separators, [*sentences, ""], strict=True)) == text, name


@pytest.fixture(scope="module")
def expected_translations(memorising_folder) -> list[str]:
    """Each tricky text with every one of its expected sentences translated alone, in place."""
    return translated_alone(memorising_folder)


def translated_alone(folder, decoding: Decoding | None = None) -> list[str]:
    translator = load_translator(folder)
    tokenizer = translator.tokenizer
    out = []
    for text, sentences in TRICKY.values():
        translations = [translate(translator, [s], decoding=decoding)[0] for s in sentences]
        _, separators = split_text(
            text, "en", trained_length(tokenizer), lambda s: len(tokenizer(s, verbose=False)["input_ids"])
        )
        out.append("".join(s + t for s, t in zip(separators, [*translations, ""], strict=True)))
    return out


def test_the_command_line_translates_the_same_sentences(memorising_folder, expected_translations, capsys):
    """`hf-seq2seq translate FOLDER TEXT...` (its verb's `main`, which returns what it prints)."""
    assert translate_command([str(memorising_folder), *TEXTS]) == expected_translations


def test_the_server_translates_the_same_sentences(memorising_folder, expected_translations):
    pytest.importorskip("starlette")
    from serve_helpers import ThreadServer, post_json, wait_ready

    from hf_seq2seq.serving.app import create_app
    from hf_seq2seq.serving.worker import worker_loader

    with ThreadServer(create_app(worker_loader(memorising_folder))) as server:
        wait_ready(server.url)
        status, body, _ = post_json(f"{server.url}/translate", {"q": TEXTS, "source": "en", "target": "fr"})
    assert status == 200, body
    assert body["translatedText"] == expected_translations


@pytest.mark.releases
def test_the_shipped_pipeline_translates_the_same_sentences(memorising_folder, tmp_path):
    """As a Hub user without the package gets it: the folder's own pipeline and splitter (which has no over-long
    guard: compared with the package's translations without it)."""
    expected_translations = translated_alone(memorising_folder, Decoding(length_guard=False))
    body = f"""
        import json
        from transformers import pipeline
        translator = pipeline("translation", model={str(memorising_folder)!r}, trust_remote_code=True)
        print(json.dumps([record["translation_text"] for record in translator({TEXTS!r})]))
    """
    result = run_without_package(body, tmp_path, HF_HUB_DISABLE_PROGRESS_BARS="1")
    assert result.returncode == 0, result.stdout[-3000:]
    assert json.loads(result.stdout.strip().splitlines()[-1]) == expected_translations

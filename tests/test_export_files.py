"""An export folder read without transformers (`hf_seq2seq.engines.export_files`): the tokenizer answers every
call the package makes as transformers' tokenizer of the same folder does, the saved decoding reads as
`GenerationConfig` does, and the CTranslate2 engine loads and translates without importing torch or transformers."""

import copy
import json
import subprocess
import sys

import pytest
from helpers import random_model_tokenizer, save_random_model, tiny_tokenizer
from transformers import AutoTokenizer, GenerationConfig

from hf_seq2seq.engines.export_files import FileTokenizer, SavedDecoding, load_tokenizer

# ctranslate2's and tokenizers' files read at their floors; the CTranslate2 engine's test found that ctranslate2 4.0.0
# imports torch and transformers itself (2026-11-28)
pytestmark = pytest.mark.floors

TEXTS = [
    "the cat sat on the mat .",
    "  Où   est le  chien ?  ",
    "i like green apples and red cheese . where is the cat ? the dog sat on the mat .",
    "ünïcödé ﬁ ½ and an unknown ✓ token",
    "",
    "dog",
]


@pytest.fixture(scope="module", params=["bpe", "words"])
def folder(request, tmp_path_factory):
    """A saved model folder with a subword tokenizer (16 positions) or a word-level one."""
    tokenizer = random_model_tokenizer() if request.param == "bpe" else tiny_tokenizer()
    return save_random_model(tokenizer, tmp_path_factory.mktemp("files") / "model")


@pytest.mark.parametrize(
    "kwargs",
    [
        {},
        {"add_special_tokens": False},
        {"max_length": 8, "truncation": True},
        {"max_length": 8, "truncation": True, "return_offsets_mapping": True},
        {"return_offsets_mapping": True, "add_special_tokens": False},
    ],
)
def test_the_tokenizer_gives_what_transformers_gives(folder, kwargs):
    ours, theirs = FileTokenizer(folder), AutoTokenizer.from_pretrained(folder)
    for key in ("text", "text_target"):
        expected = {k: [list(map(tuple, v)) if k == "offset_mapping" else v for v in values]
                    for k, values in theirs(**{key: TEXTS}, **kwargs).items()}  # fmt: skip
        got = ours(**{key: TEXTS}, **kwargs)
        got = {
            k: [list(map(tuple, v)) if k == "offset_mapping" else v for v in values]
            for k, values in got.items()
        }
        assert got == expected, key
    single = ours(TEXTS[2], **kwargs)
    assert single["input_ids"] == theirs(TEXTS[2], **kwargs)["input_ids"]
    ids = theirs(TEXTS)["input_ids"]
    for row in ids:
        assert ours.convert_ids_to_tokens(row) == theirs.convert_ids_to_tokens(row)
        tokens = theirs.convert_ids_to_tokens(row)
        assert ours.convert_tokens_to_ids(tokens + ["never-a-token"]) == theirs.convert_tokens_to_ids(
            tokens + ["never-a-token"]
        )
        for skip in (False, True):
            assert ours.decode(row, skip_special_tokens=skip) == theirs.decode(row, skip_special_tokens=skip)
    assert ours.model_max_length == theirs.model_max_length and len(ours) == len(theirs)
    # a truncating call leaves no setting behind, and a copy (the server's splitting thread) answers the same
    assert ours(TEXTS[2])["input_ids"] == theirs(TEXTS[2])["input_ids"]
    assert copy.deepcopy(ours)(TEXTS)["input_ids"] == ids


def test_the_saved_decoding_reads_as_generation_config(folder):
    saved, theirs = SavedDecoding(folder), GenerationConfig.from_pretrained(folder)
    names = ("num_beams", "length_penalty", "no_repeat_ngram_size", "max_length_a", "max_length_b", "max_new_tokens",
             "max_length", "min_length", "min_new_tokens", "repetition_penalty", "decoder_start_token_id")  # fmt: skip
    assert {n: getattr(saved, n) for n in names} == {n: getattr(theirs, n, None) for n in names}
    assert saved.max_length_a == 1.5


def test_a_tokenizer_that_cleans_up_spaces_is_transformers_own(folder, tmp_path):
    config = json.loads((folder / "tokenizer_config.json").read_text())
    assert isinstance(load_tokenizer(folder), FileTokenizer)
    for name in ("tokenizer.json", "tokenizer_config.json"):
        (tmp_path / name).write_bytes((folder / name).read_bytes())
    (tmp_path / "tokenizer_config.json").write_text(
        json.dumps(config | {"clean_up_tokenization_spaces": True})
    )
    assert not isinstance(load_tokenizer(tmp_path), FileTokenizer)


def test_the_ctranslate2_engine_translates_without_torch_or_transformers(folder, tmp_path):
    pytest.importorskip("ctranslate2")
    from hf_seq2seq.export.ctranslate2 import export_ctranslate2

    export = export_ctranslate2(folder, tmp_path / "ct2", quantization="float32")
    # ctranslate2 releases before its lazy `specs`/`converters` (4.0.0, the floor) import torch themselves: what is
    # checked is that this package adds neither to what `import ctranslate2` brings
    code = (
        "import sys\n"
        "import ctranslate2\n"
        "before = {name for name in ('torch', 'transformers') if name in sys.modules}\n"
        "from hf_seq2seq.engines.factory import load_translator\n"
        "from hf_seq2seq.engines.base import translate\n"
        f"translator = load_translator({str(export)!r}, 'ctranslate2')\n"
        f"print(translate(translator, {TEXTS[:3]!r}, split_sentences=True))\n"
        "translator.align(['the cat'], ['le chat'])\n"
        "print([name for name in ('torch', 'transformers') if name in sys.modules and name not in before])\n"
    )
    lines = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    ).stdout.splitlines()
    from hf_seq2seq.engines.base import translate
    from hf_seq2seq.engines.factory import load_translator

    assert lines == [str(translate(load_translator(folder), TEXTS[:3], split_sentences=True)), "[]"]

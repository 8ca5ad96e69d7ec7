"""The CTranslate2 export: same greedy tokens as generate(), the saved length rule, beam search, int8, the CLI."""

import json

import pytest
import torch
from helpers import random_model_tokenizer, save_random_model
from transformers import GenerationConfig, MarianConfig

from hf_seq2seq.cli import main as cli
from hf_seq2seq.engines.alignment import AlignmentRule
from hf_seq2seq.engines.base import Translator, UnsupportedFeature, translate
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.engines.torch_engine import TorchTranslator, load_model_and_tokenizer
from hf_seq2seq.evaluation.evaluate import EvaluationSettings, evaluate_folder
from hf_seq2seq.export.metadata import EXPORT_FILE, read_metadata
from hf_seq2seq.models.folder import ExportError

pytest.importorskip("ctranslate2")
from hf_seq2seq.engines.ctranslate2_engine import GENERATE_DEFAULTS, CTranslate2Translator  # noqa: E402
from hf_seq2seq.export.ctranslate2 import export_ctranslate2  # noqa: E402

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

SOURCES = [
    "the cat sat on the mat .",
    "where is the dog ?",
    "",
    "i like green apples and red cheese . where is the cat ?",
    "dog",
    "le chat est assis sur le tapis .",
]


@pytest.fixture(scope="module")
def tokenizer():
    return random_model_tokenizer()


def generate_ids(model, tokenizer, sentences, **kwargs) -> list[list[int]]:
    """generate()'s new tokens of one padded batch, without </s> and padding."""
    batch = tokenizer(sentences, padding=True, return_tensors="pt")
    with torch.inference_mode():
        generated = model.generate(**batch, **kwargs)[:, 1:]
    special = {tokenizer.eos_token_id, tokenizer.pad_token_id}
    return [[i for i in row if i not in special] for row in generated.tolist()]


def export_ids(translator, sentences, **kwargs) -> list[list[int]]:
    """The export's tokens for the same batch (CTranslate2 drops </s> itself)."""
    tokenizer = translator.tokenizer
    tokens = [tokenizer.convert_ids_to_tokens(ids) for ids in tokenizer(sentences)["input_ids"]]
    results = translator.translator.translate_batch(tokens, beam_size=1, **kwargs)  # its default is 2
    return [tokenizer.convert_tokens_to_ids(result.hypotheses[0]) for result in results]


@pytest.mark.parametrize("normalize_before", [False, True])
def test_float32_export_gives_the_same_greedy_tokens_as_generate(tokenizer, tmp_path, normalize_before):
    folder = save_random_model(tokenizer, tmp_path / "model", normalize_before)
    export_ctranslate2(folder, tmp_path / "ct2", quantization="float32")
    model, tokenizer = load_model_and_tokenizer(folder, device="cpu")
    translator = CTranslate2Translator(tmp_path / "ct2")
    sentences = [s for s in SOURCES if s]

    for no_repeat in (0, 3):  # repeated trigrams allowed, and banned as the saved config does
        expected = generate_ids(
            model, tokenizer, sentences, max_new_tokens=12, no_repeat_ngram_size=no_repeat
        )
        assert (
            len({tuple(ids) for ids in expected}) > 1 and max(map(len, expected)) > 3
        )  # not a degenerate output
        exported = export_ids(translator, sentences, max_decoding_length=12, no_repeat_ngram_size=no_repeat)
        assert exported == expected, no_repeat
    # through translate(): the saved length rule a * S + b, batches of 2, and the blank line (each engine's n best
    # differ on a random model: without the over-long guard)
    raw = Decoding(length_guard=False)
    assert translate(translator, SOURCES, batch_size=2, decoding=raw) == translate(
        TorchTranslator(model, tokenizer), SOURCES, batch_size=2, decoding=raw
    )


def test_torch_and_ctranslate2_are_one_translator_interface(tokenizer, tmp_path):
    """What a caller of `translate` relies on: either engine's translator, from the one factory, answers the
    same facts and gives the same translations, texts of several sentences and blank lines included."""
    folder = save_random_model(tokenizer, tmp_path / "model")
    export_ctranslate2(folder, tmp_path / "ct2", quantization="float32")
    torch_engine, ct2_engine = load_translator(folder), load_translator(tmp_path / "ct2", "ctranslate2")
    assert isinstance(torch_engine, Translator) and isinstance(ct2_engine, Translator)
    assert (torch_engine.engine, ct2_engine.engine) == ("torch", "ctranslate2")
    assert (torch_engine.precision, ct2_engine.precision) == ("fp32", "float32")
    assert torch_engine.parameters == ct2_engine.parameters == torch_engine.model.num_parameters()
    assert torch_engine.max_source_length == ct2_engine.max_source_length == 64
    beams = Decoding(num_beams=3)
    assert (
        torch_engine.settings(beams) == ct2_engine.settings(beams)
        and torch_engine.settings(beams)["num_beams"] == 3
    )
    assert ct2_engine.describe() == {"quantization": "float32"}

    texts = [*SOURCES, "  where is the dog ?\n\n the cat sat on the mat . ", "   "]
    for split in (False, True):
        expected = translate(torch_engine, texts, batch_size=2, split_sentences=split)
        assert translate(ct2_engine, texts, batch_size=2, split_sentences=split) == expected, split
        assert expected[2] == "" and not expected[-1].strip() and all(expected[:2])  # blank stays blank
    assert expected[-2].startswith("  ") and "\n\n" in expected[-2]  # split and joined with its layout

    # precision: the torch engine counts its parameters before int8 packs them; an export keeps its own
    assert load_translator(folder, precision="int8").parameters == torch_engine.parameters
    assert load_translator(tmp_path / "ct2", "ctranslate2", precision="float32").precision == "float32"
    with pytest.raises(ValueError, match="float32 weights, which it keeps"):
        load_translator(tmp_path / "ct2", "ctranslate2", precision="int8")


@pytest.mark.parametrize("shift", [0, 1])
def test_ctranslate2_aligns_words_as_the_torch_engine_reads_its_last_layer(tokenizer, tmp_path, shift):
    """Word alignments on CTranslate2 (what markup, documents and glossaries need): the attention it returns while
    forced through each target is the torch engine's last decoder layer, heads averaged, so the word pairs are
    the torch engine's with that layer, row by row (a target token's own step, or with `shift` its input's)."""
    folder = save_random_model(tokenizer, tmp_path / "model")
    export_ctranslate2(folder, tmp_path / "ct2", quantization="float32")
    torch_engine, ct2_engine = load_translator(folder), load_translator(tmp_path / "ct2", "ctranslate2")
    sources = [s for s in SOURCES if s] + ["where is the cat ?", "   "]
    targets = translate(torch_engine, sources[:-1]) + ["le chat"]  # the last: a blank source
    targets[0] = "le chat est assis sur le tapis ."  # a target the model did not make
    rule = AlignmentRule(layer=-1, shift=shift)
    expected = torch_engine.align(sources, targets, batch_size=3, rule=rule)
    assert ct2_engine.align(sources, targets, batch_size=3, rule=AlignmentRule(shift=shift)) == expected
    assert expected[-1] == [] and all(expected[:-1])
    assert expected != torch_engine.align(
        sources, targets, batch_size=3, rule=AlignmentRule(layer=0, shift=shift)
    )

    # an export made before CTranslate2 returned this attention (and before both exports' one metadata schema:
    # `hf_seq2seq.export.metadata`) loads, and says how to get one that does
    written = read_metadata(tmp_path / "ct2")
    (tmp_path / "ct2" / EXPORT_FILE).write_text(
        json.dumps(
            {
                "model_type": written.source_model_type,
                "max_source_length": written.max_source_length,
                "parameters": written.parameters,
                "quantization": written.quantization,
                "ctranslate2_version": written.format_version,
            }
        )
    )
    with pytest.raises(UnsupportedFeature, match="export it again with `hf-seq2seq export ctranslate2`"):
        load_translator(tmp_path / "ct2", "ctranslate2").align(sources, targets)


# min_new_tokens forces generate() past the cap on purpose
@pytest.mark.filterwarnings("ignore:Unfeasible length constraints")
def test_the_export_applies_the_saved_length_rule_per_batch(tokenizer, tmp_path):
    folder = save_random_model(tokenizer, tmp_path / "model", length_rule=(1.5, 2))
    model, tokenizer = load_model_and_tokenizer(folder, device="cpu")
    model.generation_config.min_new_tokens = 100  # no </s> before the limit: the rule decides the length
    model.generation_config.save_pretrained(folder)
    export_ctranslate2(folder, tmp_path / "ct2", quantization="float32")
    translator = CTranslate2Translator(tmp_path / "ct2")

    short, long = "dog", "i like green apples and red cheese . where is the cat ?"
    translations = translate(translator, [short, long], batch_size=1)
    assert translations == translate(TorchTranslator(model, tokenizer), [short, long], batch_size=1)
    for sentence in (short, long):  # generate() stops at the rule, not at the cap of 63 tokens
        source_tokens = len(tokenizer(sentence)["input_ids"])
        assert len(generate_ids(model, tokenizer, [sentence])[0]) == -(-3 * source_tokens // 2) + 2
    fixed = Decoding(max_new_tokens=3)
    assert translate(translator, [long], decoding=fixed) == translate(
        TorchTranslator(model, tokenizer), [long], decoding=fixed
    )


def test_int8_export_translates_with_beam_search(tokenizer, tmp_path):
    folder = save_random_model(tokenizer, tmp_path / "model")
    export_ctranslate2(folder, tmp_path / "ct2", quantization="int8")
    translator = CTranslate2Translator(tmp_path / "ct2")
    assert translator.metadata.quantization == "int8"
    for decoding in (Decoding(), Decoding(num_beams=4, length_penalty=0.6)):
        translations = translate(translator, SOURCES, batch_size=4, decoding=decoding)
        assert len(translations) == len(SOURCES) and translations[2] == ""
        assert all(translations[i] for i in (0, 1, 3))


def test_a_folder_that_is_not_a_transformer_mt_model_is_refused(tmp_path):
    MarianConfig(vocab_size=10, d_model=8).save_pretrained(tmp_path / "marian")
    with pytest.raises(ExportError, match="'marian' model; only 'transformer_mt'"):
        export_ctranslate2(tmp_path / "marian", tmp_path / "ct2")
    assert not (tmp_path / "ct2").exists()
    with pytest.raises(
        ExportError, match="is a saved model folder, not a CTranslate2 export; export it with"
    ):
        CTranslate2Translator(tmp_path / "marian")


# min_new_tokens forces generate() past the cap on purpose, and no length is set on purpose
@pytest.mark.filterwarnings("ignore:Unfeasible length constraints", "ignore:Using the model-agnostic default")
def test_settings_the_saved_config_leaves_unset_are_those_generate_uses(tokenizer, tmp_path):
    """A generation config that sets the special tokens only: the export decodes with `GENERATE_DEFAULTS`, the
    values `generate()` itself fills in (greedy, no penalty or ban, no minimum, and its default `max_length`,
    which it counts in new tokens), so the two engines give the same translations, of the same length."""
    folder = save_random_model(tokenizer, tmp_path / "model")
    special = ("bos_token_id", "eos_token_id", "pad_token_id", "decoder_start_token_id")
    saved = GenerationConfig.from_pretrained(folder)
    GenerationConfig(**{name: getattr(saved, name) for name in special}).save_pretrained(folder)
    export_ctranslate2(folder, tmp_path / "ct2", quantization="float32")
    translator = CTranslate2Translator(tmp_path / "ct2")
    model, tokenizer = load_model_and_tokenizer(folder, device="cpu")
    unset = (
        "num_beams",
        "length_penalty",
        "min_length",
        "max_length",
        "repetition_penalty",
        "no_repeat_ngram_size",
    )
    assert all(getattr(translator.generation_config, name) is None for name in unset)  # left to generate()
    assert translate(translator, SOURCES, batch_size=2) == translate(
        TorchTranslator(model, tokenizer), SOURCES, batch_size=2
    )

    for config in (model.generation_config, translator.generation_config):
        config.min_new_tokens = 100  # no </s> before the limit: the default length decides
    long = ["i like green apples and red cheese . where is the cat ?"]
    with torch.inference_mode():
        generated = model.generate(**tokenizer(long, return_tensors="pt"))
    assert generated.shape[1] - 1 == GENERATE_DEFAULTS["max_length"]  # new tokens, after the decoder start
    assert translate(translator, long) == translate(TorchTranslator(model, tokenizer), long)


def test_the_generation_defaults_the_export_uses_are_transformers_own():
    """The engine decodes an unset setting with the value transformers documents (it reads no transformers: see
    above for `generate()` itself); where transformers keeps its table of defaults, the values are the table's."""
    table = getattr(GenerationConfig, "_get_default_generation_params", None)
    if table is None:
        pytest.skip("this transformers has no table of generation defaults to compare with")
    assert {name: table()[name] for name in GENERATE_DEFAULTS} == GENERATE_DEFAULTS


def test_export_translate_and_evaluate_commands(tokenizer, tmp_path, capsys):
    folder = save_random_model(tokenizer, tmp_path / "model")
    out = tmp_path / "ct2"
    cli(["export", "ctranslate2", str(folder), str(out), "--quantization", "float32"])
    expected = cli_translate(["translate", str(folder), *SOURCES[:2]], capsys)
    assert cli_translate(["translate", "--engine", "ctranslate2", str(out), *SOURCES[:2]], capsys) == expected
    assert len(expected) == 2 and all(expected)

    src, ref = tmp_path / "src.txt", tmp_path / "ref.txt"
    src.write_text("\n".join(SOURCES[:2]) + "\n")
    ref.write_text("le chat\noù est le chien ?\n")
    settings = EvaluationSettings(src_file=str(src), ref_files=[str(ref)], engine="ctranslate2")
    report = evaluate_folder(out, tmp_path / "eval", settings)
    assert report.num_sentences == 2
    assert (tmp_path / "eval" / "translations.txt").read_text().splitlines() == expected


def cli_translate(argv, capsys) -> list[str]:
    capsys.readouterr()
    cli(argv)
    return capsys.readouterr().out.splitlines()


def test_the_hub_folder_can_carry_the_export(tmp_path):
    from helpers import REPO_ID, make_trained_folder

    from hf_seq2seq.hub.push import build_hub_folder

    trained = make_trained_folder(tmp_path / "trained")
    folder = build_hub_folder(trained, tmp_path / "hub", REPO_ID, ctranslate2="int8")
    translator = CTranslate2Translator(folder / "ctranslate2")
    assert translator.metadata.quantization == "int8"
    assert len(translate(translator, ["how are you ?", ""])) == 2
    card = (folder / "README.md").read_text()
    assert 'allow_patterns="ctranslate2/*"' in card and "(int8 weights)" in card
    assert (
        "ctranslate2/"
        not in (build_hub_folder(trained, tmp_path / "plain", REPO_ID) / "README.md").read_text()
    )

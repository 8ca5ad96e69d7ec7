"""Decoding that a broken cache or search would spoil, whatever breaks it (a transformers release that renames the
decoding cache, say), checked on a tiny model trained in the test run to translate `MEMORISED_PAIRS`:

- greedy and beam search, the pipeline and each engine translate its training sentences exactly;
- through `GenerationMixin` (beam search, and any call the hand-written greedy search hands on), tokens and scores
  with the cache equal those without it;
- beam search with one beam is greedy search; beam search finds sequences at least as likely as greedy search's;
- the model takes the cache under the name of the installed transformers release and under the older one;
- the folder saved before the transformers 5.24 fix (`fixtures/folder-0.1.0`) loads with and without the package,
  and after `hf-seq2seq upgrade` decodes correctly for a Hub user, with no warning.

CI runs these (`-m releases`) under the oldest transformers release the project supports as well as the newest.
"""

import copy
import shutil
import warnings
from pathlib import Path

import pytest
import torch
from helpers import LEGACY_FOLDER, MEMORISED_PAIRS, run_without_package
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, GenerationMixin, pipeline
from transformers.cache_utils import EncoderDecoderCache

from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.torch_engine import TorchTranslator
from hf_seq2seq.models.folder import SHIPPED_MODULES, refresh_code
from hf_seq2seq.models.transformer_mt import modeling_transformer_mt
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import CACHE_NAME

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

SOURCES = [source for source, _ in MEMORISED_PAIRS]
TARGETS = [target for _, target in MEMORISED_PAIRS]
# sentences of the same words that the model was not trained on: beam search and greedy search may part there
UNSEEN = [
    "the cat sat on the mat .",
    "i like the big dog .",
    "how are you here ?",
    "thank you the cat !",
    "good morning the dog is here .",
    "the small red house is here .",
]
BEAMS = [1, 4]


@pytest.fixture(scope="module")
def memorised(memorising_folder):
    """The trained tiny model (this package's classes) and its tokenizer."""
    tokenizer = AutoTokenizer.from_pretrained(memorising_folder)
    return AutoModelForSeq2SeqLM.from_pretrained(memorising_folder).eval(), tokenizer


def batch_of(tokenizer, sentences: list[str]) -> dict[str, torch.Tensor]:
    return dict(tokenizer(sentences, padding=True, return_tensors="pt"))


def log_probability(model, batch: dict, sequences: torch.Tensor) -> torch.Tensor:
    """(B,) the sum of the log-probabilities the model gives each row's tokens after the decoder's start token,
    up to and including its first EOS (the padding after it is not scored); teacher-forced, without a cache."""
    labels = sequences[:, 1:]  # (B, N)
    with torch.inference_mode():
        logits = model(**batch, decoder_input_ids=sequences[:, :-1], use_cache=False).logits  # (B, N, V)
    token_scores = logits.log_softmax(-1).gather(-1, labels[..., None])[..., 0]  # (B, N)
    is_eos = labels == model.config.eos_token_id
    before_first_eos = (is_eos.cumsum(1) - is_eos.long()) == 0
    return (token_scores * before_first_eos).sum(1)


@pytest.mark.parametrize("num_beams", BEAMS)
def test_generate_translates_the_training_sentences(memorised, num_beams):
    model, tokenizer = memorised
    with torch.inference_mode():
        output = model.generate(**batch_of(tokenizer, SOURCES), num_beams=num_beams)
    assert tokenizer.batch_decode(output, skip_special_tokens=True) == TARGETS


@pytest.mark.parametrize("num_beams", BEAMS)
def test_generation_mixin_decodes_the_same_with_and_without_the_cache(memorised, num_beams):
    """`GenerationMixin` itself (the model's `generate()` hands it all but plain greedy search)."""
    model, tokenizer = memorised
    batch = batch_of(tokenizer, SOURCES + UNSEEN)
    kwargs = dict(num_beams=num_beams, max_new_tokens=12, output_scores=True, return_dict_in_generate=True)
    with torch.inference_mode():
        cached = GenerationMixin.generate(model, **batch, **kwargs)
        uncached = GenerationMixin.generate(model, **batch, use_cache=False, **kwargs)
    assert torch.equal(cached.sequences, uncached.sequences)
    for cached_step, uncached_step in zip(cached.scores, uncached.scores, strict=True):
        torch.testing.assert_close(cached_step, uncached_step, atol=1e-4, rtol=1e-4)
    assert tokenizer.batch_decode(cached.sequences[: len(SOURCES)], skip_special_tokens=True) == TARGETS


def test_one_beam_is_greedy_search(memorised):
    """`num_beams=1` through `GenerationMixin` gives the tokens of the model's own greedy search."""
    model, tokenizer = memorised
    batch = batch_of(tokenizer, SOURCES + UNSEEN)
    with torch.inference_mode():
        greedy = model.generate(**batch)
        one_beam = GenerationMixin.generate(model, **batch, num_beams=1)
    assert torch.equal(one_beam, greedy)


def test_beam_search_finds_sequences_at_least_as_likely_as_greedy_search(memorised):
    """Scored by the model itself (sum of token log-probabilities; no length penalty, so that beam search ranks by
    the same score), each beam-search translation is at least as likely as greedy search's."""
    model, tokenizer = memorised
    batch = batch_of(tokenizer, SOURCES + UNSEEN)
    with torch.inference_mode():
        greedy = model.generate(**batch)
        beams = model.generate(**batch, num_beams=4, length_penalty=0.0)
    greedy_scores, beam_scores = log_probability(model, batch, greedy), log_probability(model, batch, beams)
    assert (beam_scores >= greedy_scores - 1e-4).all(), (beam_scores, greedy_scores)


def test_the_cache_goes_in_under_either_name_and_comes_out_under_the_installed_releases(memorised):
    """`CACHE_NAME` is the name this transformers release's `generate()` passes the cache under; continuing from a
    cache given under either name gives the uncached logits, with a deprecation warning for the old name only where
    it is old; giving both is an error."""
    model, tokenizer = memorised
    batch = batch_of(tokenizer, SOURCES)
    start = torch.full((len(SOURCES), 1), model.config.decoder_start_token_id)
    with torch.inference_mode():
        first = model(**batch, decoder_input_ids=start, use_cache=True)
        cache = getattr(first, CACHE_NAME)
        assert isinstance(cache, EncoderDecoderCache) and CACHE_NAME in first.keys()
        step_inputs = model.prepare_inputs_for_generation(
            start, attention_mask=batch["attention_mask"], **{CACHE_NAME: cache}
        )
        assert step_inputs[CACHE_NAME] is cache
        following = first.logits[:, -1].argmax(-1, keepdim=True)
        uncached = model(**batch, decoder_input_ids=torch.cat([start, following], 1), use_cache=False).logits
        for name in ("cache", "past_key_values"):
            # the old name, where it is old, gets transformers' deprecation warning (as its own models give)
            deprecated = name == "past_key_values" != CACHE_NAME
            with warnings.catch_warnings(record=True) as caught:
                warnings.simplefilter("always")
                continued = model(**batch, decoder_input_ids=following, **{name: copy.deepcopy(cache)}).logits
            torch.testing.assert_close(continued[:, -1], uncached[:, -1], atol=1e-5, rtol=1e-5)
            assert [str(w.message) for w in caught if "deprecated" in str(w.message)] == (
                ["`past_key_values` is deprecated and will be removed in version 5.40.0 for "
                 f"`{type(model).__name__}.forward`. Use `cache` instead."] if deprecated else []
            )  # fmt: skip
        with pytest.raises(ValueError, match="cache"):
            model(**batch, decoder_input_ids=following, cache=cache, past_key_values=cache)


def test_attention_without_get_interface_is_the_same(memorised, monkeypatch):
    """Before transformers 5.1 the attention interface had no `get_interface`: the model looks the implementation
    up as a mapping instead, with the same result."""
    model, tokenizer = memorised
    batch = batch_of(tokenizer, UNSEEN)
    with torch.inference_mode():
        expected = model(**batch, decoder_input_ids=batch["input_ids"]).logits
        monkeypatch.delattr(type(modeling_transformer_mt.ALL_ATTENTION_FUNCTIONS), "get_interface")
        assert not hasattr(modeling_transformer_mt.ALL_ATTENTION_FUNCTIONS, "get_interface")
        torch.testing.assert_close(model(**batch, decoder_input_ids=batch["input_ids"]).logits, expected)


@pytest.mark.parametrize("num_beams", BEAMS)
def test_pipeline_translates_the_training_sentences(memorising_folder, num_beams):
    """With the decoding settings given to each call, or once when the pipeline is made."""
    translator = pipeline("translation", model=str(memorising_folder), trust_remote_code=True)
    for use_cache in (True, False):
        records = translator(SOURCES, num_beams=num_beams, use_cache=use_cache)
        assert [record["translation_text"] for record in records] == TARGETS
    translator = pipeline(
        "translation", model=str(memorising_folder), trust_remote_code=True, num_beams=num_beams
    )
    assert [record["translation_text"] for record in translator(SOURCES)] == TARGETS


def test_pipeline_settings_given_when_made_apply_under_the_calls(memorising_folder):
    translator = pipeline(
        "translation", model=str(memorising_folder), trust_remote_code=True, max_new_tokens=2
    )
    assert translator(SOURCES[0]) == [{"translation_text": "comment allez"}]
    assert translator(SOURCES[0], max_new_tokens=20) == [{"translation_text": TARGETS[0]}]


@pytest.mark.parametrize("num_beams", BEAMS)
def test_torch_engine_translates_the_training_sentences(memorised, num_beams):
    translator = TorchTranslator(*memorised)
    assert translator.translate_sentences(SOURCES, decoding=Decoding(num_beams=num_beams)) == TARGETS


@pytest.fixture(scope="module")
def pre_ln_export(pre_ln_memorising_export):
    """A pre-LN model (the CPU presets' layout: its extra final norms are traced like the rest) trained like
    `memorising_folder`, its tokenizer and its ONNX export; test_onnx_export.py's export is of a post-LN model."""
    folder, export = pre_ln_memorising_export
    model = AutoModelForSeq2SeqLM.from_pretrained(folder).eval()
    assert model.config.normalize_before
    return model, AutoTokenizer.from_pretrained(folder), export


@pytest.mark.parametrize("num_beams", BEAMS)
def test_onnxruntime_engine_decodes_the_same_with_and_without_the_cache(pre_ln_export, num_beams):
    """The ONNX Runtime engine decodes through `GenerationMixin` too."""
    from hf_seq2seq.engines.onnxruntime_engine import OnnxTranslator

    model, tokenizer, export = pre_ln_export
    translator = OnnxTranslator(export)
    assert translator.translate_sentences(SOURCES, decoding=Decoding(num_beams=num_beams)) == TARGETS
    batch = batch_of(tokenizer, SOURCES + UNSEEN)
    with torch.inference_mode():
        cached = translator.model.generate(**batch, num_beams=num_beams, max_new_tokens=12)
        uncached = translator.model.generate(**batch, num_beams=num_beams, max_new_tokens=12, use_cache=False)
        torch_engine = GenerationMixin.generate(model, **batch, num_beams=num_beams, max_new_tokens=12)
    assert torch.equal(cached, uncached)
    assert torch.equal(cached, torch_engine)


@pytest.fixture
def legacy_copy(tmp_path) -> Path:
    """A copy of the folder saved before the transformers 5.24 fix."""
    return Path(shutil.copytree(LEGACY_FOLDER, tmp_path / "folder-0.1.0"))


def code_files(folder: Path) -> dict[str, bytes]:
    return {path.name: path.read_bytes() for path in folder.iterdir() if path.suffix == ".py"}


@pytest.mark.parametrize("num_beams", BEAMS)
def test_the_old_folder_loads_with_the_package_and_translates(legacy_copy, num_beams):
    """With the package installed, the Auto classes load the old folder's weights into today's code."""
    tokenizer = AutoTokenizer.from_pretrained(legacy_copy)
    model = AutoModelForSeq2SeqLM.from_pretrained(legacy_copy).eval()
    assert type(model).__module__ == modeling_transformer_mt.__name__
    with torch.inference_mode():
        output = model.generate(**batch_of(tokenizer, SOURCES), num_beams=num_beams)
    assert tokenizer.batch_decode(output, skip_special_tokens=True) == TARGETS


def test_upgrade_replaces_the_code_and_leaves_the_rest(legacy_copy):
    others = {path.name: path.read_bytes() for path in legacy_copy.iterdir() if path.suffix != ".py"}
    assert (
        code_files(legacy_copy)["modeling_transformer_mt.py"]
        != Path(modeling_transformer_mt.__file__).read_bytes()
    )
    written = refresh_code(legacy_copy)
    assert "modeling_transformer_mt.py" in written
    shipped = {Path(module.__file__).name: Path(module.__file__).read_bytes() for module in SHIPPED_MODULES}
    assert code_files(legacy_copy) == shipped
    assert {path.name: path.read_bytes() for path in legacy_copy.iterdir() if path.suffix != ".py"} == others
    assert refresh_code(legacy_copy) == []


def test_upgrade_command_refuses_a_model_of_another_type(legacy_copy):
    from hf_seq2seq.cli import main

    config = legacy_copy / "config.json"
    config.write_text(config.read_text().replace('"transformer_mt"', '"marian"'))
    with pytest.raises(SystemExit, match="hf-seq2seq upgrade: .* holds a 'marian' model"):
        main(["upgrade", str(legacy_copy)])


HUB_USER_DECODES = f"""
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, GenerationMixin, pipeline
    folder = FOLDER
    tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder, trust_remote_code=True).eval()
    assert type(model).__module__.startswith("transformers_modules"), type(model).__module__
    batch = tokenizer({SOURCES!r}, padding=True, return_tensors="pt")
    print("GREEDY", tokenizer.batch_decode(model.generate(**batch), skip_special_tokens=True) == {TARGETS!r})
    for num_beams in {BEAMS!r}:
        for use_cache in (True, False):
            output = GenerationMixin.generate(model, **batch, num_beams=num_beams, use_cache=use_cache)
            translations = tokenizer.batch_decode(output, skip_special_tokens=True)
            print("GENERATE", num_beams, use_cache, translations == {TARGETS!r})
    records = pipeline("translation", model=folder, trust_remote_code=True)({SOURCES!r}, num_beams=4)
    print("PIPELINE", [record["translation_text"] for record in records] == {TARGETS!r})
"""


def test_upgraded_old_folder_decodes_for_a_hub_user_with_no_warning(legacy_copy, tmp_path):
    """After `hf-seq2seq upgrade`, the old folder's own code (no package) decodes correctly with greedy and beam
    search, with and without the cache, and through the pipeline; the process prints nothing else."""
    assert main_upgrade(legacy_copy) == 0
    body = HUB_USER_DECODES.replace("FOLDER", repr(str(legacy_copy)))
    result = run_without_package(body, tmp_path, HF_HUB_DISABLE_PROGRESS_BARS="1")
    assert result.returncode == 0, result.stdout[-3000:]
    expected = ["GREEDY True"]
    expected += [f"GENERATE {beams} {cache} True" for beams in BEAMS for cache in (True, False)]
    assert result.stdout.splitlines() == expected + ["PIPELINE True"], result.stdout[-3000:]


def main_upgrade(folder: Path) -> int:
    from hf_seq2seq.cli import main

    return main(["upgrade", str(folder)])

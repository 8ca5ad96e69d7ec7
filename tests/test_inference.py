"""Translation through the package: the saved length policy, beam search, long inputs, averaged checkpoints."""

import pytest
import torch
from helpers import make_trained_folder
from transformers import AutoModelForSeq2SeqLM

from hf_seq2seq import TransformerMTConfig, TransformerMTForConditionalGeneration
from hf_seq2seq.cli import average as average_cli
from hf_seq2seq.data.segmentation import split_sentences
from hf_seq2seq.data.tokenization import train_tokenizer
from hf_seq2seq.engines.base import translate
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.engines.torch_engine import TorchTranslator, load_model_and_tokenizer
from hf_seq2seq.evaluation.evaluate import evaluate_translations
from hf_seq2seq.models.folder import save_model_folder
from hf_seq2seq.training.averaging import average_checkpoints
from hf_seq2seq.training.saved_decoding import greedy_generation_config

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

CORPUS = [
    "the cat sat on the mat .",
    "le chat est assis sur le tapis .",
    "where is the dog ?",
    "où est le chien ?",
]


@pytest.fixture(scope="module")
def tokenizer():
    tokenizer = train_tokenizer(CORPUS * 20, vocab_size=80)
    tokenizer.model_max_length = 16  # the longest source of (imagined) training
    return tokenizer


def random_model(tokenizer, length_rule=(1.5, 4), seed: int = 0) -> TransformerMTForConditionalGeneration:
    config = TransformerMTConfig(
        vocab_size=len(tokenizer), d_model=32, encoder_layers=1, decoder_layers=2, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=512,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    torch.manual_seed(seed)
    model = TransformerMTForConditionalGeneration(config).eval()
    model.generation_config = greedy_generation_config(model, length_rule)
    return model


def new_tokens(tokenizer, text: str) -> int:
    return len(tokenizer(text, add_special_tokens=False)["input_ids"])


def test_translations_are_not_cut_at_transformers_default_20_tokens(tokenizer, tmp_path):
    model = random_model(tokenizer, length_rule=(1.5, 30))
    model.generation_config.min_new_tokens = 32  # no </s> before the saved limit
    save_model_folder(model, tokenizer, tmp_path)
    model, tokenizer = load_model_and_tokenizer(tmp_path, device="cpu")
    source = "the cat sat on the mat ."
    (text,) = translate(TorchTranslator(model, tokenizer), [source])
    assert new_tokens(tokenizer, text) >= 30
    scores, (hypothesis,) = evaluate_translations(
        TorchTranslator(model, tokenizer), [source], [["le chat"]], progress=False
    )
    assert hypothesis == text and scores["num_sentences"] == 1  # the test evaluation of training, too


def test_the_length_limit_grows_with_the_source(tokenizer):
    model = random_model(tokenizer, length_rule=(1.5, 2))
    model.generation_config.suppress_tokens = [tokenizer.eos_token_id]  # no </s>: the limit decides
    short, long = "where is the dog ?", " ".join(["the cat sat on the mat ."] * 4)
    for source in (short, long):
        batch = tokenizer([source], return_tensors="pt")
        generated = model.generate(**batch)
        source_tokens = batch["input_ids"].shape[1]
        assert generated.shape[1] - 1 == -(-3 * source_tokens // 2) + 2  # ceil(1.5 S + 2) new tokens
    batch = tokenizer(["where is the dog ?"], return_tensors="pt")
    assert model.generate(**batch, max_new_tokens=3).shape[1] == 4  # a fixed limit overrides the rule


def test_the_saved_decoding_never_repeats_a_trigram(tokenizer):
    """A model stuck on a few tokens: with the saved config no token trigram comes twice (the greedy loops of
    real models), while without the ban the same model loops."""
    model = random_model(tokenizer, length_rule=(1.5, 30))
    model.generation_config.suppress_tokens = [tokenizer.eos_token_id]  # long outputs

    def trigrams(decoding: Decoding) -> list[list[tuple]]:
        (text,) = translate(
            TorchTranslator(model, tokenizer), ["the cat sat on the mat ."], decoding=decoding
        )
        ids = [tokenizer.pad_token_id, *tokenizer(text, add_special_tokens=False)["input_ids"]]
        assert len(ids) > 20
        return [tuple(ids[i : i + 3]) for i in range(len(ids) - 2)]

    saved = trigrams(Decoding())
    assert len(set(saved)) == len(saved)
    looping = trigrams(Decoding(no_repeat_ngram_size=0))
    assert len(set(looping)) < len(looping)


@pytest.mark.parametrize("normalize_before", [False, True])
def test_beam_search_with_the_cache_matches_without_it_and_beats_greedy(tokenizer, normalize_before):
    model = random_model(tokenizer, seed=3)
    model.config.normalize_before = normalize_before
    batch = tokenizer(["the cat sat on the mat .", "where is the dog ?", "où est le chien ?"],
                      padding=True, return_tensors="pt")  # fmt: skip
    beam = dict(num_beams=4, length_penalty=0.0, max_new_tokens=8, early_stopping=True)
    cached = model.generate(**batch, **beam, use_cache=True, return_dict_in_generate=True, output_scores=True)
    uncached = model.generate(
        **batch, **beam, use_cache=False, return_dict_in_generate=True, output_scores=True
    )
    assert torch.equal(cached.sequences, uncached.sequences)
    torch.testing.assert_close(cached.sequences_scores, uncached.sequences_scores)
    greedy = model.generate(**batch, max_new_tokens=8)
    assert (cached.sequences_scores >= log_probability(model, batch, greedy) - 1e-4).all()


def log_probability(model, batch, sequences: torch.Tensor) -> torch.Tensor:
    """Sum of the log-probabilities of each generated sequence (up to and with its </s>), per row."""
    labels = sequences[:, 1:].clone()
    finished = (labels == model.config.eos_token_id).int().cumsum(1)
    labels[(finished - (labels == model.config.eos_token_id).int()) > 0] = -100  # after </s>
    logits = model(**batch, decoder_input_ids=sequences[:, :-1]).logits
    scores = torch.log_softmax(logits, -1).gather(-1, labels.clamp(min=0).unsqueeze(-1)).squeeze(-1)
    return (scores * (labels != -100)).sum(1)


def test_a_paragraph_is_translated_sentence_by_sentence_with_its_layout(tokenizer):
    translator = TorchTranslator(random_model(tokenizer), tokenizer)
    sentences = ["The cat sat on the mat.", "Where is the dog?", "The dog sat.", "Where is the cat?", "Go!"]
    paragraph = "  " + " ".join(sentences[:3]) + "\n\n" + " ".join(sentences[3:]) + "\n"
    one_by_one = translate(translator, sentences, split_sentences=False)
    (translated,) = translate(translator, [paragraph], split_sentences=True)
    expected = "  " + " ".join(one_by_one[:3]) + "\n\n" + " ".join(one_by_one[3:]) + "\n"
    assert translated == expected


def test_an_input_far_longer_than_training_is_cut_into_pieces_not_dropped(tokenizer):
    translator = TorchTranslator(random_model(tokenizer), tokenizer)
    text = " ".join(["the cat sat on the mat , where is the dog"] * 30)  # ~330 tokens, no full stop
    assert new_tokens(tokenizer, text) >= 300
    pieces = split_sentences(text, "en", tokenizer.model_max_length, lambda s: len(tokenizer(s)["input_ids"]))
    assert len(pieces.sentences) > 10 and pieces.join(pieces.sentences) == text  # nothing dropped
    assert all(len(tokenizer(piece)["input_ids"]) <= tokenizer.model_max_length for piece in pieces.sentences)
    (translated,) = translate(translator, [text], split_sentences=True)
    assert translated == " ".join(translate(translator, pieces.sentences, split_sentences=False))


def test_an_unknown_engine_or_precision_is_refused_naming_the_known_ones(tmp_path):
    with pytest.raises(ValueError, match="engine must be one of torch, ctranslate2, onnxruntime; got 'nope'"):
        load_translator(tmp_path, engine="nope")
    with pytest.raises(ValueError, match="precision must be one of fp32, bf16, int8; got 'fp16'"):
        load_translator(tmp_path, precision="fp16")  # before looking for a model


def test_decoding_passes_only_what_is_set():
    assert Decoding().generate_kwargs() == {}
    assert Decoding(num_beams=4).generate_kwargs() == {"num_beams": 4}


def test_averaging_identical_checkpoints_gives_the_same_weights(tmp_path):
    folders = [make_trained_folder(tmp_path / f"checkpoint-{i}", seed=0) for i in (1, 2, 3)]
    averaged = average_checkpoints(folders, tmp_path / "averaged")
    original = AutoModelForSeq2SeqLM.from_pretrained(folders[0]).state_dict()
    loaded = AutoModelForSeq2SeqLM.from_pretrained(averaged).state_dict()
    assert original.keys() == loaded.keys()
    for name, tensor in original.items():
        torch.testing.assert_close(loaded[name], tensor, rtol=0, atol=1e-7, msg=name)


def test_an_averaged_folder_is_the_mean_and_loads_and_translates(tmp_path):
    run = tmp_path / "run"
    folders = [make_trained_folder(run / f"checkpoint-{step}", seed=step) for step in (10, 20, 30)]
    for folder in folders:
        (folder / "trainer_state.json").write_text("{}")  # what makes a checkpoint complete
    average_cli.main([str(run), "--last", "2", "--output-dir", str(tmp_path / "avg")])
    states = [AutoModelForSeq2SeqLM.from_pretrained(f).state_dict() for f in folders[1:]]
    model, tokenizer = load_model_and_tokenizer(tmp_path / "avg", device="cpu")
    for name, tensor in model.state_dict().items():
        torch.testing.assert_close(tensor, (states[0][name] + states[1][name]) / 2, msg=name)
    assert len(translate(TorchTranslator(model, tokenizer), ["how are you ?", ""])) == 2


def test_only_blank_texts_translate_without_an_error(trained):
    """Blank texts never reach the model: "" each, or as they are when split into sentences (none)."""
    translator = load_translator(trained)
    blanks = ["", "  ", "\n"]
    assert translate(translator, blanks) == ["", "", ""]
    assert translate(translator, blanks, split_sentences=True) == blanks

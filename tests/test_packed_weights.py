"""The torch engine's packed weights (`hf_seq2seq.engines.packed_weights`): the model's greedy search on them
gives the tokens of the plain layers, packs only where it pays, follows weights that change, falls back to the
same tokens when torch's private ops are missing or fail, and is what the package's torch engine uses, while a
model as the Auto classes load it (as a Hub user without the package gets it) decodes with its plain layers."""

import types

import pytest
import torch
from helpers import tiny_config, tiny_tokenizer
from transformers import GenerationMixin

from hf_seq2seq import TransformerMTForConditionalGeneration
from hf_seq2seq.engines import packed_weights
from hf_seq2seq.engines.packed_weights import (
    packed_linear,
    packing_available,
    packing_pays,
    use_packed_weights,
)
from hf_seq2seq.engines.torch_engine import TorchTranslator

pytestmark = [
    pytest.mark.skipif(not packing_available(), reason="this torch has no oneDNN packed-weight ops"),
    pytest.mark.floors,  # torch's private ops, with their fallback, at torch's floor too
    pytest.mark.newest_torch,  # and at its newest release
]

# the output layer, the fused projections and the first FFN layer are packed at every batch size (`packing_pays`)
VOCAB = 8192


def random_model(seed: int = 0) -> TransformerMTForConditionalGeneration:
    torch.manual_seed(seed)
    config = tiny_config(vocab_size=VOCAB, d_model=128, encoder_ffn_dim=256, decoder_ffn_dim=256)
    return TransformerMTForConditionalGeneration(config).eval()


def source_batch(batch: int = 64) -> dict[str, torch.Tensor]:
    """`batch` random sources of 9 tokens, every third one padded after 6."""
    input_ids = torch.randint(3, VOCAB, (batch, 9), generator=torch.Generator().manual_seed(1))
    attention_mask = torch.ones_like(input_ids)
    attention_mask[::3, 6:] = 0
    return {"input_ids": input_ids, "attention_mask": attention_mask}


def greedy(model, batch: int = 64, new_tokens: int = 12) -> torch.Tensor:
    with torch.inference_mode():
        return model.generate(**source_batch(batch), max_new_tokens=new_tokens)


def transformers_greedy(model, batch: int = 64, new_tokens: int = 12) -> torch.Tensor:
    """`GenerationMixin.generate` itself, skipping the model's override (and so its hand-written greedy search)."""
    with torch.inference_mode():
        return GenerationMixin.generate(model, **source_batch(batch), max_new_tokens=new_tokens)


@pytest.mark.parametrize("batch", [1, 64])
def test_greedy_search_on_packed_weights_gives_the_tokens_of_the_plain_layers(batch):
    model = random_model()
    plain = greedy(model, batch)
    packed_weights.PACKED_WEIGHTS.clear()
    assert use_packed_weights(model).greedy_search_linear is packed_linear
    assert torch.equal(greedy(model, batch), plain)
    assert model.lm_head in packed_weights.PACKED_WEIGHTS  # the packed kernel really ran


@pytest.mark.parametrize("rows", [1, 7, 64])
@pytest.mark.parametrize("bias", [True, False])
def test_packed_linear_is_the_layer(rows, bias, monkeypatch):
    monkeypatch.setattr(packed_weights, "packing_pays", lambda layer, rows: True)  # a small layer, packed
    torch.manual_seed(rows)
    layer, x = torch.nn.Linear(32, 96, bias=bias), torch.randn(rows, 32)
    with torch.inference_mode():
        output = packed_linear(layer, x)
    assert output.shape == (rows, 96) and layer in packed_weights.PACKED_WEIGHTS
    torch.testing.assert_close(output, layer(x), atol=1e-5, rtol=1e-5)


def test_packing_is_kept_for_the_matmuls_where_it_pays():
    """At the CPU preset's sizes, batch 1: the output layer (4,000 or 8,000 subwords), the fused 256 -> 768
    projection and the 256 -> 1,024 feed-forward layer are packed; the 256 -> 256 and 256 -> 512 projections and
    the 1,024 -> 256 feed-forward layer are not (their packed call is slower than torch's own); at batch 64 every
    layer with 2^23 multiply-adds is."""
    wide = [torch.nn.Linear(256, n) for n in (4000, 8000, 768, 1024)]
    projection, keys_values, fc2 = (
        torch.nn.Linear(*shape) for shape in ((256, 256), (256, 512), (1024, 256))
    )
    assert all(packing_pays(layer, rows=1) for layer in wide)
    assert not any(packing_pays(layer, rows=1) for layer in (projection, keys_values, fc2))
    assert packing_pays(fc2, rows=64) and not packing_pays(projection, rows=64)


def test_a_preset_sized_model_packs_its_wide_layers_at_batch_one():
    torch.manual_seed(0)
    config = tiny_config(
        vocab_size=4000,
        d_model=256,
        decoder_layers=1,
        encoder_layers=1,
        encoder_ffn_dim=1024,
        decoder_ffn_dim=1024,
        tie_word_embeddings=False,
    )
    model = use_packed_weights(TransformerMTForConditionalGeneration(config).eval())
    packed_weights.PACKED_WEIGHTS.clear()
    with torch.inference_mode():
        tokens = model.generate(
            input_ids=torch.tensor([[5, 6, 7, 8, 9, 2]]),
            attention_mask=torch.ones(1, 6, dtype=torch.long),
            max_new_tokens=4,
            min_new_tokens=4,
        )
    assert tokens.shape == (1, 5)  # the hand-written greedy search ran
    layer = model.model.decoder.layers[0]
    packed = [module for module in model.modules() if module in packed_weights.PACKED_WEIGHTS]
    assert packed == [layer.self_attn.qkv_proj, layer.ffn.fc1, model.lm_head]


def test_greedy_search_follows_weights_that_change():
    """The packed copies are made again when the weights change, so greedy search keeps returning
    GenerationMixin's tokens after an optimizer step between two evaluations (as in training) and after
    loading other weights."""
    model = use_packed_weights(random_model())
    before = greedy(model, batch=8)
    model.train()
    batch = source_batch(8)
    labels = torch.randint(3, VOCAB, (8, 6), generator=torch.Generator().manual_seed(0))
    model(**batch, labels=labels).loss.backward()
    torch.optim.SGD(model.parameters(), lr=1.0).step()
    model.eval()
    stepped = greedy(model, batch=8)
    assert not torch.equal(stepped, before)
    assert torch.equal(stepped, transformers_greedy(model, batch=8))

    other = random_model(seed=11)
    model.load_state_dict(other.state_dict())
    loaded = greedy(model, batch=8)
    assert not torch.equal(loaded, stepped)
    assert torch.equal(loaded, transformers_greedy(other, batch=8))


@pytest.mark.parametrize("failure", ["changed", "missing"])
def test_a_failing_or_missing_packed_op_falls_back_to_the_same_tokens(failure, monkeypatch):
    """torch's oneDNN ops are private: one that a release changed (it raises) or removed (after the model was
    set to use it) leaves greedy search on the plain layers, with the same tokens."""
    model = random_model()
    plain = greedy(model)
    use_packed_weights(model)
    packed_weights.PACKED_WEIGHTS.clear()
    calls = []

    def changed(*args):
        calls.append(args)
        raise RuntimeError("a torch whose private op changed")

    if failure == "changed":
        monkeypatch.setattr(torch.ops.mkldnn, "_reorder_linear_weight", changed)
    else:
        monkeypatch.setattr(torch.ops, "mkldnn", types.SimpleNamespace())
    assert torch.equal(greedy(model), plain)
    assert not packed_weights.PACKED_WEIGHTS
    assert calls or failure == "missing"


def test_without_the_ops_the_model_keeps_its_plain_layers(monkeypatch):
    monkeypatch.setattr(packed_weights, "packing_available", lambda: False)
    assert use_packed_weights(random_model()).greedy_search_linear is None


def test_the_torch_engine_packs_and_a_loaded_folder_does_not(tmp_path):
    model = random_model()
    model.save_pretrained(tmp_path)
    tiny_tokenizer().save_pretrained(tmp_path)
    loaded = TransformerMTForConditionalGeneration.from_pretrained(tmp_path)
    assert loaded.greedy_search_linear is None
    assert TorchTranslator(loaded, tiny_tokenizer()).model.greedy_search_linear is packed_linear

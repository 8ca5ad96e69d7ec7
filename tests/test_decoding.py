"""generate()'s default (cached) decoding path gives the same tokens and scores as decoding without a cache,
for greedy and beam search, over batch sizes and padding; the step does no per-token signature inspection;
plain greedy generate() (the model's hand-written greedy search) returns GenerationMixin's sequences, and every
other call still runs GenerationMixin."""

import inspect
import math

import pytest
import torch
from helpers import BOS, EOS, PAD, tiny_config
from transformers import GenerationConfig, GenerationMixin, LogitsProcessorList

from hf_seq2seq import TransformerMTForConditionalGeneration
from hf_seq2seq.engines import packed_weights
from hf_seq2seq.engines.packed_weights import packing_available, use_packed_weights
from hf_seq2seq.models.transformer_mt import modeling_transformer_mt
from hf_seq2seq.models.transformer_mt.generation_transformer_mt import first_argmax, greedy_search_arguments

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

VOCAB = 50


def random_model(normalize_before: bool, attn_implementation: str) -> TransformerMTForConditionalGeneration:
    """Untied embeddings so that a random model emits varied tokens rather than one repeated token."""
    torch.manual_seed(3)
    config = tiny_config(
        vocab_size=VOCAB, decoder_layers=3, normalize_before=normalize_before, tie_word_embeddings=False
    )
    model = TransformerMTForConditionalGeneration(config).eval()
    model.config._attn_implementation = attn_implementation
    return model


def padded_batch(lengths: list[int], seed: int) -> dict[str, torch.Tensor]:
    """Right-padded random source ids of the given lengths and their attention mask."""
    ids = torch.randint(3, VOCAB, (len(lengths), max(lengths)), generator=torch.Generator().manual_seed(seed))
    mask = torch.arange(max(lengths))[None, :] < torch.tensor(lengths)[:, None]
    return {"input_ids": ids.masked_fill(~mask, PAD), "attention_mask": mask.long()}


BATCHES = {
    "b1": [7],
    "b3-padded": [9, 3, 6],
    "b8-padded": [12, 1, 5, 12, 8, 2, 10, 4],
    "b5-unpadded": [6, 6, 6, 6, 6],
}


@pytest.mark.parametrize("lengths", BATCHES.values(), ids=BATCHES.keys())
@pytest.mark.parametrize("normalize_before", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("attn_implementation", ["sdpa", "eager"])
def test_greedy_default_path_equals_no_cache(lengths, normalize_before, attn_implementation):
    model = random_model(normalize_before, attn_implementation)
    batch = padded_batch(lengths, seed=len(lengths))
    # a random post-LN model repeats one token; banning repeats makes each step's choice depend on the last
    kwargs = dict(max_new_tokens=10, no_repeat_ngram_size=1, output_scores=True, return_dict_in_generate=True)
    with torch.inference_mode():
        default = model.generate(**batch, **kwargs)  # the cache is on by default
        uncached = model.generate(**batch, use_cache=False, **kwargs)
    assert torch.equal(default.sequences, uncached.sequences)
    assert len(default.scores) == len(uncached.scores)
    for cached_step, uncached_step in zip(default.scores, uncached.scores, strict=True):
        torch.testing.assert_close(cached_step, uncached_step, atol=1e-4, rtol=1e-4)


@pytest.mark.parametrize("lengths", [BATCHES["b1"], BATCHES["b3-padded"]], ids=["b1", "b3-padded"])
def test_beam_search_with_cache_equals_no_cache(lengths):
    model = random_model(normalize_before=False, attn_implementation="sdpa")
    batch = padded_batch(lengths, seed=7)
    kwargs = dict(
        num_beams=4,
        num_return_sequences=2,
        max_new_tokens=10,
        output_scores=True,
        return_dict_in_generate=True,
    )
    with torch.inference_mode():
        cached = model.generate(**batch, use_cache=True, **kwargs)
        uncached = model.generate(**batch, use_cache=False, **kwargs)
    assert cached.sequences.shape[0] == 2 * len(lengths)
    assert torch.equal(cached.sequences, uncached.sequences)
    torch.testing.assert_close(cached.sequences_scores, uncached.sequences_scores, atol=1e-4, rtol=1e-4)


def test_cross_attention_cache_holds_each_layers_own_projection():
    """The keys/values computed for all layers in one matmul are, layer by layer, that layer's kv_proj."""
    model = random_model(normalize_before=False, attn_implementation="sdpa")
    batch = padded_batch([5, 3], seed=1)
    with torch.inference_mode():
        out = model(**batch, decoder_input_ids=torch.full((2, 1), BOS), use_cache=True)
        encoder_output = out.encoder_last_hidden_state  # (B, S, D)
        per_layer = [
            layer.encoder_attn._split_heads(layer.encoder_attn.kv_proj(encoder_output), 2)
            for layer in model.model.decoder.layers
        ]
    for i, (key, value) in enumerate(per_layer):  # (B, H, S, Dh)
        cached = getattr(out, modeling_transformer_mt.CACHE_NAME).cross_attention_cache.layers[i]
        torch.testing.assert_close(cached.keys, key)
        torch.testing.assert_close(cached.values, value)


def test_decoding_step_does_not_inspect_signatures(monkeypatch):
    """A class registered for the Auto classes makes GenerationMixin's general prepare_inputs_for_generation
    inspect forward's signature at every step; ours does not, so the count does not grow with the length."""
    model = random_model(normalize_before=False, attn_implementation="sdpa")
    batch = padded_batch([4, 6], seed=2)
    calls = []
    original = inspect.signature

    def counting_signature(*args, **kwargs):
        calls.append(args[0])
        return original(*args, **kwargs)

    monkeypatch.setattr(inspect, "signature", counting_signature)
    counts = []
    for new_tokens in (2, 12):
        calls.clear()
        with torch.inference_mode():
            model.generate(**batch, min_new_tokens=new_tokens, max_new_tokens=new_tokens, eos_token_id=None)
        counts.append(len(calls))
    assert counts[0] == counts[1]


@pytest.mark.parametrize("rows", [1, 8, 64])
@pytest.mark.parametrize("vocab", [8000, 50, 97])  # blocks of 64, of 50 (all in one), of 1 (a prime)
def test_first_argmax_is_argmax(rows, vocab):
    """The greedy token is torch's argmax, the first of tied maxima included, for logits laid out as rows or as
    a transposed view."""
    generator = torch.Generator().manual_seed(rows + vocab)
    logits = torch.randint(0, 4, (rows, vocab), generator=generator).float()  # ties in every row
    logits[0, -1] = 9.0  # a maximum in the last block
    assert torch.equal(first_argmax(logits), logits.argmax(dim=-1))
    transposed = logits.T.contiguous().T  # (b, V) view of (V, b)
    assert torch.equal(first_argmax(transposed), logits.argmax(dim=-1))
    logits[:, 5] = -math.inf
    logits[-1] = -math.inf  # a row with every token banned: index 0, as argmax
    assert torch.equal(first_argmax(logits), logits.argmax(dim=-1))


def transformers_generate(model, **kwargs):
    """`GenerationMixin.generate` itself, skipping the model's override (and so its hand-written greedy search)."""
    return GenerationMixin.generate(model, **kwargs)


def ending_token(model, batch: dict) -> int:
    """The token that, used as EOS, ends the rows of `batch` at the most different steps."""
    with torch.inference_mode():
        sequences = transformers_generate(model, **batch, max_new_tokens=12, eos_token_id=None)[:, 1:]

    def first_steps(token: int) -> set:
        return {int(row.eq(token).nonzero()[0]) if row.eq(token).any() else None for row in sequences}

    return max(sequences.unique().tolist(), key=lambda token: len(first_steps(token)))


@pytest.mark.parametrize("lengths", BATCHES.values(), ids=BATCHES.keys())
@pytest.mark.parametrize("normalize_before", [False, True], ids=["post-LN", "pre-LN"])
@pytest.mark.parametrize("attn_implementation", ["sdpa", "eager"])
@pytest.mark.parametrize("linear", ["plain", "packed"])
def test_greedy_search_equals_generation_mixin(
    lengths, normalize_before, attn_implementation, linear, monkeypatch
):
    """Plain greedy generate() takes the hand-written greedy search and returns GenerationMixin's sequences:
    rows ending at different steps (pad after EOS, the batch shrinking), min_new_tokens, no EOS at all, n-grams
    banned from repeating. With its Linear layers as a Hub user's model applies them (plain) and as the
    package's torch engine does (packed weights, here for every layer: the tiny ones would not pay)."""
    model = random_model(normalize_before, attn_implementation)
    if linear == "packed":
        if not packing_available():
            pytest.skip("this torch has no oneDNN packed-weight ops")
        monkeypatch.setattr(packed_weights, "packing_pays", lambda layer, rows: True)
        use_packed_weights(model)
    batch = padded_batch(lengths, seed=len(lengths))
    eos = ending_token(model, batch)
    calls = (
        dict(max_new_tokens=12),
        dict(max_new_tokens=12, eos_token_id=eos),
        dict(max_new_tokens=12, min_new_tokens=5, eos_token_id=eos),
        dict(max_new_tokens=9, min_new_tokens=9, eos_token_id=eos),  # the benchmark's exact length
        dict(max_length=8, eos_token_id=[eos, EOS]),
        dict(max_new_tokens=12, no_repeat_ngram_size=1),  # every earlier token banned
        dict(max_new_tokens=12, no_repeat_ngram_size=2, eos_token_id=eos),
        dict(max_new_tokens=12, no_repeat_ngram_size=3, min_new_tokens=4, eos_token_id=eos),
    )
    for kwargs in calls:
        assert greedy_search_arguments(model, None, None, {**batch, **kwargs}) is not None, kwargs
        with torch.inference_mode():
            ours = model.generate(**batch, **kwargs)
            expected = transformers_generate(model, **batch, **kwargs)
        assert torch.equal(ours, expected), kwargs
        if kwargs == calls[1]:
            assert (ours == PAD).any() or ours.shape[1] < 13  # some row ended before the limit


@pytest.mark.parametrize("lengths", [BATCHES["b1"], BATCHES["b8-padded"]], ids=["b1", "b8-padded"])
def test_greedy_search_applies_the_length_rule(lengths):
    """With max_length_a/b in the generation config, the hand-written path stops where GenerationMixin does."""
    model = random_model(normalize_before=False, attn_implementation="sdpa")
    batch = padded_batch(lengths, seed=5)
    model.generation_config = GenerationConfig(
        decoder_start_token_id=BOS,
        eos_token_id=ending_token(model, batch),
        pad_token_id=PAD,
        num_beams=1,
        do_sample=False,
        max_new_tokens=63,
        max_length_a=0.5,
        max_length_b=2,
    )
    limit = math.ceil(0.5 * max(lengths) + 2)
    with torch.inference_mode():
        ours = model.generate(**batch)
        long = model.generate(**batch, min_new_tokens=limit)
        expected = transformers_generate(model, **batch, max_new_tokens=limit)
    assert torch.equal(ours, expected)
    assert long.shape[1] == 1 + limit


@pytest.mark.parametrize(
    "kwargs",
    [
        dict(num_beams=4),
        dict(output_scores=True, return_dict_in_generate=True),
        dict(repetition_penalty=1.3),
        dict(encoder_no_repeat_ngram_size=2),
        dict(do_sample=True, top_k=5),
        dict(num_return_sequences=1, forced_eos_token_id=EOS),
        dict(logits_processor=LogitsProcessorList()),
        dict(decoder_input_ids=torch.full((3, 1), BOS)),
    ],
    ids=lambda kwargs: next(iter(kwargs)) if "forced_eos_token_id" not in kwargs else "forced_eos",
)
def test_other_generate_calls_fall_back_to_generation_mixin(kwargs, monkeypatch):
    """Anything but plain greedy search runs GenerationMixin.generate, with the same result as calling it."""
    model = random_model(normalize_before=False, attn_implementation="sdpa")
    batch = padded_batch(BATCHES["b3-padded"], seed=4)
    assert greedy_search_arguments(model, None, None, {**batch, **kwargs}) is None
    monkeypatch.setattr(modeling_transformer_mt, "greedy_search", None)  # would fail if called
    with torch.inference_mode():
        torch.manual_seed(0)
        ours = model.generate(**batch, max_new_tokens=6, **kwargs)
        torch.manual_seed(0)
        expected = transformers_generate(model, **batch, max_new_tokens=6, **kwargs)
    if isinstance(ours, torch.Tensor):
        assert torch.equal(ours, expected)
    else:
        assert torch.equal(ours.sequences, expected.sequences)


@pytest.mark.filterwarnings(
    "ignore:.*default `max_length`:UserWarning"
)  # GenerationMixin's warning (some releases)
def test_generation_mixins_default_length_is_left_to_it():
    """A call that sets no length anywhere runs GenerationMixin (its default length is its own business)."""
    model = random_model(normalize_before=False, attn_implementation="sdpa")
    batch = padded_batch(BATCHES["b3-padded"], seed=4)
    assert greedy_search_arguments(model, None, None, dict(batch)) is None
    with torch.inference_mode():
        assert torch.equal(model.generate(**batch), transformers_generate(model, **batch))


def test_extra_generate_kwargs_reach_forward():
    """GenerationMixin's `prepare_inputs_for_generation` forwards every model kwarg it does not handle itself."""
    model = random_model(normalize_before=False, attn_implementation="sdpa")
    batch = padded_batch(BATCHES["b3-padded"], seed=4)
    inputs = model.prepare_inputs_for_generation(
        torch.full((3, 1), BOS), attention_mask=batch["attention_mask"], foo="bar", output_attentions=True
    )
    assert inputs["foo"] == "bar" and inputs["output_attentions"] is True
    assert torch.equal(inputs["decoder_input_ids"], torch.full((3, 1), BOS))


def test_forward_hooks_fire_and_greedy_search_steps_aside():
    """With a forward hook on the model or on one of its layers, generate() runs GenerationMixin, which calls
    forward (the hook fires at every step), with the hand-written path's tokens."""
    model = random_model(normalize_before=False, attn_implementation="sdpa")
    batch = padded_batch(BATCHES["b8-padded"], seed=8)
    kwargs = dict(max_new_tokens=6, eos_token_id=None)
    with torch.inference_mode():
        fast = model.generate(**batch, **kwargs)
    for module in (model, model.model.decoder.layers[0]):
        calls = []
        handle = module.register_forward_hook(lambda *args, calls=calls: calls.append(1))
        assert greedy_search_arguments(model, None, None, {**batch, **kwargs}) is None
        with torch.inference_mode():
            assert torch.equal(model.generate(**batch, **kwargs), fast)
        handle.remove()
        assert len(calls) == 6
    assert greedy_search_arguments(model, None, None, {**batch, **kwargs}) is not None


@pytest.mark.parametrize("tracer", ["is_compiling", "is_exporting"])
def test_greedy_search_steps_aside_while_tracing(tracer, monkeypatch):
    model = random_model(normalize_before=False, attn_implementation="sdpa")
    batch = padded_batch(BATCHES["b3-padded"], seed=4)
    kwargs = dict(max_new_tokens=6)
    assert greedy_search_arguments(model, None, None, {**batch, **kwargs}) is not None
    monkeypatch.setattr(torch.compiler, tracer, lambda: True)
    assert greedy_search_arguments(model, None, None, {**batch, **kwargs}) is None


def test_transformers_exporter_captures_forward_and_exports_the_decode_step():
    """transformers' exporters decompose generate() by capturing its forward calls (forward replaced on the
    instance, so the hand-written path steps aside); the decode step then exports with torch.export."""
    from transformers.exporters.exporter_dynamo import DynamoConfig, DynamoExporter
    from transformers.exporters.utils import decompose_for_generation

    model = random_model(normalize_before=False, attn_implementation="sdpa")
    batch = padded_batch(BATCHES["b3-padded"], seed=4)
    stages = decompose_for_generation(model, batch)
    decode_model, decode_inputs = stages["decode"]
    assert decode_inputs["decoder_input_ids"].shape == (3, 1)
    assert decode_inputs[modeling_transformer_mt.CACHE_NAME].get_seq_length() == 1
    try:
        exporter = DynamoExporter()
    except ImportError as error:  # transformers' exporter asks for a newer torch than this package needs
        pytest.skip(str(error))
    exported = exporter.export(decode_model, decode_inputs, config=DynamoConfig())
    assert exported is not None


def test_fast_path_needs_no_private_transformers_api(monkeypatch):
    """The hand-written path reads transformers through public API only: with the private generation helpers
    a later release might rename gone, plain greedy generate() still returns GenerationMixin's tokens."""
    from transformers import GenerationConfig as Config

    model = random_model(normalize_before=False, attn_implementation="sdpa")
    batch = padded_batch(BATCHES["b8-padded"], seed=8)
    kwargs = dict(max_new_tokens=10, no_repeat_ngram_size=2, eos_token_id=ending_token(model, batch))
    with torch.inference_mode():
        expected = transformers_generate(model, **batch, **kwargs)
    for owner, name in (
        (GenerationMixin, "_prepare_generation_config"),
        (GenerationMixin, "_prepare_generated_length"),
        (Config, "_get_default_generation_params"),
    ):
        monkeypatch.delattr(owner, name)
    with torch.inference_mode():
        assert torch.equal(model.generate(**batch, **kwargs), expected)

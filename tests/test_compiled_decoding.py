"""The opt-in compiled path: a static cache (`cache_implementation="static"`) and the decoding step compiled by
`torch.compile` through generate()'s own `compile_config` (`Decoding(compile=True)`). It gives the tokens and
scores of the default path and of decoding without a cache, beam search works with every cache kind, and the
decoding step is one graph (a graph break fails)."""

import pytest
import torch
from helpers import BOS, PAD, tiny_config
from transformers import CompileConfig
from transformers.cache_utils import EncoderDecoderCache, StaticCache

from hf_seq2seq import TransformerMTForConditionalGeneration
from hf_seq2seq.cli import translate as translate_cli
from hf_seq2seq.engines.decoding import Decoding, compile_config
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import CACHE_NAME

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

VOCAB = 50
BATCHES = {"b1": [7], "b3-padded": [9, 3, 6], "b8-padded": [12, 1, 5, 12, 8, 2, 10, 4]}


def random_model(seed: int = 3) -> TransformerMTForConditionalGeneration:
    """Untied embeddings so that a random model emits varied tokens rather than one repeated token."""
    torch.manual_seed(seed)
    config = tiny_config(vocab_size=VOCAB, decoder_layers=3, tie_word_embeddings=False)
    return TransformerMTForConditionalGeneration(config).eval()


def padded_batch(lengths: list[int], seed: int) -> dict[str, torch.Tensor]:
    ids = torch.randint(3, VOCAB, (len(lengths), max(lengths)), generator=torch.Generator().manual_seed(seed))
    mask = torch.arange(max(lengths))[None, :] < torch.tensor(lengths)[:, None]
    return {"input_ids": ids.masked_fill(~mask, PAD), "attention_mask": mask.long()}


@pytest.fixture(autouse=True)
def fresh_dynamo():
    """Each test compiles its own model from scratch (and leaves no compiled code to the next)."""
    torch._dynamo.reset()
    yield
    torch._dynamo.reset()


def eager_compile_config() -> CompileConfig:
    """`compile_config()` with dynamo's capture only (no code generation): seconds, and a graph break still
    raises because the graph is full."""
    config = CompileConfig(fullgraph=True, backend="eager")
    config._compile_all_devices = True
    return config


def test_compiled_generate_uses_a_static_cache_and_generate_compile_config():
    kwargs = Decoding(compile=True).generate_kwargs()
    assert kwargs["cache_implementation"] == "static"
    config = kwargs["compile_config"]
    assert config.fullgraph and config._compile_all_devices  # one graph, also on CPU
    assert Decoding(compile=True).settings(random_model())["compile"] is True
    assert "compile" not in Decoding().settings(random_model())


@pytest.mark.slow  # inductor compiles C++ for several shape signatures: 20 s on 2 quiet CPU cores, more if busy
def test_compiled_static_cache_default_and_no_cache_paths_agree():
    """For several batch sizes and padded lengths: the default path (GenerationMixin with a dynamic cache when
    scores are asked for), the static cache, the compiled static cache and no cache give identical greedy
    tokens and scores allclose; a plain call gives the compiled path the hand-written greedy search's tokens."""
    model = random_model()
    compiled = Decoding(compile=True).generate_kwargs()
    # a random model repeats one token; banning repeats makes each step's choice depend on the last
    scored = dict(max_new_tokens=10, no_repeat_ngram_size=1, output_scores=True, return_dict_in_generate=True)
    for name, lengths in BATCHES.items():
        batch = padded_batch(lengths, seed=len(lengths))
        with torch.inference_mode():
            runs = {
                "default": model.generate(**batch, **scored),
                "static cache": model.generate(**batch, cache_implementation="static", **scored),
                "compiled": model.generate(**batch, **compiled, **scored),
                "no cache": model.generate(**batch, use_cache=False, **scored),
            }
            plain = model.generate(**batch, max_new_tokens=10)  # the hand-written greedy search
            plain_compiled = model.generate(**batch, max_new_tokens=10, **compiled)
        assert torch.equal(plain_compiled, plain), name
        for run, out in runs.items():
            assert torch.equal(out.sequences, runs["no cache"].sequences), (name, run)
            for step, expected in zip(out.scores, runs["no cache"].scores, strict=True):
                torch.testing.assert_close(step, expected, atol=1e-4, rtol=1e-4, msg=f"{name}, {run}")
    assert hasattr(model, "_compiled_call")  # generate() did compile the decoding step


@pytest.mark.parametrize("lengths", [BATCHES["b1"], BATCHES["b3-padded"]], ids=["b1", "b3-padded"])
def test_compiled_decoding_step_is_one_graph(lengths):
    """generate()'s compiled decoding step (dynamo capture, fullgraph) runs without a graph break and gives the
    uncompiled tokens."""
    model = random_model()
    batch = padded_batch(lengths, seed=2)
    torch._dynamo.utils.counters.clear()
    with torch.inference_mode():
        expected = model.generate(**batch, max_new_tokens=8)
        compiled = model.generate(
            **batch, max_new_tokens=8, cache_implementation="static", compile_config=eager_compile_config()
        )
    assert torch.equal(compiled, expected)
    assert torch._dynamo.utils.counters["stats"]["unique_graphs"] >= 1  # the step was captured, not skipped
    assert not torch._dynamo.utils.counters["graph_break"]


def test_a_graph_break_in_the_decoding_step_fails(monkeypatch):
    """The check above is not vacuous: a graph break in the decoder makes the compiled generate() raise."""
    model = random_model()
    forward = type(model.model.decoder).forward

    def breaking_forward(*args, **kwargs):
        torch._dynamo.graph_break()
        return forward(*args, **kwargs)

    monkeypatch.setattr(type(model.model.decoder), "forward", breaking_forward)
    with torch.inference_mode(), pytest.raises(Exception, match="graph_break|[Gg]raph break"):
        model.generate(
            **padded_batch([5, 3], seed=1),
            max_new_tokens=4,
            cache_implementation="static",
            compile_config=eager_compile_config(),
        )


@pytest.mark.parametrize("cache", ["dynamic", "static", "none"])
def test_beam_search_works_with_every_cache_kind(cache):
    model = random_model()
    batch = padded_batch(BATCHES["b3-padded"], seed=7)
    beam = dict(num_beams=4, num_return_sequences=2, max_new_tokens=10, output_scores=True)
    kinds = {"dynamic": {}, "static": {"cache_implementation": "static"}, "none": {"use_cache": False}}
    with torch.inference_mode():
        out = model.generate(**batch, **beam, **kinds[cache], return_dict_in_generate=True)
        reference = model.generate(**batch, **beam, use_cache=False, return_dict_in_generate=True)
    assert out.sequences.shape[0] == 6
    assert torch.equal(out.sequences, reference.sequences)
    torch.testing.assert_close(out.sequences_scores, reference.sequences_scores, atol=1e-4, rtol=1e-4)


def test_forward_with_a_static_cache_step_by_step_equals_the_whole_sequence():
    """Without a mask from generate(), the decoder masks a static cache's unwritten slots itself (it returns
    all of them) and takes positions from the cache length."""
    model = random_model()
    batch = padded_batch([6, 4], seed=3)
    target = torch.randint(3, VOCAB, (2, 5), generator=torch.Generator().manual_seed(4))
    target[:, 0] = BOS
    cache = EncoderDecoderCache(
        StaticCache(config=model.config, max_cache_len=8), StaticCache(config=model.config, max_cache_len=6)
    )
    with torch.inference_mode():
        whole = model(**batch, decoder_input_ids=target).logits  # (B, 5, V)
        encoder_outputs = model.get_encoder()(**batch)
        steps = [
            model(
                attention_mask=batch["attention_mask"],
                encoder_outputs=encoder_outputs,
                decoder_input_ids=target[:, t : t + 1],
                **{CACHE_NAME: cache},
                use_cache=True,
            ).logits
            for t in range(5)
        ]
    torch.testing.assert_close(torch.cat(steps, dim=1), whole, atol=1e-5, rtol=1e-5)


def test_a_static_cache_longer_than_the_positions_is_refused():
    model = random_model()  # max_position_embeddings 64
    with torch.inference_mode(), pytest.raises(ValueError, match="static cache of 70 positions"):
        model.generate(**padded_batch([3], seed=1), max_new_tokens=70, cache_implementation="static")


def test_compile_config_is_one_graph_on_every_device():
    config = compile_config()
    assert config.fullgraph and config._compile_all_devices and config.mode == "default"


def test_translate_verb_compiles_on_request_with_the_default_translations(trained):
    texts = ["how are you ?", "i like cheese .", "good morning thank you !"]
    assert translate_cli.main([str(trained), *texts, "--compile"]) == translate_cli.main(
        [str(trained), *texts]
    )
    with pytest.raises(ValueError, match="int8 and compiled decoding do not combine"):
        translate_cli.main([str(trained), *texts, "--compile", "--precision", "int8"])

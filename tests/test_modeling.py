"""The network: outputs, masks, caching, attention back-ends, saving/loading, config validation."""

import os

import numpy as np
import pytest
import synthetic_task
import torch
import torch.nn.functional as F
from helpers import BOS, PAD, TINY_VOCAB, run_without_package, tiny_config
from transformers import AutoConfig, AutoModel, AutoModelForSeq2SeqLM
from transformers.modeling_outputs import Seq2SeqLMOutput

from hf_seq2seq import TransformerMTConfig, TransformerMTForConditionalGeneration, TransformerMTModel
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import CACHE_NAME

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

VOCAB = TINY_VOCAB


def tiny_model(seed: int = 0, **overrides) -> TransformerMTForConditionalGeneration:
    torch.manual_seed(seed)
    return TransformerMTForConditionalGeneration(tiny_config(**overrides)).eval()


def random_ids(batch: int, length: int, seed: int = 1) -> torch.Tensor:
    return torch.randint(3, VOCAB, (batch, length), generator=torch.Generator().manual_seed(seed))


def padded_batch(lengths: list[int], seed: int = 1) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded ids of the given lengths and their attention mask."""
    ids = random_ids(len(lengths), max(lengths), seed)
    mask = torch.arange(max(lengths))[None, :] < torch.tensor(lengths)[:, None]
    return ids.masked_fill(~mask, PAD), mask.long()


@pytest.fixture(params=[False, True], ids=["post-LN", "pre-LN"])
def model(request) -> TransformerMTForConditionalGeneration:
    return tiny_model(normalize_before=request.param)


def test_output_fields_shapes_and_loss_by_hand(model):
    input_ids, attention_mask = padded_batch([7, 5, 3])
    labels = random_ids(3, 6, seed=2)
    labels[1, 4:] = -100
    labels[2, 2:] = -100
    out = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels, output_hidden_states=True)

    assert isinstance(out, Seq2SeqLMOutput)
    assert out.logits.shape == (3, 6, VOCAB) and out.logits.dtype == torch.float32
    assert out.encoder_last_hidden_state.shape == (3, 7, 32)
    assert (
        len(out.encoder_hidden_states) == 3 and len(out.decoder_hidden_states) == 3
    )  # embeddings + 2 layers
    assert getattr(out, CACHE_NAME) is None  # no cache when training on labels

    keep = labels != -100
    by_hand = -torch.log_softmax(out.logits, -1)[keep].gather(-1, labels[keep][:, None]).mean()
    torch.testing.assert_close(out.loss, by_hand)

    # decoder inputs are the labels shifted right behind decoder_start_token_id, -100 -> pad
    decoder_input_ids = torch.cat(
        [torch.full((3, 1), BOS), labels[:, :-1].masked_fill(labels[:, :-1] == -100, PAD)], 1
    )
    explicit = model(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids)
    torch.testing.assert_close(explicit.logits, out.logits)


def test_training_mode_loss_matches_eval_loss_and_respects_num_items(model):
    """Training computes the output layer only on kept labels; the loss must not change."""
    input_ids, attention_mask = padded_batch([6, 4])
    labels = random_ids(2, 5, seed=3)
    labels[1, 3:] = -100
    eval_loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
    model.train()
    train_out = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
    torch.testing.assert_close(train_out.loss, eval_loss)
    summed = model(
        input_ids=input_ids, attention_mask=attention_mask, labels=labels, num_items_in_batch=100
    ).loss
    torch.testing.assert_close(summed, eval_loss * 8 / 100)


def test_label_smoothing_matches_torch():
    model = tiny_model(label_smoothing=0.1)
    input_ids, attention_mask = padded_batch([5, 5])
    labels = random_ids(2, 4, seed=4)
    out = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels)
    expected = F.cross_entropy(out.logits.flatten(0, 1), labels.flatten(), label_smoothing=0.1)
    torch.testing.assert_close(out.loss, expected)


def test_decoder_is_causal(model):
    input_ids = random_ids(2, 6)
    decoder_input_ids = random_ids(2, 8, seed=5)
    logits = model(input_ids=input_ids, decoder_input_ids=decoder_input_ids).logits
    for t in range(7):
        changed = decoder_input_ids.clone()
        changed[:, t + 1 :] = random_ids(2, 7 - t, seed=10 + t)
        assert not torch.equal(changed, decoder_input_ids)
        new_logits = model(input_ids=input_ids, decoder_input_ids=changed).logits
        torch.testing.assert_close(new_logits[:, : t + 1], logits[:, : t + 1], atol=1e-5, rtol=0)
        assert not torch.allclose(new_logits[:, t + 1 :], logits[:, t + 1 :])


@pytest.mark.parametrize("attn_implementation", ["eager", "sdpa"])
def test_padding_gives_same_logits_as_unpadded(attn_implementation):
    model = tiny_model()
    model.config._attn_implementation = attn_implementation
    src_lengths, tgt_lengths = [7, 4, 2], [3, 6, 1]
    input_ids, attention_mask = padded_batch(src_lengths)
    decoder_input_ids, decoder_attention_mask = padded_batch(tgt_lengths, seed=7)
    batched = model(
        input_ids=input_ids,
        attention_mask=attention_mask,
        decoder_input_ids=decoder_input_ids,
        decoder_attention_mask=decoder_attention_mask,
    ).logits
    for i, (s, t) in enumerate(zip(src_lengths, tgt_lengths, strict=True)):
        alone = model(
            input_ids=input_ids[i : i + 1, :s], decoder_input_ids=decoder_input_ids[i : i + 1, :t]
        ).logits
        torch.testing.assert_close(batched[i : i + 1, :t], alone, atol=1e-5, rtol=0)


def hand_greedy(model, input_ids, attention_mask, steps: int) -> torch.Tensor:
    """Argmax decoding without cache or generate(): re-run the full model at every step."""
    out = torch.full((input_ids.shape[0], 1), model.config.decoder_start_token_id)
    for _ in range(steps):
        logits = model(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=out).logits
        out = torch.cat([out, logits[:, -1].argmax(-1, keepdim=True)], dim=1)
    return out


@pytest.mark.parametrize("attn_implementation", ["eager", "sdpa"])
def test_generate_with_cache_equals_without_and_hand_loop(attn_implementation):
    # untied, wider init so a random model emits varied tokens instead of repeating one
    model = tiny_model(seed=3, tie_word_embeddings=False)
    model.config._attn_implementation = attn_implementation
    input_ids, attention_mask = padded_batch([9, 3, 6], seed=11)
    kwargs = dict(max_new_tokens=12, do_sample=False, num_beams=1, eos_token_id=None, pad_token_id=PAD)
    with torch.no_grad():
        cached = model.generate(input_ids=input_ids, attention_mask=attention_mask, use_cache=True, **kwargs)
        uncached = model.generate(
            input_ids=input_ids, attention_mask=attention_mask, use_cache=False, **kwargs
        )
        by_hand = hand_greedy(model, input_ids, attention_mask, 12)
    assert cached.shape == (3, 13)
    assert len(set(cached.flatten().tolist())) > 3  # the comparison is not between constant sequences
    assert torch.equal(cached, uncached)
    assert torch.equal(cached, by_hand)


def test_cache_reuses_cross_attention_and_grows_self_attention():
    model = tiny_model()
    input_ids, attention_mask = padded_batch([5, 3])
    with torch.no_grad():
        first = model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            decoder_input_ids=torch.full((2, 1), BOS),
            use_cache=True,
        )
        cache = getattr(first, CACHE_NAME)
        assert cache.get_seq_length() == 1 and all(cache.is_updated.values())
        cross_keys = cache.cross_attention_cache.layers[0].keys
        assert cross_keys.shape == (2, 4, 5, 8)
        model(
            encoder_outputs=(first.encoder_last_hidden_state,),
            attention_mask=attention_mask,
            decoder_input_ids=torch.full((2, 1), 5),
            **{CACHE_NAME: cache},
            use_cache=True,
        )
    assert cache.get_seq_length() == 2
    assert cache.cross_attention_cache.layers[0].keys is cross_keys  # computed once, reused


def test_eager_and_sdpa_agree():
    model = tiny_model()
    input_ids, attention_mask = padded_batch([8, 5, 2])
    decoder_input_ids = random_ids(3, 6, seed=9)
    outputs = {}
    for implementation in ("eager", "sdpa"):
        model.config._attn_implementation = implementation
        outputs[implementation] = model(
            input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids
        ).logits
    torch.testing.assert_close(outputs["eager"], outputs["sdpa"], atol=1e-5, rtol=0)


def test_bf16_autocast_training_on_cpu_gives_the_fp32_loss_and_gradients():
    """The cpu presets train under bf16 autocast where the CPU has bf16 matmuls (attention then runs the eager
    way, see `TransformerMTAttention.attend`): on a padded batch, the loss and every gradient stay close to
    fp32's."""
    model = tiny_model(attn_implementation="sdpa").train()
    input_ids, attention_mask = padded_batch([8, 5, 2])
    labels = random_ids(3, 6, seed=9).masked_fill(
        torch.tensor([[False] * 6, [False] * 4 + [True] * 2, [False] * 6]), -100
    )
    results = {}
    for dtype in (None, torch.bfloat16):
        model.zero_grad()
        with torch.autocast("cpu", dtype=dtype or torch.float32, enabled=dtype is not None):
            loss = model(input_ids=input_ids, attention_mask=attention_mask, labels=labels).loss
        loss.backward()
        results[dtype] = (
            loss.item(),
            torch.cat([p.grad.flatten() for p in model.parameters() if p.grad is not None]),
        )
    (loss32, grad32), (loss16, grad16) = results[None], results[torch.bfloat16]
    assert abs(loss16 - loss32) < 0.02 * loss32
    assert F.cosine_similarity(grad16, grad32, dim=0) > 0.99
    assert (grad16.norm() / grad32.norm() - 1).abs() < 0.05


def test_attention_weights_are_probabilities_masked_on_padding_and_future():
    model = tiny_model()
    model.config._attn_implementation = "sdpa"  # output_attentions must still return real weights
    src_lengths = [6, 3]
    input_ids, attention_mask = padded_batch(src_lengths)
    out = model(
        input_ids=input_ids,
        attention_mask=attention_mask,
        decoder_input_ids=random_ids(2, 5),
        output_attentions=True,
    )
    assert len(out.encoder_attentions) == len(out.decoder_attentions) == len(out.cross_attentions) == 2
    for layer in range(2):
        enc, dec, cross = (
            out.encoder_attentions[layer],
            out.decoder_attentions[layer],
            out.cross_attentions[layer],
        )
        assert enc.shape == (2, 4, 6, 6) and dec.shape == (2, 4, 5, 5) and cross.shape == (2, 4, 5, 6)
        for weights in (enc, dec, cross):
            torch.testing.assert_close(weights.sum(-1), torch.ones(weights.shape[:-1]))
        for i, length in enumerate(src_lengths):
            assert torch.all(enc[i, :, :, length:] == 0) and torch.all(cross[i, :, :, length:] == 0)
            assert torch.all(enc[i, :, :length, :length] > 0)
        future = torch.ones(5, 5, dtype=torch.bool).triu(1)
        assert torch.all(dec[:, :, future] == 0) and torch.all(dec[:, :, ~future] > 0)


def test_embeddings_are_tied_three_ways():
    model = tiny_model()
    shared = model.get_input_embeddings().weight
    assert model.lm_head.weight is shared and model.model.decoder.embed_tokens.weight is shared
    untied = tiny_model(tie_word_embeddings=False)
    assert untied.lm_head.weight is not untied.get_input_embeddings().weight


def test_scaled_embeddings_and_sinusoidal_positions():
    model = tiny_model()
    encoder = model.model.encoder
    table = encoder.embed_positions.table
    pos, i = 5, 3
    torch.testing.assert_close(table[pos, 2 * i], torch.tensor(pos / 10000 ** (2 * i / 32)).sin())
    torch.testing.assert_close(table[pos, 2 * i + 1], torch.tensor(pos / 10000 ** (2 * i / 32)).cos())
    ids = random_ids(1, 4)
    hidden = encoder.embed_tokens(ids) * 32**0.5 + table[:4]
    torch.testing.assert_close(encoder(ids, output_hidden_states=True).hidden_states[0], hidden)
    with pytest.raises(ValueError, match="max_position_embeddings"):
        model(input_ids=random_ids(1, 65), decoder_input_ids=random_ids(1, 2))


def test_position_shift_moves_each_training_sequence_and_never_translation():
    """SHAPE: in training each sequence's positions start at its own random offset in 0..K, as far as the table
    reaches (a sequence as long as the table is not moved); in eval the positions start at 0 as without it."""
    model = tiny_model(max_position_shift=8)
    encoder, table = model.model.encoder, model.model.encoder.embed_positions.table
    ids = random_ids(16, 5)
    tokens = encoder.embed_tokens(ids) * 32**0.5  # (B, T, D)
    torch.testing.assert_close(encoder(ids, output_hidden_states=True).hidden_states[0], tokens + table[:5])

    model.train()
    embedded = encoder(ids, output_hidden_states=True).hidden_states[0]  # (B, T, D)
    offsets = []
    for row, tokens_row in zip(embedded, tokens, strict=True):
        found = [k for k in range(9) if torch.allclose(row, tokens_row + table[k : k + 5], atol=1e-5)]
        assert len(found) == 1, found
        offsets += found
    assert len(set(offsets)) > 1  # drawn for each sequence, not once for the batch

    full = random_ids(2, 64)
    torch.testing.assert_close(
        encoder(full, output_hidden_states=True).hidden_states[0],
        encoder.embed_tokens(full) * 32**0.5 + table,
    )
    model(input_ids=full, labels=random_ids(2, 60)).loss.backward()  # trains, with decoder shifts of 0..4


def test_save_and_reload_through_auto_classes(tmp_path):
    model = tiny_model(normalize_before=True)
    model.save_pretrained(tmp_path)
    input_ids, attention_mask = padded_batch([5, 3])
    decoder_input_ids = random_ids(2, 4)
    reloaded = AutoModelForSeq2SeqLM.from_pretrained(tmp_path).eval()
    assert type(reloaded) is TransformerMTForConditionalGeneration
    torch.testing.assert_close(
        reloaded(
            input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids
        ).logits,
        model(input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids).logits,
        atol=0,
        rtol=0,
    )
    assert isinstance(AutoConfig.from_pretrained(tmp_path), TransformerMTConfig)
    assert type(AutoModel.from_pretrained(tmp_path)) is TransformerMTModel


def test_saved_folder_loads_with_remote_code_without_the_package(tmp_path):
    model = tiny_model()
    model.save_pretrained(tmp_path / "model")
    assert {
        "configuration_transformer_mt.py",
        "modeling_transformer_mt.py",
        "generation_transformer_mt.py",
    } <= set(os.listdir(tmp_path / "model"))
    input_ids, attention_mask = padded_batch([5, 3])
    decoder_input_ids = random_ids(2, 4)
    expected = model(
        input_ids=input_ids, attention_mask=attention_mask, decoder_input_ids=decoder_input_ids
    ).logits
    torch.save(
        {
            "input_ids": input_ids,
            "attention_mask": attention_mask,
            "decoder_input_ids": decoder_input_ids,
            "logits": expected,
        },
        tmp_path / "io.pt",
    )
    body = f"""
        import torch
        from transformers import AutoModelForSeq2SeqLM
        model = AutoModelForSeq2SeqLM.from_pretrained({str(tmp_path / "model")!r}, trust_remote_code=True).eval()
        assert type(model).__module__.startswith("transformers_modules"), type(model).__module__
        io = torch.load({str(tmp_path / "io.pt")!r})
        logits = model(input_ids=io["input_ids"], attention_mask=io["attention_mask"],
                       decoder_input_ids=io["decoder_input_ids"]).logits
        torch.testing.assert_close(logits, io["logits"], atol=0, rtol=0)
        print("OK", type(model).__name__)
        """
    result = run_without_package(body, tmp_path)
    assert result.returncode == 0, result.stdout[-3000:]
    assert "OK TransformerMTForConditionalGeneration" in result.stdout


@pytest.mark.parametrize(
    ("overrides", "field"),
    [
        (dict(d_model=30, encoder_attention_heads=4), "encoder_attention_heads"),
        (dict(d_model=32, decoder_attention_heads=5), "decoder_attention_heads"),
        (dict(d_model=0), "d_model"),
        (dict(encoder_layers=-1), "encoder_layers"),
        (dict(decoder_ffn_dim=0), "decoder_ffn_dim"),
        (dict(vocab_size=0), "vocab_size"),
        (dict(dropout=1.0), "dropout"),
        (dict(attention_dropout=-0.1), "attention_dropout"),
        (dict(activation_function="sigmoid-ish"), "activation_function"),
        (dict(max_position_shift=-1), "max_position_shift"),
        (dict(max_position_shift=64), "max_position_shift"),
    ],
)
def test_impossible_config_values_raise(overrides, field):
    with pytest.raises(ValueError, match=field) as info:
        tiny_config(**overrides)
    assert str(list(overrides.values())[-1]) in str(info.value)


@pytest.mark.parametrize("normalize_before", [False, True], ids=["post-LN", "pre-LN"])
def test_both_norm_placements_learn_the_synthetic_task(normalize_before):
    """Seed 001's task (map each symbol, repeat the last, reverse) on 5-10 symbol strings: a tiny model
    trained for 300 steps decodes >= 95% of fresh strings exactly with generate()."""
    torch.manual_seed(0)
    model = TransformerMTForConditionalGeneration(
        tiny_config(
            vocab_size=len(synthetic_task.VOCAB), d_model=64, encoder_ffn_dim=128, decoder_ffn_dim=128,
            normalize_before=normalize_before, pad_token_id=synthetic_task.PAD, bos_token_id=synthetic_task.BOS,
            eos_token_id=synthetic_task.EOS, decoder_start_token_id=synthetic_task.BOS,
        )
    )  # fmt: skip
    steps, warmup = 300, 40
    optimizer = torch.optim.AdamW(model.parameters(), lr=3e-3, weight_decay=0.0)
    schedule = torch.optim.lr_scheduler.LambdaLR(
        optimizer, lambda s: min((s + 1) / warmup, 1.0) * (1 - s / steps)
    )
    rng = np.random.default_rng(0)
    model.train()
    for _ in range(steps):
        loss = model(**synthetic_task.make_batch(rng, 64, min_len=5, max_len=10)).loss
        optimizer.zero_grad()
        loss.backward()
        torch.nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        optimizer.step()
        schedule.step()

    model.eval()
    test = synthetic_task.make_batch(
        np.random.default_rng(12345), 200, min_len=5, max_len=10
    )  # unseen strings
    with torch.no_grad():
        generated = model.generate(
            input_ids=test["input_ids"],
            attention_mask=test["attention_mask"],
            max_new_tokens=14,
            do_sample=False,
        )
    exact = 0
    for row, labels in zip(generated[:, 1:].tolist(), test["labels"].tolist(), strict=True):
        eos = synthetic_task.EOS
        prediction = row[: row.index(eos) + 1] if eos in row else row
        exact += prediction == [t for t in labels if t != -100]
    assert exact / 200 >= 0.95, f"exact-match accuracy {exact / 200:.1%}"

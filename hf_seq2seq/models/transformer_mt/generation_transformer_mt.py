"""Decoding for `TransformerMTForConditionalGeneration`: a fast greedy search (the output-length rule is
``length_rule.py``'s).

`generate()` hands a call that is plain greedy search (`greedy_search_arguments`) to `greedy_search`, which
returns the tokens `GenerationMixin.generate` returns with a fraction of its per-token work: the encoder runs
once, the cross-attention keys and values of every layer come from one matmul, and each step runs the decoder
on the newest token only (`decoder_step`), its keys and values written into buffers sized for the whole output,
the token picked by `first_argmax`. Each Linear layer of a step is applied by a `linear(layer, x)` function: the
layer itself (`plain_linear`) unless the model has a `greedy_search_linear` of its own, which an inference engine
may set to a faster kernel that gives the same result (the package's torch engine sets one on CPU).

Shared models must survive upgrades of torch and transformers, so this path reads transformers through its
public API only (`GenerationConfig.update`/`to_dict`) and decides conservatively: any setting it does not know
to be neutral for greedy search sends the call to `GenerationMixin`. The path also steps aside (to
`GenerationMixin`, which calls `forward`) while torch.compile or torch.export is tracing and when anything
hooks or wraps a module's forward, since it calls no module's `forward` of its own accord.

This file ships inside every saved checkpoint beside the modeling and configuration files (the modeling file
imports it), and imports only torch and transformers. Shapes: B batch (b: rows still decoding), S source
length, L layers, H heads, Dh head size, D d_model, V vocab, N new tokens.
"""

import copy
import math

import torch
import torch.nn.functional as F
from torch import nn

# generation-config fields `greedy_search` implements, and bookkeeping fields
GREEDY_SEARCH_FIELDS = {
    "max_new_tokens",
    "max_length",
    "min_new_tokens",
    "min_length",
    "max_length_a",  # the length rule, applied by `generate()`
    "max_length_b",
    "no_repeat_ngram_size",
    "decoder_start_token_id",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "use_cache",  # the same tokens with or without a cache
    "_from_model_config",
    "transformers_version",
}


# values of other fields that leave greedy search as it is (`Seq2SeqTrainer` and saved configs set them)
NEUTRAL_VALUES = {
    "do_sample": False,
    "num_beams": 1,
    "num_return_sequences": 1,
    "num_beam_groups": 1,
    "repetition_penalty": 1.0,
    "encoder_repetition_penalty": 1.0,
    "encoder_no_repeat_ngram_size": 0,
    "penalty_alpha": 0.0,
    "renormalize_logits": False,
    "remove_invalid_values": False,
}


# fields read only by sampling, beam search, assisted decoding or compilation: greedy search ignores them
IGNORED_FIELDS = {
    "temperature",
    "top_k",
    "top_p",
    "min_p",
    "top_h",
    "typical_p",
    "epsilon_cutoff",
    "eta_cutoff",
    "length_penalty",
    "early_stopping",
    "diversity_penalty",
    "num_assistant_tokens",
    "num_assistant_tokens_schedule",
    "assistant_confidence_threshold",
    "assistant_lookbehind",
    "target_lookbehind",
    "compile_config",
    "disable_compile",
}


def fast_path_applies(model: nn.Module) -> bool:
    """Whether `greedy_search` may stand in for `GenerationMixin` on `model`: in eval mode, not while torch.compile
    or torch.export trace, and no module's forward hooked (module or global hooks) or replaced on the instance
    (accelerate's hooks, transformers' exporters). A hook registry this torch does not have counts as hooked."""
    is_exporting = getattr(torch.compiler, "is_exporting", None)
    if model.training or torch.compiler.is_compiling() or (is_exporting is None or is_exporting()):
        return False
    registry = torch.nn.modules.module
    if getattr(registry, "_global_forward_hooks", True) or getattr(
        registry, "_global_forward_pre_hooks", True
    ):
        return False
    return not any(
        "forward" in vars(module)
        or getattr(module, "_forward_hooks", True)
        or getattr(module, "_forward_pre_hooks", True)
        for module in model.modules()
    )


def greedy_search_arguments(
    model, inputs: torch.Tensor | None, generation_config, kwargs: dict
) -> dict | None:
    """The arguments of `greedy_search` for a `generate(inputs, generation_config, **kwargs)` call that is plain
    greedy search, else None (the call goes to `GenerationMixin`).

    Plain: the fast path applies (`fast_path_applies`); `input_ids` and `attention_mask` are the only model
    inputs; the generation config, resolved as `GenerationMixin` does (the given one, its unset fields from the
    model's, then the call's settings), sets `max_new_tokens` (the length rule does) or `max_length`, and every
    other field is unset, one `greedy_search` implements, neutral or ignored by greedy search."""
    if not fast_path_applies(model) or (inputs is not None and "input_ids" in kwargs):
        return None
    # GenerationMixin's own default length (unset everywhere) is left to it
    default_max_length = (
        kwargs.get("max_length") is None
        and (generation_config is None or generation_config.max_length is None)
        and model.generation_config.max_length is None
    )
    config = copy.deepcopy(generation_config if generation_config is not None else model.generation_config)
    if generation_config is not None:
        for name, value in model.generation_config.to_dict().items():
            if getattr(config, name, None) is None:
                setattr(config, name, value)
    model_kwargs = config.update(**kwargs)
    input_ids = model_kwargs.pop("input_ids", inputs)
    attention_mask = model_kwargs.pop("attention_mask", None)
    if input_ids is None or attention_mask is None or model_kwargs:
        return None
    for name, value in config.to_dict().items():
        if name in GREEDY_SEARCH_FIELDS or name in IGNORED_FIELDS or value is None or value is False:
            continue
        if name not in NEUTRAL_VALUES or value != NEUTRAL_VALUES[name]:
            return None
    max_new_tokens = config.max_new_tokens
    if max_new_tokens is None and not default_max_length:
        max_new_tokens = config.max_length - 1  # max_length counts the decoder's start token
    # min_length counts the decoder's start token (GenerationMixin's MinLengthLogitsProcessor)
    min_new_tokens = (
        config.min_new_tokens if config.min_new_tokens is not None else (config.min_length or 0) - 1
    )
    start = config.decoder_start_token_id
    start = config.bos_token_id if start is None else start
    eos = config.eos_token_id
    eos = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
    pad = config.pad_token_id if config.pad_token_id is not None else (eos or [None])[0]
    if max_new_tokens is None or not 1 <= max_new_tokens <= model.config.max_position_embeddings:
        return None  # GenerationMixin's default length, or its error
    if start is None or min_new_tokens > max_new_tokens or (eos and pad is None):
        return None
    return dict(
        input_ids=input_ids,
        attention_mask=attention_mask,
        max_new_tokens=max_new_tokens,
        min_new_tokens=min_new_tokens,
        eos_token_ids=eos,
        pad_token_id=pad if pad is not None else 0,
        decoder_start_token_id=start,
        no_repeat_ngram_size=config.no_repeat_ngram_size or 0,
    )


@torch.inference_mode()
def greedy_search(
    model,
    input_ids: torch.LongTensor,
    attention_mask: torch.Tensor,
    max_new_tokens: int,
    min_new_tokens: int,
    eos_token_ids: list[int],
    pad_token_id: int,
    decoder_start_token_id: int,
    no_repeat_ngram_size: int = 0,
) -> torch.LongTensor:
    """Greedy decoding: (B, S) source -> (B, 1 + N) target ids, `decoder_start_token_id` first, `pad_token_id`
    after a row's EOS, N <= `max_new_tokens` (stopping when every row has ended), no EOS among the first
    `min_new_tokens` tokens, no n-gram of `no_repeat_ngram_size` tokens twice in a row's ids.

    Rows that have ended are dropped from the batch once they are a quarter of it, so that later steps compute
    only on the rows still decoding.
    """
    encoder_output = model.model.encoder(input_ids, attention_mask).last_hidden_state  # (B, S, D)
    decoder = model.model.decoder
    cross_keys_values = cross_attention_keys_values(decoder, encoder_output)  # (L, 2, B, H, S, Dh)
    cross_mask = torch.zeros(attention_mask.shape, dtype=encoder_output.dtype, device=encoder_output.device)
    cross_mask = cross_mask.masked_fill_(attention_mask == 0, torch.finfo(encoder_output.dtype).min)
    cross_mask = cross_mask[:, None, None, :]  # (B, 1, 1, S), additive
    layers, _, batch, heads, _, head_dim = cross_keys_values.shape
    self_keys_values = encoder_output.new_empty(layers, 2, batch, heads, max_new_tokens, head_dim)
    sdpa = getattr(model.config, "_attn_implementation", None) == "sdpa"
    linear = model.greedy_search_linear or plain_linear

    sequences = input_ids.new_full((batch, 1 + max_new_tokens), pad_token_id)  # (B, 1 + N)
    sequences[:, 0] = decoder_start_token_id
    eos = torch.tensor(eos_token_ids, dtype=torch.long, device=input_ids.device)
    rows = torch.arange(batch, device=input_ids.device)  # the rows of `sequences` in the batch
    ended = torch.zeros(batch, dtype=torch.bool, device=input_ids.device)  # (b,) of the rows in the batch
    tokens = sequences[:, 0]  # (b,)
    for position in range(max_new_tokens):
        hidden_states = decoder.embed(decoder.embed_tokens(tokens[:, None]), start=position)[:, 0]  # (b, D)
        for layer, self_kv, cross_kv in zip(decoder.layers, self_keys_values, cross_keys_values, strict=True):
            hidden_states = decoder_step(
                layer, hidden_states, position, self_kv, cross_kv, cross_mask, linear, sdpa
            )
        if decoder.layer_norm is not None:
            hidden_states = decoder.layer_norm(hidden_states)
        logits = linear(model.lm_head, hidden_states)  # (b, V)
        if position < min_new_tokens:
            logits[:, eos] = -math.inf
        if 0 < no_repeat_ngram_size <= position + 1:
            ban_repeated_ngrams(logits, sequences[rows, : position + 1], no_repeat_ngram_size)
        tokens = first_argmax(logits).masked_fill_(ended, pad_token_id)  # (b,)
        sequences[rows, position + 1] = tokens
        ended |= torch.isin(tokens, eos)
        num_ended = int(ended.sum())
        if num_ended == len(rows):
            return sequences[:, : position + 2].contiguous()
        if 4 * num_ended >= len(rows):
            keep = (~ended).nonzero().squeeze(1)  # (b',)
            rows, tokens, ended, cross_mask = rows[keep], tokens[keep], ended[keep], cross_mask[keep]
            self_keys_values = self_keys_values.index_select(2, keep)
            cross_keys_values = cross_keys_values.index_select(2, keep)
    return sequences


def cross_attention_keys_values(decoder: nn.Module, encoder_hidden_states: torch.Tensor) -> torch.Tensor:
    """Cross-attention keys and values of every decoder layer, from one (D -> L·2D) matmul over the encoder
    output: (B, S, D) -> (L, 2, B, H, S, Dh)."""
    projections = [layer.encoder_attn.kv_proj for layer in decoder.layers]
    if all(type(p) is nn.Linear for p in projections):
        weight = torch.cat([p.weight for p in projections])  # (L·2D, D)
        bias = torch.cat([p.bias for p in projections])  # (L·2D,)
        keys_values = F.linear(encoder_hidden_states, weight, bias)  # (B, S, L·2D)
    else:  # modules whose weights are not one matrix to concatenate, e.g. int8-quantized Linear layers
        keys_values = torch.cat([p(encoder_hidden_states) for p in projections], dim=-1)  # (B, S, L·2D)
    batch, length, _ = encoder_hidden_states.shape
    attention = decoder.layers[0].encoder_attn
    keys_values = keys_values.view(
        batch, length, len(projections), 2, attention.num_heads, attention.head_dim
    )
    return keys_values.permute(2, 3, 0, 4, 1, 5)  # (L, 2, B, H, S, Dh)


def decoder_step(
    layer: nn.Module,
    hidden_states: torch.Tensor,
    position: int,
    self_keys_values: torch.Tensor,
    cross_keys_values: torch.Tensor,
    cross_mask: torch.Tensor,
    linear,
    sdpa: bool,
) -> torch.Tensor:
    """One decoder layer's step on the newest token only: `hidden_states` (b, D) at target position `position`;
    its key and value are written into slot `position` of `self_keys_values` (2, b, H, N, Dh), whose slots
    0..position it attends to (no mask: all are in its past); it attends to the encoder output through
    `cross_keys_values` (2, b, H, S, Dh) and the additive `cross_mask` (b, 1, 1, S). The layer's own modules
    give the weights, `linear(layer, x)` applies a Linear layer; attention runs torch's SDPA kernel directly
    (`sdpa`, the configured implementation) or the layer's `attend`."""
    batch = hidden_states.shape[0]

    def attend(attention, query, key, value, mask):  # (b, H, 1, Dh) query -> (b, D)
        if sdpa:
            output = F.scaled_dot_product_attention(
                query, key, value, attn_mask=mask, scale=attention.scaling
            )
            return output.reshape(batch, -1)
        return attention.attend(query, key, value, mask)[0].reshape(batch, -1)

    attention, connection = layer.self_attn, layer.self_attn_connection
    qkv = linear(attention.qkv_proj, connection.sublayer_input(hidden_states))  # (b, 3D)
    qkv = qkv.view(batch, 3, attention.num_heads, 1, attention.head_dim)  # (b, 3, H, 1, Dh)
    self_keys_values[:, :, :, position] = qkv[:, 1:, :, 0].transpose(0, 1)  # (2, b, H, Dh)
    key, value = self_keys_values[:, :, :, : position + 1]  # (b, H, position+1, Dh)
    output = attend(attention, qkv[:, 0], key, value, None)
    hidden_states = connection(hidden_states, linear(attention.out_proj, output))

    attention, connection = layer.encoder_attn, layer.encoder_attn_connection
    query = linear(attention.q_proj, connection.sublayer_input(hidden_states))  # (b, D)
    query = query.view(batch, attention.num_heads, 1, attention.head_dim)  # (b, H, 1, Dh)
    output = attend(attention, query, *cross_keys_values, cross_mask)
    hidden_states = connection(hidden_states, linear(attention.out_proj, output))

    ffn, connection = layer.ffn, layer.ffn_connection
    output = linear(ffn.fc2, ffn.activation(linear(ffn.fc1, connection.sublayer_input(hidden_states))))
    return connection(hidden_states, output)  # (b, D)


def plain_linear(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """A Linear layer on (b, in) rows -> (b, out), as it computes itself."""
    return layer(x)


def ban_repeated_ngrams(logits: torch.Tensor, prefix: torch.LongTensor, n: int) -> None:
    """Sets to -inf the logits (b, V) of each token that would repeat an n-gram of `prefix` (b, T >= n): the
    last token of every n-gram in it that starts with the prefix's last n-1 tokens (as transformers'
    `NoRepeatNGramLogitsProcessor`)."""
    ngrams = prefix.unfold(1, n, 1)  # (b, T-n+1, n)
    repeats = (ngrams[:, :, :-1] == prefix[:, None, prefix.shape[1] - n + 1 :]).all(dim=-1)  # (b, T-n+1)
    rows, starts = repeats.nonzero(as_tuple=True)
    logits[rows, ngrams[rows, starts, -1]] = -math.inf


def first_argmax(logits: torch.Tensor) -> torch.Tensor:
    """(b, V) -> (b,): the index of each row's first maximum, as `logits.argmax(-1)`. torch's CPU argmax is a
    scalar loop; here the maxima of blocks of the vocabulary are taken first (`amax` is vectorised), then the
    argmax within each row's first best block, in a fraction of the time (docs/decoding.md measures both)."""
    batch, vocab = logits.shape
    if batch < 8 or logits.device.type != "cpu":  # few rows: the scalar loop is as fast
        return logits.argmax(dim=-1)
    block = next(size for size in range(64, 0, -1) if vocab % size == 0)
    blocks = logits.contiguous().view(batch, vocab // block, block)  # (b, V/c, c)
    best = blocks.amax(dim=2).argmax(dim=1, keepdim=True)  # (b, 1): the first block holding the maximum
    within = blocks.gather(1, best[:, :, None].expand(batch, 1, block)).argmax(dim=2)  # (b, 1)
    return (best * block + within)[:, 0]

"""The encoder-decoder Transformer of "Attention Is All You Need" (Vaswani et al., 2017), from scratch.

    source ids ─► Embedding·√d + PE ─► N × [self-attn, FFN] ───────────────► memory
    target ids ─► Embedding·√d + PE ─► N × [masked self-attn, cross-attn(memory), FFN] ─► Linear ─► logits

Every sub-layer is wrapped in a residual connection and a LayerNorm: `LayerNorm(x + Sublayer(x))` (post-LN,
the paper) or `x + Sublayer(LayerNorm(x))` (pre-LN, `config.normalize_before`). Embeddings of the encoder
input, the decoder input and the output projection are one matrix when `config.tie_word_embeddings`.

Hugging Face contracts (transformers 5.x): attention runs through `ALL_ATTENTION_FUNCTIONS` ("eager"/"sdpa");
decoding caches keys/values in an `EncoderDecoderCache` (self-attention cache grows by one step per token, or is
a static cache of fixed size whose decoding step `torch.compile` captures as one graph; each layer's
cross-attention keys/values are computed once from the encoder output); the call's `output_attentions` /
`output_hidden_states` / `use_cache` / `return_dict` override the config's; `inputs_embeds` /
`decoder_inputs_embeds` stand in for ids; `TransformerMTForConditionalGeneration` mixes in `GenerationMixin`;
every encoder and decoder layer is a `GradientCheckpointingLayer` (`model.activation_checkpointing_enable()`,
`gradient_checkpointing_enable()` before transformers 5.23, the Trainer's `--gradient_checkpointing`), so its
inputs that need gradients are passed positionally and the KV cache is dropped inside a checkpointed layer. On
the CPU, training skips the padding: the layers' projections and FFNs run on the real tokens' rows only
(`pack`); on a GPU and under torch.compile every shape stays fixed (`fixed_shapes`), and the decoder's
self-attention without padding runs as `is_causal`, which sdpa's fused kernels take.

`generate()` adds an output length relative to the source and hands plain greedy search to the hand-written
loop of `generation_transformer_mt.py`.

Shapes in comments: B batch, S source length, T target length (this step), P cached target length,
K key length, H heads, Dh head size, D d_model, V vocab. This file ships inside every saved checkpoint
and imports only torch, transformers and its sibling files (config, generation). It is longer than the
package's other modules on purpose: one file holds the whole network, top to bottom as the paper builds it,
as transformers' own modeling files do.
"""

import dataclasses
import math
from collections.abc import Callable

import torch
import torch.nn.functional as F
from torch import nn
from transformers import initialization as init
from transformers.activations import ACT2FN
from transformers.cache_utils import Cache, DynamicCache, EncoderDecoderCache
from transformers.generation import GenerationMixin
from transformers.modeling_layers import GradientCheckpointingLayer
from transformers.modeling_outputs import (
    BaseModelOutput,
    BaseModelOutputWithPastAndCrossAttentions,
    Seq2SeqLMOutput,
    Seq2SeqModelOutput,
)
from transformers.modeling_utils import ALL_ATTENTION_FUNCTIONS, PreTrainedModel
from transformers.utils import can_return_tuple
from transformers.utils.deprecation import deprecate_kwarg

from .configuration_transformer_mt import TransformerMTConfig
from .generation_transformer_mt import greedy_search, greedy_search_arguments
from .length_rule import length_rule_limit

# transformers 5.24 renamed the decoding cache from `past_key_values` to `cache`: in the model call that `generate()`
# makes, in the output classes and in the keyword a checkpointed layer drops. A saved folder outlives the release it
# was saved with, so the model takes the cache under either name and hands it on under the installed release's
# (read from an output class's public fields).
CACHE_NAME = (
    "cache" if "cache" in {field.name for field in dataclasses.fields(Seq2SeqLMOutput)} else "past_key_values"
)


def cache_argument(cache: Cache | None, past_key_values: Cache | None) -> Cache | None:
    """The decoding cache of a call that names it `cache` (transformers >= 5.24) or `past_key_values` (before)."""
    if cache is not None and past_key_values is not None:
        raise ValueError("pass the decoding cache once, as `cache` or as `past_key_values`")
    return past_key_values if cache is None else cache


def takes_the_old_cache_name(forward: Callable) -> Callable:
    """Where the installed release names the cache `cache`, a call that passes `past_key_values` gets transformers'
    own deprecation warning, as its models give (`deprecate_kwarg`); before, that is the name `generate()` uses."""
    if CACHE_NAME == "cache":
        return deprecate_kwarg("past_key_values", "5.40.0", new_name="cache", raise_if_both_names=True)(
            forward
        )
    return forward


def shift_tokens_right(labels: torch.Tensor, pad_token_id: int, decoder_start_token_id: int) -> torch.Tensor:
    """Teacher forcing: decoder input at step t is the label at t-1; -100 (ignored) becomes pad."""
    shifted = labels.new_empty(labels.shape)  # (B, T)
    shifted[:, 1:] = labels[:, :-1]
    shifted[:, 0] = decoder_start_token_id
    return shifted.masked_fill_(shifted == -100, pad_token_id)


def padding_mask(attention_mask: torch.Tensor | None, dtype: torch.dtype) -> torch.Tensor | None:
    """(B, K) 1/0 key mask -> (B, 1, 1, K) additive mask: 0 where attended, dtype-min on padding."""
    if attention_mask is None:
        return None
    mask = torch.zeros(attention_mask.shape, dtype=dtype, device=attention_mask.device)
    return mask.masked_fill_(attention_mask == 0, torch.finfo(dtype).min)[:, None, None, :]


def causal_mask(
    query_length: int,
    past_length: int | torch.Tensor,
    attention_mask: torch.Tensor | None,
    dtype: torch.dtype,
    device,
    key_length: int | None = None,
) -> torch.Tensor | None:
    """Additive (B|1, 1, T, K) mask: query t (at absolute position P+t) sees keys 0..P+t that are not padding.

    The keys are the P cached and T new ones (K = P+T), or, given `key_length`, every slot of a static cache
    (P then a 0-d tensor; the slots after P+t, not yet written, are blocked). `attention_mask` (B, ≤K) marks
    the real target tokens. Returns None for a single new query without padding over P+1 keys: it may attend
    to everything cached.
    """
    if key_length is None:
        if query_length == 1 and attention_mask is None:
            return None
        key_length = past_length + query_length
    positions = past_length + torch.arange(query_length, device=device)  # (T,)
    blocked = torch.arange(key_length, device=device) > positions[:, None]  # (T, K)
    blocked = blocked[None, None]  # (1, 1, T, K)
    if attention_mask is not None:
        keys = attention_mask[:, -key_length:]
        keys = F.pad(keys, (0, key_length - keys.shape[1]))  # (B, K): a static cache's unwritten slots
        blocked = blocked | (keys[:, None, None, :] == 0)  # (B, 1, T, K)
    return torch.zeros(blocked.shape, dtype=dtype, device=device).masked_fill_(
        blocked, torch.finfo(dtype).min
    )


def additive_mask(mask: torch.Tensor, dtype: torch.dtype) -> torch.Tensor:
    """A 4-D (B, 1, T, K) mask as `generate()` builds it for a static cache (boolean, True where attended; or
    already additive) -> additive in `dtype`: 0 where attended, dtype-min elsewhere."""
    if mask.dtype != torch.bool:
        return mask.to(dtype)
    return torch.zeros(mask.shape, dtype=dtype, device=mask.device).masked_fill_(
        ~mask, torch.finfo(dtype).min
    )


def fixed_shapes(tensor: torch.Tensor) -> bool:
    """Whether every shape must stay independent of the data: under torch.compile (a graph cannot branch on the data
    or select a number of rows that depends on it), and off the CPU (on a GPU, reading the data on the host, such
    as whether a batch has padding or how many real tokens it holds, waits until the device has run everything
    queued, so the queue drains and the device idles, several times a step). The CPU computes in the caller's
    thread anyway: there, skipping padding costs no wait."""
    return torch.compiler.is_compiling() or tensor.device.type != "cpu"


def cpu_training_in_reduced_precision(query: torch.Tensor, training: bool) -> bool:
    """Whether attention runs the eager path though sdpa is configured: in training on the CPU in bf16/fp16
    (autocast), where torch's CPU flash-attention backward is slow on short sequences (docs/training.md has the
    measurement). Off the CPU, and in fp32, sdpa runs."""
    return training and query.device.type == "cpu" and query.dtype != torch.float32


def token_mask_of(attention_mask: torch.Tensor | None) -> torch.Tensor | None:
    """(B, T) bool mask of real tokens, or None when there is no padding (nothing to skip). With `fixed_shapes` it
    is the mask whenever there is one: whether a batch has padding is data."""
    if attention_mask is None or (not fixed_shapes(attention_mask) and bool(attention_mask.all())):
        return None
    return attention_mask.bool()


def pack(
    hidden_states: torch.Tensor, token_mask: torch.Tensor | None, keep_layout: bool = False
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The first layer's input and the mask the layers pack by: the (N, D) real-token rows and `token_mask`, so
    that the layers never compute on padding. (B, T, D) as it is and None with `keep_layout` (every layer's
    hidden states are returned as they are computed) and with `fixed_shapes` (a number of rows that depends on
    the data breaks a graph, and the backward of `unpack`'s scatter cannot be traced)."""
    if token_mask is None or keep_layout or fixed_shapes(hidden_states):
        return hidden_states, None
    return real_token_rows(hidden_states, token_mask), token_mask


def row_numbers(token_mask: torch.Tensor) -> torch.Tensor:
    """(B, T) mask -> (N,) the real tokens' row numbers in the flattened (B·T, F) layout."""
    return token_mask.flatten().nonzero().squeeze(1)


def real_token_rows(hidden_states: torch.Tensor, token_mask: torch.Tensor) -> torch.Tensor:
    """(B, T, F) -> the (N, F) rows of real tokens: `hidden_states[token_mask]`, selected by row number. The same
    rows and gradients, but on the CPU the backward of boolean-mask indexing (index_put with accumulation) is several
    times slower than index_select's (index_add; docs/model.md). torch's functions, not the Tensor methods: dynamo,
    compiling a layer alone (regional compilation), traces these and warns on those."""
    return torch.index_select(hidden_states.flatten(0, 1), 0, row_numbers(token_mask))


def unpack(hidden_states: torch.Tensor, token_mask: torch.Tensor | None) -> torch.Tensor:
    """Real-token rows -> (B, T, F) with zeros at padding: (N, F) packed rows are put in place, (B, T, F) rows
    (not packed: `fixed_shapes`) have their padding zeroed; identity without a mask."""
    if token_mask is None:
        return hidden_states
    if hidden_states.dim() == 3:
        return hidden_states.masked_fill(~token_mask[..., None], 0.0)
    padded = hidden_states.new_zeros(token_mask.numel(), hidden_states.shape[-1])  # (B·T, F)
    return torch.index_copy(padded, 0, row_numbers(token_mask), hidden_states).view(*token_mask.shape, -1)


class TransformerMTSinusoidalPositionalEncoding(nn.Module):
    """PE(pos, 2i) = sin(pos / 10000^(2i/D)), PE(pos, 2i+1) = cos(pos / 10000^(2i/D)) (section 3.5).

    A fixed table, kept as a non-persistent buffer: it is never saved and is rebuilt by `_init_weights`.
    """

    def __init__(self, max_positions: int, d_model: int):
        super().__init__()
        self.register_buffer("table", self.compute_table(max_positions, d_model), persistent=False)

    @staticmethod
    def compute_table(max_positions: int, d_model: int) -> torch.Tensor:
        position = torch.arange(max_positions, dtype=torch.float32)[:, None]  # (L, 1)
        inv_freq = torch.exp(
            torch.arange(0, d_model, 2, dtype=torch.float32) * (-math.log(10000.0) / d_model)
        )
        table = torch.zeros(max_positions, d_model)
        table[:, 0::2] = torch.sin(position * inv_freq)
        table[:, 1::2] = torch.cos(position * inv_freq[: d_model // 2])
        return table  # (L, D)

    def forward(self, start: int | torch.Tensor, length: int) -> torch.Tensor:
        """The encodings of positions start..start+length-1. `start` is an int, a 0-d tensor (a static
        cache's length, read without a device sync; the decoder checks the cache fits the table), or a (B, 1)
        tensor of each sequence's start (the caller keeps it within the table)."""
        if isinstance(start, torch.Tensor):
            return self.table[start + torch.arange(length, device=start.device)]  # (T, D) or (B, T, D)
        if start + length > self.table.shape[0]:
            raise ValueError(
                f"sequence of {start + length} positions is longer than max_position_embeddings="
                f"{self.table.shape[0]}; truncate the input (the tokenizer does with truncation=True)"
            )
        return self.table[start : start + length]  # (T, D)


def eager_attention_forward(
    module: nn.Module,
    query: torch.Tensor,
    key: torch.Tensor,
    value: torch.Tensor,
    attention_mask: torch.Tensor | None,
    scaling: float,
    dropout: float = 0.0,
    **kwargs,
) -> tuple[torch.Tensor, torch.Tensor]:
    """softmax(Q Kᵀ / √Dh + mask) V, returning the weights too (section 3.2.1)."""
    scores = torch.matmul(query, key.transpose(2, 3)) * scaling  # (B, H, T, K)
    if attention_mask is not None:
        scores = scores + attention_mask
    weights = F.softmax(scores, dim=-1, dtype=torch.float32).to(query.dtype)
    output = torch.matmul(F.dropout(weights, p=dropout, training=module.training), value)  # (B, H, T, Dh)
    return output.transpose(1, 2).contiguous(), weights  # (B, T, H, Dh), (B, H, T, K)


class TransformerMTAttention(nn.Module):
    """Multi-head attention (section 3.2.2), with fused input projections.

    Self-attention projects Q, K, V with one (D -> 3D) matmul; cross-attention projects Q from the decoder
    and K, V with one (D -> 2D) matmul from the encoder output, once per generation (then read from the cache).
    """

    def __init__(
        self,
        config: TransformerMTConfig,
        num_heads: int,
        is_cross_attention: bool,
        is_causal: bool,
        layer_idx: int | None = None,
    ):
        super().__init__()
        self.config = config
        self.num_heads = num_heads
        self.head_dim = config.d_model // num_heads
        self.scaling = self.head_dim**-0.5
        self.dropout = config.attention_dropout
        self.is_cross_attention = is_cross_attention
        self.is_causal = is_causal  # read by the sdpa interface when no mask is given
        self.layer_idx = layer_idx
        if is_cross_attention:
            self.q_proj = nn.Linear(config.d_model, config.d_model)
            self.kv_proj = nn.Linear(config.d_model, 2 * config.d_model)
        else:
            self.qkv_proj = nn.Linear(config.d_model, 3 * config.d_model)
        self.out_proj = nn.Linear(config.d_model, config.d_model)

    def _split_heads(self, x: torch.Tensor, n: int) -> tuple[torch.Tensor, ...]:
        """(B, L, n·D) -> n tensors of (B, H, L, Dh), each a view of `x`. Split along D first: the gradients that
        attention returns in its inputs' layout then join back with one concatenation (splitting heads first makes
        the backward stack them and copy the result into place)."""
        batch, length, _ = x.shape
        parts = x.split(self.num_heads * self.head_dim, dim=-1) if n > 1 else (x,)
        return tuple(
            part.view(batch, length, self.num_heads, self.head_dim).transpose(1, 2) for part in parts
        )

    def forward(
        self,
        hidden_states: torch.Tensor,
        key_value_states: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        cache: EncoderDecoderCache | None = None,
        output_attentions: bool = False,
        token_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """`hidden_states` is (B, T, D), or (N, D) real-token rows when `token_mask` (B, T) is given: the
        projections then skip padding, and only the attention itself runs on the padded (B, T) layout."""
        if self.is_cross_attention:
            (query,) = self._split_heads(unpack(self.q_proj(hidden_states), token_mask), 1)  # (B, H, T, Dh)
            if cache is not None and cache.is_updated.get(self.layer_idx):
                layer = cache.cross_attention_cache.layers[self.layer_idx]
                key, value = layer.keys, layer.values  # (B, H, S, Dh)
            else:
                key, value = self._split_heads(self.kv_proj(key_value_states), 2)  # (B, H, S, Dh)
                if cache is not None:  # the first decoding step: kept for the next ones
                    key, value = cache.cross_attention_cache.update(key, value, self.layer_idx)
                    cache.is_updated[self.layer_idx] = True
        else:
            query, key, value = self._split_heads(
                unpack(self.qkv_proj(hidden_states), token_mask), 3
            )  # (B, H, T, Dh)
            if cache is not None:
                key, value = cache.self_attention_cache.update(key, value, self.layer_idx)  # (B, H, P+T, Dh)

        output, weights = self.attend(query, key, value, attention_mask, output_attentions)
        output = output.reshape(query.shape[0], query.shape[2], -1)  # (B, T, D)
        if token_mask is not None:
            output = real_token_rows(output, token_mask)  # (N, D)
        return self.out_proj(output), weights  # (B, T, D) or (N, D), (B, H, T, K)

    def attend(
        self,
        query: torch.Tensor,
        key: torch.Tensor,
        value: torch.Tensor,
        attention_mask: torch.Tensor | None,
        output_attentions: bool = False,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """softmax(Q Kᵀ / √Dh + mask) V over (B, H, T, Dh) queries and (B, H, K, Dh) keys/values -> (B, T, H, Dh),
        with the configured implementation; the weights (B, H, T, K) only from the eager one."""
        # output_attentions needs the weights, which only the eager path materialises
        implementation = (
            "eager"
            if output_attentions or cpu_training_in_reduced_precision(query, self.training)
            else self.config._attn_implementation
        )
        if hasattr(
            ALL_ATTENTION_FUNCTIONS, "get_interface"
        ):  # transformers >= 5.1 (it also validates the name)
            attention_interface: Callable = ALL_ATTENTION_FUNCTIONS.get_interface(
                implementation, eager_attention_forward
            )
        else:  # the same lookup, before
            attention_interface = ALL_ATTENTION_FUNCTIONS.get(implementation, eager_attention_forward)
        if attention_mask is None and self.is_causal and query.shape[2] > 1 and implementation == "eager":
            # no mask over several queries of the causal self-attention is causal attention, which the other
            # implementations take from `is_causal`; the eager one needs it as a mask
            attention_mask = causal_mask(query.shape[2], 0, None, query.dtype, query.device)
        return attention_interface(
            self,
            query,
            key,
            value,
            attention_mask,  # None over T > 1 queries of the decoder's self-attention: causal (`is_causal`)
            scaling=self.scaling,
            dropout=self.dropout if self.training else 0.0,
        )  # (B, T, H, Dh), (B, H, T, K) or None


class TransformerMTFeedForward(nn.Module):
    """FFN(x) = W2 · act(W1 x + b1) + b2, applied at each position (section 3.3)."""

    def __init__(self, config: TransformerMTConfig, ffn_dim: int):
        super().__init__()
        self.fc1 = nn.Linear(config.d_model, ffn_dim)
        self.activation = ACT2FN[config.activation_function]
        self.activation_dropout = config.activation_dropout
        self.fc2 = nn.Linear(ffn_dim, config.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.activation(self.fc1(x))  # (B, T, F)
        x = F.dropout(x, p=self.activation_dropout, training=self.training)
        return self.fc2(x)  # (B, T, D)


class TransformerMTSublayerConnection(nn.Module):
    """Residual connection and LayerNorm around one sub-layer (section 5.4: dropout before the add).

    post-LN (paper): out = LayerNorm(x + Dropout(Sublayer(x)))
    pre-LN:          out = x + Dropout(Sublayer(LayerNorm(x)))
    Use as `y = conn.sublayer_input(x)`, run the sub-layer on y, then `conn(x, sublayer_output)`.
    """

    def __init__(self, config: TransformerMTConfig):
        super().__init__()
        self.layer_norm = nn.LayerNorm(config.d_model)
        self.dropout = config.dropout
        self.normalize_before = config.normalize_before

    def sublayer_input(self, x: torch.Tensor) -> torch.Tensor:
        return self.layer_norm(x) if self.normalize_before else x

    def forward(self, residual: torch.Tensor, sublayer_output: torch.Tensor) -> torch.Tensor:
        x = residual + F.dropout(sublayer_output, p=self.dropout, training=self.training)
        return x if self.normalize_before else self.layer_norm(x)


class TransformerMTEncoderLayer(GradientCheckpointingLayer):
    """Self-attention, then FFN, each inside a residual + LayerNorm connection."""

    def __init__(self, config: TransformerMTConfig):
        super().__init__()
        self.self_attn = TransformerMTAttention(
            config, config.encoder_attention_heads, is_cross_attention=False, is_causal=False
        )
        self.self_attn_connection = TransformerMTSublayerConnection(config)
        self.ffn = TransformerMTFeedForward(config, config.encoder_ffn_dim)
        self.ffn_connection = TransformerMTSublayerConnection(config)

    def forward(
        self,
        hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None,
        output_attentions: bool = False,
        token_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        attn_out, attn_weights = self.self_attn(
            self.self_attn_connection.sublayer_input(hidden_states),
            attention_mask=attention_mask,
            output_attentions=output_attentions,
            token_mask=token_mask,
        )
        hidden_states = self.self_attn_connection(hidden_states, attn_out)
        hidden_states = self.ffn_connection(
            hidden_states, self.ffn(self.ffn_connection.sublayer_input(hidden_states))
        )
        return hidden_states, attn_weights  # (B, S, D) or (N, D), (B, H, S, S)


class TransformerMTDecoderLayer(GradientCheckpointingLayer):
    """Masked self-attention, cross-attention over the encoder output, then FFN (section 3.1)."""

    def __init__(self, config: TransformerMTConfig, layer_idx: int):
        super().__init__()
        heads = config.decoder_attention_heads
        self.self_attn = TransformerMTAttention(
            config, heads, is_cross_attention=False, is_causal=True, layer_idx=layer_idx
        )
        self.self_attn_connection = TransformerMTSublayerConnection(config)
        self.encoder_attn = TransformerMTAttention(
            config, heads, is_cross_attention=True, is_causal=False, layer_idx=layer_idx
        )
        self.encoder_attn_connection = TransformerMTSublayerConnection(config)
        self.ffn = TransformerMTFeedForward(config, config.decoder_ffn_dim)
        self.ffn_connection = TransformerMTSublayerConnection(config)

    def forward(
        self,
        hidden_states: torch.Tensor,
        self_attn_mask: torch.Tensor | None,
        encoder_hidden_states: torch.Tensor,
        encoder_attn_mask: torch.Tensor | None,
        cache: EncoderDecoderCache | None = None,
        output_attentions: bool = False,
        token_mask: torch.Tensor | None = None,
        past_key_values: EncoderDecoderCache | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        cache = cache_argument(cache, past_key_values)
        attn_out, self_weights = self.self_attn(
            self.self_attn_connection.sublayer_input(hidden_states),
            attention_mask=self_attn_mask,
            cache=cache,
            output_attentions=output_attentions,
            token_mask=token_mask,
        )
        hidden_states = self.self_attn_connection(hidden_states, attn_out)
        attn_out, cross_weights = self.encoder_attn(
            self.encoder_attn_connection.sublayer_input(hidden_states),
            key_value_states=encoder_hidden_states,
            attention_mask=encoder_attn_mask,
            cache=cache,
            output_attentions=output_attentions,
            token_mask=token_mask,
        )
        hidden_states = self.encoder_attn_connection(hidden_states, attn_out)
        hidden_states = self.ffn_connection(
            hidden_states, self.ffn(self.ffn_connection.sublayer_input(hidden_states))
        )
        return hidden_states, self_weights, cross_weights  # (B, T, D) or (N, D), (B, H, T, P+T), (B, H, T, S)


class TransformerMTPreTrainedModel(PreTrainedModel):
    config: TransformerMTConfig
    config_class = TransformerMTConfig
    base_model_prefix = "model"
    main_input_name = "input_ids"
    _supports_sdpa = True
    _can_compile_fullgraph = (
        True  # the decoding step with a static cache is one graph (tests/test_compiled_decoding)
    )
    supports_gradient_checkpointing = True  # per encoder/decoder layer (GradientCheckpointingLayer)
    _no_split_modules = ["TransformerMTEncoderLayer", "TransformerMTDecoderLayer"]

    @torch.no_grad()
    def _init_weights(self, module: nn.Module) -> None:
        """Xavier-uniform linear layers (as in the reference implementations), N(0, D^-1/2) embeddings so that
        √D-scaled embeddings have unit variance, identity LayerNorms, the fixed sinusoidal table."""
        if isinstance(module, nn.Linear):
            init.xavier_uniform_(module.weight)
            if module.bias is not None:
                init.zeros_(module.bias)
        elif isinstance(module, nn.Embedding):
            init.normal_(module.weight, mean=0.0, std=self.config.d_model**-0.5)
            if module.padding_idx is not None:
                init.zeros_(module.weight[module.padding_idx])
        elif isinstance(module, nn.LayerNorm):
            init.ones_(module.weight)
            init.zeros_(module.bias)
        elif isinstance(module, TransformerMTSinusoidalPositionalEncoding):
            init.copy_(module.table, module.compute_table(*module.table.shape))


class TransformerMTStack(nn.Module):
    """What the encoder and the decoder share: token embeddings·√D + sinusoidal positions + dropout at the
    bottom, a stack of layers, and (pre-LN only) a final LayerNorm at the top."""

    def __init__(self, config: TransformerMTConfig, layers: list[nn.Module]):
        super().__init__()
        self.config = config
        self.embed_tokens = nn.Embedding(config.vocab_size, config.d_model, config.pad_token_id)
        self.embed_scale = math.sqrt(config.d_model) if config.scale_embedding else 1.0
        self.embed_positions = TransformerMTSinusoidalPositionalEncoding(
            config.max_position_embeddings, config.d_model
        )
        self.dropout = config.dropout
        self.layers = nn.ModuleList(layers)
        self.layer_norm = nn.LayerNorm(config.d_model) if config.normalize_before else None

    def token_embeddings(
        self, input_ids: torch.LongTensor | None, inputs_embeds: torch.Tensor | None
    ) -> torch.Tensor:
        """(B, T) ids -> (B, T, D) rows of `embed_tokens`, or the `inputs_embeds` given in their place."""
        if (input_ids is None) == (inputs_embeds is None):
            raise ValueError("give exactly one of input_ids and inputs_embeds (decoder_inputs_embeds)")
        return self.embed_tokens(input_ids) if inputs_embeds is None else inputs_embeds

    def embed(self, inputs_embeds: torch.Tensor, start: int | torch.Tensor = 0) -> torch.Tensor:
        """(B, T, D) token embeddings at positions start.. -> (B, T, D) inputs of the first layer. In training
        with `max_position_shift` K, each sequence starts at its own random position in 0..K instead (SHAPE),
        as far as the table reaches."""
        hidden_states = inputs_embeds * self.embed_scale
        batch, length = inputs_embeds.shape[:2]
        shift = min(self.config.max_position_shift, self.config.max_position_embeddings - length)
        if self.training and shift > 0:
            start = start + torch.randint(0, shift + 1, (batch, 1), device=inputs_embeds.device)  # (B, 1)
        hidden_states = hidden_states + self.embed_positions(start, length).to(hidden_states.dtype)
        return F.dropout(hidden_states, p=self.dropout, training=self.training)

    def output_flags(
        self, output_attentions: bool | None, output_hidden_states: bool | None
    ) -> tuple[bool, bool]:
        """The call's `output_attentions` / `output_hidden_states`, the config's where the call leaves them unset."""
        return (
            self.config.output_attentions if output_attentions is None else output_attentions,
            self.config.output_hidden_states if output_hidden_states is None else output_hidden_states,
        )


class TransformerMTEncoder(TransformerMTStack):
    """N encoder layers over the embedded source."""

    def __init__(self, config: TransformerMTConfig):
        super().__init__(config, [TransformerMTEncoderLayer(config) for _ in range(config.encoder_layers)])

    @can_return_tuple
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        inputs_embeds: torch.Tensor | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        **kwargs,
    ) -> BaseModelOutput:
        output_attentions, output_hidden_states = self.output_flags(output_attentions, output_hidden_states)
        hidden_states = self.embed(self.token_embeddings(input_ids, inputs_embeds))  # (B, S, D)
        mask = padding_mask(attention_mask, hidden_states.dtype)  # (B, 1, 1, S)
        token_mask = token_mask_of(attention_mask)
        hidden_states, packed_by = pack(hidden_states, token_mask, keep_layout=output_hidden_states)  # (N, D)

        all_hidden_states = (hidden_states,) if output_hidden_states else None
        all_attentions = () if output_attentions else None
        for layer in self.layers:
            hidden_states, weights = layer(
                hidden_states, mask, output_attentions=output_attentions, token_mask=packed_by
            )
            if output_attentions:
                all_attentions += (weights,)
            if output_hidden_states:
                all_hidden_states += (hidden_states,)
        if self.layer_norm is not None:
            hidden_states = self.layer_norm(hidden_states)
        return BaseModelOutput(
            last_hidden_state=unpack(hidden_states, token_mask),  # (B, S, D), zeros at padding
            hidden_states=all_hidden_states,
            attentions=all_attentions,
        )


class TransformerMTDecoder(TransformerMTStack):
    """N decoder layers over the embedded target, positions offset by the cached length."""

    def __init__(self, config: TransformerMTConfig):
        super().__init__(
            config, [TransformerMTDecoderLayer(config, layer_idx=i) for i in range(config.decoder_layers)]
        )

    @can_return_tuple
    @takes_the_old_cache_name
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        encoder_hidden_states: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        encoder_attention_mask: torch.Tensor | None = None,
        cache: Cache | None = None,
        inputs_embeds: torch.Tensor | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        past_key_values: Cache | None = None,
        **kwargs,
    ) -> BaseModelOutputWithPastAndCrossAttentions:
        cache = cache_argument(cache, past_key_values)
        output_attentions, output_hidden_states = self.output_flags(output_attentions, output_hidden_states)
        use_cache = self.config.use_cache if use_cache is None else use_cache
        if use_cache and cache is None:
            cache = EncoderDecoderCache(DynamicCache(config=self.config), DynamicCache(config=self.config))
        # a static cache (compileable: fixed shapes for torch.compile) returns all its slots, written or not, and
        # its length as a tensor
        static = cache is not None and cache.is_compileable
        past_length = cache.get_seq_length() if cache is not None else 0
        inputs_embeds = self.token_embeddings(input_ids, inputs_embeds)  # (B, T, D)
        length = inputs_embeds.shape[1]
        key_length = cache.get_max_length() if static else None
        if static and key_length > self.config.max_position_embeddings:
            raise ValueError(
                f"a static cache of {key_length} positions is longer than max_position_embeddings="
                f"{self.config.max_position_embeddings}; generate fewer tokens"
            )

        hidden_states = self.embed(inputs_embeds, start=past_length)  # (B, T, D)
        token_mask = None  # a 4-D mask names no padded target tokens to skip
        if attention_mask is not None and attention_mask.dim() == 4:  # built by generate() for a static cache
            self_mask = additive_mask(attention_mask, hidden_states.dtype)  # (B, 1, T, K)
        elif attention_mask is None and cache is None and fixed_shapes(hidden_states):
            # plain causal attention: no mask, so that sdpa runs it as `is_causal`, which its fused kernels (flash
            # attention among them) take; an explicit mask rules flash attention out
            self_mask = None
        else:
            self_mask = causal_mask(
                length, past_length, attention_mask, hidden_states.dtype, hidden_states.device, key_length
            )
            token_mask = token_mask_of(attention_mask[:, -length:] if attention_mask is not None else None)
        cross_mask = padding_mask(encoder_attention_mask, hidden_states.dtype)  # (B, 1, 1, S)
        hidden_states, packed_by = pack(hidden_states, token_mask, keep_layout=output_hidden_states)  # (N, D)

        all_hidden_states = (hidden_states,) if output_hidden_states else None
        all_self_attentions = () if output_attentions else None
        all_cross_attentions = () if output_attentions else None
        for layer in self.layers:
            hidden_states, self_weights, cross_weights = layer(
                hidden_states,
                self_mask,
                encoder_hidden_states,
                cross_mask,
                output_attentions=output_attentions,
                token_mask=packed_by,
                **{CACHE_NAME: cache},  # the name under which a checkpointed layer drops it
            )
            if output_attentions:
                all_self_attentions += (self_weights,)
                all_cross_attentions += (cross_weights,)
            if output_hidden_states:
                all_hidden_states += (hidden_states,)
        if self.layer_norm is not None:
            hidden_states = self.layer_norm(hidden_states)
        return BaseModelOutputWithPastAndCrossAttentions(
            last_hidden_state=unpack(hidden_states, token_mask),  # (B, T, D), zeros at padding
            hidden_states=all_hidden_states,
            attentions=all_self_attentions,
            cross_attentions=all_cross_attentions,
            **{CACHE_NAME: cache},
        )


class TransformerMTModel(TransformerMTPreTrainedModel):
    """The bare encoder-decoder, returning the decoder's last hidden states."""

    _tied_weights_keys = {"decoder.embed_tokens.weight": "encoder.embed_tokens.weight"}

    def __init__(self, config: TransformerMTConfig):
        super().__init__(config)
        self.encoder = TransformerMTEncoder(config)
        self.decoder = TransformerMTDecoder(config)
        self.post_init()

    def get_input_embeddings(self) -> nn.Embedding:
        return self.encoder.embed_tokens

    def set_input_embeddings(self, value: nn.Embedding) -> None:
        self.encoder.embed_tokens = value
        if self.config.tie_word_embeddings:
            self.decoder.embed_tokens = value

    @can_return_tuple
    @takes_the_old_cache_name
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        decoder_input_ids: torch.LongTensor | None = None,
        decoder_attention_mask: torch.Tensor | None = None,
        encoder_outputs: BaseModelOutput | tuple | None = None,
        past_key_values: Cache | None = None,
        inputs_embeds: torch.Tensor | None = None,
        decoder_inputs_embeds: torch.Tensor | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        cache: Cache | None = None,
        **kwargs,
    ) -> Seq2SeqModelOutput:
        cache = cache_argument(cache, past_key_values)
        if encoder_outputs is None:
            encoder_outputs = self.encoder(
                input_ids,
                attention_mask=attention_mask,
                inputs_embeds=inputs_embeds,
                output_attentions=output_attentions,
                output_hidden_states=output_hidden_states,
            )
        elif not isinstance(encoder_outputs, BaseModelOutput):
            encoder_outputs = BaseModelOutput(*encoder_outputs)
        decoder_outputs = self.decoder(
            decoder_input_ids,
            encoder_outputs.last_hidden_state,
            attention_mask=decoder_attention_mask,
            encoder_attention_mask=attention_mask,
            cache=cache,
            inputs_embeds=decoder_inputs_embeds,
            use_cache=use_cache,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )
        return Seq2SeqModelOutput(
            last_hidden_state=decoder_outputs.last_hidden_state,
            decoder_hidden_states=decoder_outputs.hidden_states,
            decoder_attentions=decoder_outputs.attentions,
            cross_attentions=decoder_outputs.cross_attentions,
            encoder_last_hidden_state=encoder_outputs.last_hidden_state,
            encoder_hidden_states=encoder_outputs.hidden_states,
            encoder_attentions=encoder_outputs.attentions,
            **{CACHE_NAME: getattr(decoder_outputs, CACHE_NAME)},
        )


class TransformerMTForConditionalGeneration(TransformerMTPreTrainedModel, GenerationMixin):
    """The encoder-decoder with its output projection to the vocabulary, a loss, and `generate()`.

    Training speed-up that leaves the loss unchanged: in training mode with `labels`, the output projection
    and the cross-entropy run only on the positions whose label is not -100, and `logits` is not returned
    (the loss is all the Trainer needs). In eval mode, and with `fixed_shapes` (under torch.compile, and off the
    CPU: selecting a number of positions that depends on the data breaks a graph, and on a GPU waits for the
    device), the full (B, T, V) logits are returned.
    """

    _tied_weights_keys = {
        "lm_head.weight": "model.encoder.embed_tokens.weight",
        "model.decoder.embed_tokens.weight": "model.encoder.embed_tokens.weight",
    }
    greedy_search_linear = None
    """How the hand-written greedy search applies a Linear layer, `linear(layer, x)` on (b, in) rows; None: the
    layer itself. An inference engine may set a faster kernel that computes the same (see `greedy_search`)."""

    def __init__(self, config: TransformerMTConfig):
        super().__init__(config)
        self.model = TransformerMTModel(config)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.post_init()

    def get_output_embeddings(self) -> nn.Linear:
        return self.lm_head

    def set_output_embeddings(self, value: nn.Linear) -> None:
        self.lm_head = value

    def prepare_decoder_input_ids_from_labels(self, labels: torch.Tensor) -> torch.Tensor:
        """Used by `DataCollatorForSeq2Seq` to build `decoder_input_ids` in the collator."""
        return shift_tokens_right(labels, self.config.pad_token_id, self.config.decoder_start_token_id)

    def generate(self, inputs: torch.Tensor | None = None, generation_config=None, **kwargs):
        """`GenerationMixin.generate`, with an output length relative to the source (as in fairseq/Marian), and
        plain greedy search run by a hand-written loop.

        When the generation config has `max_length_a` and `max_length_b` and the call sets neither
        `max_new_tokens` nor `max_length`, a translation may have up to `ceil(a * S + b)` new tokens, within
        the config's `max_new_tokens`; S is the padded source length, the batch's longest source
        (`length_rule_limit`). Long inputs are then not cut short, and a decoder stuck in a loop stops soon after
        a sensible length.

        A call that is plain greedy search (`generation_transformer_mt.greedy_search_arguments`) runs
        `greedy_search`, which returns the sequences `GenerationMixin.generate` returns with a fraction of its
        per-token work; any other call (beams, sampling, processors, extra outputs, hooks, tracing ...) runs
        `GenerationMixin.generate`.
        """
        source = kwargs.get("input_ids", inputs)
        if source is not None and not {"max_new_tokens", "max_length"} & set(kwargs):
            limit = length_rule_limit(generation_config or self.generation_config, source.shape[-1])
            if limit is not None:
                kwargs["max_new_tokens"] = limit
        greedy = greedy_search_arguments(self, inputs, generation_config, kwargs)
        if greedy is not None:
            # decoded in inference mode; a copy made outside it is an ordinary tensor, as GenerationMixin returns
            return greedy_search(self, **greedy).clone()
        return super().generate(inputs, generation_config=generation_config, **kwargs)

    @can_return_tuple
    @takes_the_old_cache_name
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        decoder_input_ids: torch.LongTensor | None = None,
        decoder_attention_mask: torch.Tensor | None = None,
        encoder_outputs: BaseModelOutput | tuple | None = None,
        past_key_values: Cache | None = None,
        inputs_embeds: torch.Tensor | None = None,
        decoder_inputs_embeds: torch.Tensor | None = None,
        labels: torch.LongTensor | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        num_items_in_batch: int | torch.Tensor | None = None,
        cache: Cache | None = None,
        **kwargs,
    ) -> Seq2SeqLMOutput:
        r"""
        labels (`(B, T)`): target ids, -100 where no loss is taken. When neither `decoder_input_ids` nor
            `decoder_inputs_embeds` is given, the decoder input is `labels` shifted right behind
            `decoder_start_token_id`.
        num_items_in_batch: number of non-ignored labels over the whole (accumulated) batch, passed by the
            `Trainer`; the summed loss is divided by it so gradient accumulation averages over tokens.
        cache / past_key_values: the decoding cache, under the name of transformers >= 5.24 or the one before; the
            output carries it under the installed release's name (`CACHE_NAME`).
        """
        cache = cache_argument(cache, past_key_values)
        if labels is not None:
            use_cache = False
            if decoder_input_ids is None and decoder_inputs_embeds is None:
                decoder_input_ids = self.prepare_decoder_input_ids_from_labels(labels)
            if self.training and decoder_attention_mask is None and not fixed_shapes(labels):
                # positions after the last real label feed no loss (the decoder is causal): skip them (without a
                # mask, with `fixed_shapes`, they are computed and feed no loss either)
                decoder_attention_mask = (labels != -100).flip(1).cummax(1).values.flip(1)
        outputs = self.model(
            input_ids,
            attention_mask=attention_mask,
            decoder_input_ids=decoder_input_ids,
            decoder_attention_mask=decoder_attention_mask,
            encoder_outputs=encoder_outputs,
            cache=cache,
            inputs_embeds=inputs_embeds,
            decoder_inputs_embeds=decoder_inputs_embeds,
            use_cache=use_cache,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )
        hidden_states = outputs.last_hidden_state  # (B, T, D)

        logits, loss = None, None
        if labels is not None and self.training and not fixed_shapes(labels):
            keep = labels != -100  # (B, T)
            loss = self._loss(self.lm_head(hidden_states[keep]), labels[keep], num_items_in_batch)  # (N, V)
        else:
            logits = self.lm_head(hidden_states)  # (B, T, V)
            if labels is not None:
                loss = self._loss(logits.flatten(0, 1), labels.flatten(), num_items_in_batch)

        return Seq2SeqLMOutput(
            loss=loss,
            logits=logits,
            decoder_hidden_states=outputs.decoder_hidden_states,
            decoder_attentions=outputs.decoder_attentions,
            cross_attentions=outputs.cross_attentions,
            encoder_last_hidden_state=outputs.encoder_last_hidden_state,
            encoder_hidden_states=outputs.encoder_hidden_states,
            encoder_attentions=outputs.encoder_attentions,
            **{CACHE_NAME: getattr(outputs, CACHE_NAME)},
        )

    def _loss(
        self, logits: torch.Tensor, labels: torch.Tensor, num_items_in_batch: int | torch.Tensor | None
    ) -> torch.Tensor:
        """Label-smoothed cross-entropy over labels != -100: mean, or sum / num_items_in_batch."""
        loss = F.cross_entropy(
            logits.float(),
            labels,
            ignore_index=-100,
            reduction="sum",
            label_smoothing=self.config.label_smoothing,
        )
        if num_items_in_batch is None:
            num_items_in_batch = (labels != -100).sum()
        return loss / num_items_in_batch

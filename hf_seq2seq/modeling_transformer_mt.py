"""The encoder-decoder Transformer of "Attention Is All You Need" (Vaswani et al., 2017), from scratch.

    source ids ─► Embedding·√d + PE ─► N × [self-attn, FFN] ───────────────► memory
    target ids ─► Embedding·√d + PE ─► N × [masked self-attn, cross-attn(memory), FFN] ─► Linear ─► logits

Every sub-layer is wrapped in a residual connection and a LayerNorm: `LayerNorm(x + Sublayer(x))` (post-LN,
the paper) or `x + Sublayer(LayerNorm(x))` (pre-LN, `config.normalize_before`). Embeddings of the encoder
input, the decoder input and the output projection are one matrix when `config.tie_word_embeddings`.

Hugging Face contracts (transformers 5.x): attention runs through `ALL_ATTENTION_FUNCTIONS`
("eager"/"sdpa"); decoding caches keys/values in an `EncoderDecoderCache` (self-attention cache grows by
one step per token, or is a static cache of fixed size whose decoding step `torch.compile` captures as one
graph; cross-attention keys/values are computed once from the encoder output);
`TransformerMTForConditionalGeneration` mixes in `GenerationMixin`; every encoder and decoder layer is a
`GradientCheckpointingLayer` (`model.activation_checkpointing_enable()`, the Trainer's
`--gradient_checkpointing`), so its inputs that need gradients are passed positionally and the KV cache is
dropped inside a checkpointed layer.

Shapes in comments: B batch, S source length, T target length (this step), P cached target length,
K key length, H heads, Dh head size, D d_model, V vocab. This file ships inside every saved checkpoint
and imports only torch, transformers and its own config.
"""

import math
import weakref
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

from .configuration_transformer_mt import TransformerMTConfig
from .generation_transformer_mt import length_rule_limit


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


def token_mask_of(attention_mask: torch.Tensor | None) -> torch.Tensor | None:
    """(B, T) bool mask of real tokens, or None when there is no padding (nothing to skip). Under torch.compile
    it is the mask whenever there is one: whether a batch has padding is data, which a graph cannot branch on."""
    if attention_mask is None or (not torch.compiler.is_compiling() and bool(attention_mask.all())):
        return None
    return attention_mask.bool()


def pack(
    hidden_states: torch.Tensor, token_mask: torch.Tensor | None
) -> tuple[torch.Tensor, torch.Tensor | None]:
    """The first layer's input and the mask the layers pack by: the (N, D) real-token rows and `token_mask`, so
    that the layers never compute on padding. Under torch.compile, (B, T, D) as it is and None: a number of rows
    that depends on the data breaks the graph, and the backward of `unpack`'s scatter cannot be traced."""
    if token_mask is None or torch.compiler.is_compiling():
        return hidden_states, None
    return hidden_states[token_mask], token_mask


def unpack(hidden_states: torch.Tensor, token_mask: torch.Tensor | None) -> torch.Tensor:
    """Real-token rows -> (B, T, F) with zeros at padding: (N, F) packed rows are put in place, (B, T, F) rows
    (not packed, under torch.compile) have their padding zeroed; identity without a mask."""
    if token_mask is None:
        return hidden_states
    if hidden_states.dim() == 3:
        return hidden_states.masked_fill(~token_mask[..., None], 0.0)
    padded = hidden_states.new_zeros(*token_mask.shape, hidden_states.shape[-1])
    padded[token_mask] = hidden_states
    return padded


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
        """The encodings of positions start..start+length-1. `start` is an int, or a 0-d tensor (a static
        cache's length, read without a device sync; the decoder checks the cache fits the table)."""
        if isinstance(start, torch.Tensor):
            return self.table[start + torch.arange(length, device=start.device)]  # (T, D)
        if start + length > self.table.shape[0]:
            raise ValueError(
                f"sequence of {start + length} positions is longer than max_position_embeddings="
                f"{self.table.shape[0]}; truncate the input (the tokenizer does with truncation=True)"
            )
        return self.table[start : start + length]  # (T, D)


# Linear layers run in inference with their weights pre-packed by oneDNN (see `decoding_linear`), per layer:
# ((data pointer, version) of the weight they were packed from, packed weight)
PACKED_WEIGHTS: "weakref.WeakKeyDictionary[nn.Linear, tuple[tuple[int, int], torch.Tensor]]" = (
    weakref.WeakKeyDictionary()
)
PACKED_FOR_ROWS = 64  # oneDNN picks the packed layout for this many rows; it is as fast for one row


def decoding_linear(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """`layer(x)` over (b, in) rows -> (b, out), for the decoding step (one row per sentence).

    For an fp32 `nn.Linear` on CPU this is oneDNN's matmul with the weight reordered once into its blocked
    layout (the one `torch.compile` gives frozen CPU weights), which reads the weights faster than BLAS reads
    the plain matrix: 1.05-1.3x at 64 rows, 2.5x for the 8,000-way output layer at one row. The weight is packed
    again when it changes (an optimizer step, loading), as its version counter tells; an in-place change
    through `weight.data` bypasses that counter. The packed copies (as large as the weights) live as long as
    the layers. Other modules (e.g. int8-quantized), devices and dtypes, and calls under autocast (e.g. a model
    that the Trainer wrapped for bf16) run as they are."""
    if type(layer) is not nn.Linear or x.device.type != "cpu" or torch.is_autocast_enabled("cpu"):
        return layer(x)
    weight = layer.weight
    if (
        x.dtype != torch.float32
        or weight.dtype != torch.float32
        or weight.is_inference()
        or not torch.backends.mkldnn.is_available()
    ):
        return layer(x)
    key = (weight.data_ptr(), weight._version)
    cached = PACKED_WEIGHTS.get(layer)
    if cached is None or cached[0] != key:
        cached = key, torch.ops.mkldnn._reorder_linear_weight(weight.detach(), PACKED_FOR_ROWS)
        PACKED_WEIGHTS[layer] = cached
    return torch.ops.mkldnn._linear_pointwise(x, cached[1], layer.bias, "none", [], "")


def project(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """`layer(x)` over (..., in) inputs; in inference mode (not while compiling) through `decoding_linear`'s
    packed weights, so that the encoder and `GenerationMixin`'s decoding (beam search) run on them too."""
    if torch.compiler.is_compiling() or not torch.is_inference_mode_enabled():
        return layer(x)
    return decoding_linear(layer, x.reshape(-1, x.shape[-1])).view(*x.shape[:-1], -1)


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
    and K, V with one (D -> 2D) matmul from the encoder output, once per generation.
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
        """(B, L, n·D) -> n tensors of (B, H, L, Dh)."""
        batch, length, _ = x.shape
        return x.view(batch, length, n, self.num_heads, self.head_dim).permute(2, 0, 3, 1, 4).unbind(0)

    def forward(
        self,
        hidden_states: torch.Tensor,
        key_value_states: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        past_key_values: EncoderDecoderCache | None = None,
        output_attentions: bool = False,
        token_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None]:
        """`hidden_states` is (B, T, D), or (N, D) real-token rows when `token_mask` (B, T) is given: the
        projections then skip padding, and only the attention itself runs on the padded (B, T) layout."""
        if self.is_cross_attention:
            (query,) = self._split_heads(
                unpack(project(self.q_proj, hidden_states), token_mask), 1
            )  # (B, H, T, Dh)
            if past_key_values is not None:  # filled at the first step by TransformerMTDecoder
                layer = past_key_values.cross_attention_cache.layers[self.layer_idx]
                key, value = layer.keys, layer.values  # (B, H, S, Dh)
            else:
                key, value = self._split_heads(project(self.kv_proj, key_value_states), 2)  # (B, H, S, Dh)
        else:
            query, key, value = self._split_heads(
                unpack(project(self.qkv_proj, hidden_states), token_mask), 3
            )  # (B, H, T, Dh)
            if past_key_values is not None:
                key, value = past_key_values.self_attention_cache.update(
                    key, value, self.layer_idx
                )  # (B, H, P+T, Dh)

        output, weights = self.attend(query, key, value, attention_mask, output_attentions)
        output = output.reshape(query.shape[0], query.shape[2], -1)  # (B, T, D)
        if token_mask is not None:
            output = output[token_mask]  # (N, D)
        return project(self.out_proj, output), weights  # (B, T, D) or (N, D), (B, H, T, K)

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
        # output_attentions needs the weights, which only the eager path materialises; and on CPU, training in
        # bf16/fp16 (autocast) runs eager too: torch's CPU flash-attention backward in reduced precision made a
        # bf16 training step of the cpu preset 1.35-1.5x slower than the eager path (fp32: the same speed)
        reduced_precision_cpu_training = (
            self.training and query.device.type == "cpu" and query.dtype != torch.float32
        )
        implementation = (
            "eager"
            if output_attentions or reduced_precision_cpu_training
            else self.config._attn_implementation
        )
        if implementation == "sdpa":
            # torch's kernel called directly: the same computation as transformers' sdpa interface, without its
            # per-call Python and the copy it makes of the output (decoding calls this 6x per token)
            output = F.scaled_dot_product_attention(
                query,
                key,
                value,
                attn_mask=attention_mask,  # the decoder always passes a causal mask when T > 1
                dropout_p=self.dropout if self.training else 0.0,
                scale=self.scaling,
            ).transpose(1, 2)  # (B, T, H, Dh)
            weights = None
        else:
            attention_interface: Callable = ALL_ATTENTION_FUNCTIONS.get_interface(
                implementation, eager_attention_forward
            )
            output, weights = attention_interface(
                self,
                query,
                key,
                value,
                attention_mask,
                scaling=self.scaling,
                dropout=self.dropout if self.training else 0.0,
            )  # (B, T, H, Dh)
        return output, weights


class TransformerMTFeedForward(nn.Module):
    """FFN(x) = W2 · act(W1 x + b1) + b2, applied at each position (section 3.3)."""

    def __init__(self, config: TransformerMTConfig, ffn_dim: int):
        super().__init__()
        self.fc1 = nn.Linear(config.d_model, ffn_dim)
        self.activation = ACT2FN[config.activation_function]
        self.activation_dropout = config.activation_dropout
        self.fc2 = nn.Linear(ffn_dim, config.d_model)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = self.activation(project(self.fc1, x))  # (B, T, F)
        x = F.dropout(x, p=self.activation_dropout, training=self.training)
        return project(self.fc2, x)  # (B, T, D)


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
        past_key_values: EncoderDecoderCache | None = None,
        output_attentions: bool = False,
        token_mask: torch.Tensor | None = None,
    ) -> tuple[torch.Tensor, torch.Tensor | None, torch.Tensor | None]:
        attn_out, self_weights = self.self_attn(
            self.self_attn_connection.sublayer_input(hidden_states),
            attention_mask=self_attn_mask,
            past_key_values=past_key_values,
            output_attentions=output_attentions,
            token_mask=token_mask,
        )
        hidden_states = self.self_attn_connection(hidden_states, attn_out)
        attn_out, cross_weights = self.encoder_attn(
            self.encoder_attn_connection.sublayer_input(hidden_states),
            key_value_states=encoder_hidden_states,
            attention_mask=encoder_attn_mask,
            past_key_values=past_key_values,
            output_attentions=output_attentions,
            token_mask=token_mask,
        )
        hidden_states = self.encoder_attn_connection(hidden_states, attn_out)
        hidden_states = self.ffn_connection(
            hidden_states, self.ffn(self.ffn_connection.sublayer_input(hidden_states))
        )
        return hidden_states, self_weights, cross_weights  # (B, T, D) or (N, D), (B, H, T, P+T), (B, H, T, S)

    def step(
        self,
        hidden_states: torch.Tensor,
        position: int,
        self_keys_values: torch.Tensor,
        cross_keys_values: torch.Tensor,
        cross_mask: torch.Tensor,
    ) -> torch.Tensor:
        """One decoding step of the newest token only (hand-written greedy search): `hidden_states` (B, D) at
        target position `position`; its key and value are written into slot `position` of `self_keys_values`
        (2, B, H, L, Dh), whose slots 0..position it attends to (no mask: all are in its past); it attends to
        the encoder output through `cross_keys_values` (2, B, H, S, Dh) and the additive `cross_mask` (B, 1, 1, S).
        """
        batch = hidden_states.shape[0]
        attention = self.self_attn
        qkv = decoding_linear(
            attention.qkv_proj, self.self_attn_connection.sublayer_input(hidden_states)
        )  # (B, 3D)
        qkv = qkv.view(batch, 3, attention.num_heads, 1, attention.head_dim)  # (B, 3, H, 1, Dh)
        self_keys_values[:, :, :, position] = qkv[:, 1:, :, 0].transpose(0, 1)  # (2, B, H, Dh)
        key, value = self_keys_values[:, :, :, : position + 1]  # (B, H, position+1, Dh)
        output, _ = attention.attend(qkv[:, 0], key, value, None)  # (B, 1, H, Dh)
        output = decoding_linear(attention.out_proj, output.reshape(batch, -1))  # (B, D)
        hidden_states = self.self_attn_connection(hidden_states, output)

        attention = self.encoder_attn
        query = decoding_linear(
            attention.q_proj, self.encoder_attn_connection.sublayer_input(hidden_states)
        )  # (B, D)
        query = query.view(batch, attention.num_heads, 1, attention.head_dim)  # (B, H, 1, Dh)
        output, _ = attention.attend(query, *cross_keys_values, cross_mask)  # (B, 1, H, Dh)
        output = decoding_linear(attention.out_proj, output.reshape(batch, -1))  # (B, D)
        hidden_states = self.encoder_attn_connection(hidden_states, output)

        # (greedy search runs in inference mode, where the FFN's Linear layers run as `decoding_linear` too)
        return self.ffn_connection(hidden_states, self.ffn(self.ffn_connection.sublayer_input(hidden_states)))


class TransformerMTPreTrainedModel(PreTrainedModel):
    config: TransformerMTConfig
    config_class = TransformerMTConfig
    base_model_prefix = "model"
    main_input_name = "input_ids"
    _supports_sdpa = True
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
        self.embed_tokens = nn.Embedding(config.vocab_size, config.d_model, config.pad_token_id)
        self.embed_scale = math.sqrt(config.d_model) if config.scale_embedding else 1.0
        self.embed_positions = TransformerMTSinusoidalPositionalEncoding(
            config.max_position_embeddings, config.d_model
        )
        self.dropout = config.dropout
        self.layers = nn.ModuleList(layers)
        self.layer_norm = nn.LayerNorm(config.d_model) if config.normalize_before else None

    def embed(self, input_ids: torch.LongTensor, start: int | torch.Tensor = 0) -> torch.Tensor:
        """(B, T) ids at positions start.. -> (B, T, D) inputs of the first layer."""
        hidden_states = self.embed_tokens(input_ids) * self.embed_scale  # (B, T, D)
        hidden_states = hidden_states + self.embed_positions(start, input_ids.shape[1]).to(
            hidden_states.dtype
        )
        return F.dropout(hidden_states, p=self.dropout, training=self.training)


class TransformerMTEncoder(TransformerMTStack):
    """N encoder layers over the embedded source."""

    def __init__(self, config: TransformerMTConfig):
        super().__init__(config, [TransformerMTEncoderLayer(config) for _ in range(config.encoder_layers)])

    @can_return_tuple
    def forward(
        self,
        input_ids: torch.LongTensor,
        attention_mask: torch.Tensor | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
    ) -> BaseModelOutput:
        hidden_states = self.embed(input_ids)  # (B, S, D)
        mask = padding_mask(attention_mask, hidden_states.dtype)  # (B, 1, 1, S)
        token_mask = token_mask_of(attention_mask)
        hidden_states, packed_by = pack(hidden_states, token_mask)  # (N, D), (B, S, D) under torch.compile

        all_hidden_states = (unpack(hidden_states, token_mask),) if output_hidden_states else None
        all_attentions = () if output_attentions else None
        for layer in self.layers:
            hidden_states, weights = layer(
                hidden_states, mask, output_attentions=bool(output_attentions), token_mask=packed_by
            )
            if output_attentions:
                all_attentions += (weights,)
            if output_hidden_states:
                all_hidden_states += (unpack(hidden_states, token_mask),)
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
        self.config = config

    def cross_attention_keys_values(self, encoder_hidden_states: torch.Tensor) -> torch.Tensor:
        """Cross-attention keys and values of every layer, from one (D -> L·2D) matmul over the encoder output:
        (B, S, D) -> (L, 2, B, H, S, Dh)."""
        projections = [layer.encoder_attn.kv_proj for layer in self.layers]
        if all(isinstance(p, nn.Linear) for p in projections):
            weight = torch.cat([p.weight for p in projections])  # (L·2D, D)
            bias = torch.cat([p.bias for p in projections])  # (L·2D,)
            keys_values = F.linear(encoder_hidden_states, weight, bias)  # (B, S, L·2D)
        else:  # modules whose weights are not one matrix to concatenate, e.g. int8-quantized Linear layers
            keys_values = torch.cat([p(encoder_hidden_states) for p in projections], dim=-1)  # (B, S, L·2D)
        batch, length, _ = encoder_hidden_states.shape
        attention = self.layers[0].encoder_attn
        keys_values = keys_values.view(
            batch, length, len(self.layers), 2, attention.num_heads, attention.head_dim
        )  # (B, S, L, 2, H, Dh)
        return keys_values.permute(2, 3, 0, 4, 1, 5)  # (L, 2, B, H, S, Dh)

    def cache_cross_attention(self, encoder_hidden_states: torch.Tensor, cache: EncoderDecoderCache) -> None:
        """The cross-attention keys and values of every layer, stored in the cache at the first decoding step."""
        for layer_idx, (key, value) in enumerate(self.cross_attention_keys_values(encoder_hidden_states)):
            cache.cross_attention_cache.update(key, value, layer_idx)  # (B, H, S, Dh)
            cache.is_updated[layer_idx] = True

    def step(
        self,
        input_ids: torch.LongTensor,
        position: int,
        self_keys_values: torch.Tensor,
        cross_keys_values: torch.Tensor,
        cross_mask: torch.Tensor,
    ) -> torch.Tensor:
        """One decoding step of the newest tokens (B,) at target position `position` -> (B, D) last hidden states;
        `self_keys_values` (L, 2, B, H, max length, Dh) and `cross_keys_values` (L, 2, B, H, S, Dh) hold each
        layer's keys and values (see `TransformerMTDecoderLayer.step`)."""
        hidden_states = self.embed(input_ids[:, None], start=position)[:, 0]  # (B, D)
        for layer, self_kv, cross_kv in zip(self.layers, self_keys_values, cross_keys_values, strict=True):
            hidden_states = layer.step(hidden_states, position, self_kv, cross_kv, cross_mask)
        return self.layer_norm(hidden_states) if self.layer_norm is not None else hidden_states

    @can_return_tuple
    def forward(
        self,
        input_ids: torch.LongTensor,
        encoder_hidden_states: torch.Tensor,
        attention_mask: torch.Tensor | None = None,
        encoder_attention_mask: torch.Tensor | None = None,
        past_key_values: Cache | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
    ) -> BaseModelOutputWithPastAndCrossAttentions:
        if use_cache and past_key_values is None:
            past_key_values = EncoderDecoderCache(
                DynamicCache(config=self.config), DynamicCache(config=self.config)
            )
        if past_key_values is not None and not past_key_values.is_updated.get(0):
            self.cache_cross_attention(encoder_hidden_states, past_key_values)
        # a static cache (compileable: fixed shapes for torch.compile) returns all its slots, written or not, and
        # its length as a tensor
        static = past_key_values is not None and past_key_values.is_compileable
        past_length = past_key_values.get_seq_length() if past_key_values is not None else 0
        length = input_ids.shape[1]
        key_length = past_key_values.get_max_length() if static else None
        if static and key_length > self.config.max_position_embeddings:
            raise ValueError(
                f"a static cache of {key_length} positions is longer than max_position_embeddings="
                f"{self.config.max_position_embeddings}; generate fewer tokens"
            )

        hidden_states = self.embed(input_ids, start=past_length)  # (B, T, D)
        token_mask = None  # a 4-D mask names no padded target tokens to skip
        if attention_mask is not None and attention_mask.dim() == 4:  # built by generate() for a static cache
            self_mask = additive_mask(attention_mask, hidden_states.dtype)  # (B, 1, T, K)
        else:
            self_mask = causal_mask(
                length, past_length, attention_mask, hidden_states.dtype, hidden_states.device, key_length
            )
            token_mask = token_mask_of(attention_mask[:, -length:] if attention_mask is not None else None)
        cross_mask = padding_mask(encoder_attention_mask, hidden_states.dtype)  # (B, 1, 1, S)
        hidden_states, packed_by = pack(hidden_states, token_mask)  # (N, D), (B, T, D) under torch.compile

        all_hidden_states = (unpack(hidden_states, token_mask),) if output_hidden_states else None
        all_self_attentions = () if output_attentions else None
        all_cross_attentions = () if output_attentions else None
        for layer in self.layers:
            hidden_states, self_weights, cross_weights = layer(
                hidden_states,
                self_mask,
                encoder_hidden_states,
                cross_mask,
                past_key_values=past_key_values,
                output_attentions=bool(output_attentions),
                token_mask=packed_by,
            )
            if output_attentions:
                all_self_attentions += (self_weights,)
                all_cross_attentions += (cross_weights,)
            if output_hidden_states:
                all_hidden_states += (unpack(hidden_states, token_mask),)
        if self.layer_norm is not None:
            hidden_states = self.layer_norm(hidden_states)
        return BaseModelOutputWithPastAndCrossAttentions(
            last_hidden_state=unpack(hidden_states, token_mask),  # (B, T, D), zeros at padding
            past_key_values=past_key_values,
            hidden_states=all_hidden_states,
            attentions=all_self_attentions,
            cross_attentions=all_cross_attentions,
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
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        decoder_input_ids: torch.LongTensor | None = None,
        decoder_attention_mask: torch.Tensor | None = None,
        encoder_outputs: BaseModelOutput | tuple | None = None,
        past_key_values: Cache | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        **kwargs,
    ) -> Seq2SeqModelOutput:
        if encoder_outputs is None:
            encoder_outputs = self.encoder(
                input_ids,
                attention_mask=attention_mask,
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
            past_key_values=past_key_values,
            use_cache=use_cache,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )
        return Seq2SeqModelOutput(
            last_hidden_state=decoder_outputs.last_hidden_state,
            past_key_values=decoder_outputs.past_key_values,
            decoder_hidden_states=decoder_outputs.hidden_states,
            decoder_attentions=decoder_outputs.attentions,
            cross_attentions=decoder_outputs.cross_attentions,
            encoder_last_hidden_state=encoder_outputs.last_hidden_state,
            encoder_hidden_states=encoder_outputs.hidden_states,
            encoder_attentions=encoder_outputs.attentions,
        )


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
    scalar loop (about 0.2 ms over 64 x 8000 logits on a 2-core CPU); here the maxima of blocks of the
    vocabulary are taken first (`amax` is vectorised), then the argmax within each row's first best block: a
    quarter of the time."""
    batch, vocab = logits.shape
    if batch < 8 or logits.device.type != "cpu":  # few rows: the scalar loop is as fast
        return logits.argmax(dim=-1)
    block = next(size for size in range(64, 0, -1) if vocab % size == 0)
    blocks = logits.contiguous().view(batch, vocab // block, block)  # (b, V/c, c)
    best = blocks.amax(dim=2).argmax(dim=1, keepdim=True)  # (b, 1): the first block holding the maximum
    within = blocks.gather(1, best[:, :, None].expand(batch, 1, block)).argmax(dim=2)  # (b, 1)
    return (best * block + within)[:, 0]


# the generation-config fields `greedy_search` implements: a call whose other fields are at their defaults is
# plain greedy search
GREEDY_SEARCH_FIELDS = {
    "max_length",
    "max_new_tokens",
    "min_length",
    "min_new_tokens",
    "max_length_a",  # the length rule, applied by `generate()`
    "max_length_b",
    "no_repeat_ngram_size",
    "decoder_start_token_id",
    "bos_token_id",
    "eos_token_id",
    "pad_token_id",
    "use_cache",  # the same sequences with or without a cache
    "_from_model_config",
    "transformers_version",
}


class TransformerMTForConditionalGeneration(TransformerMTPreTrainedModel, GenerationMixin):
    """The encoder-decoder with its output projection to the vocabulary, a loss, and `generate()`.

    Training speed-up that leaves the loss unchanged: in training mode with `labels`, the output projection
    and the cross-entropy run only on the positions whose label is not -100, and `logits` is not returned
    (the loss is all the Trainer needs). In eval mode, and under torch.compile (a graph cannot select a number
    of positions that depends on the data), the full (B, T, V) logits are returned.
    """

    _tied_weights_keys = {
        "lm_head.weight": "model.encoder.embed_tokens.weight",
        "model.decoder.embed_tokens.weight": "model.encoder.embed_tokens.weight",
    }

    def __init__(self, config: TransformerMTConfig):
        super().__init__(config)
        self.model = TransformerMTModel(config)
        self.lm_head = nn.Linear(config.d_model, config.vocab_size, bias=False)
        self.post_init()

    def get_output_embeddings(self) -> nn.Linear:
        return self.lm_head

    def set_output_embeddings(self, value: nn.Linear) -> None:
        self.lm_head = value

    def prepare_inputs_for_generation(
        self,
        input_ids: torch.LongTensor,
        next_sequence_length: int | None = None,
        past_key_values: Cache | None = None,
        attention_mask: torch.Tensor | None = None,
        **kwargs,
    ) -> dict:
        """The inputs of one decoding step of `generate()`: the new target ids, the cache, the encoder output and
        masks. `GenerationMixin`'s general version also handles embeddings, position ids, multimodal inputs and
        device moves this model does not take, and inspects `forward`'s signature at every step (for any class
        registered for the Auto classes); it still builds the inputs for a compileable (static) cache."""
        if isinstance(past_key_values, Cache) and past_key_values.is_compileable:
            return super().prepare_inputs_for_generation(
                input_ids, next_sequence_length, past_key_values, attention_mask, **kwargs
            )
        if next_sequence_length is not None:
            input_ids = input_ids[:, -next_sequence_length:]  # (B, T): what the cache has not seen
        inputs = {
            "decoder_input_ids": input_ids,
            "past_key_values": past_key_values,
            "attention_mask": attention_mask,
        }
        for key in (
            "encoder_outputs",
            "decoder_attention_mask",
            "use_cache",
            "output_attentions",
            "output_hidden_states",
        ):
            if key in kwargs:
                inputs[key] = kwargs[key]
        return inputs

    def prepare_decoder_input_ids_from_labels(self, labels: torch.Tensor) -> torch.Tensor:
        """Used by `DataCollatorForSeq2Seq` to build `decoder_input_ids` in the collator."""
        return shift_tokens_right(labels, self.config.pad_token_id, self.config.decoder_start_token_id)

    def generate(self, inputs: torch.Tensor | None = None, generation_config=None, **kwargs):
        """`GenerationMixin.generate`, with an output length relative to the source (as in fairseq/Marian), and
        plain greedy search run by a hand-written loop.

        When the generation config has `max_length_a` and `max_length_b` and the call sets neither
        `max_new_tokens` nor `max_length`, a translation may have up to `ceil(a * S + b)` new tokens, within
        the config's `max_new_tokens`; S is the padded source length, the batch's longest source. Long inputs
        are then not cut short, and a decoder stuck in a loop stops soon after a sensible length.

        A call that is plain greedy search (see `_greedy_search_arguments`) runs `greedy_search`, which returns
        the same sequences as `GenerationMixin.generate` with a fraction of its per-token work; any other call
        (beams, sampling, processors, extra outputs, ...) runs `GenerationMixin.generate`.
        """
        source = kwargs.get("input_ids", inputs)
        if source is not None and not {"max_new_tokens", "max_length"} & set(kwargs):
            limit = length_rule_limit(generation_config or self.generation_config, source.shape[-1])
            if limit is not None:
                kwargs["max_new_tokens"] = limit
        greedy = self._greedy_search_arguments(inputs, generation_config, kwargs)
        if greedy is not None:
            # decoded in inference mode; a copy made outside it is an ordinary tensor, as GenerationMixin returns
            return self.greedy_search(**greedy).clone()
        return super().generate(inputs, generation_config=generation_config, **kwargs)

    def _greedy_search_arguments(self, inputs: torch.Tensor | None, generation_config, kwargs: dict):
        """The arguments of `greedy_search` for a `generate()` call that is plain greedy search, else None.

        Plain: in eval mode, `input_ids` and `attention_mask` as the only model inputs, and a generation config
        (resolved as `GenerationMixin.generate` does) at its defaults except in `GREEDY_SEARCH_FIELDS`.
        """
        if self.training or (inputs is not None and "input_ids" in kwargs):
            return None
        default_length = {
            name: kwargs.get(name) is None
            and (generation_config is None or getattr(generation_config, name) is None)
            and getattr(self.generation_config, name) is None
            for name in ("max_length", "min_length")
        }
        config, model_kwargs = self._prepare_generation_config(generation_config, **kwargs)
        input_ids = model_kwargs.pop("input_ids", inputs)
        attention_mask = model_kwargs.pop("attention_mask", None)
        defaults = config._get_default_generation_params()
        if (
            input_ids is None
            or attention_mask is None
            or model_kwargs
            or any(
                value != defaults[name] if name in defaults else value not in (None, False)
                for name, value in config.to_dict().items()
                if name not in GREEDY_SEARCH_FIELDS
            )
        ):
            return None
        config = self._prepare_generated_length(
            config,
            has_default_max_length=default_length["max_length"],
            has_default_min_length=default_length["min_length"],
            model_input_name="input_ids",
            input_ids_length=1,  # the decoder starts from one token
            inputs_tensor=input_ids,
        )
        start = config.decoder_start_token_id
        start = config.bos_token_id if start is None else start
        eos = config.eos_token_id
        eos = [] if eos is None else [eos] if isinstance(eos, int) else list(eos)
        pad = config.pad_token_id if config.pad_token_id is not None else (eos or [None])[0]
        max_new_tokens, min_new_tokens = config.max_length - 1, (config.min_length or 0) - 1
        if start is None or not 1 <= max_new_tokens <= self.config.max_position_embeddings:
            return None  # GenerationMixin raises the error
        if min_new_tokens > max_new_tokens or (eos and pad is None):
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
        self,
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

        The encoder runs once, the cross-attention keys and values of every layer are computed once, and each
        step runs the decoder on the newest token only, writing its self-attention keys and values into slot t
        of buffers allocated for the whole output. Rows that have ended are dropped from the batch once they are
        a quarter of it, so that later steps compute only on the rows still decoding. The Linear layers run on
        oneDNN-packed weights (`decoding_linear`, through `project` in the encoder and the FFN) and the token
        is taken by `first_argmax`.
        """
        encoder_output = self.model.encoder(input_ids, attention_mask).last_hidden_state  # (B, S, D)
        decoder = self.model.decoder
        cross_keys_values = decoder.cross_attention_keys_values(encoder_output)  # (L, 2, B, H, S, Dh)
        cross_mask = padding_mask(attention_mask, encoder_output.dtype)  # (B, 1, 1, S)
        layers, _, batch, heads, _, head_dim = cross_keys_values.shape
        self_keys_values = encoder_output.new_empty(layers, 2, batch, heads, max_new_tokens, head_dim)

        sequences = input_ids.new_full((batch, 1 + max_new_tokens), pad_token_id)  # (B, 1 + N)
        sequences[:, 0] = decoder_start_token_id
        eos = torch.tensor(eos_token_ids, dtype=torch.long, device=input_ids.device)
        rows = torch.arange(batch, device=input_ids.device)  # the rows of `sequences` in the batch
        ended = torch.zeros(batch, dtype=torch.bool, device=input_ids.device)  # (b,) of the rows in the batch
        tokens = sequences[:, 0]  # (b,)
        for position in range(max_new_tokens):
            hidden_states = decoder.step(tokens, position, self_keys_values, cross_keys_values, cross_mask)
            logits = decoding_linear(self.lm_head, hidden_states)  # (b, V)
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

    @can_return_tuple
    def forward(
        self,
        input_ids: torch.LongTensor | None = None,
        attention_mask: torch.Tensor | None = None,
        decoder_input_ids: torch.LongTensor | None = None,
        decoder_attention_mask: torch.Tensor | None = None,
        encoder_outputs: BaseModelOutput | tuple | None = None,
        past_key_values: Cache | None = None,
        labels: torch.LongTensor | None = None,
        use_cache: bool | None = None,
        output_attentions: bool | None = None,
        output_hidden_states: bool | None = None,
        num_items_in_batch: int | torch.Tensor | None = None,
        **kwargs,
    ) -> Seq2SeqLMOutput:
        r"""
        labels (`(B, T)`): target ids, -100 where no loss is taken. When `decoder_input_ids` is not given it is
            `labels` shifted right behind `decoder_start_token_id`.
        num_items_in_batch: number of non-ignored labels over the whole (accumulated) batch, passed by the
            `Trainer`; the summed loss is divided by it so gradient accumulation averages over tokens.
        """
        if labels is not None:
            use_cache = False
            if decoder_input_ids is None:
                decoder_input_ids = self.prepare_decoder_input_ids_from_labels(labels)
            if self.training and decoder_attention_mask is None:
                # positions after the last real label feed no loss (the decoder is causal): skip them
                decoder_attention_mask = (labels != -100).flip(1).cummax(1).values.flip(1)
        outputs = self.model(
            input_ids,
            attention_mask=attention_mask,
            decoder_input_ids=decoder_input_ids,
            decoder_attention_mask=decoder_attention_mask,
            encoder_outputs=encoder_outputs,
            past_key_values=past_key_values,
            use_cache=use_cache,
            output_attentions=output_attentions,
            output_hidden_states=output_hidden_states,
        )
        hidden_states = outputs.last_hidden_state  # (B, T, D)

        logits, loss = None, None
        if labels is not None and self.training and not torch.compiler.is_compiling():
            keep = labels != -100  # (B, T)
            loss = self._loss(self.lm_head(hidden_states[keep]), labels[keep], num_items_in_batch)  # (N, V)
        else:
            logits = project(self.lm_head, hidden_states)  # (B, T, V)
            if labels is not None:
                loss = self._loss(logits.flatten(0, 1), labels.flatten(), num_items_in_batch)

        return Seq2SeqLMOutput(
            loss=loss,
            logits=logits,
            past_key_values=outputs.past_key_values,
            decoder_hidden_states=outputs.decoder_hidden_states,
            decoder_attentions=outputs.decoder_attentions,
            cross_attentions=outputs.cross_attentions,
            encoder_last_hidden_state=outputs.encoder_last_hidden_state,
            encoder_hidden_states=outputs.encoder_hidden_states,
            encoder_attentions=outputs.encoder_attentions,
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


__all__ = [
    "TransformerMTForConditionalGeneration",
    "TransformerMTModel",
    "TransformerMTPreTrainedModel",
]

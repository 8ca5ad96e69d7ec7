"""Configuration of the from-scratch "Attention Is All You Need" translation Transformer.

Attribute names follow Marian/BART (`d_model`, `encoder_layers`, `encoder_attention_heads`,
`encoder_ffn_dim`, ...) so sizes map 1:1 onto `MarianConfig`. This file ships inside every saved
checkpoint: it imports only `transformers`.
"""

from transformers import PretrainedConfig

ACTIVATIONS = ("relu", "gelu", "gelu_new", "silu", "swish", "tanh")


class TransformerMTConfig(PretrainedConfig):
    r"""
    Configuration of a [`TransformerMTForConditionalGeneration`]: the encoder-decoder of Vaswani et al. (2017).

    The defaults are the paper's *base* model (d_model 512, 6+6 layers, 8 heads, FFN 2048, dropout 0.1,
    post-LN, scaled and tied embeddings, sinusoidal positions).

    Args:
        vocab_size: size of the joint source/target vocabulary (one embedding matrix is shared).
        d_model: width of every sub-layer output.
        encoder_layers / decoder_layers: number of layers in each stack.
        encoder_attention_heads / decoder_attention_heads: heads per attention sub-layer.
        encoder_ffn_dim / decoder_ffn_dim: inner width of the position-wise feed-forward network.
        dropout: dropout on embeddings + positions and on every sub-layer output before the residual add.
        attention_dropout: dropout on attention probabilities.
        activation_dropout: dropout after the FFN activation.
        activation_function: the FFN non-linearity (one of `ACTIVATIONS`).
        max_position_embeddings: longest sequence (in tokens) the sinusoidal table covers.
        max_position_shift: in training only, each sequence's positions start at a random offset in
            0..max_position_shift (within the table) instead of 0 (SHAPE, Kiyono et al. 2021), so that the model
            learns from positions relative to each other rather than from the absolute positions of the training
            lengths; translation starts at 0. 0: the paper's positions.
        scale_embedding: multiply token embeddings by sqrt(d_model) (section 3.4 of the paper).
        normalize_before: `False` is the paper's post-LN (`LayerNorm(x + Sublayer(x))`); `True` is pre-LN
            (`x + Sublayer(LayerNorm(x))`, with a final LayerNorm after each stack), which trains more stably
            at depth and without warmup.
        label_smoothing: label smoothing of the training loss (section 5.4 of the paper uses 0.1).
        tie_word_embeddings: share the output projection with the input embedding.
        pad_token_id / bos_token_id / eos_token_id / decoder_start_token_id: special token ids, copied from
            the tokenizer when a model is created; the defaults are the package tokenizer's (`<pad>` = 0,
            `</s>` = 1, no bos). The decoder starts from `decoder_start_token_id` (the pad id unless set, as
            in Marian).
    """

    model_type = "transformer_mt"
    keys_to_ignore_at_inference = [
        "past_key_values",
        "cache",
    ]  # the decoding cache: its name before and since transformers 5.24
    attribute_map = {
        "hidden_size": "d_model",
        "num_attention_heads": "encoder_attention_heads",
        "num_hidden_layers": "decoder_layers",
    }

    def __init__(
        self,
        vocab_size: int = 8000,
        d_model: int = 512,
        encoder_layers: int = 6,
        decoder_layers: int = 6,
        encoder_attention_heads: int = 8,
        decoder_attention_heads: int = 8,
        encoder_ffn_dim: int = 2048,
        decoder_ffn_dim: int = 2048,
        dropout: float = 0.1,
        attention_dropout: float = 0.0,
        activation_dropout: float = 0.0,
        activation_function: str = "relu",
        max_position_embeddings: int = 256,
        max_position_shift: int = 0,
        scale_embedding: bool = True,
        normalize_before: bool = False,
        label_smoothing: float = 0.0,
        use_cache: bool = True,
        tie_word_embeddings: bool = True,
        pad_token_id: int = 0,
        bos_token_id: int | None = None,
        eos_token_id: int = 1,
        decoder_start_token_id: int | None = None,
        is_encoder_decoder: bool = True,
        **kwargs,
    ):
        self.vocab_size = vocab_size
        self.d_model = d_model
        self.encoder_layers = encoder_layers
        self.decoder_layers = decoder_layers
        self.encoder_attention_heads = encoder_attention_heads
        self.decoder_attention_heads = decoder_attention_heads
        self.encoder_ffn_dim = encoder_ffn_dim
        self.decoder_ffn_dim = decoder_ffn_dim
        self.dropout = dropout
        self.attention_dropout = attention_dropout
        self.activation_dropout = activation_dropout
        self.activation_function = activation_function
        self.max_position_embeddings = max_position_embeddings
        self.max_position_shift = max_position_shift
        self.scale_embedding = scale_embedding
        self.normalize_before = normalize_before
        self.label_smoothing = label_smoothing
        self.use_cache = use_cache
        self._validate_sizes()
        super().__init__(
            pad_token_id=pad_token_id,
            bos_token_id=bos_token_id,
            eos_token_id=eos_token_id,
            decoder_start_token_id=pad_token_id if decoder_start_token_id is None else decoder_start_token_id,
            is_encoder_decoder=is_encoder_decoder,
            tie_word_embeddings=tie_word_embeddings,
            **kwargs,
        )

    def _validate_sizes(self) -> None:
        """Raise `ValueError` naming the field and the value for any impossible setting."""
        for name in (
            "vocab_size",
            "d_model",
            "encoder_layers",
            "decoder_layers",
            "encoder_attention_heads",
            "decoder_attention_heads",
            "encoder_ffn_dim",
            "decoder_ffn_dim",
            "max_position_embeddings",
        ):
            value = getattr(self, name)
            if not isinstance(value, int) or isinstance(value, bool) or value <= 0:
                raise ValueError(f"`{name}` must be a positive integer, got {value!r}")
        shift = self.max_position_shift
        if (
            not isinstance(shift, int)
            or isinstance(shift, bool)
            or not 0 <= shift < self.max_position_embeddings
        ):
            raise ValueError(
                f"`max_position_shift` must be an integer in [0, max_position_embeddings), got {shift!r}"
            )
        for name in ("encoder_attention_heads", "decoder_attention_heads"):
            heads = getattr(self, name)
            if self.d_model % heads:
                raise ValueError(
                    f"`d_model` ({self.d_model}) must be divisible by `{name}` ({heads}): "
                    f"each head gets d_model / heads dimensions"
                )
        for name in ("dropout", "attention_dropout", "activation_dropout", "label_smoothing"):
            value = getattr(self, name)
            if not isinstance(value, int | float) or not 0.0 <= value < 1.0:
                raise ValueError(f"`{name}` must be in [0, 1), got {value!r}")
        if self.activation_function not in ACTIVATIONS:
            raise ValueError(
                f"`activation_function` must be one of {', '.join(ACTIVATIONS)}; got {self.activation_function!r}"
            )

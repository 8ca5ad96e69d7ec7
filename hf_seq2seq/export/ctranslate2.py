"""Export a saved model to CTranslate2 (float32, bfloat16 or int8): `hf-seq2seq export ctranslate2`.

Conversion uses the `ctranslate2` package's own machinery: :class:`TransformerMTConverter` is a
`ctranslate2.converters.Converter` whose `_load()` returns a filled `ctranslate2.specs.TransformerSpec`; the
converter validates it, quantizes it and writes `model.bin`, `config.json` and `shared_vocabulary.json`. The
model maps onto the spec without reshaping anything:

* self-attention's fused `qkv_proj` rows are already in CTranslate2's (Q, K, V) order, and cross-attention's
  `q_proj` and `kv_proj` are its two input linears;
* positions are the model's own sinusoidal table (interleaved sin/cos, not CTranslate2's built-in
  concatenated one), given as the spec's position encodings;
* `pre_norm` is `normalize_before`; one shared vocabulary (the tokenizer's, in id order); tied embeddings
  and output projection are stored once by the converter;
* the decoder starts from `decoder_start_token_id` (`<pad>`), `</s>` ends a translation.

Beside CTranslate2's files the export holds the tokenizer files, `generation_config.json` (the saved
decoding: beams, length rule, limits) and :data:`EXPORT_FILE` (`hf_seq2seq.export.metadata`: model type,
longest source, quantization, the attention it returns: :data:`ALIGNMENT`), so the export folder alone is
enough to translate (`hf_seq2seq.engines.ctranslate2_engine.CTranslate2Translator`).
"""

import os
from pathlib import Path

from transformers import AutoTokenizer, PreTrainedTokenizerBase

try:
    import ctranslate2
    from ctranslate2.converters import Converter
    from ctranslate2.specs import common_spec, transformer_spec
except ImportError as error:  # an optional extra
    raise ImportError(
        'exporting to or translating with CTranslate2 needs the ctranslate2 package: pip install "hf_seq2seq[deploy]"'
    ) from error
from hf_seq2seq.export.folder import QUANTIZATIONS, check_output_folder
from hf_seq2seq.export.metadata import ExportMetadata, export_languages
from hf_seq2seq.models.folder import TOKENIZER_FILES, ExportError, check_exportable

# transformers' ACT2FN names (`hf_seq2seq.models.transformer_mt.configuration_transformer_mt.ACTIVATIONS`) ->
# CTranslate2's activations
ACTIVATIONS = {
    "relu": common_spec.Activation.RELU,
    "gelu": common_spec.Activation.GELU,
    "gelu_new": common_spec.Activation.GELUTanh,
    "silu": common_spec.Activation.SWISH,
    "swish": common_spec.Activation.SWISH,
    "tanh": common_spec.Activation.Tanh,
}

ALIGNMENT = {"layer": -1, "heads": "all"}
"""The cross-attention the export returns for word alignments (CTranslate2 reads one layer, its first heads
averaged): the last decoder layer, all its heads (docs/formats.md has its alignment error beside the torch
engine's rule). Recorded in :data:`EXPORT_FILE`; an export without it predates alignments on CTranslate2."""


def vocabulary(tokenizer: PreTrainedTokenizerBase, vocab_size: int) -> list[str]:
    """The tokenizer's tokens in id order, with placeholders for ids the model has and the tokenizer lacks."""
    tokens = [None] * vocab_size
    for token, index in tokenizer.get_vocab().items():
        if index >= vocab_size:
            raise ExportError(f"the tokenizer's token {token!r} has id {index}, past the model's vocab_size")
        tokens[index] = token
    return [f"<unused_{index}>" if token is None else token for index, token in enumerate(tokens)]


class TransformerMTConverter(Converter):
    """CTranslate2's converter for a saved `transformer_mt` folder: `convert(out_dir, quantization=...)`."""

    def __init__(self, model_dir: str | os.PathLike[str]):
        self.model_dir = check_exportable(model_dir, "ct2-transformers-converter")

    def _load(self) -> transformer_spec.TransformerSpec:
        from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import (
            TransformerMTForConditionalGeneration,
        )

        model = TransformerMTForConditionalGeneration.from_pretrained(self.model_dir, dtype="float32").eval()
        tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        config = model.config
        # what the export's metadata records
        self.model_type, self.max_source_length = config.model_type, config.max_position_embeddings
        self.num_parameters = model.num_parameters()
        layer_norms = {module.eps for module in model.modules() if type(module).__name__ == "LayerNorm"}
        if len(layer_norms) != 1:
            raise ExportError(
                f"CTranslate2 takes one layer norm epsilon; the model has {sorted(layer_norms)}"
            )

        spec = transformer_spec.TransformerSpec(
            transformer_spec.TransformerEncoderSpec(
                config.encoder_layers,
                config.encoder_attention_heads,
                pre_norm=config.normalize_before,
                activation=ACTIVATIONS[config.activation_function],
            ),
            transformer_spec.TransformerDecoderSpec(
                config.decoder_layers,
                config.decoder_attention_heads,
                pre_norm=config.normalize_before,
                activation=ACTIVATIONS[config.activation_function],
                # the attention `return_attention` gives (word alignments): the last layer's, all heads averaged
                alignment_layer=ALIGNMENT["layer"],
                alignment_heads=config.decoder_attention_heads,
            ),
        )
        encoder, decoder = model.model.encoder, model.model.decoder
        set_stack(spec.encoder, spec.encoder.embeddings[0], encoder)
        set_stack(spec.decoder, spec.decoder.embeddings, decoder)
        for layer_spec, layer in zip(spec.encoder.layer, encoder.layers, strict=True):
            set_linears(layer_spec.self_attention.linear, layer.self_attn.qkv_proj, layer.self_attn.out_proj)
            set_layer_norm(layer_spec.self_attention.layer_norm, layer.self_attn_connection.layer_norm)
            set_ffn(layer_spec.ffn, layer)
        for layer_spec, layer in zip(spec.decoder.layer, decoder.layers, strict=True):
            set_linears(layer_spec.self_attention.linear, layer.self_attn.qkv_proj, layer.self_attn.out_proj)
            set_layer_norm(layer_spec.self_attention.layer_norm, layer.self_attn_connection.layer_norm)
            cross = layer.encoder_attn
            set_linears(layer_spec.attention.linear, cross.q_proj, cross.kv_proj, cross.out_proj)
            set_layer_norm(layer_spec.attention.layer_norm, layer.encoder_attn_connection.layer_norm)
            set_ffn(layer_spec.ffn, layer)
        spec.decoder.projection.weight = model.lm_head.weight

        tokens = vocabulary(tokenizer, config.vocab_size)
        spec.register_source_vocabulary(tokens)
        spec.register_target_vocabulary(tokens)
        spec.config.unk_token = tokenizer.unk_token
        spec.config.eos_token = tokens[config.eos_token_id]
        spec.config.decoder_start_token = tokens[config.decoder_start_token_id]
        spec.config.layer_norm_epsilon = layer_norms.pop()
        for name in (*TOKENIZER_FILES, "generation_config.json"):
            spec.register_file(str(self.model_dir / name))
        return spec


def set_stack(spec, embeddings_spec, stack) -> None:
    """Embeddings, their scale, the sinusoidal table and (pre-LN) the final LayerNorm of a stack."""
    embeddings_spec.weight = stack.embed_tokens.weight
    spec.scale_embeddings = stack.embed_scale
    spec.position_encodings.encodings = stack.embed_positions.table  # (L, D), as the model adds it
    if stack.layer_norm is not None:
        set_layer_norm(spec.layer_norm, stack.layer_norm)


def set_linears(specs, *linears) -> None:
    for linear_spec, linear in zip(specs, linears, strict=True):
        linear_spec.weight = linear.weight
        linear_spec.bias = linear.bias


def set_layer_norm(spec, layer_norm) -> None:
    spec.gamma = layer_norm.weight
    spec.beta = layer_norm.bias


def set_ffn(spec, layer) -> None:
    set_linears([spec.linear_0, spec.linear_1], layer.ffn.fc1, layer.ffn.fc2)
    set_layer_norm(spec.layer_norm, layer.ffn_connection.layer_norm)


def export_ctranslate2(
    model_dir: str | os.PathLike[str],
    out_dir: str | os.PathLike[str],
    quantization: str = "int8",
    force: bool = False,
) -> Path:
    """Convert the saved `transformer_mt` folder `model_dir` into a CTranslate2 folder `out_dir`.

    `quantization` is the stored weight type (:data:`QUANTIZATIONS`). `out_dir` must not exist unless `force`
    (it is then replaced). Raises `ExportError` for a folder of another model type. Returns `out_dir`.
    """
    if quantization not in QUANTIZATIONS:
        raise ExportError(f"quantization must be one of {', '.join(QUANTIZATIONS)}; got {quantization!r}")
    out_dir = Path(out_dir)
    converter = TransformerMTConverter(model_dir)
    check_output_folder(converter.model_dir, out_dir, force)
    converter.convert(str(out_dir), quantization=quantization, force=force)
    ExportMetadata(
        format="ctranslate2",
        source_model_type=converter.model_type,
        max_source_length=converter.max_source_length,
        parameters=converter.num_parameters,
        quantization=quantization,
        format_version=ctranslate2.__version__,
        alignment=ALIGNMENT,
        **export_languages(converter.model_dir),
    ).write(out_dir)
    return out_dir

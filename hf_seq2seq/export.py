"""Export a saved model to CTranslate2 (float32, bfloat16 or int8) and translate with the export.

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
decoding: beams, length rule, limits) and :data:`EXPORT_FILE` (model type, longest source, quantization),
so the export folder alone is enough to translate (:class:`CTranslate2Translator`).
"""

import json
import os
from collections.abc import Sequence
from pathlib import Path

from transformers import AutoTokenizer, GenerationConfig, PreTrainedTokenizerBase

try:
    import ctranslate2
    from ctranslate2.converters import Converter
    from ctranslate2.specs import common_spec, transformer_spec
except ImportError as error:  # an optional extra
    raise ImportError(
        'exporting to or translating with CTranslate2 needs the ctranslate2 package: pip install "hf_seq2seq[deploy]"'
    ) from error

from .decoding import Decoding, translate_in_batches
from .folder import TOKENIZER_FILES, ExportError, check_exportable
from .generation_transformer_mt import length_rule_limit
from .translator import Translator

EXPORT_FILE = "hf_seq2seq_export.json"
QUANTIZATIONS = ("int8", "int8_float32", "bfloat16", "float32")
# transformers' ACT2FN names (configuration_transformer_mt.ACTIVATIONS) -> CTranslate2's activations
ACTIVATIONS = {
    "relu": common_spec.Activation.RELU,
    "gelu": common_spec.Activation.GELU,
    "gelu_new": common_spec.Activation.GELUTanh,
    "silu": common_spec.Activation.SWISH,
    "swish": common_spec.Activation.SWISH,
    "tanh": common_spec.Activation.Tanh,
}


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
        from .modeling_transformer_mt import TransformerMTForConditionalGeneration

        model = TransformerMTForConditionalGeneration.from_pretrained(self.model_dir, dtype="float32").eval()
        tokenizer = AutoTokenizer.from_pretrained(self.model_dir)
        self.num_parameters = model.num_parameters()
        config = model.config
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
    if out_dir.resolve() in (converter.model_dir.resolve(), *converter.model_dir.resolve().parents):
        raise ExportError(f"the export folder {out_dir} must not be the model folder or contain it")
    if out_dir.exists() and not force:
        raise ExportError(f"{out_dir} exists; choose another folder or replace it (--force, force=True)")
    converter.convert(str(out_dir), quantization=quantization, force=force)
    config = json.loads((converter.model_dir / "config.json").read_text(encoding="utf-8"))
    metadata = {
        "model_type": config["model_type"],
        "max_source_length": config["max_position_embeddings"],
        "parameters": converter.num_parameters,
        "quantization": quantization,
        "ctranslate2_version": ctranslate2.__version__,
    }
    (out_dir / EXPORT_FILE).write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
    return out_dir


# what `generate()` uses for a setting that the saved generation config leaves unset (None)
GENERATE_DEFAULTS = {
    "num_beams": 1,
    "length_penalty": 1.0,
    "min_length": 0,
    "max_length": 20,
    "repetition_penalty": 1.0,
    "no_repeat_ngram_size": 0,
}


def saved(generation_config: GenerationConfig, name: str):
    """A setting of the saved generation config, or `generate()`'s default where it is unset."""
    value = getattr(generation_config, name, None)
    return GENERATE_DEFAULTS[name] if value is None else value


def new_token_limit(generation_config: GenerationConfig, source_length: int, decoding: Decoding) -> int:
    """The most new tokens of a batch whose longest source has `source_length` tokens, as the model's
    `generate()` allows: the fixed `decoding.max_new_tokens`, else the length rule (`length_rule_limit`), else
    the config's `max_new_tokens` (or `max_length` less the decoder start token)."""
    if decoding.max_new_tokens is not None:
        return decoding.max_new_tokens
    limit = length_rule_limit(generation_config, source_length)
    if limit is not None:
        return limit
    config = generation_config
    return config.max_new_tokens if config.max_new_tokens is not None else saved(config, "max_length") - 1


class CTranslate2Translator(Translator):
    """The CTranslate2 engine (a `hf_seq2seq.translator.Translator`): an export of :func:`export_ctranslate2`,
    loaded: a `ctranslate2.Translator` (`.translator`), the tokenizer, the saved decoding, and the export's
    facts (`.metadata`: model type, longest source, parameters, quantization). Use it through
    `hf_seq2seq.inference.translate` / `evaluate_translations`, or call :meth:`translate_sentences`.

    Its `precision` is the export's quantization: `precision` None keeps it, any other value must name it
    (a ValueError otherwise: another weight type is another export). `compute_type` "default" keeps the
    exported weight type; `intra_threads` 0 lets CTranslate2 choose.
    """

    engine = "ctranslate2"

    def __init__(
        self,
        export_dir: str | os.PathLike[str],
        device: str = "cpu",
        compute_type: str = "default",
        intra_threads: int = 0,
        inter_threads: int = 1,
        precision: str | None = None,
    ):
        export_dir = Path(export_dir)
        metadata_file = export_dir / EXPORT_FILE
        if not metadata_file.is_file():
            raise ExportError(
                f"{export_dir} has no {EXPORT_FILE}: it is not an export of `hf-seq2seq export ctranslate2`"
            )
        self.export_dir = export_dir
        self.metadata = json.loads(metadata_file.read_text(encoding="utf-8"))
        self.precision = self.metadata["quantization"]
        if precision is not None and precision != self.precision:
            raise ValueError(
                f"{export_dir} is a CTranslate2 export with {self.precision} weights, which it keeps; for "
                f"precision {precision!r} export again (`hf-seq2seq export ctranslate2 --quantization ...`) or "
                "use the torch engine"
            )
        self.parameters = self.metadata["parameters"]
        self.translator = ctranslate2.Translator(
            str(export_dir),
            device=device,
            compute_type=compute_type,
            intra_threads=intra_threads,
            inter_threads=inter_threads,
        )
        self.tokenizer = AutoTokenizer.from_pretrained(export_dir)
        self.generation_config = GenerationConfig.from_pretrained(export_dir)

    @property
    def max_source_length(self) -> int:
        return self.metadata["max_source_length"]

    def translate_sentences(
        self,
        sentences: Sequence[str],
        batch_size: int = 64,
        decoding: Decoding | None = None,
        max_source_length: int | None = None,
        progress: bool = False,
    ) -> list[str]:
        """Translations of `sentences` (`Translator.translate_sentences`): the same batches, blank lines,
        truncation and length limit as the torch engine, the saved decoding unless `decoding` says."""
        decoding = decoding or Decoding()
        if decoding.compile:
            raise ValueError("compiled decoding (--compile) is for the torch engine; CTranslate2 has its own")
        config = self.generation_config
        num_beams = decoding.num_beams or saved(config, "num_beams")
        length_penalty = (
            saved(config, "length_penalty") if decoding.length_penalty is None else decoding.length_penalty
        )
        no_repeat_ngram_size = (
            saved(config, "no_repeat_ngram_size")
            if decoding.no_repeat_ngram_size is None
            else decoding.no_repeat_ngram_size
        )
        min_new_tokens = config.min_new_tokens or max(saved(config, "min_length") - 1, 0)
        max_source_length = max_source_length or self.max_source_length

        def translate_batch(batch: list[str]) -> list[str]:
            ids = self.tokenizer(batch, max_length=max_source_length, truncation=True)["input_ids"]
            limit = new_token_limit(config, max(map(len, ids)), decoding)  # S: the padded source length
            results = self.translator.translate_batch(
                [self.tokenizer.convert_ids_to_tokens(row) for row in ids],
                beam_size=num_beams,
                length_penalty=length_penalty,
                max_decoding_length=limit,
                min_decoding_length=min(min_new_tokens, limit),  # the limit wins, as in generate()
                repetition_penalty=saved(config, "repetition_penalty"),
                no_repeat_ngram_size=no_repeat_ngram_size,
                max_input_length=0,  # truncated above, as the PyTorch path does
            )
            outputs = [self.tokenizer.convert_tokens_to_ids(result.hypotheses[0]) for result in results]
            return [text.strip() for text in self.tokenizer.batch_decode(outputs, skip_special_tokens=True)]

        return translate_in_batches(
            self.tokenizer, sentences, batch_size, max_source_length, translate_batch, progress
        )

    def describe(self) -> dict:
        return {"quantization": self.precision}

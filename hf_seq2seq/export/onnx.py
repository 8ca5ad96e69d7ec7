"""Export a saved model to ONNX (fp32, and int8 weights with `quantize="int8"`): `hf-seq2seq export onnx`.

The export has the file layout and input/output names of Optimum's seq2seq exports, which transformers.js and
Optimum's `ORTModelForSeq2SeqLM` load:

* `onnx/encoder_model.onnx`: `input_ids`, `attention_mask` -> `last_hidden_state`;
* `onnx/decoder_model_merged.onnx`: `encoder_attention_mask`, `input_ids`, `encoder_hidden_states`,
  `past_key_values.{i}.decoder.key/value`, `past_key_values.{i}.encoder.key/value`, `use_cache_branch` ->
  `logits`, `present.{i}.decoder.key/value`, `present.{i}.encoder.key/value`. It is two decoders in one file
  under an ONNX `If` on `use_cache_branch`: the first step (false) computes the cross-attention keys and
  values from `encoder_hidden_states` and ignores the (empty) past; later steps (true) take them from the
  past and return them unchanged, as Optimum's merged decoders do. The weights are stored once.
* `onnx/cross_attention_model.onnx`: `encoder_attention_mask`, `input_ids` (the whole target after the decoder's
  start token), `encoder_hidden_states` -> `cross_attentions` (B, layers, T, S), heads averaged: the attention
  word alignments read (`hf_seq2seq.engines.onnxruntime_engine.OnnxTranslator.align`), this package's own
  graph, which the runtimes do not load;
* `onnx/*_quantized.onnx` with `quantize="int8"`: the same graphs with int8 weights (ONNX Runtime's dynamic
  quantization, subgraphs included), the name transformers.js loads for `dtype: "q8"`.

The graphs are traced by `torch.onnx.export` (the dynamo exporter) through the model's public `forward`
(`trace_graphs`): the encoder, and the whole model with `encoder_outputs` and an `EncoderDecoderCache` (empty
for the first step, built from the past tensors for later steps). Optimum's exporter would do this with a
custom ONNX config, but Optimum's ONNX package requires transformers < 4.58 and cannot be installed beside
transformers 5.

Beside the graphs: the tokenizer files, `generation_config.json` (the saved decoding, length rule included)
and a `config.json` that declares `model_type: "marian"` with this model's numbers under Marian's names
(which this model's config already uses): the runtimes read only the layer, head and size numbers and the
special token ids from it and run the graphs as they are, and Marian is a type both know.
`hf_seq2seq_export.json` (`hf_seq2seq.export.metadata`) records what the export holds; the layout and its
check are `hf_seq2seq.export.folder`'s.

`hf_seq2seq.engines.onnxruntime_engine.OnnxTranslator` translates with the export on ONNX Runtime.
"""

from __future__ import annotations

import contextlib
import io
import json
import logging
import os
import shutil
import tempfile
import warnings
from pathlib import Path

import torch
from torch import nn
from transformers import AutoTokenizer, PreTrainedModel
from transformers.cache_utils import DynamicCache, EncoderDecoderCache

try:
    import onnx
except ImportError as error:  # an optional extra
    raise ImportError(
        'exporting to ONNX needs onnx, onnxscript and onnxruntime: pip install "hf_seq2seq[onnx]"'
    ) from error
from hf_seq2seq.export.folder import (
    CROSS_ATTENTION,
    DECODER,
    ENCODER,
    QUANTIZED_SUFFIX,
    SUBFOLDER,
    cache_names,
    check_output_folder,
)
from hf_seq2seq.export.metadata import EXPORT_FILE, ExportMetadata, export_languages
from hf_seq2seq.export.onnx_merge import merge_decoders
from hf_seq2seq.models.folder import ExportError, check_exportable
from hf_seq2seq.models.transformer_mt.configuration_transformer_mt import TransformerMTConfig
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import CACHE_NAME

OPSET = 18


# the Marian config fields the runtimes read, copied from this model's config under the same names
MARIAN_FIELDS = (
    "vocab_size", "d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads",
    "decoder_attention_heads", "encoder_ffn_dim", "decoder_ffn_dim", "max_position_embeddings",
    "pad_token_id", "eos_token_id", "bos_token_id", "decoder_start_token_id", "scale_embedding",
    "activation_function", "tie_word_embeddings",
)  # fmt: skip


class EncoderGraph(nn.Module):
    """The encoder: (B, S) ids and mask -> (B, S, D) states."""

    def __init__(self, model: PreTrainedModel):
        super().__init__()
        self.encoder = model.get_encoder()

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor) -> torch.Tensor:
        return self.encoder(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state


class DecoderGraph(nn.Module):
    """The model's forward from encoder states: logits and the cache, flat. Without past (`with_past` False):
    the first step, which computes the cross-attention keys and values; with past: the later steps, given
    the self-attention (B, H, P, Dh) and cross-attention (B, H, S, Dh) tensors of each layer."""

    def __init__(self, model: PreTrainedModel, with_past: bool):
        super().__init__()
        self.model, self.with_past = model, with_past

    def forward(self, encoder_attention_mask, input_ids, encoder_hidden_states, *past):
        if self.with_past:
            cache = EncoderDecoderCache([tuple(past[i : i + 4]) for i in range(0, len(past), 4)])
        else:
            cache = EncoderDecoderCache(DynamicCache(), DynamicCache())
        outputs = self.model(
            attention_mask=encoder_attention_mask,
            decoder_input_ids=input_ids,
            encoder_outputs=(encoder_hidden_states,),
            use_cache=True,
            **{CACHE_NAME: cache},
            return_dict=True,
        )  # `cache` now holds this step's keys and values too
        flat = []
        for i in range(len(cache.self_attention_cache.layers)):
            self_layer, cross_layer = (
                cache.self_attention_cache.layers[i],
                cache.cross_attention_cache.layers[i],
            )
            flat += [self_layer.keys, self_layer.values, cross_layer.keys, cross_layer.values]
        return (outputs.logits, *flat)


class CrossAttentionGraph(nn.Module):
    """The decoder's cross-attention read as the target is forced through it (word alignments,
    `hf_seq2seq.engines.alignment`): (B, S) mask, (B, T) `[decoder start] + target` ids and (B, S, D) encoder
    states -> (B, L, T, S) attention of each of the L layers, heads averaged."""

    def __init__(self, model: PreTrainedModel):
        super().__init__()
        self.model = model

    def forward(self, encoder_attention_mask, input_ids, encoder_hidden_states):
        cross = self.model.base_model(
            attention_mask=encoder_attention_mask,
            decoder_input_ids=input_ids,
            encoder_outputs=(encoder_hidden_states,),
            output_attentions=True,
            use_cache=False,
            return_dict=True,
        ).cross_attentions  # L x (B, H, T, S)
        return torch.stack(cross, dim=1).mean(dim=2)


def trace(module: nn.Module, args: tuple, input_names, output_names, dynamic_shapes, path: Path) -> Path:
    """`module` as an ONNX model (torch's dynamo exporter), its inputs and outputs named, saved as `path`."""
    program = torch.onnx.export(
        module,
        args,
        input_names=list(input_names),
        output_names=list(output_names),
        dynamic_shapes=dynamic_shapes,
        opset_version=OPSET,
        dynamo=True,
        optimize=True,
        verbose=False,
    )
    program.save(str(path))
    return path


def trace_graphs(model: PreTrainedModel, scratch: Path) -> tuple[Path, Path, Path, Path]:
    """The encoder, the first-step decoder, the later-steps decoder and the cross-attention graph of `model`,
    traced into `scratch` with a dynamic batch and dynamic lengths; returns their files in that order."""
    config = model.config
    layers, heads = config.decoder_layers, config.decoder_attention_heads
    head_dim = config.d_model // heads

    # example inputs: 2 sentences (one padded) of 5 tokens, 2 target tokens, 3 cached ones
    batch, source, target, past = 2, 5, 2, 3
    input_ids = torch.full((batch, source), config.eos_token_id)
    attention_mask = torch.ones(batch, source, dtype=torch.long)
    attention_mask[1, -2:] = 0
    decoder_ids = torch.full((batch, target), config.decoder_start_token_id)
    with torch.no_grad():
        states = model.get_encoder()(input_ids=input_ids, attention_mask=attention_mask).last_hidden_state
    past_names = cache_names("past_key_values", layers)
    past_tensors = [
        torch.zeros(batch, heads, past if ".decoder." in name else source, head_dim) for name in past_names
    ]
    # lengths bounded by the position table's size: torch.export finds that bound itself, but only by failing
    # a first capture of each graph and capturing it again
    B = torch.export.Dim("batch_size")
    S, T, P = (torch.export.Dim(name, max=config.max_position_embeddings) for name in ("encoder_sequence_length", "decoder_sequence_length", "past_decoder_sequence_length"))  # fmt: skip
    decoder_shapes = {
        "encoder_attention_mask": {0: B, 1: S},
        "input_ids": {0: B, 1: T},
        "encoder_hidden_states": {0: B, 1: S},
    }
    decoder_inputs = ["encoder_attention_mask", "input_ids", "encoder_hidden_states"]
    decoder_outputs = ["logits", *cache_names("present", layers)]

    encoder = trace(
        EncoderGraph(model).eval(),
        (input_ids, attention_mask),
        ["input_ids", "attention_mask"],
        ["last_hidden_state"],
        {"input_ids": {0: B, 1: S}, "attention_mask": {0: B, 1: S}},
        scratch / f"{ENCODER}.onnx",
    )
    first = trace(
        DecoderGraph(model, with_past=False).eval(),
        (attention_mask, decoder_ids, states),
        decoder_inputs,
        decoder_outputs,
        decoder_shapes,
        scratch / "first_step.onnx",
    )
    later = trace(
        DecoderGraph(model, with_past=True).eval(),
        (attention_mask, decoder_ids, states, *past_tensors),
        decoder_inputs + past_names,
        decoder_outputs,
        decoder_shapes | {"past": tuple({0: B, 2: P if ".decoder." in name else S} for name in past_names)},
        scratch / "later_steps.onnx",
    )
    cross_attention = trace(
        CrossAttentionGraph(model).eval(),
        (attention_mask, decoder_ids, states),
        decoder_inputs,
        ["cross_attentions"],
        decoder_shapes,
        scratch / f"{CROSS_ATTENTION}.onnx",
    )
    return encoder, first, later, cross_attention


def marian_config(config: TransformerMTConfig) -> dict:
    """The export's `config.json`: this model's numbers under Marian's names, and what it really is."""
    return {
        "model_type": "marian",
        "architectures": ["MarianMTModel"],
        "is_encoder_decoder": True,
        "use_cache": True,
        **{name: getattr(config, name) for name in MARIAN_FIELDS},
        "hf_seq2seq": {"model_type": config.model_type, "normalize_before": config.normalize_before},
    }


def quantize_int8(source: Path, target: Path) -> None:
    """ONNX Runtime's dynamic quantization: int8 weights for MatMul/Gemm, activations quantized on the fly."""
    from onnxruntime.quantization import QuantType, quantize_dynamic

    root = logging.getLogger()  # the quantizer advises its pre-processing on the root logger, for every model
    level = root.level
    root.setLevel(logging.ERROR)
    try:
        quantize_dynamic(source, target, weight_type=QuantType.QInt8)
    finally:
        root.setLevel(level)


def export_onnx(
    model_dir: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
    quantize: str | None = None,
    force: bool = False,
) -> Path:
    """Export the model of `model_dir` (a `transformer_mt` folder) to `output_dir` (see the module's doc);
    `quantize="int8"` adds the int8 graphs. `output_dir` must not exist unless `force` (it is then replaced).
    Returns `output_dir`."""
    from transformers import AutoModelForSeq2SeqLM

    model_dir, output_dir = check_exportable(model_dir, "Optimum's exporter"), Path(output_dir)
    if quantize not in (None, "int8"):
        raise ExportError(f"quantize must be None or 'int8'; got {quantize!r}")
    check_output_folder(model_dir, output_dir, force)
    if output_dir.exists():
        shutil.rmtree(output_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_dir).eval()
    model.set_attn_implementation("eager")  # SDPA's `is_causal` cannot be traced for a dynamic target length

    onnx_dir = output_dir / SUBFOLDER
    onnx_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch, quiet_export():
        graphs = trace_graphs(model, Path(scratch))
        variants = {"": graphs}
        # int8: each decoder is quantized before the merge, which then stores equal weights once
        if quantize == "int8":
            variants[QUANTIZED_SUFFIX] = tuple(
                path.with_name(f"{path.stem}{QUANTIZED_SUFFIX}.onnx") for path in graphs
            )
            for source, target in zip(graphs, variants[QUANTIZED_SUFFIX], strict=True):
                quantize_int8(source, target)
        for suffix, (encoder, first_step, later_steps, cross_attention) in variants.items():
            shutil.copyfile(encoder, onnx_dir / f"{ENCODER}{suffix}.onnx")
            shutil.copyfile(cross_attention, onnx_dir / f"{CROSS_ATTENTION}{suffix}.onnx")
            merged = merge_decoders(onnx.load(first_step), onnx.load(later_steps))
            onnx.checker.check_model(merged)
            onnx.save(merged, onnx_dir / f"{DECODER}{suffix}.onnx")
    write_export_files(model, model_dir, output_dir, quantize)
    return output_dir


def write_export_files(
    model: PreTrainedModel, model_dir: Path, output_dir: Path, quantize: str | None
) -> None:
    """Beside the graphs: the tokenizer, the saved decoding, the Marian-type `config.json` and the metadata
    (:data:`EXPORT_FILE`), the last two copied into onnx/ too."""
    AutoTokenizer.from_pretrained(model_dir).save_pretrained(output_dir)
    tokenizer_config = output_dir / "tokenizer_config.json"  # a class name transformers.js knows, too
    settings = json.loads(tokenizer_config.read_text(encoding="utf-8"))
    tokenizer_config.write_text(
        json.dumps(settings | {"tokenizer_class": "PreTrainedTokenizerFast"}, indent=2) + "\n",
        encoding="utf-8",
    )
    model.generation_config.save_pretrained(output_dir)
    config = model.config
    (output_dir / "config.json").write_text(
        json.dumps(marian_config(config), indent=2) + "\n", encoding="utf-8"
    )
    ExportMetadata(
        format="onnx",
        source_model_type=config.model_type,
        max_source_length=config.max_position_embeddings,
        parameters=model.num_parameters(),
        quantization="int8" if quantize == "int8" else "float32",
        format_version=str(OPSET),
        **export_languages(model_dir),
    ).write(output_dir)
    for name in ("config.json", EXPORT_FILE):  # onnx/ on its own is what a Hub repository carries (`push`)
        shutil.copyfile(output_dir / name, output_dir / SUBFOLDER / name)


@contextlib.contextmanager
def quiet_export():
    """torch.onnx's export prints its progress and warnings that say nothing about this model (torchvision is
    not installed, pytree deprecations, dynamic axis names it merged): keep them out of a user's terminal."""
    logger = logging.getLogger("torch.onnx")
    level = logger.level
    logger.setLevel(logging.ERROR)
    try:
        with warnings.catch_warnings(), contextlib.redirect_stdout(io.StringIO()):
            warnings.simplefilter("ignore")
            yield
    finally:
        logger.setLevel(level)

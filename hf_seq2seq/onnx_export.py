"""Export a saved model to ONNX (fp32, and int8 weights with `quantize="int8"`) and translate with the export.

The export has the file layout and input/output names of Optimum's seq2seq exports, which transformers.js and
Optimum's `ORTModelForSeq2SeqLM` load:

* `onnx/encoder_model.onnx`: `input_ids`, `attention_mask` -> `last_hidden_state`;
* `onnx/decoder_model_merged.onnx`: `encoder_attention_mask`, `input_ids`, `encoder_hidden_states`,
  `past_key_values.{i}.decoder.key/value`, `past_key_values.{i}.encoder.key/value`, `use_cache_branch` ->
  `logits`, `present.{i}.decoder.key/value`, `present.{i}.encoder.key/value`. It is two decoders in one file
  under an ONNX `If` on `use_cache_branch`: the first step (false) computes the cross-attention keys and
  values from `encoder_hidden_states` and ignores the (empty) past; later steps (true) take them from the
  past and return them unchanged, as Optimum's merged decoders do. The weights are stored once.
* `onnx/*_quantized.onnx` with `quantize="int8"`: the same graphs with int8 weights (ONNX Runtime's dynamic
  quantization, subgraphs included), the name transformers.js loads for `dtype: "q8"`.

Both graphs are traced by `torch.onnx.export` (the dynamo exporter) through the model's public `forward`:
the encoder, and the whole model with `encoder_outputs` and an `EncoderDecoderCache` built from the past
tensors. Optimum's exporter would do this with a custom ONNX config, but Optimum's ONNX package requires
transformers < 4.58 and cannot be installed beside transformers 5.

Beside the graphs: the tokenizer files, `generation_config.json` (the saved decoding, length rule included)
and a `config.json` that declares `model_type: "marian"` with this model's numbers under Marian's names
(which this model's config already uses): the runtimes read only the layer, head and size numbers and the
special token ids from it and run the graphs as they are, and Marian is a type both know.
`hf_seq2seq_export.json` records what the export holds.

:class:`OnnxTranslator` translates with the export on ONNX Runtime: the graphs run under transformers'
`GenerationMixin`, so greedy search, beam search, the n-gram ban and the length rule are those of `generate()`.
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import logging
import os
import shutil
import tempfile
import warnings
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn
from transformers import (
    AutoTokenizer,
    GenerationConfig,
    GenerationMixin,
    MarianConfig,
    PreTrainedModel,
)
from transformers.cache_utils import DynamicCache, EncoderDecoderCache
from transformers.modeling_outputs import BaseModelOutput, Seq2SeqLMOutput

try:
    import onnx
    import onnxruntime
except ImportError as error:  # an optional extra
    raise ImportError(
        'exporting to or translating with ONNX Runtime needs onnx and onnxruntime: pip install "hf_seq2seq[onnx]"'
    ) from error

from .configuration_transformer_mt import TransformerMTConfig
from .decoding import Decoding
from .folder import ExportError, check_exportable
from .modeling_transformer_mt import CACHE_NAME, cache_argument
from .onnx_folder import (
    DECODER,
    ENCODER,
    EXPORT_FILE,
    GRAPH_SUFFIXES,
    QUANTIZED_SUFFIX,
    SUBFOLDER,
    OnnxExport,
    check_onnx_export,
)
from .translator import Translator

PRECISIONS = tuple(GRAPH_SUFFIXES)  # fp32, int8
OPSET = 18
# the Marian config fields the runtimes read, copied from this model's config under the same names
MARIAN_FIELDS = (
    "vocab_size", "d_model", "encoder_layers", "decoder_layers", "encoder_attention_heads",
    "decoder_attention_heads", "encoder_ffn_dim", "decoder_ffn_dim", "max_position_embeddings",
    "pad_token_id", "eos_token_id", "bos_token_id", "decoder_start_token_id", "scale_embedding",
    "activation_function", "tie_word_embeddings",
)  # fmt: skip


# ------------------------------------------------------------------------------------------------- tracing


def cache_names(kind: str, layers: int) -> list[str]:
    """`{kind}.{i}.decoder.key`, `.decoder.value`, `.encoder.key`, `.encoder.value` for each layer, in order."""
    return [
        f"{kind}.{i}.{part}.{tensor}"
        for i in range(layers)
        for part in ("decoder", "encoder")
        for tensor in ("key", "value")
    ]


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


def trace(
    module: nn.Module, args: tuple, input_names, output_names, dynamic_shapes, path: Path
) -> onnx.ModelProto:
    """`module` as an ONNX model (torch's dynamo exporter), its inputs and outputs named."""
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
    return onnx.load(str(path))


# ------------------------------------------------------------------------------------------------- merging


def _digest(tensor: onnx.TensorProto) -> str:
    """The tensor's type, shape and values, whatever its name."""
    unnamed = onnx.TensorProto()
    unnamed.CopyFrom(tensor)
    unnamed.ClearField("name")
    return hashlib.sha256(unnamed.SerializeToString(deterministic=True)).hexdigest()


def with_cache_length(value: onnx.ValueInfoProto, decoder_length: str) -> onnx.ValueInfoProto:
    """A copy of `value`; a cache tensor's (B, H, length, Dh) length renamed: `encoder_sequence_length_out` for
    cross-attention, `decoder_length` for self-attention."""
    copy = onnx.ValueInfoProto()
    copy.CopyFrom(value)
    if ".encoder." in value.name or ".decoder." in value.name:
        dim = copy.type.tensor_type.shape.dim[2]
        dim.Clear()
        dim.dim_param = "encoder_sequence_length_out" if ".encoder." in value.name else decoder_length
    return copy


def merge_decoders(first: onnx.ModelProto, later: onnx.ModelProto) -> onnx.ModelProto:
    """One decoder from the first-step graph (`first`: no past inputs) and the later-steps graph (`later`):
    an `If` on a `use_cache_branch` input runs `later` when true, `first` when false. Inputs are `later`'s
    plus `use_cache_branch`, outputs the same names in both. Initializers equal in both are stored once, in
    the outer graph, where both branches read them; every other name of a branch gets the branch's prefix."""
    outer_inputs = {value.name for value in later.graph.input}
    initializers: dict[str, onnx.TensorProto] = {}
    by_digest: dict[str, str] = {}

    def branch(model: onnx.ModelProto, prefix: str) -> onnx.GraphProto:
        renamed = {}
        for tensor in model.graph.initializer:
            digest = _digest(tensor)
            name = by_digest.get(digest)
            if name is None:  # a new tensor: under its own name if free, else prefixed
                name = tensor.name if tensor.name not in initializers else prefix + tensor.name
                copy = onnx.TensorProto()
                copy.CopyFrom(tensor)
                copy.name = name
                initializers[name] = copy
                by_digest[digest] = name
            renamed[tensor.name] = name

        def rename(name: str) -> str:
            if not name or name in outer_inputs:
                return name
            return renamed.get(name, prefix + name)

        graph = onnx.GraphProto(name=prefix.strip("/"))
        for node in model.graph.node:
            new = graph.node.add()
            new.CopyFrom(node)
            new.name = prefix + node.name
            new.input[:] = [rename(name) for name in node.input]
            new.output[:] = [rename(name) for name in node.output]
        for output in model.graph.output:  # an Identity per output: a branch may return an outer value as is
            graph.node.append(
                onnx.helper.make_node("Identity", [rename(output.name)], [prefix + "out/" + output.name])
            )
            value = graph.output.add()
            value.CopyFrom(output)
            value.name = prefix + "out/" + output.name
        for info in model.graph.value_info:
            value = graph.value_info.add()
            value.CopyFrom(info)
            value.name = rename(info.name)
        return graph

    then_branch = branch(later, "with_past/")
    else_branch = branch(first, "first_step/")
    output_names = [output.name for output in later.graph.output]
    if_node = onnx.helper.make_node(
        "If",
        ["use_cache_branch"],
        output_names,
        name="optimum::if",
        then_branch=then_branch,
        else_branch=else_branch,
    )
    use_cache_branch = onnx.helper.make_tensor_value_info("use_cache_branch", onnx.TensorProto.BOOL, [1])
    # the past's lengths get names of their own (transformers.js makes the first step's empty past with 0 for
    # any name but `batch_size`)
    inputs = [with_cache_length(value, "past_decoder_sequence_length") for value in later.graph.input]
    outputs = [with_cache_length(value, "past_decoder_sequence_length + 1") for value in later.graph.output]
    graph = onnx.helper.make_graph(
        [if_node],
        "decoder_model_merged",
        inputs + [use_cache_branch],
        outputs,
        initializer=list(initializers.values()),
    )
    opsets = {(opset.domain, opset.version) for model in (first, later) for opset in model.opset_import}
    merged = onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid(domain, version) for domain, version in sorted(opsets)]
    )
    merged.ir_version = later.ir_version
    functions = {(f.domain, f.name): f for model in (first, later) for f in model.functions}
    merged.functions.extend(functions.values())
    return merged


# ------------------------------------------------------------------------------------------------- export


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
    if output_dir.resolve() in (model_dir.resolve(), *model_dir.resolve().parents):
        raise ExportError(f"the export folder {output_dir} must not be the model folder or contain it")
    if output_dir.exists():
        if not force:
            raise ExportError(
                f"{output_dir} exists; choose another folder or replace it (--force, force=True)"
            )
        shutil.rmtree(output_dir)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_dir).eval()
    model.set_attn_implementation("eager")  # SDPA's `is_causal` cannot be traced for a dynamic target length
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
    B, S, T, P = (torch.export.Dim(name) for name in ("batch_size", "encoder_sequence_length", "decoder_sequence_length", "past_decoder_sequence_length"))  # fmt: skip
    decoder_shapes = {
        "encoder_attention_mask": {0: B, 1: S},
        "input_ids": {0: B, 1: T},
        "encoder_hidden_states": {0: B, 1: S},
    }
    decoder_inputs = ["encoder_attention_mask", "input_ids", "encoder_hidden_states"]
    decoder_outputs = ["logits", *cache_names("present", layers)]

    onnx_dir = output_dir / SUBFOLDER
    onnx_dir.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as scratch, quiet_export():
        scratch = Path(scratch)
        trace(
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
            decoder_shapes
            | {"past": tuple({0: B, 2: P if ".decoder." in name else S} for name in past_names)},
            scratch / "later_steps.onnx",
        )
        variants = {"": (scratch / f"{ENCODER}.onnx", first, later)}
        if (
            quantize == "int8"
        ):  # each decoder quantized before the merge, which then stores equal weights once
            quantized = {
                name: scratch / f"{name}{QUANTIZED_SUFFIX}.onnx"
                for name in (ENCODER, "first_step", "later_steps")
            }
            for name, path in quantized.items():
                quantize_int8(scratch / f"{name}.onnx", path)
            variants[QUANTIZED_SUFFIX] = (
                quantized[ENCODER],
                onnx.load(quantized["first_step"]),
                onnx.load(quantized["later_steps"]),
            )
        for suffix, (encoder, first_step, later_steps) in variants.items():
            shutil.copyfile(encoder, onnx_dir / f"{ENCODER}{suffix}.onnx")
            merged = merge_decoders(first_step, later_steps)
            onnx.checker.check_model(merged)
            onnx.save(merged, onnx_dir / f"{DECODER}{suffix}.onnx")

    AutoTokenizer.from_pretrained(model_dir).save_pretrained(output_dir)
    tokenizer_config = output_dir / "tokenizer_config.json"  # a class name transformers.js knows, too
    settings = json.loads(tokenizer_config.read_text(encoding="utf-8"))
    tokenizer_config.write_text(
        json.dumps(settings | {"tokenizer_class": "PreTrainedTokenizerFast"}, indent=2) + "\n",
        encoding="utf-8",
    )
    model.generation_config.save_pretrained(output_dir)
    (output_dir / "config.json").write_text(
        json.dumps(marian_config(config), indent=2) + "\n", encoding="utf-8"
    )
    metadata = {
        "format": "onnx",
        "source_model_type": config.model_type,
        "precisions": ["fp32", "int8"] if quantize == "int8" else ["fp32"],
        "max_source_length": config.max_position_embeddings,
        "parameters": model.num_parameters(),
        "opset": OPSET,
    }
    (output_dir / EXPORT_FILE).write_text(json.dumps(metadata, indent=2) + "\n", encoding="utf-8")
    for name in ("config.json", EXPORT_FILE):  # onnx/ on its own is what a Hub repository carries (`push`)
        shutil.copyfile(output_dir / name, onnx_dir / name)
    return output_dir


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


# ------------------------------------------------------------------------------------------------- runtime


class OnnxEncoder(nn.Module):
    """The encoder session behind the module interface `GenerationMixin` calls (`get_encoder()`)."""

    main_input_name = "input_ids"

    def __init__(self, session: onnxruntime.InferenceSession):
        super().__init__()
        self.session = session

    def forward(self, input_ids: torch.Tensor, attention_mask: torch.Tensor, **kwargs) -> BaseModelOutput:
        (states,) = self.session.run(
            None, {"input_ids": input_ids.numpy(), "attention_mask": attention_mask.numpy()}
        )
        return BaseModelOutput(last_hidden_state=torch.from_numpy(states))


class OnnxSeq2SeqLM(PreTrainedModel, GenerationMixin):
    """An ONNX export run by ONNX Runtime as a seq2seq LM that `generate()` drives: each forward is one run of
    the merged decoder (the first step without past, `use_cache_branch` false), its presents the next
    step's `EncoderDecoderCache`, so beam search reorders them as it reorders any cache."""

    config_class = MarianConfig
    main_input_name = "input_ids"

    def __init__(
        self,
        config: MarianConfig,
        encoder: onnxruntime.InferenceSession,
        decoder: onnxruntime.InferenceSession,
    ):
        super().__init__(config)
        self.encoder = OnnxEncoder(encoder)
        self.decoder_session = decoder
        self.layers = config.decoder_layers
        self.head_shape = (config.decoder_attention_heads, config.d_model // config.decoder_attention_heads)
        self.post_init()

    @property
    def device(self) -> torch.device:
        return torch.device("cpu")

    @property
    def dtype(self) -> torch.dtype:
        return torch.float32

    def get_encoder(self) -> OnnxEncoder:
        return self.encoder

    def forward(
        self,
        input_ids: torch.Tensor | None = None,
        attention_mask: torch.Tensor | None = None,
        decoder_input_ids: torch.Tensor | None = None,
        encoder_outputs: BaseModelOutput | tuple | None = None,
        past_key_values: EncoderDecoderCache | None = None,
        use_cache: bool | None = None,
        cache: EncoderDecoderCache | None = None,
        **kwargs,
    ) -> Seq2SeqLMOutput:
        """One decoding step (`GenerationMixin` calls it); the cache under either name, as the torch model takes it
        (`modeling_transformer_mt.cache_argument`), and returned (unless `use_cache` is False: the next call then
        gives the whole target again) under the installed transformers' name."""
        past_key_values = cache_argument(cache, past_key_values)
        if encoder_outputs is None:
            encoder_outputs = self.encoder(input_ids, attention_mask)
        states = encoder_outputs[0]  # (B, S, D)
        batch = states.shape[0]
        feeds = {
            "encoder_attention_mask": attention_mask.numpy(),
            "input_ids": decoder_input_ids.numpy(),
            "encoder_hidden_states": states.numpy(),
        }
        cached = past_key_values is not None and past_key_values.get_seq_length() > 0
        names = cache_names("past_key_values", self.layers)
        if cached:  # per layer: self-attention key, value, cross-attention key, value
            layers = zip(
                past_key_values.self_attention_cache.layers,
                past_key_values.cross_attention_cache.layers,
                strict=True,
            )
            past = [
                tensor for own, cross in layers for tensor in (own.keys, own.values, cross.keys, cross.values)
            ]
        else:
            past = [torch.zeros(batch, self.head_shape[0], 0, self.head_shape[1])] * len(
                names
            )  # (B, H, 0, Dh)
        feeds |= {name: tensor.contiguous().numpy() for name, tensor in zip(names, past, strict=True)}
        feeds["use_cache_branch"] = torch.tensor([cached]).numpy()
        logits, *presents = (torch.from_numpy(array) for array in self.decoder_session.run(None, feeds))
        if use_cache is False:
            return Seq2SeqLMOutput(logits=logits)
        cache = EncoderDecoderCache([tuple(presents[i : i + 4]) for i in range(0, len(presents), 4)])
        return Seq2SeqLMOutput(logits=logits, **{CACHE_NAME: cache})


def load_onnx_model(
    export: OnnxExport | str | os.PathLike[str], precision: str = "fp32", threads: int = 0
) -> OnnxSeq2SeqLM:
    """An export folder (checked by `onnx_folder.check_onnx_export`, or its result) as an `OnnxSeq2SeqLM`: its
    fp32 graphs, or the int8 ones (`precision`)."""
    if not isinstance(export, OnnxExport):
        export = check_onnx_export(export)
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
    options = onnxruntime.SessionOptions()
    options.intra_op_num_threads = threads
    sessions = [
        onnxruntime.InferenceSession(str(file), options, providers=["CPUExecutionProvider"])
        for file in export.graphs(precision)
    ]
    model = OnnxSeq2SeqLM(MarianConfig.from_dict(export.config), *sessions)
    model.generation_config = GenerationConfig.from_pretrained(export.folder)
    return model.eval()


class OnnxTranslator(Translator):
    """An export of :func:`export_onnx` on ONNX Runtime, as a `Translator`: its fp32 or int8 graphs
    (`precision`) run by `generate()` (:class:`OnnxSeq2SeqLM`), batched and limited as the torch engine's."""

    engine = "onnxruntime"

    def __init__(self, export_dir: str | os.PathLike[str], precision: str = "fp32", threads: int = 0):
        export = check_onnx_export(export_dir)
        self.model = load_onnx_model(export, precision, threads)
        self.tokenizer = AutoTokenizer.from_pretrained(export.folder)
        self.precision = precision
        self.parameters, self.max_source_length = export.metadata["parameters"], export.max_source_length

    @property
    def generation_config(self) -> GenerationConfig:
        return self.model.generation_config

    def translate_sentences(
        self,
        sentences: Sequence[str],
        batch_size: int = 64,
        decoding: Decoding | None = None,
        max_source_length: int | None = None,
        progress: bool = False,
    ) -> list[str]:
        from .inference import _translate_sentences

        decoding = decoding or Decoding()
        if decoding.compile:
            raise ValueError(
                "compiled decoding (--compile) is for the torch engine; ONNX Runtime has its own"
            )
        with torch.inference_mode():
            return _translate_sentences(
                self.model, self.tokenizer, sentences, batch_size, decoding, max_source_length, progress
            )

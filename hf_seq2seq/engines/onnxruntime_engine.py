"""The ONNX Runtime engine: :class:`OnnxTranslator` translates with an export of
`hf_seq2seq.export.onnx.export_onnx` (`hf-seq2seq export onnx`), checked by
`hf_seq2seq.export.folder.check_onnx_export`.

The export's graphs run under transformers' `GenerationMixin` (:class:`OnnxSeq2SeqLM`: the encoder session
behind `get_encoder()`, each forward one run of the merged decoder, its presents the next step's
`EncoderDecoderCache`), so greedy search, beam search, the n-gram ban and the length rule are those of
`generate()`, and the batching, blank lines and truncation those of the torch engine
(`hf_seq2seq.engines.torch_engine.generate_translations`).
"""

from __future__ import annotations

import functools
import os
from collections.abc import Sequence

import numpy
import torch
from torch import nn
from transformers import (
    AutoTokenizer,
    GenerationConfig,
    GenerationMixin,
    MarianConfig,
    PreTrainedModel,
)
from transformers.cache_utils import EncoderDecoderCache
from transformers.modeling_outputs import BaseModelOutput, Seq2SeqLMOutput

try:
    import onnxruntime
except ImportError as error:  # an optional extra
    raise ImportError(
        'translating with ONNX Runtime needs onnxruntime: pip install "hf_seq2seq[onnx]"'
    ) from error
from hf_seq2seq.engines.alignment import DEFAULT_RULE, Alignment, AlignmentRule, align_pairs
from hf_seq2seq.engines.base import Translator, UnsupportedFeature
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.scoring import Score
from hf_seq2seq.engines.torch_engine import generate_translations, score_with_model
from hf_seq2seq.export.folder import GRAPH_SUFFIXES, OnnxExport, cache_names, check_onnx_export
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import CACHE_NAME, cache_argument

PRECISIONS = tuple(GRAPH_SUFFIXES)  # fp32, int8


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
        """One decoding step (`GenerationMixin` calls it); the cache under either name, as the torch model
        takes it (`hf_seq2seq.models.transformer_mt.modeling_transformer_mt.cache_argument`), and returned
        (unless `use_cache` is False: the next call then gives the whole target again) under the installed
        transformers' name."""
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
    """An export folder (checked by `hf_seq2seq.export.folder.check_onnx_export`, or its result) as an
    `OnnxSeq2SeqLM`: its fp32 graphs, or the int8 ones (`precision`)."""
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
    """An export of `hf_seq2seq.export.onnx.export_onnx` on ONNX Runtime, as a `Translator`: its fp32 or int8
    graphs (`precision`) run by `generate()` (:class:`OnnxSeq2SeqLM`), batched and limited as the torch
    engine's."""

    engine = "onnxruntime"

    def __init__(self, export_dir: str | os.PathLike[str], precision: str = "fp32", threads: int = 0):
        export = check_onnx_export(export_dir)
        self.model = load_onnx_model(export, precision, threads)
        self.tokenizer = AutoTokenizer.from_pretrained(export.folder)
        self.precision, self.threads, self.export = precision, threads, export
        self.parameters, self.max_source_length = export.metadata.parameters, export.max_source_length

    @property
    def weights_bytes(self) -> int:
        """The graph files of its precision that ONNX Runtime has loaded (the cross-attention graph once a
        first alignment loaded it)."""
        graphs = list(self.export.graphs(self.precision))
        if "cross_attention" in self.__dict__:
            graphs.append(self.export.cross_attention_graph(self.precision))
        return sum(graph.stat().st_size for graph in graphs)

    @functools.cached_property
    def cross_attention(self) -> onnxruntime.InferenceSession:
        """The export's cross-attention graph (`hf_seq2seq.export.onnx.CrossAttentionGraph`), loaded when a first
        alignment is asked for; `UnsupportedFeature` for an export made before it."""
        graph = self.export.cross_attention_graph(self.precision)
        if graph is None:
            raise UnsupportedFeature(
                f"{self.export.folder} was exported before ONNX exports held the cross-attention graph word "
                "alignments need (for --alignments, markup, documents and glossaries): export it again with "
                "`hf-seq2seq export onnx`"
            )
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = self.threads
        return onnxruntime.InferenceSession(str(graph), options, providers=["CPUExecutionProvider"])

    def align(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        batch_size: int = 64,
        rule: AlignmentRule = DEFAULT_RULE,
    ) -> list[Alignment]:
        """Word alignments (`Translator.align`) from the export's cross-attention graph, run as the torch engine
        runs its teacher-forced pass: the same layers (`rule.layer`), heads averaged, the same word pairs."""
        session = self.cross_attention
        start = self.generation_config.decoder_start_token_id

        def attention_of(source_ids: list[list[int]], target_ids: list[list[int]]) -> numpy.ndarray:
            inputs = self.tokenizer.pad({"input_ids": source_ids}, return_tensors="np")
            decoder = self.tokenizer.pad(
                {"input_ids": [[start, *ids] for ids in target_ids]}, return_tensors="np"
            )
            (states,) = self.model.encoder.session.run(
                None, {"input_ids": inputs["input_ids"], "attention_mask": inputs["attention_mask"]}
            )  # (B, S, D)
            feeds = {
                "encoder_attention_mask": inputs["attention_mask"],
                "input_ids": decoder["input_ids"],
                "encoder_hidden_states": states,
            }
            (cross,) = session.run(None, feeds)  # (B, L, T, S)
            return cross.mean(axis=1) if rule.layer is None else cross[:, rule.layer]

        return align_pairs(
            self.tokenizer, sources, targets, self.max_source_length, attention_of, batch_size, rule
        )

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
        decoding = decoding or Decoding()
        if decoding.compile:
            raise ValueError(
                "compiled decoding (--compile) is for the torch engine; ONNX Runtime has its own"
            )
        with torch.inference_mode():
            return generate_translations(
                self.model, self.tokenizer, sentences, batch_size, decoding, max_source_length, progress
            )

    def translate_hypotheses(
        self,
        sentences: Sequence[str],
        count: int,
        batch_size: int = 64,
        decoding: Decoding | None = None,
        max_source_length: int | None = None,
    ) -> list[list[str]]:
        with torch.inference_mode():
            return generate_translations(
                self.model, self.tokenizer, sentences, batch_size, decoding or Decoding(), max_source_length,
                False, hypotheses=count,
            )  # fmt: skip

    def score(self, sources: Sequence[str], targets: Sequence[str], batch_size: int = 64) -> list[Score]:
        """Each pair's `Score` (`Translator.score`): the torch engine's teacher-forced pass, each batch one run of
        the merged decoder without its cache."""
        with torch.inference_mode():
            return score_with_model(self.model, self.tokenizer, sources, targets, batch_size)

"""The torch engine: `TorchTranslator`, a saved model folder loaded through the Auto classes
(`load_model_and_tokenizer`) at a chosen precision (`set_precision`: fp32, bf16, or int8 Linear layers,
`quantize_dynamic_int8`), decoding with the model's own `generate()` (`generate_translations`, which the ONNX
Runtime engine shares)."""

import os
import warnings
from collections.abc import Sequence

import torch
from torch import nn
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    GenerationConfig,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from hf_seq2seq.acceleration.cpu_features import cpu_supports
from hf_seq2seq.engines.alignment import DEFAULT_RULE, Alignment, AlignmentRule, align_pairs
from hf_seq2seq.engines.base import TORCH_PRECISIONS, Translator
from hf_seq2seq.engines.decoding import Decoding, min_new_tokens, translate_in_batches
from hf_seq2seq.engines.packed_weights import PACKED_WEIGHTS, use_packed_weights
from hf_seq2seq.engines.scoring import NO_SCORE, Score
from hf_seq2seq.models.folder import check_model_folder
from hf_seq2seq.models.transformer_mt.length_rule import length_rule_limit


class Int8Linear(torch.ao.nn.quantized.dynamic.Linear):
    """A dynamically quantized Linear layer that quantizes its inputs to the full 8-bit range where the CPU has
    VNNI int8 dot products. PyTorch's own layer always uses 7 bits (`reduce_range=True`), which guards against
    the int16 saturation of the AVX2/AVX-512 kernels without VNNI; with VNNI nothing saturates and 8 bits
    nearly halve the activations' rounding error at the same speed (docs/decoding.md)."""

    reduce_range = not cpu_supports("vnni")

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        packed = self._packed_params._packed_params
        return torch.ops.quantized.linear_dynamic(x, packed, reduce_range=self.reduce_range).to(x.dtype)


def quantize_dynamic_int8(model: nn.Module) -> nn.Module:
    """Dynamic int8 quantization of every `nn.Linear`, in place (CPU only): the weights stored in int8 with one
    scale per output row, the activations quantized per call from their range (`Int8Linear`), int8 matrix
    products with int32 accumulation. Embeddings, LayerNorms and the attention products stay fp32; the output
    layer gets its own int8 copy of the tied embedding matrix. Such a model is for inference, not for saving.

    This is `torch.ao.quantization.quantize_dynamic`, whose fbgemm/x86 kernels do the arithmetic in int8.
    PyTorch deprecates it in favour of torchao (its warnings are silenced here), but torchao's int8 dynamic
    quantization (0.18) multiplies with `torch._int_mm`, a reference kernel on CPU that is many times slower
    than the fp32 Linear it replaces.
    """
    if any(p.device.type != "cpu" for p in model.parameters()):
        raise ValueError("int8 dynamic quantization runs on CPU only; load the model on cpu (or use bf16)")
    with warnings.catch_warnings():
        warnings.filterwarnings("ignore", message="torch.ao.quantization is deprecated")
        warnings.filterwarnings("ignore", message="torch.quantize_per_tensor, torch.quantize_per_channel")
        return torch.ao.quantization.quantize_dynamic(
            model,
            {nn.Linear: torch.ao.quantization.per_channel_dynamic_qconfig},
            mapping={nn.Linear: Int8Linear},
            inplace=True,
        )


def set_precision(model: PreTrainedModel, precision: str) -> PreTrainedModel:
    """`model` converted in place for inference at `precision` (one of `TORCH_PRECISIONS`): fp32 leaves it as it is,
    bf16 stores the weights (and so computes) in bfloat16, int8 quantizes its Linear layers
    (`quantize_dynamic_int8`). For the torch engine only: a CTranslate2 export keeps the precision it was
    exported with."""
    if precision not in TORCH_PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(TORCH_PRECISIONS)}; got {precision!r}")
    if precision == "bf16":
        return model.to(torch.bfloat16)
    if precision == "int8":
        return quantize_dynamic_int8(model)
    return model


def precision_of(model: nn.Module) -> str:
    """The precision `set_precision` gave `model`: int8 if it has dynamically quantized Linear layers, else
    bf16 or fp32 by its weights."""
    if any(isinstance(m, torch.ao.nn.quantized.dynamic.Linear) for m in model.modules()):
        return "int8"
    return "bf16" if next(model.parameters()).dtype == torch.bfloat16 else "fp32"


def load_model_and_tokenizer(
    folder: str | os.PathLike[str],
    device: str | torch.device | None = None,
    trust_remote_code: bool = False,
    precision: str = "fp32",
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a saved folder through the Auto classes, in eval mode, on `device` (default: cuda if available),
    at `precision` (see `set_precision`)."""
    folder = check_model_folder(folder)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model = (
        AutoModelForSeq2SeqLM.from_pretrained(folder, trust_remote_code=trust_remote_code).to(device).eval()
    )
    tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=trust_remote_code)
    return set_precision(model, precision), tokenizer


class TorchTranslator(Translator):
    """The torch engine: `model.generate()` on a loaded model (`.model`, for callers that need the network
    itself, e.g. its attention weights) with its tokenizer; the model's greedy search runs on packed weights
    (`use_packed_weights`).

    `precision` converts the model in place (`set_precision`) after its parameters are counted; None keeps
    the precision it has (`precision_of`). `parameters` defaults to `model.num_parameters()` (give it for a
    model that was quantized already: int8 packs its Linear weights away from the count)."""

    engine = "torch"

    def __init__(
        self,
        model: PreTrainedModel,
        tokenizer: PreTrainedTokenizerBase,
        precision: str | None = None,
        parameters: int | None = None,
    ):
        self.parameters = model.num_parameters() if parameters is None else parameters
        self.model = use_packed_weights(model if precision is None else set_precision(model, precision))
        self.tokenizer = tokenizer

    @property
    def generation_config(self) -> GenerationConfig:
        return self.model.generation_config

    @property
    def precision(self) -> str:
        return precision_of(self.model)

    @property
    def max_source_length(self) -> int:
        return self.model.config.max_position_embeddings

    @property
    def weights_bytes(self) -> int:
        """The model's parameters and buffers, its int8 layers' weights, and the copies of weights packed for
        oneDNN so far (`hf_seq2seq.engines.packed_weights`: made at a layer's first packed call)."""
        tensors = [*self.model.parameters(), *self.model.buffers()]
        for module in self.model.modules():
            if isinstance(module, torch.ao.nn.quantized.dynamic.Linear):
                tensors += [t for t in (module.weight(), module.bias()) if t is not None]
            packed = PACKED_WEIGHTS.get(module)
            if packed is not None:
                tensors.append(packed[1])
        return sum(t.numel() * t.element_size() for t in tensors)

    @property
    def device(self) -> torch.device:
        return self.model.device

    @torch.inference_mode()
    def translate_sentences(
        self,
        sentences: Sequence[str],
        batch_size: int = 64,
        decoding: Decoding | None = None,
        max_source_length: int | None = None,
        progress: bool = False,
    ) -> list[str]:
        return generate_translations(
            self.model,
            self.tokenizer,
            sentences,
            batch_size,
            decoding or Decoding(),
            max_source_length,
            progress,
        )

    @torch.inference_mode()
    def translate_hypotheses(
        self,
        sentences: Sequence[str],
        count: int,
        batch_size: int = 64,
        decoding: Decoding | None = None,
        max_source_length: int | None = None,
    ) -> list[list[str]]:
        return generate_translations(
            self.model, self.tokenizer, sentences, batch_size, decoding or Decoding(), max_source_length,
            False, hypotheses=count,
        )  # fmt: skip

    @torch.inference_mode()
    def score(self, sources: Sequence[str], targets: Sequence[str], batch_size: int = 64) -> list[Score]:
        return score_with_model(self.model, self.tokenizer, sources, targets, batch_size)

    @torch.inference_mode()
    def align(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        batch_size: int = 64,
        rule: AlignmentRule = DEFAULT_RULE,
    ) -> list[Alignment]:
        return align_with_attention(self.model, self.tokenizer, sources, targets, batch_size, rule)


def align_with_attention(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    sources: Sequence[str],
    targets: Sequence[str],
    batch_size: int = 64,
    rule: AlignmentRule = DEFAULT_RULE,
) -> list[Alignment]:
    """Word alignments of `(source, target)` pairs (`align_pairs`) from one teacher-forced forward pass per batch:
    the decoder reads `[decoder start] + target tokens`, the cross-attention of `rule.layer` (None: all layers),
    heads averaged. Sources and targets are cut to the model's positions."""
    start = model.generation_config.decoder_start_token_id

    def attention_of(source_ids: list[list[int]], target_ids: list[list[int]]) -> list:
        inputs = tokenizer.pad({"input_ids": source_ids}, return_tensors="pt").to(model.device)
        decoder = tokenizer.pad(
            {"input_ids": [[start, *ids] for ids in target_ids]}, return_tensors="pt"
        )  # (B, T): padding after a target changes no row before it (the decoder is causal)
        cross = model.base_model(  # the encoder-decoder without its output layer: no logits needed
            **inputs,
            decoder_input_ids=decoder["input_ids"].to(model.device),
            output_attentions=True,
            use_cache=False,
        ).cross_attentions  # layers x (B, H, T, S)
        chosen = cross if rule.layer is None else (cross[rule.layer],)
        return torch.stack(chosen).float().mean(dim=(0, 2)).tolist()  # (B, T, S)

    limit = model.config.max_position_embeddings
    return align_pairs(tokenizer, sources, targets, limit, attention_of, batch_size, rule)


def generate_translations(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    sentences: Sequence[str],
    batch_size: int,
    decoding: Decoding,
    max_source_length: int | None,
    progress: bool,
    hypotheses: int | None = None,
) -> list[str] | list[list[str]]:
    """Translations of `sentences` by `model.generate()` with `decoding`, in batches of similar length
    (`translate_in_batches`), sources cut to `max_source_length` tokens (default: the model's positions), the
    saved length rule applied when `decoding` fixes no length: the decoding of every engine that runs a
    transformers `GenerationMixin` model (the torch engine's, ONNX Runtime's).

    With `hypotheses` (`Translator.translate_hypotheses`), a list per sentence of its `hypotheses` best
    translations, best first: beam search with at least that many beams (`num_return_sequences`)."""
    max_source_length = max_source_length or model.config.max_position_embeddings
    if decoding.compile and precision_of(model) == "int8":
        raise ValueError(
            "int8 and compiled decoding do not combine: torch.compile cannot trace the packed weights of "
            "dynamically quantized Linear layers; choose one"
        )

    def translate_batch(batch: list[str]) -> list[str]:
        inputs = tokenizer(
            batch, max_length=max_source_length, truncation=True, padding=True, return_tensors="pt"
        ).to(model.device)
        kwargs = decoding.generate_kwargs() | {"min_new_tokens": min_new_tokens(model.generation_config)}
        if decoding.max_new_tokens is None:  # the saved length rule, for any model (see `length_rule_limit`)
            limit = length_rule_limit(model.generation_config, inputs["input_ids"].shape[-1])
            if limit is not None:
                kwargs["max_new_tokens"] = limit
        if hypotheses:
            beams = kwargs.get("num_beams") or model.generation_config.num_beams or 1
            kwargs |= {"num_beams": max(beams, hypotheses), "num_return_sequences": hypotheses}
        generated = model.generate(**inputs, **kwargs)
        texts = [text.strip() for text in tokenizer.batch_decode(generated, skip_special_tokens=True)]
        if hypotheses:  # generate() returns each sentence's hypotheses one after the other, best first
            return [texts[i : i + hypotheses] for i in range(0, len(texts), hypotheses)]
        return texts

    out = translate_in_batches(
        tokenizer, sentences, batch_size, max_source_length, translate_batch, progress,
        blank=("",) if hypotheses else "",
    )  # fmt: skip
    return [list(each) for each in out] if hypotheses else out


def score_with_model(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    sources: Sequence[str],
    targets: Sequence[str],
    batch_size: int = 64,
) -> list[Score]:
    """The `Score` of each `(source, target)` pair (`Translator.score`) from one teacher-forced forward pass per
    batch, pairs sorted by length: the decoder reads `[decoder start] + target tokens` less the last, and each
    position's log-softmax is read at the next target token (the end token last). Sources and targets are cut
    to the model's positions."""
    if len(sources) != len(targets):
        raise ValueError(f"{len(sources)} sources but {len(targets)} targets: give one target per source")
    limit = model.config.max_position_embeddings
    start = model.generation_config.decoder_start_token_id
    out = [NO_SCORE] * len(sources)
    todo = sorted(
        (i for i, (s, t) in enumerate(zip(sources, targets, strict=True)) if s.strip() and t.strip()),
        key=lambda i: len(targets[i]),
    )
    device = model.device
    for first in range(0, len(todo), batch_size):
        index = todo[first : first + batch_size]
        source = tokenizer([sources[i] for i in index], max_length=limit, truncation=True)
        ids = tokenizer(text_target=[targets[i] for i in index], max_length=limit, truncation=True)[
            "input_ids"
        ]
        inputs = tokenizer.pad({"input_ids": source["input_ids"]}, return_tensors="pt").to(device)
        labels = tokenizer.pad({"input_ids": ids}, return_tensors="pt")["input_ids"].to(device)  # (B, T)
        decoder = tokenizer.pad({"input_ids": [[start, *row[:-1]] for row in ids]}, return_tensors="pt")
        logits = model(**inputs, decoder_input_ids=decoder["input_ids"].to(device), use_cache=False).logits
        logits = logits.float()  # (B, T, V)
        token_log_probs = logits.gather(-1, labels[..., None]).squeeze(-1) - torch.logsumexp(logits, dim=-1)
        lengths = torch.tensor([len(row) for row in ids], device=device)
        mask = torch.arange(labels.shape[1], device=device) < lengths[:, None]  # padding after a target
        sums = (token_log_probs * mask).sum(dim=-1).tolist()
        for i, total, length in zip(index, sums, lengths.tolist(), strict=True):
            out[i] = Score(total, length)
    return out

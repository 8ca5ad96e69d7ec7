"""The torch engine (`TorchTranslator`: a saved model folder at a chosen precision), translation with any
engine's `hf_seq2seq.translator.Translator` (`translate`), and scoring a whole test set (`evaluate_translations`,
`evaluate_folder`)."""

import os
import time
import warnings
from collections.abc import Sequence
from pathlib import Path

import torch
from torch import nn
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    GenerationConfig,
    PreTrainedModel,
    PreTrainedTokenizerBase,
)

from .cpu_features import cpu_supports
from .decoding import Decoding, translate_in_batches
from .folder import check_model_folder
from .generation_transformer_mt import length_rule_limit
from .metrics import loop_share, score_by_length, score_translations
from .report import EVAL_REPORT, EvalReport
from .segmentation import translate_by_sentence
from .translator import ENGINES, FULL_PRECISIONS, Translator, load_translator  # noqa: F401 (ENGINES: re-exported)

PRECISIONS = ("fp32", "bf16", "int8")
"""Inference precisions (`set_precision`): fp32 as trained, bf16 weights, int8 weights of the Linear layers."""


class Int8Linear(torch.ao.nn.quantized.dynamic.Linear):
    """A dynamically quantized Linear layer that quantizes its inputs to the full 8-bit range where the CPU has
    VNNI int8 dot products. PyTorch's own layer always uses 7 bits (`reduce_range=True`), which guards against
    the int16 saturation of the AVX2/AVX-512 kernels without VNNI; with VNNI nothing saturates and 8 bits
    nearly halve the activations' rounding error (a 256 -> 768 layer: 1.2% relative error instead of 2.0%, at
    the same speed)."""

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
    """`model` converted in place for inference at `precision` (one of `PRECISIONS`): fp32 leaves it as it is,
    bf16 stores the weights (and so computes) in bfloat16, int8 quantizes its Linear layers
    (`quantize_dynamic_int8`). For the torch engine only: a CTranslate2 export keeps the precision it was
    exported with."""
    if precision not in PRECISIONS:
        raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
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
    itself, e.g. its attention weights) with its tokenizer.

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
        self.model = model if precision is None else set_precision(model, precision)
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
        return _translate_sentences(
            self.model,
            self.tokenizer,
            sentences,
            batch_size,
            decoding or Decoding(),
            max_source_length,
            progress,
        )


def translate(
    translator: Translator,
    texts: Sequence[str],
    batch_size: int = 64,
    decoding: Decoding | None = None,
    split_sentences: bool = False,
    source_lang: str = "en",
    max_source_length: int | None = None,
    progress: bool = False,
) -> list[str]:
    """Translations of `texts` by `translator` (any engine's `hf_seq2seq.translator.Translator`, e.g. of
    `load_translator`), in order.

    With `split_sentences`, a text of several sentences is cut into sentences (`hf_seq2seq.segmentation`),
    and a sentence longer than the sources of training into pieces that fit; all sentences of all texts are
    translated together, and each text's translations are joined back with its own spacing and line breaks.
    Sentences are batched by length to reduce padding. An empty (or blank) text translates to "". A sentence
    longer than `max_source_length` (default: the model's, `translator.max_source_length`) is truncated with
    a warning.
    """
    decoding = decoding or Decoding()
    tokenizer = translator.tokenizer

    def translate_batch(sentences: Sequence[str]) -> list[str]:
        return translator.translate_sentences(sentences, batch_size, decoding, max_source_length, progress)

    if not split_sentences:
        return translate_batch(texts)
    return translate_by_sentence(
        texts,
        translate_batch,
        source_lang,
        max_length=trained_length(tokenizer),
        length=lambda sentence: len(tokenizer(sentence, verbose=False)["input_ids"]),
    )


def trained_length(tokenizer: PreTrainedTokenizerBase) -> int | None:
    """The longest source in tokens that training used (the tokenizer's `model_max_length`), if it was set."""
    length = tokenizer.model_max_length
    return length if length and length < 100_000 else None  # transformers' "unset" is a huge number


def _translate_sentences(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    sentences: Sequence[str],
    batch_size: int,
    decoding: Decoding,
    max_source_length: int | None,
    progress: bool,
) -> list[str]:
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
        kwargs = decoding.generate_kwargs()
        if decoding.max_new_tokens is None:  # the saved length rule, for any model (see `length_rule_limit`)
            limit = length_rule_limit(model.generation_config, inputs["input_ids"].shape[-1])
            if limit is not None:
                kwargs["max_new_tokens"] = limit
        generated = model.generate(**inputs, **kwargs)
        return [text.strip() for text in tokenizer.batch_decode(generated, skip_special_tokens=True)]

    return translate_in_batches(
        tokenizer, sentences, batch_size, max_source_length, translate_batch, progress
    )


def evaluate_translations(
    translator: Translator,
    sources: Sequence[str],
    references: Sequence[Sequence[str]],
    batch_size: int = 64,
    decoding: Decoding | None = None,
    split_sentences: bool = False,
    source_lang: str = "en",
    progress: bool = True,
) -> tuple[dict, list[str]]:
    """Translate `sources` with `translator` (any engine's) and score them against all `references` of each:
    BLEU/chrF with signatures, the number of sentences and references, the share of looping outputs, the
    scores by source length (in tokens), the decoding settings (with the translator's precision unless it is
    full precision) and the translation's wall time."""
    decoding = decoding or Decoding()
    tokenizer, precision = translator.tokenizer, translator.precision
    started = time.monotonic()
    hypotheses = translate(
        translator, sources, batch_size, decoding, split_sentences, source_lang, progress=progress
    )
    wall_time_s = round(time.monotonic() - started, 1)
    references = [list(r) for r in references]
    lengths = [
        len(ids) for ids in tokenizer(list(sources), add_special_tokens=False, verbose=False)["input_ids"]
    ]
    scores = score_translations(hypotheses, references)
    return {
        **scores,
        "loop_share": loop_share(hypotheses),
        "by_length": score_by_length(lengths, hypotheses, references),
        "decoding": translator.settings(decoding)
        | ({"split_sentences": True} if split_sentences else {})
        | ({"precision": precision} if precision not in FULL_PRECISIONS else {}),
        "wall_time_s": wall_time_s,
    }, hypotheses


def read_lines(path: str | os.PathLike[str]) -> list[str]:
    """One sentence per line (a trailing newline does not make an extra, empty sentence)."""
    return Path(path).read_text(encoding="utf-8").removesuffix("\n").split("\n")


def evaluate_folder(
    folder: str | os.PathLike[str],
    output_dir: str | os.PathLike[str] | None = None,
    decoding: Decoding | None = None,
    split_sentences: bool = False,
    src_file: str | None = None,
    ref_files: Sequence[str] = (),
    data_path: str | None = None,
    dataset: str = "fra-eng",
    dataset_config: str | None = None,
    source_lang: str = "en",
    target_lang: str = "fr",
    split: str = "test",
    max_samples: int | None = None,
    batch_size: int = 64,
    trust_remote_code: bool = False,
    engine: str = "torch",
    precision: str = "fp32",
) -> EvalReport:
    """Translate a test set with a saved model and score it; write `<output_dir>/eval_report.json` (an
    `EvalReport`) and `<output_dir>/translations.txt` (default output_dir: the model folder).

    The test set is `src_file` with one or more aligned `ref_files` (plain text, one sentence per line), or
    the `split` of a dataset as `hf_seq2seq.data` loads it (all references of each source). `folder`,
    `engine` and `precision` are `load_translator`'s: with `engine` "ctranslate2", `folder` is an export of
    `hf-seq2seq export ctranslate2`, translated by CTranslate2; the torch engine translates at `precision`
    (see `set_precision`).
    """
    translator = load_translator(folder, engine, precision, trust_remote_code)
    if src_file:
        if not ref_files:
            raise ValueError("--src-file needs at least one --ref-file with the reference translations")
        sources = read_lines(src_file)
        streams = [read_lines(f) for f in ref_files]
        for ref_file, stream in zip(ref_files, streams, strict=True):
            if len(stream) != len(sources):
                raise ValueError(f"{ref_file} has {len(stream)} lines but {src_file} has {len(sources)}")
        references = [list(refs) for refs in zip(*streams, strict=True)]
        dataset, split = str(src_file), None
    else:
        from .data import load_named_dataset

        splits = load_named_dataset(
            dataset, dataset_config, data_path=data_path, source_lang=source_lang, target_lang=target_lang
        )
        if split not in splits:
            raise ValueError(f"split {split!r} not found; available: {', '.join(splits)}")
        rows = splits[split]
        if max_samples is not None:
            rows = rows.select(range(min(max_samples, len(rows))))
        sources = rows["src"]
        references = rows["references"] if "references" in rows.column_names else [[t] for t in rows["tgt"]]
    scores, hypotheses = evaluate_translations(
        translator, sources, references, batch_size, decoding, split_sentences, source_lang
    )
    report = EvalReport(
        **scores,
        model=str(folder),
        dataset=dataset,
        split=split,
        direction=f"{source_lang}-{target_lang}",
        parameters=translator.parameters,  # counted before int8 quantization packs the Linear weights away
    )
    output_dir = Path(output_dir or folder)
    output_dir.mkdir(parents=True, exist_ok=True)
    report.save(output_dir / EVAL_REPORT)
    (output_dir / "translations.txt").write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    return report

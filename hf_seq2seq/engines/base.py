"""The interface of every engine that translates with a saved model, `Translator`, and `translate`, which
translates texts with any of them.

An engine is a class that subclasses `Translator`: `hf_seq2seq.engines.torch_engine.TorchTranslator` (the
model's own `generate()`), `hf_seq2seq.engines.ctranslate2_engine.CTranslate2Translator` (an export of
`hf-seq2seq export ctranslate2`) and `hf_seq2seq.engines.onnxruntime_engine.OnnxTranslator` (an export of
`hf-seq2seq export onnx`, on ONNX Runtime); `hf_seq2seq.engines.factory.load_translator` loads any of them.
`translate`, `evaluate_translations` (`hf_seq2seq.evaluation.evaluate`), the server, the demo and the
benchmarks take a `Translator` and use nothing else of it.

This module imports neither torch nor an engine's package.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Sequence
from typing import TYPE_CHECKING

from hf_seq2seq.engines.alignment import DEFAULT_RULE, Alignment, AlignmentRule
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.length_guard import HYPOTHESES, overlong, replacement
from hf_seq2seq.engines.scoring import Score

if TYPE_CHECKING:
    from transformers import GenerationConfig, PreTrainedTokenizerBase

from hf_seq2seq.data.segmentation import token_length, translate_by_sentence
from hf_seq2seq.errors import HfSeq2SeqError
from hf_seq2seq.models.transformer_mt.protected_spans import ProtectedSplit
from hf_seq2seq.models.transformer_mt.sentence_splitting import trained_length

ENGINES = ("torch", "ctranslate2", "onnxruntime")
"""The engines `hf_seq2seq.engines.factory.load_translator` knows (onnxruntime with the `onnx` extra)."""


TORCH_PRECISIONS = ("fp32", "bf16", "int8")
"""Inference precisions (`hf_seq2seq.engines.torch_engine.set_precision`): fp32 as trained, bf16 weights, int8 weights of the Linear layers."""
FULL_PRECISIONS = ("fp32", "float32")
"""The precision names of unreduced weights (torch's, CTranslate2's): a report names any other precision."""


class UnsupportedFeature(HfSeq2SeqError, ValueError):
    """What an engine cannot do (e.g. word alignments on an engine that does not expose attention)."""


class Translator(ABC):
    """A loaded model that translates sentences, whatever runs it.

    Attributes (plain attributes or properties of a subclass):

    * `engine`: "torch", "ctranslate2" or "onnxruntime";
    * `tokenizer`: the model's tokenizer (a `PreTrainedTokenizerBase`; CTranslate2's, read without transformers,
      a `hf_seq2seq.engines.export_files.FileTokenizer`, which answers the same calls);
    * `generation_config`: the saved decoding (a transformers `GenerationConfig`, or CTranslate2's
      `hf_seq2seq.engines.export_files.SavedDecoding`: beams, length rule, limits);
    * `precision`: the precision it computes at, in the engine's own words ("fp32", "bf16", "int8" for
      torch; the export's quantization for CTranslate2, e.g. "int8" or "float32");
    * `parameters`: the model's parameter count, counted before any quantization;
    * `max_source_length`: the longest source in tokens the model reads (longer ones are truncated).
    """

    engine: str
    tokenizer: PreTrainedTokenizerBase
    generation_config: GenerationConfig
    precision: str
    parameters: int
    max_source_length: int

    @abstractmethod
    def translate_sentences(
        self,
        sentences: Sequence[str],
        batch_size: int = 64,
        decoding: Decoding | None = None,
        max_source_length: int | None = None,
        progress: bool = False,
    ) -> list[str]:
        """Translations of `sentences`, in order, each translated whole (no sentence splitting: that is
        `translate`'s). Every engine does it the same way, through
        `hf_seq2seq.engines.decoding.translate_in_batches`: batches of at most `batch_size` sentences of similar
        length; a blank sentence translates to "", any other never does (the end token is forbidden before a
        first token, and a translation still blank is the sentence as written); a sentence longer than
        `max_source_length` (default: `self.max_source_length`) is truncated with a warning; each translation
        is at most the saved length rule `max_length_a * S + max_length_b` new tokens (S: the batch's longest
        source) unless `decoding` sets `max_new_tokens`; the saved decoding unless `decoding` overrides it."""

    def align(
        self,
        sources: Sequence[str],
        targets: Sequence[str],
        batch_size: int = 64,
        rule: AlignmentRule = DEFAULT_RULE,
    ) -> list[Alignment]:
        """The word alignment of each `(source, target)` pair (`hf_seq2seq.engines.alignment`): the target as
        the model reads it when forced to produce it, so the alignment of a translation the model made is the
        attention it had while making it; `rule` says how attention becomes word pairs. Every engine of the
        package aligns (`hf_seq2seq.engines.alignment.align_pairs`); one that cannot read the model's attention
        raises `UnsupportedFeature`."""
        raise UnsupportedFeature(
            f"the {self.engine} engine gives no word alignments (needed for --alignments, markup and glossaries): "
            "use the torch engine with the model folder"
        )

    def translate_hypotheses(
        self,
        sentences: Sequence[str],
        count: int,
        batch_size: int = 64,
        decoding: Decoding | None = None,
        max_source_length: int | None = None,
    ) -> list[list[str]]:
        """The `count` best translations of each sentence, best first: beam search with at least `count` beams
        (more when `decoding` or the saved decoding asks for more), as `translate_sentences` otherwise decodes;
        a blank sentence gets `[""]`. Two hypotheses may read the same once decoded. Engines that cannot
        return several hypotheses raise `UnsupportedFeature`."""
        raise UnsupportedFeature(f"the {self.engine} engine gives no alternative translations")

    def score(self, sources: Sequence[str], targets: Sequence[str], batch_size: int = 64) -> list[Score]:
        """How likely the model finds each `target` as the translation of its `source`
        (`hf_seq2seq.engines.scoring`): the target forced token by token, its end token included; a blank
        source or target scores `NO_SCORE`. Sources and targets are cut to the model's positions. Engines that
        cannot score raise `UnsupportedFeature`."""
        raise UnsupportedFeature(
            f"the {self.engine} engine gives no scores (needed for --scores and confidence)"
        )

    def settings(self, decoding: Decoding | None = None) -> dict:
        """The decoding used, for a report: the saved `generation_config` with `decoding`'s overrides."""
        return (decoding or Decoding()).settings(self)

    @property
    def replaced_overlong(self) -> Counter:
        """Over-long translations of short sources replaced by `translate_pieces` since the engine was loaded,
        by what replaced them: "hypothesis" (a shorter one of its n best) or "source" (none fitted: copied)."""
        return self.__dict__.setdefault("_replaced_overlong", Counter())

    @property
    def weights_bytes(self) -> int | None:
        """The bytes the model's weights take in memory as this engine holds them (what the server states per
        model); None where the engine cannot tell."""
        return None

    def describe(self) -> dict:
        """Facts for the server's /health and logs (the engine's name is the server's own fact)."""
        return {"precision": self.precision}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(engine={self.engine!r}, precision={self.precision!r})"


def translate_pieces(
    translator: Translator,
    pieces: Sequence[str],
    batch_size: int = 64,
    decoding: Decoding | None = None,
    max_source_length: int | None = None,
    progress: bool = False,
) -> list[str]:
    """`translator.translate_sentences(pieces, ...)`, where a short piece's translation is over-long
    (`hf_seq2seq.engines.length_guard`) the best of its `HYPOTHESES` best translations that fits, or the piece as
    written where none does (unless `decoding.length_guard` is False); each replacement counted in
    `translator.replaced_overlong`. What `translate` and `hf_seq2seq.formats.aligned.translate_aligned` give the
    model."""
    translations = translator.translate_sentences(pieces, batch_size, decoding, max_source_length, progress)
    if decoding is not None and not decoding.length_guard:
        return translations
    todo = [
        i for i, (piece, text) in enumerate(zip(pieces, translations, strict=True)) if overlong(piece, text)
    ]
    if not todo:
        return translations
    try:
        found = translator.translate_hypotheses(
            [pieces[i] for i in todo], HYPOTHESES, batch_size, decoding, max_source_length
        )
    except UnsupportedFeature:  # an engine without n-best lists: the source as written
        found = [[] for _ in todo]
    for i, hypotheses in zip(todo, found, strict=True):
        translations[i], kind = replacement(pieces[i], hypotheses)
        translator.replaced_overlong[kind] += 1
    return translations


def translate_alternatives(
    translator: Translator,
    sentences: Sequence[str],
    count: int,
    batch_size: int = 64,
    decoding: Decoding | None = None,
) -> list[list[str]]:
    """Up to `count` different translations of each sentence, best first (`Translator.translate_hypotheses`),
    each with the sentence's protected spans as written (see `translate`)."""
    split = ProtectedSplit(sentences)
    found = translator.translate_hypotheses(split.pieces, count, batch_size, decoding)
    ranked = zip(
        *(split.join([each[min(k, len(each) - 1)] for each in found]) for k in range(count)), strict=True
    )
    return [list(dict.fromkeys(alternatives)) for alternatives in ranked]


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
    """Translations of `texts` by `translator` (any engine's `Translator`, e.g. of
    `hf_seq2seq.engines.factory.load_translator`), in order.

    With `split_sentences`, a text of several sentences is cut into sentences (`hf_seq2seq.data.segmentation`),
    and a sentence longer than the sources of training into pieces that fit; all sentences of all texts are
    translated together, and each text's translations are joined back with its own spacing and line breaks.
    Sentences are batched by length to reduce padding. An empty (or blank) text translates to "", any other
    never does: what a reader expects unchanged (a list letter, an identifier, a file name) is copied, and a
    translation that comes back blank is the source as written. A sentence longer than `max_source_length`
    (default: the model's, `translator.max_source_length`) is truncated with a warning. What must not be
    translated (URLs, e-mail addresses, paths, inline code, placeholders, formatted numbers) is never given to
    the model and comes back as written: the model translates the text between
    (`hf_seq2seq.models.transformer_mt.protected_spans`), as the shipped pipeline does. A short source is never
    answered with an invented sentence (`translate_pieces`).
    """
    decoding = decoding or Decoding()
    tokenizer = translator.tokenizer

    def translate_batch(sentences: Sequence[str]) -> list[str]:
        split = ProtectedSplit(sentences)
        return split.join(
            translate_pieces(translator, split.pieces, batch_size, decoding, max_source_length, progress)
        )

    if not split_sentences:
        return translate_batch(texts)
    return translate_by_sentence(
        texts,
        translate_batch,
        source_lang,
        max_length=trained_length(tokenizer),
        length=token_length(tokenizer),
    )

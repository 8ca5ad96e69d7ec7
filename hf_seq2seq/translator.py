"""One small interface for every engine that translates with a saved model: `Translator`, and the factory
`load_translator`.

An engine is a class that subclasses `Translator`: `hf_seq2seq.inference.TorchTranslator` (the model's own
`generate()`), `hf_seq2seq.export.CTranslate2Translator` (an export of `hf-seq2seq export ctranslate2`) and,
where the package has it, `hf_seq2seq.onnx_export.OnnxTranslator` (ONNX Runtime). `translate`,
`evaluate_translations` (`hf_seq2seq.inference`), the server, the demo and the benchmarks take a `Translator`
and use nothing else of it.

This module imports neither torch nor an engine's package: `load_translator` imports the engine it loads.
"""

from __future__ import annotations

import os
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import TYPE_CHECKING

from .decoding import Decoding

if TYPE_CHECKING:
    from transformers import GenerationConfig, PreTrainedTokenizerBase

ENGINES = ("torch", "ctranslate2", "onnxruntime")
"""The engines `load_translator` knows (onnxruntime where the package has `hf_seq2seq.onnx_export`)."""
FULL_PRECISIONS = ("fp32", "float32")
"""The precision names of unreduced weights (torch's, CTranslate2's): a report names any other precision."""


class Translator(ABC):
    """A loaded model that translates sentences, whatever runs it.

    Attributes (plain attributes or properties of a subclass):

    * `engine`: "torch", "ctranslate2" or "onnxruntime";
    * `tokenizer`: the model's tokenizer (a `PreTrainedTokenizerBase`);
    * `generation_config`: the saved decoding (a transformers `GenerationConfig`: beams, length rule, limits);
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
        `hf_seq2seq.inference.translate`'s). Every engine does it the same way, through
        `hf_seq2seq.decoding.translate_in_batches`: batches of at most `batch_size` sentences of similar
        length; a blank sentence translates to ""; a sentence longer than `max_source_length` (default:
        `self.max_source_length`) is truncated with a warning; each translation is at most the saved length
        rule `max_length_a * S + max_length_b` new tokens (S: the batch's longest source) unless `decoding`
        sets `max_new_tokens`; the saved decoding unless `decoding` overrides it."""

    def settings(self, decoding: Decoding | None = None) -> dict:
        """The decoding used, for a report: the saved `generation_config` with `decoding`'s overrides."""
        return (decoding or Decoding()).settings(self)

    def describe(self) -> dict:
        """Facts for the server's /health and logs (the engine's name is the server's own fact)."""
        return {"precision": self.precision}

    def __repr__(self) -> str:
        return f"{type(self).__name__}(engine={self.engine!r}, precision={self.precision!r})"


def load_translator(
    folder: str | os.PathLike[str],
    engine: str = "torch",
    precision: str = "fp32",
    trust_remote_code: bool = False,
) -> Translator:
    """The `Translator` of `folder` for `engine` (one of `ENGINES`):

    * "torch": a saved model folder, at `precision` (`hf_seq2seq.inference.PRECISIONS`; see `set_precision`),
      on cuda if available, else cpu (`hf_seq2seq.inference.TorchTranslator`);
    * "ctranslate2": an export of `hf-seq2seq export ctranslate2` (`hf_seq2seq.export.CTranslate2Translator`),
      which keeps the weight type it was exported with: `precision` is "fp32" (the default, meaning as
      exported) or the export's quantization;
    * "onnxruntime": an ONNX export, loaded by `hf_seq2seq.onnx_export.OnnxTranslator(folder, precision=...)`.

    `trust_remote_code` is for the torch engine (a Hub folder's own code). Raises ValueError for an unknown
    engine or a precision the engine does not take.
    """
    if engine == "torch":
        from .inference import PRECISIONS, TorchTranslator, load_model_and_tokenizer

        if precision not in PRECISIONS:  # before loading the model
            raise ValueError(f"precision must be one of {', '.join(PRECISIONS)}; got {precision!r}")
        model, tokenizer = load_model_and_tokenizer(folder, trust_remote_code=trust_remote_code)
        return TorchTranslator(model, tokenizer, precision)
    if engine == "ctranslate2":
        from .export import CTranslate2Translator

        # "fp32", the command line's default, keeps the export's weight type, as it always has
        return CTranslate2Translator(folder, precision=None if precision == "fp32" else precision)
    if engine == "onnxruntime":
        try:
            from .onnx_export import OnnxTranslator
        except ModuleNotFoundError as error:
            if error.name != f"{__package__}.onnx_export":
                raise  # the module is there, and lacks a package of its own (e.g. onnxruntime)
            raise ValueError(
                f"engine 'onnxruntime' needs {__package__}.onnx_export, which this version of the package lacks"
            ) from error
        return OnnxTranslator(folder, precision=precision)
    raise ValueError(f"engine must be one of {', '.join(ENGINES)}; got {engine!r}")


__all__ = ["ENGINES", "FULL_PRECISIONS", "Translator", "load_translator"]

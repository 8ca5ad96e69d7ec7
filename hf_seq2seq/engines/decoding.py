"""How translations are decoded, shared by every engine: the `Decoding` settings, `generate()`'s compile
config, and the batching of sentences by length (`translate_in_batches`).

`hf_seq2seq.engines.base` (the engines' interface) and every engine (`torch_engine`, `ctranslate2_engine`,
`onnxruntime_engine`) import this module; it imports none of them.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Sequence
from dataclasses import asdict, dataclass
from typing import TYPE_CHECKING, TypeVar

from tqdm.auto import tqdm

if TYPE_CHECKING:
    from transformers import CompileConfig, PreTrainedTokenizerBase

logger = logging.getLogger(__name__)
T = TypeVar("T")


def compile_config() -> CompileConfig:
    """`generate()`'s settings for compiling the decoding step (see `Decoding.compile`): one graph, so that a
    graph break is an error rather than a silent slowdown; shapes made dynamic at the first recompilation
    (a new batch size or source length), so that a test set compiles a few graphs, not one per batch; inductor's
    default mode; on every device (`generate()` compiles on accelerators only unless told otherwise).

    "Every device" is a private flag of `CompileConfig` (no public one exists); a release that drops it decodes
    the same tokens uncompiled on CPU, only slower (tests/test_compiled_decoding.py compares the tokens)."""
    from transformers import CompileConfig

    config = CompileConfig(fullgraph=True, dynamic=None, mode="default")
    config._compile_all_devices = True
    return config


@dataclass(frozen=True)
class Decoding:
    """How translations are decoded; a field left None keeps the model's saved `generation_config.json`.

    The saved config is greedy, and limits a translation to `max_length_a * source_tokens + max_length_b` new
    tokens (both engines pass that limit to any model; this package's model's `generate()` also applies it by
    itself); `max_new_tokens` here sets a fixed limit instead.

    `compile` (opt-in, for long jobs) decodes through `GenerationMixin` with a static cache (keys and values
    in buffers of fixed size) and the decoding step compiled by `torch.compile` (`compile_config`): the same
    tokens as the default path, after a compilation of tens of seconds per new shape signature.
    """

    num_beams: int | None = None
    length_penalty: float | None = None
    max_new_tokens: int | None = None
    no_repeat_ngram_size: int | None = None
    compile: bool = False
    length_guard: bool = True
    """Replace an over-long translation of a short source (`hf_seq2seq.engines.length_guard`); False: every
    translation as the engine wrote it (what the checkpoint's own pipeline and the browser page give)."""

    def overrides(self) -> dict:
        """The generation settings this object sets (a None would override a saved setting)."""
        return {
            key: value
            for key, value in asdict(self).items()
            if value is not None and key not in ("compile", "length_guard")
        }

    def generate_kwargs(self) -> dict:
        """The `generate()` arguments: the overrides, and a static cache and compile config for `compile`."""
        kwargs = self.overrides()
        if self.compile:
            kwargs |= {"cache_implementation": "static", "compile_config": compile_config()}
        return kwargs

    def settings(self, model) -> dict:
        """What was used, for a report: the saved values of `model.generation_config` (a model's or a
        `hf_seq2seq.engines.base.Translator`'s) with this object's overrides."""
        config = model.generation_config
        settings = {
            "num_beams": config.num_beams,
            "length_penalty": config.length_penalty,
            "no_repeat_ngram_size": config.no_repeat_ngram_size,
        }
        if self.max_new_tokens is None:
            for name in ("max_length_a", "max_length_b", "max_new_tokens"):
                if getattr(config, name, None) is not None:
                    settings[name] = getattr(config, name)
        return (
            settings
            | self.overrides()
            | ({"compile": True} if self.compile else {})
            | ({} if self.length_guard else {"length_guard": False})
        )


def min_new_tokens(generation_config) -> int:
    """The fewest new tokens of a translation: the saved decoding's `min_new_tokens` (or its `min_length`, which
    counts the decoder's start token), never fewer than one. A non-empty source never gets an empty translation:
    a model that learned only sentences may end a single word's translation before its first token, so every
    engine forbids the end token until a first token is written, whatever the saved decoding says."""
    saved = getattr(generation_config, "min_new_tokens", None)
    if saved is None:
        saved = (getattr(generation_config, "min_length", None) or 0) - 1
    return max(1, saved)


def translate_in_batches(
    tokenizer: PreTrainedTokenizerBase,
    sentences: Sequence[str],
    batch_size: int,
    max_source_length: int,
    translate_batch: Callable[[list[str]], list[T]],
    progress: bool = False,
    blank: T = "",
) -> list[T]:
    """What every engine shares: `translate_batch` (which truncates to `max_source_length` tokens) runs on
    batches of sentences of similar length; blank sentences translate to `blank` without it; a warning names
    the sentences that are truncated. Returns the translations in the order of `sentences`, where one is blank
    for a sentence that is not, the sentence as written (`or_source`)."""
    if not sentences:  # e.g. only blank texts, split into no sentence (a tokenizer refuses an empty list)
        return []
    encoded = tokenizer(list(sentences), add_special_tokens=True, verbose=False)["input_ids"]
    too_long = [i for i, ids in enumerate(encoded) if len(ids) > max_source_length]
    if too_long:
        logger.warning(
            "%d input(s) longer than %d tokens were truncated (first: #%d, %d tokens)",
            len(too_long),
            max_source_length,
            too_long[0],
            len(encoded[too_long[0]]),
        )
    todo = sorted((i for i, s in enumerate(sentences) if s.strip()), key=lambda i: len(encoded[i]))
    out = [blank] * len(sentences)
    for start in tqdm(
        range(0, len(todo), batch_size), desc="translating", unit="batch", disable=not progress
    ):
        index = todo[start : start + batch_size]
        for i, text in zip(index, translate_batch([sentences[i] for i in index]), strict=True):
            out[i] = or_source(text, sentences[i])
    return out


def or_source(translation: T, source: str) -> T:
    """`translation` (a text, or a tuple of hypotheses), where blank the `source` as written: a first token may
    decode to nothing, and a translator never deletes the reader's text."""
    if isinstance(translation, str):
        return translation if translation.strip() else source
    return type(translation)(or_source(each, source) for each in translation)

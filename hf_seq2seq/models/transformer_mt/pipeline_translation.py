"""A ``translation`` pipeline for encoder-decoder models, shipped inside every Hub folder.

transformers 5.x removed the ``translation``, ``summarization`` and ``text2text-generation`` pipelines, so
``pipeline("translation", model=...)`` raises ``KeyError`` for every model that does not bring its own. A Hub
folder built by :mod:`hf_seq2seq.hub` brings this one: the file is copied next to the model code and
``config.json`` names it under ``custom_pipelines``, so

    pipeline("translation", model="user/name", trust_remote_code=True)("Hello!")
    # [{'translation_text': 'Bonjour !'}]

works as it did in transformers 4.x (``translation_<src>_to_<tgt>`` is registered as well). This file ships
inside checkpoints: it imports only ``torch``, ``transformers`` and its siblings ``sentence_splitting.py`` and
``protected_spans.py`` (URLs, placeholders, formatted numbers... are not given to the model and come back as
written, as from the package).

A text of several sentences is split into sentences, a sentence longer than the sources of training (the
tokenizer's ``model_max_length``, when set) is cut further to fit, and the pieces are translated as one batch and
joined back with the text's own spacing; ``split_sentences=False`` translates it whole. The splitter is
``sentence_splitting.py``, the one the ``hf_seq2seq`` package uses too, so a text is cut the same way here and by
its commands and server. The source language (for abbreviations) is ``src_lang`` if given, else the one of the
``translation_<src>_to_<tgt>`` task the folder registers, else English.
"""

import re
from typing import Any

from transformers import GenerationConfig, Pipeline

from .protected_spans import ProtectedSplit
from .sentence_splitting import split_text, trained_length

_TASK = re.compile(r"translation_([^_]+)_to_[^_]+")


class TranslationPipeline(Pipeline):
    """Translate text with any ``generate()``-capable encoder-decoder model and its tokenizer.

    Call it with a string or a list of strings. A string gives a list of ``{"translation_text": ...}``
    records (one per returned sequence); a list of strings gives one record per string (a list of records
    per string when ``num_return_sequences > 1``). Keyword arguments other than ``truncation`` and
    ``clean_up_tokenization_spaces`` are ``generate()`` arguments (``num_beams``, ``max_new_tokens``,
    ...); unset ones come from the model's ``generation_config.json``.
    """

    _pipeline_calls_generate = True
    _load_tokenizer = True
    _load_processor = False
    _load_image_processor = False
    _load_video_processor = False
    _load_feature_extractor = False

    def __init__(self, *args: Any, **kwargs: Any):
        # `generate()` settings given here apply to every call, under the call's own; kept here rather than left to
        # the base class, whose (private) handling of them differs between transformers releases
        keys = {key for key in vars(GenerationConfig()) if not key.startswith("_")} | {"generation_config"}
        self.generation_settings = {key: kwargs.pop(key) for key in keys & kwargs.keys()}
        super().__init__(*args, **kwargs)

    def _sanitize_parameters(
        self,
        truncation: bool | None = None,
        clean_up_tokenization_spaces: bool | None = None,
        split_sentences: bool | None = None,
        src_lang: str | None = None,
        **generate_kwargs: Any,
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        preprocess_params = {} if truncation is None else {"truncation": truncation}
        if split_sentences is not None:
            preprocess_params["split_sentences"] = split_sentences
        if src_lang is not None:
            preprocess_params["src_lang"] = src_lang
        postprocess_params = (
            {}
            if clean_up_tokenization_spaces is None
            else {"clean_up_tokenization_spaces": clean_up_tokenization_spaces}
        )
        return preprocess_params, generate_kwargs, postprocess_params

    def __call__(self, inputs: str | list[str], **kwargs: Any) -> list[dict[str, str]] | list[Any]:
        """Translate ``inputs`` (a string or a list of strings); see the class docstring for the output."""
        result = super().__call__(inputs, **kwargs)
        if isinstance(inputs, list) and all(len(records) == 1 for records in result):
            return [records[0] for records in result]
        return result

    def preprocess(
        self, text: str, truncation: bool = True, split_sentences: bool = True, src_lang: str | None = None
    ) -> dict[str, Any]:
        if not isinstance(text, str):
            raise TypeError(f"TranslationPipeline translates strings, got {type(text).__name__}")
        if split_sentences:
            language = src_lang or self.source_language()
            sentences, separators = split_text(text, language, trained_length(self.tokenizer), self.length)
        else:
            sentences, separators = [text], ["", ""]
        split = ProtectedSplit(sentences)  # the model translates the text between URLs, placeholders, ...
        inputs = self.tokenizer(
            split.pieces or [""], truncation=truncation, padding=True, return_tensors="pt"
        )
        return {**inputs, "split": split, "separators": separators, "empty": not sentences}

    def source_language(self) -> str:
        """The ``<src>`` of the ``translation_<src>_to_<tgt>`` task the model's config registers, else "en"."""
        for task in getattr(self.model.config, "custom_pipelines", None) or {}:
            match = _TASK.fullmatch(task)
            if match:
                return match[1]
        return "en"

    def length(self, sentence: str) -> int:
        """A sentence's length in the tokenizer's tokens, as the sentence splitter measures it."""
        return len(self.tokenizer(sentence, verbose=False)["input_ids"])

    def _forward(self, model_inputs: dict[str, Any], **generate_kwargs: Any) -> dict[str, Any]:
        split = model_inputs.pop("split")
        separators, empty = model_inputs.pop("separators"), model_inputs.pop("empty")
        pieces = model_inputs["input_ids"].shape[0]
        output_ids = self.model.generate(**model_inputs, **{**self.generation_settings, **generate_kwargs})
        # (pieces * num_return_sequences, T) -> (pieces, num_return_sequences, T)
        output_ids = output_ids.reshape(pieces, -1, output_ids.shape[-1])
        return {"output_ids": output_ids, "split": split, "separators": separators, "empty": empty}

    def postprocess(
        self, model_outputs: dict[str, Any], clean_up_tokenization_spaces: bool = False
    ) -> list[dict[str, str]]:
        """One record per returned sequence; each text's sentences joined back with its own separators."""
        output_ids, separators, split = (model_outputs[key] for key in ("output_ids", "separators", "split"))
        records = []
        for k in range(output_ids.shape[1]):
            texts = self.tokenizer.batch_decode(
                output_ids[:, k],
                skip_special_tokens=True,
                clean_up_tokenization_spaces=clean_up_tokenization_spaces,
            )
            if not split.pieces:  # only URLs, placeholders, ... (or nothing): the model's output is not used
                texts = []
            if model_outputs["empty"]:
                joined = separators[0]
            else:
                joined = separators[0] + "".join(
                    t.strip() + sep for t, sep in zip(split.join(texts), separators[1:], strict=True)
                )
            records.append({"translation_text": joined})
        return records

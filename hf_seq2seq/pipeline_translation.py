"""A ``translation`` pipeline for encoder-decoder models, shipped inside every Hub folder.

transformers 5.x removed the ``translation``, ``summarization`` and ``text2text-generation`` pipelines, so
``pipeline("translation", model=...)`` raises ``KeyError`` for every model that does not bring its own. A Hub
folder built by :mod:`hf_seq2seq.hub` brings this one: the file is copied next to the model code and
``config.json`` names it under ``custom_pipelines``, so

    pipeline("translation", model="user/name", trust_remote_code=True)("Hello!")
    # [{'translation_text': 'Bonjour !'}]

works as it did in transformers 4.x (``translation_<src>_to_<tgt>`` is registered as well). This file ships
inside checkpoints: it imports only ``torch`` and ``transformers``.
"""

from typing import Any

import torch
from transformers import Pipeline


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

    def _sanitize_parameters(
        self,
        truncation: bool | None = None,
        clean_up_tokenization_spaces: bool | None = None,
        **generate_kwargs: Any,
    ) -> tuple[dict[str, Any], dict[str, Any], dict[str, Any]]:
        preprocess_params = {} if truncation is None else {"truncation": truncation}
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

    def preprocess(self, text: str, truncation: bool = True) -> dict[str, torch.Tensor]:
        if not isinstance(text, str):
            raise TypeError(f"TranslationPipeline translates strings, got {type(text).__name__}")
        return self.tokenizer(text, truncation=truncation, return_tensors="pt")

    def _forward(
        self, model_inputs: dict[str, torch.Tensor], **generate_kwargs: Any
    ) -> dict[str, torch.Tensor]:
        in_batch = model_inputs["input_ids"].shape[0]
        output_ids = self.model.generate(**model_inputs, **self._prepare_generate_kwargs(generate_kwargs))
        # (B * num_return_sequences, T) -> (B, num_return_sequences, T)
        return {"output_ids": output_ids.reshape(in_batch, -1, output_ids.shape[-1])}

    def postprocess(
        self, model_outputs: dict[str, torch.Tensor], clean_up_tokenization_spaces: bool = False
    ) -> list[dict[str, str]]:
        return [
            {
                "translation_text": self.tokenizer.decode(
                    ids, skip_special_tokens=True, clean_up_tokenization_spaces=clean_up_tokenization_spaces
                )
            }
            for ids in model_outputs["output_ids"][0]
        ]


__all__ = ["TranslationPipeline"]

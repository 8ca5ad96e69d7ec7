"""hf_seq2seq: a from-scratch "Attention Is All You Need" translation Transformer for the Hugging Face stack.

Importing the package registers the model with `AutoConfig`, `AutoModel` and `AutoModelForSeq2SeqLM`, and
marks the classes for auto-class export, so `save_pretrained` writes the configuration/modeling code and
`auto_map` and the folder loads anywhere with `trust_remote_code=True`.
"""

from transformers import AutoConfig, AutoModel, AutoModelForSeq2SeqLM

from .configuration_transformer_mt import TransformerMTConfig
from .modeling_transformer_mt import (
    TransformerMTForConditionalGeneration,
    TransformerMTModel,
    TransformerMTPreTrainedModel,
)

AutoConfig.register(TransformerMTConfig.model_type, TransformerMTConfig, exist_ok=True)
AutoModel.register(TransformerMTConfig, TransformerMTModel, exist_ok=True)
AutoModelForSeq2SeqLM.register(TransformerMTConfig, TransformerMTForConditionalGeneration, exist_ok=True)

TransformerMTConfig.register_for_auto_class()
TransformerMTModel.register_for_auto_class("AutoModel")
TransformerMTForConditionalGeneration.register_for_auto_class("AutoModelForSeq2SeqLM")

__all__ = [
    "TransformerMTConfig",
    "TransformerMTForConditionalGeneration",
    "TransformerMTModel",
    "TransformerMTPreTrainedModel",
]

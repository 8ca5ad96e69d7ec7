"""The tokenizer and the model a run trains: reused or trained, loaded or built from the flags of
`hf_seq2seq.training.arguments.ModelArguments`."""

import logging
import time

import torch
from datasets import Dataset, IterableDataset
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Seq2SeqTrainingArguments,
)

from hf_seq2seq.data.tokenization import iter_texts, train_tokenizer
from hf_seq2seq.models.transformer_mt.configuration_transformer_mt import TransformerMTConfig
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import TransformerMTForConditionalGeneration
from hf_seq2seq.training.arguments import DataArguments, ModelArguments

logger = logging.getLogger(__name__)


def build_tokenizer(
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: Seq2SeqTrainingArguments,
    train_split: Dataset | IterableDataset,
    checkpoint: str | None,
) -> PreTrainedTokenizerBase:
    """Reuse a tokenizer (given, or the one saved with the checkpoint being resumed) or train one on train.

    With several processes, process 0 trains it and sends it to the others (`broadcast_object_list`): subword
    training is not guaranteed to break ties identically in every process, and all must share one vocabulary.
    This needs no shared filesystem, so it works across machines too.
    """
    source = model_args.tokenizer_name_or_path or checkpoint or model_args.model_name_or_path
    if source:
        return AutoTokenizer.from_pretrained(source)
    tokenizer = None
    if training_args.process_index == 0:
        if data_args.streaming and model_args.tokenizer_sample is None:
            logger.warning(
                "training the tokenizer on the whole stream: pass --tokenizer_sample N to bound it"
            )
        started = time.monotonic()
        tokenizer = train_tokenizer(
            iter_texts(train_split, max_examples=model_args.tokenizer_sample),
            vocab_size=model_args.vocab_size,
            model_type=model_args.tokenizer_model,
            model_max_length=max(data_args.max_source_length, data_args.max_target_length),
        )
        logger.info("trained a %d-token tokenizer in %.1f s", len(tokenizer), time.monotonic() - started)
    if training_args.world_size > 1:
        shared = [tokenizer]
        torch.distributed.broadcast_object_list(shared, src=0)
        tokenizer = shared[0]
    return tokenizer


def build_model(model_args: ModelArguments, tokenizer: PreTrainedTokenizerBase, label_smoothing: float):
    """A fresh model sized by `model_args`, its special ids copied from the tokenizer, or the saved model of
    `--model_name_or_path` (any seq2seq architecture). `label_smoothing` goes into the config of this
    package's model, whose loss applies it (see `smooth_labels_in_the_model`); another model's config is left
    alone. A saved model without a fixed number of positions (`max_position_embeddings`, e.g. T5's relative
    positions) is refused: the saved decoding is capped at the decoder's positions, and translation truncates
    sources to them."""
    if model_args.model_name_or_path:
        model = AutoModelForSeq2SeqLM.from_pretrained(model_args.model_name_or_path, trust_remote_code=True)
        if getattr(model.config, "max_position_embeddings", None) is None:
            raise ValueError(
                f"--model_name_or_path {model_args.model_name_or_path}: a {model.config.model_type!r} model has "
                "no max_position_embeddings; the saved decoding and translation limit lengths by it, so only "
                "models with a fixed number of positions (transformer_mt, Marian, BART, ...) are fine-tuned here"
            )
        if smooth_labels_in_the_model(model):
            model.config.label_smoothing = label_smoothing
        return model
    config = TransformerMTConfig(
        vocab_size=len(tokenizer),
        **model_args.network_settings(),
        max_position_shift=model_args.max_position_shift,
        label_smoothing=label_smoothing,
        pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )
    return TransformerMTForConditionalGeneration(config)


def smooth_labels_in_the_model(model: PreTrainedModel) -> bool:
    """Whether label smoothing goes into the model's own loss (`config.label_smoothing`) instead of the
    Trainer's smoother (`label_smoothing_factor`): for this package's model, whose loss then runs the output
    layer on the positions that have a label only (the Trainer's smoother needs the full (B, T, V) logits).
    Other models (Marian, BART, ...) do not read that config field: the Trainer smooths their labels."""
    return model.config.model_type == TransformerMTConfig.model_type

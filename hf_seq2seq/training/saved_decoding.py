"""The decoding saved with a trained model (its `generation_config.json`): greedy search, a length limit that
grows with the source, no repeated trigram."""

import math

import numpy as np
from datasets import Dataset, IterableDataset
from transformers import GenerationConfig, PreTrainedModel

# max_length_a: between the median and the largest target/source token ratios of en->fr (docs/training.md);
# the fitted max_length_b makes room for the rest
LENGTH_RATIO = 1.5
STREAMED_LENGTH_B = 14  # max_length_b when the train split is streamed: the fitted value on fra-eng en->fr


def output_length_rule(train: Dataset | IterableDataset, a: float = LENGTH_RATIO) -> tuple[float, int]:
    """`(a, b)` of the saved length limit `ceil(a * source_tokens + b)`: the smallest b with which every
    tokenized training target fits (a streamed split is not read ahead: `STREAMED_LENGTH_B`)."""
    if not isinstance(train, Dataset):
        return a, STREAMED_LENGTH_B
    sources = np.array([len(ids) for ids in train["input_ids"]])
    targets = np.array([len(ids) for ids in train["labels"]])
    return a, max(1, math.ceil(round(float((targets - a * sources).max()), 6)))


# no token trigram twice in a translation: it stops most greedy outputs that loop, and raises greedy test BLEU
# on the CPU presets' models (docs/decoding.md, docs/results.md)
NO_REPEAT_NGRAM_SIZE = 3


def greedy_generation_config(model: PreTrainedModel, length_rule: tuple[float, int]) -> GenerationConfig:
    """The saved decoding: greedy, at least one new token (the end token never comes first: a non-empty source
    never gets an empty translation), up to `a * source_tokens + b` new tokens (`length_rule_limit`), never past
    the decoder's positions, no repeated trigram. This package's model's `generate()` applies the length rule
    itself; for any model, the package's own decoding passes its limit to `generate()` (the validation of
    `hf_seq2seq.training.trainer.TranslationTrainer`, `hf_seq2seq.engines.torch_engine.TorchTranslator`)."""
    a, b = length_rule
    return GenerationConfig(
        decoder_start_token_id=model.config.decoder_start_token_id,
        eos_token_id=model.config.eos_token_id,
        pad_token_id=model.config.pad_token_id,
        num_beams=1,
        do_sample=False,
        min_new_tokens=1,
        max_new_tokens=model.config.max_position_embeddings - 1,
        max_length_a=a,
        max_length_b=b,
        no_repeat_ngram_size=NO_REPEAT_NGRAM_SIZE,
    )

"""From raw pairs to a saved, evaluated model: presets, the argument dataclasses and the `Seq2SeqTrainer` run.

`hf-seq2seq train` (`hf_seq2seq.cli.train`) parses the flags into the dataclasses here and calls :func:`run`.
Every `Seq2SeqTrainingArguments` flag works; a named preset (`--preset cpu|cpu-long|gpu|tiny`) only changes
defaults, so any flag given explicitly wins.

The same script runs on one process or many: under `torchrun` or `accelerate launch` the Trainer (through
accelerate) sets up DDP or FSDP, NCCL on GPUs and gloo with `--use_cpu`. Every process trains; process 0
alone writes the final model, `trainer_state.json`, the test translations and `test_results.json`.
"""

import copy
import logging
import math
import os
import time
from collections import Counter
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import torch
from datasets import Dataset, IterableDataset
from tqdm.auto import tqdm
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    EvalPrediction,
    GenerationConfig,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    TrainerCallback,
    set_seed,
)
from transformers.trainer_callback import ProgressCallback

from . import TransformerMTConfig, TransformerMTForConditionalGeneration
from .averaging import average_checkpoints
from .cpu_features import cpu_supports
from .data import load_corpora
from .decoding import Decoding
from .folder import add_pipeline_code, checkpoint_folders, last_checkpoint, register_pipeline
from .generation_transformer_mt import length_rule_limit
from .inference import TorchTranslator, evaluate_translations
from .metrics import build_compute_metrics, references_by_source
from .report import TRAINING_REPORT, EvalReport
from .tokenization import iter_texts, tokenize_dataset, train_tokenizer

logger = logging.getLogger(__name__)

TRANSLATIONS_FILE = "test_translations.txt"


@dataclass
class ModelArguments:
    """The network and its tokenizer (sizes use the Marian/BART names of `TransformerMTConfig`)."""

    preset: str = field(default="cpu", metadata={"help": "named defaults: cpu, cpu-long, gpu, tiny"})
    model_name_or_path: str | None = field(default=None, metadata={"help": "fine-tune a saved model folder"})
    tokenizer_name_or_path: str | None = field(default=None, metadata={"help": "reuse a saved tokenizer"})
    vocab_size: int = field(default=8000, metadata={"help": "subword vocabulary when training a tokenizer"})
    tokenizer_model: str = field(default="bpe", metadata={"help": "bpe or unigram"})
    tokenizer_sample: int | None = field(
        default=None,
        metadata={"help": "train the tokenizer on the first this many pairs (set it when streaming)"},
    )
    d_model: int = 512
    encoder_layers: int = 6
    decoder_layers: int = 6
    attention_heads: int = field(default=8, metadata={"help": "heads of every attention sub-layer"})
    ffn_dim: int = field(default=2048, metadata={"help": "inner size of every feed-forward sub-layer"})
    dropout: float = 0.1
    attention_dropout: float = 0.0
    normalize_before: bool = field(default=False, metadata={"help": "pre-LN instead of the paper's post-LN"})
    max_position_embeddings: int = 256


@dataclass
class DataArguments:
    """Where the pairs come from and how they are cut."""

    dataset: str = field(
        default="fra-eng",
        metadata={
            "help": "'fra-eng' (Tatoeba, downloaded or --data_path), a Hub dataset or a local file or folder; "
            "several, comma-separated, train on all of them (validation/test: the first's, or --eval_dataset)"
        },
    )
    dataset_config: str | None = field(
        default=None,
        metadata={"help": "Hub dataset config, e.g. fr-en; with several datasets, comma-separated, one each"},
    )
    dataset_probabilities: str | None = field(
        default=None,
        metadata={
            "help": "with several datasets: interleave their train pairs, drawing from each with these "
            "comma-separated probabilities (e.g. 0.8,0.2) until all are read once; without: one after the other"
        },
    )
    eval_dataset: str | None = field(
        default=None,
        metadata={"help": "take validation/test from this dataset instead of the first of --dataset"},
    )
    data_path: str | None = field(default=None, metadata={"help": "local fra.txt or fra-eng.zip for fra-eng"})
    source_lang: str = "en"
    target_lang: str = "fr"
    streaming: bool = field(
        default=False,
        metadata={
            "help": "stream the train split (needs --max_steps; each process reads its own part of it)"
        },
    )
    shuffle_buffer: int = field(
        default=10_000,
        metadata={
            "help": "with --streaming: shuffle the train stream through a buffer of this many pairs, and the "
            "order of its data files, anew each epoch (0: read in file order)"
        },
    )
    max_source_length: int = 64
    max_target_length: int = 64
    max_train_samples: int | None = None
    max_eval_samples: int | None = field(default=None, metadata={"help": "validation sources used for BLEU"})
    max_test_samples: int | None = None
    max_train_minutes: float | None = field(
        default=None,
        metadata={"help": "stop training (with a last evaluation and checkpoint) after this long"},
    )
    lr_decay_to_budget: bool = field(
        default=False,
        metadata={
            "help": "with --max_train_minutes: after warmup, decay the learning rate linearly to 0 at the end of "
            "the time budget (replaces --lr_scheduler_type)"
        },
    )


@dataclass
class FinalArguments:
    """What follows training: checkpoint averaging, and how the test split is decoded (the saved
    generation_config.json stays greedy)."""

    average_last: int | None = field(
        default=None,
        metadata={
            "help": "save the average of the weights of the last N checkpoints as the model (instead of the "
            "best checkpoint); keeps at least N + 1 checkpoints"
        },
    )
    num_beams: int | None = field(
        default=None, metadata={"help": "beams for the test evaluation (1: greedy)"}
    )
    length_penalty: float | None = field(default=None, metadata={"help": "beam score / length**this"})
    max_new_tokens: int | None = field(
        default=None, metadata={"help": "a fixed length limit for the test translations, instead of a*S+b"}
    )


# Defaults per preset; keys are fields of ModelArguments, DataArguments, FinalArguments or Seq2SeqTrainingArguments.
_COMMON = dict(
    eval_strategy="steps",
    save_strategy="steps",
    load_best_model_at_end=True,
    metric_for_best_model="bleu",
    greater_is_better=True,
    save_total_limit=2,
    predict_with_generate=True,
    lr_scheduler_type="inverse_sqrt",
    label_smoothing_factor=0.1,
    weight_decay=0.0,
    adam_beta2=0.98,
    max_grad_norm=1.0,
    train_sampling_strategy="group_by_length",
    report_to="none",
    logging_steps=50,
    dataloader_num_workers=0,
    dataloader_pin_memory=torch.cuda.is_available(),  # pinning without a GPU only warns
)
# ~25 min on a 2-core CPU: a small model, short sequences, a time budget instead of an epoch count
_CPU = dict(
    _COMMON,
    output_dir="runs/cpu",
    vocab_size=8000,
    d_model=256,
    encoder_layers=3,
    decoder_layers=3,
    attention_heads=4,
    ffn_dim=1024,
    dropout=0.05,
    max_source_length=48,
    max_target_length=48,
    max_eval_samples=600,
    max_train_minutes=22.0,
    num_beams=6,  # the test evaluation: 46.7 BLEU vs 43.3 greedy on a 22-minute model (README)
    lr_decay_to_budget=True,
    num_train_epochs=20,
    per_device_train_batch_size=128,
    per_device_eval_batch_size=128,
    learning_rate=2e-3,
    warmup_steps=500,
    eval_steps=800,
    save_steps=800,
    # autocast with fp32 master weights, only where the CPU has bf16 matmuls (avx512_bf16/AMX): without them
    # (e.g. AVX2-only CPUs) a bf16 training step is about 30 times slower than fp32
    bf16=cpu_supports("avx512_bf16") or cpu_supports("amx_tile"),
    use_cpu=not torch.cuda.is_available(),
)
PRESETS: dict[str, dict] = {
    "cpu": _CPU,
    # the same model and recipe for a 50-minute budget: about 2.3 times the data, a little more dropout
    "cpu-long": dict(
        _CPU,
        output_dir="runs/cpu-long",
        dropout=0.1,
        max_train_minutes=50.0,
        eval_steps=2000,
        save_steps=2000,
    ),
    # the paper's base model for one GPU
    "gpu": dict(
        _COMMON,
        output_dir="runs/gpu",
        vocab_size=16000,
        d_model=512,
        encoder_layers=6,
        decoder_layers=6,
        attention_heads=8,
        ffn_dim=2048,
        dropout=0.1,
        num_train_epochs=30,
        per_device_train_batch_size=256,
        per_device_eval_batch_size=256,
        learning_rate=1e-3,
        warmup_steps=4000,
        eval_steps=2000,
        save_steps=2000,
        bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
        dataloader_num_workers=4,
    ),
    # seconds-long runs for tests and smoke checks
    "tiny": dict(
        _COMMON,
        output_dir="runs/tiny",
        vocab_size=300,
        d_model=64,
        encoder_layers=2,
        decoder_layers=2,
        attention_heads=4,
        ffn_dim=128,
        dropout=0.0,
        max_source_length=24,
        max_target_length=24,
        num_train_epochs=40,
        per_device_train_batch_size=16,
        per_device_eval_batch_size=64,
        learning_rate=3e-3,
        warmup_steps=30,
        eval_steps=100,
        save_steps=100,
        logging_steps=10,
        disable_tqdm=True,
    ),
}


class TimeBudgetCallback(TrainerCallback):
    """Stop after `minutes` of training, with a final evaluation and checkpoint so the best model is kept.

    With several processes the slowest clock decides (an all-reduce per step), so that all of them stop at the
    same step: one that stopped alone would leave the others waiting in their next gradient all-reduce. The
    same synchronised clock drives `TimeBudgetSchedule`, so every process applies the same learning rate.
    """

    def __init__(self, minutes: float):
        self.seconds = minutes * 60
        self.start = 0.0
        self.elapsed = 0.0

    def fraction_left(self) -> float:
        return max(0.0, 1.0 - self.elapsed / self.seconds)

    def on_train_begin(self, args, state, control, **kwargs):
        self.start = time.monotonic()

    def on_step_end(self, args, state, control, **kwargs):
        elapsed = time.monotonic() - self.start
        if args.world_size > 1:
            clock = torch.tensor(elapsed, dtype=torch.float64, device=args.device)
            torch.distributed.all_reduce(clock, op=torch.distributed.ReduceOp.MAX)
            elapsed = clock.item()
        self.elapsed = elapsed
        if elapsed >= self.seconds:
            logger.info("time budget of %.1f min reached at step %d", self.seconds / 60, state.global_step)
            control.should_training_stop = True
            control.should_evaluate = args.eval_strategy != "no"
            control.should_save = True
        return control


class TimeBudgetProgress(ProgressCallback):
    """The training bar of a time-budgeted run: time used against the budget, with the steps so far (the
    default bar counts towards `num_train_epochs`, which a budgeted run never reaches)."""

    def __init__(self, budget: TimeBudgetCallback):
        super().__init__()
        self.budget = budget

    def on_train_begin(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.training_bar = tqdm(
                total=self.budget.seconds / 60,
                unit="min",
                bar_format="{percentage:3.0f}%|{bar}| {n:.1f}/{total:.1f} min of the time budget{postfix}",
                dynamic_ncols=True,
            )

    def on_step_end(self, args, state, control, **kwargs):
        if state.is_world_process_zero:
            self.training_bar.n = min(self.budget.elapsed, self.budget.seconds) / 60
            self.training_bar.set_postfix_str(f"step {state.global_step}", refresh=True)


class TimeBudgetSchedule:
    """Learning-rate factor: linear warmup over `warmup_steps`, times a linear decay over the time budget that
    reaches 0 when it runs out. Under a time budget the number of steps is unknown in advance, and ending at
    learning rate 0 is worth much more than the slowly decaying tail of inverse-square-root."""

    def __init__(self, warmup_steps: int, budget: TimeBudgetCallback):
        self.warmup_steps = warmup_steps
        self.budget = budget

    def __call__(self, step: int) -> float:
        return min(1.0, (step + 1) / max(1, self.warmup_steps)) * self.budget.fraction_left()


class TranslationTrainer(Seq2SeqTrainer):
    """A `Seq2SeqTrainer` whose validation decodes with the saved length rule, for any model, and that leaves
    the model's generation config as it was.

    The length rule (`max_length_a`, `max_length_b` of the generation config) is known to this package's
    model's `generate()` only: `prediction_step` passes its limit for the batch as `max_new_tokens` to any
    model (the same limit that our `generate()` would set itself), unless the call sets a length.

    `Seq2SeqTrainer.prediction_step` fills transformers' defaults into `model.generation_config` (`max_length=20`
    and all the rest); saved with the model, they would clash with the length rule in every later `generate()`.
    """

    def prediction_step(self, model, inputs, prediction_loss_only, ignore_keys=None, **gen_kwargs):
        if self.args.predict_with_generate and not prediction_loss_only:
            gen_kwargs = self.length_rule_kwargs(inputs, gen_kwargs)
        saved = copy.deepcopy(self.model.generation_config)
        try:
            return super().prediction_step(model, inputs, prediction_loss_only, ignore_keys, **gen_kwargs)
        finally:
            self.model.generation_config = saved

    def length_rule_kwargs(self, inputs: dict, gen_kwargs: dict) -> dict:
        """The `generate()` arguments of `Seq2SeqTrainer.prediction_step` (the call's own, else those that
        `evaluate()`/`predict()` stored), with `max_new_tokens` from the saved length rule for the batch's padded
        source length, unless they set a length or the generation config has no rule."""
        if not gen_kwargs and hasattr(self, "_gen_kwargs"):
            gen_kwargs = self._gen_kwargs
        gen_kwargs = {key: value for key, value in gen_kwargs.items() if value is not None}
        if {"max_new_tokens", "max_length"} & set(gen_kwargs) or "input_ids" not in inputs:
            return gen_kwargs
        limit = length_rule_limit(self.model.generation_config, inputs["input_ids"].shape[-1])
        return gen_kwargs | ({"max_new_tokens": limit} if limit is not None else {})

    def _issue_warnings_after_load(self, load_result) -> None:
        """Loading the best checkpoint at the end: the tied copies of the embedding are not in the checkpoint
        (saved once), nor what the model leaves out of its checkpoints (Marian's sinusoidal positions), which
        the Trainer would report as missing keys; the model keeps them, and the tied ones are tied again."""
        tied = set(getattr(self.model, "all_tied_weights_keys", {}))
        unsaved = set(self.model._keys_to_ignore_on_save or ())
        if load_result.missing_keys and set(load_result.missing_keys) <= tied | unsaved:
            self.model.tie_weights()
            load_result = load_result._replace(missing_keys=[])
        super()._issue_warnings_after_load(load_result)


class TimeBudgetSeq2SeqTrainer(TranslationTrainer):
    """A `Seq2SeqTrainer` that stops when `budget` runs out and whose learning rate follows `TimeBudgetSchedule`."""

    def __init__(self, *args, budget: TimeBudgetCallback, **kwargs):
        super().__init__(*args, callbacks=[budget], **kwargs)
        self.budget = budget

    def create_scheduler(self, num_training_steps: int, optimizer: torch.optim.Optimizer | None = None):
        if self.lr_scheduler is None:
            schedule = TimeBudgetSchedule(self.args.get_warmup_steps(num_training_steps), self.budget)
            self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(optimizer or self.optimizer, schedule)
        return self.lr_scheduler


def load_splits(data_args: DataArguments, seed: int = 42):
    """The train/validation/test splits with `src`, `tgt` (+ `references` on evaluation splits).

    With `--streaming` only train stays a stream, shuffled through a `--shuffle_buffer` of pairs (and its data
    files in a shuffled order) with `seed`, so that every process draws the same order; the Trainer's
    `set_epoch` reshuffles it each epoch. The evaluation splits are small and are read into memory, so that
    every process holds the same rows and BLEU is computed once over the whole split.
    """

    def load(names: str, configs: str | None, probabilities: str | None = None):
        return load_corpora(
            names.split(","),
            [config or None for config in configs.split(",")] if configs else None,
            probabilities=[float(p) for p in probabilities.split(",")] if probabilities else None,
            seed=seed,
            data_path=data_args.data_path,
            source_lang=data_args.source_lang,
            target_lang=data_args.target_lang,
            streaming=data_args.streaming,
        )

    splits = load(data_args.dataset, data_args.dataset_config, data_args.dataset_probabilities)
    if data_args.eval_dataset:
        evaluation = load(data_args.eval_dataset, None)
        splits["validation"], splits["test"] = evaluation["validation"], evaluation["test"]
    limits = {
        "train": data_args.max_train_samples,
        "validation": data_args.max_eval_samples,
        "test": data_args.max_test_samples,
    }
    for name, limit in limits.items():
        if limit is not None and name in splits:
            split = splits[name]
            splits[name] = (
                split.take(limit) if data_args.streaming else split.select(range(min(limit, len(split))))
            )
    if isinstance(splits["train"], IterableDataset) and data_args.shuffle_buffer > 0:
        splits["train"] = splits["train"].shuffle(seed=seed, buffer_size=data_args.shuffle_buffer)
    for name in ("validation", "test"):
        if isinstance(splits.get(name), IterableDataset):
            splits[name] = Dataset.from_list(list(splits[name]), features=splits[name].features)
    return splits


def prepare_streaming(data_args: DataArguments, training_args: Seq2SeqTrainingArguments) -> None:
    """Check and set what training on a stream needs; nothing happens without `--streaming`.

    A stream has no length, so the Trainer cannot count epochs: `--max_steps` is required.

    With several processes the Trainer's `accelerator.prepare` shares the stream out. By default accelerate
    reads it all on process 0 and sends each process its batches (`dispatch_batches`), which needs batches of
    one shape; this turns that off (unless `--accelerator_config` sets it), so that each process reads its own
    part: process `i` of `n` reads its share of the stream's shards (data files) when there are at least `n`
    (`IterableDataset.shard`), else it reads the whole stream and keeps batch `i` of every `n` (accelerate's
    `IterableDatasetShard`, which fills the last round up with pairs from the start). Splitting the stream
    beforehand with `datasets.distributed.split_dataset_by_node` would not do: accelerate would split each
    process's part again.
    """
    if not data_args.streaming:
        return
    if training_args.max_steps <= 0:
        raise ValueError(
            "--streaming needs --max_steps N: a stream has no length, so the number of training steps "
            "cannot be derived from --num_train_epochs"
        )
    if training_args.accelerator_config.dispatch_batches is None:
        training_args.accelerator_config.dispatch_batches = False


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
        d_model=model_args.d_model,
        encoder_layers=model_args.encoder_layers,
        decoder_layers=model_args.decoder_layers,
        encoder_attention_heads=model_args.attention_heads,
        decoder_attention_heads=model_args.attention_heads,
        encoder_ffn_dim=model_args.ffn_dim,
        decoder_ffn_dim=model_args.ffn_dim,
        dropout=model_args.dropout,
        attention_dropout=model_args.attention_dropout,
        normalize_before=model_args.normalize_before,
        max_position_embeddings=model_args.max_position_embeddings,
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


LENGTH_RATIO = (
    1.5  # max_length_a: French runs up to ~1.9x the English tokens (train p99), ~1.1x at the median
)
STREAMED_LENGTH_B = 14  # max_length_b when the train split is streamed: the fitted value on fra-eng en->fr


def output_length_rule(train: Dataset | IterableDataset, a: float = LENGTH_RATIO) -> tuple[float, int]:
    """`(a, b)` of the saved length limit `ceil(a * source_tokens + b)`: the smallest b with which every
    tokenized training target fits (a streamed split is not read ahead: `STREAMED_LENGTH_B`)."""
    if not isinstance(train, Dataset):
        return a, STREAMED_LENGTH_B
    sources = np.array([len(ids) for ids in train["input_ids"]])
    targets = np.array([len(ids) for ids in train["labels"]])
    return a, max(1, math.ceil(round(float((targets - a * sources).max()), 6)))


# no token trigram twice in a translation: on the CPU presets' models it takes greedy test outputs that loop
# from 1.7% (cpu) / 0.9% (cpu-long) to none, and greedy test BLEU up by 0.8-0.9 (README)
NO_REPEAT_NGRAM_SIZE = 3


def greedy_generation_config(model: PreTrainedModel, length_rule: tuple[float, int]) -> GenerationConfig:
    """The saved decoding: greedy, up to `a * source_tokens + b` new tokens (`length_rule_limit`), never past
    the decoder's positions, no repeated trigram. This package's model's `generate()` applies the length rule
    itself; for any model, the package's own decoding passes its limit to `generate()` (`TranslationTrainer`'s
    validation, `inference.translate`)."""
    a, b = length_rule
    return GenerationConfig(
        decoder_start_token_id=model.config.decoder_start_token_id,
        eos_token_id=model.config.eos_token_id,
        pad_token_id=model.config.pad_token_id,
        num_beams=1,
        do_sample=False,
        max_new_tokens=model.config.max_position_embeddings - 1,
        max_length_a=a,
        max_length_b=b,
        no_repeat_ngram_size=NO_REPEAT_NGRAM_SIZE,
    )


def validation_metrics(
    tokenizer: PreTrainedTokenizerBase, rows: Dataset, references: Sequence[Sequence[str]]
) -> Callable[[EvalPrediction], dict[str, float]]:
    """A `compute_metrics` for the tokenized validation `rows`: BLEU/chrF over each row once, all references.

    `build_compute_metrics` finds each prediction's references by its source ids, as the Trainer reorders
    the rows (length-grouped batches) and passes the ids along (`include_for_metrics=["inputs"]`). With
    several processes, `Seq2SeqTrainer.evaluate` gathers the predictions of all of them with
    `accelerator.gather`, which keeps the rows repeated to even out the last batches: those repeats are
    dropped here, so that each row counts once.
    """
    padding = (-100, tokenizer.pad_token_id)
    compute = build_compute_metrics(tokenizer, references_by_source(rows["input_ids"], references))
    expected = Counter(tuple(ids) for ids in rows["input_ids"])

    def compute_metrics(eval_pred: EvalPrediction) -> dict[str, float]:
        if eval_pred.inputs is None:
            return compute(eval_pred)  # which explains that it needs the inputs
        inputs = np.asarray(eval_pred.inputs)
        seen: Counter[tuple[int, ...]] = Counter()
        kept = []
        for position, source in enumerate(inputs):
            key = tuple(int(i) for i in source if i not in padding)
            seen[key] += 1
            # a repeat goes; a row that is not in the split stays, for `compute` to report
            if key not in expected or seen[key] <= expected[key]:
                kept.append(position)
        if len(kept) < expected.total():
            raise RuntimeError(f"evaluation returned {len(kept)} of the {expected.total()} validation rows")
        predictions = eval_pred.predictions
        if isinstance(predictions, tuple):
            predictions = predictions[0]
        return compute(
            EvalPrediction(
                predictions=np.asarray(predictions)[kept],
                label_ids=np.asarray(eval_pred.label_ids)[kept],
                inputs=inputs[kept],
            )
        )

    return compute_metrics


# Beam search scores above greedy search on a trained model, or a little below on a weak one; further below, the
# decoding is broken, e.g. by a transformers release whose decoding cache the model does not take.
BEAM_BELOW_GREEDY_LIMIT = 2.0  # test BLEU points


def decoding_problem(saved: dict, greedy: dict) -> str | None:
    """A plain warning when the saved decoding's test scores (`saved`, `evaluate_translations`' scores) are more
    than `BEAM_BELOW_GREEDY_LIMIT` BLEU below greedy search's (`greedy`), else None."""
    if greedy["bleu"] - saved["bleu"] <= BEAM_BELOW_GREEDY_LIMIT:
        return None
    return (
        f"the test BLEU with the saved decoding ({saved['decoding'].get('num_beams')} beams) is {saved['bleu']:.1f}, "
        f"{greedy['bleu'] - saved['bleu']:.1f} points below greedy search's {greedy['bleu']:.1f}: the decoding is "
        "broken, not the model (is this transformers release newer than the model code? see `hf-seq2seq "
        "upgrade`); do not publish this score"
    )


def run(
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: Seq2SeqTrainingArguments,
    final_args: FinalArguments | None = None,
) -> dict:
    """Train, pick the best checkpoint by validation BLEU, save, evaluate on test. Returns the test metrics.

    Under `torchrun`/`accelerate launch` every process calls this; only process 0 evaluates on test and writes
    the reports, and the other processes return `{train_runtime_s, global_step, world_size}` after training.
    """
    final_args = final_args or FinalArguments()
    started = time.monotonic()
    launched = int(os.environ.get("WORLD_SIZE", "1"))
    if launched > training_args.world_size:
        raise RuntimeError(
            f"launched as {launched} processes, but the Trainer found no distributed setup and would train "
            f"{launched} separate copies into one output_dir: without GPUs, pass --use_cpu true (gloo)"
        )
    prepare_streaming(data_args, training_args)
    if final_args.average_last and (training_args.save_total_limit or 0) < final_args.average_last + 1:
        training_args.save_total_limit = final_args.average_last + 1  # the last N and the best
    logger.info(
        "process %d of %d (local %d) on %s",
        training_args.process_index,
        training_args.world_size,
        training_args.local_process_index,
        training_args.device,
    )
    set_seed(training_args.seed)
    checkpoint = training_args.resume_from_checkpoint
    if checkpoint == "True" or checkpoint is True:  # resume from the newest checkpoint of output_dir
        checkpoint = last_checkpoint(training_args.output_dir)
        if checkpoint is None:
            raise FileNotFoundError(
                f"--resume_from_checkpoint: no complete checkpoint-* folder in {training_args.output_dir}"
            )

    with training_args.main_process_first(desc="loading the data"):  # downloads and caches once per machine
        splits = load_splits(data_args, training_args.seed)
    tokenizer = build_tokenizer(model_args, data_args, training_args, splits["train"], checkpoint)
    tokenized = tokenize_dataset(
        splits, tokenizer, data_args.max_source_length, data_args.max_target_length, keep_columns=()
    )

    model = build_model(model_args, tokenizer, training_args.label_smoothing_factor)
    if smooth_labels_in_the_model(model):
        training_args.label_smoothing_factor = 0.0  # the model's loss smooths; the Trainer must not again
    model_class = type(model)  # before the Trainer wraps it (FSDP2 changes the class of the model it shards)
    length_rule = output_length_rule(tokenized["train"])
    model.generation_config = greedy_generation_config(model, length_rule)
    logger.info("translations may have up to ceil(%g * source tokens + %d) new tokens", *length_rule)
    register_pipeline(model, data_args.source_lang, data_args.target_lang)
    n_params = sum(p.numel() for p in model.parameters())
    logger.info("model: %.1fM parameters, config %s", n_params / 1e6, model.config.to_diff_dict())
    global_batch_size = (
        training_args.train_batch_size * training_args.world_size * training_args.gradient_accumulation_steps
    )
    logger.info(
        "global batch: %d pairs per optimizer step = %d per process x %d processes x %d accumulation steps",
        global_batch_size,
        training_args.train_batch_size,
        training_args.world_size,
        training_args.gradient_accumulation_steps,
    )

    validation = tokenized.get("validation")
    compute_metrics = None
    if validation is not None:
        compute_metrics = validation_metrics(tokenizer, validation, splits["validation"]["references"])
        if "inputs" not in training_args.include_for_metrics:
            training_args.include_for_metrics.append("inputs")
    trainer_kwargs: dict = {}
    if data_args.max_train_minutes:
        budget = TimeBudgetCallback(data_args.max_train_minutes)
        trainer_kwargs = {"budget": budget} if data_args.lr_decay_to_budget else {"callbacks": [budget]}
    trainer_class = TimeBudgetSeq2SeqTrainer if "budget" in trainer_kwargs else TranslationTrainer
    trainer = trainer_class(
        model=model,
        args=training_args,
        train_dataset=tokenized["train"],
        eval_dataset=validation,
        processing_class=tokenizer,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model, pad_to_multiple_of=None),
        compute_metrics=compute_metrics,
        **trainer_kwargs,
    )
    if data_args.max_train_minutes and not training_args.disable_tqdm:
        trainer.remove_callback(ProgressCallback)
        trainer.add_callback(TimeBudgetProgress(budget))
    train_result = trainer.train(resume_from_checkpoint=checkpoint)
    trainer.save_model()  # the best checkpoint (load_best_model_at_end), on process 0, with the tokenizer
    trainer.save_state()
    trainer.end()  # the processes are done with each other: what follows runs on process 0 alone
    facts = {
        "train_runtime_s": train_result.metrics["train_runtime"],
        "global_step": trainer.state.global_step,
        "world_size": training_args.world_size,
    }
    if not trainer.is_world_process_zero():
        return facts
    add_pipeline_code(training_args.output_dir)  # config.json already names it (register_pipeline)
    if final_args.average_last:
        averaged = average_checkpoints(
            checkpoint_folders(training_args.output_dir)[-final_args.average_last :], training_args.output_dir
        )
        trainer.model.load_state_dict(AutoModelForSeq2SeqLM.from_pretrained(averaged).state_dict())
        if validation is not None and training_args.world_size == 1:  # evaluate() would wait for the others
            facts["averaged_validation_bleu"] = trainer.evaluate()["eval_bleu"]
        facts["averaged_checkpoints"] = final_args.average_last

    facts.update(
        best_checkpoint=trainer.state.best_model_checkpoint,
        best_validation_bleu=trainer.state.best_metric,
        preset=model_args.preset,
        train_pairs=len(tokenized["train"]) if not data_args.streaming else None,
        epochs=trainer.state.epoch,
        global_batch_size=global_batch_size,
    )
    test = splits.get("test")
    if test is None:
        return facts
    # under FSDP the weights are sharded over processes that have moved on: evaluate the saved model; else the
    # model as saved, without the autocast wrapper that mixed-precision training leaves around its forward
    final_model = (
        model_class.from_pretrained(training_args.output_dir).to(training_args.device)
        if trainer.is_fsdp_enabled
        else trainer.accelerator.unwrap_model(trainer.model, keep_fp32_wrapper=False)
    )
    translator = TorchTranslator(final_model.eval(), tokenizer)
    decoding = Decoding(final_args.num_beams, final_args.length_penalty, final_args.max_new_tokens)
    scores, hypotheses = evaluate_translations(
        translator,
        test["src"],
        test["references"],
        batch_size=training_args.per_device_eval_batch_size,
        decoding=decoding,
        source_lang=data_args.source_lang,
    )
    greedy = scores
    if scores["decoding"].get("num_beams", 1) != 1:
        greedy, _ = evaluate_translations(
            translator,
            test["src"],
            test["references"],
            batch_size=training_args.per_device_eval_batch_size,
            decoding=Decoding(num_beams=1, max_new_tokens=final_args.max_new_tokens),
            source_lang=data_args.source_lang,
        )
    facts.update(greedy_bleu=greedy["bleu"], greedy_chrf=greedy["chrf"])
    problem = decoding_problem(scores, greedy)
    if problem:  # recorded with the result; `hf-seq2seq train` prints it under the score
        facts["decoding_problem"] = problem
    Path(training_args.output_dir, TRANSLATIONS_FILE).write_text(
        "\n".join(hypotheses) + "\n", encoding="utf-8"
    )
    facts["run_wall_time_s"] = round(time.monotonic() - started, 1)
    report = EvalReport(
        **scores,
        model=training_args.output_dir,
        dataset=data_args.dataset,
        split="test",
        direction=f"{data_args.source_lang}-{data_args.target_lang}",
        parameters=n_params,
        training=facts,
    )
    report.save(Path(training_args.output_dir, TRAINING_REPORT))
    logger.info("test results: %s", report)
    return report.to_dict()

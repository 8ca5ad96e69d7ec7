"""The `Seq2SeqTrainer` subclasses of `hf-seq2seq train` and the function that builds the one a run needs.

`TranslationTrainer` validates with the saved length rule, leaves the model's generation config alone, and trains
on batches by tokens with `--max_tokens_per_batch` (`hf_seq2seq.training.token_batches`); `BudgetSeq2SeqTrainer`
adds the budget of time or tokens of `hf_seq2seq.training.time_budget` and its learning-rate schedule.
"""

import copy
from collections.abc import Callable

import pyarrow.compute as pc
import torch
from datasets import Dataset, IterableDataset
from torch.utils.data import DataLoader
from transformers import (
    DataCollatorForSeq2Seq,
    EvalPrediction,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
)
from transformers.trainer_callback import ProgressCallback

from hf_seq2seq.acceleration.cuda_graphs import GraphedTraining
from hf_seq2seq.models.transformer_mt.length_rule import length_rule_limit
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import TransformerMTForConditionalGeneration
from hf_seq2seq.training.arguments import DataArguments
from hf_seq2seq.training.time_budget import BudgetProgress, BudgetSchedule, TrainingBudget
from hf_seq2seq.training.token_batches import (
    SOURCE_COLUMN,
    TARGET_COLUMN,
    TokenBatchSampler,
    TokenBatchStream,
    collate_batches,
)


class TranslationTrainer(Seq2SeqTrainer):
    """A `Seq2SeqTrainer` whose validation decodes with the saved length rule, for any model, and that leaves
    the model's generation config as it was.

    The length rule (`max_length_a`, `max_length_b` of the generation config) is known to this package's
    model's `generate()` only: `prediction_step` passes its limit for the batch as `max_new_tokens` to any
    model (the same limit that our `generate()` would set itself), unless the call sets a length.

    `Seq2SeqTrainer.prediction_step` fills transformers' defaults into `model.generation_config` (`max_length=20`
    and all the rest); saved with the model, they would clash with the length rule in every later `generate()`.

    With `max_tokens_per_batch`, training batches hold at most that many padded source + target tokens instead of
    `per_device_train_batch_size` pairs: `get_train_dataloader` (the Trainer's hook for its training loader) batches
    a corpus in memory with `TokenBatchSampler` and a stream with `TokenBatchStream` (pools of `token_pool` pairs),
    and hands the loader to accelerate, which deals the batches out to the processes.

    With `cuda_graphs`, each training step's forward and backward replay CUDA graphs (`GraphedTraining`, one pair
    per batch shape): `compute_loss` calls the model through them; evaluation calls it as it is.
    """

    def __init__(
        self,
        *args,
        max_tokens_per_batch: int | None = None,
        token_pool: int = 10_000,
        cuda_graphs: bool = False,
        **kwargs,
    ):
        super().__init__(*args, **kwargs)
        self.max_tokens_per_batch = max_tokens_per_batch
        self.token_pool = token_pool
        self.cuda_graphs = cuda_graphs
        self.graphed: GraphedTraining | None = None
        if cuda_graphs:
            self.check_cuda_graphs()

    def check_cuda_graphs(self) -> None:
        """What `--cuda_graphs` cannot replay, refused before training starts."""
        needed = cuda_graphs_needs(self.args, self.model, self.compute_loss_func is not None)
        if needed:
            raise ValueError("--cuda_graphs needs " + "; ".join(needed))

    def compute_loss(self, model, inputs, return_outputs=False, num_items_in_batch=None):
        if self.cuda_graphs and model.training and not return_outputs:
            if self.graphed is None or self.graphed.model is not model:
                self.graphed = GraphedTraining(model)
            model = self.graphed
        return super().compute_loss(model, inputs, return_outputs, num_items_in_batch)

    def floating_point_ops(self, inputs: dict) -> int:
        """The Trainer's estimate of a step's FLOPs (6 x input tokens x parameters outside the embeddings, as
        `Trainer.floating_point_ops`), with the parameters counted once per model: the Trainer's own counts them at
        every step, walking all the model's modules, host time that a GPU's step waits on (docs/training.md)."""
        main_input = getattr(self.model, "main_input_name", "input_ids")
        if main_input not in inputs or not hasattr(self.model, "num_parameters"):
            return 0
        if getattr(self, "_counted_model", None) is not self.model:
            self._counted_model = self.model
            self._non_embedding_parameters = self.model.num_parameters(exclude_embeddings=True)
        return 6 * inputs[main_input].numel() * self._non_embedding_parameters

    def get_train_dataloader(self) -> DataLoader:
        if not self.max_tokens_per_batch:
            return super().get_train_dataloader()
        if self.train_dataset is None:
            raise ValueError("Trainer: training requires a train_dataset.")
        args = self.args
        seed = args.data_seed if args.data_seed is not None else args.seed
        workers = args.dataloader_num_workers
        loading = dict(
            num_workers=workers,
            pin_memory=args.dataloader_pin_memory,
            persistent_workers=args.dataloader_persistent_workers and workers > 0,
            prefetch_factor=args.dataloader_prefetch_factor if workers > 0 else None,
        )
        if isinstance(self.train_dataset, torch.utils.data.IterableDataset):
            stream = TokenBatchStream(self.train_dataset, self.max_tokens_per_batch, seed, self.token_pool)
            loader = DataLoader(
                stream, batch_size=1, collate_fn=collate_batches(self.data_collator), **loading
            )
        else:
            columns = self.train_dataset.with_format("arrow")
            sampler = TokenBatchSampler(
                *(pc.list_value_length(columns[name]).to_numpy() for name in (SOURCE_COLUMN, TARGET_COLUMN)),
                max_tokens=self.max_tokens_per_batch,
                seed=seed,
                num_processes=args.world_size,
            )
            loader = DataLoader(
                self.train_dataset, batch_sampler=sampler, collate_fn=self.data_collator, **loading
            )
        return self.accelerator.prepare(loader)

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

    def without_unsaved_missing_keys(self, load_result):
        """`load_result` (of `load_state_dict`) without its missing keys when all of them are weights that a
        checkpoint leaves out on purpose: the tied copies of the embedding (saved once), which are tied again,
        and what the model does not save (`_keys_to_ignore_on_save`, e.g. Marian's sinusoidal positions),
        which the model keeps."""
        tied = set(getattr(self.model, "all_tied_weights_keys", {}))
        unsaved = set(getattr(self.model, "_keys_to_ignore_on_save", None) or ())
        if load_result.missing_keys and set(load_result.missing_keys) <= tied | unsaved:
            self.model.tie_weights()
            load_result = load_result._replace(missing_keys=[])
        return load_result

    def _issue_warnings_after_load(self, load_result) -> None:
        """Loading a checkpoint (the best one at the end, or the one resumed): report only the keys that are
        really missing (see `without_unsaved_missing_keys`), not those the Trainer would call missing.

        This overrides a private method of transformers' `Trainer`: no public hook sees the load result before
        the Trainer reports it, and the alternatives change more (loading the best checkpoint ourselves would
        replace `--load_best_model_at_end`; a logging filter would depend on the warning's text). It is
        guarded like the shipped model's private calls: the base method is called only where it exists, so a
        transformers release without it (which then no longer calls it either) trains as before, and one that
        renames it only brings the spurious warning back (tests/test_training.py checks both).
        """
        load_result = self.without_unsaved_missing_keys(load_result)
        issue_warnings = getattr(super(), "_issue_warnings_after_load", None)
        if issue_warnings is not None:
            issue_warnings(load_result)


def cuda_graphs_needs(
    args: Seq2SeqTrainingArguments, model: torch.nn.Module | None = None, custom_loss: bool = False
) -> list[str]:
    """What `--cuda_graphs` needs and these training arguments lack, and, given them, the model and the Trainer's
    loss (`custom_loss`: a loss function of its own)."""
    needs = {
        f"a CUDA GPU (the device is {args.device})": args.device.type != "cuda",
        "one process (DDP's gradient hooks are not recorded)": args.world_size > 1,
        "no --torch_compile (its mode reduce-overhead records CUDA graphs of its own)": args.torch_compile,
        "no activation checkpointing (--gradient_checkpointing: it re-runs the forward with saved random states)": (
            args.gradient_checkpointing
        ),
    }
    if model is not None:
        needs |= {
            "this package's model class, known to read nothing on the host in training (transformers' masks "
            f"do; a saved folder's own code is not assumed to): this is {type(model).__module__}."
            f"{type(model).__name__}": not isinstance(model, TransformerMTForConditionalGeneration),
            "the model's own loss (the Trainer's label smoother or a compute_loss_func needs the logits, which "
            "stay inside the graphs)": custom_loss or args.label_smoothing_factor > 0,
        }
    return [what for what, lacking in needs.items() if lacking]


class BudgetSeq2SeqTrainer(TranslationTrainer):
    """A `Seq2SeqTrainer` that stops when `budget` runs out (it counts every batch trained on, for a token
    budget), and whose learning rate follows `BudgetSchedule` if `decay_to_budget`."""

    def __init__(self, *args, budget: TrainingBudget, decay_to_budget: bool, **kwargs):
        super().__init__(*args, callbacks=[budget], **kwargs)
        self.budget = budget
        self.decay_to_budget = decay_to_budget

    def training_step(self, model, inputs, num_items_in_batch=None):
        self.budget.count(inputs)
        return super().training_step(model, inputs, num_items_in_batch)

    def create_scheduler(self, num_training_steps: int, optimizer: torch.optim.Optimizer | None = None):
        if self.lr_scheduler is None and self.decay_to_budget:
            # below 1: a share of the budget (`get_warmup_steps` would take it of `num_training_steps`, which a
            # budgeted run never reaches)
            warmup = self.args.warmup_steps
            schedule = BudgetSchedule(warmup if warmup < 1 else self.args.get_warmup_steps(0), self.budget)
            # a function, not the callable object: LambdaLR saves an object's attributes in each checkpoint (the
            # budget, which a resumed run's weights-only load refuses) and would put them back over the live
            # budget's; a resumed run counts its budget anew (`TrainingBudget`)
            self.lr_scheduler = torch.optim.lr_scheduler.LambdaLR(
                optimizer or self.optimizer, lambda step: schedule(step)
            )
        return super().create_scheduler(num_training_steps, optimizer)


def build_trainer(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    data_args: DataArguments,
    training_args: Seq2SeqTrainingArguments,
    train: Dataset | IterableDataset,
    validation: Dataset | None,
    compute_metrics: Callable[[EvalPrediction], dict[str, float]] | None,
) -> TranslationTrainer:
    """The Trainer of a run: with `--max_train_minutes` or `--max_train_tokens`, one that stops when the budget
    is spent (and shows it in its progress bar), whose learning rate decays to the budget's end with
    `--lr_decay_to_budget`; with `--dataloader_pin_memory`, one that copies batches to the device without
    waiting."""
    cuda_graphs = data_args.cuda_graphs
    if cuda_graphs is None:  # where the run can (the gpu preset's default)
        cuda_graphs = not cuda_graphs_needs(training_args, model)
    trainer_kwargs: dict = {
        "max_tokens_per_batch": data_args.max_tokens_per_batch,
        "cuda_graphs": cuda_graphs,
    }
    if data_args.shuffle_buffer > 0:
        trainer_kwargs["token_pool"] = data_args.shuffle_buffer
    budget = None
    if data_args.max_train_minutes or data_args.max_train_tokens:
        budget = TrainingBudget(data_args.max_train_minutes, data_args.max_train_tokens)
        trainer_kwargs |= {"budget": budget, "decay_to_budget": data_args.lr_decay_to_budget}
    if training_args.dataloader_pin_memory:
        # pinned batches go to the GPU as asynchronous copies (accelerate's `non_blocking`): a blocking copy waits,
        # at every step, until the GPU has run all the work queued before it
        training_args.accelerator_config.non_blocking = True
    trainer_class = BudgetSeq2SeqTrainer if budget is not None else TranslationTrainer
    trainer = trainer_class(
        model=model,
        args=training_args,
        train_dataset=train,
        eval_dataset=validation,
        processing_class=tokenizer,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model, pad_to_multiple_of=None),
        compute_metrics=compute_metrics,
        **trainer_kwargs,
    )
    if budget is not None and not training_args.disable_tqdm:
        trainer.remove_callback(ProgressCallback)
        trainer.add_callback(BudgetProgress(budget))
    return trainer

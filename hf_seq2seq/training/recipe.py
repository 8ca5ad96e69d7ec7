"""From raw pairs to a saved, evaluated model: the steps of `hf-seq2seq train`, in order, in :func:`run`.

`hf-seq2seq train` (`hf_seq2seq.cli.train`) parses the flags into the dataclasses of
`hf_seq2seq.training.arguments` over the defaults of a preset (`hf_seq2seq.training.presets`) and calls
:func:`run`. Every `Seq2SeqTrainingArguments` flag works; a named preset (`--preset cpu|cpu-long|gpu|gpu-wmt|tiny`)
only changes defaults, so any flag given explicitly wins.

The same script runs on one process or many: under `torchrun` or `accelerate launch` the Trainer (through
accelerate) sets up DDP or FSDP, NCCL on GPUs and gloo with `--use_cpu`. Every process trains; process 0
alone writes the final model, `trainer_state.json`, the test translations and `test_results.json`.
"""

import logging
import os
import time
from pathlib import Path

from datasets import Dataset, DatasetDict
from transformers import (
    AutoModelForSeq2SeqLM,
    PreTrainedModel,
    PreTrainedTokenizerBase,
    Seq2SeqTrainingArguments,
    set_seed,
)

from hf_seq2seq.acceleration.attention_kernels import parse_sdpa_backends, sdpa_backends
from hf_seq2seq.acceleration.compilation import sizes_apart
from hf_seq2seq.data.augmentation import join_random_pairs
from hf_seq2seq.data.fragments import FragmentSettings, add_fragment_examples, fragment_counts
from hf_seq2seq.data.loaders import exclusions
from hf_seq2seq.data.tokenization import tokenize_dataset
from hf_seq2seq.engines.packed_weights import use_packed_weights
from hf_seq2seq.engines.torch_engine import TorchTranslator
from hf_seq2seq.evaluation.report import TRAINING_REPORT, EvalReport
from hf_seq2seq.models.folder import (
    add_pipeline_code,
    checkpoint_folders,
    last_checkpoint,
    record_version,
    register_pipeline,
)
from hf_seq2seq.training.arguments import DataArguments, FinalArguments, ModelArguments
from hf_seq2seq.training.averaging import average_checkpoints
from hf_seq2seq.training.builders import build_model, build_tokenizer, smooth_labels_in_the_model
from hf_seq2seq.training.checks import setting_problems
from hf_seq2seq.training.data_loading import load_splits, prepare_streaming
from hf_seq2seq.training.final_evaluation import (
    TRANSLATIONS_FILE,
    decoding_problem,
    evaluate_standard,
    evaluate_test,
    final_model,
)
from hf_seq2seq.training.saved_decoding import greedy_generation_config, output_length_rule
from hf_seq2seq.training.trainer import BudgetSeq2SeqTrainer, TranslationTrainer, build_trainer
from hf_seq2seq.training.validation import validation_metrics

logger = logging.getLogger(__name__)


def run(
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: Seq2SeqTrainingArguments,
    final_args: FinalArguments | None = None,
) -> dict:
    """Train, keep the best checkpoint by validation BLEU (the last with `--load_best_model_at_end false`, as the
    CPU presets do), save, evaluate on test. Returns the test metrics.

    Under `torchrun`/`accelerate launch` every process calls this; only process 0 evaluates on test and writes
    the reports, and the other processes return `train_and_save`'s facts after training.
    """
    final_args = final_args or FinalArguments()
    problems = setting_problems(model_args, data_args, training_args, final_args)
    if problems:  # before any data is read (`hf-seq2seq train` refuses them as it parses its flags)
        raise ValueError("\n".join(problems))
    started = time.monotonic()
    checkpoint = prepare_run(data_args, training_args, final_args)
    splits, tokenizer, tokenized = set_up_data(model_args, data_args, training_args, checkpoint)
    model = set_up_model(model_args, data_args, training_args, tokenizer, tokenized["train"])
    model_class = type(model)  # before the Trainer wraps it (FSDP2 changes the class of the model it shards)
    n_params, global_batch_size = log_sizes(model, training_args, data_args.max_tokens_per_batch)
    trainer = set_up_trainer(model, tokenizer, data_args, training_args, splits, tokenized)
    with (
        sdpa_backends(parse_sdpa_backends(model_args.sdpa_backends)),
        sizes_apart(training_args.torch_compile),
    ):
        facts = train_and_save(trainer, checkpoint)
    if not trainer.is_world_process_zero():
        return facts
    add_pipeline_code(training_args.output_dir)  # config.json already names it (register_pipeline)
    if final_args.average_last:
        facts |= use_averaged_checkpoints(
            trainer, final_args.average_last, tokenized.get("validation") is not None
        )
    facts.update(
        best_checkpoint=trainer.state.best_model_checkpoint,
        best_validation_bleu=trainer.state.best_metric,
        kept_checkpoint="best" if training_args.load_best_model_at_end else "last",
        preset=model_args.preset,
        train_pairs=len(splits["train"]) if not data_args.streaming else None,
        epochs=trainer.state.epoch,
        global_batch_size=global_batch_size,
    )
    kept_out = {
        entry
        for name in data_args.dataset.split(",")
        for entry in exclusions(name, data_args.exclude_test_sets)
    }
    if kept_out:  # the test sets no train or validation pair shares a side with
        facts["kept_out_of_training"] = ", ".join(sorted(kept_out))
    if not data_args.streaming:  # a stream has no length (and takes no joined or fragment examples)
        fragments = fragment_counts(len(splits["train"]), data_args.phrase_share, data_args.variant_share)
        if data_args.concat_share:
            facts["joined_examples"] = len(tokenized["train"]) - len(splits["train"]) - sum(fragments)
        if any(fragments):
            facts["phrase_examples"], facts["variant_examples"] = fragments
    if data_args.max_tokens_per_batch:
        facts["max_tokens_per_batch"] = data_args.max_tokens_per_batch
    if model_args.sdpa_backends:
        facts["sdpa_backends"] = model_args.sdpa_backends
    if training_args.torch_compile:
        facts |= compile_settings(trainer)
    if trainer.graphed is not None:
        facts["cuda_graph_shapes"] = trainer.graphed.graphs  # batch shapes recorded (a pair of graphs each)
    test = splits.get("test")
    if test is None:
        return facts
    translator = TorchTranslator(final_model(trainer, model_class).eval(), tokenizer)
    scores = evaluate_on_test(trainer, translator, test, data_args, final_args, facts)
    standard = evaluate_standard(
        translator,
        final_args,
        trainer.args.per_device_eval_batch_size,
        data_args.source_lang,
        data_args.target_lang,
        training_args.output_dir,
    )
    if standard is not None:
        facts.update(
            standard_test_set=standard.dataset, standard_bleu=standard.bleu, standard_chrf=standard.chrf
        )
    facts["run_wall_time_s"] = round(time.monotonic() - started, 1)
    return save_report(scores, facts, n_params, data_args, training_args)


def prepare_run(
    data_args: DataArguments, training_args: Seq2SeqTrainingArguments, final_args: FinalArguments
) -> str | None:
    """Check the launch and complete the arguments; seed. Returns the checkpoint to resume from, if any."""
    launched = int(os.environ.get("WORLD_SIZE", "1"))
    if launched > training_args.world_size:
        raise RuntimeError(
            f"launched as {launched} processes, but the Trainer found no distributed setup and would train "
            f"{launched} separate copies into one output_dir: without GPUs, pass --use_cpu true (gloo)"
        )
    prepare_streaming(data_args, training_args)
    if training_args.torch_compile:
        # batches change shape from step to step (by tokens, in every dimension): compile once with dynamic shapes,
        # not first for the first batch's shape and then again, dynamic, at the second (accelerate reads this when
        # the Trainer sets it up, as it reads the backend that the training arguments set the same way)
        os.environ.setdefault("ACCELERATE_DYNAMO_USE_DYNAMIC", "1")
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
    return checkpoint


def compile_settings(trainer: TranslationTrainer) -> dict:
    """How accelerate compiled the model (`--torch_compile`): backend, mode, dynamic shapes, and regional compilation
    (each repeated layer compiled alone: `ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION=1`), as report facts."""
    plugin = trainer.accelerator.state.dynamo_plugin
    return {
        "torch_compile_backend": plugin.backend.value.lower(),
        "torch_compile_mode": plugin.mode,
        "torch_compile_dynamic": plugin.dynamic,
        "torch_compile_regional": getattr(plugin, "use_regional_compilation", False),  # accelerate >= 1.5
    }


def set_up_data(
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: Seq2SeqTrainingArguments,
    checkpoint: str | None,
) -> tuple[dict, PreTrainedTokenizerBase, DatasetDict]:
    """`(splits, tokenizer, tokenized)`: the raw splits, the tokenizer, and the splits tokenized by it."""
    with training_args.main_process_first(desc="loading the data"):  # downloads and caches once per machine
        splits = load_splits(data_args, training_args.seed)
    tokenizer = build_tokenizer(model_args, data_args, training_args, splits["train"], checkpoint)
    tokenized = tokenize_dataset(
        splits, tokenizer, data_args.max_source_length, data_args.max_target_length, keep_columns=()
    )
    if data_args.concat_share:  # not with --streaming (`setting_problems`)
        tokenized["train"] = join_random_pairs(
            tokenized["train"],
            data_args.concat_share,
            data_args.concat_max_pairs,
            data_args.max_source_length,
            data_args.max_target_length,
            training_args.seed,
        )
    fragments = FragmentSettings(
        data_args.phrase_share,
        data_args.variant_share,
        data_args.phrase_min_count,
        data_args.max_source_length,
        data_args.max_target_length,
        training_args.seed,
    )
    with training_args.main_process_first(desc="mining phrase pairs"):  # aligns once, into the cache
        tokenized["train"] = add_fragment_examples(tokenized["train"], splits["train"], tokenizer, fragments)
    return splits, tokenizer, tokenized


def set_up_model(
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: Seq2SeqTrainingArguments,
    tokenizer: PreTrainedTokenizerBase,
    train: Dataset,
) -> PreTrainedModel:
    """The model the Trainer trains, with its label smoothing, saved decoding (the length rule fitted on the
    tokenized `train` split), translation pipeline and package version (`record_version`) set; its validation
    translations decode on the torch engine's packed weights, as `hf-seq2seq translate` does."""
    model = use_packed_weights(build_model(model_args, tokenizer, training_args.label_smoothing_factor))
    if smooth_labels_in_the_model(model):
        training_args.label_smoothing_factor = 0.0  # the model's loss smooths; the Trainer must not again
    length_rule = output_length_rule(train)
    model.generation_config = greedy_generation_config(model, length_rule)
    logger.info("translations may have up to ceil(%g * source tokens + %d) new tokens", *length_rule)
    register_pipeline(model, data_args.source_lang, data_args.target_lang)
    # in every checkpoint's config, the saved folder's and an average's (copied from one)
    record_version(model)
    return model


def log_sizes(
    model: PreTrainedModel, training_args: Seq2SeqTrainingArguments, max_tokens_per_batch: int | None = None
) -> tuple[int, int | None]:
    """Log the model's size and the global batch; returns `(parameters, pairs per optimizer step)`, None for the
    pairs when batches are by tokens (`max_tokens_per_batch`: their number of pairs varies)."""
    n_params = sum(p.numel() for p in model.parameters())
    logger.info("model: %.1fM parameters, config %s", n_params / 1e6, model.config.to_diff_dict())
    if max_tokens_per_batch:
        logger.info(
            "global batch: up to %d padded tokens per optimizer step = %d per process x %d processes x %d "
            "accumulation steps",
            max_tokens_per_batch * training_args.world_size * training_args.gradient_accumulation_steps,
            max_tokens_per_batch,
            training_args.world_size,
            training_args.gradient_accumulation_steps,
        )
        return n_params, None
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
    return n_params, global_batch_size


def set_up_trainer(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    data_args: DataArguments,
    training_args: Seq2SeqTrainingArguments,
    splits: dict,
    tokenized: DatasetDict,
) -> TranslationTrainer:
    """The Trainer, with validation BLEU over all references of each validation source when there is a
    validation split (the Trainer then passes the source ids to the metrics)."""
    validation = tokenized.get("validation")
    compute_metrics = None
    if validation is not None:
        compute_metrics = validation_metrics(tokenizer, validation, splits["validation"]["references"])
        if "inputs" not in training_args.include_for_metrics:
            training_args.include_for_metrics.append("inputs")
    return build_trainer(
        model, tokenizer, data_args, training_args, tokenized["train"], validation, compute_metrics
    )


def train_and_save(trainer: TranslationTrainer, checkpoint: str | None) -> dict:
    """Train (resuming from `checkpoint`), save the best model and the Trainer's state. Returns the facts
    every process knows: `{train_runtime_s, global_step, world_size}`, and under a budget of time or tokens
    `train_tokens` (source + target tokens trained on by all processes, `hf_seq2seq.training.time_budget`)."""
    train_result = trainer.train(resume_from_checkpoint=checkpoint)
    trainer.save_model()  # the best (load_best_model_at_end) or last checkpoint, on process 0, with the tokenizer
    trainer.save_state()
    # a barrier last (it holds no tensors): gloo's worker thread then lets go of the last all_gather's tensors
    # while this thread waits without the GIL; a group freed with the model later holds the GIL while it waits for
    # that thread, which needs the GIL to free them (a worker that returns at once hung so, at random)
    trainer.accelerator.wait_for_everyone()
    trainer.accelerator.end_training()  # the processes are done with each other: process 0 alone goes on
    facts = {
        "train_runtime_s": train_result.metrics["train_runtime"],
        "global_step": trainer.state.global_step,
        "world_size": trainer.args.world_size,
    }
    if isinstance(trainer, BudgetSeq2SeqTrainer):
        facts["train_tokens"] = trainer.budget.tokens_trained
    return facts


def use_averaged_checkpoints(trainer: TranslationTrainer, last: int, has_validation: bool) -> dict:
    """Save the average of the `last` checkpoints as the model and load it into the Trainer's model; returns
    the facts to record (its validation BLEU, where it can be measured)."""
    output_dir = trainer.args.output_dir
    averaged = average_checkpoints(checkpoint_folders(output_dir)[-last:], output_dir)
    trainer.model.load_state_dict(AutoModelForSeq2SeqLM.from_pretrained(averaged).state_dict())
    facts = {}
    if has_validation and trainer.args.world_size == 1:  # evaluate() would wait for the others
        facts["averaged_validation_bleu"] = trainer.evaluate()["eval_bleu"]
    facts["averaged_checkpoints"] = last
    return facts


def evaluate_on_test(
    trainer: TranslationTrainer,
    translator: TorchTranslator,
    test: Dataset,
    data_args: DataArguments,
    final_args: FinalArguments,
    facts: dict,
) -> dict:
    """Translate the test split with `translator` (the model as saved), write the translations, add greedy
    search's scores (and a broken decoding, if any) to `facts`. Returns the test decoding's scores."""
    scores, greedy, hypotheses = evaluate_test(
        translator, test, final_args, trainer.args.per_device_eval_batch_size, data_args.source_lang
    )
    facts.update(greedy_bleu=greedy["bleu"], greedy_chrf=greedy["chrf"])
    problem = decoding_problem(scores, greedy)
    if problem:  # recorded with the result; `hf-seq2seq train` prints it under the score
        facts["decoding_problem"] = problem
    Path(trainer.args.output_dir, TRANSLATIONS_FILE).write_text(
        "\n".join(hypotheses) + "\n", encoding="utf-8"
    )
    return scores


def save_report(
    scores: dict,
    facts: dict,
    n_params: int,
    data_args: DataArguments,
    training_args: Seq2SeqTrainingArguments,
) -> dict:
    """Write `test_results.json` (the test scores with the training's `facts`) and return it as a dict."""
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

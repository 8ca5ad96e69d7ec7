"""The data of a training run: the train/validation/test splits of `--dataset`, and what training on a stream
(`--streaming`) needs of the Trainer's arguments."""

from datasets import Dataset, IterableDataset
from transformers import Seq2SeqTrainingArguments

from hf_seq2seq.data.loaders import load_corpora
from hf_seq2seq.training.arguments import DataArguments
from hf_seq2seq.training.checks import streaming_problem


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
            exclude_test_sets=data_args.exclude_test_sets,
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
    problem = streaming_problem(data_args, training_args)
    if problem:
        raise ValueError(problem)
    if training_args.accelerator_config.dispatch_batches is None:
        training_args.accelerator_config.dispatch_batches = False

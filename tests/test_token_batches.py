"""Batches by tokens (`--max_tokens_per_batch`): every pair once an epoch, within the limit, the same order for
the same seed, each process its own batches; for a corpus in memory and for a stream; and a run trained on them."""

import random
from collections import Counter

import pytest
import torch
from accelerate.data_loader import BatchSamplerShard, IterableDatasetShard
from datasets import Dataset
from helpers import tiny_args, tiny_config, tiny_tokenizer
from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainingArguments

from hf_seq2seq.cli import main as cli
from hf_seq2seq.cli import train as train_cli
from hf_seq2seq.cli.train import main as train_main
from hf_seq2seq.cli.train import parse_args
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import TransformerMTForConditionalGeneration
from hf_seq2seq.training.token_batches import PairTooLongError, TokenBatchSampler, TokenBatchStream
from hf_seq2seq.training.trainer import TranslationTrainer

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

LIMIT = 120


@pytest.fixture(scope="module")
def pairs() -> Dataset:
    """600 tokenized pairs of random lengths (sources 1-30 tokens, targets 1-40), ids that name each pair."""
    rng = random.Random(0)
    rows = []
    for i in range(600):
        source, target = rng.randint(1, 30), rng.randint(1, 40)
        rows.append(
            {"input_ids": [i + 10] * source, "attention_mask": [1] * source, "labels": [i + 10] * target}
        )
    return Dataset.from_list(rows)


def lengths(pairs: Dataset) -> tuple[list[int], list[int]]:
    return [len(ids) for ids in pairs["input_ids"]], [len(ids) for ids in pairs["labels"]]


def padded(pairs: list[dict]) -> int:
    """What the collator pads a batch to: pairs x (longest source + longest target)."""
    return len(pairs) * (max(len(p["input_ids"]) for p in pairs) + max(len(p["labels"]) for p in pairs))


def test_an_epoch_holds_every_pair_once_in_batches_within_the_limit(pairs):
    sampler = TokenBatchSampler(*lengths(pairs), max_tokens=LIMIT, seed=1)
    epoch = list(sampler)
    assert len(epoch) == len(sampler)
    assert sorted(i for batch in epoch for i in batch) == list(range(len(pairs)))
    assert max(padded([pairs[i] for i in batch]) for batch in epoch) <= LIMIT
    # similar lengths go together: far less padding than batches of pairs in random order would carry
    real = sum(a + b for a, b in zip(*lengths(pairs), strict=True))
    assert sum(padded([pairs[i] for i in batch]) for batch in epoch) < 1.25 * real


def test_the_same_seed_gives_the_same_order_and_each_epoch_another(pairs):
    def epochs(seed):
        sampler = TokenBatchSampler(*lengths(pairs), max_tokens=LIMIT, seed=seed)
        first = list(sampler)
        sampler.set_epoch(1)  # as the Trainer does; a second pass without it moves on to epoch 1 as well
        return first, list(sampler), list(sampler)

    first, second, third = epochs(seed=1)
    assert (first, second, third) == epochs(seed=1)
    assert first != epochs(seed=2)[0]
    assert second != first and third != second and len(second) == len(first)  # reshuffled, as many steps
    assert Counter(map(len, first)) == Counter(map(len, second))  # the same batch sizes, other pairs in them


@pytest.mark.parametrize("processes", [2, 3])
def test_each_process_gets_its_own_batches_and_as_many_as_the_others(pairs, processes):
    """Dealt out by accelerate's `BatchSamplerShard`, as `accelerator.prepare` does under DDP."""
    source, target = lengths(pairs)
    for limit in (120, 122):  # 241 and 238 batches in one process: not multiples of 2 and 3
        ranks = [  # each process its own sampler, as each builds its own loader
            list(BatchSamplerShard(TokenBatchSampler(source, target, limit, 0, processes), processes, rank))
            for rank in range(processes)
        ]
        assert len({len(rank) for rank in ranks}) == 1
        seen = [i for rank in ranks for batch in rank for i in batch]
        assert sorted(seen) == list(range(len(pairs)))  # disjoint, and together the whole epoch
        assert max(padded([pairs[i] for i in batch]) for rank in ranks for batch in rank) <= limit


def test_a_pair_longer_than_the_limit_is_refused_by_name(pairs):
    with pytest.raises(PairTooLongError, match="--max_tokens_per_batch 50 is below a pair of"):
        TokenBatchSampler(*lengths(pairs), max_tokens=50)
    with pytest.raises(PairTooLongError, match="--max_source_length"):
        list(TokenBatchStream(pairs.to_iterable_dataset(), max_tokens=50))


def test_a_stream_is_batched_pool_by_pool(pairs):
    stream = pairs.to_iterable_dataset(num_shards=2).shuffle(seed=0, buffer_size=100)
    batches = TokenBatchStream(stream, max_tokens=LIMIT, seed=3, pool_size=200)
    epoch = list(batches)
    assert sorted(p["input_ids"][0] for batch in epoch for p in batch) == list(range(10, 610))
    assert max(map(padded, epoch)) <= LIMIT
    assert list(batches) == epoch
    batches.set_epoch(1)  # reaches the stream's shuffle too
    second = list(batches)
    assert second != epoch

    # under DDP accelerate wraps a stream in `IterableDatasetShard`: batch i to process i mod 2
    ranks = [
        list(IterableDatasetShard(batches, batch_size=1, num_processes=2, process_index=r)) for r in (0, 1)
    ]
    assert len(ranks[0]) == len(ranks[1])
    seen = Counter(p["input_ids"][0] for rank in ranks for batch in rank for p in batch)
    assert set(seen) == set(range(10, 610))
    # each pair once, but for an odd last round, which accelerate fills with the epoch's first batch
    assert seen.total() - len(pairs) in (0, len(second[0]))


@pytest.mark.parametrize("streamed", [False, True], ids=["in-memory", "stream"])
def test_the_trainers_loader_collates_token_batches(pairs, tmp_path, streamed):
    tokenizer = tiny_tokenizer()
    model = TransformerMTForConditionalGeneration(tiny_config(vocab_size=len(tokenizer)))
    trainer = TranslationTrainer(
        model=model,
        args=Seq2SeqTrainingArguments(str(tmp_path), use_cpu=True, report_to="none", max_steps=5),
        train_dataset=pairs.to_iterable_dataset() if streamed else pairs,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
        processing_class=tokenizer,
        max_tokens_per_batch=LIMIT,
        token_pool=300,
    )
    batches = list(trainer.get_train_dataloader())
    assert sum(len(batch["input_ids"]) for batch in batches) == len(pairs)
    assert max(batch["input_ids"].numel() + batch["labels"].numel() for batch in batches) <= LIMIT
    assert {batch["decoder_input_ids"].shape == batch["labels"].shape for batch in batches} == {True}
    if not streamed:
        assert len(batches) == len(trainer.get_train_dataloader())


def test_a_tiny_run_trains_on_token_batches(synthetic_fra_txt, tmp_path):
    results = train_main(
        tiny_args(synthetic_fra_txt, tmp_path, "--max_tokens_per_batch", "600", "--max_steps", "30")
    )
    facts = results["training"]
    assert facts["max_tokens_per_batch"] == 600 and facts["global_step"] == 30
    assert facts["global_batch_size"] is None  # the pairs per step vary
    assert torch.load(tmp_path / "training_args.bin", weights_only=False).max_steps == 30


def test_a_limit_of_0_trains_on_batches_of_pairs_over_a_preset_that_batches_by_tokens(pairs, tmp_path):
    _, data_args, training_args, _ = parse_args(
        ["--preset", "cpu", "--max_tokens_per_batch", "0", "--output_dir", str(tmp_path)]
    )
    assert data_args.max_tokens_per_batch is None  # what a run reports and sizes its batches by
    tokenizer = tiny_tokenizer()
    model = TransformerMTForConditionalGeneration(tiny_config(vocab_size=len(tokenizer)))
    trainer = TranslationTrainer(
        model=model,
        args=Seq2SeqTrainingArguments(
            str(tmp_path),
            use_cpu=True,
            report_to="none",
            per_device_train_batch_size=training_args.per_device_train_batch_size,
        ),
        train_dataset=pairs,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
        processing_class=tokenizer,
        max_tokens_per_batch=data_args.max_tokens_per_batch,
    )
    sizes = Counter(len(batch["input_ids"]) for batch in trainer.get_train_dataloader())
    assert sizes == Counter({32: len(pairs) // 32, len(pairs) % 32: 1})  # the preset's 32 pairs a batch


def test_the_command_refuses_a_negative_limit_or_one_below_a_pair(monkeypatch, capsys, tmp_path):
    with pytest.raises(SystemExit):
        parse_args(["--preset", "tiny", "--max_tokens_per_batch", "-1"])
    assert "--max_tokens_per_batch must be a number of tokens (0: batches of" in capsys.readouterr().err

    def too_long(*args):
        TokenBatchSampler([30], [40], max_tokens=50)

    monkeypatch.setattr(train_cli, "run", too_long)
    with pytest.raises(
        SystemExit, match="^hf-seq2seq train: --max_tokens_per_batch 50 is below a pair of 30 \\+ 40"
    ):
        cli(["train", "--preset", "tiny", "--output_dir", str(tmp_path)])

"""Concatenation augmentation (`--concat_share`): joined examples are what tokenizing the joined texts gives, stay
within the length limits, come out the same for the same seed, and reach training."""

import json
import sys
import tracemalloc

import numpy as np
import pyarrow as pa
import pytest
from datasets import Dataset
from helpers import synthetic_pairs, tiny_args

from hf_seq2seq.cli import train as train_cli
from hf_seq2seq.data.augmentation import join_random_pairs
from hf_seq2seq.data.tokenization import tokenize_dataset, train_tokenizer

pytestmark = pytest.mark.floors


@pytest.fixture(scope="module")
def corpus():
    """The synthetic corpus's first 200 pairs, a subword tokenizer trained on them, and the pairs tokenized."""
    pairs = synthetic_pairs()[:200]
    texts = Dataset.from_dict({"src": [s for s, _ in pairs], "tgt": [t for _, t in pairs]})
    tokenizer = train_tokenizer((t for pair in pairs for t in pair), vocab_size=120)
    return texts, tokenizer, tokenize_dataset(texts, tokenizer, 200, 200, keep_columns=())


def test_a_joined_example_is_the_joined_texts_tokenized(corpus):
    texts, tokenizer, tokenized = corpus
    joined = join_random_pairs(
        tokenized, share=0.5, max_pairs=4, max_source_length=200, max_target_length=200, seed=0
    )
    assert (
        joined.select(range(len(tokenized)))["input_ids"][:] == tokenized["input_ids"][:]
    )  # the pairs stay first
    extra = joined.select(range(len(tokenized), len(joined)))
    assert len(extra) == 100
    translations: dict[str, set[str]] = {}
    for row in texts:
        translations.setdefault(row["src"], set()).add(row["tgt"])
    for row in extra:
        source = tokenizer.decode(row["input_ids"], skip_special_tokens=True)
        target = tokenizer.decode(row["labels"], skip_special_tokens=True)
        expected = tokenizer(source, text_target=target)
        assert row["input_ids"] == expected["input_ids"]
        assert row["labels"] == expected["labels"]
        assert row["attention_mask"] == [1] * len(row["input_ids"])
        # every synthetic sentence ends in " .": the joined texts are 2-4 training pairs, in the same order
        sources = [sentence + " ." for sentence in source.removesuffix(" .").split(" . ")]
        targets = [sentence + " ." for sentence in target.removesuffix(" .").split(" . ")]
        assert 2 <= len(sources) == len(targets) <= 4
        assert all(t in translations[s] for s, t in zip(sources, targets, strict=True))


def test_joined_examples_keep_the_length_limits_and_the_seed_decides_them(corpus):
    _, _, tokenized = corpus
    limit = max(len(ids) for ids in tokenized["labels"][:]) + 6  # room for a pair and a short one at most
    joined = join_random_pairs(tokenized, 1.0, 8, limit, limit, seed=1)
    extra = joined.select(range(len(tokenized), len(joined)))
    assert max(len(ids) for ids in extra["input_ids"][:]) <= limit
    assert max(len(ids) for ids in extra["labels"][:]) <= limit
    assert all(
        ids.count(tokenized[0]["input_ids"][-1]) == 1 for ids in extra["input_ids"][:]
    )  # one </s>, last
    again = join_random_pairs(tokenized, 1.0, 8, limit, limit, seed=1)
    assert again["input_ids"][:] == joined["input_ids"][:]
    assert (
        join_random_pairs(tokenized, 1.0, 8, limit, limit, seed=2)["input_ids"][:] != joined["input_ids"][:]
    )


def test_a_share_of_zero_changes_nothing_and_bad_settings_are_refused(corpus):
    _, _, tokenized = corpus
    assert join_random_pairs(tokenized, 0.0, 4, 64, 64, seed=0) is tokenized
    with pytest.raises(ValueError, match="at least 2 pairs"):
        join_random_pairs(tokenized, 0.5, 1, 64, 64, seed=0)
    with pytest.raises(ValueError, match=">= 0"):
        join_random_pairs(tokenized, -0.1, 4, 64, 64, seed=0)


def random_sequences(
    generator: np.random.Generator, rows: int, longest: int
) -> tuple[np.ndarray, np.ndarray]:
    """`(offsets, values)` of `rows` random sequences of 4 to `longest` token ids, each ending in </s> (1)."""
    offsets = np.zeros(rows + 1, dtype=np.int32)
    np.cumsum(generator.integers(4, longest + 1, size=rows), out=offsets[1:])
    values = generator.integers(3, 256, size=offsets[-1], dtype=np.int32)
    values[offsets[1:] - 1] = 1
    return offsets, values


def test_joining_pairs_of_a_corpus_of_a_million_reads_only_the_rows_it_draws():
    generator = np.random.default_rng(0)
    rows = 1_000_000
    (source_offsets, sources), (target_offsets, targets) = (
        random_sequences(generator, rows, n) for n in (16, 18)
    )
    corpus = Dataset.from_dict(
        {
            "input_ids": pa.ListArray.from_arrays(source_offsets, sources),
            "attention_mask": pa.ListArray.from_arrays(source_offsets, np.ones_like(sources)),
            "labels": pa.ListArray.from_arrays(target_offsets, targets),
        }
    )
    # what the two columns cost as Python lists, at the least: a list a row, 8 bytes a token (ids below 256 are
    # shared objects)
    columns_cost = 2 * rows * sys.getsizeof([]) + 8 * (len(sources) + len(targets))
    tracemalloc.start()
    try:
        # a hundredth joined (the presets join a tenth: ten times the work, as much memory a chunk), 2 to 8 pairs
        joined = join_random_pairs(corpus, 0.01, 8, 128, 128, seed=0)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert len(joined) == rows + 10_000
    assert peak < columns_cost / 10, (
        f"joining took {peak / 2**20:.0f} MiB; the columns cost {columns_cost / 2**20:.0f}"
    )
    extra = joined.select(range(rows, rows + 1000))
    assert max(len(ids) for ids in extra["input_ids"][:]) <= 128 and extra[0]["attention_mask"] == [1] * len(
        extra[0]["input_ids"]
    )


def test_training_with_joined_examples_reports_them(tmp_path, synthetic_fra_txt):
    output_dir = tmp_path / "run"
    results = train_cli.main(
        tiny_args(
            synthetic_fra_txt,
            output_dir,
            "--max_steps",
            "20",
            "--concat_share",
            "0.25",
            "--concat_max_pairs",
            "3",
        )
    )
    facts = json.loads((output_dir / "test_results.json").read_text())["training"]
    assert facts["train_pairs"] == 300
    assert facts["joined_examples"] == 75
    assert results["training"]["joined_examples"] == 75

"""hf_seq2seq.data.tokenization: training, special tokens, round trips, saving, dataset tokenization."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before transformers/datasets are imported: nothing may touch the Hub

import time  # noqa: E402
import unicodedata  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from datasets import Dataset, DatasetDict, IterableDataset, IterableDatasetDict  # noqa: E402
from helpers import FRA_TXT as REAL_FRA_TXT  # noqa: E402
from transformers import AutoTokenizer, PreTrainedTokenizerFast  # noqa: E402

from hf_seq2seq.data.tokenization import iter_texts, tokenize_dataset, train_tokenizer  # noqa: E402

pytestmark = pytest.mark.floors  # tokenizers' trainer at its floor

EN = [
    "Go.",
    "Tom is here.",
    "I don't know what you mean.",
    "She said « no » to me.",
    "Where is the station?",
    "It costs 3,50 €.",
    "Summer is here!",
]
FR = [
    "Va !",
    "Tom est là.",
    "Je ne sais pas ce que tu veux dire.",
    "Elle m’a dit « non ».",
    "Où est la gare\u202f?",
    "Ça coûte 3,50\xa0€.",
    "L’été est là\u202f!",
]
CORPUS = (EN + FR) * 20


def normalised(text: str) -> str:
    """The documented normalisation: NFKC, whitespace runs collapsed, ends stripped."""
    return " ".join(unicodedata.normalize("NFKC", text).split())


@pytest.fixture(scope="module")
def tokenizer() -> PreTrainedTokenizerFast:
    return train_tokenizer(CORPUS, vocab_size=300, model_max_length=32)


def test_special_tokens_and_ids(tokenizer: PreTrainedTokenizerFast) -> None:
    assert (tokenizer.pad_token, tokenizer.eos_token, tokenizer.unk_token) == ("<pad>", "</s>", "<unk>")
    assert (tokenizer.pad_token_id, tokenizer.eos_token_id, tokenizer.unk_token_id) == (0, 1, 2)
    assert tokenizer.bos_token_id is None
    assert tokenizer.model_max_length == 32 and tokenizer.padding_side == "right"
    assert 100 < len(tokenizer) <= 300


def test_source_and_target_end_in_eos(tokenizer: PreTrainedTokenizerFast) -> None:
    batch = tokenizer(EN[:3], text_target=FR[:3])
    for ids in batch["input_ids"] + batch["labels"]:
        assert ids[-1] == tokenizer.eos_token_id and tokenizer.eos_token_id not in ids[:-1]
    assert tokenizer.decode(batch["labels"][0]) == "Va !</s>"


@pytest.mark.parametrize(
    "text", EN + FR + ["Tom\u00a0est  là. ", "e\u0301te\u0301 « Tom »\u2009!", "L’été, l'hiver."]
)
def test_round_trip_keeps_case_accents_and_punctuation(tokenizer: PreTrainedTokenizerFast, text: str) -> None:
    ids = tokenizer(text)["input_ids"]
    assert tokenizer.decode(ids, skip_special_tokens=True) == normalised(text)
    assert tokenizer.backend_tokenizer.normalizer.normalize_str(text) == normalised(text)


def test_unseen_characters_become_unk(tokenizer: PreTrainedTokenizerFast) -> None:
    assert tokenizer("Go 猫")["input_ids"][-2:] == [tokenizer.unk_token_id, tokenizer.eos_token_id]


def test_truncation_keeps_eos(tokenizer: PreTrainedTokenizerFast) -> None:
    ids = tokenizer(" ".join(EN + FR + EN + FR), truncation=True)["input_ids"]
    assert len(ids) == 32 and ids[-1] == tokenizer.eos_token_id
    ids = tokenizer(" ".join(EN), truncation=True, max_length=5)["input_ids"]
    assert len(ids) == 5 and ids[-1] == tokenizer.eos_token_id


def test_save_and_auto_load(tokenizer: PreTrainedTokenizerFast, tmp_path: Path) -> None:
    tokenizer.save_pretrained(tmp_path)
    loaded = AutoTokenizer.from_pretrained(tmp_path)
    assert isinstance(loaded, PreTrainedTokenizerFast)
    assert (loaded.pad_token_id, loaded.eos_token_id, loaded.unk_token_id, loaded.bos_token_id) == (
        0,
        1,
        2,
        None,
    )
    assert loaded.model_max_length == 32
    assert loaded(EN, text_target=FR).data == tokenizer(EN, text_target=FR).data
    assert loaded.batch_decode(loaded(FR)["input_ids"], skip_special_tokens=True) == [
        normalised(s) for s in FR
    ]


def test_unigram_model(tmp_path: Path) -> None:
    unigram = train_tokenizer(CORPUS, vocab_size=200, model_type="unigram")
    assert (unigram.pad_token_id, unigram.eos_token_id, unigram.unk_token_id) == (0, 1, 2)
    assert unigram.batch_decode(unigram(FR)["input_ids"], skip_special_tokens=True) == [
        normalised(s) for s in FR
    ]
    unigram.save_pretrained(tmp_path)
    assert AutoTokenizer.from_pretrained(tmp_path)(FR[0])["input_ids"] == unigram(FR[0])["input_ids"]


def test_bad_training_arguments() -> None:
    with pytest.raises(ValueError, match="vocab_size"):
        train_tokenizer(CORPUS, vocab_size=3)
    with pytest.raises(ValueError, match="model_type"):
        train_tokenizer(CORPUS, model_type="wordpiece")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="empty"):
        train_tokenizer(iter([]))


def test_iter_texts_from_dataset_and_stream() -> None:
    ds = Dataset.from_dict({"src": EN, "tgt": FR})
    assert list(iter_texts(ds)) == EN + FR  # one batch: all sources, then all targets
    assert list(iter_texts(ds, columns=("tgt",), max_examples=2)) == FR[:2]
    assert list(iter_texts(ds.to_iterable_dataset(), max_examples=1)) == [EN[0], FR[0]]


def small_splits() -> DatasetDict:
    return DatasetDict(
        {
            "train": Dataset.from_dict({"src": EN, "tgt": FR}),
            "test": Dataset.from_dict({"src": EN[:2], "tgt": FR[:2], "references": [[f] for f in FR[:2]]}),
        }
    )


def test_tokenize_dataset_dict(tokenizer: PreTrainedTokenizerFast) -> None:
    tokenized = tokenize_dataset(small_splits(), tokenizer, max_source_length=4, max_target_length=6)
    assert isinstance(tokenized, DatasetDict)
    assert sorted(tokenized["train"].column_names) == ["attention_mask", "input_ids", "labels"]
    assert sorted(tokenized["test"].column_names) == ["attention_mask", "input_ids", "labels", "references"]
    for row in tokenized["train"]:
        assert len(row["input_ids"]) <= 4 and len(row["labels"]) <= 6
        assert row["input_ids"][-1] == row["labels"][-1] == tokenizer.eos_token_id
        assert row["attention_mask"] == [1] * len(row["input_ids"])
    assert tokenized["test"][0]["labels"] == tokenizer(text_target=FR[0])["input_ids"]
    bare = tokenize_dataset(small_splits()["test"], tokenizer, keep_columns=())
    assert sorted(bare.column_names) == ["attention_mask", "input_ids", "labels"]


def test_tokenize_streams(tokenizer: PreTrainedTokenizerFast) -> None:
    streams = IterableDatasetDict(
        {name: split.to_iterable_dataset() for name, split in small_splits().items()}
    )
    tokenized = tokenize_dataset(streams, tokenizer, 16, 16)
    assert isinstance(tokenized, IterableDatasetDict) and isinstance(tokenized["train"], IterableDataset)
    expected = tokenize_dataset(small_splits(), tokenizer, 16, 16)
    for name in expected:
        assert list(tokenized[name]) == list(expected[name])


def test_tokenize_stream_of_unknown_schema(tokenizer: PreTrainedTokenizerFast) -> None:
    def rows():
        yield from ({"src": en, "tgt": fr, "id": i} for i, (en, fr) in enumerate(zip(EN, FR, strict=True)))

    stream = IterableDataset.from_generator(rows)
    assert stream.column_names is None
    tokenized = list(tokenize_dataset(stream, tokenizer, 16, 16))
    assert [sorted(row) for row in tokenized] == [["attention_mask", "input_ids", "labels"]] * len(EN)


def test_tokenize_needs_src_and_tgt(tokenizer: PreTrainedTokenizerFast) -> None:
    with pytest.raises(ValueError, match=r"missing \['tgt'\]"):
        tokenize_dataset(Dataset.from_dict({"src": EN}), tokenizer)
    with pytest.raises(ValueError, match=">= 2"):
        tokenize_dataset(small_splits(), tokenizer, max_target_length=1)


@pytest.mark.skipif(not REAL_FRA_TXT.is_file(), reason=f"the fra-eng copy is not at {REAL_FRA_TXT}")
def test_real_fra_eng_tokenizer() -> None:
    """Train on the full fra-eng train split in < 60 s; >= 99.9% of test sentences round-trip."""
    from hf_seq2seq.data.fra_eng import load_fra_eng

    splits = load_fra_eng(REAL_FRA_TXT)
    start = time.perf_counter()
    tokenizer = train_tokenizer(iter_texts(splits["train"]))
    assert time.perf_counter() - start < 60
    assert len(tokenizer) == 8000
    test = splits["test"][:]
    for texts in (test["src"], [ref for refs in test["references"] for ref in refs]):
        decoded = tokenizer.batch_decode(tokenizer(texts)["input_ids"], skip_special_tokens=True)
        wrong = [(d, t) for d, t in zip(decoded, texts, strict=True) if d != normalised(t)]
        assert len(wrong) <= 0.001 * len(texts), wrong[:5]

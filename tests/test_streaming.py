"""Training past Tatoeba: a shuffled train stream, shared out over processes, and several corpora in one run."""

import json
import os
import subprocess
import sys
import textwrap
from collections import Counter
from pathlib import Path

import pytest
from helpers import free_port

from hf_seq2seq.data.errors import DataError
from hf_seq2seq.training.arguments import DataArguments
from hf_seq2seq.training.data_loading import load_splits

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

ROOT = Path(__file__).resolve().parents[1]


def write_corpus(folder: Path, files: dict[str, int]) -> Path:
    """`folder/train-<i>.jsonl` files of `{"en", "fr"}` lines; file `name` holds `n` pairs tagged `name`."""
    folder.mkdir()
    for i, (name, n) in enumerate(files.items()):
        lines = (json.dumps({"en": f"{name} sentence {j} .", "fr": f"{name} phrase {j} ."}) for j in range(n))
        (folder / f"train-{i:05d}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def origin(pair: dict) -> str:
    return pair["src"].split()[0]


@pytest.fixture
def two_files(tmp_path) -> Path:
    """One corpus whose train split is two data files read in sequence: all of `news`, then all of `web`."""
    return write_corpus(tmp_path / "corpus", {"news": 400, "web": 400})


def test_a_stream_of_two_files_comes_out_mixed_and_reshuffled_each_epoch(two_files):
    in_order = list(
        load_splits(DataArguments(dataset=str(two_files), streaming=True, shuffle_buffer=0))["train"]
    )
    assert {origin(pair) for pair in in_order[:100]} in ({"news"}, {"web"})  # file order: one file first

    train = load_splits(DataArguments(dataset=str(two_files), streaming=True, shuffle_buffer=1000))["train"]
    first_epoch = list(train)
    assert Counter(origin(pair) for pair in first_epoch[:100]).keys() == {"news", "web"}
    assert sorted(map(str, first_epoch)) == sorted(map(str, in_order))  # the same pairs, each once
    assert list(train) == first_epoch  # the same seed, the same order: every process sees one stream

    train.set_epoch(1)  # what the Trainer calls at each epoch
    second_epoch = list(train)
    assert second_epoch != first_epoch and sorted(map(str, second_epoch)) == sorted(map(str, first_epoch))


def test_non_streamed_training_is_not_shuffled_here(two_files):
    """The Trainer's sampler shuffles a dataset held in memory; the split keeps the file order."""
    train = load_splits(DataArguments(dataset=str(two_files), shuffle_buffer=1000))["train"]
    assert {origin(pair) for pair in train.select(range(100))} in ({"news"}, {"web"})


WORKER = textwrap.dedent(
    """
    import json, sys
    import torch.distributed as dist
    from accelerate.data_loader import prepare_data_loader
    from torch.utils.data import DataLoader
    from transformers import Seq2SeqTrainingArguments
    from hf_seq2seq.training.arguments import DataArguments
    from hf_seq2seq.training.data_loading import load_splits, prepare_streaming

    corpora, out = json.loads(sys.argv[1]), sys.argv[2]
    dist.init_process_group("gloo")
    rank, world = dist.get_rank(), dist.get_world_size()
    seen = {}
    for name, corpus in corpora.items():
        for buffer in (0, 1000):
            data_args = DataArguments(dataset=corpus, streaming=True, shuffle_buffer=buffer)
            training_args = Seq2SeqTrainingArguments(output_dir=out, max_steps=10, use_cpu=True)
            prepare_streaming(data_args, training_args)
            train = load_splits(data_args, seed=training_args.seed)["train"]
            loader = DataLoader(train, batch_size=4, collate_fn=lambda rows: [row["src"] for row in rows])
            loader = prepare_data_loader(  # what the Trainer's accelerator.prepare does with it
                loader, num_processes=world, process_index=rank, put_on_device=False,
                dispatch_batches=training_args.accelerator_config.dispatch_batches,
            )
            for epoch in (0, 1):
                loader.set_epoch(epoch)
                seen[f"{name} buffer={buffer} epoch={epoch}"] = [src for batch in loader for src in batch]
    with open(f"{out}/seen-{rank}.json", "w") as f:
        json.dump(seen, f)
    dist.destroy_process_group()
    """
)


def test_two_processes_under_torchrun_read_disjoint_parts_that_complete_the_stream(tmp_path):
    corpora = {
        "two files": str(write_corpus(tmp_path / "two", {"news": 300, "web": 300})),  # one file per process
        "one file": str(write_corpus(tmp_path / "one", {"news": 600})),  # every other batch per process
    }
    worker = tmp_path / "worker.py"
    worker.write_text(WORKER, encoding="utf-8")
    command = [
        sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2", "--master_addr=127.0.0.1",
        f"--master_port={free_port()}", str(worker), json.dumps(corpora), str(tmp_path),
    ]  # fmt: skip
    env = dict(os.environ, OMP_NUM_THREADS="1", HF_DATASETS_OFFLINE="1", PYTHONPATH=str(ROOT))
    done = subprocess.run(command, env=env, capture_output=True, text=True, timeout=240)
    assert done.returncode == 0, (done.stdout + done.stderr)[-4000:]
    parts = [json.loads((tmp_path / f"seen-{rank}.json").read_text()) for rank in (0, 1)]

    for key in parts[0]:
        everything = {src for part in parts for src in part[key]}
        first, second = parts[0][key], parts[1][key]
        assert len(everything) == len(set(first) | set(second)) > 550, key  # together: the whole train split
        if key.startswith("two files"):
            assert not set(first) & set(second) and len(first) + len(second) == len(everything), key
        else:  # the last round of batches is filled up with pairs from the start (accelerate)
            assert not set(first[:-4]) & set(second[:-4]), key
            assert len(first) + len(second) - len(everything) < 8, key
    for name in ("two files", "one file"):  # shuffled: a new order in the next epoch, still shared out
        assert parts[0][f"{name} buffer=1000 epoch=0"] != parts[0][f"{name} buffer=1000 epoch=1"]
        assert parts[0][f"{name} buffer=1000 epoch=0"] != parts[0][f"{name} buffer=0 epoch=0"]


@pytest.mark.parametrize("streaming", [False, True], ids=["in memory", "streamed"])
def test_two_corpora_interleave_in_the_given_proportions(tmp_path, streaming):
    news = write_corpus(tmp_path / "news", {"news": 3000})
    web = write_corpus(tmp_path / "web", {"web": 3000})
    data_args = DataArguments(
        dataset=f"{news},{web}", dataset_probabilities="0.8,0.2", streaming=streaming, shuffle_buffer=0
    )
    splits = load_splits(data_args)
    drawn = Counter(origin(pair) for _, pair in zip(range(1000), splits["train"], strict=False))
    assert drawn.keys() == {"news", "web"} and abs(drawn["news"] / 1000 - 0.8) < 0.05, drawn
    # validation and test come from the first corpus
    assert {origin(row) for split in ("validation", "test") for row in splits[split]} == {"news"}


def test_two_corpora_without_probabilities_are_read_one_after_the_other(tmp_path):
    news = write_corpus(tmp_path / "news", {"news": 500})
    web = write_corpus(tmp_path / "web", {"web": 500})
    splits = load_splits(DataArguments(dataset=f"{news},{web}", eval_dataset=str(web)))
    origins = [origin(pair) for pair in splits["train"]]
    assert origins == sorted(origins) and set(origins) == {"news", "web"}  # all news, then all web
    assert {origin(row) for row in splits["test"]} == {"web"}  # --eval_dataset


def test_probabilities_must_match_the_datasets(tmp_path):
    news = write_corpus(tmp_path / "news", {"news": 50})
    with pytest.raises(DataError, match="one per dataset"):
        load_splits(DataArguments(dataset=f"{news},{news}", dataset_probabilities="0.5,0.3,0.2"))

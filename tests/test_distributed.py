"""Several processes on CPU (gloo): `torchrun` and `accelerate launch` run `scripts/train.py` unchanged.

The data is the small synthetic English-French corpus of `helpers.synthetic_pairs`, written to `tmp_path` (some
sources have two translations, so validation and test use several references), so nothing is downloaded or
skipped.
"""

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import psutil
import pytest
import torch
from accelerate.data_loader import prepare_data_loader
from datasets import Dataset
from helpers import ROOT, free_port, synthetic_pairs, write_fra_txt
from torch.utils.data import DataLoader
from transformers import AutoModelForSeq2SeqLM, EvalPrediction, Seq2SeqTrainingArguments

from hf_seq2seq.data.tokenization import tokenize_dataset, train_tokenizer
from hf_seq2seq.evaluation.metrics import score_translations
from hf_seq2seq.evaluation.report import TRAINING_REPORT
from hf_seq2seq.training.arguments import DataArguments
from hf_seq2seq.training.data_loading import load_splits, prepare_streaming
from hf_seq2seq.training.validation import validation_metrics

TRAIN_SCRIPT = ROOT / "scripts" / "train.py"
DDP_CONFIG = ROOT / "configs" / "accelerate_ddp.yaml"
FSDP_CONFIG = ROOT / "configs" / "accelerate_fsdp.yaml"
TOTAL_BATCH_LINE = "Total train batch size (w. parallel, distributed & accumulation) = {}"


def write_jsonl_shards(folder: Path, shards: int) -> Path:
    """The corpus as `train-<i>.jsonl` files of `{"en": ..., "fr": ...}` lines: `shards` shards."""
    folder.mkdir()
    pairs = synthetic_pairs()
    for i in range(shards):
        lines = (json.dumps({"en": en, "fr": fr}, ensure_ascii=False) for en, fr in pairs[i::shards])
        (folder / f"train-{i:05d}.jsonl").write_text("\n".join(lines) + "\n", encoding="utf-8")
    return folder


def launch_env() -> dict[str, str]:
    """One thread per process (two processes share two cores), offline."""
    return dict(
        os.environ,
        OMP_NUM_THREADS="1",
        HF_HUB_OFFLINE="1",
        HF_DATASETS_OFFLINE="1",
        TOKENIZERS_PARALLELISM="false",
        PYTHONUNBUFFERED="1",
        PYTHONFAULTHANDLER="1",  # a process stopped by SIGABRT prints every thread's Python stack
    )


def torchrun(*args: str) -> list[str]:
    """`torchrun --nproc_per_node=2 scripts/train.py ARGS` with the virtualenv's Python."""
    return [
        sys.executable, "-m", "torch.distributed.run", "--nproc_per_node=2",
        "--master_addr=127.0.0.1", f"--master_port={free_port()}", str(TRAIN_SCRIPT), *args,
    ]  # fmt: skip


def tiny_args(output_dir: Path, *extra: str) -> list[str]:
    """The tiny preset on CPU (gloo); the last evaluation round is uneven (21 rows, 8 per process a step)."""
    return [
        "--preset", "tiny",
        "--use_cpu", "true",
        "--output_dir", str(output_dir),
        "--per_device_train_batch_size", "16",
        "--per_device_eval_batch_size", "8",
        "--max_eval_samples", "21",
        "--max_test_samples", "20",
        "--log_level", "info",
        *extra,
    ]  # fmt: skip


def run_job(command: list[str], timeout: float = 240) -> str:
    """Run a launcher to the end and return its output (both processes'), failing with its tail; a job still
    running after `timeout` seconds fails with the Python stacks of its processes (where each one waits)."""
    launcher = subprocess.Popen(
        command, env=launch_env(), stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        output, _ = launcher.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        for worker in psutil.Process(launcher.pid).children(recursive=True):
            worker.send_signal(signal.SIGABRT)  # faulthandler (PYTHONFAULTHANDLER) prints the stacks
        time.sleep(5)
        launcher.kill()
        output, _ = launcher.communicate()
        pytest.fail(f"the job ran over {timeout} s; its stacks:\n{output[-12000:]}")
    assert launcher.returncode == 0, output[-6000:]
    return output


def logged(state: dict, key: str) -> list[tuple[int, float]]:
    return [(entry["step"], entry[key]) for entry in state["log_history"] if key in entry]


def test_torchrun_two_processes_train_one_model(tmp_path):
    out = tmp_path / "run"
    data = write_fra_txt(tmp_path / "fra.txt")
    output = run_job(
        torchrun(
            *tiny_args(out, "--data_path", str(data)),
            "--max_steps", "30", "--logging_steps", "1", "--eval_steps", "15", "--save_steps", "15",
        )
    )  # fmt: skip

    assert "process 0 of 2" in output and "process 1 of 2" in output  # both processes trained
    assert TOTAL_BATCH_LINE.format(32) in output  # the Trainer's own count: 16 per process x 2 processes
    results = json.loads((out / TRAINING_REPORT).read_text())
    assert results["training"]["world_size"] == 2 and results["training"]["global_batch_size"] == 32
    assert results["num_sentences"] == 20 and "nrefs:var" in results["bleu_signature"]

    state = json.loads((out / "trainer_state.json").read_text())
    assert state["global_step"] == 30 and state["train_batch_size"] == 16  # per process in transformers 5.x
    losses = [loss for _, loss in logged(state, "loss")]
    assert len(losses) == 30
    assert sum(losses[-5:]) / 5 < 0.8 * sum(losses[:5]) / 5, losses
    # validation BLEU (all references, each row once) over the predictions gathered from both processes
    assert [step for step, _ in logged(state, "eval_bleu")] == [15, 30]

    assert len(list(out.glob("**/test_results.json"))) == 1
    model = AutoModelForSeq2SeqLM.from_pretrained(out)
    assert model.config.model_type == "transformer_mt"


def test_a_time_budget_stops_every_process_at_the_same_step(tmp_path):
    """bf16 autocast on CPU as the `cpu` preset uses it, and DDP without the search for unused parameters."""
    out = tmp_path / "run"
    data = write_fra_txt(tmp_path / "fra.txt")
    output = run_job(
        torchrun(
            *tiny_args(out, "--data_path", str(data)),
            "--bf16", "true", "--ddp_find_unused_parameters", "false",
            "--max_steps", "5000", "--max_train_minutes", "0.05", "--eval_steps", "50", "--save_steps", "50",
        )
    )  # fmt: skip
    stops = [line.rsplit(" ", 1)[-1] for line in output.splitlines() if "time budget of" in line]
    assert len(stops) == 2 and stops[0] == stops[1], stops  # both processes, at the same step
    state = json.loads((out / "trainer_state.json").read_text())
    assert str(state["global_step"]) == stops[0] and state["global_step"] < 5000
    assert logged(state, "eval_bleu")[-1][0] == state["global_step"]  # a last evaluation where it stopped


def test_two_processes_train_on_batches_by_tokens_to_the_end_of_each_epoch(tmp_path):
    """`--max_tokens_per_batch`: each process gets its own batches and as many as the other, so neither waits for
    the other at an epoch's end (a process with a batch more would hang in its gradient all-reduce)."""
    out = tmp_path / "run"
    data = write_fra_txt(tmp_path / "fra.txt")
    output = run_job(
        torchrun(
            *tiny_args(out, "--data_path", str(data)),
            "--max_train_samples", "400", "--max_tokens_per_batch", "400", "--num_train_epochs", "2",
            "--eval_steps", "1000", "--save_steps", "1000",
        )
    )  # fmt: skip
    assert "up to 800 padded tokens per optimizer step = 400 per process x 2 processes" in output
    results = json.loads((out / TRAINING_REPORT).read_text())["training"]
    assert results["world_size"] == 2 and results["max_tokens_per_batch"] == 400
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["epoch"] == 2.0 and state["global_step"] % 2 == 0  # two whole epochs, as many steps each
    # 400 pairs of about 8 + 8 tokens in 400-token batches: far fewer than 400 / 16 (pairs per batch) steps
    assert 2 * 400 / 2 / 25 <= state["global_step"] < 2 * 400 / 2 / 10


@pytest.mark.skipif(torch.cuda.is_available(), reason="on a GPU machine the launch is a valid NCCL job")
def test_a_multi_process_launch_without_use_cpu_is_refused(tmp_path):
    """On a machine without GPUs, no --use_cpu means no process group: N separate runs into one folder."""
    data = write_fra_txt(tmp_path / "fra.txt")
    command = torchrun("--preset", "tiny", "--data_path", str(data), "--output_dir", str(tmp_path / "run"))
    done = subprocess.run(command, env=launch_env(), capture_output=True, text=True, timeout=120)
    assert done.returncode != 0
    assert "launched as 2 processes" in done.stderr and "--use_cpu true" in done.stderr


def test_validation_metrics_count_each_row_once_in_any_order():
    """Rows come back reordered (length-grouped batches) and, from several processes, with repeats."""
    pairs = synthetic_pairs()
    tokenizer = train_tokenizer(
        [text for pair in pairs for text in pair], vocab_size=300, model_max_length=24
    )
    sources = [pairs[i][0] for i in range(0, 60, 10)]
    references = [[pairs[i][1], f"{pairs[i][1]} !"] for i in range(0, 60, 10)]
    rows = tokenize_dataset(
        Dataset.from_dict({"src": sources, "tgt": [refs[0] for refs in references]}), tokenizer, 24, 24
    )
    hypotheses = [references[i if i % 2 else (i + 1) % 6][0] for i in range(6)]  # every other one is wrong
    predicted = tokenizer(text_target=hypotheses)["input_ids"]

    def evaluated(order: list[int]) -> EvalPrediction:
        def padded(rows: list[list[int]], pad: int) -> np.ndarray:
            return np.array([row + [pad] * (30 - len(row)) for row in rows])

        return EvalPrediction(
            predictions=padded([predicted[i] for i in order], tokenizer.pad_token_id),
            label_ids=padded([rows["labels"][i] for i in order], -100),
            inputs=padded([rows["input_ids"][i] for i in order], tokenizer.pad_token_id),
        )

    compute_metrics = validation_metrics(tokenizer, rows, references)
    in_order = compute_metrics(evaluated(list(range(6))))
    assert in_order["bleu"] == pytest.approx(score_translations(hypotheses, references)["bleu"])
    assert compute_metrics(evaluated([3, 0, 5, 1, 4, 2, 0, 2])) == in_order  # reordered, two rows repeated
    with pytest.raises(RuntimeError, match="5 of the 6 validation rows"):
        compute_metrics(evaluated([3, 0, 5, 1, 4]))


@pytest.mark.parametrize("shards", [1, 2])
def test_each_process_reads_its_own_part_of_a_stream(tmp_path, shards):
    """What the Trainer's `accelerator.prepare` gives processes 0 and 1 of 2 from the streamed train split."""
    data_args = DataArguments(dataset=str(write_jsonl_shards(tmp_path / "corpus", shards)), streaming=True)
    training_args = Seq2SeqTrainingArguments(output_dir=str(tmp_path / "run"), max_steps=10, use_cpu=True)
    prepare_streaming(data_args, training_args)
    train = load_splits(data_args)["train"]
    everything = [(row["src"], row["tgt"]) for row in train]
    batch_size = 4

    seen = []
    for rank in (0, 1):
        loader = DataLoader(
            train, batch_size=batch_size, collate_fn=lambda rows: [(row["src"], row["tgt"]) for row in rows]
        )
        loader = prepare_data_loader(
            loader,
            num_processes=2,
            process_index=rank,
            put_on_device=False,
            dispatch_batches=training_args.accelerator_config.dispatch_batches,
        )
        seen.append([pair for batch in loader for pair in batch])

    assert len(everything) == len(set(everything)) > 4000
    assert set(seen[0]) | set(seen[1]) == set(everything)
    if shards == 2:  # one data file each
        assert not set(seen[0]) & set(seen[1]) and len(seen[0]) + len(seen[1]) == len(everything)
    else:  # every other batch each; the last round is filled up with pairs from the start
        assert len(seen[0]) == len(seen[1])
        assert not set(seen[0][:-batch_size]) & set(seen[1][:-batch_size])
        assert len(seen[0]) + len(seen[1]) - len(everything) < 2 * batch_size
        assert seen[0][:batch_size] == everything[:batch_size]
        assert seen[1][:batch_size] == everything[batch_size : 2 * batch_size]


def test_streaming_needs_max_steps(tmp_path):
    training_args = Seq2SeqTrainingArguments(output_dir=str(tmp_path), use_cpu=True)
    with pytest.raises(ValueError, match="--streaming needs --max_steps"):
        prepare_streaming(DataArguments(dataset="wmt14", streaming=True), training_args)


@pytest.mark.releases  # under the newest torch too (transformers 5.15-5.17 could not resume it)
@pytest.mark.newest_torch
def test_a_killed_torchrun_job_resumes_from_its_last_checkpoint(tmp_path):
    out = tmp_path / "run"
    data = write_fra_txt(tmp_path / "fra.txt")
    args = tiny_args(
        out, "--data_path", str(data), "--max_steps", "40", "--save_steps", "10", "--eval_steps", "10"
    )
    with (tmp_path / "killed.log").open("w") as log:
        launcher = subprocess.Popen(torchrun(*args), env=launch_env(), stdout=log, stderr=subprocess.STDOUT)
        try:
            deadline = time.monotonic() + 180
            while not (out / "checkpoint-10" / "trainer_state.json").is_file():  # the Trainer writes it last
                assert launcher.poll() is None, (tmp_path / "killed.log").read_text()[-6000:]
                assert time.monotonic() < deadline, "no checkpoint-10 after 180 s"
                time.sleep(0.1)
        finally:  # a hard crash of the whole job: torchrun and both workers, SIGKILL, no clean-up
            job = [launcher.pid]
            try:
                job += [child.pid for child in psutil.Process(launcher.pid).children(recursive=True)]
            except psutil.NoSuchProcess:
                pass
            for pid in job:
                try:
                    os.kill(pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
            launcher.wait()
    assert not (out / "checkpoint-40").exists() and not (out / TRAINING_REPORT).exists()

    output = run_job(torchrun(*args, "--resume_from_checkpoint", "True"))
    assert "Resuming training from checkpoint" in output
    state = json.loads((out / "trainer_state.json").read_text())
    assert state["global_step"] == 40
    assert [step for step, _ in logged(state, "loss")] == list(
        range(10, 41, 10)
    )  # continues the killed run's log
    assert json.loads((out / TRAINING_REPORT).read_text())["training"]["world_size"] == 2


def test_accelerate_launch_with_the_shipped_ddp_config_on_a_stream(tmp_path):
    """`accelerate launch` with configs/accelerate_ddp.yaml, 2 processes, a stream of 2 files."""
    out = tmp_path / "run"
    corpus = write_jsonl_shards(tmp_path / "corpus", 2)
    command = [
        sys.executable, "-m", "accelerate.commands.launch", "--config_file", str(DDP_CONFIG),
        "--num_processes", "2", "--main_process_port", str(free_port()), str(TRAIN_SCRIPT),
        *tiny_args(out, "--dataset", str(corpus), "--streaming", "true", "--tokenizer_sample", "600"),
        "--max_steps", "20", "--eval_steps", "10", "--save_steps", "10", "--logging_steps", "5",
    ]  # fmt: skip
    output = run_job(command)

    assert "process 1 of 2" in output and TOTAL_BATCH_LINE.format(32) in output
    results = json.loads((out / TRAINING_REPORT).read_text())
    facts = results["training"]
    assert facts["world_size"] == 2 and facts["global_batch_size"] == 32 and facts["global_step"] == 20
    assert (
        results["num_sentences"] == 20 and facts["train_pairs"] is None
    )  # the test split was read into memory
    state = json.loads((out / "trainer_state.json").read_text())
    assert [step for step, _ in logged(state, "eval_bleu")] == [10, 20]


@pytest.mark.parametrize("config", [DDP_CONFIG, FSDP_CONFIG], ids=lambda path: path.stem)
def test_shipped_accelerate_configs_parse(config):
    from accelerate.commands.config.config_args import load_config_from_file

    cluster = load_config_from_file(str(config))
    assert cluster.num_processes == 8 and cluster.mixed_precision == "no"
    if config == FSDP_CONFIG:
        assert cluster.distributed_type == "FSDP" and cluster.fsdp_config["fsdp_version"] == 2
        assert (
            cluster.fsdp_config["fsdp_state_dict_type"] == "FULL_STATE_DICT"
        )  # rank 0 writes one full model
    else:
        assert cluster.distributed_type == "MULTI_GPU"

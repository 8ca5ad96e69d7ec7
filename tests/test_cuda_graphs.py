"""Training with CUDA graphs (`hf-seq2seq train --cuda_graphs true`, `hf_seq2seq.acceleration.cuda_graphs`).

Without a GPU: what it refuses, and how batches are told apart. With one (the tests marked `cuda` run only there):
the graphed step trains exactly as the eager one (losses and weights after AdamW, shape after shape, micro-batches
accumulated), dropout draws anew at each replay, and `hf-seq2seq train` trains with it end to end.
"""

import copy
import dataclasses
import json

import pytest
import torch
from datasets import Dataset
from helpers import ROOT, TINY_VOCAB, tiny_config, tiny_tokenizer
from transformers import MarianConfig, MarianMTModel, Seq2SeqTrainingArguments

from hf_seq2seq.acceleration.cuda_graphs import GraphedTraining, batch_key, graphable
from hf_seq2seq.benchmarks.marian import BenchmarkSettings, run_benchmark
from hf_seq2seq.benchmarks.marian_table import format_table
from hf_seq2seq.cli.train import parse_args
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import TransformerMTForConditionalGeneration
from hf_seq2seq.training import trainer as trainers
from hf_seq2seq.training.trainer import build_trainer, cuda_graphs_needs

# CI runs these under the newest torch on PyPI too (a lent GPU's) and at the floors (torch's CUDA graph API)
pytestmark = [pytest.mark.newest_torch, pytest.mark.floors]

cuda = pytest.mark.skipif(not torch.cuda.is_available(), reason="CUDA graphs need a CUDA GPU")


def batch(n: int, source_len: int, target_len: int, device: str = "cpu", seed: int = 0) -> dict:
    """`n` pairs of the given padded lengths, the last pair's source and target a token shorter (padding)."""
    generator = torch.Generator().manual_seed(seed)
    input_ids = torch.randint(3, TINY_VOCAB, (n, source_len), generator=generator)
    labels = torch.randint(3, TINY_VOCAB, (n, target_len), generator=generator)
    attention_mask = torch.ones_like(input_ids)
    input_ids[-1, -1], attention_mask[-1, -1], labels[-1, -1] = 0, 0, -100
    return {
        name: tensor.to(device)
        for name, tensor in dict(input_ids=input_ids, attention_mask=attention_mask, labels=labels).items()
    }


def test_cuda_graphs_refuse_a_model_off_the_gpu():
    model = TransformerMTForConditionalGeneration(tiny_config())
    with pytest.raises(ValueError, match="CUDA graphs replay a model on a CUDA GPU; this one is on cpu"):
        GraphedTraining(model)


def test_train_refuses_cuda_graphs_without_a_gpu_or_with_what_they_cannot_replay(tmp_path, capsys):
    # transformers 5.24 renamed the flag (the old name warns)
    fields = {field.name for field in dataclasses.fields(Seq2SeqTrainingArguments)}
    checkpointing = (
        "--activation_checkpointing" if "activation_checkpointing" in fields else "--gradient_checkpointing"
    )
    with pytest.raises(SystemExit):
        parse_args(
            ["--preset", "tiny", "--output_dir", str(tmp_path), "--use_cpu", "true", "--cuda_graphs", "true",
             checkpointing, "true"]
        )  # fmt: skip
    error = capsys.readouterr().err
    assert "--cuda_graphs needs a CUDA GPU (the device is cpu)" in error
    assert "no activation checkpointing" in error


def test_the_gpu_preset_records_graphs_where_the_run_can_and_an_explicit_ask_must_be_met(tmp_path, capsys):
    """The `gpu` preset asks for CUDA graphs where the run can (`None`): `build_trainer` turns them on only for this
    package's model on one CUDA GPU, with nothing they cannot replay (here the CPU: off, no error); asked for on
    the command line, what they need is checked at once."""
    _, data_args, training_args, _ = parse_args(
        ["--preset", "gpu", "--output_dir", str(tmp_path), "--use_cpu", "true", "--eval_strategy", "no"]
    )
    assert data_args.cuda_graphs is None
    rows = [{"input_ids": [5, 6, 2], "attention_mask": [1, 1, 1], "labels": [6, 2]}] * 4
    model = TransformerMTForConditionalGeneration(tiny_config())
    trainer = build_trainer(
        model, tiny_tokenizer(), data_args, training_args, Dataset.from_list(rows), None, None
    )
    assert trainer.cuda_graphs is False and trainer.graphed is None
    with pytest.raises(SystemExit):
        parse_args(
            ["--preset", "gpu", "--output_dir", str(tmp_path), "--use_cpu", "true", "--cuda-graphs", "true"]
        )
    assert "--cuda_graphs needs a CUDA GPU" in capsys.readouterr().err
    # what a GPU run would still lack: another model class (Marian's masks read the device), the Trainer's smoother
    needs = cuda_graphs_needs(
        training_args,
        MarianMTModel(
            MarianConfig(vocab_size=TINY_VOCAB, d_model=16, pad_token_id=0, decoder_start_token_id=0)
        ),
    )
    assert any("this package's model class" in need and "MarianMTModel" in need for need in needs)
    training_args.label_smoothing_factor = (
        0.0  # as `hf-seq2seq train` sets it, the smoothing moved into the model
    )
    assert not any("own loss" in need for need in cuda_graphs_needs(training_args, model))
    training_args.label_smoothing_factor = 0.1
    assert any("own loss" in need for need in cuda_graphs_needs(training_args, model))


def test_a_trainer_built_with_cuda_graphs_refuses_to_train_off_the_gpu(tmp_path):
    _, data_args, training_args, _ = parse_args(
        [
            "--preset",
            "tiny",
            "--output_dir",
            str(tmp_path),
            "--use_cpu",
            "true",
            "--eval_strategy",
            "no",
            "--load_best_model_at_end",
            "false",
        ]
    )
    data_args.cuda_graphs = True
    rows = [{"input_ids": [5, 6, 2], "attention_mask": [1, 1, 1], "labels": [6, 2]}] * 4
    model = TransformerMTForConditionalGeneration(tiny_config())
    with pytest.raises(ValueError, match=r"--cuda_graphs needs a CUDA GPU \(the device is cpu\)"):
        build_trainer(model, tiny_tokenizer(), data_args, training_args, Dataset.from_list(rows), None, None)


def test_the_trainer_trains_through_the_graphs_and_evaluates_without(tmp_path, monkeypatch):
    """The plumbing, on the CPU: each training step's loss comes through `GraphedTraining` (here a stand-in that
    calls the model), built once for the model the Trainer trains; evaluation calls the model itself."""
    calls = []

    class StandIn:
        def __init__(self, model):
            self.model, self.graphs = model, 0
            calls.append(("built", model))

        def __call__(self, **inputs):
            calls.append(("step", self.model.training))
            return self.model(**inputs)

    monkeypatch.setattr(trainers, "GraphedTraining", StandIn)
    monkeypatch.setattr(trainers, "cuda_graphs_needs", lambda *args, **kwargs: [])
    _, data_args, training_args, _ = parse_args(
        ["--preset", "tiny", "--output_dir", str(tmp_path), "--use_cpu", "true", "--eval_strategy", "no",
         "--load_best_model_at_end", "false", "--max_steps", "3", "--save_strategy", "no", "--report_to", "none",
         "--max_train_minutes", "0", "--disable_tqdm", "true", "--label_smoothing_factor", "0"]
    )  # fmt: skip
    data_args.cuda_graphs = True
    rows = [{"input_ids": [5, 6, 2], "attention_mask": [1, 1, 1], "labels": [6, 2]}] * 16
    model = TransformerMTForConditionalGeneration(tiny_config())
    data = Dataset.from_list(rows)
    trainer = build_trainer(model, tiny_tokenizer(), data_args, training_args, data, data, None)
    trainer.train()
    assert calls[0] == ("built", trainer.model_wrapped) and calls[1:] == [("step", True)] * 3
    trainer.evaluate()
    assert len(calls) == 4


def test_the_benchmark_refuses_cuda_graphs_off_the_gpu():
    with pytest.raises(ValueError, match="--cuda-graphs needs a CUDA device"):
        run_benchmark(BenchmarkSettings(size="cpu", device="cpu", cuda_graphs=True, measure_memory=False))


def test_the_benchmark_table_shows_the_graphed_training_beside_the_eager_models():
    """The table printed from the H100's benchmark JSON (docs/bench): the rows of ours with CUDA graphs, their share
    of the bf16 peak and their ratios over eager ours and eager Marian, measured in the same turns."""
    result = json.loads(
        (ROOT / "docs" / "bench" / "nvidia-h100-80gb-hbm3_benchmark_large_bf16_cuda_graphs.json").read_text()
    )
    lines = format_table(result).splitlines()
    start = lines.index(
        "training of ours with CUDA graphs, in turn with both eager models (the first passes timed apart):"
    )
    assert lines[start + 2].split() == [
        "ours,",
        "64",
        "sentences",
        "232,283",
        "6.6%",
        "4.11x",
        "4.46x",
        "0.2",
        "+",
        "0.1s",
    ]
    assert lines[start + 3].split() == [
        "ours,",
        "by",
        "tokens",
        "693,139",
        "15.1%",
        "1.05x",
        "1.35x",
        "0.4",
        "+",
        "0.4s",
    ]


def test_only_a_loss_with_gradients_for_the_parameters_alone_is_graphed():
    inputs = batch(4, 7, 5)
    assert graphable(inputs)
    assert not graphable({name: value for name, value in inputs.items() if name != "labels"})  # no loss
    embeds = torch.zeros(
        4, 7, 32, requires_grad=True
    )  # a gradient of its own, which the graphs do not return
    assert not graphable({"inputs_embeds": embeds, "labels": inputs["labels"]})


def test_a_graph_is_kept_for_each_batch_shape_and_autocast():
    a, b = batch(4, 7, 5), batch(4, 7, 5, seed=1)
    assert batch_key(a) == batch_key(b)  # other values, the same shapes: one graph replays both
    assert batch_key(a) != batch_key(batch(4, 7, 6))
    assert batch_key(a) != batch_key(batch(5, 7, 5))
    assert batch_key(a | {"num_items_in_batch": torch.tensor(9)}) != batch_key(a)
    dtype, key = (
        torch.get_autocast_dtype("cuda"),
        batch_key(a),
    )  # autocast's dtype: another one, another graph
    torch.set_autocast_dtype("cuda", torch.float16 if dtype != torch.float16 else torch.bfloat16)
    try:
        assert batch_key(a) != key
    finally:
        torch.set_autocast_dtype("cuda", dtype)


def graphed_and_eager(device: str = "cuda", **config) -> tuple:
    torch.manual_seed(0)
    eager = TransformerMTForConditionalGeneration(tiny_config(**config)).to(device).train()
    graphed = copy.deepcopy(eager)
    return eager, graphed, GraphedTraining(graphed)


@cuda
@pytest.mark.parametrize("dtype", [None, torch.bfloat16], ids=["fp32", "bf16"])
def test_graphed_steps_train_as_eager_ones_shape_after_shape(dtype):
    """Losses and gradients as the eager model's, step after step, with the weights changing in between (SGD, whose
    steps follow the gradients' differences: AdamW's would magnify rounding noise in near-zero gradients)."""
    eager, graphed, forward = graphed_and_eager()
    optimizers = [torch.optim.SGD(model.parameters(), lr=0.1) for model in (eager, graphed)]
    batches = [batch(4, 7, 5, "cuda", seed=s) for s in range(3)] + [
        batch(6, 9, 4, "cuda", seed=s) for s in (3, 4)
    ]
    for i in [0, 3, 1, 4, 2, 3, 0, 4]:  # each shape eager, then recorded, then replayed
        losses = []
        for call in (eager, forward):
            with torch.autocast("cuda", dtype=dtype or torch.float32, enabled=dtype is not None):
                loss = call(**batches[i]).loss
            loss.backward()
            losses.append(loss.detach())
        torch.testing.assert_close(losses[1], losses[0], rtol=1e-4, atol=1e-6)
        for p, q in zip(eager.parameters(), graphed.parameters(), strict=True):
            torch.testing.assert_close(q.grad, p.grad, rtol=1e-3, atol=1e-5)
        for optimizer in optimizers:
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
    assert forward.graphs == 2  # one pair of graphs per shape


@cuda
def test_micro_batches_accumulate_through_the_graphs():
    eager, graphed, forward = graphed_and_eager()
    a, b = batch(4, 7, 5, "cuda", seed=0), batch(4, 7, 5, "cuda", seed=1)
    forward(**a).loss.backward()  # recorded at the second use: this one runs eagerly
    graphed.zero_grad(set_to_none=True)
    for call in (eager, forward):
        for micro_batch in (
            a,
            b,
        ):  # the same shape: the second replay must not overwrite the first's gradients
            call(**micro_batch).loss.backward()
    assert forward.graphs == 1
    for p, q in zip(eager.parameters(), graphed.parameters(), strict=True):
        torch.testing.assert_close(q.grad, p.grad, rtol=1e-4, atol=1e-6)


@cuda
def test_dropout_draws_anew_at_each_replay():
    _, graphed, forward = graphed_and_eager(dropout=0.3)
    same = batch(4, 7, 5, "cuda")
    losses = [forward(**same).loss.item() for _ in range(4)]  # eager, recorded, replayed, replayed
    assert forward.graphs == 1 and len(set(losses)) == 4


@cuda
def test_evaluation_calls_the_model_as_it_is():
    _, graphed, forward = graphed_and_eager()
    graphed.eval()
    with torch.no_grad():
        for _ in range(3):
            output = forward(**batch(4, 7, 5, "cuda"))
    assert forward.graphs == 0 and output.logits is not None


@cuda
def test_train_with_cuda_graphs_trains_the_model(tmp_path):
    rows = [
        {
            "input_ids": [5 + i % 7] * (2 + i % 5) + [2],
            "attention_mask": [1] * (3 + i % 5),
            "labels": [6, 7, 2],
        }
        for i in range(64)
    ]
    _, data_args, training_args, _ = parse_args(
        ["--preset", "gpu", "--output_dir", str(tmp_path), "--cuda_graphs", "true", "--max_tokens_per_batch", "200",
         "--max_train_minutes", "0", "--num_train_epochs", "6", "--logging_steps", "5", "--eval_strategy", "no",
         "--save_strategy", "no", "--disable_tqdm", "true", "--dataloader_num_workers", "0",
         "--dataloader_persistent_workers", "false", "--report_to", "none", "--label_smoothing_factor", "0"]
    )  # fmt: skip
    model = TransformerMTForConditionalGeneration(tiny_config(vocab_size=TINY_VOCAB))
    trainer = build_trainer(
        model, tiny_tokenizer(), data_args, training_args, Dataset.from_list(rows), None, None
    )
    trainer.train()
    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    assert trainer.graphed is not None and trainer.graphed.graphs > 0
    assert losses[-1] < losses[0]

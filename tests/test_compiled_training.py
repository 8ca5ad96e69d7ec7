"""What `hf-seq2seq train` offers a GPU's training step beyond the eager default, tried on the CPU with the model as on
a GPU (`fixed_shapes`): `--torch_compile true` compiles the model once for every batch shape (batches by tokens change
shape each step; a compilation per shape would cost a GPU run most of its budget), whole or layer by layer
(accelerate's regional compilation), and saves the plain model; `--sdpa_backends` names the attention kernels
training may use, and only training."""

import os

import pytest
import torch
import torch._dynamo
from helpers import tiny_args
from torch._dynamo.utils import counters
from transformers import AutoModelForSeq2SeqLM

from hf_seq2seq.cli import train
from hf_seq2seq.cli.train import parse_args
from hf_seq2seq.models.transformer_mt import modeling_transformer_mt
from hf_seq2seq.training.trainer import TranslationTrainer

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]


@pytest.fixture
def batch_shapes(monkeypatch) -> set:
    """The (source, target) shapes of the batches trained on."""
    shapes = set()
    training_step = TranslationTrainer.training_step

    def recording_step(self, model, inputs, num_items_in_batch=None):
        shapes.add((tuple(inputs["input_ids"].shape), tuple(inputs["labels"].shape)))
        return training_step(self, model, inputs, num_items_in_batch)

    monkeypatch.setattr(TranslationTrainer, "training_step", recording_step)
    return shapes


@pytest.mark.slow  # two compiled trainings of a tiny model: about 30 s
@pytest.mark.parametrize("regional", [False, True], ids=["whole", "layer_by_layer"])
def test_compiled_training_compiles_once_for_every_batch_shape(
    tmp_path, synthetic_fra_txt, monkeypatch, batch_shapes, regional
):
    monkeypatch.setattr(modeling_transformer_mt, "fixed_shapes", lambda tensor: True)  # the model as on a GPU
    # the run sets ACCELERATE_DYNAMO_USE_DYNAMIC itself: recorded as absent here, so that it is removed afterwards
    monkeypatch.setenv("ACCELERATE_DYNAMO_USE_DYNAMIC", "")
    monkeypatch.delenv("ACCELERATE_DYNAMO_USE_DYNAMIC")
    monkeypatch.setenv("ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION", "1" if regional else "0")
    torch._dynamo.reset()
    counters.clear()
    output_dir = tmp_path / "run"
    results = train.main(
        tiny_args(
            synthetic_fra_txt, output_dir, "--max_steps", "16", "--eval_steps", "8", "--save_steps", "8",
            "--torch_compile", "true", "--torch_compile_backend", "aot_eager", "--max_tokens_per_batch", "500",
        )
    )  # fmt: skip

    assert len(batch_shapes) >= 3  # static shapes would compile again at the second
    # whole: one graph for every shape (the first batch's sources and targets have the same length: sizes that are
    # equal by chance are kept apart, or it would compile again at the second); layer by layer: one graph for each
    # kind of layer (the encoder's, the decoder's, the embeddings, the linear and norm layers outside them)
    assert counters["frames"]["ok"] == (5 if regional else 1)
    assert not counters["graph_break"]
    facts = results["training"]
    assert facts["torch_compile_backend"] == "aot_eager" and facts["torch_compile_dynamic"] is True
    assert facts["torch_compile_regional"] is regional
    assert os.environ["ACCELERATE_DYNAMO_USE_DYNAMIC"] == "1"
    # the saved folder is the plain model: every weight under its own name, none of the compiled wrappers'
    reloaded = AutoModelForSeq2SeqLM.from_pretrained(output_dir, trust_remote_code=True)
    assert not any("_orig_mod" in name for name in reloaded.state_dict())
    assert type(reloaded).__name__ == "TransformerMTForConditionalGeneration"


def test_sdpa_backends_name_the_kernels_of_training_alone(
    tmp_path, synthetic_fra_txt, batch_shapes, monkeypatch
):
    enabled = set()
    training_step = TranslationTrainer.training_step

    def recording_step(self, model, inputs, num_items_in_batch=None):
        backends = torch.backends.cuda
        enabled.add((backends.flash_sdp_enabled(), backends.cudnn_sdp_enabled(), backends.math_sdp_enabled()))
        return training_step(self, model, inputs, num_items_in_batch)

    monkeypatch.setattr(TranslationTrainer, "training_step", recording_step)
    results = train.main(
        tiny_args(synthetic_fra_txt, tmp_path / "run", "--max_steps", "3", "--sdpa_backends", "math")
    )
    assert enabled == {(False, False, True)}
    assert results["training"]["sdpa_backends"] == "math"
    assert torch.backends.cuda.flash_sdp_enabled() and torch.backends.cuda.cudnn_sdp_enabled()  # restored


def test_an_unknown_attention_backend_is_refused_with_the_choices(capsys):
    with pytest.raises(SystemExit):
        parse_args(["--preset", "gpu", "--output_dir", "x", "--sdpa_backends", "flash,fastest"])
    error = capsys.readouterr().err
    assert "--sdpa_backends: unknown attention backend fastest" in error
    assert "flash, efficient, cudnn, math" in error

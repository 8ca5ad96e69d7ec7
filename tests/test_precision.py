"""Opt-in inference precisions: int8 Linear layers (dynamic quantization) and bf16 weights keep the model's
predictions, and both the hand-written greedy search and GenerationMixin run on them."""

import copy
import os
import subprocess
import sys

import pytest
import torch
from helpers import PAD, ROOT, tiny_config
from torch import nn
from transformers import GenerationMixin

from hf_seq2seq import TransformerMTForConditionalGeneration
from hf_seq2seq.acceleration import cpu_features
from hf_seq2seq.acceleration.cpu_features import LINUX_FLAGS, cpu_supports, linux_cpu_flags
from hf_seq2seq.cli.train import parse_args
from hf_seq2seq.engines.base import TORCH_PRECISIONS
from hf_seq2seq.engines.torch_engine import (
    Int8Linear,
    precision_of,
    quantize_dynamic_int8,
    set_precision,
)
from hf_seq2seq.models.transformer_mt.generation_transformer_mt import greedy_search_arguments

# torch's CPU checks, private ones with their fallback, at torch's floor and its newest release
pytestmark = [pytest.mark.floors, pytest.mark.newest_torch]

VOCAB = 50


@pytest.fixture(scope="module")
def model() -> TransformerMTForConditionalGeneration:
    torch.manual_seed(3)
    config = tiny_config(vocab_size=VOCAB, decoder_layers=3, tie_word_embeddings=False)
    return TransformerMTForConditionalGeneration(config).eval()


@pytest.fixture(scope="module")
def batch() -> dict[str, torch.Tensor]:
    lengths = torch.tensor([12, 1, 5, 12, 8, 2, 10, 4])
    ids = torch.randint(3, VOCAB, (8, 12), generator=torch.Generator().manual_seed(0))
    mask = torch.arange(12)[None, :] < lengths[:, None]
    return {"input_ids": ids.masked_fill(~mask, PAD), "attention_mask": mask.long()}


@pytest.mark.parametrize("precision", ["int8", "bf16"])
def test_reduced_precision_keeps_the_predictions(model, batch, precision):
    """Teacher-forced on fp32's greedy output, the reduced-precision model picks the same next token at
    almost every position, with logits close to fp32's."""
    reduced = set_precision(copy.deepcopy(model), precision)
    assert precision_of(reduced) == precision and precision_of(model) == "fp32"
    with torch.inference_mode():
        target = model.generate(**batch, max_new_tokens=12, eos_token_id=None)  # (B, 13)
        logits = model(**batch, decoder_input_ids=target).logits  # (B, 13, V)
        reduced_logits = reduced(**batch, decoder_input_ids=target).logits.float()
    agreement = (logits.argmax(-1) == reduced_logits.argmax(-1)).float().mean()
    assert agreement >= 0.9
    assert (reduced_logits - logits).abs().max() < 0.3 * logits.std()


@pytest.mark.parametrize("precision", ["int8", "bf16"])
def test_greedy_search_runs_on_reduced_precision_and_equals_generation_mixin(model, batch, precision):
    """The hand-written greedy search (which fuses the cross-attention projections of plain Linear layers)
    gives GenerationMixin's tokens on a quantized or bf16 model too."""
    reduced = set_precision(copy.deepcopy(model), precision)
    kwargs = dict(max_new_tokens=12, eos_token_id=None)
    assert greedy_search_arguments(reduced, None, None, {**batch, **kwargs}) is not None
    with torch.inference_mode():
        ours = reduced.generate(**batch, **kwargs)
        expected = GenerationMixin.generate(reduced, **batch, **kwargs)
    assert ours.shape == (8, 13)
    assert torch.equal(ours, expected)


def test_int8_layers_use_8_bit_activations_where_the_cpu_has_vnni():
    """Every Linear layer becomes an `Int8Linear`; where the CPU has VNNI its activations keep all 8 bits and its
    outputs are clearly closer to fp32's than PyTorch's 7-bit rounding gives, elsewhere they are the same."""
    torch.manual_seed(0)
    layer = nn.Linear(256, 768)
    x = torch.randn(64, 256)
    with torch.inference_mode():
        expected = layer(x)
        (quantized,) = quantize_dynamic_int8(nn.Sequential(copy.deepcopy(layer)))
        packed = quantized._packed_params._packed_params
        seven_bits = torch.ops.quantized.linear_dynamic(x, packed, reduce_range=True)
        error, seven_bit_error = ((y - expected).norm() / expected.norm() for y in (quantized(x), seven_bits))
    assert isinstance(quantized, Int8Linear) and error < 0.025
    assert Int8Linear.reduce_range == (not cpu_supports("vnni"))
    if Int8Linear.reduce_range:
        assert error == seven_bit_error
    else:
        assert error < 0.75 * seven_bit_error


def test_unknown_precision_is_refused(model):
    assert TORCH_PRECISIONS == ("fp32", "bf16", "int8")
    with pytest.raises(ValueError, match="precision must be one of fp32, bf16, int8"):
        set_precision(model, "fp16")


@pytest.mark.parametrize("feature", sorted(LINUX_FLAGS))
def test_cpu_features_without_torchs_private_checks_are_the_same(feature, monkeypatch):
    """torch's `torch.cpu._is_<feature>_supported` is private: without it, the Linux CPU flags give its answer."""
    check = getattr(torch.cpu, f"_is_{feature}_supported", None)
    if check is None or not linux_cpu_flags():
        pytest.skip("needs torch's check and /proc/cpuinfo to compare")
    expected = bool(check())
    monkeypatch.delattr(torch.cpu, f"_is_{feature}_supported")
    assert cpu_supports(feature) == expected


@pytest.fixture
def fresh_probe():
    """The probe's answer is cached for the process: measured anew in the test, and forgotten after it."""
    cpu_features.cpu_trains_faster_in_bf16.cache_clear()
    yield cpu_features.cpu_trains_faster_in_bf16
    cpu_features.cpu_trains_faster_in_bf16.cache_clear()


@pytest.mark.parametrize(
    ("bf16_ms", "fp32_ms", "expected"), [(10.0, 7.0, False), (4.0, 7.0, True), (6.5, 7.0, False)]
)
def test_cpu_presets_train_in_bf16_only_where_a_bf16_step_measures_faster(
    bf16_ms, fp32_ms, expected, monkeypatch, fresh_probe
):
    """A CPU with bf16 matmuls trains in bf16 only where the probe's bf16 step is clearly the faster one: with
    avx512_bf16 and no AMX a bf16 step can take longer than an fp32 one (docs/results.md), and the cpu preset then
    trains in fp32; so it does where bf16 is only a little faster (the processes of one run, each probing, are then
    unlikely to answer differently). The probe's first pass of each precision (oneDNN building its kernels) does not
    count."""
    steps = {torch.bfloat16: bf16_ms / 1e3, torch.float32: fp32_ms / 1e3}
    seen = []

    def step_seconds(layer, inputs, dtype):
        seen.append(dtype)
        if seen.count(dtype) == 1:  # a first pass that would decide it wrongly if it counted
            return 0.0 if dtype == torch.bfloat16 else 100.0
        return steps[dtype]

    monkeypatch.setattr(cpu_features, "cpu_has_matmuls", lambda dtype: True)
    monkeypatch.setattr(cpu_features, "_step_seconds", step_seconds)
    assert fresh_probe() is expected
    assert seen.count(torch.bfloat16) == seen.count(torch.float32) > 1


def test_the_probe_leaves_the_random_state_as_it_was(monkeypatch, fresh_probe):
    """Choosing a CPU preset runs the probe: a seed set before must give the same numbers after."""
    monkeypatch.setattr(cpu_features, "cpu_has_matmuls", lambda dtype: True)  # measure, whatever this CPU has
    torch.manual_seed(7)
    fresh_probe(rows=8, width=8, repeats=1)
    after_probe = torch.rand(3)
    torch.manual_seed(7)
    assert torch.equal(after_probe, torch.rand(3))


@pytest.mark.parametrize(
    ("preset", "probes"), [("gpu", False), ("tiny", False), ("cpu", True), ("cpu-long", True)]
)
def test_only_choosing_a_cpu_preset_runs_the_probe(preset, probes, monkeypatch, fresh_probe, tmp_path):
    """The probe costs a fraction of a second: only the CPU presets run it, when chosen; `hf-seq2seq train
    --preset gpu` and `tiny` never do, and importing the presets does not (the cpu preset would find it run)."""
    measured = []
    monkeypatch.setattr(cpu_features, "cpu_has_matmuls", lambda dtype: True)
    monkeypatch.setattr(
        cpu_features, "_step_seconds", lambda layer, inputs, dtype: measured.append(dtype) or 1.0
    )
    training_args = parse_args(["--preset", preset, "--output_dir", str(tmp_path)])[2]
    assert bool(measured) is probes
    if probes:  # the probe's answer is the preset's: steps measured alike are not clearly faster in bf16
        assert training_args.bf16 is False


@pytest.mark.parametrize(("bf16_ms", "bf16", "tokens"), [(1.0, True, 600), (10.0, False, 1200)])
@pytest.mark.parametrize("preset", ["cpu", "cpu-long"])
def test_cpu_presets_batch_more_tokens_where_they_train_in_fp32(
    preset, bf16_ms, bf16, tokens, monkeypatch, fresh_probe, tmp_path
):
    """An fp32 step is bound by its matmuls, which run faster on more rows: the cpu presets batch up to 1,200
    tokens where the probe chooses fp32, and 600 (chosen in bf16) where it chooses bf16; a flag given wins."""
    monkeypatch.setattr(cpu_features, "cpu_has_matmuls", lambda dtype: True)
    monkeypatch.setattr(
        cpu_features,
        "_step_seconds",
        lambda layer, inputs, dtype: bf16_ms / 1e3 if dtype == torch.bfloat16 else 7e-3,
    )
    _, data_args, training_args, _ = parse_args(["--preset", preset, "--output_dir", str(tmp_path)])
    assert (training_args.bf16, data_args.max_tokens_per_batch) == (bf16, tokens)
    flags = ["--preset", preset, "--output_dir", str(tmp_path), "--max_tokens_per_batch", "900"]
    assert parse_args(flags)[1].max_tokens_per_batch == 900


def test_without_bf16_matmuls_nothing_is_measured(monkeypatch, fresh_probe):
    monkeypatch.setattr(cpu_features, "cpu_has_matmuls", lambda dtype: dtype == torch.float32)
    monkeypatch.setattr(
        cpu_features, "_step_seconds", lambda *args: pytest.fail("measured without bf16 matmuls")
    )
    assert fresh_probe() is False


def test_the_avx2_only_tool_makes_this_cpu_answer_as_an_avx2_one():
    """`measurements/avx2_only` (docs/tests.md), on any CPU: no bf16, fp16 or VNNI matmuls, so the cpu preset trains in
    fp32 and int8 keeps 7-bit activations, as on the AVX2 machines CI may get."""
    code = (
        "import torch; from hf_seq2seq.acceleration.cpu_features import cpu_has_matmuls, cpu_supports; "
        "from hf_seq2seq.training.presets import preset_defaults; "
        "print(cpu_has_matmuls(torch.bfloat16), cpu_has_matmuls(torch.float16), cpu_supports('vnni'), "
        "preset_defaults('cpu')['bf16'], cpu_has_matmuls(torch.float32))"
    )
    env = os.environ | {"PYTHONPATH": str(ROOT / "measurements" / "avx2_only"), "ONEDNN_MAX_CPU_ISA": "AVX2"}
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == ["False", "False", "False", "False", "True"]

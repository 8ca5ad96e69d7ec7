"""The benchmark script works end to end in its seconds-long mode (no timing is asserted: figures from a
loaded CI machine mean nothing)."""

import json
import logging
import time

import pytest
import torch

from hf_seq2seq.benchmarks import marian, measuring, peak
from hf_seq2seq.benchmarks.choices import SIZES
from hf_seq2seq.benchmarks.marian_runs import HUB_USER
from hf_seq2seq.benchmarks.measuring import build_models, interleaved, make_batches, tokens
from hf_seq2seq.cli.benchmark import main

# the benchmark as a smoke run at the tiny size: seconds, even where bf16 is emulated (an AVX2 CPU)
QUICK_TINY = ["--quick", "--size", "tiny"]

pytestmark = pytest.mark.newest_torch  # CI runs these under the newest torch on PyPI too: a lent GPU's


def test_quick_benchmark_runs_and_writes_json(tmp_path, capsys):
    out = tmp_path / "bench.json"
    result = main(["--quick", "--json", str(out)])
    saved = json.loads(out.read_text())
    assert saved["ratio_ours_over_marian"] == result["ratio_ours_over_marian"]
    for model in ("ours", "marian"):
        assert saved[model]["train_tokens_per_s"] > 0 and saved[model]["generate_b64_new_tokens_per_s"] > 0
        assert 0 < saved[model]["train_mfu"] < 1
    assert "ours/Marian" in capsys.readouterr().out


def test_models_have_the_same_sizes_and_batches_realistic_lengths():
    models = build_models(SIZES["cpu"], "cpu")

    def trainable(model) -> int:
        return sum(p.numel() for p in model.parameters() if p.requires_grad)

    assert trainable(models["ours"]) == trainable(models["marian"])  # same arithmetic, different code
    batch = make_batches(1, 64, 8000, "cpu")[0]
    lengths = batch["attention_mask"].sum(1)
    assert lengths.min() >= 5 and lengths.max() <= 20 and tokens(batch) > 64 * 10


@pytest.mark.floors  # its process died under transformers 5.15-5.22 (no activation_checkpointing_enable), 2026-11-27
def test_a_peak_memory_measurement_that_fails_says_so_at_once():
    """Its process ends with an error (here: a model it cannot build): the caller hears of it as soon as the process
    ends, not after the 600 s it allows a measurement."""
    started = time.monotonic()
    with pytest.raises(RuntimeError, match="'no-such-model' failed: its process ended with exit status 1"):
        measuring.peak_memory("no-such-model", SIZES["cpu"], "cpu", 2, None)
    assert time.monotonic() - started < 120


def test_generate_only_benchmark_reports_decoding_and_no_training(capsys):
    result = main(["--quick", "--generate-only", "--precision", "int8", "bf16"])
    for model in ("ours", "marian"):
        assert (
            result[model]["generate_b64_new_tokens_per_s"] > 0
            and result[model]["latency_b1_ms_per_token"] > 0
        )
        assert result[model]["train_tokens_per_s"] is None
    assert set(result["ratio_ours_over_marian"]) == {
        "generate_b64_new_tokens_per_s",
        "latency_b1_ms_per_token",
    }
    hand_written = "greedy_search (hand-written)"
    assert result["generate_path"] == {
        "ours": hand_written,
        "marian": "GenerationMixin",
        "ours int8": hand_written,
        "ours bf16": hand_written,
        HUB_USER: hand_written,
    }
    for name in ("ours int8", "ours bf16"):  # opt-in rows, each against Marian
        row = result["opt_in"][name]
        assert row["ratio_over_marian"]["generate_b64_new_tokens_per_s"] == pytest.approx(
            row["generate_b64_new_tokens_per_s"] / result["marian"]["generate_b64_new_tokens_per_s"]
        )
    hub_user = result["ours_as_hub_user"]  # ours without the package's packed weights, against Marian
    assert hub_user["ratio_over_marian"]["generate_b64_new_tokens_per_s"] == pytest.approx(
        hub_user["generate_b64_new_tokens_per_s"] / result["marian"]["generate_b64_new_tokens_per_s"]
    )
    output = capsys.readouterr().out
    assert "ours runs greedy_search (hand-written)" in output
    assert "as a Hub user (new tokens/s)" in output
    assert "generate b=64" in output and "training throughput" not in output  # no rows of what was not run
    assert "opt-in generate() of ours, against Marian (fp32)" in output and "ours int8" in output


@pytest.mark.slow  # compiles the model for each measured shape (inductor's C++): seconds, even at the tiny size
def test_benchmark_measures_the_compiled_path_after_compiling(capsys):
    result = main([*QUICK_TINY, "--generate-only", "--compile"])
    row = result["opt_in"]["ours compiled fp32"]
    assert row["generate_b64_new_tokens_per_s"] > 0 and row["compile_and_first_pass_s"] > 0
    assert result["generate_path"]["ours compiled fp32"] == "GenerationMixin, static cache, torch.compile"
    assert "ours compiled fp32" in capsys.readouterr().out


def test_models_measured_by_batch_take_turns_on_every_batch():
    """`interleaved(..., by_batch=True)` (batch-1 latency of `compare`): after one warm-up batch each, every
    batch runs every model, the first one rotating, so that no model is always timed first or last."""
    calls = []
    fns = {name: (lambda batch, name=name: calls.append((name, batch["i"]))) for name in "abc"}
    seconds = interleaved(fns, [{"i": i} for i in range(4)], repeats=2, device="cpu", by_batch=True)
    assert set(seconds) == set("abc") and all(s >= 0 for s in seconds.values())
    one_pass = [("a", 0), ("b", 0), ("c", 0), ("b", 1), ("c", 1), ("a", 1)]
    one_pass += [("c", 2), ("a", 2), ("b", 2), ("a", 3), ("b", 3), ("c", 3)]
    assert calls == [("a", 0), ("b", 0), ("c", 0)] + one_pass * 2


def test_the_peak_is_of_the_dtype_the_matmuls_really_ran_in(monkeypatch):
    """A bf16 run is divided by bf16's peak where the device multiplies bf16 matrices (a GPU, an AVX512-BF16 CPU),
    by fp32's on a CPU that emulates them (AVX2 only): there the bf16 matmuls run on fp32 units, and the emulated
    4096 x 4096 bf16 peak is far below a step's small matmuls (CI's AVX2 machine printed a 300% share)."""
    for has_bf16 in (True, False):
        monkeypatch.setattr(peak, "cpu_has_matmuls", lambda dtype, has=has_bf16: has)
        assert peak.peak_dtype("cpu", torch.bfloat16) == (torch.bfloat16 if has_bf16 else None)
        assert peak.peak_dtype("cuda", torch.bfloat16) == torch.bfloat16
        assert peak.peak_dtype("cpu", None) is None


@pytest.mark.parametrize("bf16_matmuls", ["this CPU's", "none"])
def test_training_is_measured_on_token_batches_against_the_peak_of_its_dtype(
    bf16_matmuls, monkeypatch, capsys
):
    """`--dtype bf16`: the FLOP/s are divided by the peak of the dtype the matmuls ran in (bf16's where the CPU
    has bf16 matmuls, fp32's otherwise, which the table says; on a GPU bf16's peak is many times fp32's);
    `--train-batch-tokens N`: training also on batches of up to N padded tokens. Run as this CPU is and as a CPU
    without bf16 matmuls (whose bf16 steps are no faster than fp32's peak)."""
    if bf16_matmuls == "none":
        monkeypatch.setattr(peak, "cpu_has_matmuls", lambda dtype: dtype == torch.float32)
    has_bf16 = peak.cpu_has_matmuls(torch.bfloat16)
    peak_dtypes = []

    def matmul_peak_flops(device, dtype=None, n=None, repeats=5):
        peak_dtypes.append(dtype)
        return measuring.matmul_peak_flops(device, dtype, n, repeats)

    monkeypatch.setattr(marian, "matmul_peak_flops", matmul_peak_flops)
    result = main([*QUICK_TINY, "--dtype", "bf16", "--train-batch-tokens", "300"])
    assert peak_dtypes == [torch.bfloat16 if has_bf16 else None]
    assert result["matmul_peak_dtype"] == ("bf16" if has_bf16 else "fp32")
    by_tokens = result["token_batches"]
    assert max(by_tokens["padded_tokens_per_batch"]) <= 300 and min(by_tokens["sentences_per_batch"]) > 4
    for model in ("ours", "marian"):
        assert by_tokens[model]["train_tokens_per_s"] > 0 and 0 < by_tokens[model]["train_mfu"] < 1
        assert result[model]["train_mfu"] == pytest.approx(
            result[model]["train_flops_per_s"] / result["matmul_peak_flops_per_s"]
        )
    output = capsys.readouterr().out
    assert "training on batches of up to 300 padded tokens" in output
    if has_bf16:
        assert "bf16 matmul peak" in output and "emulated" not in output
    else:
        assert (
            "fp32 matmul peak" in output
            and "(this CPU has no bf16 matmuls: they are emulated in fp32)" in output
        )


def test_a_step_above_the_measured_peak_reports_no_share_of_it(monkeypatch, capsys, caplog):
    """Where a step ran faster than the peak measured (here: a peak of 1 GFLOP/s), the peak did not bound the
    run: the share is None in the JSON, n/a in the table (or no row), with a warning, never above 100%."""
    monkeypatch.setattr(marian, "matmul_peak_flops", lambda device, dtype=None, n=None: 1e9)
    with caplog.at_level(logging.WARNING, logger=peak.__name__):
        result = main(["--quick", "--train-batch-tokens", "300"])
    for figures in (result, result["token_batches"]):
        assert figures["ours"]["train_mfu"] is None and figures["marian"]["train_mfu"] is None
        assert figures["ours"]["train_flops_per_s"] > 1e9  # the figures the share was of are still there
        assert "train_mfu" not in figures["ratio_ours_over_marian"]
    assert "the peak does not bound this run" in caplog.text
    share_rows = [line for line in capsys.readouterr().out.splitlines() if "FLOP/s / matmul peak" in line]
    assert share_rows and all(row.split()[-3:-1] == ["n/a", "n/a"] for row in share_rows)


def test_measure_training_compares_compiled_and_eager_steps_on_token_batches(tmp_path, capsys):
    """`hf-seq2seq measure-training` as the GPU check runs it: the preset's autocast and batches by tokens (each
    of another shape), the compiled model's first pass (its compilation) reported beside its speed. At the tiny size
    and with dynamo alone (AOTAutograd's compiled training is test_compiled_training.py's): the cpu size with
    aot_eager took 130 s on an AVX2 CPU, where bf16 is emulated."""
    from hf_seq2seq.cli.measure_training import main as measure_training

    out = tmp_path / "options.json"
    result = measure_training(
        ["--device", "cpu", "--memory-size", "tiny", "--memory-batch-size", "2", "--compile-size", "tiny",
         "--compile-batches", "3", "--compile-batch-tokens", "300", "--compile-backend", "eager", "--dtype", "bf16",
         "--repeats", "1", "--json", str(out)]
    )  # fmt: skip
    speed = json.loads(out.read_text())["compile"]
    assert speed == result["compile"]
    assert speed["dtype"] == "bf16" and speed["batch_tokens"] == 300 and speed["backend"] == "eager"
    assert len(set(speed["sentences_per_batch"])) > 1  # batches by tokens: as many sentences as fit
    assert speed["eager_tokens_per_s"] > 0 and speed["compiled_tokens_per_s"] > 0
    assert set(speed["warm_up_seconds"]) == {"eager", "compiled"}
    assert "first pass, compiling" in capsys.readouterr().out
    assert result["memory"]["with_checkpointing_mb"] > 0
    speed_only = measure_training(
        ["--device", "cpu", "--skip-memory", "--compile-size", "tiny", "--compile-batches", "2",
         "--compile-batch-size", "4", "--compile-backend", "eager", "--repeats", "1"]
    )  # fmt: skip
    assert speed_only["memory"] is None and speed_only["compile"]["batch_size"] == 4
    assert "peak memory" not in capsys.readouterr().out


def test_benchmark_measures_compiled_training_against_eager_and_compiled_marian(capsys, caplog):
    """`--compile-training`: compiled copies of both models trained on every batch set, beside the eager ones,
    their compilation timed apart; it adds no generate() row (that is `--compile`). Each stage logs its seconds and
    figures as it ends: a run stopped early (a device lent for minutes) still says what it measured."""
    with caplog.at_level(logging.INFO, logger="hf_seq2seq.benchmarks.marian_runs"):
        result = main(
            [*QUICK_TINY, "--compile-training", "--compile-backend", "eager", "--train-batch-tokens", "300"]
        )
    logged = [record.getMessage() for record in caplog.records]
    eager = result["ours"]["train_tokens_per_s"]
    ours_compiled = result["compiled_training"]["token_batches"]["ours compiled"]["train_tokens_per_s"]
    assert any(
        m.startswith(f"training, 4 sentences a batch: ours {eager:,.0f} tokens/s, marian ") for m in logged
    )
    assert any(
        m.startswith(f"compiled training, token_batches: ours compiled {ours_compiled:,.0f}") for m in logged
    )
    assert any(m.startswith("marian compiled, sentences: the first pass (compiling): ") for m in logged)
    assert logged.index("generate() ...") > logged.index("compiled training, token_batches ...")
    compiled = result["compiled_training"]
    assert set(compiled) == {"sentences", "token_batches"}
    for rows in compiled.values():
        for name in ("ours compiled", "marian compiled"):
            assert rows[name]["train_tokens_per_s"] > 0 and rows[name]["compile_and_first_pass_s"] > 0
            assert 0 < rows[name]["train_mfu"] < 1
        assert rows["ours_compiled_over_marian"] > 0 and rows["ours_compiled_over_marian_compiled"] > 0
    # ours compiled over eager Marian = (ours compiled over eager ours) x (eager ours over eager Marian)
    sentences = compiled["sentences"]
    eager_ratio = result["ratio_ours_over_marian"]["train_tokens_per_s"]
    assert sentences["ours_compiled_over_marian"] == pytest.approx(
        sentences["ours compiled"]["over_eager"] * eager_ratio
    )
    assert result["opt_in"] == {}
    assert result["compiled_training_settings"] == {
        "backend": "eager",
        "mode": None,
        "dynamic": True,
        "regions": False,
    }
    assert "training of torch.compile'd models (eager, dynamic shapes;" in capsys.readouterr().out
    assert main(QUICK_TINY)["compiled_training"] is None


def test_benchmark_compiles_layer_by_layer_and_names_the_attention_kernels(capsys, caplog, recwarn):
    """`--compile-regions` compiles each repeated layer of both models alone (as accelerate's regional compilation
    in `hf-seq2seq train`), `--sdpa-backends` restricts both models' attention; the result says how it ran. Both
    models' layers share transformers' code, compiled once for each of them: dynamo's recompile limit never sends
    a layer back to eager execution during the measurement (an H100's run reached the default limit, 8; here it
    is lowered to 1, which the layers' compilations exceed), and the limit is as it was afterwards."""
    result = main([*QUICK_TINY, "--generate-only", "--sdpa-backends", "math"])
    assert result["settings"]["sdpa_backends"] == "math"
    assert torch.backends.cuda.flash_sdp_enabled()  # restored after the run
    with (
        torch._dynamo.config.patch(recompile_limit=1),
        caplog.at_level(logging.WARNING, logger="torch._dynamo"),
    ):
        result = main([*QUICK_TINY, "--compile-training", "--compile-backend", "eager", "--compile-regions"])
        assert torch._dynamo.config.recompile_limit == 1
    assert not [r for r in caplog.records if "recompile_limit" in r.getMessage()]
    # the layers, compiled alone, are traced through the packing of padding without a warning
    assert not [w for w in recwarn if "Dynamo does not know how to trace" in str(w.message)]
    assert result["compiled_training_settings"]["regions"] is True
    assert result["settings"]["sdpa_backends"] == "default"
    assert "dynamic shapes, layer by layer" in capsys.readouterr().out
    with pytest.raises(SystemExit):
        main(["--quick", "--sdpa-backends", "fast"])
    assert "unknown attention backend fast" in capsys.readouterr().err


def test_benchmark_compiles_training_in_the_mode_asked(monkeypatch, capsys):
    """`--compile-mode reduce-overhead` (CUDA graphs on a GPU) reaches torch.compile for both models, and the result
    says so."""
    modes = []
    compile_ = torch.compile

    def recording_compile(model, **kwargs):
        modes.append(kwargs.get("mode"))
        return compile_(model, **kwargs)

    monkeypatch.setattr(torch, "compile", recording_compile)
    result = main(
        [*QUICK_TINY, "--compile-training", "--compile-backend", "eager", "--compile-mode", "reduce-overhead"]
    )
    assert modes == ["reduce-overhead", "reduce-overhead"]
    assert result["compiled_training_settings"]["mode"] == "reduce-overhead"
    assert "(eager, reduce-overhead, dynamic shapes;" in capsys.readouterr().out

"""Quality and CPU speed of a trained model's exports against its own `generate()` and Marian's at the same
size (`hf-seq2seq benchmark --exports`): the CTranslate2 exports (float32 and int8; the deploy extra) and the
ONNX export (fp32 and int8 graphs on ONNX Runtime, where the onnx extra is installed).

The measuring tools are in `hf_seq2seq.benchmarks.measuring`; the benchmark against Marian of freshly built
models is `hf_seq2seq.benchmarks.marian`.
"""

import os
import platform
import tempfile
from collections.abc import Callable
from importlib.metadata import version
from importlib.util import find_spec
from pathlib import Path

import ctranslate2
import torch
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from hf_seq2seq.benchmarks.choices import Sizes
from hf_seq2seq.benchmarks.measuring import build_models, generate_fn, interleaved
from hf_seq2seq.data.loaders import load_named_dataset
from hf_seq2seq.engines.base import translate
from hf_seq2seq.engines.ctranslate2_engine import CTranslate2Translator
from hf_seq2seq.engines.torch_engine import TorchTranslator, load_model_and_tokenizer
from hf_seq2seq.evaluation.metrics import score_translations
from hf_seq2seq.export.ctranslate2 import export_ctranslate2

MARIAN = "Marian generate()"
"""The speed row every other is compared with."""


def run_exports_benchmark(
    model_dir: str,
    data_path: str | None = None,
    max_samples: int | None = None,
    batch_size: int = 64,
    new_tokens: int = 20,
    latency_runs: int = 20,
    repeats: int = 3,
    intra_threads: tuple[int, ...] = (1, 2),
) -> dict:
    """Quality and CPU speed of the CTranslate2 exports (float32 and int8) and the ONNX export (fp32 and int8
    graphs, on ONNX Runtime; where the onnx extra is installed) of a trained model folder, written to a
    temporary folder, against its `generate()` and Marian's at the same size.

    Quality, on the fra-eng test split (greedy, the saved length rule): the share of sentences whose float32
    and int8 translations are identical to `generate()`'s, and BLEU of all three. Speed, on the split's first
    sentences: new tokens/s at `batch_size` and ms/token at batch 1, every engine generating exactly
    `new_tokens` tokens; CTranslate2 with int8 and int8_float32 compute and each of `intra_threads`. The ISA
    CTranslate2 uses is fixed per process: run once as is and once with `CT2_FORCE_CPU_ISA=AVX512` (or AVX2).
    """
    model, tokenizer = load_model_and_tokenizer(model_dir, device="cpu")
    sources, references = _test_split(data_path, max_samples)
    with tempfile.TemporaryDirectory() as tmp:
        exports = {
            q: export_ctranslate2(model_dir, f"{tmp}/{q}", quantization=q) for q in ("float32", "int8")
        }
        hypotheses, onnx_models = _translations(
            model_dir, model, tokenizer, exports, sources, batch_size, tmp
        )
        quality = _quality(hypotheses, references)
        engines = _speed_engines(model, tokenizer, exports, onnx_models, new_tokens, intra_threads)
        speed = _speed(engines, tokenizer, sources, batch_size, new_tokens, latency_runs, repeats)
    return {
        "model": str(model_dir),
        "test_sentences": len(sources),
        "quality": quality,
        "speed": speed,
        "settings": dict(
            batch_size=batch_size, new_tokens=new_tokens, latency_runs=latency_runs, repeats=repeats
        ),
        "ct2_force_cpu_isa": os.environ.get("CT2_FORCE_CPU_ISA", "default"),
        "ctranslate2": ctranslate2.__version__,
        "onnxruntime": version("onnxruntime") if onnx_models else None,
        "torch_threads": torch.get_num_threads(),
        "cpu": platform.processor() or "cpu",
    }


def _test_split(data_path: str | None, max_samples: int | None) -> tuple[list[str], list[list[str]]]:
    """The fra-eng test split's sources and references (its first `max_samples` sentences, if given)."""
    # the test split only: no test set to keep out of training, none to read
    rows = load_named_dataset("fra-eng", data_path=data_path, exclude_test_sets=["none"])["test"]
    if max_samples is not None:
        rows = rows.select(range(min(max_samples, len(rows))))
    references = rows["references"] if "references" in rows.column_names else [[t] for t in rows["tgt"]]
    return rows["src"], references


def _translations(
    model_dir: str,
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    exports: dict[str, Path],
    sources: list[str],
    batch_size: int,
    tmp: str,
) -> tuple[dict[str, list[str]], dict[str, torch.nn.Module]]:
    """Every engine's translations of `sources` (greedy, the saved length rule), by name ("generate", the
    CTranslate2 quantizations, "onnxruntime <precision>"), and the ONNX Runtime models by name (none without
    the onnx extra; their export is written under `tmp`)."""
    hypotheses = {"generate": translate(TorchTranslator(model, tokenizer), sources, batch_size)}
    for q, folder in exports.items():
        hypotheses[q] = translate(CTranslate2Translator(folder), sources, batch_size)
    onnx_models = {}
    if find_spec("onnxruntime") is not None:
        from hf_seq2seq.engines.onnxruntime_engine import PRECISIONS, OnnxTranslator
        from hf_seq2seq.export.onnx import export_onnx

        onnx_dir = export_onnx(model_dir, f"{tmp}/onnx", quantize="int8")
        for precision in PRECISIONS:
            onnx_translator = OnnxTranslator(onnx_dir, precision)
            hypotheses[f"onnxruntime {precision}"] = translate(onnx_translator, sources, batch_size)
            onnx_models[f"onnxruntime {precision}"] = onnx_translator.model
    return hypotheses, onnx_models


def _quality(hypotheses: dict[str, list[str]], references: list[list[str]]) -> dict[str, dict[str, float]]:
    """Each engine's BLEU and the share of its translations identical to `generate()`'s."""
    generated = hypotheses["generate"]
    return {
        name: {
            "bleu": score_translations(hyps, references)["bleu"],
            "identical_to_generate": sum(a == b for a, b in zip(hyps, generated, strict=True))
            / len(generated),
        }
        for name, hyps in hypotheses.items()
    }


def _speed_engines(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    exports: dict[str, Path],
    onnx_models: dict[str, torch.nn.Module],
    new_tokens: int,
    intra_threads: tuple[int, ...],
) -> dict[str, Callable[[dict], None]]:
    """The timed engines by name: ours and Marian (same sizes) through `generate()`, each CTranslate2 export
    at each compute type and thread count, the ONNX Runtime models through `generate()`."""
    config = model.config
    sizes = Sizes(config.vocab_size, config.d_model, config.encoder_layers, config.encoder_attention_heads,
                  config.encoder_ffn_dim)  # fmt: skip
    engines = {
        "ours generate()": generate_fn(model, new_tokens, None),
        MARIAN: generate_fn(build_models(sizes, "cpu", names=("marian",))["marian"], new_tokens, None),
    }
    for q, folder in exports.items():
        for compute_type in ("int8", "int8_float32") if q == "int8" else ("float32",):
            for threads in intra_threads:
                translator = ctranslate2.Translator(
                    str(folder), device="cpu", compute_type=compute_type, intra_threads=threads
                )
                engines[f"ct2 {compute_type} {threads} thr"] = ctranslate2_fn(
                    translator, tokenizer, new_tokens
                )
    return engines | {
        name: generate_fn(onnx_model, new_tokens, None) for name, onnx_model in onnx_models.items()
    }


def _speed(
    engines: dict[str, Callable[[dict], None]],
    tokenizer: PreTrainedTokenizerBase,
    sources: list[str],
    batch_size: int,
    new_tokens: int,
    latency_runs: int,
    repeats: int,
) -> dict[str, dict[str, float]]:
    """Each engine's new tokens/s on the first `batch_size` sources at once and ms/token on the first
    `latency_runs` one by one, measured in turn, and both over Marian's."""

    def batch_of(texts: list[str]) -> dict:
        batch = dict(tokenizer(texts, padding=True, return_tensors="pt"))
        batch["tokens"] = [tokenizer.convert_ids_to_tokens(tokenizer(t)["input_ids"]) for t in texts]
        return batch

    big_s = interleaved(engines, [batch_of(sources[:batch_size])], repeats, "cpu")
    single_s = interleaved(engines, [batch_of([s]) for s in sources[:latency_runs]], repeats, "cpu")
    speed = {
        name: {
            "new_tokens_per_s_batch": batch_size * new_tokens / big_s[name],
            "ms_per_token_batch_1": 1000 * single_s[name] / (latency_runs * new_tokens),
        }
        for name in engines
    }
    marian = speed[MARIAN]
    for figures in speed.values():
        figures["throughput_over_marian"] = (
            figures["new_tokens_per_s_batch"] / marian["new_tokens_per_s_batch"]
        )
        figures["latency_over_marian"] = figures["ms_per_token_batch_1"] / marian["ms_per_token_batch_1"]
    return speed


def ctranslate2_fn(translator, tokenizer, new_tokens: int) -> Callable[[dict], None]:
    """Greedy CTranslate2 decoding of exactly `new_tokens` tokens for a batch's `tokens`."""

    def run(batch: dict) -> None:
        results = translator.translate_batch(
            batch["tokens"], beam_size=1, min_decoding_length=new_tokens, max_decoding_length=new_tokens
        )
        assert all(len(r.hypotheses[0]) == new_tokens for r in results)

    return run


def format_exports_table(result: dict) -> str:
    """The printed table of a `run_exports_benchmark` result: quality of each engine, then speed."""
    lines = [
        f"{result['model']}: {result['test_sentences']} test sentences; CTranslate2 {result['ctranslate2']}, "
        f"ISA {result['ct2_force_cpu_isa']}, ONNX Runtime {result.get('onnxruntime')}, torch "
        f"{result['torch_threads']} threads",
        f"{'':22}{'BLEU':>8}{'identical to generate()':>26}",
    ]
    for name, q in result["quality"].items():
        lines.append(f"{name:22}{q['bleu']:>8.2f}{q['identical_to_generate']:>25.1%}")
    b = result["settings"]["batch_size"]
    lines.append(f"{'':26}{f'tokens/s b={b}':>16}{'x Marian':>10}{'ms/token b=1':>14}{'x Marian':>10}")
    for name, s in result["speed"].items():
        lines.append(
            f"{name:26}{s['new_tokens_per_s_batch']:>16,.0f}{s['throughput_over_marian']:>9.2f}x"
            f"{s['ms_per_token_batch_1']:>14.2f}{s['latency_over_marian']:>9.2f}x"
        )
    return "\n".join(lines)

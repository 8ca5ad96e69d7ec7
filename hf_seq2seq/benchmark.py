"""Speed of our model against Hugging Face's `MarianMTModel` at identical sizes, on identical batches.

Marian is the same architecture (post-LN, sinusoidal positions, scaled and tied embeddings), so at equal
vocab, width, depth, heads and FFN size the two do the same arithmetic and the ratio measures the
implementation. Measurements are interleaved (ours, Marian, ours, ...) and repeated; medians are reported.

1. training throughput: forward + backward + AdamW step, non-pad (source + target) tokens per second;
2. greedy `generate()` throughput at batch 64 and latency at batch 1 (a fixed number of new tokens), through
   plain `model.generate(...)` calls: ours then runs its hand-written greedy search (see `generate_path`);
   optionally also of ours at an opt-in inference precision (bf16 weights, int8 Linear layers) and through
   the opt-in compiled path (static cache, decoding step compiled by `torch.compile`);
3. peak memory of one training step (CUDA: allocator peak; CPU: resident-set growth, in a fresh process);
4. achieved training FLOP/s (counted with `torch.utils.flop_counter`) as a fraction of a measured fp32
   matmul peak on the same device.
"""

import contextlib
import copy
import multiprocessing
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass
from importlib.metadata import version
from importlib.util import find_spec

import torch
from torch.utils.flop_counter import FlopCounterMode
from transformers import MarianConfig, MarianMTModel

from .configuration_transformer_mt import TransformerMTConfig
from .decoding import Decoding
from .generation_transformer_mt import greedy_search_arguments
from .inference import set_precision
from .modeling_transformer_mt import TransformerMTForConditionalGeneration

PAD, EOS = 0, 1


@dataclass
class Sizes:
    vocab_size: int = 8000
    d_model: int = 256
    layers: int = 3
    heads: int = 4
    ffn_dim: int = 1024


SIZES = {
    "cpu": Sizes(),  # the CPU training preset
    "large": Sizes(vocab_size=16000, d_model=512, layers=6, heads=8, ffn_dim=2048),  # the paper's base
}


def build_models(
    sizes: Sizes, device: str, seed: int = 0, names: tuple[str, ...] = ("ours", "marian")
) -> dict[str, torch.nn.Module]:
    """Ours and Marian with the same sizes, tied embeddings, ReLU, no dropout (so steps are comparable)."""
    common = dict(
        vocab_size=sizes.vocab_size,
        d_model=sizes.d_model,
        encoder_layers=sizes.layers,
        decoder_layers=sizes.layers,
        encoder_attention_heads=sizes.heads,
        decoder_attention_heads=sizes.heads,
        encoder_ffn_dim=sizes.ffn_dim,
        decoder_ffn_dim=sizes.ffn_dim,
        dropout=0.0,
        attention_dropout=0.0,
        activation_dropout=0.0,
        activation_function="relu",
        max_position_embeddings=256,
        scale_embedding=True,
        pad_token_id=PAD,
        eos_token_id=EOS,
        decoder_start_token_id=PAD,
        tie_word_embeddings=True,
    )
    builders = {
        "ours": lambda: TransformerMTForConditionalGeneration(
            TransformerMTConfig(**common, attn_implementation="sdpa")
        ),
        "marian": lambda: MarianMTModel(
            MarianConfig(**common, share_encoder_decoder_embeddings=True, attn_implementation="sdpa")
        ),
    }
    models = {}
    for name in names:
        torch.manual_seed(seed)
        models[name] = builders[name]().to(device)
    return models


def make_batches(n: int, batch_size: int, vocab_size: int, device: str, seed: int = 0) -> list[dict]:
    """Padded batches with source and target lengths uniform in [5, 20] (targets end in eos)."""
    g = torch.Generator().manual_seed(seed)
    batches = []
    for _ in range(n):
        src_len = torch.randint(5, 21, (batch_size,), generator=g)
        tgt_len = torch.randint(5, 21, (batch_size,), generator=g)
        src = torch.randint(2, vocab_size, (batch_size, int(src_len.max())), generator=g)
        src_mask = torch.arange(src.shape[1])[None] < src_len[:, None]
        labels = torch.randint(2, vocab_size, (batch_size, int(tgt_len.max())), generator=g)
        labels[torch.arange(batch_size), tgt_len - 1] = EOS
        labels = labels.masked_fill(torch.arange(labels.shape[1])[None] >= tgt_len[:, None], -100)
        batch = {
            "input_ids": src.masked_fill(~src_mask, PAD),
            "attention_mask": src_mask.long(),
            "labels": labels,
        }
        batches.append({k: v.to(device) for k, v in batch.items()})
    return batches


def tokens(batch: dict) -> int:
    return int(batch["attention_mask"].sum() + (batch["labels"] != -100).sum())


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def autocast(device: str, dtype: torch.dtype | None):
    if dtype is None:
        return contextlib.nullcontext()
    return torch.autocast(device.split(":")[0], dtype=dtype)


def train_step_fn(model: torch.nn.Module, device: str, dtype: torch.dtype | None) -> Callable[[dict], None]:
    model.train()
    optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4)

    def step(batch: dict) -> None:
        with autocast(device, dtype):
            loss = model(**batch).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad(set_to_none=True)

    return step


def generate_kwargs(batch: dict, new_tokens: int, compiled: bool = False) -> dict:
    """The arguments of the measured `generate()` calls: plain greedy search of exactly `new_tokens` tokens; with
    `compiled`, through the opt-in compiled path (`Decoding(compile=True)`: a static cache and the decoding step
    compiled by `torch.compile`)."""
    kwargs = dict(
        input_ids=batch["input_ids"],
        attention_mask=batch["attention_mask"],
        do_sample=False,
        num_beams=1,
        min_new_tokens=new_tokens,
        max_new_tokens=new_tokens,
    )
    return kwargs | (Decoding(compile=True).generate_kwargs() if compiled else {})


def generate_path(model: torch.nn.Module, batch: dict, new_tokens: int, compiled: bool = False) -> str:
    """Which decoding loop `model.generate(**generate_kwargs(...))` runs: our hand-written greedy search (the
    default for plain greedy calls) or transformers' `GenerationMixin` greedy search (compiled or not)."""
    if compiled:
        return "GenerationMixin, static cache, torch.compile"
    if (
        isinstance(model, TransformerMTForConditionalGeneration)
        and greedy_search_arguments(model, None, None, generate_kwargs(batch, new_tokens)) is not None
    ):
        return "greedy_search (hand-written)"
    return "GenerationMixin"


def generate_fn(model: torch.nn.Module, new_tokens: int, dtype: torch.dtype | None, compiled: bool = False):
    """Greedy generation of exactly `new_tokens` tokens, with the weights stored in `dtype` (a copy), through
    the compiled path if `compiled`."""
    if dtype is not None:
        model = copy.deepcopy(model).to(dtype)
    model.eval()

    def run(batch: dict) -> None:
        with torch.inference_mode():
            out = model.generate(**generate_kwargs(batch, new_tokens, compiled))
        assert out.shape[1] == new_tokens + 1

    return run


def timed(fn: Callable[[dict], None], batches: list[dict], device: str) -> float:
    synchronize(device)
    start = time.perf_counter()
    for batch in batches:
        fn(batch)
    synchronize(device)
    return time.perf_counter() - start


def interleaved(
    fns: dict[str, Callable[[dict], None]], batches: list[dict], repeats: int, device: str
) -> dict:
    """Median seconds per pass over `batches`, measuring the models in turn, after one warm-up pass each."""
    for fn in fns.values():
        timed(fn, batches[:1], device)
    runs: dict[str, list[float]] = {name: [] for name in fns}
    for _ in range(repeats):
        for name, fn in fns.items():
            runs[name].append(timed(fn, batches, device))
    return {name: statistics.median(r) for name, r in runs.items()}


def matmul_peak_flops(device: str, n: int = 4096, repeats: int = 5) -> float:
    """Best fp32 FLOP/s of an n x n matmul: the practical ceiling on this device."""
    a, b = torch.randn(n, n, device=device), torch.randn(n, n, device=device)
    a @ b
    best = float("inf")
    for _ in range(repeats):
        synchronize(device)
        start = time.perf_counter()
        a @ b
        synchronize(device)
        best = min(best, time.perf_counter() - start)
    return 2 * n**3 / best


def step_flops(model: torch.nn.Module, batch: dict) -> int:
    """FLOPs of one forward + backward (what the step really executes: no work on ignored labels is counted
    for a model that skips it)."""
    model.train()
    with FlopCounterMode(display=False) as counter:
        model(**batch).loss.backward()
    model.zero_grad(set_to_none=True)
    return counter.get_total_flops()


def _resident_bytes(field: str = "VmRSS") -> int:
    """Resident set size (`VmRSS`) or its peak (`VmHWM`) of this process, from /proc (Linux). Unlike
    `ru_maxrss`, the peak belongs to this process image alone (not inherited through fork/exec)."""
    with open("/proc/self/status") as f:
        for line in f:
            if line.startswith(field + ":"):
                return int(line.split()[1]) * 1024
    raise RuntimeError(f"{field} not found in /proc/self/status")


def _peak_memory_child(
    name: str, sizes: Sizes, device: str, batch_size: int, dtype, checkpointing: bool, queue
) -> None:
    cuda = device.startswith("cuda")
    base = 0 if cuda else _resident_bytes()  # after imports: what torch/transformers cost is left out
    model = build_models(sizes, device, names=(name,))[name]
    if checkpointing:
        model.activation_checkpointing_enable()
    batches = make_batches(3, batch_size, sizes.vocab_size, device)
    step = train_step_fn(model, device, dtype)
    if cuda:
        torch.cuda.reset_peak_memory_stats()
    for batch in batches:
        step(batch)
    synchronize(device)
    if cuda:
        queue.put(torch.cuda.max_memory_allocated())
    else:
        queue.put(_resident_bytes("VmHWM") - base)


def peak_memory(
    name: str,
    sizes: Sizes,
    device: str,
    batch_size: int,
    dtype: torch.dtype | None,
    checkpointing: bool = False,
) -> int:
    """Peak bytes of the model, its gradients, AdamW state and the activations of a training step, in a
    fresh process (CUDA: allocator peak; CPU: peak resident set size above the process's size after imports),
    with activation checkpointing on every layer if `checkpointing`."""
    ctx = multiprocessing.get_context("spawn")
    queue = ctx.Queue()
    process = ctx.Process(
        target=_peak_memory_child, args=(name, sizes, device, batch_size, dtype, checkpointing, queue)
    )
    process.start()
    peak = queue.get(timeout=600)
    process.join()
    return peak


def measure_training_options(
    memory_size: str = "large",
    memory_batch_size: int = 256,
    compile_size: str = "cpu",
    compile_batch_size: int = 128,
    compile_batches: int = 8,
    repeats: int = 5,
    device: str | None = None,
) -> dict:
    """What the Trainer flags `--gradient_checkpointing` and `--torch_compile` give on this model.

    Memory: peak memory of three training steps (forward, backward, AdamW) of `memory_batch_size` pairs at
    `memory_size` (default: the `gpu` preset's base model and batch), without and with checkpointing, each in
    a fresh process (see :func:`peak_memory` for what is measured on CPU and CUDA).
    Speed: training tokens/s of eager and `torch.compile`d copies of one model at `compile_size`, after a
    full warm-up pass each (compilation and recompilation for new shapes excluded), measured in turn.
    """
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    memory_sizes = SIZES[memory_size]
    memory = {
        key: peak_memory("ours", memory_sizes, device, memory_batch_size, None, checkpointing=on) / 2**20
        for key, on in (("without_checkpointing_mb", False), ("with_checkpointing_mb", True))
    }
    compile_sizes = SIZES[compile_size]
    eager = build_models(compile_sizes, device, names=("ours",))["ours"]
    compiled = torch.compile(build_models(compile_sizes, device, names=("ours",))["ours"])
    batches = make_batches(compile_batches, compile_batch_size, compile_sizes.vocab_size, device, seed=1)
    steps = {"eager": train_step_fn(eager, device, None), "compiled": train_step_fn(compiled, device, None)}
    for step in steps.values():
        timed(step, batches, device)
    seconds = interleaved(steps, batches, repeats, device)
    n_tokens = sum(tokens(b) for b in batches)
    return {
        "device": device,
        "device_name": torch.cuda.get_device_name() if device.startswith("cuda") else platform.processor(),
        "threads": torch.get_num_threads(),
        "torch": torch.__version__,
        "memory": {
            "size": memory_size,
            "sizes": asdict(memory_sizes),
            "batch_size": memory_batch_size,
            **memory,
        },
        "compile": {
            "size": compile_size,
            "sizes": asdict(compile_sizes),
            "batch_size": compile_batch_size,
            "eager_tokens_per_s": n_tokens / seconds["eager"],
            "compiled_tokens_per_s": n_tokens / seconds["compiled"],
        },
    }


def format_training_options(result: dict) -> str:
    memory, speed = result["memory"], result["compile"]
    return "\n".join(
        [
            f"device={result['device']} ({result['device_name'] or 'cpu'}), {result['threads']} threads, "
            f"torch {result['torch']}",
            f"peak memory of a training step, size={memory['size']} {memory['sizes']}, "
            f"batch {memory['batch_size']}:",
            f"  without checkpointing  {memory['without_checkpointing_mb']:8,.0f} MB",
            f"  with checkpointing     {memory['with_checkpointing_mb']:8,.0f} MB",
            f"training throughput, size={speed['size']} {speed['sizes']}, batch {speed['batch_size']}:",
            f"  eager                  {speed['eager_tokens_per_s']:8,.0f} tokens/s",
            f"  torch.compile          {speed['compiled_tokens_per_s']:8,.0f} tokens/s",
        ]
    )


def run_benchmark(
    size: str = "cpu",
    device: str | None = None,
    dtype: str = "fp32",
    marian_dtype: str | None = None,
    train_batch_size: int = 64,
    train_batches: int = 8,
    generate_batch_size: int = 64,
    new_tokens: int = 20,
    latency_runs: int = 5,
    repeats: int = 5,
    measure_memory: bool = True,
    measure_training: bool = True,
    precisions: tuple[str, ...] = (),
    compiled: bool = False,
) -> dict:
    """Measure both models; returns a JSON-serialisable dict of figures and ours/Marian ratios.

    `dtype` (and `marian_dtype`, default the same) is fp32, or bf16/fp16: autocast for training (fp32 master
    weights), weights stored in that dtype for generation. `measure_training=False` measures generation only
    (the training figures are then None). Each of `precisions` ("bf16", "int8": `hf_seq2seq.inference.
    set_precision` on a copy of ours) adds an opt-in generation row, measured with the others and compared
    with Marian at its own dtype, under "opt_in"; `compiled` adds rows of the compiled path (`Decoding(compile=
    True)`) at fp32 and at each of `precisions` but int8 (torch.compile cannot trace int8's packed weights).
    A compiled row first runs once over all measured batches, so that compilation for each shape is not timed
    (that pass's wall time is reported as "compile_and_first_pass_s").
    """
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    dtypes = {"ours": dtype, "marian": marian_dtype or dtype}
    amp = {k: {"fp32": None, "bf16": torch.bfloat16, "fp16": torch.float16}[v] for k, v in dtypes.items()}
    sizes = SIZES[size]
    models = build_models(sizes, device)
    train = make_batches(train_batches, train_batch_size, sizes.vocab_size, device, seed=1)
    gen = make_batches(1, generate_batch_size, sizes.vocab_size, device, seed=2)
    single = make_batches(latency_runs, 1, sizes.vocab_size, device, seed=3)

    n_tokens = sum(tokens(b) for b in train)
    if measure_training:
        train_s = interleaved(
            {k: train_step_fn(m, device, amp[k]) for k, m in models.items()}, train, repeats, device
        )
    opt_in = {  # name: (model, compiled)
        f"ours {precision}": (set_precision(copy.deepcopy(models["ours"]).eval(), precision), False)
        for precision in precisions
    }
    if compiled:
        for precision in ("fp32", *precisions):
            if precision != "int8":
                model = set_precision(copy.deepcopy(models["ours"]).eval(), precision)
                opt_in[f"ours compiled {precision}"] = (model, True)

    def generate_fns() -> dict[str, Callable[[dict], None]]:
        fns = {k: generate_fn(m, new_tokens, amp[k]) for k, m in models.items()}
        return fns | {name: generate_fn(m, new_tokens, None, c) for name, (m, c) in opt_in.items()}

    first_pass_s = {
        name: timed(generate_fns()[name], gen + single, device) for name, (_, c) in opt_in.items() if c
    }
    gen_s = interleaved(generate_fns(), gen, repeats, device)
    lat_s = interleaved(generate_fns(), single, repeats, device)
    peak = matmul_peak_flops(device)
    if measure_training:
        flops = {k: sum(step_flops(m, b) for b in train) for k, m in models.items()}

    figures = {}
    for name in models:
        figures[name] = {
            "train_tokens_per_s": n_tokens / train_s[name] if measure_training else None,
            "generate_b64_new_tokens_per_s": generate_batch_size * new_tokens / gen_s[name],
            "latency_b1_ms_per_token": 1000 * lat_s[name] / (latency_runs * new_tokens),
            "train_flops_per_s": flops[name] / train_s[name] if measure_training else None,
            "train_mfu": flops[name] / train_s[name] / peak if measure_training else None,
            "peak_memory_mb": peak_memory(name, sizes, device, train_batch_size, amp[name]) / 2**20
            if measure_memory and measure_training
            else None,
        }
    paths = {name: generate_path(model.eval(), gen[0], new_tokens) for name, model in models.items()}
    paths |= {name: generate_path(model, gen[0], new_tokens, c) for name, (model, c) in opt_in.items()}
    ratios = {
        key: figures["ours"][key] / figures["marian"][key]
        for key in figures["ours"]
        if figures["ours"][key] is not None and figures["marian"][key]
    }
    opt_in_figures = {}
    for name in opt_in:
        row = {
            "generate_b64_new_tokens_per_s": generate_batch_size * new_tokens / gen_s[name],
            "latency_b1_ms_per_token": 1000 * lat_s[name] / (latency_runs * new_tokens),
        }
        opt_in_figures[name] = row | {
            "ratio_over_marian": {key: value / figures["marian"][key] for key, value in row.items()},
            "compile_and_first_pass_s": first_pass_s.get(name),
        }
    return {
        "size": size,
        "sizes": asdict(sizes),
        "device": device,
        "device_name": torch.cuda.get_device_name()
        if device.startswith("cuda")
        else platform.processor() or "cpu",
        "threads": torch.get_num_threads(),
        "dtype": dtypes,
        "torch": torch.__version__,
        "settings": dict(
            train_batch_size=train_batch_size,
            train_batches=train_batches,
            generate_batch_size=generate_batch_size,
            new_tokens=new_tokens,
            latency_runs=latency_runs,
            repeats=repeats,
        ),
        "matmul_peak_flops_per_s": peak,
        "generate_path": paths,
        "ours": figures["ours"],
        "marian": figures["marian"],
        "ratio_ours_over_marian": ratios,
        "opt_in": opt_in_figures,
    }


def _cell(value: float | None, fmt: str) -> str:
    return "n/a" if value is None else fmt.format(value)


def format_table(result: dict) -> str:
    rows = [
        ("training throughput (tokens/s)", "train_tokens_per_s", "{:,.0f}"),
        ("generate b=64 (new tokens/s)", "generate_b64_new_tokens_per_s", "{:,.0f}"),
        ("latency b=1 (ms/token)", "latency_b1_ms_per_token", "{:.2f}"),
        ("peak train memory (MB)", "peak_memory_mb", "{:.0f}"),
        ("training FLOP/s (G)", "train_flops_per_s", "{:.1f}"),
        ("training FLOP/s / matmul peak", "train_mfu", "{:.1%}"),
    ]
    ours, marian, ratio = result["ours"], result["marian"], result["ratio_ours_over_marian"]
    lines = [
        f"size={result['size']} {result['sizes']} device={result['device']} ({result['device_name']}), "
        f"{result['threads']} threads, {result['dtype']}; fp32 matmul peak "
        f"{result['matmul_peak_flops_per_s'] / 1e9:.1f} GFLOP/s",
        f"generate(): ours runs {result['generate_path']['ours']}, Marian {result['generate_path']['marian']}",
        f"{'':34}{'ours':>12}{'Marian':>12}{'ours/Marian':>13}",
    ]
    for label, key, fmt in rows:
        a, b = ours[key], marian[key]
        if a is None and b is None:
            continue  # not measured (--generate-only)
        if key == "train_flops_per_s" and a is not None:
            a, b = a / 1e9, b / 1e9
        lines.append(
            f"{label:34}{_cell(a, fmt):>12}{_cell(b, fmt):>12}{ratio.get(key, float('nan')):>12.2f}x"
        )
    if result["opt_in"]:
        lines.append(f"opt-in generate() of ours, against Marian ({result['dtype']['marian']}):")
        lines.append(f"{'':34}{'b=64 tok/s':>12}{'x Marian':>10}{'b=1 ms/tok':>12}{'x Marian':>10}  path")
        for name, row in result["opt_in"].items():
            over = row["ratio_over_marian"]
            lines.append(
                f"{name:34}{row['generate_b64_new_tokens_per_s']:>12,.0f}"
                f"{over['generate_b64_new_tokens_per_s']:>9.2f}x{row['latency_b1_ms_per_token']:>12.2f}"
                f"{over['latency_b1_ms_per_token']:>9.2f}x  {result['generate_path'][name]}"
            )
    return "\n".join(lines)


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
    import os
    import tempfile

    import ctranslate2

    from .data import load_named_dataset
    from .export import CTranslate2Translator, export_ctranslate2
    from .inference import TorchTranslator, load_model_and_tokenizer, translate
    from .metrics import score_translations

    model, tokenizer = load_model_and_tokenizer(model_dir, device="cpu")
    rows = load_named_dataset("fra-eng", data_path=data_path)["test"]
    if max_samples is not None:
        rows = rows.select(range(min(max_samples, len(rows))))
    sources = rows["src"]
    references = rows["references"] if "references" in rows.column_names else [[t] for t in rows["tgt"]]
    with tempfile.TemporaryDirectory() as tmp:
        exports = {
            q: export_ctranslate2(model_dir, f"{tmp}/{q}", quantization=q) for q in ("float32", "int8")
        }
        hypotheses = {"generate": translate(TorchTranslator(model, tokenizer), sources, batch_size)}
        for q, folder in exports.items():
            hypotheses[q] = translate(CTranslate2Translator(folder), sources, batch_size)
        onnx_models = {}
        if find_spec("onnxruntime") is not None:
            from .onnx_export import PRECISIONS, OnnxTranslator, export_onnx

            onnx_dir = export_onnx(model_dir, f"{tmp}/onnx", quantize="int8")
            for precision in PRECISIONS:
                onnx_translator = OnnxTranslator(onnx_dir, precision)
                hypotheses[f"onnxruntime {precision}"] = translate(onnx_translator, sources, batch_size)
                onnx_models[f"onnxruntime {precision}"] = onnx_translator.model
        quality = {
            name: {
                "bleu": score_translations(hyps, references)["bleu"],
                "identical_to_generate": sum(
                    a == b for a, b in zip(hyps, hypotheses["generate"], strict=True)
                )
                / len(sources),
            }
            for name, hyps in hypotheses.items()
        }

        config = model.config
        sizes = Sizes(config.vocab_size, config.d_model, config.encoder_layers, config.encoder_attention_heads,
                      config.encoder_ffn_dim)  # fmt: skip
        engines = {
            "ours generate()": generate_fn(model, new_tokens, None),
            "Marian generate()": generate_fn(build_models(sizes, "cpu", names=("marian",))["marian"], new_tokens, None),
        }  # fmt: skip
        for q, folder in exports.items():
            for compute_type in ("int8", "int8_float32") if q == "int8" else ("float32",):
                for threads in intra_threads:
                    translator = ctranslate2.Translator(
                        str(folder), device="cpu", compute_type=compute_type, intra_threads=threads
                    )
                    engines[f"ct2 {compute_type} {threads} thr"] = ctranslate2_fn(
                        translator, tokenizer, new_tokens
                    )
        engines |= {
            name: generate_fn(onnx_model, new_tokens, None) for name, onnx_model in onnx_models.items()
        }

        def batch_of(texts: list[str]) -> dict:
            batch = dict(tokenizer(texts, padding=True, return_tensors="pt"))
            batch["tokens"] = [tokenizer.convert_ids_to_tokens(tokenizer(t)["input_ids"]) for t in texts]
            return batch

        big = [batch_of(sources[:batch_size])]
        single = [batch_of([s]) for s in sources[:latency_runs]]
        big_s = interleaved(engines, big, repeats, "cpu")
        single_s = interleaved(engines, single, repeats, "cpu")
    speed = {
        name: {
            "new_tokens_per_s_batch": batch_size * new_tokens / big_s[name],
            "ms_per_token_batch_1": 1000 * single_s[name] / (latency_runs * new_tokens),
        }
        for name in engines
    }
    marian = speed["Marian generate()"]
    for figures in speed.values():
        figures["throughput_over_marian"] = (
            figures["new_tokens_per_s_batch"] / marian["new_tokens_per_s_batch"]
        )
        figures["latency_over_marian"] = figures["ms_per_token_batch_1"] / marian["ms_per_token_batch_1"]
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


def ctranslate2_fn(translator, tokenizer, new_tokens: int) -> Callable[[dict], None]:
    """Greedy CTranslate2 decoding of exactly `new_tokens` tokens for a batch's `tokens`."""

    def run(batch: dict) -> None:
        results = translator.translate_batch(
            batch["tokens"], beam_size=1, min_decoding_length=new_tokens, max_decoding_length=new_tokens
        )
        assert all(len(r.hypotheses[0]) == new_tokens for r in results)

    return run


def format_exports_table(result: dict) -> str:
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

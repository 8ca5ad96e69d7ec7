"""Variants of the `cpu` preset's training step against each other on this CPU, taking turns on the same batches
so that a drift of the machine's speed falls on all alike: batches of more tokens, the attention kernels, the model
compiled. The model is the preset's (`PRESETS["cpu"]`) with random weights; the batches are random tokens at
fra-eng's lengths (no padding, as the preset's length-sorted batches have almost none).

    python measurements/cpu_step_variants.py tokens [--sizes 600 1200 2400]   # forward, backward, clip, AdamW
    python measurements/cpu_step_variants.py attention                        # sdpa, eager, sdpa's math backend
    python measurements/cpu_step_variants.py compile [--regions]              # eager and compiled, compile timed

Each prints training tokens/s (tokens: source + target) or ms per step, the median of `--repeats` passes, and
each pass's figure.
"""

import argparse
import statistics
import time

import torch
from ab import cpu_preset_network
from torch.nn.attention import SDPBackend, sdpa_kernel

from hf_seq2seq import TransformerMTForConditionalGeneration
from hf_seq2seq.acceleration.compilation import compiled_for_training, sizes_apart
from hf_seq2seq.benchmarks.measuring import tokens
from hf_seq2seq.models.transformer_mt.configuration_transformer_mt import TransformerMTConfig

LENGTHS = (6, 8, 10, 12, 15, 20, 30, 50)  # tokens a side: fra-eng's pairs and the joined examples


def preset_model(attention: str = "sdpa") -> TransformerMTForConditionalGeneration:
    config = TransformerMTConfig(
        **cpu_preset_network(),
        pad_token_id=0,
        eos_token_id=2,
        decoder_start_token_id=0,
        attn_implementation=attention,
    )
    torch.manual_seed(0)
    return TransformerMTForConditionalGeneration(config).train()


def random_batches(max_tokens: int, vocab_size: int) -> list[dict]:
    """One batch per length of `LENGTHS`: as many pairs of that length as `max_tokens` padded tokens hold."""
    batches = []
    for length in LENGTHS:
        size = (max(1, max_tokens // (2 * length)), length)
        batches.append(
            dict(
                input_ids=torch.randint(3, vocab_size, size),
                attention_mask=torch.ones(size, dtype=torch.long),
                labels=torch.randint(3, vocab_size, size),
            )
        )
    return batches


def training_step(model: torch.nn.Module, optimizer: torch.optim.Optimizer | None = None):
    parameters = list(model.parameters())

    def step(batch: dict) -> None:
        model(**batch).loss.backward()
        if optimizer is not None:
            torch.nn.utils.clip_grad_norm_(parameters, 1.0)
            optimizer.step()
            optimizer.zero_grad(set_to_none=True)
        else:
            for parameter in parameters:
                parameter.grad = None

    return step


def in_turn(variants: dict, repeats: int) -> dict[str, list[float]]:
    """Seconds of each variant's pass, `repeats` times, the variants taking turns. A variant is (step, batches,
    context manager factory)."""
    seconds = {name: [] for name in variants}
    for _ in range(repeats):
        for name, (step, batches, context) in variants.items():
            with context():
                start = time.perf_counter()
                for batch in batches:
                    step(batch)
                seconds[name].append(time.perf_counter() - start)
    return seconds


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("what", choices=("tokens", "attention", "compile"))
    parser.add_argument("--sizes", type=int, nargs="+", default=[600, 1200, 2400], help="tokens per batch")
    parser.add_argument(
        "--regions", action="store_true", help="compile each layer alone (accelerate's regions)"
    )
    parser.add_argument("--repeats", type=int, default=7)
    args = parser.parse_args()
    print(f"torch {torch.__version__}, {torch.get_num_threads()} threads, fp32")
    if args.what == "tokens":
        model = preset_model()
        optimizer = torch.optim.AdamW(model.parameters(), lr=1e-4, fused=True)
        step = training_step(model, optimizer)
        sets = {f"{n} tokens": random_batches(n, model.config.vocab_size) for n in args.sizes}
        runs = in_turn({name: (step, b, torch.enable_grad) for name, b in sets.items()}, args.repeats)
        for name, seconds in runs.items():
            rates = [sum(map(tokens, sets[name])) / s for s in seconds]
            print(f"{name:12} {statistics.median(rates):8.0f} training tokens/s  {[round(r) for r in rates]}")
        return
    batches = random_batches(600, cpu_preset_network()["vocab_size"])
    if args.what == "attention":
        sdpa, eager = preset_model("sdpa"), preset_model("eager")
        variants = {
            "sdpa": (training_step(sdpa), batches, torch.enable_grad),
            "eager": (training_step(eager), batches, torch.enable_grad),
            "sdpa math": (training_step(sdpa), batches, lambda: sdpa_kernel([SDPBackend.MATH])),
        }
    else:
        model = preset_model()
        compiled = compiled_for_training(model, regions=args.regions)
        with sizes_apart(True):
            start = time.perf_counter()
            for batch in batches:
                training_step(compiled)(batch)
            print(f"compiling for {len(batches)} batch shapes: {time.perf_counter() - start:.1f} s")
        variants = {
            "eager": (training_step(model), batches, torch.enable_grad),
            "compiled": (training_step(compiled), batches, lambda: sizes_apart(True)),
        }
    runs = in_turn(variants, args.repeats)
    for name, seconds in runs.items():
        per_step = [1e3 * s / len(batches) for s in seconds]
        print(
            f"{name:12} {statistics.median(per_step):8.1f} ms a step (forward, backward)  {[round(x, 1) for x in per_step]}"
        )


if __name__ == "__main__":
    main()

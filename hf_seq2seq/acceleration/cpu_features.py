"""What the CPU can do, for the choices that depend on it: bf16 autocast for the CPU presets (only with bf16
matmuls, and only where a step measures faster with it), the matmul peak a benchmark divides by, 8-bit activations
for int8 inference (only with VNNI dot products).

torch answers through private functions (`torch.cpu._is_<feature>_supported`); where a torch lacks one, or it
fails, the answer comes from the CPU flags that Linux lists in /proc/cpuinfo, which say the same; elsewhere it is
no (the slower, always-correct choice: fp32 training, 7-bit activations)."""

import functools
import time
from pathlib import Path

import torch

# the /proc/cpuinfo flags behind each of torch's checks
LINUX_FLAGS = {
    "vnni": ("avx512_vnni",),
    "avx512_bf16": ("avx512_bf16",),
    "amx_tile": ("amx_tile",),
    "avx512_fp16": ("avx512_fp16",),
    "amx_fp16": ("amx_fp16",),
}


def linux_cpu_flags() -> set[str]:
    """The `flags` of /proc/cpuinfo (empty where there is no such file)."""
    try:
        text = Path("/proc/cpuinfo").read_text(encoding="utf-8")
    except OSError:
        return set()
    return {
        flag
        for line in text.splitlines()
        if line.startswith("flags")
        for flag in line.split(":", 1)[1].split()
    }


def cpu_supports(feature: str) -> bool:
    """Whether the CPU has `feature` (a key of `LINUX_FLAGS`): torch's check, else the Linux CPU flags."""
    check = getattr(torch.cpu, f"_is_{feature}_supported", None)
    if check is not None:
        try:
            return bool(check())
        except (RuntimeError, TypeError):  # a private function that changed
            pass
    return bool(set(LINUX_FLAGS[feature]) & linux_cpu_flags())


def cpu_has_matmuls(dtype: torch.dtype) -> bool:
    """Whether the CPU multiplies `dtype` matrices in hardware: fp32 always, bf16 with AVX512-BF16 or AMX, fp16
    with AVX512-FP16 or AMX-FP16. Without them (AVX2-only CPUs) a bf16 or fp16 matmul is emulated, converted to fp32
    and multiplied there, slower than an fp32 one."""
    if dtype == torch.bfloat16:
        return cpu_supports("avx512_bf16") or cpu_supports("amx_tile")
    if dtype == torch.float16:
        return cpu_supports("avx512_fp16") or cpu_supports("amx_fp16")
    return dtype == torch.float32


# how much faster a bf16 step must measure for the presets to train in bf16
BF16_MARGIN = 1.2


def _step_seconds(layer: torch.nn.Module, inputs: torch.Tensor, dtype: torch.dtype) -> float:
    """Seconds of one forward and backward pass of `layer` under `dtype` autocast (fp32: none)."""
    start = time.perf_counter()
    with torch.autocast("cpu", dtype=dtype, enabled=dtype != torch.float32):
        loss = layer(inputs).float().square().mean()
    loss.backward()
    return time.perf_counter() - start


@functools.cache
def cpu_trains_faster_in_bf16(rows: int = 512, width: int = 256, repeats: int = 5) -> bool:
    """Whether bf16 autocast makes a training step clearly faster (`BF16_MARGIN`) than fp32 here, measured on a
    feed-forward block of the cpu preset's width (`rows` tokens, a fraction of a second). Having bf16 matmuls is not
    enough: on some CPUs with avx512_bf16 and no AMX, a bf16 step takes longer than an fp32 one (docs/results.md).
    Without bf16 matmuls the answer is no, unmeasured."""
    if not cpu_has_matmuls(torch.bfloat16):
        return False
    with torch.random.fork_rng(devices=[]):  # the caller's random state stays as it was (a seed set before)
        layer = torch.nn.Sequential(
            torch.nn.Linear(width, 4 * width), torch.nn.ReLU(), torch.nn.Linear(4 * width, width)
        )
        inputs = torch.randn(rows, width)
    seconds = {torch.float32: [], torch.bfloat16: []}
    for _ in range(repeats + 1):  # the first pass of each builds oneDNN's kernels: not counted
        for dtype, times in seconds.items():
            times.append(_step_seconds(layer, inputs, dtype))
    # where the two are close, fp32: it gains little to lose, and the processes of a multi-process run, each
    # measuring for itself, are then unlikely to answer differently
    return min(seconds[torch.bfloat16][1:]) * BF16_MARGIN < min(seconds[torch.float32][1:])

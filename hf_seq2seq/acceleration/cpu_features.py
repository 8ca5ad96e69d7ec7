"""What the CPU can do, for the choices that depend on it: bf16 autocast for the CPU presets (only with bf16
matmuls), the matmul peak a benchmark divides by, 8-bit activations for int8 inference (only with VNNI dot
products).

torch answers through private functions (`torch.cpu._is_<feature>_supported`); where a torch lacks one, or it
fails, the answer comes from the CPU flags that Linux lists in /proc/cpuinfo, which say the same; elsewhere it is
no (the slower, always-correct choice: fp32 training, 7-bit activations)."""

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

"""What the CPU can do, for the choices that depend on it: bf16 autocast for the CPU presets (only with bf16
matmuls), 8-bit activations for int8 inference (only with VNNI dot products).

torch answers through private functions (`torch.cpu._is_<feature>_supported`); where a torch lacks one, or it
fails, the answer comes from the CPU flags that Linux lists in /proc/cpuinfo, which say the same; elsewhere it is
no (the slower, always-correct choice: fp32 training, 7-bit activations)."""

from pathlib import Path

import torch

# the /proc/cpuinfo flags behind each of torch's checks
LINUX_FLAGS = {"vnni": ("avx512_vnni",), "avx512_bf16": ("avx512_bf16",), "amx_tile": ("amx_tile",)}


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

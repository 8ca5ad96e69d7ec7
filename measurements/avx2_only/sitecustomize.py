"""Run the package as on an AVX2-only CPU (no bf16 or fp16 matmuls, no VNNI), on an AVX-512 machine.

Put this folder first on PYTHONPATH with oneDNN and ATen held to AVX2; every Python process then starts with torch's
CPU feature checks answering no, so the presets choose fp32, the benchmark divides by fp32's peak and a forced bf16
matmul takes the slow emulated path, as on the AVX2 machines CI may run on (docs/tests.md):

    PYTHONPATH=measurements/avx2_only ONEDNN_MAX_CPU_ISA=AVX2 ATEN_CPU_CAPABILITY=avx2 \
        HF_HUB_OFFLINE=1 python -m pytest -q tests/test_benchmark.py

It is not an AVX2 machine: torch's own C++ choices that read the CPU directly are not changed, and the speeds are
this machine's at AVX2, not an AVX2 CPU's.
"""

import importlib.abc
import importlib.util
import sys

UNSUPPORTED = ("avx512", "avx512_bf16", "avx512_fp16", "amx_tile", "amx_fp16", "vnni")


class _AnswerNoOnceTorchCpuLoads(importlib.abc.MetaPathFinder):
    """Sets `torch.cpu._is_<feature>_supported` to answer False for each of `UNSUPPORTED` (where torch has no such
    check, `cpu_supports` then takes it instead of /proc/cpuinfo's flags) right after torch.cpu loads."""

    def find_spec(self, name, path, target=None):
        if name != "torch.cpu":
            return None
        sys.meta_path.remove(self)  # find the real spec without coming back here
        try:
            spec = importlib.util.find_spec(name)
        finally:
            sys.meta_path.insert(0, self)
        load = spec.loader.exec_module

        def exec_module(module):
            load(module)
            for feature in UNSUPPORTED:
                setattr(module, f"_is_{feature}_supported", lambda: False)

        spec.loader.exec_module = exec_module
        return spec


sys.meta_path.insert(0, _AnswerNoOnceTorchCpuLoads())

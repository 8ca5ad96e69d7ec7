"""Which kernels `scaled_dot_product_attention` may run: the names that `hf-seq2seq train --sdpa_backends`,
`hf-seq2seq benchmark --sdpa-backends` and measurements/profile_training_step.py take, and the context that applies them.

PyTorch picks a backend for each call among those enabled. On the GPUs measured (docs/training.md) it picked
cuDNN's fused attention for every call of the training step; cuDNN builds an execution plan for each new
combination of batch size and lengths, which batches by tokens keep changing during a training's first epoch.
Naming the backends (e.g. `flash,efficient,math`, as the `gpu` presets do) leaves the others out, in that
order of preference (docs/training.md).
"""

import contextlib
from collections.abc import Iterator, Sequence

# the names, and the members of `torch.nn.attention.SDPBackend` they stand for (torch is imported where a backend is
# applied: the commands parse the names without loading it)
SDPA_BACKENDS = {
    "flash": "FLASH_ATTENTION",
    "efficient": "EFFICIENT_ATTENTION",
    "cudnn": "CUDNN_ATTENTION",
    "math": "MATH",
}


def parse_sdpa_backends(text: str | None) -> list[str] | None:
    """The names in a comma-separated `text` ("flash,efficient" -> ["flash", "efficient"]); None for None or ""
    (PyTorch's choice). A name that is not one of `SDPA_BACKENDS` raises a ValueError that lists them."""
    if not text:
        return None
    names = [name.strip() for name in text.split(",") if name.strip()]
    unknown = [name for name in names if name not in SDPA_BACKENDS]
    if unknown or not names:
        raise ValueError(
            f"unknown attention backend {', '.join(unknown) or repr(text)}: give comma-separated names among "
            f"{', '.join(SDPA_BACKENDS)}, in order of preference"
        )
    return names


@contextlib.contextmanager
def sdpa_backends(names: Sequence[str] | None) -> Iterator[None]:
    """Within the block, `scaled_dot_product_attention` runs only the named backends, preferring them in that order
    (`torch.nn.attention.sdpa_kernel`); the settings before are restored after it. None: no change."""
    if not names:
        yield
        return
    from torch.nn.attention import SDPBackend, sdpa_kernel

    backends = [getattr(SDPBackend, SDPA_BACKENDS[name]) for name in names]
    with sdpa_kernel(backends, set_priority=True):
        yield

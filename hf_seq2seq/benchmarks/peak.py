"""The share of the matmul peak a benchmark reports (`hf_seq2seq.benchmarks.marian`): which dtype's peak bounds a
run (:func:`peak_dtype`), the share of it (:func:`share_of_peak`), never above 1, and the ratios of ours over
Marian."""

import logging

import torch

from hf_seq2seq.acceleration.cpu_features import cpu_has_matmuls
from hf_seq2seq.benchmarks.choices import DTYPES

logger = logging.getLogger(__name__)


def peak_dtype(device: str, dtype: torch.dtype | None) -> torch.dtype | None:
    """The dtype whose matmul peak bounds a run in `dtype` (None: fp32): its own, but on a CPU without matmuls of
    that dtype (bf16 or fp16 on an AVX2-only CPU) fp32's, as its matmuls are emulated on fp32 units there (their
    own emulated peak, on 4096 x 4096 matrices, is far below what a step's small matmuls reach)."""
    if device == "cpu" and dtype is not None and not cpu_has_matmuls(dtype):
        return None
    return dtype


def dtype_name(dtype: torch.dtype | None) -> str:
    """`DTYPES`' name of a torch dtype (None: fp32)."""
    return next(
        name for name, torch_name in DTYPES.items() if dtype == (torch_name and getattr(torch, torch_name))
    )


def peak_note(device: str, dtype: torch.dtype | None, peak: torch.dtype | None) -> str | None:
    """Why the peak is not in the run's dtype, for the table's first line (None: it is)."""
    if dtype == peak:
        return None
    return f"this {device.upper()} has no {dtype_name(dtype)} matmuls: they are emulated in fp32"


def share_of_peak(flops_per_s: float, peak: float, what: str) -> float | None:
    """FLOP/s as a share of the matmul peak; None (logged) where a step ran above the measured peak: the peak
    did not bound the run, so no share of it is a figure."""
    share = flops_per_s / peak
    if share > 1:
        logger.warning(
            "%s ran at %.0f%% of the measured matmul peak: the peak does not bound this run, no share of it is "
            "reported",
            what,
            100 * share,
        )
        return None
    return share


def scaled_share(eager_share: float | None, speed_up: float, what: str) -> float | None:
    """The share of the peak of a row that ran `speed_up` times as fast as an eager row with `eager_share` (the
    same arithmetic on the same batches, in less time)."""
    return None if eager_share is None else share_of_peak(eager_share * speed_up, 1.0, what)


def ratios(ours: dict, marian: dict) -> dict[str, float]:
    """Ours over Marian for each figure both have (a figure not measured, or not reported, is None)."""
    return {key: ours[key] / marian[key] for key in ours if ours[key] is not None and marian[key]}

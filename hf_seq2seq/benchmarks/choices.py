"""The choices of the measuring commands (`hf-seq2seq benchmark`, `hf-seq2seq measure-training`): the model
sizes they build and the dtypes they measure at.

`hf_seq2seq.benchmarks.marian`, `hf_seq2seq.benchmarks.training_options` and the command line's flags
(`hf_seq2seq.cli._common`, `hf_seq2seq.cli.benchmark`) read them here. This module imports neither torch nor
transformers, so that the command line can build its parsers without them.
"""

from dataclasses import dataclass


@dataclass
class Sizes:
    """The sizes of one benchmark model, the same for ours and Marian (encoder and decoder alike)."""

    vocab_size: int = 8000
    d_model: int = 256
    layers: int = 3
    heads: int = 4
    ffn_dim: int = 1024


SIZES = {
    # the CPU preset's network as it was when Marian was first compared, kept though the preset has narrowed since
    # (docs/decoding.md), so that the figures of docs/ stay comparable
    "cpu": Sizes(),
    "large": Sizes(vocab_size=16000, d_model=512, layers=6, heads=8, ffn_dim=2048),  # the paper's base
    # a smoke run's (the tests', a dry run's): seconds on any CPU, even where bf16 is emulated; figures meaningless
    "tiny": Sizes(vocab_size=1000, d_model=64, layers=2, heads=4, ffn_dim=256),
}

DTYPES = {"fp32": None, "bf16": "bfloat16", "fp16": "float16"}
"""`hf-seq2seq benchmark --dtype`: training autocast dtype and generation weight dtype, as the name of the torch
dtype (None: fp32 without autocast)."""

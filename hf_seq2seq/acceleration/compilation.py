"""The model compiled for training as `hf-seq2seq train --torch_compile true` compiles it (accelerate's
`TorchDynamoPlugin` does the compiling there; `hf-seq2seq benchmark --compile-training`, `measure-training` and
measurements/profile_training_step.py compile the same way here, so that what they measure is what training runs).

Batches change shape from step to step (batches by tokens in every dimension), so the model is compiled once with
dynamic shapes (`ACCELERATE_DYNAMO_USE_DYNAMIC=1`, which `hf-seq2seq train` sets), whole or each repeated layer
alone (`ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION=1`), with the sizes of a batch kept apart (`sizes_apart`).
"""

import contextlib
from collections.abc import Iterator

import torch
from accelerate.utils import compile_regions

try:  # the switch of duck sizing (`sizes_apart`), in torch's symbolic-shapes config
    from torch.fx.experimental import _config as symbolic_shapes_config
except ImportError:
    symbolic_shapes_config = None


def compiled_for_training(
    model: torch.nn.Module, backend: str = "inductor", mode: str | None = None, regions: bool = False
) -> torch.nn.Module:
    """`model` compiled as `hf-seq2seq train --torch_compile true` compiles it: with dynamic shapes (batches change
    shape from step to step), whole, or with `regions` each of its repeated layers alone (accelerate's regional
    compilation, `ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION=1`: one compilation serves all the layers of a kind,
    the code between them runs eagerly). It shares `model`'s parameters."""
    if regions:
        return compile_regions(model, backend=backend, mode=mode, dynamic=True)
    return torch.compile(model, backend=backend, mode=mode, dynamic=True)


@contextlib.contextmanager
def sizes_apart(compiling: bool) -> Iterator[None]:
    """Under `--torch_compile`, each size of a batch is its own symbol in the compiled graph. By default dynamo gives
    sizes that happen to be equal one symbol ("duck sizing") and compiles the whole model again when they differ: a
    first batch whose sources and targets have the same length would cost a second compilation. PyTorch's guard
    message names the switch (`torch.fx.experimental._config.use_duck_shape`); where a release has no such switch,
    nothing changes (at worst that one more compilation)."""
    if not compiling or not hasattr(symbolic_shapes_config, "use_duck_shape"):
        yield
        return
    with symbolic_shapes_config.patch(use_duck_shape=False):
        yield

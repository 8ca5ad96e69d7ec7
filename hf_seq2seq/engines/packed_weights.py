"""Linear layers on weights packed for oneDNN: the torch engine's faster `linear` for the model's greedy search.

The model's hand-written greedy search (`generation_transformer_mt.greedy_search`, shipped inside every
checkpoint) applies each Linear layer through a `linear(layer, x)` function, the layer itself unless the model
has a `greedy_search_linear`. `use_packed_weights(model)` sets it to `packed_linear`: oneDNN's matmul on a
copy of the weight reordered once into oneDNN's blocked layout (the one torch.compile gives frozen CPU
weights), which it reads faster than BLAS reads the plain matrix. The ops are private to torch
(`torch.ops.mkldnn._reorder_linear_weight` / `_linear_pointwise`), so they stay here, in the package, and
each call falls back to `F.linear` (the same result) when they are missing or fail; a checkpoint loaded
without the package decodes with plain Linear layers.

A oneDNN call costs more than torch's own, so packing pays only for a wide weight or a large matmul
(`packing_pays`); docs/decoding.md has the measurements behind the rule.
"""

import weakref

import torch
import torch.nn.functional as F
from torch import nn

# Linear layers' weights packed by oneDNN, per layer: ((data pointer, version) of the weight packed, packed weight)
PACKED_WEIGHTS: "weakref.WeakKeyDictionary[nn.Linear, tuple[tuple[int, int], torch.Tensor]]" = (
    weakref.WeakKeyDictionary()
)
PACKED_FOR_ROWS = 64  # oneDNN picks the packed layout for this many rows; it is as fast for one row


def packing_pays(layer: nn.Linear, rows: int) -> bool:
    """Whether `packed_linear` is worth its call for `rows` rows through `layer`: a layer with at least three
    times as many outputs as inputs (the output layer over the vocabulary, the fused query-key-value projection,
    the first feed-forward layer), or at least 2^23 multiply-adds for the batch (every large layer at a batch of
    dozens). At batch 1 a decoding step reads its weights from memory, and oneDNN reads a wide weight in its
    packed layout faster than torch's own kernel reads the plain matrix; for a narrower layer (d -> d, d -> 2d,
    4d -> d) the packed call costs more than it saves (docs/decoding.md)."""
    weight_size = layer.in_features * layer.out_features
    return layer.out_features >= 3 * layer.in_features or rows * weight_size >= 2**23


def packing_available() -> bool:
    """Whether this torch has the (private) oneDNN ops `packed_linear` uses."""
    mkldnn = getattr(torch.ops, "mkldnn", None)
    return (
        torch.backends.mkldnn.is_available()
        and hasattr(mkldnn, "_reorder_linear_weight")
        and hasattr(mkldnn, "_linear_pointwise")
    )


def packed_linear(layer: nn.Module, x: torch.Tensor) -> torch.Tensor:
    """`layer(x)` over (b, in) rows -> (b, out), for an fp32 `nn.Linear` on CPU as oneDNN's matmul on a copy of
    the weight packed once, where that pays for the call (`packing_pays`).

    The weight is packed again when it changes (an optimizer step, loading), as its version counter tells; an
    in-place change through `weight.data` bypasses that counter. The packed copies (as large as the weights)
    live as long as the layers. Other modules (e.g. int8-quantized), devices and dtypes, and calls under
    autocast run as `layer(x)`; a failing packed op (a torch that changed it) falls back to `F.linear`."""
    weight = layer.weight if type(layer) is nn.Linear else None
    if (
        weight is None
        or x.device.type != "cpu"
        or torch.is_autocast_enabled("cpu")
        or x.dtype != torch.float32
        or weight.dtype != torch.float32
        or weight.is_inference()
        or not packing_pays(layer, x.shape[0])
    ):
        return layer(x)
    try:
        key = (weight.data_ptr(), weight._version)
        cached = PACKED_WEIGHTS.get(layer)
        if cached is None or cached[0] != key:
            cached = key, torch.ops.mkldnn._reorder_linear_weight(weight.detach(), PACKED_FOR_ROWS)
            PACKED_WEIGHTS[layer] = cached
        return torch.ops.mkldnn._linear_pointwise(x, cached[1], layer.bias, "none", [], "")
    except (AttributeError, RuntimeError, TypeError):
        return F.linear(x, weight, layer.bias)


def use_packed_weights(model: nn.Module) -> nn.Module:
    """Make `model`'s greedy search apply its Linear layers through `packed_linear`, where this torch has the
    ops (else nothing changes); returns the model. Its tokens stay those of the plain layers."""
    if packing_available():
        model.greedy_search_linear = packed_linear
    return model

"""The merged decoder of the ONNX export (`hf_seq2seq.export.onnx`): the first-step and later-steps decoder
graphs in one file under an ONNX `If` on `use_cache_branch`, as Optimum's `merge_decoders` makes it, the
weights both branches hold stored once."""

from __future__ import annotations

import hashlib

import onnx


def _digest(tensor: onnx.TensorProto) -> str:
    """The tensor's type, shape and values, whatever its name."""
    unnamed = onnx.TensorProto()
    unnamed.CopyFrom(tensor)
    unnamed.ClearField("name")
    return hashlib.sha256(unnamed.SerializeToString(deterministic=True)).hexdigest()


def with_cache_length(value: onnx.ValueInfoProto, decoder_length: str) -> onnx.ValueInfoProto:
    """A copy of `value`; a cache tensor's (B, H, length, Dh) length renamed: `encoder_sequence_length_out` for
    cross-attention, `decoder_length` for self-attention."""
    copy = onnx.ValueInfoProto()
    copy.CopyFrom(value)
    if ".encoder." in value.name or ".decoder." in value.name:
        dim = copy.type.tensor_type.shape.dim[2]
        dim.Clear()
        dim.dim_param = "encoder_sequence_length_out" if ".encoder." in value.name else decoder_length
    return copy


class SharedInitializers:
    """The merged decoder's initializers, which both branches read from the outer graph: a tensor equal (type,
    shape, values) to one already kept is stored once, under that one's name; another is kept under its own
    name if that is free, else with its branch's prefix."""

    def __init__(self):
        self.tensors: dict[str, onnx.TensorProto] = {}
        self.by_digest: dict[str, str] = {}

    def add(self, tensor: onnx.TensorProto, prefix: str) -> str:
        """The name under which `tensor` (an initializer of the branch named by `prefix`) is kept."""
        digest = _digest(tensor)
        name = self.by_digest.get(digest)
        if name is None:
            name = tensor.name if tensor.name not in self.tensors else prefix + tensor.name
            copy = onnx.TensorProto()
            copy.CopyFrom(tensor)
            copy.name = name
            self.tensors[name] = copy
            self.by_digest[digest] = name
        return name


def branch_graph(
    model: onnx.ModelProto, prefix: str, outer_inputs: set[str], initializers: SharedInitializers
) -> onnx.GraphProto:
    """`model`'s graph as a branch of the merged decoder's `If`: its initializers moved to `initializers`, the
    outer graph's inputs (`outer_inputs`) read as they are, every other name given the branch's `prefix`."""
    renamed = {tensor.name: initializers.add(tensor, prefix) for tensor in model.graph.initializer}

    def rename(name: str) -> str:
        if not name or name in outer_inputs:
            return name
        return renamed.get(name, prefix + name)

    graph = onnx.GraphProto(name=prefix.strip("/"))
    for node in model.graph.node:
        new = graph.node.add()
        new.CopyFrom(node)
        new.name = prefix + node.name
        new.input[:] = [rename(name) for name in node.input]
        new.output[:] = [rename(name) for name in node.output]
    for output in model.graph.output:  # an Identity per output: a branch may return an outer value as is
        graph.node.append(
            onnx.helper.make_node("Identity", [rename(output.name)], [prefix + "out/" + output.name])
        )
        value = graph.output.add()
        value.CopyFrom(output)
        value.name = prefix + "out/" + output.name
    for info in model.graph.value_info:
        value = graph.value_info.add()
        value.CopyFrom(info)
        value.name = rename(info.name)
    return graph


def merge_decoders(first: onnx.ModelProto, later: onnx.ModelProto) -> onnx.ModelProto:
    """One decoder from the first-step graph (`first`: no past inputs) and the later-steps graph (`later`):
    an `If` on a `use_cache_branch` input runs `later` when true, `first` when false. Inputs are `later`'s
    plus `use_cache_branch`, outputs the same names in both. Initializers equal in both are stored once, in
    the outer graph, where both branches read them; every other name of a branch gets the branch's prefix."""
    outer_inputs = {value.name for value in later.graph.input}
    initializers = SharedInitializers()
    if_node = onnx.helper.make_node(
        "If",
        ["use_cache_branch"],
        [output.name for output in later.graph.output],
        name="optimum::if",
        then_branch=branch_graph(later, "with_past/", outer_inputs, initializers),
        else_branch=branch_graph(first, "first_step/", outer_inputs, initializers),
    )
    use_cache_branch = onnx.helper.make_tensor_value_info("use_cache_branch", onnx.TensorProto.BOOL, [1])
    # the past's lengths get names of their own (transformers.js makes the first step's empty past with 0 for
    # any name but `batch_size`)
    inputs = [with_cache_length(value, "past_decoder_sequence_length") for value in later.graph.input]
    outputs = [with_cache_length(value, "past_decoder_sequence_length + 1") for value in later.graph.output]
    graph = onnx.helper.make_graph(
        [if_node],
        "decoder_model_merged",
        inputs + [use_cache_branch],
        outputs,
        initializer=list(initializers.tensors.values()),
    )
    opsets = {(opset.domain, opset.version) for model in (first, later) for opset in model.opset_import}
    merged = onnx.helper.make_model(
        graph, opset_imports=[onnx.helper.make_opsetid(domain, version) for domain, version in sorted(opsets)]
    )
    merged.ir_version = later.ir_version
    functions = {(f.domain, f.name): f for model in (first, later) for f in model.functions}
    merged.functions.extend(functions.values())
    return merged

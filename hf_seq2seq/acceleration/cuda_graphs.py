"""A training step's forward and backward replayed as CUDA graphs (`hf-seq2seq train --cuda_graphs true`,
`hf-seq2seq benchmark --cuda-graphs`, measurements/profile_training_step.py `--cuda-graphs`).

On a GPU the eager step of the base model launches about a thousand kernels, one by one from Python, and the GPU
waits on the host between them (docs/training.md has the profile). A CUDA graph records those launches once and
replays them all with one call. As `torch.cuda.make_graphed_callables` does, the forward and the backward are two
graphs inside one autograd function, so that the Trainer's backward, gradient clipping and optimizer (outside the
graphs) work unchanged; unlike it, there is a pair of graphs per batch shape (batches by tokens come in a few
hundred shapes, cut once and seen again every epoch), recorded the second time a shape comes (the first time runs
eagerly: it warms up what a capture must not meet for the first time, and a shape met once, such as the last
batch of an epoch, costs no recording). All pairs record into one memory pool: a step's graphs reuse the memory of
the others', since graphs replay one at a time and each output is copied out before the next replay.

What a graph replays is fixed when it is recorded: the model must read nothing of the device's data on the host
(this package's model does not off the CPU: `fixed_shapes`), the parameters must stay where they are (they are
updated in place; if the model's parameters move, the graphs are recorded anew), and dropout draws new numbers at
each replay (PyTorch registers its generator with the graph). One process only (DDP's gradient hooks are not
recorded), no gradient checkpointing (it re-runs the forward with saved random states).
"""

import contextlib
from collections import Counter
from collections.abc import Iterator

import torch
from transformers.modeling_outputs import Seq2SeqLMOutput

# numbers that change from step to step without changing the step's work: passed to the graph as device tensors
# (a graph keeps a Python number as it was when recorded)
STEP_NUMBERS = ("num_items_in_batch",)


class GraphedTraining:
    """Calls `model` as `model(**batch)` does, replaying its training forward and backward as CUDA graphs: one pair
    per batch shape, recorded the `record_at`-th time the shape comes (earlier times run eagerly), for at most
    `max_shapes` shapes (later ones run eagerly: a corpus whose batches keep taking new shapes, as a stream's may,
    would otherwise record without end). Outside training (`model.eval()`, or without grad) it calls the model as
    it is. The output holds the loss only: the logits and the rest stay inside the graph."""

    def __init__(self, model: torch.nn.Module, record_at: int = 2, max_shapes: int = 512):
        if record_at < 1:
            raise ValueError(f"record_at must be at least 1, not {record_at}")
        devices = {p.device.type for p in model.parameters()}
        if devices != {"cuda"}:
            raise ValueError(
                f"CUDA graphs replay a model on a CUDA GPU; this one is on {', '.join(sorted(devices))}"
            )
        self.model = model
        self.record_at, self.max_shapes = record_at, max_shapes
        self.pool = torch.cuda.graph_pool_handle()
        self.stream = torch.cuda.Stream()
        self.steps: dict[tuple, GraphedStep] = {}
        self.uses: Counter[tuple] = Counter()
        self.warmed_up = False
        self._params: list[torch.nn.Parameter] = []
        self._addresses: tuple[int, ...] = ()

    @property
    def graphs(self) -> int:
        """The graph pairs recorded so far (one per batch shape)."""
        return len(self.steps)

    def __call__(self, **inputs) -> Seq2SeqLMOutput:
        if not (self.model.training and torch.is_grad_enabled() and graphable(inputs)):
            return self.model(**inputs)
        self._check_parameters()
        inputs = _step_numbers_as_tensors(inputs, self._params[0].device)
        key = batch_key(inputs)
        step = self.steps.get(key)
        if step is None:
            if len(self.steps) >= self.max_shapes:
                return self.model(**inputs)
            self.uses[key] += 1
            if self.uses[key] < self.record_at:
                return self.model(**inputs)
            if not self.warmed_up:
                self._warm_up(inputs)
            step = self.steps[key] = GraphedStep(self.model, self._params, inputs, self.pool, self.stream)
            del self.uses[key]
        tensors = [inputs[name] for name in step.input_names]
        return Seq2SeqLMOutput(loss=ReplayedStep.apply(step, len(tensors), *tensors, *self._params))

    def _check_parameters(self) -> None:
        """The graphs read and write the parameters where they were when recorded: if the model's parameters are
        other tensors now (loaded anew, moved), the graphs are dropped and recorded again."""
        params = [p for p in self.model.parameters() if p.requires_grad]
        addresses = tuple(p.data_ptr() for p in params)
        if addresses != self._addresses:
            self.steps.clear()
            self.uses.clear()
            self._params, self._addresses = params, addresses

    def _warm_up(self, inputs: dict) -> None:
        """A forward and backward on the recording stream, its gradients discarded, before the first recording:
        what a first use there initialises lazily (cuBLAS's workspace for that stream) is then not recorded."""
        self.stream.wait_stream(torch.cuda.current_stream())
        # without autocast's cache, as when recording: weights cast and cached here would keep this step's autograd
        # nodes, on this stream, alive into the next backward (PyTorch warns of the streams' mismatch)
        with autocast_cache_off(), torch.cuda.stream(self.stream):
            loss = self.model(**inputs).loss
            torch.autograd.grad(loss, self._params, allow_unused=True)
        torch.cuda.current_stream().wait_stream(self.stream)
        self.warmed_up = True


class GraphedStep:
    """The forward and backward graphs of one batch shape: the batch's tensors are copied into `inputs` before a
    replay; the forward leaves the loss in `loss`, the backward reads the loss's gradient from `loss_grad` and
    leaves the parameters' gradients, flat, in `flat_grad` (`used` says which parameters have one)."""

    def __init__(
        self,
        model: torch.nn.Module,
        params: list[torch.nn.Parameter],
        batch: dict,
        pool: tuple,
        stream: torch.cuda.Stream,
    ):
        device = params[0].device
        self.input_names = [name for name, value in batch.items() if isinstance(value, torch.Tensor)]
        self.inputs = {name: batch[name].detach().to(device, copy=True) for name in self.input_names}
        constants = {name: value for name, value in batch.items() if name not in self.inputs}
        self.forward_graph, self.backward_graph = torch.cuda.CUDAGraph(), torch.cuda.CUDAGraph()
        recording = dict(pool=pool, stream=stream, capture_error_mode="thread_local")
        with autocast_cache_off(), torch.cuda.graph(self.forward_graph, **recording):
            loss = model(**self.inputs, **constants).loss
        self.loss_grad = torch.empty_like(loss)
        with torch.cuda.graph(self.backward_graph, **recording):
            grads = torch.autograd.grad(loss, params, self.loss_grad, allow_unused=True)
            self.used = [grad is not None for grad in grads]
            self.flat_grad = torch.cat([grad.reshape(-1) for grad in grads if grad is not None])
        self.loss = loss.detach()
        self.shapes = [p.shape for p in params]

    def replay_forward(self, tensors: tuple[torch.Tensor, ...]) -> torch.Tensor:
        for name, tensor in zip(self.input_names, tensors, strict=True):
            self.inputs[name].copy_(tensor)
        self.forward_graph.replay()
        return self.loss.clone()  # the caller's own: the next replay of any graph may overwrite the graph's

    def replay_backward(self, loss_grad: torch.Tensor) -> list[torch.Tensor | None]:
        self.loss_grad.copy_(loss_grad)
        self.backward_graph.replay()
        # one copy for all: the gradients then outlive the next replay (accumulated over micro-batches, say)
        flat, start, grads = self.flat_grad.clone(), 0, []
        for shape, used in zip(self.shapes, self.used, strict=True):
            grads.append(flat[start : start + shape.numel()].view(shape) if used else None)
            start += shape.numel() if used else 0
        return grads


class ReplayedStep(torch.autograd.Function):
    """The loss of a `GraphedStep`'s forward replay, whose gradient is its backward replay: apply(step, number of
    batch tensors, *batch tensors, *parameters)."""

    @staticmethod
    def forward(ctx, step: GraphedStep, n_inputs: int, *tensors: torch.Tensor) -> torch.Tensor:
        ctx.step, ctx.n_inputs = step, n_inputs
        return step.replay_forward(tensors[:n_inputs])

    @staticmethod
    def backward(ctx, loss_grad: torch.Tensor):
        return (None, None) + (None,) * ctx.n_inputs + tuple(ctx.step.replay_backward(loss_grad))


def graphable(inputs: dict) -> bool:
    """Whether a call's graphs would give what the eager call gives: with labels (the loss is what the graphs
    return) and no input that needs a gradient of its own (the graphs return the parameters' only)."""
    return "labels" in inputs and not any(
        isinstance(value, torch.Tensor) and value.requires_grad for value in inputs.values()
    )


def batch_key(inputs: dict) -> tuple:
    """What a recorded graph holds fixed: each input's shape, dtype and device (a tensor's) or value (any other),
    and the autocast in force."""
    return tuple(
        sorted(
            (name, (tuple(v.shape), v.dtype, v.device) if isinstance(v, torch.Tensor) else v)
            for name, v in inputs.items()
        )
    ) + (torch.is_autocast_enabled("cuda"), torch.get_autocast_dtype("cuda"))


def _step_numbers_as_tensors(inputs: dict, device: torch.device) -> dict:
    numbers = {
        name: torch.tensor(inputs[name], device=device)
        for name in STEP_NUMBERS
        if isinstance(inputs.get(name), int | float)
    }
    return inputs | numbers if numbers else inputs


@contextlib.contextmanager
def autocast_cache_off() -> Iterator[None]:
    """Autocast without its cache of cast weights while recording: a cast made once and cached would not be made
    again at each replay, where the weights have changed (autocast contexts entered inside, such as accelerate's
    around the model's forward, inherit the setting)."""
    enabled = torch.is_autocast_cache_enabled()
    torch.set_autocast_cache_enabled(False)
    try:
        yield
    finally:
        torch.set_autocast_cache_enabled(enabled)

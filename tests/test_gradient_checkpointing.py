"""Gradient checkpointing, torch.compile and the GPU's fixed shapes: what fits or speeds up a bigger model."""

import json
import warnings

import pytest
import torch
from helpers import PAD, TINY_VOCAB, tiny_args, tiny_config
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from hf_seq2seq import TransformerMTForConditionalGeneration
from hf_seq2seq.benchmarks.measuring import enable_activation_checkpointing
from hf_seq2seq.cli.train import main as train_main
from hf_seq2seq.engines.base import translate
from hf_seq2seq.engines.torch_engine import TorchTranslator
from hf_seq2seq.evaluation.report import TRAINING_REPORT
from hf_seq2seq.models.transformer_mt import modeling_transformer_mt

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

VOCAB = TINY_VOCAB


def tiny_model(normalize_before: bool) -> TransformerMTForConditionalGeneration:
    torch.manual_seed(0)
    config = tiny_config(
        dropout=0.1,  # dropout on: the recomputed forward must draw the same masks
        attention_dropout=0.1,
        label_smoothing=0.1,
        normalize_before=normalize_before,
    )
    return TransformerMTForConditionalGeneration(config).train()


def padded(lengths: list[int], seed: int) -> tuple[torch.Tensor, torch.Tensor]:
    """Right-padded random ids of the given lengths and their 0/1 mask."""
    ids = torch.randint(3, VOCAB, (len(lengths), max(lengths)), generator=torch.Generator().manual_seed(seed))
    mask = torch.arange(max(lengths))[None, :] < torch.tensor(lengths)[:, None]
    return ids.masked_fill(~mask, PAD), mask.long()


def padded_batch() -> dict[str, torch.Tensor]:
    """Sources and labels of different lengths, so the padding-packed path runs: (N, D) inside the layers."""
    input_ids, attention_mask = padded([9, 6, 3, 1], seed=1)
    labels, label_mask = padded([7, 2, 5, 4], seed=2)
    return dict(
        input_ids=input_ids,
        attention_mask=attention_mask,
        labels=labels.masked_fill(~label_mask.bool(), -100),
    )


def loss_and_gradients(model, batch: dict) -> tuple[torch.Tensor, dict[str, torch.Tensor], int]:
    """Loss, every parameter's gradient, and the bytes autograd kept from the forward for the backward."""
    saved = []

    def pack(tensor: torch.Tensor) -> torch.Tensor:
        saved.append(tensor.numel() * tensor.element_size())
        return tensor

    model.zero_grad()
    torch.manual_seed(123)  # the same dropout masks in both runs
    with torch.autograd.graph.saved_tensors_hooks(pack, lambda tensor: tensor):
        loss = model(**batch).loss
    loss.backward()
    gradients = {name: p.grad.clone() for name, p in model.named_parameters() if p.grad is not None}
    return loss.detach(), gradients, sum(saved)


@pytest.mark.parametrize("normalize_before", [False, True], ids=["post-LN", "pre-LN"])
def test_checkpointing_gives_the_same_loss_and_gradients_on_a_padded_batch(normalize_before):
    model = tiny_model(normalize_before)
    batch = padded_batch()

    loss, gradients, saved = loss_and_gradients(model, batch)
    enable_activation_checkpointing(model)  # its name before transformers 5.23 too
    checkpointed_loss, checkpointed_gradients, checkpointed_saved = loss_and_gradients(model, batch)

    assert checkpointed_saved < saved / 2  # the layers' activations are recomputed in backward, not kept
    torch.testing.assert_close(checkpointed_loss, loss)
    assert checkpointed_gradients.keys() == gradients.keys() == {n for n, _ in model.named_parameters()}
    for name, gradient in gradients.items():
        torch.testing.assert_close(checkpointed_gradients[name], gradient, msg=name)


@pytest.mark.filterwarnings("ignore:`gradient_checkpointing` is deprecated")  # the usual flag, a 5.x alias
def test_a_run_with_gradient_checkpointing_saves_a_model_that_loads_and_translates(
    tmp_path, synthetic_fra_txt
):
    results = train_main(
        tiny_args(synthetic_fra_txt, tmp_path, "--max_steps", "40", "--gradient_checkpointing", "true")
    )
    state = json.loads((tmp_path / "trainer_state.json").read_text())
    assert state["global_step"] == 40 and results["training"]["global_step"] == 40
    assert (tmp_path / TRAINING_REPORT).is_file()

    model = AutoModelForSeq2SeqLM.from_pretrained(tmp_path).eval()
    assert not any(layer.gradient_checkpointing for layer in model.model.encoder.layers)  # a fresh model
    translations = translate(
        TorchTranslator(model, AutoTokenizer.from_pretrained(tmp_path)),
        ["the boy sees a red cat .", "her mother buys a cheap truck ."],
    )
    assert len(translations) == 2 and all(translations)


def test_compiled_model_is_one_graph_that_gives_the_eager_loss_gradients_and_outputs():
    """Under torch.compile the layers run on the padded layout (packing by a data-dependent mask breaks the
    graph, and its backward fails to trace): forward and backward compile without a graph break
    (`fullgraph=True`), and give the eager model's loss, gradients and outputs, zeros at padding included."""
    torch.manual_seed(0)
    model = TransformerMTForConditionalGeneration(tiny_config(label_smoothing=0.1)).train()
    compiled = torch.compile(model, backend="aot_eager", fullgraph=True)  # dynamo and AOTAutograd, no codegen
    batch = padded_batch()

    loss, gradients, _ = loss_and_gradients(model, batch)
    compiled_loss, compiled_gradients, _ = loss_and_gradients(compiled, batch)
    torch.testing.assert_close(compiled_loss, loss)
    compiled_gradients = {name.removeprefix("_orig_mod."): g for name, g in compiled_gradients.items()}
    assert compiled_gradients.keys() == gradients.keys() == {n for n, _ in model.named_parameters()}
    for name, gradient in gradients.items():
        torch.testing.assert_close(compiled_gradients[name], gradient, msg=name)

    model.eval()
    with torch.no_grad():
        outputs, compiled_outputs = (m(**batch, output_hidden_states=True) for m in (model, compiled))
    assert not outputs.encoder_last_hidden_state[~batch["attention_mask"].bool()].any()  # zeros at padding
    for name in ("loss", "logits", "encoder_last_hidden_state", "encoder_hidden_states"):
        torch.testing.assert_close(compiled_outputs[name], outputs[name], msg=name)


@pytest.mark.parametrize("implementation", ["sdpa", "eager"])
def test_the_gpus_fixed_shapes_give_the_cpus_loss_and_gradients(monkeypatch, implementation):
    """Off the CPU the model keeps every shape fixed (no host sync): no packing, full logits, and the decoder's
    self-attention without a mask, which sdpa runs as `is_causal` (its flash kernel's form) and the eager
    implementation as an explicit causal mask. Run here by making the CPU take that path."""
    torch.manual_seed(0)
    model = TransformerMTForConditionalGeneration(tiny_config(label_smoothing=0.1)).train()
    model.set_attn_implementation(implementation)
    batch = padded_batch()
    loss, gradients, _ = loss_and_gradients(model, batch)

    calls = []
    sdpa = torch.nn.functional.scaled_dot_product_attention

    def recording_sdpa(query, key, value, attn_mask=None, dropout_p=0.0, is_causal=False, **kwargs):
        calls.append((query.shape[2], attn_mask is None, is_causal))
        return sdpa(
            query, key, value, attn_mask=attn_mask, dropout_p=dropout_p, is_causal=is_causal, **kwargs
        )

    monkeypatch.setattr(torch.nn.functional, "scaled_dot_product_attention", recording_sdpa)
    monkeypatch.setattr(modeling_transformer_mt, "fixed_shapes", lambda tensor: True)
    fixed_loss, fixed_gradients, _ = loss_and_gradients(model, batch)
    torch.testing.assert_close(fixed_loss, loss)
    for name, gradient in gradients.items():
        torch.testing.assert_close(fixed_gradients[name], gradient, msg=name)
    if implementation == "sdpa":  # 2 encoder layers (padding mask), 2 decoder layers x (self, cross)
        target_length = batch["labels"].shape[1]
        assert [call for call in calls if call[2]] == [(target_length, True, True)] * 2
        assert sum(1 for call in calls if not call[1]) == 4  # the encoder's and the cross-attention's masks


def test_the_gpus_fixed_shapes_give_the_cpus_validation_loss_and_translations(monkeypatch):
    """What validation and the test evaluation run on a GPU: the loss in eval mode, greedy and beam search."""
    torch.manual_seed(0)
    model = TransformerMTForConditionalGeneration(tiny_config()).eval()
    batch = padded_batch()
    decoding = dict(input_ids=batch["input_ids"], attention_mask=batch["attention_mask"], max_new_tokens=8)
    with torch.no_grad():
        expected = [model(**batch).loss] + [model.generate(**decoding, num_beams=n) for n in (1, 3)]
        monkeypatch.setattr(modeling_transformer_mt, "fixed_shapes", lambda tensor: True)
        fixed = [model(**batch).loss] + [model.generate(**decoding, num_beams=n) for n in (1, 3)]
    torch.testing.assert_close(fixed[0], expected[0])
    assert torch.equal(fixed[1], expected[1]) and torch.equal(fixed[2], expected[2])


@pytest.mark.slow  # compiling takes minutes on 2 cores
def test_a_run_with_torch_compile_finishes_without_graph_breaks(tmp_path, synthetic_fra_txt, capfd):
    """No graph-break warnings from dynamo, and none of the "Error detected in IndexPutBackward0" warnings that
    AOTAutograd's anomaly mode printed when the backward of the packed layers' scatter failed to trace."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        results = train_main(
            tiny_args(synthetic_fra_txt, tmp_path, "--max_steps", "40", "--torch-compile", "true")
        )
    assert results["training"]["global_step"] == 40
    messages = [str(w.message) for w in caught] + capfd.readouterr().err.splitlines()
    problems = ("Error detected in", "Graph break", "graph break", "Backend compiler")
    assert not [m for m in messages if any(p in m for p in problems)]
    model = AutoModelForSeq2SeqLM.from_pretrained(tmp_path)  # saved without the compiled wrapper's prefix
    assert "model.encoder.layers.0.self_attn.qkv_proj.weight" in model.state_dict()

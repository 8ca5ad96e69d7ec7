"""Attention maps of a translation, their PNG grids, and training curves of a real Seq2SeqTrainer run."""

import json
from pathlib import Path

import numpy as np
import pytest
import torch
from datasets import Dataset
from helpers import ENGLISH, FRENCH, SPECIAL, TOKENIZER_IDS, VOCAB, tiny_config, tiny_tokenizer
from PIL import Image
from transformers import DataCollatorForSeq2Seq, Seq2SeqTrainer, Seq2SeqTrainingArguments
from transformers.modeling_outputs import Seq2SeqLMOutput

from hf_seq2seq import TransformerMTForConditionalGeneration
from hf_seq2seq.apps.plotting import (
    attention_figure,
    attention_maps,
    find_trainer_state,
    model_attentions,
    plot_attention,
    plot_training_curves,
    training_series,
)
from hf_seq2seq.cli import plot_attention as plot_attention_cli
from hf_seq2seq.cli import plot_training as plot_training_cli
from hf_seq2seq.evaluation.metrics import build_compute_metrics
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import CACHE_NAME

pytestmark = pytest.mark.floors  # matplotlib's floor is used here only

START = PAD = VOCAB["<pad>"]  # the decoder starts from pad, as in the project's models
ENCODER_GRID, DECODER_GRID = (2, 4), (3, 2)  # (layers, heads): different so the grids cannot be mixed up
SENTENCE = "the big cat sat on the red mat"
SCRIPTS = Path(__file__).resolve().parents[1] / "scripts"


def tiny_model(seed: int = 0, model_class=TransformerMTForConditionalGeneration):
    torch.manual_seed(seed)
    config = tiny_config(
        vocab_size=len(VOCAB),
        **TOKENIZER_IDS,
        d_model=16,
        encoder_layers=ENCODER_GRID[0],
        encoder_attention_heads=ENCODER_GRID[1],
        decoder_layers=DECODER_GRID[0],
        decoder_attention_heads=DECODER_GRID[1],
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=32,
        tie_word_embeddings=False,
    )
    config._attn_implementation = "sdpa"  # output_attentions still returns real (eager) weights
    return model_class(config).eval()


@pytest.fixture(scope="module")
def maps():
    return attention_maps(tiny_model(), tiny_tokenizer(), SENTENCE, max_new_tokens=6)


def test_attention_maps_tokens_and_shapes(maps):
    tokenizer, model = tiny_tokenizer(), tiny_model()
    assert maps["source_tokens"] == SENTENCE.split() + ["</s>"]
    generated = model.generate(
        **tokenizer(SENTENCE, return_tensors="pt"), num_beams=1, do_sample=False, max_new_tokens=6
    )
    assert maps["target_tokens"] == tokenizer.convert_ids_to_tokens(generated[0].tolist())
    assert maps["target_tokens"][0] == "<pad>" and len(maps["target_tokens"]) >= 4
    assert maps["translation"] == tokenizer.decode(generated[0], skip_special_tokens=True)
    s, t = len(maps["source_tokens"]), len(maps["target_tokens"])
    assert maps["encoder_attentions"].shape == (*ENCODER_GRID, s, s)
    assert maps["decoder_attentions"].shape == (*DECODER_GRID, t, t)
    assert maps["cross_attentions"].shape == (*DECODER_GRID, t, s)
    json.dumps({key: value for key, value in maps.items() if isinstance(value, list | str)})


def test_attention_maps_are_the_models_weights(maps):
    for kind in ("encoder_attentions", "decoder_attentions", "cross_attentions"):
        np.testing.assert_allclose(maps[kind].sum(-1), 1.0, atol=1e-5)  # probabilities over keys
        assert np.all(maps[kind] >= 0)
    t = len(maps["target_tokens"])
    future = np.triu(np.ones((t, t), dtype=bool), 1)
    assert np.all(maps["decoder_attentions"][:, :, future] == 0) and np.all(
        maps["decoder_attentions"][:, :, ~future] > 0
    )

    # encoder layer 0 recomputed by hand from its input and projection: softmax(Q Kᵀ / √Dh) per head
    model, tokenizer = tiny_model(), tiny_tokenizer()
    layer_inputs = []
    attn = model.model.encoder.layers[0].self_attn
    hook = attn.register_forward_hook(
        lambda module, args, kwargs, out: layer_inputs.append(args[0]), with_kwargs=True
    )
    model(**tokenizer(SENTENCE, return_tensors="pt"), decoder_input_ids=torch.tensor([[START]]))
    hook.remove()
    heads, head_dim = ENCODER_GRID[1], 16 // ENCODER_GRID[1]
    q, k, _ = attn.qkv_proj(layer_inputs[0]).view(1, -1, 3, heads, head_dim).permute(2, 0, 3, 1, 4)
    by_hand = torch.softmax(q @ k.transpose(-1, -2) / head_dim**0.5, dim=-1)[0].detach().numpy()
    np.testing.assert_allclose(maps["encoder_attentions"][0], by_hand, atol=1e-5)


def test_attention_maps_generates_no_more_tokens_than_the_model_has_positions():
    maps = attention_maps(tiny_model(), tiny_tokenizer(), SENTENCE, max_new_tokens=100)
    assert len(maps["target_tokens"]) <= 32  # max_position_embeddings, start token included


def test_model_attentions_are_zero_on_padded_keys():
    model = tiny_model()
    lengths = [7, 3]
    input_ids = torch.randint(len(SPECIAL), len(VOCAB), (2, 7), generator=torch.Generator().manual_seed(0))
    attention_mask = (torch.arange(7)[None] < torch.tensor(lengths)[:, None]).long()
    input_ids = input_ids.masked_fill(attention_mask == 0, PAD)
    weights = model_attentions(model, input_ids, attention_mask, torch.tensor([[START, 5, 6], [START, 7, 8]]))
    assert weights["encoder_attentions"].shape == (2, *ENCODER_GRID, 7, 7)
    assert weights["cross_attentions"].shape == (2, *DECODER_GRID, 3, 7)
    for i, length in enumerate(lengths):
        assert np.all(weights["encoder_attentions"][i, ..., length:] == 0)
        assert np.all(weights["cross_attentions"][i, ..., length:] == 0)
        assert np.all(weights["cross_attentions"][i, ..., :length] > 0)
    # the short sentence alone gives the same weights as its padded row
    alone = model_attentions(model, input_ids[1:, :3], attention_mask[1:, :3], torch.tensor([[START, 7, 8]]))
    np.testing.assert_allclose(
        weights["cross_attentions"][1, ..., :3], alone["cross_attentions"][0], atol=1e-6
    )


def test_plot_attention_writes_one_grid_per_kind(maps, tmp_path):
    paths = plot_attention(maps, tmp_path / "attention")
    assert [p.name for p in paths] == [
        "encoder_self_attention.png",
        "decoder_self_attention.png",
        "cross_attention.png",
    ]
    for path, (layers, heads) in zip(paths, [ENCODER_GRID, DECODER_GRID, DECODER_GRID], strict=True):
        with Image.open(path) as image:
            image.load()
            assert image.format == "PNG" and image.width > 200 and image.height > 200
            assert image.text["Panels"] == str(layers * heads) and image.text["Grid"] == f"{layers}x{heads}"


def test_attention_figure_panels_titles_and_token_labels(maps):
    fig = attention_figure(maps["cross_attentions"], maps["target_tokens"], maps["source_tokens"], "cross")
    panels = [ax for ax in fig.axes if ax.get_label() != "colorbar"]
    assert len(panels) == DECODER_GRID[0] * DECODER_GRID[1] and len(fig.axes) == len(panels) + 1  # + colorbar
    layers, heads = DECODER_GRID
    assert [ax.get_title() for ax in panels] == [
        f"layer {i}, head {j}" for i in range(1, layers + 1) for j in range(1, heads + 1)
    ]
    for ax in panels:
        assert [label.get_text() for label in ax.get_xticklabels()] == maps["source_tokens"]
        assert [label.get_text() for label in ax.get_yticklabels()] == maps["target_tokens"]
    with pytest.raises(ValueError, match="do not match"):
        attention_figure(maps["cross_attentions"], maps["source_tokens"], maps["source_tokens"], "wrong axes")


class ModelWithoutAttentions(TransformerMTForConditionalGeneration):
    """Simulates a model saved without the attention path: its outputs never carry attention weights."""

    def forward(self, *args, **kwargs) -> Seq2SeqLMOutput:
        out = super().forward(*args, **kwargs)
        return Seq2SeqLMOutput(
            loss=out.loss,
            logits=out.logits,
            **{CACHE_NAME: getattr(out, CACHE_NAME)},
            encoder_last_hidden_state=out.encoder_last_hidden_state,
        )


def test_attention_maps_bad_inputs():
    tokenizer = tiny_tokenizer()
    for sentence in ("", "   \n"):
        with pytest.raises(ValueError, match="empty"):
            attention_maps(tiny_model(), tokenizer, sentence)
    with pytest.raises(ValueError, match="without the attention path.*attn_implementation='eager'"):
        attention_maps(tiny_model(model_class=ModelWithoutAttentions), tokenizer, SENTENCE, max_new_tokens=3)


def test_missing_trainer_state_names_the_path(tmp_path):
    (tmp_path / "checkpoint-5").mkdir()  # a checkpoint folder without trainer_state.json does not count
    with pytest.raises(
        FileNotFoundError, match=r"trainer_state\.json.*Trainer writes it into each checkpoint"
    ) as info:
        plot_training_curves(tmp_path, tmp_path / "curves.png")
    assert str(tmp_path / "trainer_state.json") in str(info.value)
    with pytest.raises(FileNotFoundError, match="does not exist"):
        find_trainer_state(tmp_path / "no-such-run")


def test_find_trainer_state_prefers_run_file_then_newest_checkpoint(tmp_path):
    for step in (9, 10):
        (tmp_path / f"checkpoint-{step}").mkdir()
        (tmp_path / f"checkpoint-{step}" / "trainer_state.json").write_text("{}")
    assert (
        find_trainer_state(tmp_path) == tmp_path / "checkpoint-10" / "trainer_state.json"
    )  # by step, not name
    (tmp_path / "trainer_state.json").write_text("{}")
    assert find_trainer_state(tmp_path) == tmp_path / "trainer_state.json"


def translation_pairs(n: int, seed: int = 0) -> dict[str, list[str]]:
    rng = np.random.default_rng(seed)
    english, french = ENGLISH.split(), FRENCH.split()
    src = [" ".join(rng.choice(english, size=int(rng.integers(2, 6)))) for _ in range(n)]
    tgt = [" ".join(rng.choice(french, size=int(rng.integers(2, 6)))) for _ in range(n)]
    return {"src": src, "tgt": tgt}


def test_training_curves_from_a_real_seq2seq_trainer_run(tmp_path):
    tokenizer, model = tiny_tokenizer(), tiny_model()
    model.train()

    def tokenize(batch):
        return tokenizer(batch["src"], text_target=batch["tgt"])

    train = Dataset.from_dict(translation_pairs(16)).map(
        tokenize, batched=True, remove_columns=["src", "tgt"]
    )
    validation = Dataset.from_dict(translation_pairs(6, seed=1)).map(
        tokenize, batched=True, remove_columns=["src", "tgt"]
    )
    args = Seq2SeqTrainingArguments(
        output_dir=str(tmp_path / "run"),
        max_steps=4,
        per_device_train_batch_size=4,
        per_device_eval_batch_size=6,
        learning_rate=1e-3,
        lr_scheduler_type="linear",
        logging_steps=1,
        eval_strategy="steps",
        eval_steps=2,
        save_strategy="steps",
        save_steps=4,
        predict_with_generate=True,
        generation_max_length=8,
        report_to=[],
        use_cpu=True,
        disable_tqdm=True,
        dataloader_num_workers=0,
    )
    trainer = Seq2SeqTrainer(
        model=model,
        args=args,
        train_dataset=train,
        eval_dataset=validation,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
        processing_class=tokenizer,
        compute_metrics=build_compute_metrics(tokenizer),
    )
    trainer.train()

    state_path = find_trainer_state(tmp_path / "run")
    assert state_path == tmp_path / "run" / "checkpoint-4" / "trainer_state.json"
    series = training_series(json.loads(state_path.read_text())["log_history"])
    assert series["train_loss"][0] == series["learning_rate"][0] == [1, 2, 3, 4]
    assert series["eval_loss"][0] == series["eval_bleu"][0] == [2, 4]
    assert series["learning_rate"][1][0] > series["learning_rate"][1][-1]  # linear decay

    out = plot_training_curves(tmp_path / "run", tmp_path / "figures" / "curves.png")
    with Image.open(out) as image:
        image.load()
        assert image.format == "PNG"
        assert image.text["Series"] == "train_loss:4,eval_loss:2,learning_rate:4,eval_bleu:2"
    # the file itself is accepted too
    assert plot_training_curves(state_path, tmp_path / "again.png").is_file()


def test_plot_verbs_write_and_print_their_pngs(tmp_path, capsys):
    tiny_model().save_pretrained(tmp_path / "model")
    tiny_tokenizer().save_pretrained(tmp_path / "model")
    plot_attention_cli.main(
        [str(tmp_path / "model"), SENTENCE, "--output-dir", str(tmp_path / "att"), "--max-new-tokens", "4"]
    )
    printed = capsys.readouterr().out.split()
    assert printed == [
        str(tmp_path / "att" / name)
        for name in ("encoder_self_attention.png", "decoder_self_attention.png", "cross_attention.png")
    ]
    assert all(Path(p).is_file() for p in printed)

    state = {
        "log_history": [
            {"loss": 3.0, "learning_rate": 1e-3, "step": 1},
            {"eval_loss": 2.5, "eval_bleu": 1.0, "step": 1},
        ]
    }
    (tmp_path / "trainer_state.json").write_text(json.dumps(state))
    plot_training_cli.main([str(tmp_path), str(tmp_path / "curves.png")])
    assert capsys.readouterr().out.strip() == str(tmp_path / "curves.png")
    with Image.open(tmp_path / "curves.png") as image:
        assert image.text["Series"] == "train_loss:1,eval_loss:1,learning_rate:1,eval_bleu:1"

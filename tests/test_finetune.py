"""A published folder, loaded with `trust_remote_code=True`, fine-tunes with the Trainer and saves again; `hf-seq2seq
train` fine-tunes another architecture's folder (Marian) with label smoothing and the saved length rule."""

import json
import math
import os

import pytest
import torch
from datasets import Dataset
from helpers import REPO_ID, TOKENIZER_IDS, make_trained_folder, tiny_args, tiny_tokenizer
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    MarianConfig,
    MarianMTModel,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
    T5Config,
    T5ForConditionalGeneration,
)
from transformers.trainer_pt_utils import LabelSmoother

from hf_seq2seq.cli import train
from hf_seq2seq.engines.base import translate
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.torch_engine import TorchTranslator, load_model_and_tokenizer
from hf_seq2seq.hub.push import build_hub_folder
from hf_seq2seq.models.transformer_mt.length_rule import length_rule_limit
from hf_seq2seq.training.arguments import ModelArguments
from hf_seq2seq.training.builders import build_model

pytestmark = pytest.mark.floors  # the Trainer fine-tuning a Marian folder: transformers' API at its floor too

PAIRS = [
    ("how are you ?", "comment allez vous ?"),
    ("i like cheese .", "je aime le fromage ."),
    ("good morning !", "bonjour !"),
    ("thank you !", "merci !"),
]


def test_finetune_loaded_hub_folder_and_save_again(tmp_path):
    """The folder as published, fine-tuned in-process (where the imported package's registered classes serve
    the Auto classes; loading without the package is covered by test_hub's validation)."""
    folder = build_hub_folder(make_trained_folder(tmp_path / "trained"), tmp_path / "hub", REPO_ID)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder, trust_remote_code=True)
    tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=True)

    sources, targets = zip(*PAIRS, strict=True)
    dataset = Dataset.from_dict({"src": list(sources), "tgt": list(targets)}).map(
        lambda batch: tokenizer(batch["src"], text_target=batch["tgt"]),
        batched=True,
        remove_columns=["src", "tgt"],
    )
    args = Seq2SeqTrainingArguments(
        output_dir=str(tmp_path / "run"),
        max_steps=4,
        per_device_train_batch_size=2,
        learning_rate=1e-2,
        warmup_steps=0,
        logging_steps=1,
        save_strategy="no",
        report_to="none",
        use_cpu=True,
        dataloader_num_workers=0,
        disable_tqdm=True,
        seed=0,
    )
    trainer = Seq2SeqTrainer(
        model=model,
        args=args,
        train_dataset=dataset,
        data_collator=DataCollatorForSeq2Seq(tokenizer, model=model),
        processing_class=tokenizer,
    )
    before = {name: param.detach().clone() for name, param in model.named_parameters()}
    result = trainer.train()

    losses = [entry["loss"] for entry in trainer.state.log_history if "loss" in entry]
    assert len(losses) == 4 and all(map(math.isfinite, losses)) and math.isfinite(result.training_loss)
    unchanged = [
        name for name, param in model.named_parameters() if torch.equal(param.detach(), before[name])
    ]
    assert not unchanged, f"not updated by training: {unchanged}"
    after = model.state_dict()

    trainer.save_model(tmp_path / "finetuned")
    saved = set(os.listdir(tmp_path / "finetuned"))
    assert {"model.safetensors", "config.json", "tokenizer.json", "modeling_transformer_mt.py"} <= saved
    reloaded = AutoModelForSeq2SeqLM.from_pretrained(tmp_path / "finetuned", trust_remote_code=True).eval()
    reloaded_state = reloaded.state_dict()
    assert reloaded_state.keys() == after.keys()
    for name, tensor in after.items():
        assert torch.equal(tensor.cpu(), reloaded_state[name]), name

    batch = tokenizer(list(sources), padding=True, return_tensors="pt")
    with torch.no_grad():
        assert torch.equal(model.eval().generate(**batch), reloaded.generate(**batch))


def tiny_marian_folder(folder) -> str:
    """A tiny random `MarianMTModel` over `tiny_tokenizer`'s vocabulary, saved with the tokenizer."""
    tokenizer = tiny_tokenizer()
    torch.manual_seed(0)
    config = MarianConfig(
        vocab_size=len(tokenizer),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        max_position_embeddings=64,
        dropout=0.0,
        forced_eos_token_id=None,
        **TOKENIZER_IDS,
    )
    MarianMTModel(config).save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    return str(folder)


def test_a_folder_without_a_position_limit_is_refused_by_name(tmp_path):
    config = T5Config(vocab_size=len(tiny_tokenizer()), d_model=8, d_ff=16, d_kv=4, num_layers=1, num_heads=2)
    T5ForConditionalGeneration(config).save_pretrained(tmp_path / "t5")
    with pytest.raises(ValueError, match="a 't5' model has no max_position_embeddings; .* Marian, BART"):
        build_model(ModelArguments(model_name_or_path=str(tmp_path / "t5")), tiny_tokenizer(), 0.1)


def test_train_fine_tunes_a_marian_folder_with_label_smoothing_and_the_length_rule(
    tmp_path, synthetic_fra_txt, monkeypatch, caplog
):
    """`hf-seq2seq train --model_name_or_path` on another architecture: the Trainer smooths the labels (only
    this package's model reads `config.label_smoothing`), and every decoding of the package (validation with
    predict_with_generate, the test evaluation, `translate`) keeps to the saved length rule, which Marian's own
    `generate()` does not know."""
    smoothed = []  # the epsilon of each training step that went through the Trainer's label smoother
    smoother_call = LabelSmoother.__call__

    def record_smoothing(self, model_output, labels, shift_labels=False, **kwargs):
        smoothed.append(self.epsilon)
        return smoother_call(self, model_output, labels, shift_labels, **kwargs)

    generated = []  # (the saved rule's limit for the batch, new tokens) of each generate() of the Marian model
    marian_generate = MarianMTModel.generate

    def never_ending_generate(self, *args, **kwargs):
        """Marian's `generate()`, recorded, with `</s>` suppressed: each translation runs to the limit it is
        given (Marian's own: the config's `max_new_tokens`, 63)."""
        limit = length_rule_limit(self.generation_config, kwargs["input_ids"].shape[-1])
        output = marian_generate(self, *args, suppress_tokens=[self.config.eos_token_id], **kwargs)
        generated.append((limit, output.shape[-1] - 1))
        return output

    monkeypatch.setattr(LabelSmoother, "__call__", record_smoothing)
    monkeypatch.setattr(MarianMTModel, "generate", never_ending_generate)
    output_dir = tmp_path / "run"
    results = train.main(
        tiny_args(
            synthetic_fra_txt,
            output_dir,
            "--model_name_or_path", tiny_marian_folder(tmp_path / "marian"),
            "--max_steps", "20",
            "--eval_steps", "10",
            "--save_steps", "10",
        )
    )  # fmt: skip

    assert results["training"]["global_step"] == 20
    assert "missing keys" not in caplog.text  # the best checkpoint lacks only tied and sinusoidal weights
    assert json.loads((output_dir / "config.json").read_text())["model_type"] == "marian"
    assert 0.1 in smoothed and len(smoothed) >= 20  # every training step (and the validation losses)
    assert torch.load(output_dir / "training_args.bin", weights_only=False).label_smoothing_factor == 0.1
    assert "label_smoothing" not in json.loads((output_dir / "config.json").read_text())

    # validation (2 evaluations of 40 sources) and the test evaluation (40) stopped at the rule's limit
    assert len(generated) >= 3
    assert all(new_tokens == limit < 63 for limit, new_tokens in generated), generated

    generated.clear()
    model, tokenizer = load_model_and_tokenizer(output_dir, device="cpu")
    assert model.generation_config.max_length_a == 1.5 and model.generation_config.max_length_b >= 1
    sources = ["the boy sees a red cat .", "how are you ?", "the cat sat on the mat and the dog is here ."]
    translations = translate(TorchTranslator(model, tokenizer), sources * 3, batch_size=4)
    assert len(translations) == 9 and all(translations)
    assert len(generated) == 3 and all(new_tokens == limit < 63 for limit, new_tokens in generated), generated
    generated.clear()
    translator = TorchTranslator(model, tokenizer)
    translate(translator, sources, decoding=Decoding(max_new_tokens=2))  # a fixed limit wins
    assert [new_tokens for _, new_tokens in generated] == [2]

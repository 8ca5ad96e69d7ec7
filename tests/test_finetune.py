"""A published folder, loaded with `trust_remote_code=True`, fine-tunes with the Trainer and saves again."""

import math
import os

import torch
from conftest import REPO_ID, make_trained_folder
from datasets import Dataset
from transformers import (
    AutoModelForSeq2SeqLM,
    AutoTokenizer,
    DataCollatorForSeq2Seq,
    Seq2SeqTrainer,
    Seq2SeqTrainingArguments,
)

from hf_seq2seq import hub

PAIRS = [
    ("how are you ?", "comment allez vous ?"),
    ("i like cheese .", "je aime le fromage ."),
    ("good morning !", "bonjour !"),
    ("thank you !", "merci !"),
]


def test_finetune_loaded_hub_folder_and_save_again(tmp_path):
    """The folder as published, fine-tuned in-process (where the imported package's registered classes serve
    the Auto classes; loading without the package is covered by test_hub's validation)."""
    folder = hub.build_hub_folder(make_trained_folder(tmp_path / "trained"), tmp_path / "hub", REPO_ID)
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

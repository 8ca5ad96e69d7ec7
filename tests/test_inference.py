"""Translation through the package's own functions keeps the saved generation settings."""

import torch

from hf_seq2seq import TransformerMTConfig, TransformerMTForConditionalGeneration
from hf_seq2seq.inference import load_model_and_tokenizer, translate
from hf_seq2seq.tokenization import train_tokenizer
from hf_seq2seq.training import greedy_generation_config


def test_translate_is_not_cut_at_transformers_default_20_tokens(tmp_path):
    tokenizer = train_tokenizer(
        ["the cat sat on the mat", "le chat est assis sur le tapis"] * 20, vocab_size=60
    )
    config = TransformerMTConfig(
        vocab_size=len(tokenizer), d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, pad_token_id=tokenizer.pad_token_id,
        eos_token_id=tokenizer.eos_token_id, decoder_start_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    torch.manual_seed(0)
    model = TransformerMTForConditionalGeneration(config)
    model.generation_config = greedy_generation_config(model, max_target_length=32)
    model.generation_config.min_new_tokens = 32  # no </s> before the saved limit
    model.save_pretrained(tmp_path)
    tokenizer.save_pretrained(tmp_path)

    model, tokenizer = load_model_and_tokenizer(tmp_path, device="cpu")
    (text,) = translate(model, tokenizer, ["the cat sat on the mat"])
    assert len(tokenizer(text, add_special_tokens=False)["input_ids"]) >= 30

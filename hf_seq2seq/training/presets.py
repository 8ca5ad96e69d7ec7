"""The named presets of `hf-seq2seq train --preset`, as data: the defaults each one sets.

A preset's keys are fields of the dataclasses of `hf_seq2seq.training.arguments` or of
`Seq2SeqTrainingArguments`; `hf_seq2seq.cli.train` sets `preset_defaults(name)` as the parser's defaults, so any
flag given explicitly wins. A value that must be measured on the machine is a function, called only for the
preset chosen. docs/results.md has what the CPU presets' models score.
"""

import torch

from hf_seq2seq.acceleration.cpu_features import cpu_trains_faster_in_bf16
from hf_seq2seq.data.software_messages import SOFTWARE_MESSAGES_SHORT


def cpu_tokens_per_batch() -> int:
    """The `cpu` presets' batch, in padded source + target tokens: 600 where they train in bf16, 1,200 in fp32. An
    fp32 step (CPUs without bf16 matmuls: AVX2-only ones) spends most of its time in matmuls, which run faster on
    more rows: bigger batches train more tokens a second, and in the same time the model scored higher (docs/
    recipe.md, "Batches of 1,200 tokens in fp32"). 600 was chosen in bf16 at equal tokens, where more steps won."""
    return 600 if cpu_trains_faster_in_bf16() else 1200


# What every preset shares: validation BLEU picks the best checkpoint, the paper's optimiser settings.
_COMMON = dict(
    eval_strategy="steps",
    save_strategy="steps",
    load_best_model_at_end=True,
    metric_for_best_model="bleu",
    greater_is_better=True,
    save_total_limit=2,
    predict_with_generate=True,
    lr_scheduler_type="inverse_sqrt",
    label_smoothing_factor=0.1,
    weight_decay=0.0,
    adam_beta2=0.98,
    max_grad_norm=1.0,
    # AdamW's update of all parameters in one kernel instead of a few operators per parameter: the cpu preset
    # makes more steps in the same minutes on a CPU (docs/recipe.md)
    optim="adamw_torch_fused",
    train_sampling_strategy="group_by_length",
    report_to="none",
    logging_steps=50,
    dataloader_num_workers=0,
    dataloader_pin_memory=torch.cuda.is_available(),  # pinning without a GPU only warns
)


# A small model and short sequences for a few CPU cores, trained for a time budget instead of an epoch count.
# The recipe was chosen by A/B runs on a CPU (docs/recipe.md has each screen and its scores): pre-LN, the smaller
# vocabulary and smaller batches each scored above the paper's post-LN, vocabulary and batch in short screens;
# then, at a quarter of the training tokens, a smaller batch and no dropout each scored higher, and more together;
# then, in runs of the full budget, the narrower model above the wider one, which makes fewer steps in it.
_CPU = dict(
    _COMMON,
    output_dir="runs/cpu",
    # fra-eng's sentences and the package's software messages of at most 8 words (labels, menu items, titles: what
    # fra.txt lacks), validation and test fra-eng's; chosen on validation sets of both kinds (docs/recipe.md,
    # "Software messages")
    dataset=f"fra-eng,{SOFTWARE_MESSAGES_SHORT}",
    vocab_size=4000,
    d_model=192,
    encoder_layers=3,
    decoder_layers=3,
    attention_heads=3,
    ffn_dim=768,
    # the budget sees each pair 1-4 times (by CPU): too few for dropout's regularising to pay (screened at d_model 256)
    dropout=0.0,
    normalize_before=True,
    # fra-eng's pairs are short: a tenth more examples, each 2-8 random pairs joined, train the long inputs and the
    # positions that real text reaches (docs/recipe.md, "Long sentences"), within limits that keep them whole
    max_source_length=128,
    max_target_length=128,
    concat_share=0.1,
    concat_max_pairs=8,
    max_eval_samples=600,
    max_train_minutes=22.0,
    num_beams=6,  # the test evaluation decodes with beam search, which scores above greedy (docs/results.md)
    lr_decay_to_budget=True,
    # the learning rate reaches 0 at the budget's end, so the last step is the model to keep: choosing by the
    # validation BLEU of `max_eval_samples` sentences kept an earlier checkpoint that scored lower on the test set
    # (docs/recipe.md)
    load_best_model_at_end=False,
    num_train_epochs=20,
    # batches by tokens (a few dozen of fra-eng's short pairs, or a few joined examples), not 32 pairs, so that 32
    # long examples no longer make one step as 32 short pairs do: 600 padded source + target tokens in bf16, chosen
    # on both validation sets (docs/recipe.md, "Long sentences"), 1,200 in fp32, where the step is bound by its
    # matmuls and bigger batches train more tokens in the budget (`cpu_tokens_per_batch`)
    max_tokens_per_batch=cpu_tokens_per_batch,
    per_device_train_batch_size=32,  # with --max_tokens_per_batch 0
    per_device_eval_batch_size=128,
    learning_rate=2e-3,
    warmup_steps=0.3,  # a share of the budget: the same schedule on a machine that makes twice the steps
    eval_steps=800,
    save_steps=800,
    # autocast with fp32 master weights, only where a step measures faster in bf16: without bf16 matmuls
    # (avx512_bf16/AMX; e.g. AVX2-only CPUs) it is far slower than fp32, and with avx512_bf16 alone it can be
    # too (docs/results.md); measured by `preset_defaults`, when a preset that trains on the CPU is chosen
    bf16=cpu_trains_faster_in_bf16,
    use_cpu=not torch.cuda.is_available(),
)
# One GPU for a time budget: the `cpu` preset's budget rules (the learning rate decays to 0 at the budget's end,
# warmup a share of it, the last step kept) with the paper's base model, trained on batches of ~25,000 tokens.
_GPU = dict(
    _COMMON,
    output_dir="runs/gpu",
    vocab_size=8000,
    d_model=512,
    encoder_layers=6,
    decoder_layers=6,
    attention_heads=8,
    ffn_dim=2048,
    normalize_before=True,  # pre-LN: stable without a long warmup, which a 6-minute budget cannot afford
    # fra-eng's 167k pairs are seen dozens of times in the budget: regularise as fairseq's recipe for the
    # similar-sized IWSLT'14 corpus does
    dropout=0.3,
    max_eval_samples=600,
    max_train_minutes=6.0,
    lr_decay_to_budget=True,
    load_best_model_at_end=False,  # the learning rate ends at 0: the last step is the model (as `cpu`)
    num_train_epochs=1000,  # the budget stops it
    max_tokens_per_batch=25_000,
    # long inputs for short pairs, as the cpu preset (not screened on a GPU yet)
    max_source_length=128,
    max_target_length=128,
    concat_share=0.1,
    concat_max_pairs=8,
    per_device_eval_batch_size=256,
    learning_rate=1e-3,
    warmup_steps=0.1,
    eval_steps=1000,
    save_steps=1000,
    num_beams=6,
    bf16=torch.cuda.is_available() and torch.cuda.is_bf16_supported(),
    # attention without cuDNN's kernels: cuDNN builds an execution plan for each new batch shape, which batches by
    # tokens and generate()'s growing keys keep making (a step on new shapes took many times longer; on shapes
    # seen before, flash/efficient are as fast: docs/training.md)
    sdpa_backends="flash,efficient,math",
    # per step, the Trainer's check of the loss for nan/inf reads it on the host: a wait for the GPU each step
    logging_nan_inf_filter=False,
    # each step's forward and backward replayed as CUDA graphs where the run can (this package's model on one CUDA
    # GPU, no --torch_compile, ...: `cuda_graphs_needs`): fra-eng's batches, cut once, come in the same shapes
    # every epoch; eager, the host's kernel launches kept the GPU idle for much of each step
    # (docs/training.md)
    cuda_graphs=None,
    logging_steps=100,
    dataloader_num_workers=4,
    dataloader_persistent_workers=True,  # an epoch of fra-eng lasts seconds: no new workers at each one
)
PRESETS: dict[str, dict] = {
    "cpu": _CPU,
    # the same recipe for a longer time budget: more passes over the data, so dropout on; the width of before
    # (d_model 256), with which its figures were measured: the narrower model was not screened for this budget
    # (docs/recipe.md)
    "cpu-long": dict(
        _CPU,
        output_dir="runs/cpu-long",
        d_model=256,
        attention_heads=4,
        ffn_dim=1024,
        dropout=0.1,
        max_train_minutes=50.0,
        eval_steps=2000,
        save_steps=2000,
    ),
    # the paper's base model for one GPU and a time budget, on a corpus of fra-eng's size: batches by tokens
    # (about 25,000 as in the paper), bf16 autocast, fused AdamW, no host sync per step, CUDA graphs
    # (docs/training.md, "One GPU"). Its learning rate, dropout and size are not screened yet: that needs
    # `hf-seq2seq compare` on a GPU (measurements/gpu_check.sh's step `screen`).
    "gpu": _GPU,
    # the paper's base model and recipe on a large streamed corpus (WMT14 en-fr): post-LN, inverse-square-root
    # schedule with 4,000 warmup steps, about 25,000 source and 25,000 target tokens a step, 100k steps, the
    # average of the last 5 checkpoints, beam 4 and length penalty 0.6
    "gpu-wmt": dict(
        _GPU,
        output_dir="runs/gpu-wmt",
        dataset="wmt14",
        dataset_config="fr-en",
        streaming=True,
        shuffle_buffer=100_000,
        concat_share=0.0,  # WMT's sentences are long, and a stream is not held in memory to join
        dataloader_persistent_workers=False,  # each epoch's workers start from the stream's new shuffle
        cuda_graphs=False,  # a stream's batches are cut anew each epoch: their shapes need not come again
        tokenizer_sample=1_000_000,
        vocab_size=32000,
        normalize_before=False,
        dropout=0.1,
        max_source_length=128,
        max_target_length=128,
        max_eval_samples=1000,
        max_train_minutes=None,
        lr_decay_to_budget=False,
        lr_scheduler_type="inverse_sqrt",
        learning_rate=512**-0.5 * 4000**-0.5,  # the paper's d_model^-0.5 * warmup^-0.5, its peak rate
        warmup_steps=4000,
        adam_epsilon=1e-9,
        gradient_accumulation_steps=2,  # 2 x 25,000 source + target tokens: the paper's step on one GPU
        max_steps=100_000,
        eval_steps=5000,
        save_steps=5000,
        average_last=5,
        num_beams=4,
        length_penalty=0.6,
    ),
    # seconds-long runs for tests and smoke checks
    "tiny": dict(
        _COMMON,
        output_dir="runs/tiny",
        vocab_size=300,
        d_model=64,
        encoder_layers=2,
        decoder_layers=2,
        attention_heads=4,
        ffn_dim=128,
        dropout=0.0,
        max_source_length=24,
        max_target_length=24,
        num_train_epochs=40,
        per_device_train_batch_size=16,
        per_device_eval_batch_size=64,
        learning_rate=3e-3,
        warmup_steps=30,
        eval_steps=100,
        save_steps=100,
        logging_steps=10,
        disable_tqdm=True,
        standard_test_set=None,  # translating the standard set takes minutes, not seconds (docs/data.md)
    ),
}


def preset_defaults(name: str) -> dict:
    """The defaults of preset `name`, each measured value (a function) measured now: the bf16 probe of the CPU
    presets (a fraction of a second) runs when one of them is chosen, not when the presets are imported."""
    return {key: value() if callable(value) else value for key, value in PRESETS[name].items()}

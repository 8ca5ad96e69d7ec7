"""Training settings that cannot work, found from the flags alone: `hf-seq2seq train` refuses them with
`parser.error` before any data is read or a tokenizer trained, and `hf_seq2seq.training.recipe.run` raises
`ValueError` for them, where they would otherwise fail late (after loading the corpus and training the
tokenizer, or after training itself: the test decoding, the standard test set) with a traceback.

Each problem is one line that names the flag and says what to change."""

import re
import typing

from transformers import Seq2SeqTrainingArguments

from hf_seq2seq.data.test_sets import TEST_SETS
from hf_seq2seq.data.tokenization import SPECIAL_TOKENS, ModelType
from hf_seq2seq.models.transformer_mt.configuration_transformer_mt import TransformerMTConfig
from hf_seq2seq.training.arguments import DataArguments, FinalArguments, ModelArguments

# the config's fields that a flag of another name sets (`build_model`), to name the flag in its errors
CONFIG_FLAGS = {
    "encoder_attention_heads": "attention_heads",
    "decoder_attention_heads": "attention_heads",
    "encoder_ffn_dim": "ffn_dim",
    "decoder_ffn_dim": "ffn_dim",
    "label_smoothing": "label_smoothing_factor",
}


def streaming_problem(data_args: DataArguments, training_args: Seq2SeqTrainingArguments) -> str | None:
    """What a stream lacks: a stream has no length, so `--max_steps` must say how long to train."""
    if data_args.streaming and training_args.max_steps <= 0:
        return (
            "--streaming needs --max_steps N: a stream has no length, so the number of training steps "
            "cannot be derived from --num_train_epochs"
        )
    return None


def setting_problems(
    model_args: ModelArguments,
    data_args: DataArguments,
    training_args: Seq2SeqTrainingArguments,
    final_args: FinalArguments,
) -> list[str]:
    """The settings of a run that cannot work, one line each saying what to change; [] if none."""
    problems = [
        *_joining_problems(model_args.preset, data_args),
        *_fragment_problems(data_args),
        *_model_problems(model_args, data_args, training_args),
        *_final_problems(final_args),
    ]
    streaming = streaming_problem(data_args, training_args)
    if streaming:
        problems.append(streaming)
    for flag, value in (
        ("max_train_minutes", data_args.max_train_minutes),
        ("max_train_tokens", data_args.max_train_tokens),
    ):
        if value is not None and value < 0:
            problems.append(f"--{flag} must be >= 0 (0: no limit of that kind), not {value}")
    return problems


def _joining_problems(preset: str, data_args: DataArguments) -> list[str]:
    share = data_args.concat_share
    if share < 0:
        return [f"--concat_share must be >= 0 (joined examples per train pair; 0: none), not {share}"]
    problems = []
    if share > 0 and data_args.streaming:
        problems.append(
            f"--concat_share {share} (set by --preset {preset} unless given) joins pairs of a train split held in "
            "memory, and --streaming reads a stream: add --concat_share 0"
        )
    if share > 0 and data_args.concat_max_pairs < 2:
        problems.append(
            f"--concat_max_pairs must be at least 2 (a joined example joins 2 or more pairs), not "
            f"{data_args.concat_max_pairs}; or add --concat_share 0 to join none"
        )
    return problems


def _fragment_problems(data_args: DataArguments) -> list[str]:
    """The phrase-pair and variant shares (`hf_seq2seq.data.fragments`): examples per train pair, added to a
    train split held in memory."""
    problems = []
    for flag in ("phrase_share", "variant_share"):
        share = getattr(data_args, flag)
        if not share >= 0:
            problems.append(f"--{flag} is a number of examples per train pair: >= 0, not {share}")
        elif share and data_args.streaming:
            problems.append(f"--{flag} adds examples to a train split held in memory: not with --streaming")
    return problems


def _model_problems(
    model_args: ModelArguments, data_args: DataArguments, training_args: Seq2SeqTrainingArguments
) -> list[str]:
    """The network and tokenizer flags, where a run builds its own (a fine-tuned model keeps its own sizes)."""
    problems = []
    if not (model_args.tokenizer_name_or_path or model_args.model_name_or_path):
        if model_args.vocab_size <= len(SPECIAL_TOKENS):
            problems.append(
                f"--vocab_size must exceed the tokenizer's {len(SPECIAL_TOKENS)} special tokens, not "
                f"{model_args.vocab_size}"
            )
        if model_args.tokenizer_model not in typing.get_args(ModelType):
            problems.append(
                f"--tokenizer_model must be {' or '.join(typing.get_args(ModelType))}, not "
                f"{model_args.tokenizer_model!r}"
            )
    if model_args.model_name_or_path:
        return problems
    positions = model_args.max_position_embeddings
    if positions > 0:
        shift = model_args.max_position_shift
        if not 0 <= shift < positions:
            problems.append(
                f"--max_position_shift must be in 0..{positions - 1}, within the model's --max_position_embeddings "
                f"{positions} positions, not {shift}"
            )
        for flag in ("max_source_length", "max_target_length"):
            length = getattr(data_args, flag)
            if length > positions:
                problems.append(
                    f"--{flag} {length} is past the model's --max_position_embeddings {positions} positions: "
                    f"lower it to {positions} or raise --max_position_embeddings"
                )
    try:  # the config's own checks of the sizes (max_position_shift is checked above, by its flag)
        TransformerMTConfig(
            vocab_size=model_args.vocab_size,
            **model_args.network_settings(),
            label_smoothing=training_args.label_smoothing_factor,
        )
    except ValueError as error:
        message = str(error)
        for field, flag in CONFIG_FLAGS.items():
            message = message.replace(f"`{field}`", f"--{flag}")
        problems.append(re.sub(r"`(\w+)`", r"--\1", message))  # "`d_model` must ..." -> "--d_model must ..."
    return problems


def _final_problems(final_args: FinalArguments) -> list[str]:
    """What follows training: a bad value here would fail only after the whole training."""
    problems = []
    name = final_args.standard_test_set
    if name not in (None, "", "none") and name not in TEST_SETS:
        problems.append(
            f"--standard_test_set {name!r} is not a standard test set: one of {', '.join(TEST_SETS)}, or none to "
            "skip it"
        )
    for flag in ("num_beams", "max_new_tokens"):
        value = getattr(final_args, flag)
        if value is not None and value < 1:
            problems.append(f"--{flag} must be at least 1, not {value}")
    if final_args.average_last is not None and final_args.average_last < 0:
        problems.append(
            f"--average_last must be a number of checkpoints (0: none averaged), not {final_args.average_last}"
        )
    return problems

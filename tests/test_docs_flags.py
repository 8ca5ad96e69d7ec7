"""What the docs tell a user to pass to `hf-seq2seq train` is what the train parser takes: the `--flag value`
pairs of train flags that README.md or docs/*.md show (in an inline code span of the prose, or a line of a fenced
block) or that a comment line of training/presets.py names parse, those of one span or line together, over a
neutral base (the `tiny` preset, with the `--max_steps` a stream needs)."""

import dataclasses
import re

import pytest
from helpers import ROOT
from transformers import Seq2SeqTrainingArguments

from hf_seq2seq.cli.train import parse_args
from hf_seq2seq.training.arguments import DataArguments, FinalArguments, ModelArguments

TRAIN_FLAGS = {
    f"--{spelling}"
    for dataclass in (ModelArguments, DataArguments, Seq2SeqTrainingArguments, FinalArguments)
    for field in dataclasses.fields(dataclass)
    if field.init
    for spelling in (field.name, field.name.replace("_", "-"))
}
# what this machine has decides whether these parse (bf16 and CUDA graphs need a device that has them)
DEVICE_FLAGS = {"--bf16", "--fp16", "--cuda_graphs", "--cuda-graphs"}
BASE = ["--preset", "tiny", "--max_steps", "10", "--load_best_model_at_end", "false", "--output_dir", "x"]
# a flag, then its value: a literal (a number, true/false, a lower-case word or path), not a placeholder (N, K,
# <steps>) nor the next flag
FLAG_VALUE = re.compile(r"(?<![\w-])(--[a-z][a-z0-9_-]*)(?:=|[ \t]+)(-?[0-9][0-9.,_e-]*|[a-z][\w./:,-]*)")


def documented_flags(piece: str) -> tuple[str, ...]:
    """`piece`'s train flags with a literal value, as argv: `--flag value` pairs in order."""
    argv: list[str] = []
    for flag, value in FLAG_VALUE.findall(piece):
        value = value.rstrip(".,:")
        if flag in TRAIN_FLAGS and flag not in DEVICE_FLAGS and value:
            argv += [flag, value]
    return tuple(argv)


def markdown_code(text: str) -> list[str]:
    """The code of a Markdown text: each line of its fenced blocks (continuation lines joined), each inline code
    span of its prose."""
    blocks = re.findall(r"^```[^\n]*\n(.*?)^```", text, flags=re.S | re.M)
    prose = re.sub(r"^```[^\n]*\n.*?^```", "", text, flags=re.S | re.M)
    lines = [line for block in blocks for line in block.replace("\\\n", " ").splitlines()]
    return lines + re.findall(r"`([^`\n]+)`", prose)


def python_comments(text: str) -> list[str]:
    return re.findall(r"#(.*)$", text, flags=re.M)


SOURCES = {
    **{
        str(path.relative_to(ROOT)): markdown_code(path.read_text(encoding="utf-8"))
        for path in [ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md"))]
    },
    "hf_seq2seq/training/presets.py": python_comments(
        (ROOT / "hf_seq2seq" / "training" / "presets.py").read_text(encoding="utf-8")
    ),
}
DOCUMENTED = sorted(
    {(source, argv) for source, pieces in SOURCES.items() for argv in map(documented_flags, pieces) if argv}
)


def test_the_docs_show_flag_values_and_the_reader_finds_them():
    assert len(DOCUMENTED) >= 50
    assert ("docs/recipe.md", ("--max_tokens_per_batch", "0")) in DOCUMENTED  # prose, in backquotes
    assert ("hf_seq2seq/training/presets.py", ("--max_tokens_per_batch", "0")) in DOCUMENTED  # a comment
    assert documented_flags("`--concat_share S --concat_max_pairs N`") == ()  # placeholders are no values
    assert documented_flags("hf-seq2seq train --preset gpu --bf16 true --d_model 320") == (
        "--preset", "gpu", "--d_model", "320"
    )  # fmt: skip
    parse_args(BASE)


@pytest.mark.parametrize(
    ("source", "argv"), DOCUMENTED, ids=[f"{source}: {' '.join(argv)}" for source, argv in DOCUMENTED]
)
def test_the_flag_values_the_docs_name_parse(source, argv, capsys):
    try:
        parse_args([*BASE, *argv])
    except SystemExit:
        error = capsys.readouterr().err.strip().splitlines()[-1]
        pytest.fail(f"{source} names `{' '.join(argv)}`, which train refuses: {error}")

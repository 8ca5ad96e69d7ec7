"""What a newcomer sees: `hf-seq2seq --help` is quick and imports no torch, `import hf_seq2seq` is cheap and
still registers the Auto classes."""

import json
import os
import re
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
ENV = dict(os.environ, HF_HUB_OFFLINE="1")
# what none of these commands may print: transformers' bars for loading and saving a small model, its false
# "longer than the maximum" warning (the package splits or truncates long inputs itself), any warning at all
UNWANTED = re.compile(
    r"Loading weights|Writing model shards|Token indices sequence length|\bwarn|Traceback", re.I
)
LONG_TEXT = " ".join(["the cat sat on the mat"] * 10)  # 60 words of the tiny tokenizer, no full stop


def hf_seq2seq(*args: str, timeout: float = 300) -> subprocess.CompletedProcess:
    """`hf-seq2seq ARGS` in a fresh process, on this checkout's code (`python -m` from the repository root)."""
    return subprocess.run(
        [sys.executable, "-m", "hf_seq2seq", *args],
        cwd=ROOT,
        env=ENV,
        capture_output=True,
        text=True,
        timeout=timeout,
    )


def unwanted(output: str) -> list[str]:
    lines = output.replace("\r", "\n").splitlines()
    return [line for line in lines if UNWANTED.search(line)]


def run_python(script: str, timeout: float = 300) -> str:
    done = subprocess.run(
        [sys.executable, "-c", script], cwd=ROOT, env=ENV, capture_output=True, text=True, timeout=timeout
    )
    assert done.returncode == 0, done.stderr[-3000:]
    return done.stdout


def test_help_prints_within_a_second_without_importing_torch():
    script = """
import contextlib, io, json, sys
from hf_seq2seq.cli import VERBS, main
for argv in [["--help"]] + [[verb, "--help"] for verb in VERBS if verb != "train"]:
    with contextlib.redirect_stdout(io.StringIO()) as out:
        try:
            main(argv)
        except SystemExit:
            pass
    assert "usage" in out.getvalue(), argv
print(json.dumps([name for name in ("torch", "transformers") if name in sys.modules]))
"""
    # `train --help` lists Seq2SeqTrainingArguments' flags, so it alone needs transformers (and so torch)
    assert json.loads(run_python(script)) == []
    seconds = []
    for _ in range(3):  # the best of three: the machine is shared
        started = time.perf_counter()
        done = hf_seq2seq("--help", timeout=60)
        seconds.append(time.perf_counter() - started)
        assert done.returncode == 0 and "translate" in done.stdout
    assert min(seconds) < 1.0, seconds


@pytest.mark.parametrize(
    "first_use",
    [
        "from transformers import AutoModelForSeq2SeqLM",
        "from transformers import Seq2SeqTrainer",  # loads the Auto modules halfway through other imports
        "from hf_seq2seq import TransformerMTModel",  # our modeling module loads them halfway through itself
    ],
)
def test_import_is_cheap_and_registers_the_auto_classes_before_they_are_used(first_use):
    script = f"""
import sys
import hf_seq2seq
assert "torch" not in sys.modules and "transformers" not in sys.modules, "import hf_seq2seq imported them"
{first_use}
from transformers import AutoConfig, AutoModel, AutoModelForSeq2SeqLM
from hf_seq2seq import TransformerMTConfig, TransformerMTForConditionalGeneration, TransformerMTModel
sizes = dict(vocab_size=12, d_model=8, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
             decoder_attention_heads=2, encoder_ffn_dim=8, decoder_ffn_dim=8)
config = AutoConfig.for_model("transformer_mt", **sizes)
assert type(config) is TransformerMTConfig
assert type(AutoModel.from_config(config)) is TransformerMTModel
assert type(AutoModelForSeq2SeqLM.from_config(config)) is TransformerMTForConditionalGeneration
assert TransformerMTConfig._auto_class == "AutoConfig"
assert TransformerMTForConditionalGeneration._auto_class == "AutoModelForSeq2SeqLM"
print("OK")
"""
    assert run_python(script).strip() == "OK"


def test_what_the_command_line_copies_to_avoid_torch_matches_its_source():
    from hf_seq2seq import hub
    from hf_seq2seq.benchmark import SIZES
    from hf_seq2seq.cli import _common, export, push
    from hf_seq2seq.export import QUANTIZATIONS
    from hf_seq2seq.inference import PRECISIONS

    assert _common.SIZES == tuple(sorted(SIZES))
    assert _common.PRECISIONS == PRECISIONS
    assert export.QUANTIZATIONS == list(QUANTIZATIONS)
    assert push.DEFAULT_SENTENCE == hub.DEFAULT_SENTENCE

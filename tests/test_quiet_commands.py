"""What a newcomer sees: `hf-seq2seq --help` is quick and imports no torch, `import hf_seq2seq` is cheap and
still registers the Auto classes, and train / translate / evaluate / demo print no warning and no progress bar
that a user cannot act on (captured from the real command in a fresh process)."""

import json
import os
import re
import shutil
import socket
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


FIRST_USES = [
    "from transformers import AutoModelForSeq2SeqLM",
    "from transformers import Seq2SeqTrainer",  # loads the Auto modules halfway through other imports
    "from hf_seq2seq import TransformerMTModel",  # our modeling module loads them halfway through itself
]
REGISTRATION_SCRIPT = """
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


def test_import_is_cheap_and_registers_the_auto_classes_before_they_are_used():
    # each first use in a fresh process; the three side by side, which the machine's cores share
    processes = [
        subprocess.Popen(
            [sys.executable, "-c", REGISTRATION_SCRIPT.format(first_use=first_use)],
            cwd=ROOT,
            env=ENV,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for first_use in FIRST_USES
    ]
    for first_use, process in zip(FIRST_USES, processes, strict=True):
        stdout, stderr = process.communicate(timeout=300)
        assert process.returncode == 0 and stdout.strip() == "OK", (first_use, stderr[-3000:])


def test_the_servers_batching_flags_default_to_its_config():
    from hf_seq2seq.cli import serve
    from hf_seq2seq.serving.config import ServeConfig

    defaults = serve.build_parser().parse_args(["model"])
    assert (defaults.max_wait_ms, defaults.arrival_gap_ms) == (
        ServeConfig.max_wait_ms,
        ServeConfig.arrival_gap_ms,
    )


@pytest.fixture(scope="module")
def model_dir(trained, tmp_path_factory) -> Path:
    """The tiny trained folder with 64 positions, twice its tokenizer's `model_max_length` (32, the longest
    source of training), as in real runs (48 and 255): a 40-token input fits the model, is longer than
    training's sources, and is what made transformers warn."""
    folder = tmp_path_factory.mktemp("quiet") / "model"
    shutil.copytree(trained, folder)
    config = json.loads((folder / "config.json").read_text())
    config["max_position_embeddings"] = 64  # the sinusoidal table is rebuilt at load, not saved
    (folder / "config.json").write_text(json.dumps(config))
    return folder


def test_translate_prints_only_the_translation(model_dir):
    done = hf_seq2seq("translate", str(model_dir), LONG_TEXT, "how are you ?")
    assert done.returncode == 0, done.stderr
    assert len(done.stdout.splitlines()) == 2
    assert done.stderr == ""


def test_evaluate_prints_no_warning(model_dir, tmp_path):
    (tmp_path / "src.en").write_text(f"{' '.join(LONG_TEXT.split()[:40])}\nhow are you ?\n")
    (tmp_path / "ref.fr").write_text("le chat est sur le tapis\ncomment allez vous ?\n")
    done = hf_seq2seq(
        "evaluate", str(model_dir), "--src-file", str(tmp_path / "src.en"),
        "--ref-file", str(tmp_path / "ref.fr"), "--output-dir", str(tmp_path / "eval"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    assert "BLEU" in done.stdout
    assert unwanted(done.stdout + done.stderr) == []


def test_a_training_run_prints_no_warning(synthetic_fra_txt, tmp_path):
    done = hf_seq2seq(
        "train", "--preset", "tiny", "--data_path", str(synthetic_fra_txt), "--output_dir", str(tmp_path / "run"),
        "--max_train_samples", "64", "--max_eval_samples", "8", "--max_test_samples", "8",
        "--per_device_train_batch_size", "16", "--max_steps", "4", "--eval_steps", "4", "--save_steps", "4",
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "test BLEU" in done.stdout
    assert unwanted(done.stdout + done.stderr) == []


def test_the_demo_prints_where_it_serves_and_nothing_else(model_dir):
    pytest.importorskip("gradio")
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    process = subprocess.Popen(
        [sys.executable, "-m", "hf_seq2seq", "demo", str(model_dir), "--port", str(port)],
        cwd=ROOT,
        env=ENV,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        first_line = process.stdout.readline()  # blocks until the server is up (or the process ends)
    finally:
        process.terminate()
        out, err = process.communicate(timeout=60)
    assert f"http://127.0.0.1:{port}" in first_line and "Ctrl+C" in first_line, first_line + out + err
    assert unwanted(first_line + out + err) == []

"""`hf-seq2seq translate` imports only what it uses: translating a sentence loads neither the Trainer (nor
datasets, pandas, sacrebleu behind it) nor the package's training and evaluation layers, so the time to a first
translation is little more than importing torch and transformers and loading the model (docs/formats.md); a
missing input file ends the command with one line, before the model is loaded."""

import json
import os
import subprocess
import sys

import pytest
from helpers import FIXTURES, ROOT, copy_without_pair

from hf_seq2seq.cli import translate as translate_cli
from hf_seq2seq.models.languages import UnknownLanguagePair

HEAVY = [
    "transformers.trainer", "datasets", "pandas", "pyarrow", "sacrebleu", "matplotlib",
    "hf_seq2seq.training", "hf_seq2seq.evaluation", "hf_seq2seq.hub", "hf_seq2seq.serving", "hf_seq2seq.apps",
]  # fmt: skip


def test_translating_a_sentence_imports_no_trainer_training_or_evaluation_module():
    code = (
        "import sys, json\n"
        "from hf_seq2seq.cli import main\n"
        f"main(['translate', {str(FIXTURES / 'folder-6307576')!r}, 'how are you ?'])\n"
        f"print(json.dumps([m for m in {HEAVY!r} if m in sys.modules]))\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT), "HF_HUB_OFFLINE": "1"}
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, env=env, timeout=300)
    assert done.returncode == 0, done.stderr
    translation, loaded = done.stdout.splitlines()
    assert translation == "comment allez vous ?"  # the command did its whole job
    assert json.loads(loaded) == []


def test_a_missing_input_file_ends_the_command_with_one_line_before_the_model_loads(tmp_path):
    missing = tmp_path / "nothing.txt"
    with pytest.raises(SystemExit) as exit_info:
        translate_cli.main([str(tmp_path / "no-model"), "--input-file", str(missing)])
    assert exit_info.value.code == f"hf-seq2seq translate: no such file: {missing}"


def test_a_model_that_records_no_pair_needs_the_texts_language_given(tmp_path):
    """A folder that records no pair (fixtures/folder-6307576 without its en-fr task): the sentence splitter's
    language is never guessed; the command says to give --source-lang, and translates with it."""
    unlabelled = str(copy_without_pair(FIXTURES / "folder-6307576", tmp_path / "model"))
    with pytest.raises(UnknownLanguagePair, match="records no language pair.*give it with --source-lang"):
        translate_cli.main([unlabelled, "how are you ?"])
    assert translate_cli.main([unlabelled, "how are you ?", "--source-lang", "en"]) == [
        "comment allez vous ?"
    ]

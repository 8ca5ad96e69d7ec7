"""`hf-seq2seq translate` imports only what it uses: translating a sentence loads neither the Trainer (nor
datasets, pandas, sacrebleu behind it) nor the package's training and evaluation layers, so the time to a first
translation is little more than importing torch and transformers and loading the model (docs/formats.md)."""

import json
import os
import subprocess
import sys

from helpers import FIXTURES, ROOT

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

"""Folders saved by an earlier release keep working, and folders saved today work for everyone.

`fixtures/folder-6307576` was saved by the last commit before the package moved into its layered layout, with
the tokens that code generated (`fixtures/folder-6307576.tokens.json`, greedy and 4 beams). It must load with
`AutoModelForSeq2SeqLM` both with the package installed (today's classes) and without it (its own shipped
code, `trust_remote_code=True`) and generate exactly those tokens; a folder saved by today's code must load the
same two ways and generate the same tokens both ways.
"""

import ast
import importlib.metadata
import json
import shutil
import sys
from pathlib import Path

import pytest
import torch
from helpers import FIXTURES, MEMORISED_PAIRS, run_without_package
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from hf_seq2seq.models.folder import SHIPPED_MODULES
from hf_seq2seq.models.transformer_mt import modeling_transformer_mt

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

BEFORE_THE_MOVE = FIXTURES / "folder-6307576"
EXPECTED = json.loads((FIXTURES / "folder-6307576.tokens.json").read_text(encoding="utf-8"))
SOURCES = EXPECTED["sources"]
BEAMS = (1, 4)


def generated_tokens(model, tokenizer, sources: list[str], num_beams: int) -> list[list[int]]:
    """Each source's generated ids, padding dropped (the fixture's JSON layout)."""
    batch = tokenizer(sources, padding=True, return_tensors="pt")
    with torch.inference_mode():
        output = model.generate(**batch, num_beams=num_beams)
    return [[i for i in row if i != tokenizer.pad_token_id] for row in output.tolist()]


# a Hub user's process: no package, the folder's own code; prints the tokens as one JSON line
HUB_USER_TOKENS = """
    import json
    from transformers import AutoModelForSeq2SeqLM, AutoTokenizer
    folder, sources = FOLDER, SOURCES
    tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=True)
    model = AutoModelForSeq2SeqLM.from_pretrained(folder, trust_remote_code=True).eval()
    assert type(model).__module__.startswith("transformers_modules"), type(model).__module__
    tokens = {}
    for num_beams in BEAMS:
        batch = tokenizer(sources, padding=True, return_tensors="pt")
        output = model.generate(**batch, num_beams=num_beams)
        tokens[f"beams_{num_beams}"] = [[i for i in row if i != tokenizer.pad_token_id] for row in output.tolist()]
    print(json.dumps(tokens))
"""


def tokens_without_package(folder: Path, tmp_path: Path) -> dict[str, list[list[int]]]:
    body = (
        HUB_USER_TOKENS.replace("FOLDER", repr(str(folder)))
        .replace("SOURCES", repr(SOURCES))
        .replace("BEAMS", repr(BEAMS))
    )
    result = run_without_package(body, tmp_path, HF_HUB_DISABLE_PROGRESS_BARS="1")
    assert result.returncode == 0, result.stdout[-3000:]
    return json.loads(result.stdout.strip().splitlines()[-1])


@pytest.fixture
def before_the_move(tmp_path) -> Path:
    return Path(shutil.copytree(BEFORE_THE_MOVE, tmp_path / BEFORE_THE_MOVE.name))


@pytest.mark.parametrize("num_beams", BEAMS)
def test_a_folder_saved_before_the_move_gives_its_tokens_with_the_package(before_the_move, num_beams):
    tokenizer = AutoTokenizer.from_pretrained(before_the_move)
    model = AutoModelForSeq2SeqLM.from_pretrained(before_the_move).eval()
    assert type(model).__module__ == modeling_transformer_mt.__name__
    assert generated_tokens(model, tokenizer, SOURCES, num_beams) == EXPECTED[f"beams_{num_beams}"]


def test_a_folder_saved_before_the_move_gives_its_tokens_without_the_package(before_the_move, tmp_path):
    tokens = tokens_without_package(before_the_move, tmp_path)
    assert tokens == {f"beams_{n}": EXPECTED[f"beams_{n}"] for n in BEAMS}


def test_a_folder_saved_now_gives_the_same_tokens_with_and_without_the_package(memorising_folder, tmp_path):
    tokenizer = AutoTokenizer.from_pretrained(memorising_folder)
    model = AutoModelForSeq2SeqLM.from_pretrained(memorising_folder).eval()
    assert type(model).__module__ == modeling_transformer_mt.__name__
    # the package version that saved it (`save_model_folder`), a field the shipped code need not know
    config = json.loads((memorising_folder / "config.json").read_text(encoding="utf-8"))
    assert (
        config["hf_seq2seq_version"]
        == model.config.hf_seq2seq_version
        == importlib.metadata.version("hf_seq2seq")
    )
    with_package = {f"beams_{n}": generated_tokens(model, tokenizer, SOURCES, n) for n in BEAMS}
    assert tokens_without_package(memorising_folder, tmp_path) == with_package
    targets = [tokenizer(target)["input_ids"] for _, target in MEMORISED_PAIRS]
    eos = tokenizer.eos_token_id
    for n in BEAMS:  # the memorised sentences come first (their start token, the padding id, left out)
        translated = [row[: row.index(eos) + 1] for row in with_package[f"beams_{n}"][: len(targets)]]
        assert translated == targets


@pytest.mark.parametrize("module", SHIPPED_MODULES, ids=lambda module: module.__name__.rsplit(".", 1)[-1])
def test_a_shipped_file_imports_only_the_standard_library_torch_transformers_and_its_siblings(module):
    """What a Hub user without the package needs to load a folder: nothing beyond torch and transformers."""
    tree = ast.parse(Path(module.__file__).read_text(encoding="utf-8"))
    imported = [alias.name for node in ast.walk(tree) if isinstance(node, ast.Import) for alias in node.names]
    imported += [
        node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom) and not node.level
    ]
    allowed = {"torch", "transformers", *sys.stdlib_module_names}
    assert [name for name in imported if name.split(".")[0] not in allowed] == []

"""README.md is a user's guide whose commands work as written: it stays short, every `hf-seq2seq` command in
its fenced blocks parses with its verb's own parser, the ones that need no training run (translate, evaluate,
export, average) run as written on a tiny model folder standing in for `runs/cpu`, its Python snippets run
on it too, and what the other commands name (files, extras, the torch pin) exists."""

import contextlib
import importlib.util
import io
import re
import shlex
import shutil
import tomllib
from pathlib import Path

import pytest
from helpers import text_pdf

from hf_seq2seq.cli import VERBS, main

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text(encoding="utf-8")
# verbs run as written, in a folder where `runs/cpu` is a tiny model (the others need a training run, a
# server, the Hub, or the real corpus's path)
RUN = ("translate", "evaluate", "export", "average")


def fenced(language: str) -> list[str]:
    return re.findall(rf"^```{language}\n(.*?)^```", README, flags=re.S | re.M)


def commands() -> list[str]:
    """Each shell command of README's bash blocks: continuation lines joined, comments dropped, `&&` chains
    split."""
    found = []
    for block in fenced("bash"):
        for line in block.replace("\\\n", " ").splitlines():
            line = re.split(r"\s#\s", line)[0].strip()
            if line and not line.startswith("#"):
                found += [part.strip() for part in line.split("&&")]
    return found


def hf_seq2seq_argv(command: str) -> list[str] | None:
    """The argv after `hf-seq2seq` of a command that runs the tool (directly, or as `-m hf_seq2seq` under
    torchrun or accelerate), else None."""
    words = shlex.split(command)
    if words[0] == "hf-seq2seq":
        return words[1:]
    if "-m" in words and words[words.index("-m") + 1] == "hf_seq2seq":
        return words[words.index("-m") + 2 :]
    return None


TOOL_COMMANDS = [argv for argv in map(hf_seq2seq_argv, commands()) if argv is not None]


def test_readme_is_a_short_guide_that_links_its_docs():
    assert len(README.splitlines()) <= 300
    assert re.findall(r"\]\((docs/[^)#]+)", README)  # test_links.py checks that each leads to a file
    # CI's test command, as .ci/run runs it
    (command,) = [c for c in commands() if c.startswith("HF_HUB_OFFLINE=1 python -m pytest -q")]
    assert command in (ROOT / ".ci" / "run").read_text(encoding="utf-8")
    assert len(TOOL_COMMANDS) >= 15


@pytest.mark.parametrize("argv", TOOL_COMMANDS, ids=" ".join)
def test_every_command_parses_with_its_verbs_parser(argv):
    verb, rest = argv[0], argv[1:]
    assert verb in VERBS
    if verb == "train":
        from hf_seq2seq.cli.train import parse_args

        parse_args(rest)
        return
    module = __import__(f"hf_seq2seq.cli.{verb.replace('-', '_')}", fromlist=["build_parser"])
    parser = module.build_parser()
    (parser.parse_intermixed_args if verb == "translate" else parser.parse_args)(rest)


def test_other_commands_name_what_exists():
    pyproject = tomllib.loads((ROOT / "pyproject.toml").read_text())
    extras = pyproject["project"]["optional-dependencies"]
    ci = (ROOT / ".ci" / "run").read_text()
    for command in commands():
        words = shlex.split(command)
        if words[:2] == ["pip", "install"] and words[2] != "-e":
            assert f"python -m pip install -q {words[2]}\n" in ci, command  # the same torch pin as CI
        for extra in re.findall(r"\.\[(\w+)\]", command):
            assert extra in extras, command
        if words[0] == "bash":
            assert (ROOT / words[1]).is_file(), command
        if "--config_file" in words:
            assert (ROOT / words[words.index("--config_file") + 1]).is_file(), command


@pytest.fixture(scope="module")
def readme_folder(trained, synthetic_fra_txt, tmp_path_factory) -> Path:
    """A working folder where README's commands find what they name: `runs/cpu` (the tiny trained model, with
    three complete checkpoints), `test.en` / `test.fr`, `talk.srt`, `terms.tsv`, `paper.pdf` where the pdf extra
    is installed (else README's `translate runs/cpu paper.pdf` translates the words "paper.pdf"); the fra-eng
    data is the synthetic corpus."""
    folder = tmp_path_factory.mktemp("readme")
    run = folder / "runs" / "cpu"
    shutil.copytree(trained, run)
    for step in (1, 2, 3):
        shutil.copytree(trained, run / f"checkpoint-{step}")
        (run / f"checkpoint-{step}" / "trainer_state.json").write_text("{}")
    (folder / "test.en").write_text("how are you ?\nthe cat is here .\n")
    (folder / "test.fr").write_text("comment allez vous ?\nle chat est ici .\n")
    (folder / "talk.srt").write_text("1\n00:00:01,000 --> 00:00:02,500\nhow are you ?\n\n")
    (folder / "terms.tsv").write_text("invoice\tfacture\n")
    if all(importlib.util.find_spec(module) for module in ("pikepdf", "pdfminer", "reportlab")):
        (folder / "paper.pdf").write_bytes(text_pdf([["the cat is here ."], ["thank you !"]]))
    return folder


@pytest.fixture
def in_readme_folder(readme_folder, synthetic_fra_txt, monkeypatch) -> Path:
    monkeypatch.chdir(readme_folder)
    monkeypatch.setenv("HF_SEQ2SEQ_FRA_ENG", str(synthetic_fra_txt))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    return readme_folder


def test_the_commands_that_need_no_training_run_run_as_written(in_readme_folder):
    ran = []
    for argv in TOOL_COMMANDS:  # in README order: the export comes before the commands that use it
        if argv[0] not in RUN or "runs/cpu" not in argv and "runs/cpu-ct2" not in argv:
            continue
        if "ctranslate2" in argv:
            pytest.importorskip("ctranslate2")
        with contextlib.redirect_stdout(io.StringIO()):
            status = main(argv)
        assert status == 0, argv
        ran.append(argv[0])
    assert {"translate", "evaluate", "export", "average"} <= set(ran), ran
    assert (in_readme_folder / "runs" / "cpu-avg" / "config.json").is_file()
    if (in_readme_folder / "paper.pdf").is_file():
        assert (in_readme_folder / "paper.fr.pdf").is_file()  # the PDF translated beside it


def test_the_python_snippets_run_on_a_local_folder(in_readme_folder, capsys):
    snippets = fenced("python")
    assert len(snippets) == 2
    for code in snippets:  # the Hub repository of the sharing example is a local folder here
        exec(compile(code.replace("your-name/transformer-en-fr", "runs/cpu"), "README.md", "exec"), {})
    printed = capsys.readouterr().out.splitlines()
    assert printed[0].startswith("[") and printed[1].startswith("[{'translation_text': ")

"""`hf-seq2seq <verb>`: one command, every verb with its help and an example."""

import importlib.metadata
import subprocess
import sys

import pytest

from hf_seq2seq.cli import VERBS, main

pytestmark = pytest.mark.floors  # every verb's --help, without torch, at the floors too


@pytest.mark.parametrize("verb", list(VERBS))
def test_every_verb_has_a_help_with_an_example(verb, capsys):
    with pytest.raises(SystemExit) as exit_info:
        main([verb, "--help"])
    assert exit_info.value.code == 0
    text = capsys.readouterr().out
    assert f"hf-seq2seq {verb}" in text  # the usage line names the command as the user types it
    assert "example" in text.lower()


def test_overview_lists_the_verbs_and_an_unknown_verb_is_refused(capsys):
    assert main(["--help"]) == 0
    overview = capsys.readouterr().out
    assert all(verb in overview for verb in VERBS)
    assert main(["tranlsate"]) == 2
    assert "unknown verb 'tranlsate'" in capsys.readouterr().err


def test_version_prints_the_installed_package_version(capsys):
    """`hf-seq2seq --version`: the version of the installed metadata, which `hf_seq2seq.__version__` holds."""
    import hf_seq2seq

    assert main(["--version"]) == 0
    assert capsys.readouterr().out == f"hf-seq2seq {importlib.metadata.version('hf_seq2seq')}\n"
    assert hf_seq2seq.__version__ == importlib.metadata.version("hf_seq2seq")


def test_the_console_command_and_python_dash_m_run_the_same_tool():
    for command in (["hf-seq2seq"], [sys.executable, "-m", "hf_seq2seq"]):
        done = subprocess.run([*command, "--help"], capture_output=True, text=True, timeout=120)
        assert done.returncode == 0 and "translate" in done.stdout, done.stderr


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["translate", "{dir}", "hello"], "model folder {dir} is missing: config.json"),
        (
            ["translate", "{dir}", "hello", "--engine", "ctranslate2"],
            "{dir} is not a CTranslate2 export",
        ),
        (["translate", "{dir}", "hello", "--engine", "onnxruntime"], "{dir} is not an ONNX export"),
        (["evaluate", "{dir}", "--data-path", "{dir}/fra.txt"], "model folder {dir} is missing: config.json"),
    ],
    ids=["translate-torch", "translate-ctranslate2", "translate-onnxruntime", "evaluate"],
)
def test_a_wrong_folder_ends_the_command_with_one_line_naming_it(argv, message, tmp_path):
    """Not a traceback: `hf-seq2seq VERB: what is wrong`, exit status 1."""
    argv = [arg.replace("{dir}", str(tmp_path)) for arg in argv]
    with pytest.raises(SystemExit) as exit_info:
        main(argv)
    text = str(exit_info.value.code)
    assert text.startswith(f"hf-seq2seq {argv[0]}: ") and message.replace("{dir}", str(tmp_path)) in text

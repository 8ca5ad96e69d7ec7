"""The package's errors share one base, which the command line reports one way."""

import ast
import builtins
from pathlib import Path

import pytest

import hf_seq2seq
from hf_seq2seq.cli import main as cli
from hf_seq2seq.errors import HfSeq2SeqError

PACKAGE = Path(hf_seq2seq.__file__).parent
BUILTIN_ERRORS = {
    name
    for name, value in vars(builtins).items()
    if isinstance(value, type) and issubclass(value, BaseException)
}
# the service's errors answer HTTP requests (status codes, retries), not a command's user
OWN_BASES = ("serving/",)


def error_classes() -> dict[str, tuple[str, list[str]]]:
    """Every exception class the package defines: name -> (its module's path, the names of its bases)."""
    classes = {}
    for path in PACKAGE.rglob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.ClassDef):
                bases = [base.id if isinstance(base, ast.Name) else ast.unparse(base) for base in node.bases]
                classes[node.name] = (str(path.relative_to(PACKAGE)), bases)
    errors = {}
    while True:  # a class is an error if a base is a built-in error or one of the package's errors
        found = {
            name: entry
            for name, entry in classes.items()
            if name not in errors and any(base in BUILTIN_ERRORS or base in errors for base in entry[1])
        }
        if not found:
            return errors
        errors |= found


def test_every_error_of_the_package_derives_from_its_base():
    errors = error_classes()

    def has_base(name: str) -> bool:
        return name == "HfSeq2SeqError" or any(base in errors and has_base(base) for base in errors[name][1])

    outside = {name: path for name, (path, _) in errors.items() if not path.startswith(OWN_BASES)}
    assert {"DataError", "MarkupError", "ExportError", "PairTooLongError", "HubValidationError"} <= set(
        outside
    )
    assert [f"{path}: {name}" for name, path in outside.items() if not has_base(name)] == []


def test_a_verb_that_raises_one_ends_with_one_line_naming_the_verb(monkeypatch):
    """Not a traceback: `hf-seq2seq VERB: message`, exit status 1, whatever the error's class."""
    from hf_seq2seq.cli import web

    def refuse(*args, **kwargs):
        raise HfSeq2SeqError("what is wrong, and what to do")

    monkeypatch.setattr(web, "main", refuse)
    with pytest.raises(SystemExit) as exit_info:
        cli(["web", "anywhere"])
    assert exit_info.value.code == "hf-seq2seq web: what is wrong, and what to do"


def test_a_test_set_named_twice_ends_evaluate_with_one_line(tmp_path):
    with pytest.raises(SystemExit) as exit_info:
        cli(["evaluate", str(tmp_path), "--src-file", "test.en", "--test-set", "tatoeba-test-v2021-08-07"])
    assert (
        exit_info.value.code
        == "hf-seq2seq evaluate: --src-file and --test-set each name a test set: give one"
    )

"""`hf-seq2seq <verb>`: one command, every verb with its help and an example."""

import importlib.metadata
import re
import subprocess
import sys

import pytest
from helpers import needs_pdf_extra, pdf_page_texts, text_pdf

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


# ---- a document named alone (`hf-seq2seq translate MODEL paper.pdf`), written beside it in the target language
PAGES = [["the cat is here .", "how are you ?"], ["thank you !"]]  # what the memorising model knows
TRANSLATED = ["le chat est ici . comment allez vous ?", "merci !"]  # each page's text


@pytest.mark.parametrize("form", ["alone", "input-file"])
def test_a_pdf_without_output_file_is_written_beside_it_in_the_target_language(
    memorising_folder, tmp_path, capsys, form
):
    """`translate MODEL paper.pdf` and `translate MODEL --input-file paper.pdf`: paper.fr.pdf (fr: the model's
    recorded target), the same pages, each paragraph translated; the path written is printed."""
    needs_pdf_extra()
    source = tmp_path / "paper.pdf"
    source.write_bytes(text_pdf(PAGES))
    document = [str(source)] if form == "alone" else ["--input-file", str(source)]
    assert main(["translate", str(memorising_folder), *document]) == 0
    output = tmp_path / "paper.fr.pdf"
    assert capsys.readouterr().out == f"wrote {output}\n"
    assert pdf_page_texts(output.read_bytes()) == TRANSLATED
    assert sorted(path.name for path in tmp_path.iterdir()) == ["paper.fr.pdf", "paper.pdf"]


def test_a_gettext_catalogue_without_output_file_is_written_beside_it(memorising_folder, tmp_path):
    pytest.importorskip("polib")
    source = tmp_path / "messages.po"
    source.write_text('msgid "thank you !"\nmsgstr ""\n', encoding="utf-8")
    assert main(["translate", str(memorising_folder), str(source), "--target-lang", "fr-CA"]) == 0
    assert 'msgstr "merci !"' in (tmp_path / "messages.fr-CA.po").read_text(encoding="utf-8")


def test_an_existing_default_output_is_refused_before_the_model_loads(memorising_folder, tmp_path):
    source, output = tmp_path / "paper.pdf", tmp_path / "paper.fr.pdf"
    source.write_bytes(b"%PDF-1.4 not read")
    output.write_bytes(b"mine")
    message = f"hf-seq2seq translate: {output} exists: give --output-file to write the translation elsewhere"
    for model in (memorising_folder, tmp_path / "no-model"):  # no model loaded: the refusal comes first
        with pytest.raises(SystemExit) as exit_info:
            main(["translate", str(model), str(source), "--target-lang", "fr"])
        assert str(exit_info.value.code).startswith(message) and "\n" not in str(exit_info.value.code)
    with pytest.raises(SystemExit, match=f"^{re.escape(message)}"):
        main(["translate", str(memorising_folder), "--input-file", str(source)])  # fr: the model's
    assert output.read_bytes() == b"mine"


def test_a_name_that_is_no_existing_document_stays_a_sentence(
    memorising_folder, tmp_path, monkeypatch, capsys
):
    """Only an existing file of a format read as a document alone is one: a file name that names none, a bare
    extension, a .txt file (read as texts too) are sentences, copied as written."""
    monkeypatch.chdir(tmp_path)
    (tmp_path / "notes.txt").write_text("the cat is here .\n")
    (tmp_path / "paper.pdf").write_bytes(text_pdf(PAGES))
    for sentence in ("report.pdf", "docx", "notes.txt", "the cat is here ."):
        assert main(["translate", str(memorising_folder), sentence]) == 0
        assert capsys.readouterr().out == ("le chat est ici .\n" if " " in sentence else f"{sentence}\n")
    needs_pdf_extra()
    assert main(["translate", str(memorising_folder), "paper.pdf"]) == 0
    assert capsys.readouterr().out == "wrote paper.fr.pdf\n"
    assert (tmp_path / "paper.fr.pdf").is_file()


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["{dir}/paper.pdf", "how are you ?"], "a document is translated alone: {dir}/paper.pdf is a file"),
        (
            ["{dir}/paper.pdf", "--input-file", "{dir}/b.pdf"],
            "give one document: {dir}/paper.pdf or --input-file",
        ),
        (
            ["{dir}/paper.pdf", "--format", "html"],
            "--format is for texts: a document's format is its extension",
        ),
        (["{dir}/paper.pdf", "--scores"], "--scores is for texts: a document is written with its formatting"),
        (["--input-file", "{dir}/b.docx", "--line-by-line"], "--line-by-line is for plain text: a document"),
        (["--input-file", "{dir}/b.pot", "hello"], "give sentences or a document (a file, or --input-file)"),
    ],
    ids=[
        "with-sentences",
        "with-input-file",
        "as-html",
        "scores",
        "line-by-line",
        "input-file-and-sentences",
    ],
)
def test_a_document_named_alone_takes_the_flags_of_a_document(tmp_path, capsys, flags, message):
    (tmp_path / "paper.pdf").write_bytes(b"%PDF-1.4")
    with pytest.raises(SystemExit) as exit_info:
        main(["translate", str(tmp_path), *(flag.replace("{dir}", str(tmp_path)) for flag in flags)])
    assert exit_info.value.code == 2 and message.replace("{dir}", str(tmp_path)) in capsys.readouterr().err

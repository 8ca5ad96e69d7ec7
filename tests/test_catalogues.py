"""Gettext catalogues (`.po`, `.pot`) as documents (`hf_seq2seq.formats.documents.catalogue`): real catalogues
(tests/fixtures/gettext/) through a tiny random model (whatever it says, even nothing), directly and with `hf-seq2seq translate`, come back
with every untranslated message filled and fuzzy, placeholders and whitespace kept, the rest byte for byte, and
accepted by `msgfmt --check --use-fuzzy`; accelerators, markup, spaces, headers and charsets on
`helpers.WordTranslator`, whose translations are known. The server's `/translate_file` is tested in
tests/test_serve_formats.py."""

import shutil

import pytest
from helpers import GETTEXT, WordTranslator, check_filled_catalogue, msgfmt_check

from hf_seq2seq.cli import translate as translate_cli
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.formats.documents import DocumentError, translate_document_bytes

polib = pytest.importorskip("polib")

LEXICON = {
    "file": "fichier", "open": "ouvrir", "save": "enregistrer", "as": "sous", "exit": "quitter", "the": "le",
    "cat": "chat", "hello": "bonjour", "world": "monde", "is": "est", "here": "ici", "red": "rouge",
    "files": "fichiers", "name": "nom", "view": "vue",
}  # fmt: skip
HEADER = 'msgid ""\nmsgstr ""\n"Content-Type: text/plain; charset=UTF-8\\n"\n"Plural-Forms: nplurals=2; plural=(n > 1);\\n"\n'


@pytest.fixture
def words():
    return WordTranslator(LEXICON)


def translated(translator, catalogue: str, target_lang: str | None = "fr", extension: str = ".po") -> str:
    return translate_document_bytes(
        translator, catalogue.encode("utf-8"), extension, target_lang=target_lang
    ).decode("utf-8")


def msgstr(catalogue: str, msgid: str) -> str:
    return polib.pofile("\n" + catalogue).find(msgid).msgstr


# ---- real catalogues, a tiny model


@pytest.fixture(scope="module")
def model(trained):
    return load_translator(trained, "torch")


@pytest.mark.parametrize("name", ["django_fr.po", "wtforms.pot"])
def test_a_real_catalogue_gets_each_untranslated_message_filled_and_the_rest_kept(model, name, tmp_path):
    source = (GETTEXT / name).read_text(encoding="utf-8")
    out = translated(model, source, extension=name[name.index(".") :])
    filled = check_filled_catalogue(source, out)
    assert filled == {"django_fr.po": 7, "wtforms.pot": 39}[name]
    (tmp_path / "out.po").write_text(out, encoding="utf-8")
    msgfmt_check(tmp_path / "out.po")


def test_the_header_of_a_translated_catalogue_is_kept_byte_for_byte(model):
    source = (GETTEXT / "django_fr.po").read_text(encoding="utf-8")
    header = source[: source.index('"Plural-Forms: nplurals=2; plural=(n > 1);\\n"\n')]
    assert translated(model, source).startswith(header)


def test_a_template_s_header_gains_the_target_s_language_and_plural_forms_and_nothing_else(model):
    source = (GETTEXT / "wtforms.pot").read_text(encoding="utf-8")
    out = translated(model, source, "fr-CA", ".pot")
    end = '"Generated-By: Babel 2.18.0\\n"\n'
    head = source[: source.index(end) + len(end)]
    assert out.startswith(head + '"Language: fr_CA\\n"\n"Plural-Forms: nplurals=2; plural=(n > 1);\\n"\n\n#:')


def test_the_command_line_translates_a_catalogue_into_the_model_s_language(trained, tmp_path):
    source = tmp_path / "wtforms.pot"
    shutil.copy(GETTEXT / "wtforms.pot", source)
    lines = translate_cli.main(
        [str(trained), "--input-file", str(source), "--output-file", str(tmp_path / "fr.pot")]
    )
    assert lines == [f"wrote {tmp_path / 'fr.pot'}"]
    out = (tmp_path / "fr.pot").read_text(encoding="utf-8")
    assert check_filled_catalogue(source.read_text(encoding="utf-8"), out) == 39
    assert '"Language: fr\\n"' in out  # the model folder's target language
    msgfmt_check(tmp_path / "fr.pot")


# ---- what each message keeps, on a translator whose translations are known


def test_an_accelerator_key_goes_back_before_the_same_letter_else_at_the_start(words):
    expected = {
        "_File": "_Fichier",  # the same letter, a word's first
        "&Open": "&Ouvrir",
        "&View": "&Vue",
        "Save &files": "Enregistrer &fichiers",
        "Save _As": "_Enregistrer Sous",  # no A in the translation: before its first letter
        "E&xit": "&Quitter",
        "Cats && dogs": "Cats && dogs",  # && is an ampersand, not a marker
        "my_file": "my_file",  # an identifier's underscore, not a marker
    }
    source = HEADER + "".join(f'\nmsgid "{m}"\nmsgstr ""\n' for m in expected)
    out = translated(words, source)
    assert {m: msgstr(out, m) for m in expected} == expected
    assert {"File", "Open", "Save As", "Exit"} <= set(words.calls[0])  # translated without the marker


def test_spaces_newlines_placeholders_and_markup_are_kept_as_written(words):
    source = HEADER + (
        '\n#, python-format\nmsgid ""\n"  Hello %(name)s.\\n"\n"\\n"\n"\\tThe <b>red</b> cat is here: {0}  \\n"\n'
        'msgstr ""\n\nmsgid "%s: %d%%"\nmsgstr ""\n'
    )
    out = translated(words, source)
    entries = polib.pofile("\n" + out)
    assert entries[0].msgstr == "  Bonjour %(name)s.\n\n\tLe <b>rouge</b> chat est ici: {0}  \n"
    assert entries[1].msgstr == "%s: %d%%"  # nothing to translate: copied
    assert all("fuzzy" in entry.flags for entry in entries)


class Blank(WordTranslator):
    """An engine that answers every sentence with nothing."""

    def translate_sentences(self, sentences, *args, **kwargs):
        return ["" for _ in sentences]


def test_a_message_whose_translation_comes_back_blank_keeps_its_source_and_is_fuzzy(tmp_path):
    source = (
        HEADER
        + '\nmsgid " a\\n"\nmsgstr ""\n\nmsgid "file"\nmsgid_plural "files"\nmsgstr[0] ""\nmsgstr[1] ""\n'
    )
    out = translated(Blank(LEXICON), source)
    entries = polib.pofile("\n" + out)
    assert entries[0].msgstr == " a\n" and entries[1].msgstr_plural == {0: "file", 1: "files"}
    assert all(entry.flags == ["fuzzy"] for entry in entries)
    (tmp_path / "out.po").write_text(out, encoding="utf-8")
    msgfmt_check(tmp_path / "out.po")


def test_translated_obsolete_and_glued_entries_are_kept_and_a_partial_plural_completed(words):
    # wrapped as polib would not write them: written again, they would change
    kept = '#. a comment\nmsgid "cat"\nmsgstr ""\n"mi"\n"nou"\n#~ msgid ""\n#~ "the file"\n#~ msgstr ""\n'
    source = (
        HEADER + "\n" + kept + "\n"
        'msgid "file"\nmsgid_plural "files"\nmsgstr[0] "fichier"\nmsgstr[1] ""\n'
    )  # fmt: skip
    out = translated(words, source)
    assert kept in out
    plural = polib.pofile("\n" + out).find("file")
    assert plural.msgstr_plural == {0: "fichier", 1: "fichiers"} and "fuzzy" in plural.flags


def test_each_plural_form_the_header_declares_is_filled(words, tmp_path):
    source = HEADER.replace("nplurals=2; plural=(n > 1);", "nplurals=3; plural=(n==1 ? 0 : n<5 ? 1 : 2);")
    source += '\nmsgid "file"\nmsgid_plural "files"\nmsgstr[0] ""\nmsgstr[1] ""\n'
    plural = polib.pofile("\n" + translated(words, source, "ru")).find("file")
    assert plural.msgstr_plural == {0: "fichier", 1: "fichiers", 2: "fichiers"}


def test_a_catalogue_without_a_header_gets_one_for_the_target(words, tmp_path):
    out = translated(words, 'msgid "file"\nmsgid_plural "files"\nmsgstr[0] ""\nmsgstr[1] ""\n')
    header = polib.pofile("\n" + out).metadata
    assert header == {
        "Content-Type": "text/plain; charset=UTF-8",
        "Language": "fr",
        "Plural-Forms": "nplurals=2; plural=(n > 1);",
    }
    (tmp_path / "out.po").write_text(out, encoding="utf-8")
    msgfmt_check(tmp_path / "out.po")


def test_a_catalogue_in_its_own_charset_is_read_with_it_and_written_in_utf8(words):
    source = HEADER.replace("UTF-8", "ISO-8859-1") + '\nmsgid "the cat"\nmsgstr ""\n\nmsgid "a"\nmsgstr "é"\n'
    out = translate_document_bytes(words, source.encode("latin-1"), ".po", target_lang="fr").decode("utf-8")
    assert '"Content-Type: text/plain; charset=UTF-8\\n"' in out and 'msgstr "é"' in out
    assert msgstr(out, "the cat") == "le chat"


@pytest.mark.parametrize(
    "data",
    [b'msgid "a"\nmsgstr "b\nmsgid', b"not a catalogue\n", b"/etc/hostname"],
    ids=["unterminated", "text", "a-path"],
)
def test_a_file_that_is_not_a_catalogue_is_refused(words, data):
    with pytest.raises(DocumentError, match=r"not a gettext catalogue \(\.po\)"):
        translate_document_bytes(words, data, ".po")


def test_a_catalogue_s_line_endings_and_byte_order_mark_are_kept(words):
    source = "\ufeff" + HEADER + '\nmsgid "the cat"\nmsgstr ""\n\nmsgid "a"\nmsgstr "b"\n'
    data = source.replace("\n", "\r\n").encode("utf-8")
    out = translate_document_bytes(words, data, ".po", target_lang="fr").decode("utf-8")
    assert out.startswith("\ufeffmsgid") and out.count("\r\n") == out.count("\n")
    assert '\r\n\r\nmsgid "a"\r\nmsgstr "b"\r\n' in out
    assert msgstr(out.lstrip("\ufeff"), "the cat") == "le chat"

"""Software messages to train on: ``software-messages-v1``, the English messages of open-source projects' French
gettext catalogues with their translators' French.

fra.txt is Tatoeba's full sentences: it has no `Settings`, `Paste` or `Log out`, and names a language inside a
sentence, never as a label, so a model trained on it alone answers a label with an invented sentence or a poor
guess (issue 83). These pairs are labels, menu items, buttons, titles and messages. They come with the package
(:data:`SOFTWARE_MESSAGES_DIR`, whose README names each project, wheel, version and licence) and are read as any
corpus is, ``train``/``validation``/``test`` by the split rule of :mod:`hf_seq2seq.data.splits` (``hf-seq2seq train
--dataset fra-eng,software-messages-v1``). They come from other projects than the gettext test sets (Django, Sphinx,
WTForms), and no pair shares a side with those sets, nor with the projects kept apart to choose recipes on
(``measurements/build_software_messages.py`` builds them all).
"""

from __future__ import annotations

from pathlib import Path

from datasets import Dataset, DatasetDict

from hf_seq2seq.data.errors import ColumnError
from hf_seq2seq.data.splits import PAIR_FEATURES, check_fractions, finish_splits
from hf_seq2seq.data.test_sets import FILE_LANGUAGES, package_data_file

SOFTWARE_MESSAGES = "software-messages-v1"
"""The corpus's name, as `--dataset` takes it."""

SHORT_WORDS = 8

SOFTWARE_MESSAGES_SHORT = f"{SOFTWARE_MESSAGES}-short"
"""Its messages of at most :data:`SHORT_WORDS` English words (8,756 of 10,708), as `--dataset` takes them: labels,
menu items, titles and short messages, what fra.txt lacks, in half the corpus's words; the longer messages are
sentences, which fra.txt teaches. The `cpu` presets train on them (docs/recipe.md, "Software messages")."""

SOFTWARE_CORPORA = (SOFTWARE_MESSAGES, SOFTWARE_MESSAGES_SHORT)
"""The names under which `--dataset` reads the corpus."""

SOFTWARE_MESSAGES_DIR = Path(__file__).with_name("software_messages")
"""The folder of its files, its licences and its provenance."""

SOFTWARE_MESSAGES_SHA256 = {  # each file's sha256 in SOFTWARE_MESSAGES_DIR, by language code
    "en": "e29421e61ce92f42bc4bd8371372d9a946234ca2afd5e13fc8b5ff5d8cc7d119",
    "fr": "311d56acb79e7f6f9ade23bae45a81608dc86616f967212885f6d712dc993143",
}


def _lines(lang: str) -> list[str]:
    """The corpus's side in `lang`, one message a line, checked by sha256."""
    path = package_data_file(
        SOFTWARE_MESSAGES_DIR / f"{SOFTWARE_MESSAGES}.{FILE_LANGUAGES[lang]}",
        SOFTWARE_MESSAGES_SHA256[lang],
        f"{SOFTWARE_MESSAGES}'s {lang} file",
        "measurements/build_software_messages.py",
    )
    return path.read_text(encoding="utf-8").splitlines()


def load_software_messages(
    short: bool = False,
    *,
    source_lang: str = "en",
    target_lang: str = "fr",
    validation_fraction: float = 0.01,
    test_fraction: float = 0.01,
) -> DatasetDict:
    """``software-messages-v1`` (`short`: its messages of at most :data:`SHORT_WORDS` English words) as
    ``train``/``validation``/``test``, ``source_lang`` -> ``target_lang`` ("en" and "fr" either way), validation and
    test carved from it by the split rule (trained beside fra-eng, a run takes fra-eng's)."""
    if sorted((source_lang, target_lang)) != sorted(FILE_LANGUAGES):
        raise ColumnError(
            f"{SOFTWARE_MESSAGES} has the languages {tuple(FILE_LANGUAGES)}; got source_lang={source_lang!r}, "
            f"target_lang={target_lang!r}"
        )
    check_fractions(validation_fraction, test_fraction)
    pairs = {lang: _lines(lang) for lang in FILE_LANGUAGES}
    if short:
        kept = [i for i, english in enumerate(pairs["en"]) if len(english.split()) <= SHORT_WORDS]
        pairs = {lang: [lines[i] for i in kept] for lang, lines in pairs.items()}
    train = Dataset.from_dict({"src": pairs[source_lang], "tgt": pairs[target_lang]}, features=PAIR_FEATURES)
    return DatasetDict(finish_splits({"train": train}, validation_fraction, test_fraction))

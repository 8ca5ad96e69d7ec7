"""The standard English-French test sets by name, and training data kept free of them.

:data:`TEST_SETS` are the English-French sets of the OPUS-MT test-set collection (GitHub
``Helsinki-NLP/OPUS-MT-testsets``), pinned at commit :data:`OPUS_MT_TESTSETS_COMMIT`: the Tatoeba Translation
Challenge's test set (on which the OPUS-MT leaderboard compares English-French models), Multi30k's, WMT's news
test sets and TICO-19's. :func:`load_test_set` reads a set's two aligned files (``<name>.eng``, ``<name>.fra``)
from ``$HF_SEQ2SEQ_TEST_SETS`` (a folder holding them, directly or under ``eng-fra/``), else from the user cache
(as :func:`hf_seq2seq.data.fra_eng.default_cache_dir`), downloading them on first use; every file's sha256 is
checked, a local copy's too, so that a score is on the very lines the leaderboard scores (one reference per
line).

:data:`PACKAGED_TEST_SETS` come with the package (:data:`GETTEXT_SETS_DIR`, nothing to download): software
messages and fragments of three words or fewer, English-French, from open-source projects' French gettext
catalogues, built by ``measurements/build_gettext_test_sets.py`` (the folder's README names the projects, their
versions and licences). They are read by name as the others are, and are checked by sha256 too.

:func:`overlap_key` is what two sentences must share to count as the same for :func:`drop_overlap`, which removes
from a corpus every pair whose source or target side occurs in a test set: NFKC, case folded, punctuation
and spacing dropped ("Tom's here." and "toms here" are one sentence).
"""

from __future__ import annotations

import hashlib
import os
import unicodedata
from collections.abc import Sequence
from pathlib import Path

from datasets import Dataset

from hf_seq2seq.data.errors import ChecksumError, DataNotFoundError
from hf_seq2seq.data.fra_eng import default_cache_dir, pinned_file

OPUS_MT_TESTSETS_COMMIT = "ac0f19c0be3cb4e0d9450fcb2d7a9847c4bdd180"
"""The commit of ``Helsinki-NLP/OPUS-MT-testsets`` whose files :data:`TEST_SETS` pins."""

TEST_SET_URL = (
    "https://raw.githubusercontent.com/Helsinki-NLP/OPUS-MT-testsets/{commit}/testsets/eng-fra/{file}"
)

TEST_SETS_ENV = "HF_SEQ2SEQ_TEST_SETS"
"""Environment variable: a folder holding test-set files (``<name>.eng``/``.fra``, or ``eng-fra/<name>.eng``)."""

STANDARD_TEST_SET = "tatoeba-test-v2021-08-07"
"""The set English-French models are compared on (the OPUS-MT leaderboard's), and the one kept out of fra-eng."""

FILE_LANGUAGES = {"en": "eng", "fr": "fra"}
"""The collection's file suffix of each language code."""


TEST_SETS: dict[str, dict[str, str]] = {  # each file's sha256 at OPUS_MT_TESTSETS_COMMIT, by language code
    "tatoeba-test-v2021-08-07": {
        "en": "714a848bd6ab4421cafd1b9b09fd26328306fab1bc8006e820fa77a8cbe57636",
        "fr": "095313ff04016e5ddeff7557d1c5590f19724d239e424cab313b2d03ca66d365",
    },
    "multi30k_test_2016_flickr": {
        "en": "399a4382932c1aadd3ceb9bef1008d388a64c76d4ae4e9d4728c6f4301cac182",
        "fr": "cb3160d69b002bb638e66cc7612fcd56cb0af82eadc9c142dedc438afb885ef6",
    },
    "multi30k_test_2017_flickr": {
        "en": "ce1450ddc5ab0834502579d77a170849952e15a2938b34cc503bdc25ebb4fb98",
        "fr": "6f3764e31dac41e9455e612958bcfd4e877c5e15cd66df2c2b2be6d9bd83e5b6",
    },
    "multi30k_test_2017_mscoco": {
        "en": "43051fdfa86fd5395182e718a94ca67b1b227b9f7c79596ff0f6b813216981d2",
        "fr": "39cde3f43f32b0a6bf29ce4917a46329ff32e53070c2fac87506695a740ae0a0",
    },
    "multi30k_test_2018_flickr": {
        "en": "4e585c2dd525911a6ea7730e9d0b516239af3f1b1ffae6a2130223cfb639f25e",
        "fr": "234b4a887da0da4801a3e2c6f21336231ff7dd46daeb80cfa1b551c8bbb78239",
    },
    "newstest2009": {
        "en": "3fc92718e7b994ca0a5dc57e63b68d5c80244a56e5bb1cec11d2e8dd10b3ff3c",
        "fr": "0ca4995d1dff341488287e1f9d4230073a20bc6e43e268ebf5e7b476f526c07d",
    },
    "newstest2010": {
        "en": "1ebece77e333965cbc66fde735a6f17e026b4d6690f4f7fdaba839b7bdadac3b",
        "fr": "131ee7deb0ea517bdd6a85ca5f6f5ca3136c5f76daba426ef4dde3d60b9e66a9",
    },
    "newstest2011": {
        "en": "d387569743c0fa9097df4d4e2c1dd9e6ba9ef3cee6e0f473da3204c887dcf8fd",
        "fr": "9631ea545acf4b921add6baba856b03efae9f0de4c330a314091b3f925506c7f",
    },
    "newstest2012": {
        "en": "f9e51f85c4948033fc7d77ef427f4d88908a8dd3f778970f62d0baafac3ff97e",
        "fr": "29aa5aff172127f6adf5625cc2f8e44f579d524700e84f1ec0eb14f4f19719e4",
    },
    "newstest2013": {
        "en": "ace268a1d9724ca76f6d8e5c720ffdc08f01bdce45630ed8b269dc7918e1c16e",
        "fr": "909b63be5df3eb8c13e1d5967bf3f0adfdb9f6ed5e638c5bffff563ee2ff7f41",
    },
    "newstest2014": {
        "en": "9a12cb6e8efb3509ebede627e4a9c83ee64935509d561ff70f4b7bd5f93f6096",
        "fr": "2bd07dc204f965bf88e90adb6223a8cb850f9bf9840df6af1f4945195936656e",
    },
    "tico19-test": {
        "en": "d26d42b38d0c1c05f33834651eea4b884bf2da447f45c7ead8a6dbfea8ae30de",
        "fr": "75c69f626f8ab1d14fb881ac2c5e87902da20658923b17c6151e81e439253a7a",
    },
}


GETTEXT_SETS_DIR = Path(__file__).with_name("gettext_sets")
"""The folder of the test sets that come with the package (its README says where they come from)."""

PACKAGED_TEST_SETS: dict[str, dict[str, str]] = {  # each file's sha256 in GETTEXT_SETS_DIR, by language code
    "gettext-fragments-v1": {
        "en": "41d321579058f47693a986ce9c94b75b8f810ca74a8e45fb4449044a51f2ef83",
        "fr": "42d25a975868776c96fcc8e6c73963870bbdeee4116f13c9178bd4a07d90bb42",
    },
    "gettext-messages-v1": {
        "en": "30c5592bcee22f2f599d6a97befaa37da213e82f975a95e711bfb681038bc4f9",
        "fr": "d0cd40b64d90486a4c84a40918ad1652d4cc01ade8d94f344e2d04a524c95214",
    },
}
"""The test sets in :data:`GETTEXT_SETS_DIR`: English software messages with their projects' own French
translations (``-messages-``: one line each) and those of three words or fewer without placeholders or markup
(``-fragments-``)."""


def _how_to_supply(name: str) -> str:
    return (
        f"Set ${TEST_SETS_ENV} to a folder holding {name}.eng and {name}.fra (of {OPUS_MT_TESTSETS_COMMIT[:12]}); "
        f"without it they are downloaded into {default_cache_dir()}."
    )


def package_data_file(path: Path, sha256: str, what: str, builder: str) -> Path:
    """`path`, a data file that comes with the package, checked by its pinned `sha256`; an error names it as `what`
    and the script that rebuilds it (`builder`)."""
    if not path.is_file():
        raise DataNotFoundError(
            f"{path} is missing: this install of hf_seq2seq lacks its package data; reinstall it"
        )
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    if actual != sha256:
        raise ChecksumError(
            f"{path} is not {what} as the package pins it: sha256 {actual}, expected {sha256}. Reinstall the "
            f"package ({builder} rebuilds it)."
        )
    return path


def _packaged_file(name: str, lang: str, path: Path) -> Path:
    """`path`, the file of a set of :data:`PACKAGED_TEST_SETS`, checked by sha256."""
    return package_data_file(
        path,
        PACKAGED_TEST_SETS[name][lang],
        f"{name}'s {lang} file",
        "measurements/build_gettext_test_sets.py",
    )


def test_set_file(name: str, lang: str, cache_dir: str | os.PathLike[str] | None = None) -> Path:
    """The checked file of test set `name` in language `lang` ("en", "fr"): a set of :data:`PACKAGED_TEST_SETS`
    from the package, any other from ``$HF_SEQ2SEQ_TEST_SETS``, else the cache, downloading it on first use. Raises :class:`ChecksumError` for a file that is not the pinned
    one, :class:`DataNotFoundError` for a folder that lacks it, :class:`DownloadError` when it cannot come."""
    if name not in TEST_SETS and name not in PACKAGED_TEST_SETS:
        raise DataNotFoundError(
            f"unknown test set {name!r}; the standard ones: {', '.join(TEST_SETS)}; "
            f"with the package: {', '.join(PACKAGED_TEST_SETS)}"
        )
    if lang not in FILE_LANGUAGES:
        raise DataNotFoundError(f"the test sets are English-French: no {lang!r} side")
    file_name = f"{name}.{FILE_LANGUAGES[lang]}"
    if name in PACKAGED_TEST_SETS:
        return _packaged_file(name, lang, GETTEXT_SETS_DIR / file_name)
    local = None
    if os.environ.get(TEST_SETS_ENV):
        folder = Path(os.environ[TEST_SETS_ENV]).expanduser()
        local = next((p for p in (folder / file_name, folder / "eng-fra" / file_name) if p.is_file()), None)
        if local is None:
            raise DataNotFoundError(
                f"{file_name} is not in {folder} (${TEST_SETS_ENV}). {_how_to_supply(name)}"
            )
    return pinned_file(
        local,
        Path(cache_dir or default_cache_dir())
        / f"opus-mt-testsets-{OPUS_MT_TESTSETS_COMMIT[:12]}"
        / file_name,
        TEST_SET_URL.format(commit=OPUS_MT_TESTSETS_COMMIT, file=file_name),
        TEST_SETS[name][lang],
        f"{name}'s {lang} file of {OPUS_MT_TESTSETS_COMMIT[:12]}",
        _how_to_supply(name),
    )


def load_test_set(
    name: str,
    source_lang: str = "en",
    target_lang: str = "fr",
    cache_dir: str | os.PathLike[str] | None = None,
) -> tuple[list[str], list[str]]:
    """`(sources, references)` of test set `name` (of :data:`TEST_SETS` or :data:`PACKAGED_TEST_SETS`), line by
    line (one reference each, as the leaderboard scores: a source that comes with several translations comes as
    several lines)."""
    sources, references = (
        test_set_file(name, lang, cache_dir).read_text(encoding="utf-8").removesuffix("\n").split("\n")
        for lang in (source_lang, target_lang)
    )
    return sources, references  # aligned: the files' checksums are the pinned ones


def overlap_key(text: str) -> str:
    """What two sentences share when they are the same sentence for :func:`drop_overlap`: their letters and
    digits, NFKC and case folded, without punctuation (Unicode's P categories) or spacing."""
    text = unicodedata.normalize("NFKC", text).casefold()
    return "".join(c for c in text if not c.isspace() and not unicodedata.category(c).startswith("P"))


def excluded_sentences(names_or_files: Sequence[str], languages: tuple[str, str]) -> frozenset[str]:
    """The :func:`overlap_key` of every sentence to keep out of training: both sides (in `languages`) of each name
    of :data:`TEST_SETS` or :data:`PACKAGED_TEST_SETS`, every line of each other entry, a text file of one sentence a line (either language)."""
    lines = []
    for entry in names_or_files:
        if entry in TEST_SETS or entry in PACKAGED_TEST_SETS:
            sources, references = load_test_set(entry, *languages)
            lines += sources + references
        elif Path(entry).is_file():
            lines += Path(entry).read_text(encoding="utf-8").splitlines()
        else:
            raise DataNotFoundError(
                f"--exclude_test_sets {entry!r} is neither a standard test set "
                f"({', '.join([*TEST_SETS, *PACKAGED_TEST_SETS])}) nor a file"
            )
    return frozenset(overlap_key(line) for line in lines) - {""}


def shares_a_side(row: dict, keys: frozenset[str]) -> bool:
    """Whether the source of a row (``src``/``tgt``; an evaluation split's ``references`` too) or one of its
    targets has its :func:`overlap_key` in `keys`."""
    targets = row["references"] if "references" in row else [row["tgt"]]
    return any(overlap_key(text) in keys for text in (row["src"], *targets))


def drop_overlap(dataset: Dataset, keys: frozenset[str]) -> tuple[Dataset, int]:
    """`dataset` without the rows that share a side with `keys` (:func:`shares_a_side`), and how many went."""
    kept = dataset.filter(lambda row: not shares_a_side(row, keys), desc="Keeping test sets out")
    return kept, len(dataset) - len(kept)

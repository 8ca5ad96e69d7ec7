"""Tests for hf_seq2seq.data (fra_eng, splits, loaders): parsing, the hash split, grouping, downloads, errors."""

import os

os.environ["HF_HUB_OFFLINE"] = "1"  # before datasets is imported: nothing may touch the Hub

import functools  # noqa: E402
import hashlib  # noqa: E402
import json  # noqa: E402
import random  # noqa: E402
import zipfile  # noqa: E402
from pathlib import Path  # noqa: E402

import pytest  # noqa: E402
from datasets import DatasetDict, IterableDataset, IterableDatasetDict  # noqa: E402
from helpers import FRA_TXT as REAL_FRA_TXT  # noqa: E402

from hf_seq2seq.data.errors import (  # noqa: E402
    ChecksumError,
    ColumnError,
    DataFormatError,
    DataNotFoundError,
    DownloadError,
)
from hf_seq2seq.data.fra_eng import (  # noqa: E402
    FRA_ENG_ENV,
    FRA_ENG_SHA1,
    default_cache_dir,
    download_fra_eng,
    load_fra_eng,
    read_pairs,
)
from hf_seq2seq.data.loaders import load_translation_dataset, to_pairs  # noqa: E402
from hf_seq2seq.data.splits import EVAL_FEATURES, PAIR_FEATURES, assign_split, group_references  # noqa: E402

pytestmark = pytest.mark.floors  # datasets at its floor

# English, French; the comments give each side's split under the default 1% / 1% rule.
PAIRS = [
    ("Go.", "Va !"),  # train, train
    ("Hi.", "Salut !"),  # train, train
    ("Run!", "Cours\u202f!"),  # train, train
    ("Run!", "Courez\u202f!"),  # train, train
    ("Who?", "Qui ?"),  # train, train
    ("Thanks.", "Merci !"),  # validation, train
    ("Drop it!", "Laisse tomber !"),  # validation, train
    ("Drop it!", "Laissez tomber !"),  # validation, train
    ("I am fat.", "Je suis gras."),  # test, train
    ("Let me go!", "Laisse-moi partir\u202f!"),  # test, train
    ("Let me go!", "Lâche-moi !"),  # test, train
    ("Of course.", "Bien sûr."),  # test, train
    ("Of course.", "Pour sûr."),  # test, train
    ("I stink.", "Je pue."),  # train, test
    ("Come!", "Viens !"),  # train, validation
    ("Come here!", "Viens\u202f!"),  # train, validation (same key as "Viens !")
    ("Come on!", "Viens !"),  # train, validation
]


def write_tsv(path: Path, pairs: list[tuple[str, str]] = PAIRS) -> Path:
    path.write_text("".join(f"{en}\t{fr}\n" for en, fr in pairs), encoding="utf-8")
    return path


def write_zip(path: Path, pairs: list[tuple[str, str]] = PAIRS) -> Path:
    with zipfile.ZipFile(path, "w") as archive:
        archive.writestr("fra-eng/fra.txt", "".join(f"{en}\t{fr}\n" for en, fr in pairs))
        archive.writestr("fra-eng/_about.txt", "about")
    return path


def write_jsonl(path: Path, pairs: list[tuple[str, str]] = PAIRS) -> Path:
    rows = [{"id": i, "translation": {"en": en, "fr": fr}} for i, (en, fr) in enumerate(pairs)]
    path.write_text("".join(json.dumps(row, ensure_ascii=False) + "\n" for row in rows), encoding="utf-8")
    return path


@pytest.fixture
def fra_txt(tmp_path: Path) -> Path:
    return write_tsv(tmp_path / "fra.txt")


@pytest.fixture(autouse=True)
def _isolated_env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No test sees the user's fra-eng setting or cache."""
    monkeypatch.delenv(FRA_ENG_ENV, raising=False)
    monkeypatch.setenv("HF_SEQ2SEQ_CACHE", str(tmp_path / "cache"))


def as_rows(split) -> list[dict]:
    return [dict(row) for row in split]


# --- the split rule -------------------------------------------------------------------------------


def test_assign_split_is_pinned() -> None:
    """Hard-coded assignments: a change of hash, key or thresholds fails here."""
    assert [assign_split(s) for s in ("Go.", "Hi.", "Run!", "Who?")] == ["train"] * 4
    assert [assign_split(s) for s in ("Thanks.", "Drop it!", "We lost.")] == ["validation"] * 3
    assert [assign_split(s) for s in ("I am fat.", "Let me go!", "Of course.")] == ["test"] * 3
    assert assign_split("Je pue.") == "test"
    assert assign_split("Viens !") == "validation"


def test_assign_split_key_ignores_space_variants() -> None:
    assert (
        assign_split("Viens\u202f!")
        == assign_split("Viens\xa0!")
        == assign_split(" Viens  ! ")
        == "validation"
    )


def test_assign_split_fractions() -> None:
    sentences = [f"Sentence number {i}." for i in range(2000)]
    assert {assign_split(s, 0.0, 0.0) for s in sentences} == {"train"}
    counts = {
        name: sum(assign_split(s, 0.2, 0.3) == name for s in sentences) for name in ("validation", "test")
    }
    assert 300 < counts["validation"] < 500 and 500 < counts["test"] < 700
    # Test membership does not depend on the validation fraction.
    assert [assign_split(s, 0.0, 0.3) == "test" for s in sentences] == [
        assign_split(s, 0.2, 0.3) == "test" for s in sentences
    ]


# --- fra-eng --------------------------------------------------------------------------------------


def test_load_fra_eng_counts_and_grouping(fra_txt: Path) -> None:
    ds = load_fra_eng(fra_txt)
    assert isinstance(ds, DatasetDict) and list(ds) == ["train", "validation", "test"]
    assert ds["train"].features == PAIR_FEATURES
    assert ds["validation"].features == ds["test"].features == EVAL_FEATURES
    assert ds["train"]["src"] == [
        "Go.",
        "Hi.",
        "Run!",
        "Run!",
        "Who?",
        "I stink.",
        "Come!",
        "Come here!",
        "Come on!",
    ]
    assert ds["train"]["tgt"][2:4] == ["Cours\u202f!", "Courez\u202f!"]  # text is not normalised
    assert as_rows(ds["validation"]) == [
        {"src": "Thanks.", "tgt": "Merci !", "references": ["Merci !"]},
        {"src": "Drop it!", "tgt": "Laisse tomber !", "references": ["Laisse tomber !", "Laissez tomber !"]},
    ]
    assert as_rows(ds["test"]) == [
        {"src": "I am fat.", "tgt": "Je suis gras.", "references": ["Je suis gras."]},
        {
            "src": "Let me go!",
            "tgt": "Laisse-moi partir\u202f!",
            "references": ["Laisse-moi partir\u202f!", "Lâche-moi !"],
        },
        {"src": "Of course.", "tgt": "Bien sûr.", "references": ["Bien sûr.", "Pour sûr."]},
    ]


def test_fra_eng_split_is_order_independent_and_leak_free(tmp_path: Path) -> None:
    shuffled = PAIRS[:]
    random.Random(0).shuffle(shuffled)
    first = load_fra_eng(write_tsv(tmp_path / "a.txt"))
    second = load_fra_eng(write_tsv(tmp_path / "b.txt", shuffled))
    for name in first:
        assert set(first[name]["src"]) == set(second[name]["src"])
    sources = [set(first[name]["src"]) for name in first]
    assert not (sources[0] & sources[1] or sources[0] & sources[2] or sources[1] & sources[2])


def test_fra_eng_french_to_english_groups_by_french(fra_txt: Path) -> None:
    ds = load_fra_eng(fra_txt, source_lang="fr", target_lang="en")
    assert ds["train"].num_rows == 13 and ds["train"][0] == {"src": "Va !", "tgt": "Go."}
    # "Viens !" and "Viens\u202f!" are one source: grouped, in file order.
    assert as_rows(ds["validation"]) == [
        {"src": "Viens !", "tgt": "Come!", "references": ["Come!", "Come here!", "Come on!"]}
    ]
    assert as_rows(ds["test"]) == [{"src": "Je pue.", "tgt": "I stink.", "references": ["I stink."]}]


def test_fra_eng_fractions_change_sizes(fra_txt: Path) -> None:
    ds = load_fra_eng(fra_txt, validation_fraction=0.0, test_fraction=0.0)
    assert (ds["train"].num_rows, ds["validation"].num_rows, ds["test"].num_rows) == (len(PAIRS), 0, 0)
    with pytest.raises(ValueError, match="sum to less than 1"):
        load_fra_eng(fra_txt, validation_fraction=0.5, test_fraction=0.5)


def test_fra_eng_from_zip_folder_and_env(
    tmp_path: Path, fra_txt: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = load_fra_eng(fra_txt)
    from_zip = load_fra_eng(write_zip(tmp_path / "fra-eng.zip"))
    from_folder = load_fra_eng(tmp_path)  # a folder holding fra.txt
    monkeypatch.setenv(FRA_ENG_ENV, str(fra_txt))
    from_env = load_fra_eng()
    for ds in (from_zip, from_folder, from_env):
        assert {name: as_rows(ds[name]) for name in ds} == {
            name: as_rows(expected[name]) for name in expected
        }
    assert not (tmp_path / "cache").exists()  # a local copy never touches the cache


def test_read_pairs_accepts_crlf_and_bom(tmp_path: Path) -> None:
    path = tmp_path / "crlf.txt"
    path.write_bytes("\ufeffGo.\tVa !\r\nHi.\tSalut !\r\n".encode())
    assert read_pairs(path) == [("Go.", "Va !"), ("Hi.", "Salut !")]


@pytest.mark.parametrize(
    ("content", "message"),
    [
        ("Go.\tVa !\nHi. Salut !\n", r"bad\.txt, line 2: expected exactly one tab .* found 0"),
        ("Go.\tVa !\nHi.\tSalut !\tCC-BY\n", r"bad\.txt, line 2: expected exactly one tab .* found 2"),
        ("Go.\tVa !\n\nHi.\tSalut !\n", r"bad\.txt, line 2: expected exactly one tab"),
        ("Go.\t \n", r"bad\.txt, line 1: empty sentence"),
        ("", r"bad\.txt is empty"),
    ],
)
def test_bad_files_are_rejected(tmp_path: Path, content: str, message: str) -> None:
    path = tmp_path / "bad.txt"
    path.write_text(content, encoding="utf-8")
    with pytest.raises(DataFormatError, match=message):
        load_fra_eng(path)


def test_not_utf8_and_bad_zips(tmp_path: Path) -> None:
    latin1 = tmp_path / "latin1.txt"
    latin1.write_bytes("Go.\tVa à\n".encode("latin-1"))
    with pytest.raises(DataFormatError, match="not UTF-8"):
        read_pairs(latin1)
    no_member = tmp_path / "other.zip"
    with zipfile.ZipFile(no_member, "w") as archive:
        archive.writestr("deu.txt", "Go.\tGeh.\n")
    with pytest.raises(DataFormatError, match="exactly one fra.txt"):
        load_fra_eng(no_member)


def test_missing_path_names_path_argument_and_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    missing = tmp_path / "nowhere" / "fra.txt"
    with pytest.raises(DataNotFoundError) as info:
        load_fra_eng(missing)
    assert str(missing) in str(info.value) and "path=" in str(info.value) and FRA_ENG_ENV in str(info.value)
    assert isinstance(info.value, FileNotFoundError)
    monkeypatch.setenv(FRA_ENG_ENV, str(missing))
    with pytest.raises(DataNotFoundError, match=f"from \\${FRA_ENG_ENV}"):
        load_fra_eng()


def test_fra_eng_rejects_other_languages(fra_txt: Path) -> None:
    with pytest.raises(ColumnError, match="'de'"):
        load_fra_eng(fra_txt, source_lang="de")
    with pytest.raises(ColumnError):
        load_fra_eng(fra_txt, source_lang="en", target_lang="en")


# --- download and cache ---------------------------------------------------------------------------


def sha1_of(path: Path) -> str:
    return hashlib.sha1(path.read_bytes()).hexdigest()


def test_default_cache_dir(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    assert default_cache_dir() == tmp_path / "cache"
    monkeypatch.delenv("HF_SEQ2SEQ_CACHE")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert default_cache_dir() == tmp_path / "xdg" / "hf_seq2seq"


def test_download_verifies_caches_and_extracts_once(tmp_path: Path) -> None:
    served = write_zip(tmp_path / "served.zip")
    cache = tmp_path / "dl-cache"
    path = download_fra_eng(cache, url=served.as_uri(), sha1=sha1_of(served))
    assert path.read_text(encoding="utf-8").startswith("Go.\tVa !\n")
    assert path.parent.parent == cache
    assert sorted(p.name for p in path.parent.iterdir()) == ["fra-eng.zip", "fra.txt"]
    served.unlink()  # a second call must not download again
    assert download_fra_eng(cache, url=served.as_uri(), sha1=sha1_of(path.parent / "fra-eng.zip")) == path


def test_download_checksum_mismatch_leaves_nothing(tmp_path: Path) -> None:
    served = write_zip(tmp_path / "served.zip")
    cache = tmp_path / "dl-cache"
    with pytest.raises(ChecksumError, match=f"expected sha1 {FRA_ENG_SHA1}, got {sha1_of(served)}"):
        download_fra_eng(cache, url=served.as_uri())
    assert [p for p in cache.rglob("*") if p.is_file()] == []


def test_download_failure_is_clear(tmp_path: Path) -> None:
    missing = (tmp_path / "missing.zip").as_uri()
    with pytest.raises(DownloadError, match=f"Could not download {missing}.*{FRA_ENG_ENV}"):
        download_fra_eng(tmp_path / "dl-cache", url=missing)
    assert [p for p in (tmp_path / "dl-cache").rglob("*") if p.is_file()] == []


def test_load_fra_eng_downloads_into_user_cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    served = write_zip(tmp_path / "served.zip")
    patched = functools.partial(download_fra_eng, url=served.as_uri(), sha1=sha1_of(served))
    monkeypatch.setattr("hf_seq2seq.data.fra_eng.download_fra_eng", patched)
    ds = load_fra_eng()
    assert ds["train"].num_rows == 9 and ds["test"].num_rows == 3
    assert (tmp_path / "cache" / f"fra-eng-{sha1_of(served)[:12]}" / "fra.txt").is_file()


# --- other datasets -------------------------------------------------------------------------------


def test_jsonl_translation_column_is_split_like_fra_eng(tmp_path: Path, fra_txt: Path) -> None:
    ds = load_translation_dataset(write_jsonl(tmp_path / "pairs.jsonl"), cache_dir=str(tmp_path / "hf"))
    expected = load_fra_eng(fra_txt)
    assert isinstance(ds, DatasetDict)
    for name in expected:
        assert ds[name].features == expected[name].features
        assert as_rows(ds[name]) == as_rows(expected[name])


def test_single_split_becomes_train(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "pairs.jsonl")
    ds = load_translation_dataset(path, split="train[:9]", cache_dir=str(tmp_path / "hf"))
    assert ds["train"].num_rows == 5
    assert (ds["validation"]["src"], ds["test"]["src"]) == (["Thanks.", "Drop it!"], ["I am fat."])


def test_jsonl_french_to_english(tmp_path: Path, fra_txt: Path) -> None:
    ds = load_translation_dataset(
        write_jsonl(tmp_path / "pairs.jsonl"),
        source_lang="fr",
        target_lang="en",
        cache_dir=str(tmp_path / "hf"),
    )
    expected = load_fra_eng(fra_txt, source_lang="fr", target_lang="en")
    assert {name: as_rows(ds[name]) for name in ds} == {name: as_rows(expected[name]) for name in expected}


@pytest.mark.releases  # at the oldest releases too
def test_streaming_matches_in_memory(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "pairs.jsonl")
    in_memory = load_translation_dataset(path, cache_dir=str(tmp_path / "hf"))
    streamed = load_translation_dataset(path, streaming=True)
    assert isinstance(streamed, IterableDatasetDict) and list(streamed) == ["train", "validation", "test"]
    for name in in_memory:
        assert as_rows(streamed[name]) == as_rows(in_memory[name])


def test_csv_language_columns_and_blank_rows(tmp_path: Path) -> None:
    path = tmp_path / "pairs.csv"
    path.write_text(
        'fr,en,note\nVa !,Go.,x\n"Bien sûr.",Of course.,y\n,Hi.,z\nPour sûr.,Of course.,w\n', encoding="utf-8"
    )
    ds = load_translation_dataset(path, cache_dir=str(tmp_path / "hf"))
    assert as_rows(ds["train"]) == [{"src": "Go.", "tgt": "Va !"}]  # the row without French is dropped
    assert as_rows(ds["test"]) == [
        {"src": "Of course.", "tgt": "Bien sûr.", "references": ["Bien sûr.", "Pour sûr."]}
    ]


def test_tsv_with_named_columns(tmp_path: Path) -> None:
    path = tmp_path / "pairs.tsv"
    path.write_text("english\tfrench\n" + "".join(f"{en}\t{fr}\n" for en, fr in PAIRS), encoding="utf-8")
    ds = load_translation_dataset(
        path, source_column="french", target_column="english", cache_dir=str(tmp_path / "hf")
    )
    assert ds["test"]["src"] == ["Je pue."] and ds["validation"]["references"] == [
        ["Come!", "Come here!", "Come on!"]
    ]


def test_existing_splits_are_kept(tmp_path: Path) -> None:
    train = write_jsonl(tmp_path / "train.jsonl", PAIRS[:14])
    given_test = write_jsonl(tmp_path / "test.jsonl", [("Hello.", "Bonjour."), ("Hello.", "Salut.")])
    ds = load_translation_dataset(
        "json", data_files={"train": str(train), "test": str(given_test)}, cache_dir=str(tmp_path / "hf")
    )
    assert as_rows(ds["test"]) == [{"src": "Hello.", "tgt": "Bonjour.", "references": ["Bonjour.", "Salut."]}]
    assert ds["validation"]["src"] == ["Thanks.", "Drop it!"]  # carved from train by hash
    # With the test split given, test-bucket sentences stay in train.
    assert ds["train"]["src"].count("Of course.") == 2 and "Thanks." not in ds["train"]["src"]


def test_unknown_columns_and_languages(tmp_path: Path) -> None:
    path = write_jsonl(tmp_path / "pairs.jsonl")
    cache = str(tmp_path / "hf")
    with pytest.raises(ColumnError, match=r"languages \['en', 'fr'\], not \['de'\]"):
        load_translation_dataset(path, source_lang="de", cache_dir=cache)
    with pytest.raises(ColumnError, match="unknown: \\['english'\\]"):
        load_translation_dataset(path, source_column="english", target_column="translation", cache_dir=cache)
    csv = tmp_path / "pairs.csv"
    csv.write_text("a,b\nGo.,Va !\n", encoding="utf-8")
    with pytest.raises(ColumnError, match=r"Cannot find 'en'->'fr' text in the columns \['a', 'b'\]"):
        load_translation_dataset(csv, cache_dir=cache)


def test_unsupported_and_missing_files(tmp_path: Path, fra_txt: Path) -> None:
    with pytest.raises(DataFormatError, match="load_fra_eng"):
        load_translation_dataset(fra_txt)
    with pytest.raises(DataNotFoundError, match="missing.jsonl"):
        load_translation_dataset(tmp_path / "missing.jsonl")


def test_group_references_on_stream_without_known_columns(tmp_path: Path) -> None:
    """A stream whose schema is unknown until read still normalises and groups."""

    def rows():
        yield from ({"translation": {"en": en, "fr": fr}} for en, fr in PAIRS[9:13])

    stream = to_pairs(IterableDataset.from_generator(rows), "en", "fr", None, None)
    assert as_rows(group_references(stream)) == [
        {
            "src": "Let me go!",
            "tgt": "Laisse-moi partir\u202f!",
            "references": ["Laisse-moi partir\u202f!", "Lâche-moi !"],
        },
        {"src": "Of course.", "tgt": "Bien sûr.", "references": ["Bien sûr.", "Pour sûr."]},
    ]


# --- the real file --------------------------------------------------------------------------------


@pytest.mark.skipif(not REAL_FRA_TXT.is_file(), reason=f"the fra-eng copy is not at {REAL_FRA_TXT}")
def test_real_fra_eng_split() -> None:
    ds = load_fra_eng(REAL_FRA_TXT)
    columns = {name: ds[name][:] for name in ds}  # plain lists: much faster than Column iteration
    sizes = {name: (len(columns[name]["src"]), len(set(columns[name]["src"]))) for name in ds}
    assert sizes == {"train": (163659, 114467), "validation": (1171, 1171), "test": (1192, 1192)}
    assert [sum(map(len, columns[name]["references"])) for name in ("validation", "test")] == [1720, 1751]
    train, validation, test = (set(columns[name]["src"]) for name in ds)
    assert not (train & validation or train & test or validation & test)

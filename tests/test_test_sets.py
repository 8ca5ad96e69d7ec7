"""The standard test sets by name (scored as their leaderboard scores them) and training data kept free of them:
the shared copy of the Tatoeba test set, the real fra-eng corpus, small corpora and files of one's own."""

import gzip
import hashlib
import json
import logging
import re
import shutil
from pathlib import Path

import pytest
from helpers import FRA_TXT, TEST_SETS_DIR, tiny_args

from hf_seq2seq.data import multi30k, test_sets
from hf_seq2seq.data.errors import ChecksumError, DataNotFoundError
from hf_seq2seq.data.loaders import load_corpora, load_named_dataset, load_translation_dataset
from hf_seq2seq.data.multi30k import load_multi30k
from hf_seq2seq.data.test_sets import (
    FILE_LANGUAGES,
    STANDARD_TEST_SET,
    TEST_SETS_ENV,
    excluded_sentences,
    load_test_set,
    overlap_key,
)
from hf_seq2seq.evaluation.report import STANDARD_REPORT, EvalReport

pytestmark = pytest.mark.floors  # the standard sets read and kept out of training at the floors too

GETTEXT_FRAGMENTS, GETTEXT_MESSAGES = "gettext-fragments-v1", "gettext-messages-v1"

needs_test_set = pytest.mark.skipif(
    not TEST_SETS_DIR.is_dir(), reason=f"needs the shared copy {TEST_SETS_DIR}"
)
needs_fra_txt = pytest.mark.skipif(not FRA_TXT.is_file(), reason=f"needs the real corpus {FRA_TXT}")


@needs_test_set
def test_the_standard_test_set_is_read_line_by_line_and_checked(tmp_path, monkeypatch):
    """12,681 aligned lines, one reference each (a source with two translations comes twice); a copy that is
    not the pinned release is refused, as is a folder without the set or an unknown name."""
    monkeypatch.setenv(TEST_SETS_ENV, str(TEST_SETS_DIR))
    sources, references = load_test_set(STANDARD_TEST_SET, "en", "fr")
    assert len(sources) == len(references) == 12681 and len(set(sources)) == 11871
    assert sources[0] == "80% of all English words come from other languages."
    assert load_test_set(STANDARD_TEST_SET, "fr", "en") == (references, sources)

    edited = tmp_path / "edited"
    edited.mkdir()
    source = TEST_SETS_DIR / f"{STANDARD_TEST_SET}.eng"  # the shared folder holds newstest2014 too: left out
    (edited / source.name).write_text(
        source.read_text(encoding="utf-8").replace("80%", "81%"), encoding="utf-8"
    )
    shutil.copy(TEST_SETS_DIR / f"{STANDARD_TEST_SET}.fra", edited)
    monkeypatch.setenv(TEST_SETS_ENV, str(edited))
    with pytest.raises(ChecksumError, match="is not tatoeba-test-v2021-08-07's en file of ac0f19c0be3c"):
        load_test_set(STANDARD_TEST_SET)
    with pytest.raises(DataNotFoundError, match="newstest2014.eng is not in .*HF_SEQ2SEQ_TEST_SETS"):
        load_test_set("newstest2014")
    with pytest.raises(
        DataNotFoundError, match="unknown test set 'wmt14'; the standard ones: tatoeba-test-v2021"
    ):
        load_test_set("wmt14")


@needs_test_set
def test_without_a_folder_the_set_is_downloaded_once_at_its_commit_and_checked(tmp_path, monkeypatch):
    """The download (here from the shared copy, as a file:// address) lands in the cache under the commit's name
    and is not fetched again; a download whose checksum is wrong leaves nothing behind."""
    monkeypatch.delenv(TEST_SETS_ENV, raising=False)
    monkeypatch.setattr(test_sets, "TEST_SET_URL", TEST_SETS_DIR.as_uri() + "/{file}")
    sources, _ = load_test_set(STANDARD_TEST_SET, cache_dir=tmp_path)
    cached = tmp_path / "opus-mt-testsets-ac0f19c0be3c"
    assert len(sources) == 12681 and sorted(p.name for p in cached.iterdir()) == [
        f"{STANDARD_TEST_SET}.eng",
        f"{STANDARD_TEST_SET}.fra",
    ]
    monkeypatch.setattr(test_sets, "TEST_SET_URL", (tmp_path / "nowhere").as_uri() + "/{file}")
    assert load_test_set(STANDARD_TEST_SET, cache_dir=tmp_path)[0] == sources  # from the cache
    monkeypatch.setattr(test_sets, "TEST_SET_URL", TEST_SETS_DIR.as_uri() + f"/{STANDARD_TEST_SET}.eng")
    with pytest.raises(ChecksumError, match="expected sha256 095313ff"):  # the English file served as French
        load_test_set(STANDARD_TEST_SET, cache_dir=tmp_path / "other")
    assert [p.name for p in (tmp_path / "other").rglob("*") if p.is_file()] == [f"{STANDARD_TEST_SET}.eng"]


def test_the_gettext_sets_come_with_the_package_and_read_either_way(tmp_path, monkeypatch):
    """`gettext-messages-v1` and `gettext-fragments-v1` are in the package (nothing downloaded, whatever
    $HF_SEQ2SEQ_TEST_SETS says): aligned lines, each English message once, fragments of three words or fewer
    without placeholders or markup and each a message too; French->English is the same lines the other way; an
    edited copy is refused; a run can keep them out of training by name."""
    monkeypatch.setenv(TEST_SETS_ENV, str(tmp_path))  # a folder without them: not where they are read from
    messages = dict(zip(*load_test_set(GETTEXT_MESSAGES), strict=True))
    fragments, references = load_test_set(GETTEXT_FRAGMENTS, "en", "fr")
    assert len(messages) == 1639 and len(fragments) == len(set(fragments)) == len(references) == 694
    assert messages["Save and continue editing"] == "Enregistrer et continuer les modifications"
    assert messages[
        "Deleting the selected %(objects_name)s would result in deleting related objects, but your "
        "account doesn't have permission to delete the following types of objects:"
    ].startswith("La suppression des objets %(objects_name)s")
    for english, french in zip(fragments, references, strict=True):
        assert english and french and english == english.strip() and messages[english] == french
        assert len(english.split()) <= 3 and not re.search(r"[%{}<>]|&\w+;", english), english
    assert load_test_set(GETTEXT_FRAGMENTS, "fr", "en") == (references, fragments)

    edited = tmp_path / "gettext_sets"
    shutil.copytree(test_sets.GETTEXT_SETS_DIR, edited)
    (edited / f"{GETTEXT_FRAGMENTS}.fra").write_text(
        "\n".join(references[:-1]) + "\nOups\n", encoding="utf-8"
    )
    monkeypatch.setattr(test_sets, "GETTEXT_SETS_DIR", edited)
    assert test_sets.test_set_file(GETTEXT_FRAGMENTS, "en") == edited / f"{GETTEXT_FRAGMENTS}.eng"  # unedited
    with pytest.raises(ChecksumError, match="is not gettext-fragments-v1's fr file as the package pins it"):
        load_test_set(GETTEXT_FRAGMENTS)
    with pytest.raises(
        DataNotFoundError, match="with the package: gettext-fragments-v1, gettext-messages-v1"
    ):
        load_test_set("gettext-fragments")
    keys = excluded_sentences([GETTEXT_MESSAGES], ("en", "fr"))
    assert overlap_key("save and continue editing") in keys and overlap_key("Enregistrer.") in keys


def test_the_gettext_sets_rules_keep_one_line_messages_with_words_and_short_plain_fragments():
    """measurements/build_gettext_test_sets.py: a message is kept, without the spaces around it, when both sides
    are one line with a letter outside markup and placeholders; a fragment is three words or fewer, plain."""
    from build_gettext_test_sets import is_fragment, kept_message

    assert kept_message(" Save ", "Enregistrer ") == ("Save", "Enregistrer")
    assert kept_message("%(name)s: %(value)s", "%(name)s : %(value)s") is None  # placeholders only
    assert kept_message("<br/>&nbsp;", "<br/>&nbsp;") is None  # markup only
    assert kept_message("First line\nsecond line", "Première ligne\nseconde ligne") is None
    assert kept_message("Delete %s?", "Supprimer %s ?") == ("Delete %s?", "Supprimer %s ?")
    assert kept_message("Save", "") is None
    assert [
        is_fragment(text) for text in ("Log out", "Delete %s", "<b>Bold</b>", "Change your password now")
    ] == [
        True,
        False,
        False,
        False,
    ]


def test_the_same_sentence_is_found_whatever_its_case_spacing_and_punctuation():
    assert overlap_key("Tom's here.") == overlap_key("toms here") == overlap_key("TOM'S  HERE !")
    assert overlap_key("« Où es-tu ? »") == overlap_key("où estu") == overlap_key("Où\u00a0es-tu\u202f?")
    assert overlap_key("I'm 20.") != overlap_key("I'm 21.")
    assert overlap_key("...") == ""  # no words: never matches anything (dropped from the keys)


@needs_test_set
@needs_fra_txt
def test_fra_eng_trains_and_validates_on_no_sentence_of_the_standard_test_set(caplog):
    """The shared fra.txt, as training loads it: no train pair and no validation source or reference shares a
    side with the Tatoeba test set (about 13,600 pairs dropped, and said); its own test split is unchanged."""
    with caplog.at_level(logging.INFO, logger="hf_seq2seq.data.loaders"):
        splits = load_named_dataset("fra-eng", data_path=FRA_TXT)
    sources, references = load_test_set(STANDARD_TEST_SET)
    keys = {overlap_key(text) for text in sources + references}
    for row in splits["train"]:
        assert overlap_key(row["src"]) not in keys and overlap_key(row["tgt"]) not in keys, row
    for row in splits["validation"]:
        assert not {overlap_key(text) for text in (row["src"], *row["references"])} & keys, row
    kept_all = load_named_dataset("fra-eng", data_path=FRA_TXT, exclude_test_sets=["none"])
    dropped = len(kept_all["train"]) - len(splits["train"])
    assert 13_336 <= dropped < 14_000  # at least the pairs that share a side verbatim
    assert f"dropped {dropped:,} of {len(kept_all['train']):,} train pairs" in caplog.text
    assert splits["test"]["src"] == kept_all["test"]["src"]


def test_any_corpus_keeps_out_the_sentences_of_a_file(tmp_path):
    """`exclude_test_sets` with a file of one's own sentences (either language), for a corpus other than
    fra-eng, which keeps nothing out by default."""
    corpus = tmp_path / "pairs.tsv"
    rows = [
        ("A dog runs.", "Un chien court."),
        ("A cat sleeps.", "Un chat dort."),
        ("Hello!", "Bonjour !"),
    ] * 30
    corpus.write_text("en\tfr\n" + "".join(f"{en}\t{fr}\n" for en, fr in rows), encoding="utf-8")
    held_out = tmp_path / "held_out.txt"
    held_out.write_text("un CHAT dort\nNothing like it.\n", encoding="utf-8")

    def train_sources(**kwargs) -> set[str]:
        splits = load_named_dataset(str(corpus), **kwargs)
        return set(splits["train"]["src"]) | set(splits["validation"]["src"])

    everything = {en for en, _ in rows}
    assert train_sources() == everything == set(load_translation_dataset(str(corpus))["train"]["src"])
    assert train_sources(exclude_test_sets=["default", str(held_out)]) == everything - {"A cat sleeps."}
    with pytest.raises(DataNotFoundError, match="'no-such-set' is neither a standard test set"):
        load_named_dataset(str(corpus), exclude_test_sets=["no-such-set"])


def standard_subset(monkeypatch, n: int = 6) -> tuple[list[str], list[str]]:
    """The first `n` lines of the Tatoeba test set stand in for the whole (a tiny model would take minutes on
    12,681 lines), the first source twice with two references, as the set has such lines."""
    sources, references = (
        ["Where is the dog?", "Where is the dog?"],
        ["Où est le chien ?", "Où est le chien ?"],
    )
    sources += [f"the boy sees a {adj} cat ." for adj in ("red", "big", "small", "green")][: n - 2]
    references += [f"le garçon voit un chat {adj} ." for adj in ("rouge", "grand", "petit", "vert")][: n - 2]

    def subset(name, source_lang="en", target_lang="fr"):
        return (sources, references) if source_lang == "en" else (references, sources)

    monkeypatch.setattr(test_sets, "load_test_set", subset)  # `hf-seq2seq evaluate` imports it when it runs
    monkeypatch.setattr("hf_seq2seq.training.final_evaluation.load_test_set", subset)
    return sources, references


def test_evaluate_scores_a_standard_test_set_by_name_one_reference_a_line(
    trained, tmp_path, monkeypatch, capsys
):
    from hf_seq2seq.cli.evaluate import main

    sources, _ = standard_subset(monkeypatch)
    report = main([str(trained), "--test-set", STANDARD_TEST_SET, "--output-dir", str(tmp_path)])
    assert report["dataset"] == STANDARD_TEST_SET and report["split"] is None
    assert report["num_sentences"] == len(sources) and report["num_references"] == 1
    assert "nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp" in report["bleu_signature"]  # sacrebleu's defaults
    assert f"({STANDARD_TEST_SET})" in capsys.readouterr().out
    with pytest.raises(ValueError, match="--src-file and --test-set each name a test set"):
        main([str(trained), "--test-set", STANDARD_TEST_SET, "--src-file", "a.en", "--ref-file", "a.fr"])


def test_evaluate_scores_the_gettext_fragments_by_name_end_to_end(trained, tmp_path, capsys):
    """`hf-seq2seq evaluate MODEL --test-set gettext-fragments-v1`, as a user runs it (nothing downloaded): every
    fragment translated and scored one reference a line, the shares of empty and overlong outputs printed and in
    eval_report.json, computed on the translations it wrote."""
    from hf_seq2seq.cli.evaluate import main
    from hf_seq2seq.evaluation.metrics import empty_share, overlong_share

    report = main([str(trained), "--test-set", GETTEXT_FRAGMENTS, "--output-dir", str(tmp_path)])
    sources, _ = load_test_set(GETTEXT_FRAGMENTS)
    translations = (tmp_path / "translations.txt").read_text(encoding="utf-8").removesuffix("\n").split("\n")
    assert report["dataset"] == GETTEXT_FRAGMENTS and report["num_sentences"] == len(sources) == len(
        translations
    )
    assert "nrefs:1|" in report["bleu_signature"]
    saved = EvalReport.load(tmp_path / "eval_report.json")
    assert saved.empty_share == report["empty_share"] == empty_share(sources, translations)
    assert saved.overlong_share == report["overlong_share"] == overlong_share(sources, translations)
    out = capsys.readouterr().out
    assert f"empty translations of non-empty sources {100 * saved.empty_share:.1f}%" in out
    assert f"outputs more than 3 times the source's words {100 * saved.overlong_share:.1f}%" in out


def test_training_ends_with_the_standard_figure_beside_its_own_split(
    synthetic_fra_txt, tmp_path, monkeypatch, capsys
):
    """`--standard_test_set NAME`: the run's last lines give the standard set's scores (the test decoding, one
    reference a line), `test_results.json` records them, `standard_test_results.json` is their report, and the
    Hub folder publishes both results."""
    from hf_seq2seq.cli import train
    from hf_seq2seq.hub.push import load_reports

    sources, _ = standard_subset(monkeypatch)
    output = tmp_path / "run"
    args = tiny_args(synthetic_fra_txt, output, "--max_steps", "20", "--standard_test_set", STANDARD_TEST_SET)
    results = train.main(args)
    standard = EvalReport.load(output / STANDARD_REPORT)
    assert standard.dataset == STANDARD_TEST_SET and standard.num_sentences == len(sources)
    assert standard.decoding == results["decoding"] and "nrefs:1" in standard.bleu_signature
    facts = json.loads(Path(output, "test_results.json").read_text())["training"]
    assert facts["standard_test_set"] == STANDARD_TEST_SET
    assert (facts["standard_bleu"], facts["standard_chrf"]) == (standard.bleu, standard.chrf)
    assert (
        f"{STANDARD_TEST_SET}: BLEU {standard.bleu:.1f}  chrF {standard.chrf:.1f}" in capsys.readouterr().out
    )
    assert [report.test_set for report in load_reports(output)] == ["fra-eng:test", STANDARD_TEST_SET]


def test_the_own_test_split_is_scored_without_the_standard_set_at_hand(
    trained, synthetic_fra_txt, tmp_path, monkeypatch
):
    """Keeping the standard set out changes train and validation only, so scoring fra-eng's own test split does
    not need it: offline, with no copy of it, `hf-seq2seq evaluate` still scores the split; validation does need
    it, and says where it looked."""
    from hf_seq2seq.evaluation.evaluate import EvaluationSettings, evaluate_folder

    monkeypatch.setenv(TEST_SETS_ENV, str(tmp_path))  # a folder without the set
    own_split = EvaluationSettings(data_path=str(synthetic_fra_txt), max_samples=5)
    report = evaluate_folder(trained, tmp_path / "out", own_split)
    assert report.test_set == "fra-eng:test" and report.num_sentences == 5
    with pytest.raises(DataNotFoundError, match=f"{STANDARD_TEST_SET}.eng is not in {tmp_path}"):
        evaluate_folder(
            trained,
            tmp_path / "out",
            EvaluationSettings(data_path=str(synthetic_fra_txt), split="validation"),
        )


def test_a_streamed_corpus_keeps_out_the_sentences_of_a_file_as_it_is_read(tmp_path):
    """With `streaming`, train and validation are filtered as they are read (not counted up front)."""
    corpus = tmp_path / "pairs.jsonl"
    rows = [("A dog runs.", "Un chien court."), ("A cat sleeps.", "Un chat dort.")] * 50
    corpus.write_text(
        "".join(json.dumps({"translation": {"en": en, "fr": fr}}) + "\n" for en, fr in rows), encoding="utf-8"
    )
    held_out = tmp_path / "held_out.txt"
    held_out.write_text("a cat sleeps\n", encoding="utf-8")
    splits = load_named_dataset(str(corpus), streaming=True, exclude_test_sets=[str(held_out)])
    kept = {row["src"] for name in ("train", "validation") for row in splits[name]}
    assert kept == {"A dog runs."}


CAPTIONS = {
    "train": [
        (f"A dog number {k} runs on the grass.", f"Un chien numéro {k} court sur l'herbe.") for k in range(40)
    ],
    "val": [("Two men are sitting on a bench.", "Deux hommes sont assis sur un banc."), (" ", "Vide.")],
}


def write_raw_captions(folder: Path) -> dict[str, str]:
    """A few caption lines as Multi30k's raw files (gzipped, one sentence a line); returns their sha256."""
    folder.mkdir(parents=True, exist_ok=True)
    for prefix, pairs in CAPTIONS.items():
        for column, lang in enumerate(("en", "fr")):
            with gzip.open(folder / f"{prefix}.{lang}.gz", "wt", encoding="utf-8") as handle:
                handle.write("".join(pair[column] + "\n" for pair in pairs))
    return {file.name: hashlib.sha256(file.read_bytes()).hexdigest() for file in folder.iterdir()}


def test_multi30k_is_read_from_a_checked_copy_or_downloaded_once_at_its_commit(tmp_path, monkeypatch):
    """`--dataset multi30k`: a local copy that is not the pinned files is refused, as is a folder without them;
    without a folder the files are downloaded into the cache and read from there after. Its own validation
    pairs (a blank one dropped), a test split carved from train by the hash rule, both directions."""
    raw = tmp_path / "raw"
    pinned = write_raw_captions(raw)
    monkeypatch.setenv(multi30k.MULTI30K_ENV, str(raw))
    with pytest.raises(ChecksumError, match="is not Multi30k's train.en.gz of a3d2e0d26b56"):
        load_multi30k()
    monkeypatch.setenv(multi30k.MULTI30K_ENV, str(tmp_path / "empty"))
    with pytest.raises(DataNotFoundError, match="train.en.gz is not in"):
        load_multi30k()

    monkeypatch.setattr(multi30k, "MULTI30K_SHA256", pinned)
    monkeypatch.delenv(multi30k.MULTI30K_ENV)
    monkeypatch.setattr(multi30k, "MULTI30K_URL", raw.as_uri() + "/{file}")
    splits = load_multi30k(test_fraction=0.2, cache_dir=tmp_path / "cache")
    assert sorted(p.name for p in (tmp_path / "cache").rglob("*.gz")) == sorted(pinned)
    assert splits["validation"]["src"] == ["Two men are sitting on a bench."]
    assert len(splits["train"]) + len(splits["test"]) == 40 and len(splits["test"]) > 0
    monkeypatch.setattr(multi30k, "MULTI30K_URL", (tmp_path / "nowhere").as_uri() + "/{file}")
    reversed_splits = load_multi30k(source_lang="fr", target_lang="en", cache_dir=tmp_path / "cache")
    assert reversed_splits["validation"]["tgt"] == ["Two men are sitting on a bench."]  # read from the cache


@needs_test_set
def test_multi30k_mixed_with_fra_eng_validates_on_its_own_pairs(tmp_path, monkeypatch, synthetic_fra_txt):
    """The domain recipe (docs/data.md): `--dataset multi30k,fra-eng` mixed by probabilities: train draws from
    both, validation is Multi30k's own, and no pair shares a side with Multi30k's test set of 2016, which its
    "default" keeps out (here a made-up one beside the standard Tatoeba set)."""
    monkeypatch.setattr(multi30k, "MULTI30K_SHA256", write_raw_captions(tmp_path / "raw"))
    monkeypatch.setenv(multi30k.MULTI30K_ENV, str(tmp_path / "raw"))
    held_out = tmp_path / "test_sets"
    held_out.mkdir()
    for suffix in ("eng", "fra"):
        (held_out / f"{STANDARD_TEST_SET}.{suffix}").symlink_to(
            TEST_SETS_DIR / f"{STANDARD_TEST_SET}.{suffix}"
        )
    made_up = {"en": "A cat sleeps.\n", "fr": "Un chien numéro 3 court sur l'herbe\n"}
    for lang, text in made_up.items():
        (held_out / f"multi30k_test_2016_flickr.{FILE_LANGUAGES[lang]}").write_text(text, encoding="utf-8")
    pinned = {lang: hashlib.sha256(text.encode()).hexdigest() for lang, text in made_up.items()}
    monkeypatch.setitem(test_sets.TEST_SETS, "multi30k_test_2016_flickr", pinned)
    monkeypatch.setenv(TEST_SETS_ENV, str(held_out))

    splits = load_corpora(["multi30k", "fra-eng"], probabilities=[0.6, 0.4], data_path=synthetic_fra_txt)
    assert splits["validation"]["src"] == ["Two men are sitting on a bench."]
    sources = list(splits["train"]["src"])
    domain = [s for s in sources if s.startswith("A dog number")]
    assert domain and len(domain) < len(sources)  # both corpora in the mix
    assert "A dog number 3 runs on the grass." not in sources  # kept out by its French side


def test_the_software_messages_come_with_the_package_and_share_no_side_with_the_gettext_sets(
    tmp_path, monkeypatch, synthetic_fra_txt
):
    """`software-messages-v1` (labels and messages of other projects' catalogues, to train on) is read by name from
    the package either way, checked by sha256, and no pair shares a side with the gettext test sets, which come
    from other projects and which its "default" keeps out again; beside fra-eng it adds its pairs to train while
    validation and test stay fra-eng's."""
    from hf_seq2seq.data import software_messages
    from hf_seq2seq.data.software_messages import SOFTWARE_MESSAGES, SOFTWARE_MESSAGES_SHORT

    splits = load_named_dataset(SOFTWARE_MESSAGES)
    pairs = dict(zip(splits["train"]["src"], splits["train"]["tgt"], strict=True))
    assert pairs["Paste"] == "Coller" and pairs["Save All"] == "Tout enregistrer"  # JupyterLab's French
    total = sum(len(split) for split in splits.values())
    assert 10_000 < total <= 10_708 and len(splits["validation"]) and len(splits["test"])
    reverse = load_named_dataset(SOFTWARE_MESSAGES, source_lang="fr", target_lang="en")
    rows = {pair for split in reverse.values() for pair in zip(split["src"], split["tgt"], strict=True)}
    assert ("Ouvrir l'espace de travail", "Open Workspace") in rows

    # the cpu presets' part of it: the messages of at most 8 words, each in the split it has in the whole
    short = load_named_dataset(SOFTWARE_MESSAGES_SHORT)
    assert 8_000 < sum(len(split) for split in short.values()) <= 8_756
    for name, split in short.items():
        assert all(len(source.split()) <= 8 for source in split["src"])
        assert set(split["src"]) <= set(splits[name]["src"]), name
    assert "Paste" in short["train"]["src"]

    held_out = excluded_sentences([GETTEXT_MESSAGES, GETTEXT_FRAGMENTS], ("en", "fr"))
    for name in ("en", "fr"):
        lines = software_messages._lines(name)
        assert len(lines) == 10_708 and not any(overlap_key(line) in held_out for line in lines)

    mixed = load_corpora(["fra-eng", SOFTWARE_MESSAGES], data_path=synthetic_fra_txt)
    fra_eng = load_named_dataset("fra-eng", data_path=synthetic_fra_txt)
    assert len(mixed["train"]) == len(fra_eng["train"]) + len(splits["train"])
    assert mixed["validation"]["src"] == fra_eng["validation"]["src"]

    edited = tmp_path / "software_messages"
    shutil.copytree(software_messages.SOFTWARE_MESSAGES_DIR, edited)
    with open(edited / f"{SOFTWARE_MESSAGES}.fra", "a", encoding="utf-8") as f:
        f.write("Oups\n")
    monkeypatch.setattr(software_messages, "SOFTWARE_MESSAGES_DIR", edited)
    with pytest.raises(ChecksumError, match="is not software-messages-v1's fr file as the package pins it"):
        load_named_dataset(SOFTWARE_MESSAGES)

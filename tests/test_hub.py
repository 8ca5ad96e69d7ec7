"""Building, validating and uploading the Hub folder of a trained model (offline: the Hub API is monkeypatched)."""

import dataclasses
import json
import os
import shutil
from pathlib import Path

import pytest
from helpers import LEGACY_FOLDER, REPO_ID, REPORT, make_trained_folder
from huggingface_hub import HfApi, ModelCard
from transformers import Pipeline

from hf_seq2seq.cli import evaluate as evaluate_cli
from hf_seq2seq.cli import main as cli
from hf_seq2seq.cli import push as push_cli
from hf_seq2seq.evaluation.report import STANDARD_REPORT, TRAINING_REPORT, EvalReport, ReportError
from hf_seq2seq.hub import push as hub_push
from hf_seq2seq.hub.card import DATA_ATTRIBUTION, DATASET_ID, DATASET_NAME, supported_transformers
from hf_seq2seq.hub.layout import DEFAULT_SENTENCE, RESULTS_DIR
from hf_seq2seq.hub.push import PushResult, PushSettings, build_hub_folder, push_to_hub
from hf_seq2seq.hub.validation import (
    HubFolderError,
    HubValidationError,
    InvalidRepoIdError,
    ValidationResult,
    validate_hub_folder,
)
from hf_seq2seq.models.folder import SHIPPED_MODULES, ModelFolderError
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import CACHE_NAME

# huggingface_hub's and jinja2's floors are used here only; the Hub validation test found that
# the 0.1.0 folder's pipeline needs transformers 5.20 (2026-11-27)
pytestmark = pytest.mark.floors


@pytest.fixture(scope="module")
def dry_run(trained, tmp_path_factory) -> PushResult:
    return push_to_hub(trained, REPO_ID, tmp_path_factory.mktemp("hub") / "out", PushSettings(dry_run=True))


def test_dry_run_folder_loads_and_translates_without_the_package(dry_run):
    folder = dry_run.folder
    expected = {
        "README.md",
        "config.json",
        "model.safetensors",
        "generation_config.json",
        "tokenizer.json",
        "tokenizer_config.json",
        "configuration_transformer_mt.py",
        "modeling_transformer_mt.py",
        "generation_transformer_mt.py",
        "pipeline_translation.py",
        f"{RESULTS_DIR}/{TRAINING_REPORT}",
    }
    assert expected <= {str(path.relative_to(folder)) for path in folder.rglob("*")}
    assert not any(name.endswith((".bin", ".pt", ".pth")) for name in os.listdir(folder))
    config = json.loads((folder / "config.json").read_text())
    assert config["auto_map"]["AutoConfig"] == "configuration_transformer_mt.TransformerMTConfig"
    assert (
        config["auto_map"]["AutoModelForSeq2SeqLM"]
        == "modeling_transformer_mt.TransformerMTForConditionalGeneration"
    )
    assert set(config["custom_pipelines"]) == {"translation", "translation_en_to_fr"}
    tokenizer_config = json.loads((folder / "tokenizer_config.json").read_text())
    assert "is_local" not in tokenizer_config and "local_files_only" not in tokenizer_config

    result = dry_run.validation
    assert not dry_run.uploaded and dry_run.repo_url is None
    assert result.config_class == "TransformerMTConfig"
    assert result.model_class == "TransformerMTForConditionalGeneration"
    assert result.pipeline_class == "TranslationPipeline"
    assert result.pipeline_tasks == ("translation", "translation_en_to_fr")
    assert isinstance(result.translation, str) and result.sentence == DEFAULT_SENTENCE


def test_model_card_metadata_matches_the_test_results(dry_run):
    card = ModelCard.load(dry_run.folder / "README.md")
    data = card.data
    assert data.language == ["en", "fr"]
    assert data.license == "apache-2.0"
    assert data.pipeline_tag == "translation" and data.library_name == "transformers"
    assert "translation" in data.tags and data.metrics == ["bleu", "chrf"] and data.datasets == [DATASET_ID]
    assert data.model_name == REPO_ID
    scores = {result.metric_type: result for result in data.eval_results}
    assert scores["bleu"].metric_value == REPORT.bleu and scores["chrf"].metric_value == REPORT.chrf
    assert scores["bleu"].metric_args == {"signature": REPORT.bleu_signature}
    assert scores["chrf"].metric_args == {"signature": REPORT.chrf_signature}
    assert all(
        result.task_type == "translation" and result.dataset_split == "test" for result in data.eval_results
    )
    text = card.text
    for needed in (
        DATA_ATTRIBUTION,
        "CC-BY 2.0 FR",
        REPORT.bleu_signature,
        REPORT.chrf_signature,
        "| 12.3 | 34.6 |",
        "| learning_rate | 0.0007 |",
        "| preset | tiny |",
        f'pipeline("translation", model="{REPO_ID}", trust_remote_code=True)',
        f'AutoModelForSeq2SeqLM.from_pretrained("{REPO_ID}", trust_remote_code=True)',
        "@misc{someone_tiny_en_fr,",
    ):
        assert needed in text, needed
    assert "{{" not in text and "{%" not in text
    assert "best_checkpoint" not in text  # a path on the training machine
    published = EvalReport.load(dry_run.folder / RESULTS_DIR / TRAINING_REPORT)
    assert published == REPORT.published() and "best_checkpoint" not in published.training
    assert f"| {DATASET_NAME} | 7 |" in text  # the number of test sentences


@pytest.mark.parametrize(
    "removed",
    ["config.json", "model.safetensors", "tokenizer.json", "tokenizer_config.json", "generation_config.json"],
)
def test_folder_missing_a_file_is_refused_naming_it(trained, tmp_path, removed):
    broken = Path(shutil.copytree(trained, tmp_path / "trained"))
    (broken / removed).unlink()
    with pytest.raises(ModelFolderError, match=removed.replace(".", r"\.")):
        build_hub_folder(broken, tmp_path / "out", REPO_ID)
    assert not (tmp_path / "out").exists()


def test_folder_without_any_result_is_refused_with_what_to_do(trained, tmp_path):
    broken = Path(shutil.copytree(trained, tmp_path / "trained"))
    (broken / TRAINING_REPORT).unlink()
    with pytest.raises(HubFolderError, match="--report"):
        build_hub_folder(broken, tmp_path / "out", REPO_ID)


def test_pickled_weights_only_are_refused_with_a_note(trained, tmp_path):
    broken = Path(shutil.copytree(trained, tmp_path / "trained"))
    (broken / "model.safetensors").rename(broken / "pytorch_model.bin")
    with pytest.raises(ModelFolderError, match=r"model\.safetensors \(found only pytorch_model\.bin"):
        build_hub_folder(broken, tmp_path / "out", REPO_ID)


def test_report_saves_and_loads_unchanged(tmp_path):
    report = EvalReport(
        **{k: v for k, v in REPORT.to_dict().items() if k not in ("training", "by_length", "loop_share")},
        training={"global_step": 2000, "epochs": 3.0, "train_pairs": None},
        by_length=[{"bucket": "1-10", "num_sentences": 3, "bleu": 40.0, "chrf": 60.0, "loop_share": 0.0}],
        loop_share=0.01,
    )
    assert EvalReport.load(report.save(tmp_path)) == report
    assert report.published().training == {"global_step": 2000, "epochs": 3.0}


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"chrf_signature": None}, "missing key.*chrf_signature"),
        ({"bleu": "41"}, "`bleu` must be a finite number"),
        ({"chrf": 0.55e3}, "`chrf` is a 0-100 score"),
        ({"empty_share": 6.1}, "`empty_share` is a 0-1 share"),
        ({"direction": "english"}, "`direction` must be '<source>-<target>'"),
        ({"curve": [1.0, 2.0]}, "unknown key.*curve"),
    ],
)
def test_bad_results_are_refused_naming_the_key(trained, tmp_path, changes, message):
    broken = Path(shutil.copytree(trained, tmp_path / "trained"))
    data = json.loads((broken / TRAINING_REPORT).read_text()) | changes
    (broken / TRAINING_REPORT).write_text(json.dumps({k: v for k, v in data.items() if v is not None}))
    with pytest.raises(ReportError, match=message):
        build_hub_folder(broken, tmp_path / "out", REPO_ID)


def test_a_model_trained_on_other_data_is_refused_by_the_fra_eng_card(trained, tmp_path):
    broken = Path(shutil.copytree(trained, tmp_path / "trained"))
    data = json.loads((broken / TRAINING_REPORT).read_text()) | {"dataset": "wmt14"}
    (broken / TRAINING_REPORT).write_text(json.dumps(data))
    with pytest.raises(HubFolderError, match="trained on wmt14"):
        build_hub_folder(broken, tmp_path / "out", REPO_ID)


def test_a_model_trained_beside_the_software_messages_credits_them_in_its_card(tmp_path):
    """The `cpu` preset trains on fra-eng and the package's software messages (of at most 8 words): the card names
    the corpus, the projects whose catalogues they are and their licences, its test split stays the fra-eng entry;
    fra-eng with another corpus is still refused."""
    report = dataclasses.replace(REPORT, dataset="fra-eng,software-messages-v1")
    model = make_trained_folder(tmp_path / "model", report=report)
    card = ModelCard.load(build_hub_folder(model, tmp_path / "hub", REPO_ID) / "README.md")
    assert [r.dataset_name for r in card.data.eval_results if r.metric_type == "bleu"] == [DATASET_NAME]
    text = " ".join(card.text.split())
    assert "trained on `software-messages-v1`" in text and "Indico (MIT)" in text
    assert "training data CC-BY 2.0 FR, BSD-3-Clause and MIT" in text
    plain = ModelCard.load(
        build_hub_folder(make_trained_folder(tmp_path / "plain"), tmp_path / "hub2", REPO_ID) / "README.md"
    )
    assert "software-messages-v1" not in plain.text and "BSD-3-Clause" not in plain.text
    short = make_trained_folder(
        tmp_path / "short", report=dataclasses.replace(REPORT, dataset="fra-eng,software-messages-v1-short")
    )
    text = " ".join(
        ModelCard.load(build_hub_folder(short, tmp_path / "hub3", REPO_ID) / "README.md").text.split()
    )
    assert "trained on `software-messages-v1-short`" in text and "messages of at most 8 words" in text

    other = make_trained_folder(
        tmp_path / "other", report=dataclasses.replace(REPORT, dataset="fra-eng,wmt14")
    )
    with pytest.raises(HubFolderError, match="trained on fra-eng, wmt14"):
        build_hub_folder(other, tmp_path / "hub3", REPO_ID)


def test_tokenizer_model_mismatch_is_refused(trained, tmp_path):
    broken = Path(shutil.copytree(trained, tmp_path / "trained"))
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps({**config, "eos_token_id": 5}))
    with pytest.raises(HubFolderError, match="config.json eos_token_id=5 but the tokenizer's is 1"):
        build_hub_folder(broken, tmp_path / "out", REPO_ID)


def test_output_folder_must_be_new_and_outside_the_trained_folder(trained, tmp_path):
    with pytest.raises(HubFolderError, match="outside the trained folder"):
        build_hub_folder(trained, trained / "hub", REPO_ID)
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "keep.txt").write_text("x")
    with pytest.raises(HubFolderError, match="must be new or empty"):
        build_hub_folder(trained, tmp_path / "used", REPO_ID)


@pytest.fixture
def hub_api_calls(monkeypatch) -> list[tuple[str, dict]]:
    """Replace the HfApi network methods; record each call (with the api's token) in order."""
    calls: list[tuple[str, dict]] = []

    def create_repo(self, repo_id, **kwargs):
        calls.append(("create_repo", {"repo_id": repo_id, "token": self.token, **kwargs}))
        return f"https://huggingface.co/{repo_id}"

    def upload_folder(self, **kwargs):
        calls.append(
            (
                "upload_folder",
                {"token": self.token, "files": sorted(os.listdir(kwargs["folder_path"])), **kwargs},
            )
        )
        return type(
            "CommitInfo", (), {"commit_url": f"https://huggingface.co/{kwargs['repo_id']}/commit/abc"}
        )()

    monkeypatch.setattr(HfApi, "create_repo", create_repo)
    monkeypatch.setattr(HfApi, "upload_folder", upload_folder)
    return calls


@pytest.mark.parametrize(
    "repo_id", ["tiny-en-fr", "a/b/c", "someone/bad name", "someone/x--y", "/name", "someone/"]
)
def test_bad_repo_id_is_refused_before_any_network_call(trained, tmp_path, monkeypatch, repo_id):
    def no_network(*args, **kwargs):
        raise AssertionError("the Hub API was called")

    for method in ("create_repo", "upload_folder", "whoami", "repo_exists"):
        monkeypatch.setattr(HfApi, method, no_network)
    with pytest.raises(InvalidRepoIdError, match=r"(?i)repo id"):
        push_to_hub(trained, repo_id, tmp_path / "out", PushSettings(token="hf_fake"))
    assert not (tmp_path / "out").exists()


def test_upload_validates_first_then_creates_repo_and_uploads_the_folder(
    trained, tmp_path, monkeypatch, hub_api_calls
):
    validated: list[Path] = []

    def validate(folder, sentence=DEFAULT_SENTENCE):  # the real check runs in the dry-run test
        assert not hub_api_calls, "validation must come before any upload call"
        validated.append(folder)
        return ValidationResult(folder, "C", "M", "T", "P", ("translation",), sentence, "bonjour")

    monkeypatch.setattr(hub_push, "validate_hub_folder", validate)
    result = push_to_hub(trained, REPO_ID, tmp_path / "out", PushSettings(private=True, token="hf_fake"))

    assert validated == [tmp_path / "out"]
    assert [name for name, _ in hub_api_calls] == ["create_repo", "upload_folder"]
    create, upload = hub_api_calls[0][1], hub_api_calls[1][1]
    assert create == {"repo_id": REPO_ID, "token": "hf_fake", "private": True, "exist_ok": True}
    assert upload["repo_id"] == REPO_ID and Path(upload["folder_path"]) == tmp_path / "out"
    assert upload["token"] == "hf_fake"
    assert upload["commit_message"] == "Upload someone/tiny-en-fr: BLEU 12.3, chrF 34.6 (fra-eng:test)"
    assert {"README.md", "model.safetensors", "config.json", "tokenizer.json"} <= set(upload["files"])
    assert result.uploaded and result.commit_url.endswith("/commit/abc")
    assert result.repo_url == f"https://huggingface.co/{REPO_ID}"


def test_with_a_space_the_card_links_it_and_both_repos_are_uploaded(
    trained, tmp_path, monkeypatch, hub_api_calls
):
    space = f"{REPO_ID}-demo"
    monkeypatch.setattr(
        hub_push,
        "validate_hub_folder",
        lambda folder, sentence: ValidationResult(folder, "C", "M", "T", "P", ("t",), sentence, "x"),
    )
    result = push_to_hub(trained, REPO_ID, tmp_path / "out", PushSettings(token="hf_fake", space=space))

    assert result.space_folder == tmp_path / "out-space"
    assert sorted(os.listdir(result.space_folder)) == ["README.md", "app.py", "requirements.txt"]
    assert f'MODEL_REPO = "{REPO_ID}"' in (result.space_folder / "app.py").read_text()
    assert f"https://huggingface.co/spaces/{space}" in (tmp_path / "out" / "README.md").read_text()
    names = [(name, call.get("repo_type")) for name, call in hub_api_calls]
    assert names == [("create_repo", None), ("upload_folder", None), ("create_repo", "space"),
                     ("upload_folder", "space")]  # fmt: skip
    assert hub_api_calls[2][1]["repo_id"] == space and hub_api_calls[2][1]["space_sdk"] == "gradio"
    assert Path(hub_api_calls[3][1]["folder_path"]) == result.space_folder
    assert result.space_url == f"https://huggingface.co/{space}"


def test_broken_folder_fails_validation_with_the_stderr_tail(trained, tmp_path):
    folder = build_hub_folder(trained, tmp_path / "out", REPO_ID)
    modeling = folder / "modeling_transformer_mt.py"
    modeling.write_text(modeling.read_text() + "\nraise RuntimeError('broken modeling file')\n")
    with pytest.raises(HubValidationError, match="broken modeling file") as info:
        validate_hub_folder(folder)
    assert "does not load or translate without hf_seq2seq" in str(info.value)
    assert "broken modeling file" in info.value.stderr


def test_failed_validation_uploads_nothing(trained, tmp_path, monkeypatch, hub_api_calls):
    def validate(folder, sentence=DEFAULT_SENTENCE):
        raise HubValidationError("does not load", "Traceback ...")

    monkeypatch.setattr(hub_push, "validate_hub_folder", validate)
    with pytest.raises(HubValidationError):
        push_to_hub(trained, REPO_ID, tmp_path / "out", PushSettings(token="hf_fake"))
    assert not hub_api_calls


def test_cli_passes_its_options_and_reports_errors(tmp_path, monkeypatch, capsys):
    received = {}

    def push(trained_dir, repo_id, output_dir, settings):  # the real one runs in the dry-run tests
        received.update(trained_dir=trained_dir, repo_id=repo_id, output_dir=output_dir, settings=settings)
        validation = ValidationResult(tmp_path, "C", "M", "T", "P", ("translation",), "Hi", "Salut")
        return PushResult(folder=tmp_path, validation=validation)

    monkeypatch.setattr(hub_push, "push_to_hub", push)
    argv = ["runs/base", REPO_ID, "--dry-run", "--private", "--token", "hf_x", "--output-dir", str(tmp_path)]
    assert push_cli.main(argv) == 0
    assert received == {
        "trained_dir": "runs/base",
        "repo_id": REPO_ID,
        "output_dir": str(tmp_path),
        "settings": PushSettings(
            reports=[],
            sentence=DEFAULT_SENTENCE,
            dry_run=True,
            private=True,
            token="hf_x",
            commit_message=None,
        ),
    }
    assert "Dry run: nothing uploaded" in capsys.readouterr().out
    assert push_cli.main(["runs/base", REPO_ID, "--dry-run", "--with-space"]) == 0
    assert received["settings"].space == f"{REPO_ID}-demo"

    monkeypatch.undo()
    with pytest.raises(SystemExit, match="^hf-seq2seq push: Repo id must be 'namespace/name'"):
        cli(["push", "runs/base", "no-namespace", "--dry-run"])


def test_evaluate_then_push_publishes_that_result_in_the_card(tmp_path, capsys):
    """`hf-seq2seq evaluate` on a plain-text test set, then a Hub folder whose card carries that result."""
    model = make_trained_folder(
        tmp_path / "model", report=None
    )  # no training report: the card needs --report
    (tmp_path / "test.en").write_text("how are you ?\ni like cheese .\n", encoding="utf-8")
    (tmp_path / "test.fr").write_text("comment allez vous ?\nje aime le fromage .\n", encoding="utf-8")
    evaluated = evaluate_cli.main([str(model), "--src-file", str(tmp_path / "test.en"), "--ref-file",
                                   str(tmp_path / "test.fr"), "--output-dir", str(tmp_path / "eval")])  # fmt: skip
    report = tmp_path / "eval" / "eval_report.json"
    assert push_cli.main([str(model), REPO_ID, "--dry-run", "--report", str(report),
                          "--output-dir", str(tmp_path / "hub")]) == 0  # fmt: skip
    card = ModelCard.load(tmp_path / "hub" / "README.md")
    (bleu,) = [r for r in card.data.eval_results if r.metric_type == "bleu"]
    assert bleu.metric_value == evaluated["bleu"] and bleu.dataset_name == "test.en (plain text)"
    assert bleu.metric_args == {"signature": evaluated["bleu_signature"]}
    assert f"| {evaluated['bleu']:.1f} |" in card.text
    published = list((tmp_path / "hub" / RESULTS_DIR).iterdir())
    assert len(published) == 1 and EvalReport.load(published[0]).bleu == evaluated["bleu"]


def test_a_trained_folder_publishes_its_standard_figure_named_as_what_it_is(tmp_path):
    """A folder whose training scored the standard test set (`standard_test_results.json`) and kept it out of its
    data: the card has a model-index entry of its own for the set, says it was kept out, and how each row is scored."""
    training = REPORT.training | {"kept_out_of_training": "tatoeba-test-v2021-08-07"}
    model = make_trained_folder(tmp_path / "model", report=dataclasses.replace(REPORT, training=training))
    standard = dataclasses.replace(
        REPORT, dataset="tatoeba-test-v2021-08-07", split=None, bleu=23.4, training={}, num_references=1,
        bleu_signature="nrefs:1|case:mixed|eff:no|tok:13a|smooth:exp|version:2.6.0",
    )  # fmt: skip
    standard.save(model / STANDARD_REPORT)
    folder = build_hub_folder(model, tmp_path / "hub", REPO_ID)
    card = ModelCard.load(folder / "README.md")
    names = [r.dataset_name for r in card.data.eval_results if r.metric_type == "bleu"]
    assert names == [DATASET_NAME, "tatoeba-test-v2021-08-07 (OPUS-MT-testsets ac0f19c)"]
    assert "standard test set(s)\ntatoeba-test-v2021-08-07 (compared without case" in card.text
    assert "a standard test set\nagainst its one reference a line" in card.text
    assert sorted(p.name for p in (folder / RESULTS_DIR).iterdir()) == [
        "eval-1-tatoeba-test-v2021-08-07.json", TRAINING_REPORT,
    ]  # fmt: skip


def test_push_gives_a_folder_saved_by_an_older_release_this_releases_code(tmp_path):
    """The folder saved before the transformers 5.24 fix goes to the Hub with today's code, and the card says which
    transformers releases that code supports."""
    old = Path(shutil.copytree(LEGACY_FOLDER, tmp_path / "old"))
    REPORT.save(old)
    result = push_to_hub(old, REPO_ID, tmp_path / "out", PushSettings(dry_run=True))
    for module in SHIPPED_MODULES:
        name = Path(module.__file__).name
        assert (result.folder / name).read_bytes() == Path(module.__file__).read_bytes(), name
    card = (result.folder / "README.md").read_text(encoding="utf-8")
    assert f"`transformers` {supported_transformers()}" in card
    assert supported_transformers().startswith(">=5.")


def test_validation_refuses_a_folder_whose_beam_search_is_broken_here(tmp_path):
    """The old folder's own code gives other beam-search tokens with the cache than without it under transformers
    5.24 and later (it does not take the renamed cache): validating it then fails, naming why; under 5.20 to 5.23
    the same code decodes correctly and passes; before 5.20 its pipeline calls a method that came then
    (`Pipeline._prepare_generate_kwargs`), and validating it fails at its first translation."""
    old = Path(shutil.copytree(LEGACY_FOLDER, tmp_path / "old"))
    if not hasattr(Pipeline, "_prepare_generate_kwargs"):
        with pytest.raises(HubValidationError, match="does not load or translate without hf_seq2seq"):
            validate_hub_folder(old)
    elif CACHE_NAME == "past_key_values":
        assert validate_hub_folder(old).translation
    else:
        with pytest.raises(
            HubValidationError, match="beam search gives other tokens with the decoding cache"
        ):
            validate_hub_folder(old)

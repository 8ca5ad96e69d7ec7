"""Building, validating and uploading the Hub folder of a trained model (offline: the Hub API is monkeypatched)."""

import importlib.util
import json
import os
import shutil
from pathlib import Path

import pytest
import torch
from huggingface_hub import HfApi, ModelCard
from tokenizers import Tokenizer, decoders, models, pre_tokenizers, processors
from transformers import GenerationConfig, PreTrainedTokenizerFast

from hf_seq2seq import TransformerMTConfig, TransformerMTForConditionalGeneration, hub
from hf_seq2seq.training import RESULTS_FILE

WORDS = (
    "how are you ? i like cheese . good morning thank ! comment allez vous je aime le fromage bonjour merci"
)
SPECIAL = ["<pad>", "</s>", "<unk>"]  # the project tokenizer's layout: pad 0, eos 1, unk 2, no bos
VOCAB = {token: i for i, token in enumerate(SPECIAL + WORDS.split())}
REPO_ID = "someone/tiny-en-fr"
REPORT = hub.EvalReport(
    bleu=12.3456,
    chrf=34.5678,
    bleu_signature="nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1",
    chrf_signature="nrefs:var|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1",
    num_sentences=7,
    num_references=3,
    training={
        "preset": "tiny",
        "global_step": 3,
        "learning_rate": 0.0007,
        "best_checkpoint": "/home/me/run/ckpt-3",
    },
)


def tiny_tokenizer() -> PreTrainedTokenizerFast:
    """A word-level tokenizer over `WORDS` that appends `</s>`, wrapped for `AutoTokenizer`."""
    backend = Tokenizer(models.WordLevel(VOCAB, unk_token="<unk>"))
    backend.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    backend.post_processor = processors.TemplateProcessing(
        single="$A </s>", pair="$A </s> $B </s>", special_tokens=[("</s>", VOCAB["</s>"])]
    )
    backend.decoder = decoders.WordPiece(prefix="##", cleanup=False)
    return PreTrainedTokenizerFast(
        tokenizer_object=backend, pad_token="<pad>", eos_token="</s>", unk_token="<unk>", model_max_length=32
    )


def make_trained_folder(path: Path, seed: int = 0) -> Path:
    """A folder as training saves it: tiny model (ids matching the tokenizer), tokenizer, eval report."""
    torch.manual_seed(seed)
    config = TransformerMTConfig(
        vocab_size=len(VOCAB),
        d_model=16,
        encoder_layers=1,
        decoder_layers=1,
        encoder_attention_heads=2,
        decoder_attention_heads=2,
        encoder_ffn_dim=32,
        decoder_ffn_dim=32,
        dropout=0.0,
        max_position_embeddings=32,
        pad_token_id=VOCAB["<pad>"],
        eos_token_id=VOCAB["</s>"],
        decoder_start_token_id=VOCAB["<pad>"],
    )
    model = TransformerMTForConditionalGeneration(config)
    model.generation_config = GenerationConfig(
        pad_token_id=config.pad_token_id,
        eos_token_id=config.eos_token_id,
        decoder_start_token_id=config.decoder_start_token_id,
        max_length=12,
        num_beams=1,
    )
    model.save_pretrained(path)
    tiny_tokenizer().save_pretrained(path)
    REPORT.save(path)
    return path


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    return make_trained_folder(tmp_path_factory.mktemp("trained") / "model")


@pytest.fixture(scope="module")
def dry_run(trained, tmp_path_factory) -> hub.PushResult:
    return hub.push_to_hub(trained, REPO_ID, tmp_path_factory.mktemp("hub") / "out", dry_run=True)


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
        "pipeline_translation.py",
        hub.METRICS_FILENAME,
    }
    assert expected <= set(os.listdir(folder))
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
    assert isinstance(result.translation, str) and result.sentence == hub.DEFAULT_SENTENCE


def test_model_card_metadata_matches_the_test_results(dry_run):
    card = ModelCard.load(dry_run.folder / "README.md")
    data = card.data
    assert data.language == ["en", "fr"]
    assert data.license == "apache-2.0"
    assert data.pipeline_tag == "translation" and data.library_name == "transformers"
    assert (
        "translation" in data.tags and data.metrics == ["bleu", "chrf"] and data.datasets == [hub.DATASET_ID]
    )
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
        hub.DATA_ATTRIBUTION,
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
    published = hub.EvalReport.load(dry_run.folder / hub.METRICS_FILENAME)
    assert published == REPORT.published() and "best_checkpoint" not in published.training
    assert "(7 source sentences, up to 3 references each)" in text


@pytest.mark.parametrize(
    ("removed", "named"),
    [
        ("config.json", "config.json"),
        ("model.safetensors", "model.safetensors"),
        ("tokenizer.json", "tokenizer.json"),
        ("tokenizer_config.json", "tokenizer_config.json"),
        ("generation_config.json", "generation_config.json"),
        (hub.METRICS_FILENAME, hub.METRICS_FILENAME),
    ],
)
def test_folder_missing_a_file_is_refused_naming_it(trained, tmp_path, removed, named):
    broken = Path(shutil.copytree(trained, tmp_path / "trained"))
    (broken / removed).unlink()
    with pytest.raises(hub.MissingFileError, match=named.replace(".", r"\.")):
        hub.build_hub_folder(broken, tmp_path / "out", REPO_ID)
    assert not (tmp_path / "out").exists()


def test_pickled_weights_only_are_refused_with_a_note(trained, tmp_path):
    broken = Path(shutil.copytree(trained, tmp_path / "trained"))
    (broken / "model.safetensors").rename(broken / "pytorch_model.bin")
    with pytest.raises(hub.MissingFileError, match=r"model\.safetensors \(found only pytorch_model\.bin"):
        hub.check_trained_folder(broken)


def test_test_results_as_training_writes_them_load(tmp_path):
    assert hub.METRICS_FILENAME == RESULTS_FILE
    written = {  # the keys of hf_seq2seq.training.run's results
        "train_runtime_s": 812.5,
        "global_step": 2000,
        "bleu": 40.1,
        "chrf": 59.9,
        "bleu_signature": REPORT.bleu_signature,
        "chrf_signature": REPORT.chrf_signature,
        "num_sentences": 1171,
        "num_references": 9,
        "wall_time_s": 900.2,
        "best_checkpoint": "runs/base/checkpoint-2000",
        "best_validation_bleu": 39.5,
        "parameters": 60_000_000,
        "preset": "gpu",
        "dataset": "fra-eng",
        "direction": "fr-en",
        "train_pairs": None,
        "epochs": 3.0,
    }
    (tmp_path / RESULTS_FILE).write_text(json.dumps(written))
    report = hub.EvalReport.load(tmp_path / RESULTS_FILE)
    assert (report.bleu, report.num_sentences, report.source_lang, report.target_lang) == (
        40.1,
        1171,
        "fr",
        "en",
    )
    named = {"bleu", "chrf", "bleu_signature", "chrf_signature", "num_sentences", "num_references", "dataset"}
    assert report.training == {
        key: value for key, value in written.items() if key not in named | {"direction"} and value is not None
    }
    (tmp_path / "again").mkdir()
    assert hub.EvalReport.load(report.save(tmp_path / "again")) == report


@pytest.mark.parametrize(
    ("changes", "message"),
    [
        ({"chrf_signature": None}, "missing key.*chrf_signature"),
        ({"bleu": "41"}, "`bleu` must be a finite number"),
        ({"chrf": 0.55e3}, "`chrf` is a 0-100 score"),
        ({"direction": "english"}, "`direction` must be '<source>-<target>'"),
        ({"dataset": "wmt14"}, "describes the Tatoeba fra-eng data.*'wmt14'"),
        ({"curve": [1.0, 2.0]}, "other keys must be new names.*curve"),
    ],
)
def test_bad_test_results_are_refused(trained, tmp_path, changes, message):
    broken = Path(shutil.copytree(trained, tmp_path / "trained"))
    data = json.loads((broken / hub.METRICS_FILENAME).read_text()) | changes
    (broken / hub.METRICS_FILENAME).write_text(json.dumps({k: v for k, v in data.items() if v is not None}))
    with pytest.raises(hub.HubFolderError, match=message):
        hub.check_trained_folder(broken)


def test_tokenizer_model_mismatch_is_refused(trained, tmp_path):
    broken = Path(shutil.copytree(trained, tmp_path / "trained"))
    config = json.loads((broken / "config.json").read_text())
    (broken / "config.json").write_text(json.dumps({**config, "eos_token_id": 5}))
    with pytest.raises(hub.HubFolderError, match="config.json eos_token_id=5 but the tokenizer's is 1"):
        hub.build_hub_folder(broken, tmp_path / "out", REPO_ID)


def test_output_folder_must_be_new_and_outside_the_trained_folder(trained, tmp_path):
    with pytest.raises(hub.HubFolderError, match="outside the trained folder"):
        hub.build_hub_folder(trained, trained / "hub", REPO_ID)
    (tmp_path / "used").mkdir()
    (tmp_path / "used" / "keep.txt").write_text("x")
    with pytest.raises(hub.HubFolderError, match="must be new or empty"):
        hub.build_hub_folder(trained, tmp_path / "used", REPO_ID)


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
    with pytest.raises(hub.InvalidRepoIdError, match=r"(?i)repo id"):
        hub.push_to_hub(trained, repo_id, tmp_path / "out", token="hf_fake")
    assert not (tmp_path / "out").exists()


def test_upload_validates_first_then_creates_repo_and_uploads_the_folder(
    trained, tmp_path, monkeypatch, hub_api_calls
):
    validated: list[Path] = []

    def validate(folder, sentence=hub.DEFAULT_SENTENCE):  # the real check runs in the dry-run test
        assert not hub_api_calls, "validation must come before any upload call"
        validated.append(folder)
        return hub.ValidationResult(folder, "C", "M", "T", "P", ("translation",), sentence, "bonjour")

    monkeypatch.setattr(hub, "validate_hub_folder", validate)
    result = hub.push_to_hub(trained, REPO_ID, tmp_path / "out", private=True, token="hf_fake")

    assert validated == [tmp_path / "out"]
    assert [name for name, _ in hub_api_calls] == ["create_repo", "upload_folder"]
    create, upload = hub_api_calls[0][1], hub_api_calls[1][1]
    assert create == {"repo_id": REPO_ID, "token": "hf_fake", "private": True, "exist_ok": True}
    assert upload["repo_id"] == REPO_ID and Path(upload["folder_path"]) == tmp_path / "out"
    assert upload["token"] == "hf_fake"
    assert upload["commit_message"] == "Upload someone/tiny-en-fr: BLEU 12.3, chrF 34.6 (test)"
    assert {"README.md", "model.safetensors", "config.json", "tokenizer.json"} <= set(upload["files"])
    assert result.uploaded and result.commit_url.endswith("/commit/abc")
    assert result.repo_url == f"https://huggingface.co/{REPO_ID}"


def test_broken_folder_fails_validation_with_the_stderr_tail(trained, tmp_path):
    folder = hub.build_hub_folder(trained, tmp_path / "out", REPO_ID)
    modeling = folder / "modeling_transformer_mt.py"
    modeling.write_text(modeling.read_text() + "\nraise RuntimeError('broken modeling file')\n")
    with pytest.raises(hub.HubValidationError, match="broken modeling file") as info:
        hub.validate_hub_folder(folder)
    assert "does not load or translate without hf_seq2seq" in str(info.value)
    assert "broken modeling file" in info.value.stderr


def test_failed_validation_uploads_nothing(trained, tmp_path, monkeypatch, hub_api_calls):
    def validate(folder, sentence=hub.DEFAULT_SENTENCE):
        raise hub.HubValidationError("does not load", "Traceback ...")

    monkeypatch.setattr(hub, "validate_hub_folder", validate)
    with pytest.raises(hub.HubValidationError):
        hub.push_to_hub(trained, REPO_ID, tmp_path / "out", token="hf_fake")
    assert not hub_api_calls


def load_cli():
    spec = importlib.util.spec_from_file_location(
        "push_to_hub_cli", Path(__file__).parents[1] / "scripts" / "push_to_hub.py"
    )
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_cli_passes_its_options_and_reports_errors(tmp_path, monkeypatch, capsys):
    cli = load_cli()
    received = {}

    def push(trained_dir, repo_id, output_dir, **kwargs):
        received.update(trained_dir=trained_dir, repo_id=repo_id, output_dir=output_dir, **kwargs)
        validation = hub.ValidationResult(tmp_path, "C", "M", "T", "P", ("translation",), "Hi", "Salut")
        return hub.PushResult(folder=tmp_path, validation=validation)

    monkeypatch.setattr(hub, "push_to_hub", push)
    argv = ["runs/base", REPO_ID, "--dry-run", "--private", "--token", "hf_x", "--output-dir", str(tmp_path)]
    assert cli.main(argv) == 0
    assert received == {
        "trained_dir": "runs/base",
        "repo_id": REPO_ID,
        "output_dir": str(tmp_path),
        "private": True,
        "token": "hf_x",
        "commit_message": None,
        "dry_run": True,
        "sentence": hub.DEFAULT_SENTENCE,
    }
    assert "Dry run: nothing uploaded" in capsys.readouterr().out

    monkeypatch.undo()
    assert cli.main(["runs/base", "no-namespace", "--dry-run"]) == 1
    assert "error: Repo id must be 'namespace/name'" in capsys.readouterr().err

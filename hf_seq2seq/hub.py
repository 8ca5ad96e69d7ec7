"""Turn a trained folder into the folder that goes to the Hugging Face Hub, check it, and upload it.

Input: a *trained folder*, as the training script saves it (``save_pretrained`` of the model and the
tokenizer, plus the evaluation report). Required files, checked before anything else:

* ``config.json``, ``model.safetensors`` (or a sharded ``model.safetensors.index.json``),
  ``generation_config.json``: the model (``model.save_pretrained``);
* ``tokenizer.json``, ``tokenizer_config.json``: the tokenizer (``tokenizer.save_pretrained``);
* :data:`METRICS_FILENAME` (``test_results.json``): the test-set scores and facts about the run, an
  :class:`EvalReport`.

Test results (``test_results.json``), as ``hf_seq2seq.training`` writes them (``RESULTS_FILE``)::

    {
      "bleu": 41.27,              # required: corpus BLEU (sacrebleu, 0-100)
      "chrf": 60.05,              # required: chrF (sacrebleu, 0-100)
      "bleu_signature": "nrefs:var|case:mixed|eff:no|tok:13a|smooth:exp|version:2.5.1",   # required
      "chrf_signature": "nrefs:var|case:mixed|eff:yes|nc:6|nw:0|space:no|version:2.5.1",  # required
      "num_sentences": 1171,      # optional: source sentences scored
      "num_references": 9,        # optional: most references of one sentence
      "direction": "en-fr",       # optional (default "en-fr"): source-target language codes
      "dataset": "fra-eng",       # optional (default "fra-eng"); the card describes only this data
      "split": "test",            # optional (default "test"): the split that was scored
      "preset": "gpu", "global_step": 20000, "epochs": 11.3, ...   # any other key: a fact about the run
    }

Keys other than the named ones must hold a string, number, boolean or null; they are kept in
``EvalReport.training`` (nulls dropped) and listed in the card's "Training run" table.

Output: :func:`build_hub_folder` loads the model and tokenizer with the Auto classes and saves them into a
fresh folder (safetensors weights, ``config.json`` with ``auto_map`` and ``custom_pipelines``, the
configuration/modeling code, ``pipeline_translation.py``, tokenizer files, ``generation_config.json``),
copies the test results, and renders the model card (``README.md``) from ``model_card_template.md`` with
``huggingface_hub.ModelCard`` (the model-index comes from the report via ``EvalResult``).
:func:`validate_hub_folder` loads that folder in a fresh process, offline and without this package, through
``AutoConfig``, ``AutoTokenizer``, ``AutoModelForSeq2SeqLM`` and ``pipeline("translation")``, and translates a
sentence. :func:`push_to_hub` does all of it and uploads (``dry_run=True`` stops before the upload).
"""

from __future__ import annotations

import datetime
import importlib.resources
import json
import math
import os
import shutil
import subprocess
import sys
import tempfile
from dataclasses import MISSING, dataclass, field, fields, replace
from pathlib import Path
from typing import Any

import transformers
from huggingface_hub import EvalResult, HfApi, ModelCard, ModelCardData
from huggingface_hub.utils import HFValidationError, validate_repo_id
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from . import pipeline_translation

__all__ = [
    "DEFAULT_SENTENCE",
    "METRICS_FILENAME",
    "EvalReport",
    "HubFolderError",
    "HubValidationError",
    "InvalidRepoIdError",
    "MissingFileError",
    "PushResult",
    "ValidationResult",
    "build_hub_folder",
    "check_repo_id",
    "check_trained_folder",
    "pipeline_tasks",
    "push_to_hub",
    "render_model_card",
    "validate_hub_folder",
]

METRICS_FILENAME = "test_results.json"
"""The test results in a trained folder (schema: :class:`EvalReport`); ``hf_seq2seq.training.RESULTS_FILE``."""

CARD_TEMPLATE = "model_card_template.md"
"""Jinja template of the model card, shipped as package data next to this module."""

PIPELINE_FILENAME = Path(pipeline_translation.__file__).name
PIPELINE_IMPL = f"{Path(PIPELINE_FILENAME).stem}.{pipeline_translation.TranslationPipeline.__name__}"

DATASET_ID = "tatoeba"
"""``datasets`` entry of the card metadata: the sentences come from the Tatoeba Project."""
DATASET_NAME = "Tatoeba English-French (manythings.org/anki export of 2019-04-07, d2l fra-eng)"
DATA_ATTRIBUTION = "www.manythings.org/anki and tatoeba.org"
DATA_LICENSE = "CC-BY 2.0 FR"
DATA_LICENSE_URL = "https://creativecommons.org/licenses/by/2.0/fr/"
LICENSE = "apache-2.0"

DEFAULT_SENTENCE = "How are you?"
"""Sentence translated by :func:`validate_hub_folder`."""

LANGUAGE_NAMES = {"en": "English", "fr": "French"}
_WEIGHTS_FILES = ("model.safetensors", "model.safetensors.index.json")
_PICKLE_WEIGHTS_FILES = ("pytorch_model.bin", "pytorch_model.bin.index.json")
_TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
_UNPUBLISHED_KEYS = ("best_checkpoint",)  # a path on the training machine
_VALIDATION_MARKER = "HF_SEQ2SEQ_VALIDATION_RESULT="
_STDERR_TAIL = 4000


class MissingFileError(FileNotFoundError):
    """A trained folder lacks a file the Hub folder needs; the message names every missing file."""


class HubFolderError(ValueError):
    """A trained folder is complete but inconsistent (bad report, weights or special tokens)."""


class InvalidRepoIdError(ValueError):
    """A repo id that the Hub would refuse, or one without a namespace (``user/name``)."""


class HubValidationError(RuntimeError):
    """The built folder failed to load or translate in a fresh process; ``stderr`` is that process's stderr."""

    def __init__(self, message: str, stderr: str = ""):
        super().__init__(message)
        self.stderr = stderr


Scalar = str | int | float | bool


@dataclass(frozen=True)
class EvalReport:
    """Test-set scores of one trained model and facts about its run: ``test_results.json`` (module docstring).

    ``bleu``/``chrf`` are sacrebleu corpus scores (0-100) and the signatures sacrebleu's
    ``metric.get_signature()`` strings. ``direction`` is ``"<source>-<target>"``; ``training`` holds every
    other key of the file (preset, steps, epochs, run time, ...), shown in the card.
    """

    bleu: float
    chrf: float
    bleu_signature: str
    chrf_signature: str
    num_sentences: int | None = None
    num_references: int | None = None
    direction: str = "en-fr"
    dataset: str = "fra-eng"
    split: str = "test"
    training: dict[str, Scalar] = field(default_factory=dict)

    def __post_init__(self) -> None:
        for name in ("bleu", "chrf"):
            value = getattr(self, name)
            if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
                raise HubFolderError(f"{METRICS_FILENAME}: `{name}` must be a finite number, got {value!r}")
            if not 0 <= value <= 100:
                raise HubFolderError(f"{METRICS_FILENAME}: `{name}` is a 0-100 score, got {value!r}")
        for name in ("bleu_signature", "chrf_signature", "direction", "dataset", "split"):
            value = getattr(self, name)
            if not isinstance(value, str) or not value.strip():
                raise HubFolderError(
                    f"{METRICS_FILENAME}: `{name}` must be a non-empty string, got {value!r}"
                )
        for name in ("num_sentences", "num_references"):
            value = getattr(self, name)
            if value is not None and (isinstance(value, bool) or not isinstance(value, int) or value <= 0):
                raise HubFolderError(
                    f"{METRICS_FILENAME}: `{name}` must be a positive integer, got {value!r}"
                )
        if len(self.direction.split("-")) != 2 or not all(self.direction.split("-")):
            raise HubFolderError(
                f"{METRICS_FILENAME}: `direction` must be '<source>-<target>' (e.g. 'en-fr'), got {self.direction!r}"
            )
        if self.dataset != "fra-eng":
            raise HubFolderError(
                f"{METRICS_FILENAME}: the model card describes the Tatoeba fra-eng data, but this model was "
                f"evaluated on dataset {self.dataset!r}; adapt model_card_template.md before publishing it"
            )
        bad = {
            key: value
            for key, value in self.training.items()
            if not isinstance(key, str) or key in self._named_keys() or not isinstance(value, Scalar)
        }
        if bad:
            raise HubFolderError(
                f"{METRICS_FILENAME}: other keys must be new names holding a string, number or boolean; got {bad!r}"
            )

    @classmethod
    def _named_keys(cls) -> list[str]:
        return [f.name for f in fields(cls) if f.name != "training"]

    @property
    def source_lang(self) -> str:
        """Source language code (first half of ``direction``)."""
        return self.direction.split("-")[0]

    @property
    def target_lang(self) -> str:
        """Target language code (second half of ``direction``)."""
        return self.direction.split("-")[1]

    def published(self) -> EvalReport:
        """This report without what only makes sense on the training machine (checkpoint paths)."""
        return replace(
            self,
            training={key: value for key, value in self.training.items() if key not in _UNPUBLISHED_KEYS},
        )

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> EvalReport:
        """Read and check a ``test_results.json``; `HubFolderError` names any missing or bad key."""
        path = Path(path)
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except json.JSONDecodeError as error:
            raise HubFolderError(f"{path} is not valid JSON: {error}") from error
        if not isinstance(data, dict):
            raise HubFolderError(f"{path} must hold a JSON object, got {type(data).__name__}")
        required = [f.name for f in fields(cls) if f.default is MISSING and f.default_factory is MISSING]
        missing = [key for key in required if key not in data]
        if missing:
            raise HubFolderError(
                f"{path}: missing key(s) {', '.join(missing)} (required: {', '.join(required)}; "
                "see hf_seq2seq.hub.EvalReport)"
            )
        named = {key: value for key, value in data.items() if key in cls._named_keys() and value is not None}
        training = {key: value for key, value in data.items() if key not in named and value is not None}
        return cls(**named, training=training)

    def save(self, folder: str | os.PathLike[str]) -> Path:
        """Write this report (flat, as training writes it) to ``folder/test_results.json``; return the path."""
        data = {key: getattr(self, key) for key in self._named_keys()} | self.training
        path = Path(folder) / METRICS_FILENAME
        path.write_text(json.dumps(data, indent=2, ensure_ascii=False) + "\n", encoding="utf-8")
        return path


@dataclass(frozen=True)
class ValidationResult:
    """What a fresh, offline process without ``hf_seq2seq`` loaded from a Hub folder, and its translations."""

    folder: Path
    config_class: str
    model_class: str
    tokenizer_class: str
    pipeline_class: str
    pipeline_tasks: tuple[str, ...]
    sentence: str
    translation: str
    """``model.generate`` on the sentence, decoded; every pipeline task gave the same text."""


@dataclass(frozen=True)
class PushResult:
    """Outcome of :func:`push_to_hub`: the folder built (already deleted if it was a temporary one and was
    uploaded), its validation, and the repo and commit URLs (``None`` on a dry run)."""

    folder: Path
    validation: ValidationResult
    repo_url: str | None = None
    commit_url: str | None = None

    @property
    def uploaded(self) -> bool:
        """Whether the folder was uploaded (false for a dry run)."""
        return self.commit_url is not None


def check_repo_id(repo_id: str) -> None:
    """Refuse a repo id that is not ``namespace/name`` or that the Hub would reject; no network access."""
    if not isinstance(repo_id, str) or repo_id.count("/") != 1 or not all(repo_id.split("/")):
        raise InvalidRepoIdError(
            f"Repo id must be 'namespace/name' (your user or organisation, a slash, the model name), got {repo_id!r}"
        )
    try:
        validate_repo_id(repo_id)
    except HFValidationError as error:
        raise InvalidRepoIdError(f"Invalid repo id {repo_id!r}: {error}") from error


def check_trained_folder(folder: str | os.PathLike[str]) -> EvalReport:
    """Check that ``folder`` holds every file the Hub folder is built from; return its evaluation report.

    Raises `MissingFileError` naming each missing file (a folder holding only pickled
    ``pytorch_model.bin`` weights is refused with a note saying so), `HubFolderError` for a bad report.
    """
    folder = Path(folder)
    if not folder.is_dir():
        raise MissingFileError(f"Folder {folder} does not exist or is not a directory")
    present = {path.name for path in folder.iterdir()}
    missing: list[str] = []
    if "config.json" not in present:
        missing.append("config.json")
    if not present & set(_WEIGHTS_FILES):
        pickles = sorted(present & set(_PICKLE_WEIGHTS_FILES))
        note = (
            f" (found only {', '.join(pickles)}: pickled weights are not shipped; re-save with "
            "`model.save_pretrained(folder)`, which writes safetensors)"
            if pickles
            else ""
        )
        missing.append(f"model.safetensors{note}")
    missing += [name for name in _TOKENIZER_FILES if name not in present]
    if "generation_config.json" not in present:
        missing.append("generation_config.json")
    if METRICS_FILENAME not in present:
        missing.append(
            f"{METRICS_FILENAME} (the test results written by training; see hf_seq2seq.hub.EvalReport)"
        )
    if missing:
        raise MissingFileError(f"Folder {folder} is missing required file(s): {'; '.join(missing)}")
    return EvalReport.load(folder / METRICS_FILENAME)


def pipeline_tasks(report: EvalReport) -> tuple[str, ...]:
    """Task names under which ``pipeline(..., trust_remote_code=True)`` finds the shipped translation pipeline."""
    return ("translation", f"translation_{report.source_lang}_to_{report.target_lang}")


def _check_loading_info(folder: Path, info: dict[str, Any]) -> None:
    problems = {
        key: info[key] for key in ("missing_keys", "unexpected_keys", "mismatched_keys") if info.get(key)
    }
    if problems:
        raise HubFolderError(f"The weights in {folder} do not fit this package's model code: {problems}")


def _check_special_tokens(folder: Path, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> None:
    """The config, the generation config and the tokenizer must agree on pad/eos ids and the vocabulary."""
    problems = []
    for source, settings in (
        ("config.json", model.config),
        ("generation_config.json", model.generation_config),
    ):
        for name in ("pad_token_id", "eos_token_id"):
            expected, configured = getattr(tokenizer, name), getattr(settings, name)
            if configured != expected and not (isinstance(configured, list) and expected in configured):
                problems.append(f"{source} {name}={configured!r} but the tokenizer's is {expected!r}")
    if len(tokenizer) > model.config.vocab_size:
        problems.append(
            f"the tokenizer has {len(tokenizer)} tokens but config.json vocab_size={model.config.vocab_size}"
        )
    if problems:
        raise HubFolderError(f"Tokenizer and model in {folder} disagree: " + "; ".join(problems))


def _language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, code)


def _citation(repo_id: str, report: EvalReport) -> str:
    year = datetime.date.today().year
    key = repo_id.replace("/", "_").replace("-", "_").replace(".", "_")
    title = (
        f"{_language_name(report.source_lang)}-{_language_name(report.target_lang)} Transformer: {repo_id}"
    )
    return "\n".join(
        [
            f"@misc{{{key},",
            f"  title        = {{{title}}},",
            f"  author       = {{{repo_id.split('/')[0]}}},",
            f"  year         = {{{year}}},",
            f"  howpublished = {{\\url{{https://huggingface.co/{repo_id}}}}},",
            "}",
        ]
    )


def render_model_card(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, report: EvalReport, repo_id: str
) -> ModelCard:
    """The model card of ``model`` as it will be published under ``repo_id``, with ``report``'s scores.

    Metadata (language, license, tags, datasets, metrics, ``model-index``) is built with ``ModelCardData``
    and ``EvalResult``; the text is ``model_card_template.md`` filled with the model's configuration.
    """
    check_repo_id(repo_id)
    report = report.published()
    config = model.config
    language_pair = f"{report.source_lang}-{report.target_lang}"
    metric_rows = (
        ("bleu", "BLEU", report.bleu, report.bleu_signature),
        ("chrf", "chrF", report.chrf, report.chrf_signature),
    )
    eval_results = [
        EvalResult(
            task_type="translation",
            task_name=f"Translation {language_pair}",
            dataset_type=DATASET_ID,
            dataset_name=DATASET_NAME,
            dataset_config=language_pair,
            dataset_split=report.split,
            metric_type=metric_type,
            metric_name=metric_name,
            metric_value=value,
            metric_args={"signature": signature},
        )
        for metric_type, metric_name, value, signature in metric_rows
    ]
    card_data = ModelCardData(
        model_name=repo_id,
        language=[report.source_lang, report.target_lang],
        license=LICENSE,
        library_name="transformers",
        pipeline_tag="translation",
        tags=["translation", "seq2seq", "transformer", config.model_type, "custom_code"],
        datasets=[DATASET_ID],
        metrics=["bleu", "chrf"],
        eval_results=eval_results,
    )
    architecture = {
        "Layers (encoder + decoder)": f"{config.encoder_layers} + {config.decoder_layers}",
        "Model width (d_model)": config.d_model,
        "Attention heads (encoder / decoder)": f"{config.encoder_attention_heads} / {config.decoder_attention_heads}",
        "Feed-forward width (encoder / decoder)": f"{config.encoder_ffn_dim} / {config.decoder_ffn_dim}",
        "Activation": config.activation_function,
        "Residual layout": "pre-LN" if config.normalize_before else "post-LN (as in the paper)",
        "Positions": f"sinusoidal, up to {config.max_position_embeddings} tokens",
        "Embeddings": "one matrix for source, target and output layer"
        if config.tie_word_embeddings
        else "one matrix for source and target, separate output layer",
        "Dropout / attention / activation dropout": (
            f"{config.dropout} / {config.attention_dropout} / {config.activation_dropout}"
        ),
        "Label smoothing": config.label_smoothing,
        "Vocabulary": config.vocab_size,
        "Parameters": f"{model.num_parameters():,}",
    }
    generation = {
        key: value
        for key, value in model.generation_config.to_diff_dict().items()
        if key != "transformers_version" and not key.endswith("token_id")
    }
    special_tokens = sorted(
        (tokenizer.convert_tokens_to_ids(token), token) for token in tokenizer.all_special_tokens
    )
    backend = getattr(tokenizer, "backend_tokenizer", None)
    template = importlib.resources.files(__package__).joinpath(CARD_TEMPLATE).read_text(encoding="utf-8")
    return ModelCard.from_template(
        card_data,
        template_str=template,
        repo_id=repo_id,
        model_type=config.model_type,
        source_language=_language_name(report.source_lang),
        target_language=_language_name(report.target_lang),
        report=report,
        architecture=architecture,
        generation=generation,
        tokenizer_class=type(tokenizer).__name__,
        tokenizer_model=type(backend.model).__name__ if backend is not None else None,
        tokenizer_size=len(tokenizer),
        special_tokens=special_tokens,
        decoder_start_token_id=config.decoder_start_token_id,
        max_positions=config.max_position_embeddings,
        pipeline_tasks=pipeline_tasks(report),
        pipeline_file=PIPELINE_FILENAME,
        metrics_file=METRICS_FILENAME,
        dataset_name=DATASET_NAME,
        data_attribution=DATA_ATTRIBUTION,
        data_license=DATA_LICENSE,
        data_license_url=DATA_LICENSE_URL,
        transformers_version=transformers.__version__,
        citation=_citation(repo_id, report),
    )


def _check_output_dir(trained_dir: Path, output_dir: Path) -> Path:
    """The resolved ``output_dir``, refused if it overlaps ``trained_dir`` or holds anything."""
    trained, output = trained_dir.resolve(), output_dir.resolve()
    if output == trained or trained in output.parents or output in trained.parents:
        raise HubFolderError(
            f"The output folder {output} must be outside the trained folder {trained} and vice versa"
        )
    if output.exists() and (not output.is_dir() or any(output.iterdir())):
        raise HubFolderError(f"The output folder {output} must be new or empty; remove it or pick another")
    return output


def build_hub_folder(
    trained_dir: str | os.PathLike[str], output_dir: str | os.PathLike[str], repo_id: str
) -> Path:
    """Build in ``output_dir`` (new or empty) the exact folder that goes to the Hub as ``repo_id``.

    The model and tokenizer are loaded from ``trained_dir`` with the Auto classes (this package's code) and
    saved again, so the folder always holds safetensors weights, ``config.json`` with ``auto_map`` and
    ``custom_pipelines``, the configuration/modeling/pipeline code, the tokenizer files and
    ``generation_config.json``; then ``test_results.json`` and the model card ``README.md``. Returns the folder.
    """
    check_repo_id(repo_id)
    trained_dir = Path(trained_dir)
    report = check_trained_folder(trained_dir).published()
    output = _check_output_dir(trained_dir, Path(output_dir))
    model, info = AutoModelForSeq2SeqLM.from_pretrained(
        trained_dir, trust_remote_code=False, output_loading_info=True
    )
    _check_loading_info(trained_dir, info)
    tokenizer = AutoTokenizer.from_pretrained(trained_dir)
    _check_special_tokens(trained_dir, model, tokenizer)
    for load_time_key in ("is_local", "local_files_only"):  # how *this* load went; not for the Hub's config
        tokenizer.init_kwargs.pop(load_time_key, None)
    model.config.custom_pipelines = {
        task: {"impl": PIPELINE_IMPL, "pt": ["AutoModelForSeq2SeqLM"], "type": "text"}
        for task in pipeline_tasks(report)
    }
    output.mkdir(parents=True, exist_ok=True)
    model.save_pretrained(output)
    shutil.copyfile(pipeline_translation.__file__, output / PIPELINE_FILENAME)
    tokenizer.save_pretrained(output)
    report.save(output)
    render_model_card(model, tokenizer, report, repo_id).save(output / "README.md")
    return output


_VALIDATION_SCRIPT = """
import json, sys
sys.modules["hf_seq2seq"] = None  # the folder must load without the package
folder, sentence, tasks, marker = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
import torch
from transformers import AutoConfig, AutoModelForSeq2SeqLM, AutoTokenizer, pipeline

config = AutoConfig.from_pretrained(folder, trust_remote_code=True)
tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=True)
model, info = AutoModelForSeq2SeqLM.from_pretrained(folder, trust_remote_code=True, output_loading_info=True)
problems = {k: info[k] for k in ("missing_keys", "unexpected_keys", "mismatched_keys") if info.get(k)}
if problems:
    raise SystemExit(f"weights do not fit the shipped model code: {problems}")
for obj in (config, model):
    if not type(obj).__module__.startswith("transformers_modules"):
        raise SystemExit(f"{type(obj).__name__} came from {type(obj).__module__}, not from the folder's code")
model.eval()
with torch.no_grad():
    output_ids = model.generate(**tokenizer(sentence, truncation=True, return_tensors="pt"))
translation = tokenizer.decode(output_ids[0], skip_special_tokens=True)
pipeline_classes = set()
for task in tasks:
    translator = pipeline(task, model=folder, trust_remote_code=True)
    pipeline_classes.add(type(translator).__name__)
    records = translator(sentence)
    if records != [{"translation_text": translation}]:
        raise SystemExit(f"pipeline({task!r}) gave {records!r}, model.generate gave {translation!r}")
print(marker + json.dumps({
    "config_class": type(config).__name__,
    "model_class": type(model).__name__,
    "tokenizer_class": type(tokenizer).__name__,
    "pipeline_class": ", ".join(sorted(pipeline_classes)),
    "translation": translation,
}))
"""


def validate_hub_folder(
    folder: str | os.PathLike[str], sentence: str = DEFAULT_SENTENCE, timeout: float = 600
) -> ValidationResult:
    """Load ``folder`` as a Hub user would and translate ``sentence``, in a fresh process.

    That process runs offline (``HF_HUB_OFFLINE=1``), with an empty dynamic-module cache and with
    ``hf_seq2seq`` made unimportable; it loads ``AutoConfig``, ``AutoTokenizer`` and ``AutoModelForSeq2SeqLM``
    with ``trust_remote_code=True``, checks that config and model come from the folder's code and that every
    weight was loaded, then checks that ``pipeline(task, model=folder, trust_remote_code=True)`` gives the same
    translation as ``model.generate`` for each task of :func:`pipeline_tasks`. Raises `HubValidationError`
    with the tail of the process's stderr on any failure.
    """
    folder = Path(folder).resolve()
    report = check_trained_folder(folder)
    tasks = pipeline_tasks(report)
    with tempfile.TemporaryDirectory(prefix="hf_seq2seq_validate_") as workdir:
        env = dict(
            os.environ,
            HF_HUB_OFFLINE="1",
            HF_MODULES_CACHE=str(Path(workdir) / "modules"),
            TOKENIZERS_PARALLELISM="false",
        )
        command = [
            sys.executable,
            "-c",
            _VALIDATION_SCRIPT,
            str(folder),
            sentence,
            json.dumps(tasks),
            _VALIDATION_MARKER,
        ]
        try:
            completed = subprocess.run(
                command, cwd=workdir, env=env, capture_output=True, text=True, timeout=timeout
            )
        except subprocess.TimeoutExpired as error:
            stderr = (
                error.stderr.decode(errors="replace")
                if isinstance(error.stderr, bytes)
                else error.stderr or ""
            )
            raise HubValidationError(
                f"Validating {folder} took longer than {timeout} s; stderr tail:\n{stderr[-_STDERR_TAIL:]}",
                stderr,
            ) from error
    lines = [line for line in completed.stdout.splitlines() if line.startswith(_VALIDATION_MARKER)]
    if completed.returncode != 0 or not lines:
        raise HubValidationError(
            f"{folder} does not load or translate without hf_seq2seq (exit code {completed.returncode}); "
            f"stderr tail:\n{completed.stderr[-_STDERR_TAIL:]}",
            completed.stderr,
        )
    loaded = json.loads(lines[-1][len(_VALIDATION_MARKER) :])
    return ValidationResult(folder=folder, pipeline_tasks=tasks, sentence=sentence, **loaded)


def push_to_hub(
    trained_dir: str | os.PathLike[str],
    repo_id: str,
    output_dir: str | os.PathLike[str] | None = None,
    *,
    private: bool = False,
    token: str | None = None,
    commit_message: str | None = None,
    dry_run: bool = False,
    sentence: str = DEFAULT_SENTENCE,
) -> PushResult:
    """Build the Hub folder of ``trained_dir`` in ``output_dir``, validate it, and upload it to ``repo_id``.

    The repo id and the trained folder are checked before any network access. With ``dry_run`` nothing is
    uploaded. Otherwise the repo is created if needed (``private`` applies to a new repo only) and the folder
    is uploaded in one commit. ``token`` defaults to the one huggingface_hub finds (``HF_TOKEN``,
    ``hf auth login``). Without ``output_dir`` the folder is built in a new temporary directory, which is
    kept after a dry run or a failure (for inspection) and deleted after a successful upload.
    """
    check_repo_id(repo_id)
    report = check_trained_folder(trained_dir)
    temporary = output_dir is None
    if temporary:
        output_dir = tempfile.mkdtemp(prefix=f"{repo_id.split('/')[1]}-hub-")
    folder = build_hub_folder(trained_dir, output_dir, repo_id)
    validation = validate_hub_folder(folder, sentence)
    if dry_run:
        return PushResult(folder=folder, validation=validation)
    api = HfApi(token=token)
    repo_url = api.create_repo(repo_id, private=private, exist_ok=True)
    commit = api.upload_folder(
        repo_id=repo_id,
        folder_path=folder,
        commit_message=commit_message
        or f"Upload {repo_id}: BLEU {report.bleu:.1f}, chrF {report.chrf:.1f} ({report.split})",
    )
    if temporary:
        shutil.rmtree(folder)
    return PushResult(
        folder=folder, validation=validation, repo_url=str(repo_url), commit_url=commit.commit_url
    )

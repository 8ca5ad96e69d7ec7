"""Turn a trained folder into the folder that goes to the Hugging Face Hub, check it, and upload it.

Input: a model folder as training saves it (checked by `hf_seq2seq.folder.check_model_folder`) and one or more
results (`hf_seq2seq.report.EvalReport`): the folder's own `test_results.json` when training wrote one, plus
any `eval_report.json` of `hf-seq2seq evaluate` given with `reports=`. Each result is one `model-index` entry
of the card.

Output: :func:`build_hub_folder` loads the model and tokenizer with the Auto classes and saves them into a
fresh folder (safetensors weights, ``config.json`` with ``auto_map`` and ``custom_pipelines``, the
configuration/modeling code, ``pipeline_translation.py``, tokenizer files, ``generation_config.json``),
copies the results into ``results/``, and renders the model card (``README.md``) from
``model_card_template.md`` with ``huggingface_hub.ModelCard``.
:func:`validate_hub_folder` loads that folder in a fresh process, offline and without this package, through
``AutoConfig``, ``AutoTokenizer``, ``AutoModelForSeq2SeqLM`` and ``pipeline("translation")``, and translates a
sentence. :func:`push_to_hub` does all of it and uploads (``dry_run=True`` stops before the upload).
"""

from __future__ import annotations

import datetime
import importlib.metadata
import importlib.resources
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import transformers
from huggingface_hub import EvalResult, HfApi, ModelCard, ModelCardData
from huggingface_hub.utils import HFValidationError, validate_repo_id
from packaging.requirements import Requirement
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from .folder import PIPELINE_FILE, check_model_folder, pipeline_tasks, register_pipeline, save_model_folder
from .report import TRAINING_REPORT, EvalReport

__all__ = [
    "DEFAULT_SENTENCE",
    "HubFolderError",
    "HubValidationError",
    "InvalidRepoIdError",
    "PushResult",
    "ValidationResult",
    "build_hub_folder",
    "check_repo_id",
    "load_reports",
    "push_to_hub",
    "render_model_card",
    "validate_hub_folder",
]

CARD_TEMPLATE = "model_card_template.md"
"""Jinja template of the model card, shipped as package data next to this module."""
RESULTS_DIR = "results"
CTRANSLATE2_DIR = "ctranslate2"  # the CTranslate2 export, with `push --with-ctranslate2`
ONNX_DIR = "onnx"  # the ONNX export's graphs and config, with `push --with-onnx`
"""Folder of the Hub folder that holds the published results, one JSON file each."""

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
_VALIDATION_MARKER = "HF_SEQ2SEQ_VALIDATION_RESULT="
_STDERR_TAIL = 4000


class HubFolderError(ValueError):
    """A trained folder is complete but inconsistent (results, weights or special tokens)."""


class InvalidRepoIdError(ValueError):
    """A repo id that the Hub would refuse, or one without a namespace (``user/name``)."""


class HubValidationError(RuntimeError):
    """The built folder failed to load or translate in a fresh process; ``stderr`` is that process's stderr."""

    def __init__(self, message: str, stderr: str = ""):
        super().__init__(message)
        self.stderr = stderr


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
    space_folder: Path | None = None
    """The Gradio Space folder built beside ``folder`` (`push --with-space`), or None."""
    space_url: str | None = None

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


def load_reports(
    trained_dir: str | os.PathLike[str], reports: Sequence[str | os.PathLike[str]] = ()
) -> list[EvalReport]:
    """The results to publish: the folder's own `test_results.json` (if training wrote one), then `reports`.

    Raises `HubFolderError` when there is none, or when the results disagree on the translation direction or
    the training data is not the Tatoeba fra-eng data the card describes; `ReportError` for a bad file.
    """
    paths = [Path(trained_dir) / TRAINING_REPORT] if (Path(trained_dir) / TRAINING_REPORT).is_file() else []
    paths += [Path(path) for path in reports]
    if not paths:
        raise HubFolderError(
            f"{trained_dir} has no {TRAINING_REPORT} (written by training) and no result was given: pass the "
            "eval_report.json of `hf-seq2seq evaluate` with --report"
        )
    loaded = [EvalReport.load(path).published() for path in paths]
    directions = {report.direction for report in loaded}
    if len(directions) > 1:
        raise HubFolderError(f"the results are for different directions: {', '.join(sorted(directions))}")
    trained_on = {report.dataset for report in loaded if report.training}
    if trained_on - {"fra-eng"}:
        raise HubFolderError(
            f"the model card describes the Tatoeba fra-eng data, but this model was trained on "
            f"{', '.join(sorted(trained_on))}; adapt model_card_template.md before publishing it"
        )
    return loaded


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


def _dataset_of(report: EvalReport) -> tuple[str, str]:
    """(`dataset_type`, `dataset_name`) of a result's model-index entry."""
    if report.dataset == "fra-eng":
        return DATASET_ID, DATASET_NAME
    name = Path(report.dataset).name if not report.split else report.dataset
    return name, f"{name} ({report.split} split)" if report.split else f"{name} (plain text)"


def supported_transformers() -> str:
    """The transformers releases this package supports, as its metadata (pyproject.toml) declares: e.g. >=5.13, <6."""
    for line in importlib.metadata.requires("hf_seq2seq") or ():
        requirement = Requirement(line)
        if requirement.name == "transformers":
            return ", ".join(sorted(map(str, requirement.specifier), reverse=True))  # >= first
    raise RuntimeError("hf_seq2seq's metadata names no transformers requirement; reinstall the package")


def render_model_card(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    reports: Sequence[EvalReport],
    repo_id: str,
    ctranslate2: str | None = None,
    space: str | None = None,
    onnx: bool = False,
) -> ModelCard:
    """The model card of ``model`` as it will be published under ``repo_id``, with every result of ``reports``.

    Metadata (language, license, tags, datasets, metrics, ``model-index``: one entry per result and metric) is
    built with ``ModelCardData`` and ``EvalResult``; the text is ``model_card_template.md`` filled with the
    model's configuration. The first result is the headline one (training's test split when there is one).
    ``ctranslate2`` (a quantization) says the repository carries a CTranslate2 export in ``ctranslate2/``;
    ``space`` (a Space repo id) links the card to the Gradio demo of the model there; ``onnx`` says the
    repository carries the ONNX export in ``onnx/`` (and the card shows how to load it from JavaScript and Python).
    """
    check_repo_id(repo_id)
    reports = [report.published() for report in reports]
    report = reports[0]
    config = model.config
    language_pair = f"{report.source_lang}-{report.target_lang}"
    eval_results = []
    for result in reports:
        dataset_type, dataset_name = _dataset_of(result)
        settings = ", ".join(f"{key}={value}" for key, value in result.decoding.items())
        for metric_type, metric_name, value, signature in (
            ("bleu", "BLEU", result.bleu, result.bleu_signature),
            ("chrf", "chrF", result.chrf, result.chrf_signature),
        ):
            eval_results.append(
                EvalResult(
                    task_type="translation",
                    task_name=f"Translation {language_pair}",
                    dataset_type=dataset_type,
                    dataset_name=dataset_name,
                    dataset_config=language_pair,
                    dataset_split=result.split,
                    metric_type=metric_type,
                    metric_name=metric_name,
                    metric_value=value,
                    metric_config=settings or None,
                    metric_args={"signature": signature},
                )
            )
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
        ctranslate2=ctranslate2,
        space=space,
        onnx=onnx,
        model_type=config.model_type,
        source_language=_language_name(report.source_lang),
        target_language=_language_name(report.target_lang),
        report=report,
        results=[(_dataset_of(result)[1], result) for result in reports],
        architecture=architecture,
        generation=generation,
        tokenizer_class=type(tokenizer).__name__,
        tokenizer_model=type(backend.model).__name__ if backend is not None else None,
        tokenizer_size=len(tokenizer),
        special_tokens=special_tokens,
        decoder_start_token_id=config.decoder_start_token_id,
        max_positions=config.max_position_embeddings,
        pipeline_tasks=pipeline_tasks(report.source_lang, report.target_lang),
        pipeline_file=PIPELINE_FILE,
        results_dir=RESULTS_DIR,
        dataset_name=DATASET_NAME,
        data_attribution=DATA_ATTRIBUTION,
        data_license=DATA_LICENSE,
        data_license_url=DATA_LICENSE_URL,
        transformers_version=transformers.__version__,
        supported_transformers=supported_transformers(),
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


def _result_file_name(index: int, report: EvalReport) -> str:
    if report.training:
        return TRAINING_REPORT
    slug = "".join(c if c.isalnum() else "-" for c in report.test_set).strip("-")
    return f"eval-{index}-{slug}.json"


def build_hub_folder(
    trained_dir: str | os.PathLike[str],
    output_dir: str | os.PathLike[str],
    repo_id: str,
    reports: Sequence[str | os.PathLike[str]] = (),
    ctranslate2: str | None = None,
    space: str | None = None,
    onnx: bool = False,
) -> Path:
    """Build in ``output_dir`` (new or empty) the exact folder that goes to the Hub as ``repo_id``.

    The model and tokenizer are loaded from ``trained_dir`` with the Auto classes (this package's code) and
    saved again, so the folder always holds safetensors weights, ``config.json`` with ``auto_map`` and
    ``custom_pipelines``, the configuration/modeling/pipeline code, the tokenizer files and
    ``generation_config.json``; then the results (see :func:`load_reports`) in ``results/`` and the model card
    ``README.md``. With ``ctranslate2`` (a quantization, e.g. "int8"), also the CTranslate2 export of the model
    in ``ctranslate2/`` (`hf_seq2seq.export`), which the card shows how to use. With ``space`` (a Space repo
    id), the card links to the model's demo there (see :func:`push_to_hub`). With ``onnx``, also the ONNX
    export's ``onnx/`` folder (`hf_seq2seq.onnx_export`: fp32 and int8 graphs and their Marian-type config), where
    transformers.js looks for a Hub model's graphs. Returns the folder.
    """
    check_repo_id(repo_id)
    trained_dir = check_model_folder(trained_dir)
    results = load_reports(trained_dir, reports)
    output = _check_output_dir(trained_dir, Path(output_dir))
    model, info = AutoModelForSeq2SeqLM.from_pretrained(
        trained_dir, trust_remote_code=False, output_loading_info=True
    )
    _check_loading_info(trained_dir, info)
    tokenizer = AutoTokenizer.from_pretrained(trained_dir)
    _check_special_tokens(trained_dir, model, tokenizer)
    for load_time_key in ("is_local", "local_files_only"):  # how *this* load went; not for the Hub's config
        tokenizer.init_kwargs.pop(load_time_key, None)
    register_pipeline(model, results[0].source_lang, results[0].target_lang)
    output.mkdir(parents=True, exist_ok=True)
    save_model_folder(model, tokenizer, output)
    (output / RESULTS_DIR).mkdir()
    for index, result in enumerate(results):
        result.save(output / RESULTS_DIR / _result_file_name(index, result))
    if ctranslate2:
        from .export import export_ctranslate2

        export_ctranslate2(output, output / CTRANSLATE2_DIR, quantization=ctranslate2)
    if onnx:
        from .onnx_export import SUBFOLDER, export_onnx

        with tempfile.TemporaryDirectory() as scratch:
            export = export_onnx(output, Path(scratch) / "export", quantize="int8")
            shutil.copytree(export / SUBFOLDER, output / ONNX_DIR)
    render_model_card(model, tokenizer, results, repo_id, ctranslate2, space, onnx).save(output / "README.md")
    return output


_VALIDATION_SCRIPT = """
import json, sys
sys.modules["hf_seq2seq"] = None  # the folder must load without the package
folder, sentence, tasks, marker = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), sys.argv[4]
import torch
import transformers
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
inputs = tokenizer(sentence, truncation=True, return_tensors="pt")
with torch.no_grad():
    output_ids = model.generate(**inputs)
    beams = [model.generate(**inputs, num_beams=3, use_cache=cached) for cached in (True, False)]
if not torch.equal(*beams):
    raise SystemExit(
        "beam search gives other tokens with the decoding cache than without it: the folder's model code does not "
        f"work with transformers {transformers.__version__}"
    )
translation = tokenizer.decode(output_ids[0], skip_special_tokens=True).strip()
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
    folder = check_model_folder(folder).resolve()
    tasks = tuple(
        json.loads((folder / "config.json").read_text(encoding="utf-8")).get("custom_pipelines", ())
    )
    if not tasks:
        raise HubFolderError(
            f"{folder}/config.json declares no custom_pipelines: build it with build_hub_folder"
        )
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
    reports: Sequence[str | os.PathLike[str]] = (),
    ctranslate2: str | None = None,
    space: str | None = None,
    onnx: bool = False,
) -> PushResult:
    """Build the Hub folder of ``trained_dir`` in ``output_dir``, validate it, and upload it to ``repo_id``.

    The repo id and the trained folder are checked before any network access. With ``dry_run`` nothing is
    uploaded. Otherwise the repo is created if needed (``private`` applies to a new repo only) and the folder
    is uploaded in one commit. ``token`` defaults to the one huggingface_hub finds (``HF_TOKEN``,
    ``hf auth login``). Without ``output_dir`` the folder is built in a new temporary directory, which is
    kept after a dry run or a failure (for inspection) and deleted after a successful upload.

    With ``space`` (a Space repo id, e.g. ``someone/model-demo``), a Gradio Space that loads ``repo_id`` with
    its own code (`hf_seq2seq.demo.write_space`) is built in ``<folder>-space`` beside the model folder,
    linked from the card, and uploaded after the model as a Space repository. With ``onnx``, the repository
    also carries the ONNX export in ``onnx/`` (see :func:`build_hub_folder`).
    """
    check_repo_id(repo_id)
    if space is not None:
        check_repo_id(space)
    trained_dir = check_model_folder(trained_dir)
    report = load_reports(trained_dir, reports)[0]
    temporary = output_dir is None
    if temporary:
        output_dir = tempfile.mkdtemp(prefix=f"{repo_id.split('/')[1]}-hub-")
    folder = build_hub_folder(trained_dir, output_dir, repo_id, reports, ctranslate2, space, onnx)
    space_folder = None
    if space is not None:
        from .demo import write_space

        space_folder = _check_output_dir(trained_dir, folder.with_name(f"{folder.name}-space"))
        write_space(space_folder, repo_id)
    validation = validate_hub_folder(folder, sentence)
    if dry_run:
        return PushResult(folder=folder, validation=validation, space_folder=space_folder)
    api = HfApi(token=token)
    repo_url = api.create_repo(repo_id, private=private, exist_ok=True)
    commit = api.upload_folder(
        repo_id=repo_id,
        folder_path=folder,
        commit_message=commit_message
        or f"Upload {repo_id}: BLEU {report.bleu:.1f}, chrF {report.chrf:.1f} ({report.test_set})",
    )
    space_url = None
    if space_folder is not None:
        space_url = str(
            api.create_repo(space, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
        )
        api.upload_folder(
            repo_id=space, repo_type="space", folder_path=space_folder, commit_message=f"Demo of {repo_id}"
        )
    if temporary:
        shutil.rmtree(folder)
        if space_folder is not None:
            shutil.rmtree(space_folder)
    return PushResult(
        folder=folder,
        validation=validation,
        repo_url=str(repo_url),
        commit_url=commit.commit_url,
        space_folder=space_folder,
        space_url=space_url,
    )

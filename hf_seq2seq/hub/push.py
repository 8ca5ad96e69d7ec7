"""Turn a trained folder into the folder that goes to the Hugging Face Hub, check it, and upload it.

Input: a model folder as training saves it (checked by `hf_seq2seq.models.folder.check_model_folder`) and one
or more results (`hf_seq2seq.evaluation.report.EvalReport`): the folder's own `test_results.json` and
`standard_test_results.json` when training wrote them, plus any `eval_report.json` of `hf-seq2seq evaluate`
given with `reports=`. Each result is one `model-index` entry of the card.

Output: :func:`build_hub_folder` loads the model and tokenizer with the Auto classes and saves them into a
fresh folder (safetensors weights, ``config.json`` with ``auto_map`` and ``custom_pipelines``, the
configuration/modeling code, ``pipeline_translation.py``, tokenizer files, ``generation_config.json``),
copies the results into ``results/``, and renders the model card (``README.md``, `hf_seq2seq.hub.card`).
:func:`push_to_hub` does that, validates the folder (`hf_seq2seq.hub.validation.validate_hub_folder`: loaded
in a fresh process, offline and without this package) and uploads it (``dry_run=True`` stops before the
upload).
"""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from huggingface_hub import HfApi
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

from hf_seq2seq.data.software_messages import SOFTWARE_CORPORA, SOFTWARE_MESSAGES
from hf_seq2seq.evaluation.report import STANDARD_REPORT, TRAINING_REPORT, EvalReport
from hf_seq2seq.hub.card import render_model_card, trained_on
from hf_seq2seq.hub.layout import CTRANSLATE2_DIR, DEFAULT_SENTENCE, ONNX_DIR, RESULTS_DIR
from hf_seq2seq.hub.validation import (
    HubFolderError,
    ValidationResult,
    check_loading_info,
    check_repo_id,
    check_special_tokens,
    validate_hub_folder,
)
from hf_seq2seq.models.folder import check_model_folder, register_pipeline, save_model_folder


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


def load_reports(
    trained_dir: str | os.PathLike[str], reports: Sequence[str | os.PathLike[str]] = ()
) -> list[EvalReport]:
    """The results to publish: the folder's own `test_results.json` and `standard_test_results.json` (if training
    wrote them), then `reports`.

    Raises `HubFolderError` when there is none, or when the results disagree on the translation direction or
    the training data is not the Tatoeba fra-eng data the card describes; `ReportError` for a bad file.
    """
    own = [Path(trained_dir) / name for name in (TRAINING_REPORT, STANDARD_REPORT)]
    paths = [path for path in own if path.is_file()]
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
    corpora = {name for report in loaded if report.training for name in trained_on(report)}
    if corpora - {"fra-eng", *SOFTWARE_CORPORA}:
        raise HubFolderError(
            f"the model card describes the Tatoeba fra-eng data and the package's {SOFTWARE_MESSAGES}, but this "
            f"model was trained on {', '.join(sorted(corpora))}; adapt model_card_template.md before publishing it"
        )
    return loaded


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


@dataclass(frozen=True)
class PushSettings:
    """How :func:`push_to_hub` builds, checks and uploads a Hub folder (`hf-seq2seq push`'s flags).

    What the folder carries is :func:`build_hub_folder`'s: the results of ``reports`` beside the folder's own,
    with ``ctranslate2`` (a quantization) a CTranslate2 export, with ``onnx`` the ONNX export in ``onnx/``. With
    ``space`` (a Space repo id, e.g. ``someone/model-demo``), a Gradio Space that loads the model with its own
    code (`hf_seq2seq.apps.demo.write_space`) is built in ``<folder>-space`` beside the model folder, linked
    from the card, and uploaded after the model as a Space repository. The folder is validated by translating
    ``sentence``. With ``dry_run`` nothing is uploaded; otherwise the repo is created if needed (``private``
    applies to a new repo only) and the folder is uploaded in one commit (``commit_message``; default: its
    BLEU and chrF). ``token`` defaults to the one huggingface_hub finds (``HF_TOKEN``, ``hf auth login``).
    """

    reports: Sequence[str | os.PathLike[str]] = ()
    ctranslate2: str | None = None
    space: str | None = None
    onnx: bool = False
    sentence: str = DEFAULT_SENTENCE
    dry_run: bool = False
    private: bool = False
    token: str | None = None
    commit_message: str | None = None


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
    ``README.md`` (`hf_seq2seq.hub.card.render_model_card`). With ``ctranslate2`` (a quantization, e.g.
    "int8"), also the CTranslate2 export of the model in ``ctranslate2/`` (`hf_seq2seq.export.ctranslate2`),
    which the card shows how to use. With ``space`` (a Space repo id), the card links to the model's demo there
    (see :class:`PushSettings`). With ``onnx``, also the ONNX export's ``onnx/`` folder
    (`hf_seq2seq.export.onnx`: fp32 and int8 graphs and their Marian-type config), where transformers.js looks
    for a Hub model's graphs. Returns the folder.
    """
    check_repo_id(repo_id)
    trained_dir = check_model_folder(trained_dir)
    results = load_reports(trained_dir, reports)
    output = _check_output_dir(trained_dir, Path(output_dir))
    model, info = AutoModelForSeq2SeqLM.from_pretrained(
        trained_dir, trust_remote_code=False, output_loading_info=True
    )
    check_loading_info(trained_dir, info)
    tokenizer = AutoTokenizer.from_pretrained(trained_dir)
    check_special_tokens(trained_dir, model, tokenizer)
    for load_time_key in ("is_local", "local_files_only"):  # how *this* load went; not for the Hub's config
        tokenizer.init_kwargs.pop(load_time_key, None)
    register_pipeline(model, results[0].source_lang, results[0].target_lang)
    output.mkdir(parents=True, exist_ok=True)
    save_model_folder(model, tokenizer, output)
    (output / RESULTS_DIR).mkdir()
    for index, result in enumerate(results):
        result.save(output / RESULTS_DIR / _result_file_name(index, result))
    if ctranslate2:
        from hf_seq2seq.export.ctranslate2 import export_ctranslate2

        export_ctranslate2(output, output / CTRANSLATE2_DIR, quantization=ctranslate2)
    if onnx:
        from hf_seq2seq.export.onnx import SUBFOLDER, export_onnx

        with tempfile.TemporaryDirectory() as scratch:
            export = export_onnx(output, Path(scratch) / "export", quantize="int8")
            shutil.copytree(export / SUBFOLDER, output / ONNX_DIR)
    render_model_card(model, tokenizer, results, repo_id, ctranslate2, space, onnx).save(output / "README.md")
    return output


def push_to_hub(
    trained_dir: str | os.PathLike[str],
    repo_id: str,
    output_dir: str | os.PathLike[str] | None = None,
    settings: PushSettings = PushSettings(),
) -> PushResult:
    """Build the Hub folder of ``trained_dir`` in ``output_dir``, validate it, and upload it to ``repo_id``, as
    ``settings`` says (:class:`PushSettings`).

    The repo id and the trained folder are checked before any network access. Without ``output_dir`` the folder
    is built in a new temporary directory, which is kept after a dry run or a failure (for inspection) and
    deleted after a successful upload.
    """
    space = settings.space
    check_repo_id(repo_id)
    if space is not None:
        check_repo_id(space)
    trained_dir = check_model_folder(trained_dir)
    report = load_reports(trained_dir, settings.reports)[0]
    temporary = output_dir is None
    if temporary:
        output_dir = tempfile.mkdtemp(prefix=f"{repo_id.split('/')[1]}-hub-")
    folder = build_hub_folder(
        trained_dir, output_dir, repo_id, settings.reports, settings.ctranslate2, space, settings.onnx
    )
    space_folder = None if space is None else _build_space(trained_dir, folder, repo_id)
    validation = validate_hub_folder(folder, settings.sentence)
    if settings.dry_run:
        return PushResult(folder=folder, validation=validation, space_folder=space_folder)
    repo_url, commit_url, space_url = _upload(
        folder,
        repo_id,
        settings.commit_message
        or f"Upload {repo_id}: BLEU {report.bleu:.1f}, chrF {report.chrf:.1f} ({report.test_set})",
        space_folder,
        space,
        private=settings.private,
        token=settings.token,
    )
    if temporary:
        shutil.rmtree(folder)
        if space_folder is not None:
            shutil.rmtree(space_folder)
    return PushResult(
        folder=folder,
        validation=validation,
        repo_url=repo_url,
        commit_url=commit_url,
        space_folder=space_folder,
        space_url=space_url,
    )


def _build_space(trained_dir: Path, folder: Path, repo_id: str) -> Path:
    """The Gradio Space of ``repo_id``, built in ``<folder>-space`` beside the Hub folder."""
    from hf_seq2seq.apps.demo import write_space

    space_folder = _check_output_dir(trained_dir, folder.with_name(f"{folder.name}-space"))
    write_space(space_folder, repo_id)
    return space_folder


def _upload(
    folder: Path,
    repo_id: str,
    commit_message: str,
    space_folder: Path | None,
    space: str | None,
    *,
    private: bool,
    token: str | None,
) -> tuple[str, str, str | None]:
    """Create ``repo_id`` if needed and upload ``folder`` in one commit, then the same for the Space (with a
    ``space_folder``); returns the repo URL, the commit URL and the Space URL (or None)."""
    api = HfApi(token=token)
    repo_url = api.create_repo(repo_id, private=private, exist_ok=True)
    commit = api.upload_folder(repo_id=repo_id, folder_path=folder, commit_message=commit_message)
    space_url = None
    if space_folder is not None:
        space_url = str(
            api.create_repo(space, repo_type="space", space_sdk="gradio", private=private, exist_ok=True)
        )
        api.upload_folder(
            repo_id=space, repo_type="space", folder_path=space_folder, commit_message=f"Demo of {repo_id}"
        )
    return str(repo_url), commit.commit_url, space_url

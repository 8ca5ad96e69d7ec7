"""The checks of `hf-seq2seq push`, all offline: the repo id, the trained folder, and the built Hub folder.

:func:`check_repo_id` refuses a repo id the Hub would reject, before any network access.
:func:`check_loading_info` and :func:`check_special_tokens` refuse a trained folder whose weights do not fit
the model code or whose tokenizer and configs disagree (`hf_seq2seq.hub.push.build_hub_folder` runs them).
:func:`validate_hub_folder` loads a built folder in a fresh process, offline and without this package, through
``AutoConfig``, ``AutoTokenizer``, ``AutoModelForSeq2SeqLM`` and ``pipeline("translation")``, and translates a
sentence.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from huggingface_hub.utils import HFValidationError, validate_repo_id
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from hf_seq2seq.errors import HfSeq2SeqError
from hf_seq2seq.hub.layout import DEFAULT_SENTENCE
from hf_seq2seq.models.folder import check_model_folder

_VALIDATION_MARKER = "HF_SEQ2SEQ_VALIDATION_RESULT="
_STDERR_TAIL = 4000


class HubFolderError(HfSeq2SeqError, ValueError):
    """A trained folder is complete but inconsistent (results, weights or special tokens)."""


class InvalidRepoIdError(HfSeq2SeqError, ValueError):
    """A repo id that the Hub would refuse, or one without a namespace (``user/name``)."""


class HubValidationError(HfSeq2SeqError, RuntimeError):
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


def check_loading_info(folder: Path, info: dict[str, Any]) -> None:
    """Refuse weights that do not fit this package's model code (``info``: ``from_pretrained``'s loading info)."""
    problems = {
        key: info[key] for key in ("missing_keys", "unexpected_keys", "mismatched_keys") if info.get(key)
    }
    if problems:
        raise HubFolderError(f"The weights in {folder} do not fit this package's model code: {problems}")


def check_special_tokens(folder: Path, model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> None:
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
    translation as ``model.generate`` for each task of `hf_seq2seq.models.folder.pipeline_tasks`. Raises
    `HubValidationError` with the tail of the process's stderr on any failure.
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

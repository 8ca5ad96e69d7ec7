"""The model folder: what a complete one holds, the one check of it, and the training run's checkpoints.

Training saves a complete model folder (its `--output-dir`), and every command that reads one (translate,
evaluate, push, plots, export, demo) checks it here first:

* `config.json`, `model.safetensors` (or a sharded `model.safetensors.index.json`), `generation_config.json`;
* `tokenizer.json`, `tokenizer_config.json`;
* `pipeline_translation.py`, registered under `custom_pipelines` in `config.json`, so that
  `pipeline("translation", model=folder, trust_remote_code=True)` works on it as on a Hub repository
  (transformers 5 has no built-in translation pipeline).

The model's code (`SHIPPED_MODULES`) is copied into the folder when it is saved, and a folder saved by an earlier
release of this package keeps its old copy: `refresh_code` replaces it with this release's, weights untouched.
"""

import importlib.metadata
import json
import os
import re
import shutil
from pathlib import Path

from packaging.requirements import Requirement
from transformers import PreTrainedModel, PreTrainedTokenizerBase
from transformers.dynamic_module_utils import get_relative_import_files
from transformers.trainer_utils import PREFIX_CHECKPOINT_DIR

from hf_seq2seq.errors import ExportError, FolderError
from hf_seq2seq.models.transformer_mt import (
    configuration_transformer_mt,
    generation_transformer_mt,
    length_rule,
    modeling_transformer_mt,
    pipeline_translation,
    protected_spans,
    sentence_splitting,
)
from hf_seq2seq.models.transformer_mt.configuration_transformer_mt import TransformerMTConfig

WEIGHT_FILES = ("model.safetensors", "model.safetensors.index.json")
VERSION_FIELD = "hf_seq2seq_version"
"""The config field that records the package version that saved the folder (`record_version`); folders saved
before 0.2.0 lack it."""
PICKLE_WEIGHT_FILES = ("pytorch_model.bin", "pytorch_model.bin.index.json")
MODEL_FILES = ("config.json", "generation_config.json")
TOKENIZER_FILES = ("tokenizer.json", "tokenizer_config.json")
PIPELINE_FILE = Path(pipeline_translation.__file__).name
PIPELINE_IMPL = f"{Path(PIPELINE_FILE).stem}.{pipeline_translation.TranslationPipeline.__name__}"


# the code a saved folder carries, for `trust_remote_code=True` (auto_map, custom_pipelines)
SHIPPED_MODULES = (
    configuration_transformer_mt,
    modeling_transformer_mt,
    generation_transformer_mt,
    length_rule,
    pipeline_translation,
    protected_spans,
    sentence_splitting,
)


class ModelFolderError(FolderError, FileNotFoundError):
    """A model folder that cannot be used because it does not exist or files are missing (all are named)."""


def check_model_folder(folder: str | os.PathLike[str]) -> Path:
    """Raise `ModelFolderError` naming every missing file of a saved model + tokenizer folder; return it."""
    folder = Path(folder)
    if not folder.is_dir():
        raise ModelFolderError(
            f"model folder {folder} does not exist (expected the --output-dir of `hf-seq2seq train`, or a "
            "folder written by save_pretrained)"
        )
    present = {path.name for path in folder.iterdir()}
    missing = [name for name in (*MODEL_FILES, *TOKENIZER_FILES) if name not in present]
    if not present & set(WEIGHT_FILES):
        pickles = sorted(present & set(PICKLE_WEIGHT_FILES))
        note = (
            f" (found only {', '.join(pickles)}: pickled weights are not used; re-save with "
            "`model.save_pretrained(folder)`, which writes safetensors)"
            if pickles
            else ""
        )
        missing.append(f"model.safetensors{note}")
    if missing:
        raise ModelFolderError(f"model folder {folder} is missing: {'; '.join(missing)}")
    return folder


def check_exportable(folder: str | os.PathLike[str], elsewhere: str, action: str = "exported") -> Path:
    """`check_model_folder`, after an `ExportError` unless `folder` holds this package's model (`transformer_mt`):
    it names the type the folder holds and `elsewhere`, the tool that handles the others (what is done to the
    folder: `action`); return the folder."""
    folder = Path(folder)
    config_file = folder / "config.json"
    if config_file.is_file():
        model_type = json.loads(config_file.read_text(encoding="utf-8")).get("model_type")
        if model_type != TransformerMTConfig.model_type:
            raise ExportError(
                f"{folder} holds a {model_type!r} model; only {TransformerMTConfig.model_type!r} models "
                f"(this package's) are {action} here (Marian, BART and others: {elsewhere})"
            )
    return check_model_folder(folder)


def pipeline_tasks(source_lang: str, target_lang: str) -> tuple[str, ...]:
    """Task names under which `pipeline(..., trust_remote_code=True)` finds the shipped translation pipeline."""
    return ("translation", f"translation_{source_lang}_to_{target_lang}")


def register_pipeline(model: PreTrainedModel, source_lang: str, target_lang: str) -> None:
    """Declare the shipped translation pipeline in `model.config` (saved into `config.json`)."""
    model.config.custom_pipelines = {
        task: {"impl": PIPELINE_IMPL, "pt": ["AutoModelForSeq2SeqLM"], "type": "text"}
        for task in pipeline_tasks(source_lang, target_lang)
    }


def save_model_folder(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, folder: str | os.PathLike[str]
) -> Path:
    """Write a complete model folder: weights, config (with `auto_map` and the package's version,
    `record_version`), model code, tokenizer, pipeline code.

    The pipeline is registered for the direction already in `model.config.custom_pipelines` (see
    `register_pipeline`), else for `translation` alone.
    """
    folder = Path(folder)
    record_version(model)
    if not getattr(model.config, "custom_pipelines", None):
        model.config.custom_pipelines = {
            "translation": {"impl": PIPELINE_IMPL, "pt": ["AutoModelForSeq2SeqLM"], "type": "text"}
        }
    model.save_pretrained(folder)
    tokenizer.save_pretrained(folder)
    add_pipeline_code(folder)
    return folder


def record_version(model: PreTrainedModel) -> None:
    """Record the package's version in `model`'s config (`VERSION_FIELD`), which `save_pretrained` writes: the
    package sets it when it saves (training, `save_model_folder`), not the shipped model code, which knows no
    package."""
    from hf_seq2seq import __version__

    setattr(model.config, VERSION_FIELD, __version__)


def add_pipeline_code(folder: str | os.PathLike[str]) -> None:
    """Copy `pipeline_translation.py` (its config names it in `custom_pipelines`) and the modules it imports
    (`sentence_splitting.py`, `protected_spans.py`) into a saved folder, as transformers finds them (its relative imports)."""
    for source in (pipeline_translation.__file__, *get_relative_import_files(pipeline_translation.__file__)):
        shutil.copyfile(source, Path(folder) / Path(source).name)


def refresh_code(folder: str | os.PathLike[str]) -> list[str]:
    """Replace the model code of a saved folder of this package's model (`check_exportable`'s check) with this
    release's (`SHIPPED_MODULES`), leaving weights, config, tokenizer and results as they are; return the names of
    the files written (none when the folder's code is current). Each file is written whole or not at all."""
    folder = check_exportable(folder, "their code ships with transformers", action="upgraded")
    written = []
    for module in SHIPPED_MODULES:
        source = Path(module.__file__)
        target = folder / source.name
        code = source.read_bytes()
        if target.is_file() and target.read_bytes() == code:
            continue
        partial = target.with_name(f".{target.name}.partial")
        partial.write_bytes(code)
        os.replace(partial, target)
        written.append(target.name)
    return written


def checkpoint_folders(run_dir: str | os.PathLike[str]) -> list[Path]:
    """The complete `checkpoint-<step>` folders of a training run, oldest first.

    The Trainer writes `trainer_state.json` last, so a folder without it is one whose saving was cut off (a
    killed or preempted job): it is left out.
    """
    from transformers.trainer import TRAINER_STATE_NAME  # here: importing the Trainer takes a while

    found = []
    for child in Path(run_dir).glob(f"{PREFIX_CHECKPOINT_DIR}-*"):
        match = re.fullmatch(rf"{PREFIX_CHECKPOINT_DIR}-(\d+)", child.name)
        if match and (child / TRAINER_STATE_NAME).is_file():
            found.append((int(match[1]), child))
    return [child for _, child in sorted(found)]


def last_checkpoint(run_dir: str | os.PathLike[str]) -> Path | None:
    """The newest complete checkpoint of a training run, or None."""
    folders = checkpoint_folders(run_dir)
    return folders[-1] if folders else None


def supported_releases(name: str) -> list[str]:
    """The releases of `name` (a dependency, or one an extra installs) that this package supports, as its metadata
    (pyproject.toml) declares and CI tests them: e.g. [">=5.18", "<6"] for transformers. What a folder's code needs
    and what runs it: the model card and a Space's requirements say it."""
    for line in importlib.metadata.requires("hf_seq2seq") or ():
        requirement = Requirement(line)
        if requirement.name == name:
            return sorted(map(str, requirement.specifier), reverse=True)  # >= first
    raise RuntimeError(f"hf_seq2seq's metadata names no {name} requirement; reinstall the package")

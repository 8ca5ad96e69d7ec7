"""Checkpoint averaging: the mean of the weights of a run's last checkpoints, saved as a model folder.

Averaging the last few checkpoints of a run (Vaswani et al. 2017, section 6.1; fairseq's
`average_checkpoints.py`, Marian-NMT's exponential smoothing) gives a model that is usually better than any
one of them at no training cost.
"""

import os
import shutil
from collections.abc import Sequence
from pathlib import Path

import torch
from safetensors.torch import load_file, save_file

from hf_seq2seq.models.folder import WEIGHT_FILES, add_pipeline_code, check_model_folder

# what a Trainer checkpoint holds beside the model, not part of a model folder
TRAINER_FILES = ("optimizer.pt", "scheduler.pt", "scaler.pt", "trainer_state.json", "training_args.bin")


def average_state_dicts(state_dicts: Sequence[dict[str, torch.Tensor]]) -> dict[str, torch.Tensor]:
    """The element-wise mean of floating-point tensors (summed in float64); other tensors from the last."""
    keys = set(state_dicts[0])
    for i, state in enumerate(state_dicts[1:], 1):
        if set(state) != keys:
            raise ValueError(
                f"checkpoint {i} has other weights than checkpoint 0: {sorted(set(state) ^ keys)}"
            )
    averaged = {}
    for key, last in state_dicts[-1].items():
        if last.is_floating_point():
            total = sum(state[key].to(torch.float64) for state in state_dicts)
            averaged[key] = (total / len(state_dicts)).to(last.dtype)
        else:
            averaged[key] = last
    return averaged


def average_checkpoints(
    folders: Sequence[str | os.PathLike[str]], output_dir: str | os.PathLike[str]
) -> Path:
    """Average the weights of saved model folders (e.g. a run's `checkpoint-*`) into `output_dir`.

    The config, generation config, tokenizer and code come from the last folder (files already in
    `output_dir` are overwritten); the Trainer's own files (optimizer, scheduler, state) are not copied.
    Returns `output_dir`, a complete model folder.
    """
    if not folders:
        raise ValueError("no checkpoints to average")
    folders = [check_model_folder(folder) for folder in folders]
    sharded = [folder for folder in folders if not (folder / WEIGHT_FILES[0]).is_file()]
    if sharded:
        raise ValueError(f"averaging reads one model.safetensors per folder; sharded: {sharded[0]}")
    averaged = average_state_dicts([load_file(folder / WEIGHT_FILES[0]) for folder in folders])
    output_dir = Path(output_dir)
    output_dir.mkdir(parents=True, exist_ok=True)
    for path in folders[-1].iterdir():
        trainer_file = path.name in TRAINER_FILES or path.name.startswith("rng_state")
        target = output_dir / path.name
        if (
            path.is_file()
            and not trainer_file
            and path.name != WEIGHT_FILES[0]
            and path.resolve() != target.resolve()
        ):
            shutil.copyfile(path, target)
    save_file(averaged, output_dir / WEIGHT_FILES[0], metadata={"format": "pt"})
    add_pipeline_code(output_dir)  # a checkpoint's config names the pipeline but the Trainer does not copy it
    return output_dir

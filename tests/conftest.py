"""The fixtures several test files share: the synthetic corpus as a fra.txt, a tiny model folder, one tiny
training run (on the synthetic corpus, so training is tested without the real data). Plain helpers are in
helpers.py."""

import os
from pathlib import Path

import pytest
import torch
from helpers import (
    GERMAN_PAIRS,
    GERMAN_VOCAB,
    MEMORISED_PAIRS,
    TEST_SETS_DIR,
    built_once,
    make_trained_folder,
    random_model_tokenizer,
    save_end_first_model,
    tiny_args,
    train_memorising_folder,
    write_fra_txt,
)

# the standard test sets from the shared copy, as `.ci/run` and the tests' subprocesses read them: nothing downloads
# (fra-eng's loader keeps the Tatoeba test set out of training, so every tiny run reads it)
if TEST_SETS_DIR.is_dir():
    os.environ.setdefault("HF_SEQ2SEQ_TEST_SETS", str(TEST_SETS_DIR))

# under pytest-xdist (`-n 2`, as .ci/run runs the suite) the cores are shared out among the workers: one torch thread
# a worker on 2 cores, in the worker and in the commands its tests start, instead of each oversubscribing them all
if workers := int(os.environ.get("PYTEST_XDIST_WORKER_COUNT", "0")):
    threads = max(1, (os.cpu_count() or 1) // workers)
    os.environ["OMP_NUM_THREADS"] = str(threads)
    torch.set_num_threads(threads)


@pytest.fixture(scope="session")
def synthetic_fra_txt(tmp_path_factory) -> Path:
    """The synthetic corpus in a seeded random order, written once for the session: the `--data_path` of the
    tiny training runs (the fra-eng loader splits it by hashed source sentence like the real file)."""
    return write_fra_txt(tmp_path_factory.mktemp("synthetic") / "fra.txt", seed=0)


@pytest.fixture(scope="module")
def trained(tmp_path_factory) -> Path:
    """A tiny random model folder with a test report (no training)."""
    return make_trained_folder(tmp_path_factory.mktemp("trained") / "model")


@pytest.fixture(scope="session")
def tiny_run(tmp_path_factory, synthetic_fra_txt) -> tuple[Path, dict]:
    """One tiny training run (300 steps on 300 synthetic pairs), shared by every test that needs a trained
    model: its output folder and the results `hf-seq2seq train` returned."""
    from hf_seq2seq.cli import train

    output_dir = tmp_path_factory.mktemp("run")
    results = train.main(
        tiny_args(synthetic_fra_txt, output_dir, "--max_steps", "300", "--average_last", "2")
    )
    return output_dir, results


@pytest.fixture(scope="session")
def memorising_folder(tmp_path_factory) -> Path:
    """A tiny model trained in the test run to translate `helpers.MEMORISED_PAIRS` exactly, saved as a folder."""
    return train_memorising_folder(tmp_path_factory.mktemp("memorising") / "model")


@pytest.fixture(scope="session")
def pre_ln_memorising_export(tmp_path_factory) -> tuple[Path, Path]:
    """A pre-LN model (the CPU presets' layout) trained like `memorising_folder`, and its ONNX export with fp32 and
    int8 graphs: (model folder, export folder), made once in the whole run (`helpers.built_once`), the engines'
    tests and the decoding tests reading the same export."""
    onnx_export = pytest.importorskip("hf_seq2seq.export.onnx", reason="the onnx extra")

    def build(folder: Path) -> Path:
        model = train_memorising_folder(folder / "model", normalize_before=True)
        onnx_export.export_onnx(model, folder / "export", quantize="int8")
        return folder

    folder = built_once(tmp_path_factory, "pre-ln-memorising", build)
    return folder / "model", folder / "export"


@pytest.fixture(scope="session")
def end_first_export(tmp_path_factory) -> tuple[Path, Path]:
    """A model that would translate every source into nothing, its second choice the word "chat"
    (`helpers.save_end_first_model` over `helpers.random_model_tokenizer`, a tokenizer transformers.js reads too),
    and its ONNX export (fp32): (model folder, export folder), made once in the whole run for the Python engines'
    tests and the browser page's."""
    onnx_export = pytest.importorskip("hf_seq2seq.export.onnx", reason="the onnx extra")

    def build(folder: Path) -> Path:
        model = save_end_first_model(random_model_tokenizer(), folder / "model", "▁chat")
        onnx_export.export_onnx(model, folder / "export")
        return folder

    folder = built_once(tmp_path_factory, "end-first-chat", build)
    return folder / "model", folder / "export"


@pytest.fixture(scope="session")
def memorising_fr_en_folder(tmp_path_factory) -> Path:
    """`memorising_folder`'s other direction: a tiny model trained in the test run to translate the French of
    `helpers.MEMORISED_PAIRS` into their English exactly, recording fr-en."""
    pairs = [(french, english) for english, french in MEMORISED_PAIRS]
    return train_memorising_folder(
        tmp_path_factory.mktemp("fr-en") / "model", pairs=pairs, languages=("fr", "en")
    )


@pytest.fixture(scope="session")
def memorising_de_en_folder(tmp_path_factory) -> Path:
    """A third pair: a tiny model trained in the test run to translate `helpers.GERMAN_PAIRS` (German into
    the English of `helpers.MEMORISED_PAIRS`) exactly, over a vocabulary of their words, recording de-en."""
    folder = tmp_path_factory.mktemp("de-en") / "model"
    return train_memorising_folder(folder, pairs=GERMAN_PAIRS, languages=("de", "en"), vocab=GERMAN_VOCAB)

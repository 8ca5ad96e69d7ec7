"""transformers' own common model tests, taken from the source distribution of the installed version.

`tests/test_modeling_common.py` (`ModelTesterMixin`) and `tests/test_configuration_common.py` (`ConfigTester`)
ship in the transformers sdist on the package index; nothing of them is kept in this repository. The sdist
lacks three modules they import, so those are written beside the copy as stand-ins:
- `tests/generation/test_utils.py` (`GenerationTesterMixin`) and `tests/exporters/test_export.py`
  (`ExportTesterMixin`), the mixins `test_modeling_common.py` builds on: empty, so the generation and export
  tests are not run from here (this package's own tests cover `generate()`'s contracts and `torch.export`);
- `tests/utils/test_configuration_utils.py` (`config_common_kwargs`): one value other than the default for
  each public field of the installed `PretrainedConfig`, which `ConfigTester` checks a config accepts.
"""

import importlib
import os
import subprocess
import sys
import tarfile
import tempfile
from pathlib import Path

import transformers
from filelock import FileLock

PACKAGE = "transformers_common_tests"  # the copy's package name (`tests` would clash with this repo's)
SHIPPED = ("test_modeling_common.py", "test_configuration_common.py")
ABSENT = {
    "generation/test_utils.py": "class GenerationTesterMixin:\n    pass\n",
    "exporters/test_export.py": "class ExportTesterMixin:\n    pass\n",
    "utils/test_configuration_utils.py": "config_common_kwargs = "
    + repr(
        {
            "return_dict": False,
            "output_hidden_states": True,
            "output_attentions": True,
            "dtype": "float16",
            "chunk_size_feed_forward": 5,
            "architectures": ["BertModel"],
            "id2label": {0: "label"},
            "label2id": {"label": "0"},
            "problem_type": "regression",
        }
    ),
}


def cache_dir() -> Path:
    """Where the copy lives: `$HF_SEQ2SEQ_CACHE` (default `~/.cache/hf_seq2seq`), one folder per version."""
    root = Path(os.environ.get("HF_SEQ2SEQ_CACHE", Path.home() / ".cache" / "hf_seq2seq"))
    return root / f"transformers-{transformers.__version__}-tests"


def fetch_common_tests() -> Path:
    """The folder holding the `PACKAGE` copy of the installed version's common tests; downloads the sdist
    from the package index (pip) the first time. One process at a time: the workers of `pytest -n 2` may both
    come here first."""
    folder = cache_dir()
    folder.parent.mkdir(parents=True, exist_ok=True)
    with FileLock(f"{folder}.lock"):
        return _fetch_common_tests(folder)


def _fetch_common_tests(folder: Path) -> Path:
    package = folder / PACKAGE
    if all((package / name).is_file() for name in (*SHIPPED, *ABSENT)):
        return folder
    with tempfile.TemporaryDirectory() as download:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--quiet",
                "--no-deps",
                "--no-binary",
                ":all:",
                "--dest",
                download,
                f"transformers=={transformers.__version__}",
            ],
            check=True,
        )
        (sdist,) = Path(download).glob("transformers-*.tar.gz")
        package.mkdir(parents=True, exist_ok=True)
        with tarfile.open(sdist) as archive:
            for name in SHIPPED:
                member = archive.getmember(f"transformers-{transformers.__version__}/tests/{name}")
                (package / name).write_bytes(archive.extractfile(member).read())
    (package / "__init__.py").write_text("")
    for name, text in ABSENT.items():
        path = package / name
        path.parent.mkdir(exist_ok=True)
        (path.parent / "__init__.py").write_text("")
        path.write_text(text)
    return folder


def import_common_tests():
    """(`test_modeling_common`, `test_configuration_common`) modules of the installed transformers."""
    folder = str(fetch_common_tests())
    if folder not in sys.path:
        sys.path.insert(0, folder)
    return (
        importlib.import_module(f"{PACKAGE}.test_modeling_common"),
        importlib.import_module(f"{PACKAGE}.test_configuration_common"),
    )

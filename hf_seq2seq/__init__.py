"""hf_seq2seq: a from-scratch "Attention Is All You Need" translation Transformer for the Hugging Face stack.

Importing the package registers the model with `AutoConfig`, `AutoModel` and `AutoModelForSeq2SeqLM`, and
marks the classes for auto-class export, so `save_pretrained` writes the configuration/modeling code and
`auto_map` and the folder loads anywhere with `trust_remote_code=True`.

The import itself is cheap (no torch, no transformers: `hf-seq2seq --help` imports this package): the model
classes below load on first use, and the registration happens as soon as transformers' Auto classes are
imported, before they can be used (`hf_seq2seq.models.registration`).
"""

import importlib
import importlib.metadata

from hf_seq2seq.models import registration as _registration
from hf_seq2seq.models.registration import register_auto_classes

try:  # the one place the package's version is read: its installed metadata (pyproject.toml's `version`)
    __version__ = importlib.metadata.version("hf_seq2seq")
except importlib.metadata.PackageNotFoundError:  # a source tree that was never installed
    __version__ = "unknown"

_LAZY = {
    "TransformerMTConfig": _registration.CONFIG_MODULE,
    "TransformerMTForConditionalGeneration": _registration.MODELING_MODULE,
    "TransformerMTModel": _registration.MODELING_MODULE,
    "TransformerMTPreTrainedModel": _registration.MODELING_MODULE,
}

_registration.install()


def __getattr__(name: str):
    if name in _LAZY:
        value = getattr(importlib.import_module(_LAZY[name]), name)
        globals()[name] = value
        return value
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_LAZY))


__all__ = [
    "__version__",
    "TransformerMTConfig",
    "TransformerMTForConditionalGeneration",
    "TransformerMTModel",
    "TransformerMTPreTrainedModel",
    "register_auto_classes",
]

"""The model's registration with transformers' Auto classes, without importing torch at `import hf_seq2seq`.

Registering needs the config and model classes, and so torch and transformers (several seconds of imports).
`import hf_seq2seq` must stay cheap (the command line's `--help` imports the package), yet leave the Auto
classes knowing `transformer_mt` whenever they are used. So the package's `__init__` calls `install()`, which:

* registers at once if transformers' Auto modules are already imported (torch is then loaded anyway);
* otherwise puts a small finder first on `sys.meta_path` that watches two kinds of import:
  - an outermost import of a `transformers` module (one not nested in another of ours): when it has run,
    if the Auto modules (`transformers.models.auto.configuration_auto` or `.modeling_auto`) are loaded, the
    classes are registered there and then, before the import statement returns to its caller;
  - the package's own configuration and modeling modules: when one has run, its classes are marked for
    auto-class export (`register_for_auto_class`, so `save_pretrained` writes the code and `auto_map`), and
    the registration is tried again (it waits while one of them is still executing).

Registering imports only what the Auto modules' users import anyway (our two modules, on top of transformers
and torch), and the finder removes itself once it is done. Only the standard library is imported here.
"""

from __future__ import annotations

import importlib
import importlib.abc
import sys
import threading

CONFIG_MODULE = "hf_seq2seq.models.transformer_mt.configuration_transformer_mt"
MODELING_MODULE = "hf_seq2seq.models.transformer_mt.modeling_transformer_mt"
AUTO_MODULES = ("transformers.models.auto.configuration_auto", "transformers.models.auto.modeling_auto")
_registered = False
# per thread: how many transformers modules are executing under our loader, and how many of our own modules
_busy = threading.local()


def _is_transformers(name: str) -> bool:
    return name == "transformers" or name.startswith("transformers.")


def _mark_config() -> None:
    from hf_seq2seq.models.transformer_mt.configuration_transformer_mt import TransformerMTConfig

    TransformerMTConfig.register_for_auto_class()


def _mark_models() -> None:
    from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import (
        TransformerMTForConditionalGeneration,
        TransformerMTModel,
    )

    TransformerMTModel.register_for_auto_class("AutoModel")
    TransformerMTForConditionalGeneration.register_for_auto_class("AutoModelForSeq2SeqLM")


def register_auto_classes() -> None:
    """Register `TransformerMTConfig` with `AutoConfig` and the models with `AutoModel` and
    `AutoModelForSeq2SeqLM`, and mark them for auto-class export. Idempotent; imports torch and transformers."""
    global _registered
    if _registered:
        return
    from transformers import AutoConfig, AutoModel, AutoModelForSeq2SeqLM

    from hf_seq2seq.models.transformer_mt.configuration_transformer_mt import TransformerMTConfig
    from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import (
        TransformerMTForConditionalGeneration,
        TransformerMTModel,
    )

    # exist_ok: two threads may both get here; registering twice is harmless (no lock: a lock held across
    # imports could deadlock against the import system's own per-module locks)
    AutoConfig.register(TransformerMTConfig.model_type, TransformerMTConfig, exist_ok=True)
    AutoModel.register(TransformerMTConfig, TransformerMTModel, exist_ok=True)
    AutoModelForSeq2SeqLM.register(TransformerMTConfig, TransformerMTForConditionalGeneration, exist_ok=True)
    _mark_config()
    _mark_models()
    _registered = True
    _uninstall()


def _try_register() -> None:
    """Register if the Auto modules are loaded and nothing we depend on is half executed in this thread."""
    if _registered or getattr(_busy, "ours", 0) or getattr(_busy, "transformers", 0):
        return
    if not any(name in sys.modules for name in AUTO_MODULES):
        return  # nothing to register into yet, and registering now would import torch for nothing
    _busy.ours = 1  # the imports below come back through the finder: no nested attempt
    try:
        register_auto_classes()
    finally:
        _busy.ours = 0


class _WatchingLoader(importlib.abc.Loader):
    """Runs a module with its own loader, then `after(name)`; everything else is the wrapped loader's."""

    def __init__(self, loader, kind: str):
        self._loader = loader
        self._kind = kind  # "transformers" or "ours"

    def create_module(self, spec):
        return self._loader.create_module(spec)

    def exec_module(self, module) -> None:
        setattr(_busy, self._kind, getattr(_busy, self._kind, 0) + 1)
        try:
            self._loader.exec_module(module)
        finally:
            setattr(_busy, self._kind, getattr(_busy, self._kind) - 1)
        if module.__name__ == CONFIG_MODULE:
            _mark_config()
        elif module.__name__ == MODELING_MODULE:
            _mark_models()
        _try_register()

    def __getattr__(self, name: str):  # get_source, get_resource_reader, is_package, ...
        return getattr(self._loader, name)


class _Finder(importlib.abc.MetaPathFinder):
    def find_spec(self, fullname, path, target=None):
        if fullname in (CONFIG_MODULE, MODELING_MODULE):
            kind = "ours"
        elif _is_transformers(fullname) and not getattr(_busy, "transformers", 0):
            kind = "transformers"
        else:
            return None
        for finder in sys.meta_path:
            if finder is self or not hasattr(finder, "find_spec"):
                continue
            spec = finder.find_spec(fullname, path, target)
            if spec is not None:
                if spec.loader is not None and hasattr(spec.loader, "exec_module"):
                    spec.loader = _WatchingLoader(spec.loader, kind)
                return spec
        return None


_finder = _Finder()


def _uninstall() -> None:
    try:
        sys.meta_path.remove(_finder)
    except ValueError:
        pass


def install() -> None:
    """Register now if transformers' Auto modules are loaded, else as soon as they are (see the module doc)."""
    if any(name in sys.modules for name in AUTO_MODULES):
        register_auto_classes()
    elif _finder not in sys.meta_path and not _registered:
        sys.meta_path.insert(0, _finder)

"""An export folder's tokenizer and saved decoding, read without transformers (and so without torch), so that an
engine on an export starts in about a second (`hf_seq2seq.engines.ctranslate2_engine`).

* :class:`FileTokenizer`: the folder's `tokenizer.json` run by the `tokenizers` library, which is what
  transformers' fast tokenizer runs too: the calls the package makes of a tokenizer (`tokenizer(texts, ...)`
  with truncation, offsets and `text_target`, `convert_ids_to_tokens`, `convert_tokens_to_ids`, `decode`,
  `model_max_length`), giving what transformers gives (tests/test_export_files.py compares them);
* :class:`SavedDecoding`: `generation_config.json` as attributes, None where it sets nothing, as transformers'
  `GenerationConfig` reads it.

:func:`load_tokenizer` takes transformers' tokenizer instead where a folder needs what this one does not do (no
`tokenizer.json`, or a tokenizer that cleans up spaces when it decodes).
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from tokenizers import Tokenizer


class FileTokenizer:
    """A folder's `tokenizer.json` and `tokenizer_config.json`, answering as transformers' fast tokenizer does."""

    def __init__(self, folder: str | Path):
        folder = Path(folder)
        self._tokenizer = Tokenizer.from_file(str(folder / "tokenizer.json"))
        self._tokenizer.no_padding()
        settings = json.loads((folder / "tokenizer_config.json").read_text(encoding="utf-8"))
        self.model_max_length = settings.get("model_max_length", int(1e30))
        self.unk_token_id = self._tokenizer.token_to_id(settings.get("unk_token") or "<unk>")

    def __call__(
        self,
        text: str | Sequence[str] | None = None,
        *,
        text_target: str | Sequence[str] | None = None,
        max_length: int | None = None,
        truncation: bool = False,
        add_special_tokens: bool = True,
        return_offsets_mapping: bool = False,
        verbose: bool = True,
    ) -> dict[str, Any]:
        """`input_ids` and `attention_mask` (and `offset_mapping`) of a text or a list of texts (a target is
        tokenized as a source is: one vocabulary); `truncation` cuts to `max_length` tokens, special ones
        included, as transformers does."""
        texts = text if text_target is None else text_target
        single = isinstance(texts, str)
        if truncation and max_length is not None:
            self._tokenizer.enable_truncation(max_length)
        else:
            self._tokenizer.no_truncation()
        encodings = self._tokenizer.encode_batch(
            [texts] if single else list(texts), add_special_tokens=add_special_tokens
        )
        out = {
            "input_ids": [e.ids for e in encodings],
            "attention_mask": [e.attention_mask for e in encodings],
        }
        if return_offsets_mapping:
            out["offset_mapping"] = [e.offsets for e in encodings]
        return {key: value[0] for key, value in out.items()} if single else out

    def convert_ids_to_tokens(self, ids: Sequence[int]) -> list[str]:
        return [self._tokenizer.id_to_token(i) for i in ids]

    def convert_tokens_to_ids(self, tokens: Sequence[str]) -> list[int]:
        ids = (self._tokenizer.token_to_id(token) for token in tokens)
        return [self.unk_token_id if i is None else i for i in ids]

    def decode(self, ids: Sequence[int], skip_special_tokens: bool = False) -> str:
        return self._tokenizer.decode(list(ids), skip_special_tokens=skip_special_tokens)

    def __len__(self) -> int:
        return self._tokenizer.get_vocab_size(with_added_tokens=True)


def load_tokenizer(folder: str | Path):
    """The tokenizer of an export `folder`: a :class:`FileTokenizer` where the folder's files are all it needs,
    else transformers' (imported then)."""
    folder = Path(folder)
    config = folder / "tokenizer_config.json"
    if (folder / "tokenizer.json").is_file() and config.is_file():
        if not json.loads(config.read_text(encoding="utf-8")).get("clean_up_tokenization_spaces"):
            return FileTokenizer(folder)
    from transformers import AutoTokenizer

    return AutoTokenizer.from_pretrained(folder)


class SavedDecoding:
    """A folder's `generation_config.json` as attributes: a setting it does not hold reads None, as in
    transformers' `GenerationConfig` for the settings the engines read."""

    def __init__(self, folder: str | Path):
        self._settings = json.loads((Path(folder) / "generation_config.json").read_text(encoding="utf-8"))

    def __getattr__(self, name: str):
        if name.startswith("_"):
            raise AttributeError(name)
        return self._settings.get(name)

    def to_dict(self) -> dict:
        return dict(self._settings)

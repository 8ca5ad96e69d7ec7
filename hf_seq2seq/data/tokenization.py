"""Joint source+target subword tokenizer: training, ``transformers`` wrapping, dataset tokenization.

Design
------
* **Model**: BPE (default) or Unigram, trained with ``tokenizers`` on training text only
  (:func:`train_tokenizer` takes any iterable of strings, so a sample of a streamed corpus works).
  The alphabet is every character seen in training; unseen characters become ``<unk>``.
* **Normalisation**: NFKC, then every run of whitespace becomes one space and the ends are
  stripped. Case, accents (NFKC composes ``e`` + U+0301 to ``é``), ``œ``, ``« »`` and both
  apostrophes (``'`` and ``’``) are kept as written. NFKC turns the no-break spaces of French
  typography (U+00A0, U+202F) and the thin space (U+2009) into ordinary spaces: the Tatoeba French
  uses them inconsistently, a plain space keeps ``?``/``!`` tokens shared between the two languages,
  and sacrebleu's BLEU (13a) and chrF treat all of them as whitespace, so metrics do not change.
  ``tokenizer.backend_tokenizer.normalizer.normalize_str(s)`` is the normalised form, and
  ``decode(encode(s), skip_special_tokens=True)`` gives it back exactly unless ``s`` holds a
  character never seen in training.
* **Pre-tokenizer/decoder**: ``Metaspace`` (``▁`` marks a preceding space; no byte-level
  mapping), so decoding restores spacing, including the space before French ``?`` and ``!``.
* **Special tokens** (T5 layout): ``<pad>`` = 0, ``</s>`` (eos) = 1, ``<unk>`` = 2, no bos. The
  post-processor appends ``</s>`` to every sequence, source and target alike. A model using this
  tokenizer starts decoding from ``<pad>`` (``decoder_start_token_id = pad_token_id``, as Marian/T5).

The result is a :class:`transformers.PreTrainedTokenizerFast` (``TokenizersBackend`` in 5.x):
``tokenizer.save_pretrained(folder)`` then ``AutoTokenizer.from_pretrained(folder)`` restores it
without remote code, and ``tokenizer(src, text_target=tgt)`` gives ``input_ids`` and ``labels``.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from typing import Any, Literal, TypeVar

from tokenizers import Regex, Tokenizer, decoders, models, normalizers, pre_tokenizers, processors, trainers
from transformers import PreTrainedTokenizerFast

PAD_TOKEN = "<pad>"
EOS_TOKEN = "</s>"
UNK_TOKEN = "<unk>"
SPECIAL_TOKENS = (PAD_TOKEN, EOS_TOKEN, UNK_TOKEN)
"""Special tokens in id order: ``<pad>`` = 0, ``</s>`` = 1, ``<unk>`` = 2."""


ModelType = Literal["bpe", "unigram"]
D = TypeVar("D")


def _normalizer() -> normalizers.Normalizer:
    return normalizers.Sequence(
        [normalizers.NFKC(), normalizers.Replace(Regex(r"\s+"), " "), normalizers.Strip()]
    )


def train_tokenizer(
    texts: Iterable[str],
    *,
    vocab_size: int = 8000,
    model_type: ModelType = "bpe",
    model_max_length: int = 128,
    show_progress: bool = False,
) -> PreTrainedTokenizerFast:
    """Train a subword tokenizer on ``texts`` (source and target sentences of the train split).

    ``vocab_size`` counts the special tokens; ``model_type`` is ``"bpe"`` (merges seen at least
    twice) or ``"unigram"``; ``model_max_length`` is the default truncation length.
    """
    if vocab_size <= len(SPECIAL_TOKENS):
        raise ValueError(f"vocab_size must exceed the {len(SPECIAL_TOKENS)} special tokens, got {vocab_size}")
    if model_type == "bpe":
        backend = Tokenizer(models.BPE(unk_token=UNK_TOKEN))
        trainer: trainers.Trainer = trainers.BpeTrainer(
            vocab_size=vocab_size,
            min_frequency=2,
            special_tokens=list(SPECIAL_TOKENS),
            show_progress=show_progress,
        )
    elif model_type == "unigram":
        backend = Tokenizer(models.Unigram())
        trainer = trainers.UnigramTrainer(
            vocab_size=vocab_size,
            special_tokens=list(SPECIAL_TOKENS),
            unk_token=UNK_TOKEN,
            show_progress=show_progress,
        )
    else:
        raise ValueError(f"model_type must be 'bpe' or 'unigram', got {model_type!r}")
    backend.normalizer = _normalizer()
    backend.pre_tokenizer = pre_tokenizers.Metaspace()
    backend.decoder = decoders.Metaspace()
    backend.train_from_iterator(texts, trainer)
    if backend.get_vocab_size() <= len(SPECIAL_TOKENS):
        raise ValueError("No text to train the tokenizer on: the iterable of texts was empty")
    eos_id = backend.token_to_id(EOS_TOKEN)
    backend.post_processor = processors.TemplateProcessing(
        single=f"$A {EOS_TOKEN}", pair=f"$A {EOS_TOKEN} $B {EOS_TOKEN}", special_tokens=[(EOS_TOKEN, eos_id)]
    )
    return PreTrainedTokenizerFast(
        tokenizer_object=backend,
        pad_token=PAD_TOKEN,
        eos_token=EOS_TOKEN,
        unk_token=UNK_TOKEN,
        model_max_length=model_max_length,
        padding_side="right",
        clean_up_tokenization_spaces=False,
    )


def iter_texts(
    dataset: Any, columns: Sequence[str] = ("src", "tgt"), max_examples: int | None = None
) -> Iterator[str]:
    """Yield the texts of ``columns`` from a ``Dataset`` or ``IterableDataset`` (its first ``max_examples`` rows).

    Feed it to :func:`train_tokenizer`; for a huge or streamed corpus, ``max_examples`` bounds the
    sample (shuffle the stream first for a representative one).
    """
    rows = dataset if max_examples is None else dataset.take(max_examples)
    for batch in rows.iter(batch_size=1000):
        for column in columns:
            yield from batch[column]


def _tokenize_split(
    dataset: Any,
    tokenizer: PreTrainedTokenizerFast,
    max_source_length: int,
    max_target_length: int,
    keep_columns: Sequence[str],
) -> Any:
    columns = dataset.column_names
    if columns is None:  # a stream whose schema is only known once read
        columns = list(next(iter(dataset), {}))
    missing = [c for c in ("src", "tgt") if c not in columns]
    if missing:
        raise ValueError(f"tokenize_dataset needs 'src' and 'tgt' columns; missing {missing} among {columns}")

    def encode(batch: dict[str, list[Any]]) -> dict[str, Any]:
        encoded = tokenizer(batch["src"], max_length=max_source_length, truncation=True)
        labels = tokenizer(text_target=batch["tgt"], max_length=max_target_length, truncation=True)
        return {**encoded, "labels": labels["input_ids"]}

    removed = [c for c in columns if c not in keep_columns]
    # an in-memory split shows a bar: name it (a stream is tokenized as it is read, with no bar and no `desc`)
    label = {"desc": "tokenizing"} if hasattr(dataset, "cache_files") else {}
    return dataset.map(encode, batched=True, remove_columns=removed, **label)


def tokenize_dataset(
    dataset: D,
    tokenizer: PreTrainedTokenizerFast,
    max_source_length: int = 128,
    max_target_length: int = 128,
    *,
    keep_columns: Sequence[str] = ("references",),
) -> D:
    """Tokenize ``src`` into ``input_ids``/``attention_mask`` and ``tgt`` into ``labels`` (batched ``map``).

    Works on a ``Dataset``, ``IterableDataset``, ``DatasetDict`` or ``IterableDatasetDict`` and
    returns the same kind. Sequences are truncated to the given lengths and end in ``</s>``.
    Text columns are removed except those in ``keep_columns`` (default: ``references``, present in
    evaluation splits, for BLEU); pass ``()`` to keep only model inputs.
    """
    if min(max_source_length, max_target_length) < 2:
        raise ValueError(
            "max_source_length and max_target_length must leave room for a token and </s> (>= 2)"
        )
    if isinstance(dataset, dict):
        return type(dataset)(
            {
                name: _tokenize_split(split, tokenizer, max_source_length, max_target_length, keep_columns)
                for name, split in dataset.items()
            }
        )
    return _tokenize_split(dataset, tokenizer, max_source_length, max_target_length, keep_columns)

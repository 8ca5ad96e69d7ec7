"""What the service translates with: a `BatchWorker` (a language pair, sentence splitting with lengths in
model tokens, and one batch call, `run`, of a `Task`), `TranslatorWorker` over any engine's `Translator`, and
`worker_loader`, which loads a saved or exported folder into one (with the language pair the folder records,
`hf_seq2seq.models.languages.model_languages`)."""

from __future__ import annotations

import copy
import os
from collections.abc import Callable
from dataclasses import dataclass

from hf_seq2seq.data.segmentation import LANGUAGES, Segmented, split_sentences, token_length
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.scoring import Score
from hf_seq2seq.models.languages import require_languages


@dataclass(frozen=True)
class Task:
    """What one model batch does with its sentences (the batcher merges only requests with equal tasks): decode
    them with `decoding`, keep each one's `hypotheses` best translations (1: its translation), and `score` the
    best (`hf_seq2seq.engines.scoring`). A plain task (one hypothesis, no score) gives a string per sentence,
    any other a `Hypotheses`."""

    decoding: Decoding
    hypotheses: int = 1
    score: bool = False

    @property
    def plain(self) -> bool:
        return self.hypotheses == 1 and not self.score


@dataclass(frozen=True)
class Hypotheses:
    """A sentence's translations, best first, and the best one's score (None unless asked for)."""

    translations: list[str]
    score: Score | None = None


def join_alternatives(parts: Segmented, hypotheses: list[Hypotheses], count: int) -> list[str]:
    """Up to `count` alternative translations of a text from its sentences' `hypotheses`: the k-th joins each
    sentence's k-th best translation (its last when it has fewer), as LibreTranslate leaves out repeats and the
    translation itself."""
    best = parts.join([h.translations[0] for h in hypotheses])
    out: list[str] = []
    for rank in range(1, count + 1):
        text = parts.join([h.translations[min(rank, len(h.translations) - 1)] for h in hypotheses])
        if text != best and text not in out:
            out.append(text)
    return out


class BatchWorker:
    """What the server translates with: a language pair, sentence splitting with lengths in model tokens, and
    a batch call. Subclass it to translate another way (tests inject slow or failing workers this way)."""

    name = "engine"
    """The translation engine it runs, as ``/health`` reports it."""
    source_lang = "en"
    target_lang = "fr"
    max_length: int | None = None
    """Sentences longer than this (by `length`) are cut further by the splitter."""
    translator = None
    """The engine's `hf_seq2seq.engines.base.Translator` behind the batch call, if there is one: markup,
    glossaries and documents (`hf_seq2seq.serving.formats`) need its tokenizer; None: plain text only."""
    alignment_error: str | None = "this server's engine gives no word alignments"
    """Why the engine gives no word alignments (which markup and glossaries need); None when it gives them."""
    hypotheses_error: str | None = "this server's engine gives no alternative translations"
    """Why the engine gives no alternatives; None when it gives them (`translate_more`)."""
    score_error: str | None = "this server's engine gives no scores"
    """Why the engine gives no scores (confidence); None when it gives them (`translate_more`)."""
    max_positions: int | None = None
    """The most tokens the model reads or writes (its positions): the cap of a request's ``max_new_tokens``."""
    split_tokenizer = None
    """A copy of the model's tokenizer for measuring sentences outside the model thread, when there is one."""

    def length(self, sentence: str) -> int:
        """A sentence's length in the model's source tokens."""
        return len(sentence.split()) + 1

    @property
    def splitter_language(self) -> str:
        """The language whose rules cut the source into sentences (English's for one the splitter lacks)."""
        return self.source_lang if self.source_lang in LANGUAGES else "en"

    def segment(self, text: str) -> Segmented:
        """The sentences of `text` and what lies between them
        (`hf_seq2seq.data.segmentation.split_sentences`)."""
        return split_sentences(text, self.splitter_language, self.max_length, self.length)

    def translate(self, sentences: list[str], decoding: Decoding) -> list[str]:
        """Translations of `sentences`, in order: one model batch. Called from one thread at a time."""
        raise NotImplementedError

    def translate_more(self, sentences: list[str], task: Task) -> list[Hypotheses]:
        """`task`'s hypotheses and scores of `sentences`, in order: one model batch (see `hypotheses_error` and
        `score_error` for what the engine gives)."""
        raise NotImplementedError

    def run(self, sentences: list[str], task: Task) -> list[str] | list[Hypotheses]:
        """The batcher's call: `translate` for a plain `task`, else `translate_more`."""
        if task.plain:
            return self.translate(sentences, task.decoding)
        return self.translate_more(sentences, task)

    def describe(self) -> dict:
        return {"engine": self.name, "source": self.source_lang, "target": self.target_lang}


class TranslatorWorker(BatchWorker):
    """Any engine's `hf_seq2seq.engines.base.Translator` (e.g. of
    `hf_seq2seq.engines.factory.load_translator`), translated by `hf_seq2seq.engines.base.translate`; named by
    its `engine`, described by its `describe()`."""

    def __init__(self, translator, source_lang: str, target_lang: str):
        from hf_seq2seq.engines.base import UnsupportedFeature, trained_length

        self.translator, tokenizer = translator, translator.tokenizer
        self.source_lang, self.target_lang, self.name = source_lang, target_lang, translator.engine
        self.max_length = trained_length(tokenizer)
        # a fast tokenizer's settings (truncation, padding) live in its Rust object, which the model thread
        # changes per call: measuring lengths from another thread uses a copy of its own (every caller of the
        # copy tokenizes the same way, so none changes its settings under another)
        self.split_tokenizer = copy.deepcopy(tokenizer)
        self.max_positions = translator.max_source_length
        # an engine refuses what it cannot do at once, even with nothing to do
        for attribute, probe in (
            ("alignment_error", lambda: translator.align([], [])),
            ("hypotheses_error", lambda: translator.translate_hypotheses([], 2)),
            ("score_error", lambda: translator.score([], [])),
        ):
            try:
                probe()
                setattr(self, attribute, None)
            except UnsupportedFeature as error:
                setattr(self, attribute, str(error))

    def length(self, sentence: str) -> int:
        return token_length(self.split_tokenizer)(sentence)

    def translate(self, sentences: list[str], decoding: Decoding) -> list[str]:
        from hf_seq2seq.engines.base import translate

        return translate(self.translator, sentences, batch_size=len(sentences), decoding=decoding)

    def translate_more(self, sentences: list[str], task: Task) -> list[Hypotheses]:
        from hf_seq2seq.engines.base import translate_alternatives

        size = len(sentences)
        if task.hypotheses > 1:
            found = translate_alternatives(self.translator, sentences, task.hypotheses, size, task.decoding)
        else:
            found = [[translation] for translation in self.translate(sentences, task.decoding)]
        scores = [None] * size
        if task.score:
            scores = self.translator.score(sentences, [each[0] for each in found], size)
        return [Hypotheses(each, score) for each, score in zip(found, scores, strict=True)]

    def describe(self) -> dict:
        return super().describe() | self.translator.describe()


def worker_loader(
    folder: str | os.PathLike[str],
    engine: str = "torch",
    precision: str = "fp32",
    languages: tuple[str, str] | None = None,
    trust_remote_code: bool = False,
) -> Callable[[], TranslatorWorker]:
    """A function that loads `folder` with `hf_seq2seq.engines.factory.load_translator` (`engine`,
    `precision`) into a `TranslatorWorker` (the server calls it in the background, answering 503 until it
    returns). `languages` is the (source, target) pair; default: what the folder records
    (`hf_seq2seq.models.languages.model_languages`); `UnknownLanguagePair` for a folder that records none."""

    def load() -> TranslatorWorker:
        from hf_seq2seq.engines.factory import load_translator

        pair = require_languages(folder, languages)
        return TranslatorWorker(load_translator(folder, engine, precision, trust_remote_code), *pair)

    return load

"""Sentence splitting for long inputs, and joining the translations back with the original layout.

The model only ever saw one short sentence at a time, so a paragraph is translated sentence by sentence:
:func:`split_sentences` cuts a text into sentences and keeps everything between them (spaces, line breaks,
leading and trailing whitespace) in a :class:`Segmented`, whose :meth:`Segmented.join` puts translations back
in place of the sentences. :func:`translate_by_sentence` does this for many texts with one batched call.

The cutting itself is `hf_seq2seq.models.transformer_mt.sentence_splitting` (its docstring has the rules), the
module that ships inside every saved model for the translation pipeline: ``hf-seq2seq translate``, ``evaluate
--split-sentences``, the server, the demo and ``pipeline("translation", trust_remote_code=True)`` cut a text the
same way. Here a language the splitter does not know (`LANGUAGES`) is refused rather than split by the rules of no
particular language, so that a mistyped ``--source-lang`` is caught.
"""

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hf_seq2seq.models.transformer_mt.sentence_splitting import LANGUAGES, split_text

__all__ = ["LANGUAGES", "Segmented", "split_sentences", "token_length", "translate_by_sentence"]


@dataclass(frozen=True)
class Segmented:
    """The sentences of a text and what lies around them.

    ``separators`` has one entry more than ``sentences``: ``separators[0]`` comes before the first sentence,
    ``separators[i]`` between sentences ``i - 1`` and ``i``, ``separators[-1]`` after the last. A blank text has
    no sentence and is its one separator. ``segmented.join(segmented.sentences)`` is the original text.
    """

    sentences: list[str]
    separators: list[str]

    def join(self, translations: Sequence[str]) -> str:
        """The text with each sentence replaced by its translation (one per sentence, in order)."""
        if isinstance(translations, str) or len(translations) != len(self.sentences):
            raise ValueError(
                f"need one translation per sentence: {len(self.sentences)} sentences, got "
                f"{'a string' if isinstance(translations, str) else len(translations)}"
            )
        parts = [self.separators[0]]
        for translation, separator in zip(translations, self.separators[1:], strict=True):
            parts += [translation, separator]
        return "".join(parts)


def token_length(tokenizer) -> Callable[[str], int]:
    """A sentence's length in `tokenizer`'s tokens, special tokens included: the `length` by which a sentence
    longer than the model's training sources is cut further."""
    return lambda sentence: len(tokenizer(sentence, verbose=False)["input_ids"])


def split_sentences(
    text: str,
    language: str = "en",
    max_length: int | None = None,
    length: Callable[[str], int] | None = None,
) -> Segmented:
    """Split `text` into sentences (see the module docstring), keeping the text between them.

    Args:
        text: any text: one sentence, a paragraph, several lines, or blank.
        language: ISO 639-1 code of the text's language (one of `LANGUAGES`), for its abbreviations.
        max_length: cut sentences longer than this further (at ``, ; :``, else between words).
        length: how `max_length` is measured (default: the number of whitespace-separated words); pass e.g.
            ``lambda s: len(tokenizer(s)["input_ids"])`` to measure in model tokens.
    """
    if language not in LANGUAGES:
        raise ValueError(
            f"no sentence splitting rules for language {language!r}; known: {', '.join(sorted(LANGUAGES))} "
            f"(or turn splitting off)"
        )
    sentences, separators = split_text(text, language, max_length, length)
    return Segmented(sentences=sentences, separators=separators)


def translate_by_sentence(
    texts: Sequence[str],
    translate_batch: Callable[[list[str]], list[str]],
    language: str = "en",
    max_length: int | None = None,
    length: Callable[[str], int] | None = None,
) -> list[str]:
    """Translate each of `texts` sentence by sentence with one call of `translate_batch` on all sentences.

    `translate_batch` takes a list of sentences and returns their translations in order (e.g.
    ``lambda batch: translator.translate_sentences(batch)``). Each text comes back with its sentences
    replaced by their translations and its spacing and line breaks as they were; a blank text comes back as is.
    """
    segmented = [split_sentences(text, language, max_length, length) for text in texts]
    sentences = [sentence for parts in segmented for sentence in parts.sentences]
    translations = translate_batch(sentences)
    if len(translations) != len(sentences):
        raise ValueError(
            f"translate_batch returned {len(translations)} translations for {len(sentences)} sentences"
        )
    out, position = [], 0
    for parts in segmented:
        out.append(parts.join(translations[position : position + len(parts.sentences)]))
        position += len(parts.sentences)
    return out

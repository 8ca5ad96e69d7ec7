"""Sentence splitting for long inputs, and joining the translations back with the original layout.

The model only ever saw one short sentence at a time, so a paragraph is translated sentence by sentence:
:func:`split_sentences` cuts a text into sentences and keeps everything between them (spaces, line breaks,
leading and trailing whitespace) in a :class:`Segmented`, whose :meth:`Segmented.join` puts translations back
in place of the sentences. :func:`translate_by_sentence` does this for many texts with one batched call.

Segmentation
------------
Lines are split first (a line break always ends a sentence; blank lines are kept as separators), then each
line goes through `pysbd` (rule-based, ``clean=False``: it keeps every character; 22 languages, see
``pysbd.languages.LANGUAGE_CODES``). A line with no sentence-final mark (``. ! ? …``) before its end is one
sentence and skips pysbd, which costs about 2 ms per sentence: most inputs are single short sentences.
Sentences longer than ``max_length`` (by a ``length`` function, e.g. token count) are cut further at
``, ; :`` and, failing that, between words, into the fewest pieces that fit.

What pysbd 0.3.4 does (checked on these examples; `tests/test_segmentation.py` pins the main ones):

* English, kept whole: ``Mr. Smith met Dr. Brown at 3.5 p.m. in the U.S. yesterday.``, ``Bring fruit, e.g.
  apples, pears, etc. and some bread.``, ``It costs $3.50.``, ``He said "Stop!" and left.``, ``Tom said: 'I'm
  tired.'``; ``I live in the U.S. It is big.`` splits after ``U.S.`` (right).
* Ellipses and ``!?``: ``Wait... what? I don't know... Maybe.`` gives three sentences; ``Really?! Yes! No
  way!? OK.`` gives four (split after every ``?!``/``!?``/``!``).
* French, kept whole: ``M. Dupont est arrivé.``, ``Le prix est de 3.5 euros.`` / ``3,5 ans``, ``« Viens ! »
  dit-il.``; ``des poires, etc. Puis il est parti.`` splits after ``etc.`` (right); ``Quoi ?! Non !
  Vraiment ?`` gives three. Wrong splits: ``Le Dr. | Martin`` (``Dr`` is not in pysbd's French list), ``aux
  É.-U. depuis`` (cut into ``É.`` / ``-U.`` / the rest), ``p. | ex.`` (only ``p.ex`` is listed). The Unicode
  ellipsis ``…`` does not end a French sentence (``Je ne sais pas… Peut-être.`` stays one); three dots do.
* Tatoeba: of 2,000 random single lines per language none lost or changed a character; 15 English and 16
  French lines were split, each of them truly two sentences (``Don't thank me. Thank Tom.``).
"""

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import pysbd
from pysbd.languages import LANGUAGE_CODES

# a sentence-final mark; one followed only by closing marks at the end of a line ends that line's only sentence
_FINAL_MARK = re.compile(r"[.!?…。！？։।؟]")
_TRAILING = re.compile(r"""[\s.!?…。！？։।؟"'»”’)\]]+$""")
_LINE = re.compile(r"[^\r\n]+")
_CLAUSE_END = re.compile(r"[,;:]\s+")
_WORD = re.compile(r"\S+")


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


def _segmenter(language: str) -> pysbd.Segmenter:
    if language not in LANGUAGE_CODES:
        raise ValueError(
            f"no sentence splitting rules for language {language!r}; known: {', '.join(sorted(LANGUAGE_CODES))} "
            f"(or turn splitting off)"
        )
    return pysbd.Segmenter(language=language, clean=False)


def _sentence_spans(line: str, start: int, segmenter: pysbd.Segmenter) -> list[tuple[int, int]]:
    """(start, end) offsets of the stripped sentences of a non-blank line that begins at `start`."""
    body = line.strip()
    offset = start + line.index(body)
    if not _FINAL_MARK.search(_TRAILING.sub("", body)):
        return [(offset, offset + len(body))]
    spans, position = [], 0
    for sentence in segmenter.segment(body):
        sentence = sentence.strip()
        found = body.find(sentence, position) if sentence else -1
        if found < 0:  # pysbd changed a character: keep the line whole rather than lose text
            return [(offset, offset + len(body))]
        spans.append((offset + found, offset + found + len(sentence)))
        position = found + len(sentence)
    return spans


def _fit(
    text: str, start: int, end: int, max_length: int, length: Callable[[str], int]
) -> list[tuple[int, int]]:
    """Cut the span text[start:end] at clause marks, else between words, into the fewest pieces that fit."""
    if length(text[start:end]) <= max_length:
        return [(start, end)]
    cuts = [start + m.end() for m in _CLAUSE_END.finditer(text[start:end])]
    atoms = [(a, _rstrip(text, a, b)) for a, b in zip([start, *cuts], [*cuts, end], strict=True)]
    if len(atoms) == 1:
        words = [(start + m.start(), start + m.end()) for m in _WORD.finditer(text[start:end])]
        if len(words) == 1:  # one word longer than the limit: nothing to cut
            return [(start, end)]
        atoms = words
    else:
        atoms = [piece for a, b in atoms for piece in _fit(text, a, b, max_length, length)]
    pieces = [atoms[0]]
    for a, b in atoms[1:]:
        if length(text[pieces[-1][0] : b]) <= max_length:
            pieces[-1] = (pieces[-1][0], b)
        else:
            pieces.append((a, b))
    return pieces


def _rstrip(text: str, start: int, end: int) -> int:
    return start + len(text[start:end].rstrip())


def split_sentences(
    text: str,
    language: str = "en",
    max_length: int | None = None,
    length: Callable[[str], int] | None = None,
) -> Segmented:
    """Split `text` into sentences (see the module docstring), keeping the text between them.

    Args:
        text: any text: one sentence, a paragraph, several lines, or blank.
        language: ISO 639-1 code of the text's language, for pysbd's abbreviation rules.
        max_length: cut sentences longer than this further (at ``, ; :``, else between words).
        length: how `max_length` is measured (default: the number of whitespace-separated words); pass e.g.
            ``lambda s: len(tokenizer(s)["input_ids"])`` to measure in model tokens.
    """
    segmenter = _segmenter(language)
    length = length or (lambda s: len(s.split()))
    if max_length is not None and max_length < 1:
        raise ValueError(f"max_length must be >= 1, got {max_length}")
    spans = []
    for line in _LINE.finditer(text):
        if line.group().strip():
            spans += _sentence_spans(line.group(), line.start(), segmenter)
    if max_length is not None:
        spans = [piece for a, b in spans for piece in _fit(text, a, b, max_length, length)]
    bounds = [0, *(i for span in spans for i in span), len(text)]
    separators = [text[bounds[k] : bounds[k + 1]] for k in range(0, len(bounds), 2)]
    return Segmented(sentences=[text[a:b] for a, b in spans], separators=separators)


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


__all__ = ["Segmented", "split_sentences", "translate_by_sentence"]

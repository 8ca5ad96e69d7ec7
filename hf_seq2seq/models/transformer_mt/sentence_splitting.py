"""The one sentence splitter: of the translation pipeline shipped in every saved model, and of the package.

The model only ever saw one short sentence at a time, so a longer text is translated sentence by sentence.
The pipeline (``pipeline_translation.py``, next to this file in every saved folder) and the package
(`hf_seq2seq.data.segmentation`: ``hf-seq2seq translate``, ``evaluate --split-sentences``, the server, the
demo) both cut texts with :func:`split_text`, so a text is cut the same way everywhere. The file ships inside
checkpoints and is loaded by Hub users who do not have the package: it runs on the standard library alone.

Rules:

* A line break always ends a sentence; blank lines and the whitespace around sentences are separators, kept
  exactly (``separators`` and ``sentences`` interleaved give the text back, character for character). A text
  with no sentence-final mark is one sentence per line.
* Within a line, a run of sentence-final marks (`FINAL_MARKS`: ``. ! ? …``, ``‼ ⁇ ⁈ ⁉``, the full stops and
  question marks of other scripts; Greek ``;``) and the closing quotes and brackets right after it end a
  sentence when whitespace follows and the next word does not begin with a lowercase letter: ``He said
  "Stop!" and left.``, ``« Viens ! » dit-il.``, ``Wait... what?`` and ``etc. and`` stay whole. A lone ``.``
  with whitespace on both sides (tokenized text: ``a green hat . our dog``) ends a sentence before any word. In French a
  closing ``»`` after a space belongs to the sentence it closes. The CJK marks ``。！？｡`` end a sentence even
  with no space after them.
* A single ``.`` does not end a sentence after a known abbreviation of the language (`ABBREVIATIONS`: English
  ``Mr. Dr. Prof. St. vs. e.g. i.e.``, French ``Mme Mlle Dr. Pr. Me`` ...), after one that takes a number
  when a digit follows (`NUMBER_ABBREVIATIONS`: ``No. 5``, ``p. 12``), after an initial (one capital letter:
  ``J. R. R. Tolkien``, ``M. Dupont``; not English ``I``), after a list number that begins the line (``1.
  First``), or after a number in a language that writes ordinals with a dot (``am 3. Oktober``).
* After capitals joined by dots (``U.S.``, ``D.H.``, ``É.-U.``) a ``.`` ends a sentence only before a word
  that often begins one (`SENTENCE_STARTERS`): ``I live in the U.S. It is big.`` is two sentences, ``D.H.
  Lawrence`` one. Other dotted abbreviations (``p.m.``, ``etc.``) end a sentence before any capital.
* A decimal (``3.5``, ``$3.50``) has no space after its dot, so never ends a sentence.
* A sentence longer than ``max_length`` (by a ``length`` function, e.g. its count of model tokens) is cut
  further at ``, ; :`` and, failing that, between words, into the fewest pieces that fit.

Languages other than English and French get the same rules without their word lists.
"""

import functools
import re
from collections.abc import Callable
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from transformers import PreTrainedTokenizerBase

LANGUAGES = (
    *("am", "ar", "bg", "da", "de", "el", "en", "es", "fa", "fr", "hi", "hy"),
    *("it", "ja", "kk", "mr", "my", "nl", "pl", "ru", "sk", "ur", "zh"),
)
"""ISO 639-1 codes of the languages that the package splits (`hf_seq2seq.data.segmentation` refuses any
other; the pipeline splits a text of any other language by the rules without word lists)."""

ABBREVIATIONS = {
    "en": frozenset(
        "Mr Mrs Ms Messrs Dr Prof St Mt Rev Gen Col Capt Lt Sgt Hon Sen Rep Gov Pres Jr Sr "
        "vs e.g i.e cf".split()
    ),
    "fr": frozenset("MM Mme Mmes Mlle Mlles Dr Pr Me Mgr St Ste cf vs av apr env c.-à-d".split()),
}
"""Words that a single ``.`` does not end a sentence after, as written (case matters: ``Me`` is a title)."""

NUMBER_ABBREVIATIONS = {
    "en": frozenset("No Nos Nr p pp Fig fig Figs figs Vol vol Ch ch Sec sec Art art Eq eq".split()),
    "fr": frozenset("n no No p pp Fig fig Vol vol t chap Chap Art art".split()),
}
"""Words that a single ``.`` does not end a sentence after when a digit follows (``No. 5``, ``p. 12``)."""

SENTENCE_STARTERS = {
    "en": frozenset(
        "A After All And Another As At But Did Do Does During Each Even Every For From He Her Here His "
        "How However I If In It Its Let Many More Most My No Now On Once One Only Our She Since So Some "
        "Such That The Their Then There These They This Those Today We What When Where Which While Who Why "
        "With Yes You Your".split()
    ),
    "fr": frozenset(  # elided words by their letters: `C'est` -> C, `J'ai` -> J, `Qu'il` -> Qu
        "Alors Après Au Aujourd Aussi C Ce Ceci Cela Ces Cet Cette Comment D Dans Depuis Elle Elles En "
        "Et Il Ils J Je L La Le Les Lorsque Ma Mais Mes Mon N Nous On Où Pour Pourquoi Puis Qu Quand Que "
        "Qui S Sa Se Ses Si Son Sur Tu Un Une Vous".split()
    ),
}
"""Words that often begin a sentence: after capitals joined by dots (``U.S.``, ``D.H.``, ``É.-U.``), a ``.``
ends a sentence only before one of them (``I live in the U.S. It is big.``, but ``D.H. Lawrence``)."""

WORDS_OF_ONE_CAPITAL = {"en": frozenset({"I"})}
"""Words of one capital letter, which a ``.`` ends a sentence after (``So am I. This ...``); any other capital
letter before a ``.`` is an initial (``J. R. R. Tolkien``, ``M. Dupont``)."""

ORDINAL_LANGUAGES = frozenset({"da", "de", "pl", "sk"})
"""Languages that write ordinal numbers with a dot (``am 3. Oktober``): a number's ``.`` ends no sentence."""

EXTRA_FINAL_MARKS = {"el": ";"}
"""Marks that end a sentence in one language only (the Greek question mark is written ``;``)."""

FINAL_MARKS = ".!?…‼⁇⁈⁉։।॥؟۔።။"
"""Marks that end a sentence when whitespace follows them."""
CJK_FINAL_MARKS = "。！？｡"
"""Marks that end a sentence whatever follows them (CJK text has no space between sentences)."""
CLOSING_MARKS = "\"'»”’›)]}」』）】》"
"""Closing quotes and brackets, which belong to the sentence they close."""
OPENING_MARKS = "\"'«“‘‹([{¿¡"
"""Opening quotes and brackets, which are not part of the word they open (``("Mr.`` is ``Mr.``)."""

_LINE = re.compile(r"[^\r\n\v\f\x1c-\x1e\x85\u2028\u2029]+")  # the line boundaries of str.splitlines
_CLAUSE_END = re.compile(r"[,;:]\s+")
_WORD = re.compile(r"\S+")
_FRENCH_SPACED_CLOSE = re.compile(r"\s+»")
_CAPITALS = re.compile(r"(?:[^\W\d_]\.-?)+[^\W\d_]")  # `U.S`, `É.-U`: single letters joined by dots
_LETTERS = re.compile(r"[^\W\d_]+")

Span = tuple[int, int]
"""(start, end) offsets of a piece of the text: ``text[start:end]``."""


def split_text(
    text: str,
    language: str = "en",
    max_length: int | None = None,
    length: Callable[[str], int] | None = None,
) -> tuple[list[str], list[str]]:
    """(sentences, separators) of `text` (see the module docstring): ``separators[i]`` comes before
    ``sentences[i]`` and ``separators[-1]`` after the last sentence, so that interleaving them gives `text`
    back; a blank text has no sentence and is its one separator.

    Args:
        text: any text: one sentence, a paragraph, several lines, or blank.
        language: ISO 639-1 code of the text's language, for its abbreviations (any code is taken here).
        max_length: cut sentences longer than this further (at ``, ; :``, else between words).
        length: how `max_length` is measured (default: the number of whitespace-separated words).
    """
    if max_length is not None and max_length < 1:
        raise ValueError(f"max_length must be >= 1, got {max_length}")
    spans = [
        span
        for line in _LINE.finditer(text)
        for span in _line_spans(text, line.start(), line.end(), language)
    ]
    if max_length is not None:
        length = length or (lambda s: len(s.split()))
        spans = [piece for start, end in spans for piece in _fit(text, start, end, max_length, length)]
    bounds = [0, *(i for span in spans for i in span), len(text)]
    separators = [text[bounds[k] : bounds[k + 1]] for k in range(0, len(bounds), 2)]
    return [text[start:end] for start, end in spans], separators


def _line_spans(text: str, start: int, end: int, language: str) -> list[Span]:
    """The spans of the sentences of the line text[start:end], without the whitespace around them."""
    line = text[start:end]
    body = line.strip()
    if not body:
        return []
    begin, spans, position = start + line.index(body), [], 0
    for cut in _sentence_ends(body, language):
        position += len(body[position:cut]) - len(body[position:cut].lstrip())
        spans.append((begin + position, begin + cut))
        position = cut
    return spans


def _sentence_ends(body: str, language: str) -> list[int]:
    """Offsets in `body` (a stripped line) where its sentences end; the last is ``len(body)``."""
    ends = []
    for match in _boundary(language).finditer(body):
        end = _close_quote(body, match.end(), language)
        if end >= len(body):
            break
        if match.group()[0] in CJK_FINAL_MARKS:
            ends.append(end)
        elif body[end].isspace() and _ends_sentence(body, match, end, language):
            ends.append(end)
    return [*ends, len(body)]


@functools.cache
def _boundary(language: str) -> re.Pattern:
    """A run of final marks of `language` and the closing marks right after it."""
    marks = re.escape(FINAL_MARKS + EXTRA_FINAL_MARKS.get(language, ""))
    return re.compile(rf"(?:[{marks}]+|[{CJK_FINAL_MARKS}]+)[{re.escape(CLOSING_MARKS)}]*")


def _close_quote(body: str, end: int, language: str) -> int:
    """`end`, moved past a French closing ``»`` written after a space (``« Viens ! » dit-il.``)."""
    if language == "fr" and body.count("«", 0, end) > body.count("»", 0, end):
        spaced = _FRENCH_SPACED_CLOSE.match(body, end)
        if spaced:
            return spaced.end()
    return end


def _ends_sentence(body: str, match: re.Match, end: int, language: str) -> bool:
    """Whether the final marks `match`, followed by whitespace and more text from `end` on, end a sentence."""
    after = body[end:].lstrip()
    # a lowercase word goes on with the sentence: `He said "Stop!" and left.`, `etc. and`, `Wait... what?`;
    # except after a lone `.` written apart, as in tokenized text (`a green hat . our dog`)
    if after[0].islower():
        return match.group() == "." and body[match.start() - 1 : match.start()].isspace()
    # several marks (`?!`, `...`) or closing quotes after the mark: no abbreviation rule applies
    if match.group() != ".":
        return True
    before = body[: match.start()]
    word = before.split()[-1].lstrip(OPENING_MARKS) if before and not before[-1].isspace() else ""
    if word in ABBREVIATIONS.get(language, ()):
        return False
    if after[0].isdigit() and word in NUMBER_ABBREVIATIONS.get(language, ()):
        return False
    if len(word) == 1 and word.isupper():  # an initial (`J. R. R. Tolkien`), or a word such as English `I`
        return word in WORDS_OF_ONE_CAPITAL.get(language, ())
    if _CAPITALS.fullmatch(word) and word.isupper():  # `U.S`, `D.H`, `É.-U`: a sentence ends before a starter
        starter = _LETTERS.match(after)
        return starter is None or starter[0] in SENTENCE_STARTERS.get(language, ())
    if word.isdigit() and language in ORDINAL_LANGUAGES:  # `am 3. Oktober`
        return False
    return not (word.isdigit() and before == word)  # a list number that begins the line: `1. First`


def _fit(text: str, start: int, end: int, max_length: int, length: Callable[[str], int]) -> list[Span]:
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


def trained_length(tokenizer: "PreTrainedTokenizerBase") -> int | None:
    """The longest source in tokens that training used (the tokenizer's ``model_max_length``), if it is set:
    the length the pipeline and the package cut sentences to."""
    length = tokenizer.model_max_length
    return length if length and length < 100_000 else None  # transformers' "unset" is a huge number

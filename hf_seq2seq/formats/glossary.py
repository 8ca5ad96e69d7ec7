"""A user's own terms: a glossary of source term -> target term, found in a source sentence and put into its
translation.

How a term gets into the translation (measured against forcing it during decoding's alternatives in
docs/formats.md, Glossaries): the sentence is translated as usual, aligned word by word (`Translator.align`), and the
target words aligned to the source term are replaced by the target term; where no target word is aligned to it,
the term goes after the target word aligned to the source word before it. A translation that already holds the
term is left alone. The alignment is updated with the replacement, so markup placed afterwards follows it.

A source term is found whatever its case (`Invoice`, `INVOICE`) and with the English inflections of its last
word (`invoices`, `invoice's`, `billed`, `billing`, `companies`): `find_terms`.
"""

from __future__ import annotations

import json
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

from hf_seq2seq.engines.alignment import Alignment
from hf_seq2seq.errors import HfSeq2SeqError

PUNCTUATION = "\"'«»“”‘’()[]{}¿¡.,;:!?…"
"""Characters stripped from the ends of a word before it is compared with a term."""
SUFFIXES = ("", "s", "es", "'s", "s'", "’s", "d", "ed", "ing", "er", "ers")
"""English endings of a source term's last word that still match it (`invoice` -> `invoices`)."""
ELISIONS = {
    "l'": "le ",
    "d'": "de ",
    "j'": "je ",
    "n'": "ne ",
    "s'": "se ",
    "c'": "ce ",
    "qu'": "que ",
    "m'": "me ",
    "t'": "te ",
}
"""French elided words, and what they are written as before a term that begins with a consonant."""
VOWELS = "aeiouyhàâäéèêëîïôöùûü"
ARTICLES = frozenset({"le", "la", "les", "un", "une", "des"})
"""French articles: a target term may begin with one, to say its gender."""


class GlossaryError(HfSeq2SeqError, ValueError):
    """A glossary file or mapping that cannot be used (the message says why)."""


@dataclass(frozen=True)
class Term:
    """One glossary entry: `source` words (lowercase) and the `target` text that must translate them."""

    source: tuple[str, ...]
    target: str


@dataclass(frozen=True)
class TermMatch:
    """Where a term occurs in a sentence: source words `[start, end)` and the target text to put there."""

    start: int
    end: int
    target: str


class Glossary:
    """Source term -> target term, from a mapping (`Glossary({"invoice": "facture"})`), a TSV file (one
    `source<TAB>target` per line; blank lines and lines starting with `#` skipped) or a JSON file (an object
    of source -> target): `Glossary.load(path)`. Longer terms win over shorter ones they overlap."""

    def __init__(self, terms: Mapping[str, str]):
        if not isinstance(terms, Mapping):
            raise GlossaryError(
                f"a glossary is an object of source term -> target term, got {type(terms).__name__}"
            )
        entries = []
        for source, target in terms.items():
            if not isinstance(source, str) or not isinstance(target, str):
                raise GlossaryError(f"glossary terms must be strings, got {source!r} -> {target!r}")
            words = tuple(_bare(word) for word in source.split())
            if not any(words) or not target.strip():
                raise GlossaryError(f"empty glossary term: {source!r} -> {target!r}")
            entries.append(Term(words, " ".join(target.split())))
        self.terms = sorted(entries, key=lambda term: -len(term.source))

    @classmethod
    def load(cls, path: str | os.PathLike[str]) -> Glossary:
        """A glossary from a `.json` file (an object) or any other file as TSV."""
        path = Path(path)
        try:
            text = path.read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError) as exc:
            raise GlossaryError(f"cannot read the glossary {path}: {exc}") from exc
        if path.suffix.lower() == ".json":
            try:
                return cls(json.loads(text))
            except json.JSONDecodeError as exc:
                raise GlossaryError(f"{path} is not valid JSON: {exc}") from exc
        terms = {}
        for number, line in enumerate(text.splitlines(), 1):
            if not line.strip() or line.lstrip().startswith("#"):
                continue
            source, tab, target = line.partition("\t")
            if not tab:
                raise GlossaryError(f"{path}, line {number}: expected source<TAB>target, got {line!r}")
            terms[source.strip()] = target.strip()
        return cls(terms)

    def __len__(self) -> int:
        return len(self.terms)

    def __bool__(self) -> bool:
        return bool(self.terms)

    def find_terms(self, sentence: str) -> list[TermMatch]:
        """The terms of this glossary in `sentence` (whitespace words), left to right, not overlapping."""
        words = [_bare(word) for word in sentence.split()]
        taken = [False] * len(words)
        matches = []
        for term in self.terms:
            n = len(term.source)
            for start in range(len(words) - n + 1):
                if any(taken[start : start + n]) or not _matches(term.source, words[start : start + n]):
                    continue
                taken[start : start + n] = [True] * n
                matches.append(TermMatch(start, start + n, term.target))
        return sorted(matches, key=lambda match: match.start)


def _bare(word: str) -> str:
    return word.strip(PUNCTUATION).lower()


def _matches(term: tuple[str, ...], words: Iterable[str]) -> bool:
    *head, last = term
    *word_head, word_last = words
    if list(head) != word_head:
        return False
    stems = {last} | ({last[:-1] + "i", last[:-1]} if last.endswith(("y", "e")) else set())
    return any(word_last == stem + suffix for stem in stems for suffix in SUFFIXES) or word_last == last


def apply_terms(
    translation: str, alignment: Alignment, matches: Iterable[TermMatch]
) -> tuple[str, Alignment]:
    """`translation` with each matched term's target text put in place of the target words aligned to it
    (the longest run of consecutive such words; a word of punctuation alone is never replaced), or after the
    target word aligned to the source word before it where none is aligned; a term the translation already
    holds is left as it is. A target term may begin with its French article (`la facture`), which then replaces
    the article before the replaced words (`le note` -> `la facture`) and is left out after another determiner
    (`votre note` -> `votre facture`). Returns the new translation and its alignment (the term's words aligned
    to the term's source words)."""
    target = translation.split()
    pairs = list(alignment)
    for match in sorted(matches, key=lambda m: -m.start):  # right to left: earlier indices stay valid
        term_words = match.target.split()
        lowered = [_bare(w) for w in target]
        wanted = [_bare(w) for w in term_words]
        if any(lowered[i : i + len(wanted)] == wanted for i in range(len(lowered) - len(wanted) + 1)):
            continue
        aligned = sorted({j for i, j in pairs if match.start <= i < match.end and _bare(target[j])})
        if aligned:
            first, last = _longest_run(aligned)
            if len(term_words) > 1 and term_words[0].lower() in ARTICLES:  # a term given with its article
                if first > 0 and _bare(target[first - 1]) in ARTICLES:
                    first -= 1  # replaces the model's article, whose gender may not be the term's
                elif not _bare(target[first]).startswith(tuple(ELISIONS)):
                    term_words = term_words[1:]  # the model wrote another determiner (votre, cette): keep it
            replaced = target[first : last + 1]
            new = _fit(term_words, replaced)
        else:
            before = [j for i, j in pairs if i < match.start and _bare(target[j])]
            first = last = (max(before) + 1) if before else 0
            last -= 1  # an empty range: insert at `first`
            new = list(term_words)
        width = last + 1 - first
        target[first : last + 1] = new
        shift = len(new) - width
        pairs = [
            (i, j if j < first else j + shift)
            for i, j in pairs
            if not (first <= j <= last) and not (match.start <= i < match.end)
        ]
        pairs += [(i, first + k) for i in range(match.start, match.end) for k in range(len(new))]
    return " ".join(target), sorted(set(pairs))


def _longest_run(indices: list[int]) -> tuple[int, int]:
    best = current = (indices[0], indices[0])
    for j in indices[1:]:
        current = (current[0], j) if j == current[1] + 1 else (j, j)
        if current[1] - current[0] > best[1] - best[0]:
            best = current
    return best


def _fit(term_words: list[str], replaced: list[str]) -> list[str]:
    """The term's words written where `replaced` stood: the punctuation around the replaced words kept, a
    capital kept at the start, a French elided article (`l'`) kept before a vowel and written out before a
    consonant."""
    first, last = replaced[0], replaced[-1]
    lead = first[: len(first) - len(first.lstrip(PUNCTUATION))]
    trail = last[len(last.rstrip(PUNCTUATION)) :]
    words = list(term_words)
    body = first[len(lead) :].lower()
    for elided, written in ELISIONS.items():
        if words[0].lower() in ARTICLES:  # the term brings its own article in place of the elided one
            break
        if body.startswith(elided) and len(body) > len(elided):
            start = words[0][0].lower() in VOWELS
            words[0] = (elided if start else written) + words[0]
            if not start:
                words[:1] = words[0].split(" ")
            break
    if first[len(lead) : len(lead) + 1].isupper() and words[0][:1].islower():
        words[0] = words[0][:1].upper() + words[0][1:]
    words[0] = lead + words[0]
    words[-1] = words[-1] + (trail if not words[-1].endswith(trail) else "")
    return words

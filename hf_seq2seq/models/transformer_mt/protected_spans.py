"""What must not be translated comes back byte for byte: URLs, e-mail addresses, file paths, inline code,
placeholders of software strings and numbers written with a format.

`protected_spans` finds them in a source sentence (`PATTERNS`, by regular expressions: a URL's trailing
punctuation is the sentence's, not the URL's). The model never sees them: given a span, a model translates the
words around it badly (it never saw such tokens in training) and respells or drops the span itself.
`ProtectedSplit` gives the model, for each sentence with spans, the sentence with a name in place of each span
(`STAND_INS`: "Tom" for the first; a name takes the place of a URL or a path in a sentence as well as any noun) and
the words between the spans, piece by piece; `join` puts each sentence back: the translation with the names, each
name replaced by its span, when every name comes back exactly once; else the translated pieces in the source's
order with the spans as written between them (the last piece translated with the sentence's final punctuation, so
that a question stays one; each piece without the final punctuation the model gives it, its first letter in the
source's case). A sentence without a span is translated as it is.

Each caller translates `ProtectedSplit(sentences).pieces` in place of the sentences: the ``translation``
pipeline (``pipeline_translation.py``) and, in the ``hf_seq2seq`` package, `translate` (plain text: the command,
the server, its alternatives) and `translate_aligned` (HTML, every document format, glossaries and alignments).
It ships inside every saved folder, beside the pipeline, and imports only the standard library.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

PATTERNS = {
    "inline code": r"`[^`\n]+`",
    "url": r"\b(?:https?|ftp)://[^\s<>\"'`]+|\bwww\.[\w-]+(?:\.[\w-]+)+[^\s<>\"'`]*",
    "e-mail": r"\b[\w.+-]+@[\w-]+(?:\.[\w-]+)+",
    "path": (
        r"(?<![\w/])(?:~|\.{1,2})?(?:/[\w.@-]+){2,}/?"  # /etc/nginx/nginx.conf, ~/notes/a.txt, ./run/x.sh
        r"|\b[A-Za-z]:\\[^\s<>\"'`]+"  # C:\Users\tom\report.docx
        r"|(?:~|\.{1,2})/[\w.@-]+"  # ./run.sh, ~/.bashrc
        r"|\b[\w.-]+(?:/[\w.-]+)+\.[A-Za-z]\w{0,4}\b"  # src/main.py
    ),
    "placeholder": (
        r"\{\{[^{}\n]*\}\}"  # {{count}}
        r"|\$\{[^{}\s]*\}"  # ${HOME}
        r"|\{[\w.\[\]]*(?:![rsa])?(?::[^{}\s]*)?\}"  # {}, {0}, {name}, {total:.2f}
        r"|%\(\w+\)[-#0+]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa]"  # %(name)s
        r"|%[-#0+]*\d*(?:\.\d+)?[diouxXeEfFgGcrsa%](?![\w])"  # %s, %d, %.2f, %r, %%
    ),
    "number": r"(?<![\w.,])[-+]?\d+(?:[.,:/-]\d+)+%?(?![\w])|(?<![\w.,])[-+]?\d+(?:[.,]\d+)?%(?!\w)",
}
"""What is protected, by kind: each a regular expression over the source sentence. Numbers are protected when
written with a format (`1,234.56`, `3.5%`, `2026-11-27`, `10:30`): a bare `12` is the model's to write."""
FIND = re.compile("|".join(f"(?:{pattern})" for pattern in PATTERNS.values()))
TRAILING = ".,;:!?)]}'\"»”’"
"""Punctuation that ends a sentence or a clause rather than a URL or path it follows."""
FINAL = ".!?…"
"""Punctuation that ends a sentence."""
STAND_INS = ("Tom", "Mary", "Boston", "Paris", "John")
"""Names that stand in for the spans of a sentence, in order (those the sentence does not hold already): words a
model copies as they are, in the grammatical place of a URL, a path or a placeholder."""
COMPOUND_PARTS = "in|on|up|off|out|to|of|by|down|over|back|only|well|self|non|re|co|pre|post|anti|multi|e"
"""Words of English compounds written with hyphens (built-in, up-to-date, read-only, well-known, e-mail): a
lower-case hyphenated word with one of them is a word to translate, not an identifier."""
VERBATIM_PATTERNS = {
    "marks and digits, at most one letter": r"[\W\d_]*(?:[^\W\d_][\W\d_]*)?",  # a, B), (3), 1., 42, 5 m, —
    "list number": r"\(?(?:[ivx]{1,5}|[IVX]{1,5})[.)]",  # ii), iv., XII.
    "identifier": (
        rf"(?!(?:[a-z0-9]+-)*(?:{COMPOUND_PARTS})(?:-|$))[a-z][a-z0-9]*(?:-[a-z0-9]+)+"  # github-logo, nav-bar
        r"|(?=\w*_)(?=\w*[^\W_])\w+"  # snake_case, _private, MAX_SIZE
        r"|[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z]+[A-Z][A-Za-z0-9]*"  # camelCase, iPhone, PowerPoint, GitHub
    ),
    "code": r"(?!\d+(?:st|nd|rd|th)$)(?=[\w-]*\d)(?=[\w-]*[A-Za-z])[A-Za-z0-9][\w-]*",  # A4, H2O, mp3, COVID-19
    "file name": r"\.?[\w-]+(?:\.[\w-]+)*\.[A-Za-z0-9]{1,5}|\.[A-Za-z0-9]{1,5}",  # report.docx, a.tar.gz, .pdf
    "file extension": (
        r"(?i:pdf|docx?|xlsx?|pptx?|odt|ods|odp|epub|txt|csv|tsv|json|xml|ya?ml|html?|md|rst|py|js|css|png|jpe?g"
        r"|gif|svg|webp|mp[34]|srt|vtt)"
    ),
}
"""Texts copied whole, unchanged, by kind: each a regular expression over the whole text, spaces around it aside
(never over a part of a sentence: "a" alone is a list letter, in "a cat" an article)."""
VERBATIM = re.compile("|".join(f"(?:{pattern})" for pattern in VERBATIM_PATTERNS.values()))
NAMED = {name: re.compile(rf"(?<!\w){name}(?!\w)") for name in STAND_INS}
"""Each stand-in as a word of its own."""
WORD = re.compile(r"\w")


def protected_spans(sentence: str) -> list[tuple[int, int]]:
    """Where the protected spans of `sentence` stand, `(start, end)` character offsets, in order."""
    out = []
    for match in FIND.finditer(sentence):
        start, end = match.span()
        text = sentence[start:end]
        if text[0] not in "`{%$":  # a URL or path does not end in the sentence's punctuation
            while end > start and sentence[end - 1] in TRAILING:
                if sentence[end - 1] == ")" and sentence[start:end].count("(") >= sentence[start:end].count(
                    ")"
                ):
                    break
                end -= 1
        if end > start:
            out.append((start, end))
    return out


class ProtectedSplit:
    """`sentences` with their protected spans held out of the model: `pieces`, the text for the model to
    translate, and `join(translations)`, each sentence's translation with its spans as written (see the module
    docstring)."""

    def __init__(self, sentences: Sequence[str]):
        self.pieces: list[str] = []
        self.plans = [self._plan(sentence) for sentence in sentences]

    def _add(self, text: str) -> int:
        self.pieces.append(text)
        return len(self.pieces) - 1

    def _plan(self, sentence: str) -> _Plan:
        if sentence.strip() and VERBATIM.fullmatch(sentence.strip()):
            return _Plan(None, {}, [sentence], sentence)
        offsets = protected_spans(sentence)
        if not offsets:
            return _Plan(self._add(sentence), source=sentence)
        spans = [sentence[start:end] for start, end in offsets]
        cuts = [0, *(offset for span in offsets for offset in span), len(sentence)]
        texts = [sentence[cuts[k] : cuts[k + 1]] for k in range(0, len(cuts), 2)]  # before, between, after
        final = sentence.rstrip()[-1:] if sentence.rstrip()[-1:] in FINAL else ""
        names = [name for name in STAND_INS if not NAMED[name].search(sentence)][: len(spans)]
        if len(names) < len(spans) or not any(WORD.search(text) for text in texts):
            return _Plan(None, {}, self._cut(texts, spans, final), sentence)
        masked = self._add(
            "".join(part for k, text in enumerate(texts) for part in (text, *names[k : k + 1]))
        )
        return _Plan(masked, dict(zip(names, spans, strict=True)), self._cut(texts, spans, final), sentence)

    def _cut(
        self, texts: list[str], spans: list[str], final: str
    ) -> list[str | tuple[int, bool | None, str]]:
        """The sentence (`texts` around `spans`) as text kept as written (spans, spacing, punctuation) and
        `(piece, case, words)` places for the translations of the words between; the last words are translated
        with the sentence's `final` punctuation. `case` True/False puts a translation's first letter in
        upper/lower case as the source's, None leaves it; `words` as written stand where a translation is blank."""
        wordy = [k for k, text in enumerate(texts) if WORD.search(text)]
        cut: list[str | tuple[int, bool | None, str]] = []
        for k, text in enumerate(texts):
            if k in wordy:
                first, last = WORD.search(text).start(), len(text) - WORD.search(text[::-1]).start()
                core = text[first:last]
                piece = self._add(core + final if k == wordy[-1] else core)
                case = False if core[0].islower() else (True if core[0].isupper() and k == 0 else None)
                cut += [text[:first], (piece, case, core), text[last:]]
            else:
                cut.append(text)
            cut += spans[k : k + 1]
        return cut

    def join(self, translations: Sequence[str]) -> list[str]:
        """Each sentence's translation, from `translations` of `pieces` in order."""
        if len(translations) != len(self.pieces):
            raise ValueError(f"{len(translations)} translations for {len(self.pieces)} pieces")
        return [plan.join(translations) for plan in self.plans]


class _Plan:
    """How one sentence's translation is put together: `stand_in`, the piece of the sentence with each span
    replaced by a name (`spans`: name -> span), used when each name comes back once; else `cut`, the words between
    the spans translated piece by piece (a piece translated to nothing: its words as written). A sentence without
    a span: `stand_in` is the sentence itself. A translation that comes back blank is the `source` as written."""

    def __init__(
        self,
        stand_in: int | None,
        spans: dict[str, str] | None = None,
        cut: list | None = None,
        source: str = "",
    ):
        self.stand_in, self.spans, self.cut, self.source = stand_in, spans or {}, cut, source

    def join(self, translations: Sequence[str]) -> str:
        text = self._joined(translations)
        return text if text.strip() or not self.source.strip() else self.source

    def _joined(self, translations: Sequence[str]) -> str:
        if self.cut is None:
            return translations[self.stand_in]
        if self.stand_in is not None:
            text = translations[self.stand_in]
            if all(len(NAMED[name].findall(text)) == 1 for name in self.spans):
                for name, span in self.spans.items():
                    text = NAMED[name].sub(lambda _, span=span: span, text)
                return text
        parts = []
        for part in self.cut:
            if isinstance(part, str):
                parts.append(part)
                continue
            piece, case, words = part
            text = translations[piece].strip().rstrip(FINAL + " \u00a0\u202f") or words
            if case is not None and not text[:2].isupper():
                text = (text[0].upper() if case else text[0].lower()) + text[1:]
            parts.append(text)
        return "".join(parts)

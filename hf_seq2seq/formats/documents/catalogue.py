"""Gettext catalogues (`.po`, and `.pot` templates), read by `polib`: each untranslated message gets a machine
translation, marked `#, fuzzy` so that gettext tools and translators treat it as a suggestion to review (without
`--use-fuzzy`, msgfmt leaves fuzzy messages out of the compiled catalogue).

What is filled: a message's empty `msgstr`, and each empty `msgstr[i]` of a plural message for i from 0 to the
header's `nplurals` - 1 (the singular's translation for form 0, the plural's for the others; the plural's for all
in a language of one form); a message with every form translated, an obsolete (`#~`) message and the header are
left as written, byte for byte: only the entries filled are written again (by polib, wrapped at 78 columns), the
rest of the file is copied. The header gains what the target needs and lacks: `Language` (`Job.target_lang`,
`fr-CA` written `fr_CA`) when empty or missing, `Plural-Forms` when missing or still the template's
`nplurals=INTEGER` (from `PLURAL_FORMS`, by language), and `charset=UTF-8` when it names another (the file is
written in UTF-8); a catalogue without a header gets one with these three fields when anything is filled.

Each message is translated line by line (its `\\n`s kept where they are), each line's leading and trailing
spaces and tabs kept as written. Placeholders (`%s`, `%(name)s`, `{0}`, `{name}`) come back as written
(`hf_seq2seq.models.transformer_mt.protected_spans`, as in every text); a line with markup (`<b>`, `<a href=..>`)
is translated as an HTML fragment, its tags kept around the words they wrap (`hf_seq2seq.formats.markup`). An
accelerator key (`_File`, `Save _As`, `&Open`, `E&xit`: one `_` at a word's start or one `&` before a letter,
`&&` being a literal ampersand) is taken out before translating and put back before the same letter in the
translation (a word's first letter first), else before its first letter. A line without a letter outside its
placeholders (`%s:`, `100%`), and one whose translation comes back blank, is copied as written: a message never
gets an empty translation.
"""

from __future__ import annotations

import codecs
import re
from dataclasses import dataclass

from hf_seq2seq.formats.documents.base import DocumentError, DocumentFormat, Job, decode, require
from hf_seq2seq.models.transformer_mt.protected_spans import protected_spans

PLURAL_FORMS = {
    "ja": "nplurals=1; plural=0;", "ko": "nplurals=1; plural=0;", "zh": "nplurals=1; plural=0;",
    "vi": "nplurals=1; plural=0;", "id": "nplurals=1; plural=0;",
    "en": "nplurals=2; plural=(n != 1);", "de": "nplurals=2; plural=(n != 1);",
    "nl": "nplurals=2; plural=(n != 1);", "es": "nplurals=2; plural=(n != 1);",
    "it": "nplurals=2; plural=(n != 1);", "pt": "nplurals=2; plural=(n != 1);",
    "sv": "nplurals=2; plural=(n != 1);", "da": "nplurals=2; plural=(n != 1);",
    "fr": "nplurals=2; plural=(n > 1);", "pt_BR": "nplurals=2; plural=(n > 1);",
    "ru": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
    "uk": "nplurals=3; plural=(n%10==1 && n%100!=11 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
    "pl": "nplurals=3; plural=(n==1 ? 0 : n%10>=2 && n%10<=4 && (n%100<10 || n%100>=20) ? 1 : 2);",
    "cs": "nplurals=3; plural=(n==1) ? 0 : (n>=2 && n<=4) ? 1 : 2;",
}  # fmt: skip
"""A language's plural forms as GNU gettext's manual writes them (by `ll`, or `ll_CC` where a country differs)."""
WRAP = 78
"""The width the filled entries are wrapped to (polib's and xgettext's default)."""
NPLURALS = re.compile(r"\bnplurals\s*=\s*(\d+)")
CHARSET = re.compile(rb"charset=([\w.:-]+)")
MARKUP = re.compile(r"</?[A-Za-z][^<>]*>")
"""An element's tag: a line holding one is translated as HTML."""
ACCELERATOR = re.compile(r"(?<!&)&(?![&#]|\w+;)(?=[^\W\d_])|(?<![\w&])_(?=[^\W\d_][^\W_]*(?:\W|$))")
"""An accelerator marker: `&` before a letter (not `&&`, not an entity), or `_` at a word's start before a word
without another `_` (`_File`, not `_private_name`)."""


class Catalogue(DocumentFormat):
    name = "gettext catalogue"
    extensions = (".po", ".pot")

    def translate(self, data: bytes, job: Job) -> bytes:
        polib = require("polib", "polib", ".po")
        bom, text = _decode(data)
        eol = "\r\n" if "\r\n" in text else "\n"
        lines = text.replace("\r\n", "\n").split("\n")
        entries = [_read(polib, lines, start, end) for start, end in _entry_lines(lines)]
        header = next((e for e in entries if e.header is not None), None)
        metadata = header.header if header else {}
        forms = _plural_forms(metadata.get("Plural-Forms", ""), job.target_lang)
        nplurals = int(NPLURALS.search(forms)[1]) if forms else 2
        todo = [entry for entry in entries if entry.entry is not None and _untranslated(entry.entry)]
        messages = sorted({source for entry in todo for source in _sources(entry.entry, nplurals)})
        translated = dict(zip(messages, translate_messages(messages, job), strict=True))
        for entry in todo:
            _fill(entry.entry, translated, nplurals)
            entry.replacement = entry.entry.__unicode__(WRAP).rstrip("\n").split("\n")
        if header is not None:
            header.replacement = _header_lines(lines[header.start : header.end], metadata, job, forms)
        out = []
        position = 0
        for entry in entries:
            if entry.replacement is not None:
                out += lines[position : entry.start] + entry.replacement
                position = entry.end
        out += lines[position:]
        if header is None and todo:
            out = [*_new_header(job, forms), "", *out]
        return (bom + eol.join(out)).encode("utf-8")


@dataclass
class _Entry:
    """One entry of the file: its lines (`start` to `end`), what polib read of it (`entry`; None for the
    header, whose fields are in `header`, and for lines with no message), and the lines to write instead."""

    start: int
    end: int
    entry: object | None = None
    header: dict[str, str] | None = None
    replacement: list[str] | None = None


def _decode(data: bytes) -> tuple[str, str]:
    """The catalogue's byte-order mark and text: UTF-8, or the charset its header names where it is not UTF-8."""
    try:
        return decode(data, ".po")
    except DocumentError:
        named = CHARSET.search(data[:4096])
        try:
            codec = codecs.lookup(named[1].decode("ascii")) if named else None
            if codec is not None:
                return "", data.decode(codec.name)
        except (LookupError, UnicodeDecodeError):
            pass
        raise


def _entry_lines(lines: list[str]) -> list[tuple[int, int]]:
    """Where each entry stands, `(start, end)` line ranges: an entry ends at a blank line, or where a line other
    than a string or another `msgstr` follows its `msgstr` lines (an entry glued to the next)."""
    ranges, start, in_msgstr = [], None, False
    for i, line in enumerate(lines):
        stripped = line.strip()
        if not stripped:
            if start is not None:
                ranges.append((start, i))
            start, in_msgstr = None, False
            continue
        body = stripped[2:].lstrip() if stripped.startswith("#~") else stripped
        if in_msgstr and not body.startswith(('"', "msgstr")):
            ranges.append((start, i))
            start, in_msgstr = None, False
        if start is None:
            start = i
        in_msgstr = in_msgstr or body.startswith("msgstr")
    if start is not None:
        ranges.append((start, len(lines)))
    return ranges


def _read(polib, lines: list[str], start: int, end: int) -> _Entry:
    """The entry of `lines[start:end]` as polib reads it."""
    # a leading newline: polib reads a string that names an existing file as that file
    try:
        parsed = polib.pofile("\n" + "\n".join(lines[start:end]))
    except (OSError, ValueError) as error:
        raise DocumentError(
            f"not a gettext catalogue (.po), or a damaged one: the entry at line {start + 1} cannot be read "
            f"({error})"
        ) from None
    if len(parsed) > 1:
        raise DocumentError(f"not a gettext catalogue (.po): line {start + 1} holds {len(parsed)} messages")
    found = _Entry(start, end, parsed[0] if len(parsed) else None)
    if any(line.lstrip().startswith("msgid") for line in lines[start:end]) and not len(parsed):
        found.header = dict(parsed.metadata)  # the entry of msgid "": polib reads it as the header
    return found


def _untranslated(entry) -> bool:
    """Whether a message has a form to fill: not obsolete, and its msgstr (or a msgstr[i]) empty."""
    if entry.obsolete or not entry.msgid:
        return False
    if entry.msgid_plural:
        return not entry.msgstr_plural or any(not form for form in entry.msgstr_plural.values())
    return not entry.msgstr


def _sources(entry, nplurals: int) -> list[str]:
    """The texts a message's empty forms are translations of."""
    if not entry.msgid_plural:
        return [entry.msgid]
    return [_form_source(entry, k, nplurals) for k in range(nplurals) if not entry.msgstr_plural.get(k)]


def _form_source(entry, k: int, nplurals: int) -> str:
    """What plural form `k` translates: the singular for form 0 (the plural in a language of one form)."""
    return entry.msgid if k == 0 and nplurals > 1 else entry.msgid_plural


def _fill(entry, translated: dict[str, str], nplurals: int) -> None:
    """A message's empty forms filled, the message marked fuzzy."""
    if entry.msgid_plural:
        forms = {k: v for k, v in entry.msgstr_plural.items() if v or k < nplurals}
        for k in range(nplurals):
            if not forms.get(k):
                forms[k] = translated[_form_source(entry, k, nplurals)]
        entry.msgstr_plural = dict(sorted(forms.items()))
    else:
        entry.msgstr = translated[entry.msgid]
    if "fuzzy" not in entry.flags:
        entry.flags.insert(0, "fuzzy")


def _plural_forms(declared: str, target_lang: str | None) -> str:
    """The header's Plural-Forms if it declares a number of forms, else the target language's (`PLURAL_FORMS`),
    else ""."""
    if NPLURALS.search(declared):
        return declared.strip()
    if not target_lang:
        return ""
    language = target_lang.replace("-", "_")
    return PLURAL_FORMS.get(language) or PLURAL_FORMS.get(language.split("_")[0].lower(), "")


def _header_lines(lines: list[str], metadata: dict[str, str], job: Job, forms: str) -> list[str] | None:
    """The header's lines with what the target lacks set (see the module docstring), or None when it lacks
    nothing."""
    changes = {}
    if job.target_lang and not metadata.get("Language", "").strip():
        changes["Language"] = job.target_lang.replace("-", "_")
    if forms and not NPLURALS.search(metadata.get("Plural-Forms", "")):
        changes["Plural-Forms"] = forms
    content_type = metadata.get("Content-Type", "")
    charset = re.search(r"charset=([\w.:-]+)", content_type)
    if not charset or charset[1].lower().replace("_", "-") not in ("utf-8", "utf8"):
        changes["Content-Type"] = "text/plain; charset=UTF-8"
    if not changes:
        return None
    out = list(lines)
    for key, value in changes.items():
        written = f'"{key}: {_escape(value)}\\n"'
        place = next((k for k, line in enumerate(out) if line.startswith(f'"{key}:')), None)
        if place is not None:
            out[place] = written
        else:
            out.append(written)
    return out


def _new_header(job: Job, forms: str) -> list[str]:
    """The header a catalogue without one gets: its charset, language and plural forms."""
    fields = {"Content-Type": "text/plain; charset=UTF-8"}
    if job.target_lang:
        fields["Language"] = job.target_lang.replace("-", "_")
    if forms:
        fields["Plural-Forms"] = forms
    return ['msgid ""', 'msgstr ""', *(f'"{key}: {_escape(value)}\\n"' for key, value in fields.items())]


def _escape(value: str) -> str:
    return value.replace("\\", "\\\\").replace('"', '\\"')


@dataclass
class _Line:
    """One line of a message: what is kept around it, its text, and the accelerator taken out of it."""

    before: str
    text: str
    after: str
    marker: str = ""
    letter: str = ""


def translate_messages(messages: list[str], job: Job) -> list[str]:
    """Each message translated line by line (see the module docstring) in at most two batched calls: plain lines,
    and lines with markup as HTML fragments."""
    from hf_seq2seq.formats.markup import translate_html

    split = [[_read_line(line) for line in message.split("\n")] for message in messages]
    for message, lines in zip(messages, split, strict=True):
        markers = [m for m in ACCELERATOR.finditer(message) if not _inside_placeholder(message, m.start())]
        if len(markers) == 1 and not MARKUP.search(message):
            _take_accelerator(lines)
    todo = [line for lines in split for line in lines if _has_words(line.text)]
    plain = [line for line in todo if not MARKUP.search(line.text)]
    marked = [line for line in todo if MARKUP.search(line.text)]
    for line, result in zip(plain, job.translate([line.text for line in plain]), strict=True):
        line.text = _kept_if_blank(line.text, result.target)
    html = translate_html(
        job.translator, [line.text for line in marked], batch_size=job.batch_size, decoding=job.decoding,
        source_lang=job.source_lang, glossary=job.glossary,
    ) if marked else []  # fmt: skip
    for line, target in zip(marked, html, strict=True):
        line.text = target if _has_words(MARKUP.sub("", target)) else line.text
    return ["\n".join(_written(line) for line in lines) for lines in split]


def _read_line(line: str) -> _Line:
    core = line.strip(" \t")
    start = line.index(core) if core else len(line)
    return _Line(line[:start], core, line[start + len(core) :])


def _has_words(text: str) -> bool:
    """Whether a text has a letter outside its placeholders, URLs and the like."""
    kept = list(text)
    for start, end in protected_spans(text):
        kept[start:end] = " " * (end - start)
    return any(char.isalpha() for char in kept)


def _inside_placeholder(text: str, position: int) -> bool:
    return any(start <= position < end for start, end in protected_spans(text))


def _take_accelerator(lines: list[_Line]) -> None:
    """The one accelerator marker of a message taken out of its line, kept on the line with its letter."""
    for line in lines:
        match = ACCELERATOR.search(line.text)
        if match and not _inside_placeholder(line.text, match.start()):
            line.marker, line.letter = line.text[match.start()], line.text[match.end()]
            line.text = line.text[: match.start()] + line.text[match.end() :]
            return


def _kept_if_blank(source: str, target: str) -> str:
    """The translation, or the source as written where the translation is blank."""
    return target.strip() or source


def _written(line: _Line) -> str:
    text = line.text
    if line.marker:
        text = _put_accelerator(text, line.marker, line.letter)
    return line.before + text + line.after


def _put_accelerator(text: str, marker: str, letter: str) -> str:
    """`text` with `marker` before `letter` (a word's first letter first, any case), else before its first
    letter; never inside a placeholder or a tag."""
    taken = [False] * len(text)
    for start, end in [*protected_spans(text), *(m.span() for m in MARKUP.finditer(text))]:
        taken[start:end] = [True] * (end - start)
    letters = [k for k, char in enumerate(text) if char.isalpha() and not taken[k]]
    starts = [k for k in letters if k == 0 or not text[k - 1].isalnum()]
    same = [k for k in letters if text[k].lower() == letter.lower()]
    choices = [k for k in same if k in starts] + [k for k in same if k not in starts]
    place = (choices or starts or letters or [0])[0]
    return text[:place] + marker + text[place:]

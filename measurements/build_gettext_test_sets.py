"""Build the gettext test sets (`gettext-fragments-v1`, `gettext-messages-v1`) from pinned PyPI wheels.

Software sends a translator labels, titles, menu items and messages rather than sentences. These sets are the
English messages of open-source projects' French gettext catalogues with the projects' own French translations:
the `msgid` -> `msgstr` of every translated, non-fuzzy, non-obsolete entry without plural forms (whose French
forms depend on each catalogue's plural rule) of the `fr` catalogues each wheel of `WHEELS` ships. A message is kept
when its `msgid` and `msgstr` are one line each (spaces around them dropped) and each holds a letter outside its
markup (`<...>` tags, `&...;` entities) and placeholders (`%s`, `%(name)s`, `{0}`, ... as the package protects
them, `protected_spans.PATTERNS["placeholder"]`); the first translation of each English message is
kept, in the order of `WHEELS`, then of each wheel's catalogue paths, then of its entries.

* `gettext-messages-v1`: every such message;
* `gettext-fragments-v1`: those of three words or fewer (split at spaces) without placeholders or markup.

Read English->French or French->English (`hf-seq2seq evaluate MODEL --test-set gettext-fragments-v1
[--source-lang fr --target-lang en]`): one reference a line. The built files, the projects' licences and a README
of their provenance go into the package (`hf_seq2seq/data/gettext_sets/`); the package pins each file's sha256
(`hf_seq2seq.data.test_sets.PACKAGED_TEST_SETS`) and this script says whether its build still matches them.

    pip install polib
    python measurements/build_gettext_test_sets.py [--wheels DIR] [--fra-txt ../shared/data/fra-eng/fra.txt]

`--wheels`: a folder holding the wheels (else they are fetched with `pip download --no-deps NAME==VERSION`);
each is checked by sha256. `--fra-txt`: also count the sets' lines whose source is a sentence of fra.txt, as
written (exact match) and as `overlap_key` compares them (case, spacing and punctuation aside).
"""

from __future__ import annotations

import argparse
import fnmatch
import hashlib
import re
import subprocess
import sys
import tempfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from hf_seq2seq.data import test_sets
from hf_seq2seq.data.fra_eng import read_pairs
from hf_seq2seq.data.test_sets import FILE_LANGUAGES, GETTEXT_SETS_DIR, overlap_key
from hf_seq2seq.models.transformer_mt.protected_spans import PATTERNS


@dataclass(frozen=True)
class Wheel:
    """A pinned wheel: its project, version, file name and sha256, its licence (SPDX), the French catalogues
    read from it (glob patterns inside the wheel) and its licence file."""

    project: str
    version: str
    file: str
    sha256: str
    licence: str
    catalogues: tuple[str, ...]
    licence_file: str
    homepage: str


WHEELS = (
    Wheel(
        "Django",
        "5.2.20",
        "django-5.2.20-py3-none-any.whl",
        "3b06f7a4843dea6bc14e33daf2044a40dc6df8c2105765ea03a29c64b61be0e0",
        "BSD-3-Clause",
        ("django/conf/locale/fr/LC_MESSAGES/*.po", "django/contrib/*/locale/fr/LC_MESSAGES/*.po"),
        "django-5.2.20.dist-info/licenses/LICENSE",
        "https://www.djangoproject.com/",
    ),
    Wheel(
        "Sphinx",
        "9.0.4",
        "sphinx-9.0.4-py3-none-any.whl",
        "5bebc595a5e943ea248b99c13814c1c5e10b3ece718976824ffa7959ff95fffb",
        "BSD-2-Clause",
        ("sphinx/locale/fr/LC_MESSAGES/*.po",),
        "sphinx-9.0.4.dist-info/licenses/LICENSE.rst",
        "https://www.sphinx-doc.org/",
    ),
    Wheel(
        "WTForms",
        "3.3.2",
        "wtforms-3.3.2-py3-none-any.whl",
        "2fac992f39102d6268b06e05cdbdf37a7e9b9a4e103916d2dff1d09a080b531d",
        "BSD-3-Clause",
        ("wtforms/locale/fr/LC_MESSAGES/*.po",),
        "wtforms-3.3.2.dist-info/licenses/LICENSE.rst",
        "https://wtforms.readthedocs.io/",
    ),
)
"""The wheels the sets are built from, in the order their messages are taken."""

FRAGMENTS, MESSAGES = "gettext-fragments-v1", "gettext-messages-v1"
FRAGMENT_WORDS = 3
PLACEHOLDER = re.compile(PATTERNS["placeholder"])  # the package's placeholders
MARKUP = re.compile(r"<[^<>]*>|&(?:#\d+|#x[0-9a-fA-F]+|\w+);")
LETTER = re.compile(r"[^\W\d_]")


def wheel_path(wheel: Wheel, folder: Path | None, download_to: Path) -> Path:
    """The checked wheel file: from `folder`, else `pip download`ed into `download_to`."""
    if folder is not None:
        path = folder / wheel.file
        if not path.is_file():
            sys.exit(
                f"{path} is missing: `pip download --no-deps {wheel.project}=={wheel.version} -d {folder}`"
            )
    else:
        subprocess.run(
            [
                sys.executable,
                "-m",
                "pip",
                "download",
                "--no-deps",
                "--only-binary",
                ":all:",
                "-d",
                str(download_to),
            ]
            + [f"{wheel.project}=={wheel.version}"],
            check=True,
        )
        path = download_to / wheel.file
    actual = hashlib.sha256(path.read_bytes()).hexdigest()
    if actual != wheel.sha256:
        sys.exit(f"{path}: sha256 {actual}, expected {wheel.sha256}")
    return path


def kept_message(msgid: str, msgstr: str) -> tuple[str, str] | None:
    """`(English, French)` stripped of the spaces around them, or None for a message the sets leave out: more than
    one line, or no letter outside markup and placeholders on either side."""
    pair = msgid.strip(), msgstr.strip()
    for text in pair:
        if any(c in text for c in "\n\r\t") or not LETTER.search(PLACEHOLDER.sub("", MARKUP.sub("", text))):
            return None
    return pair


def is_fragment(english: str) -> bool:
    """Three words or fewer, without placeholders or markup."""
    return (
        len(english.split()) <= FRAGMENT_WORDS
        and not PLACEHOLDER.search(english)
        and not MARKUP.search(english)
    )


def read_messages(wheel: Wheel, path: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """The kept `(English, French)` messages of `wheel`'s French catalogues, in order, and the catalogues read."""
    import polib

    messages, read = [], []
    with zipfile.ZipFile(path) as archive:
        names = sorted(n for n in archive.namelist() if any(fnmatch.fnmatch(n, p) for p in wheel.catalogues))
        for name in names:
            data = archive.read(name)  # a .po catalogue, or a .mo where a wheel ships only those
            catalogue = polib.mofile(data) if name.endswith(".mo") else polib.pofile(data.decode("utf-8"))
            read.append(name)
            for entry in catalogue.translated_entries():  # non-fuzzy, non-obsolete, msgstr filled
                if entry.msgid_plural:
                    continue
                pair = kept_message(entry.msgid, entry.msgstr)
                if pair is not None:
                    messages.append(pair)
    return messages, read


def fra_txt_sides(path: Path) -> dict[str, set[str]]:
    """fra.txt's English and French sentences, by language code (read as the package reads the corpus)."""
    pairs = read_pairs(path)
    return {"en": {english for english, _ in pairs}, "fr": {french for _, french in pairs}}


def sha256_of(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def readme(sets: dict[str, list[tuple[str, str]]], origins: dict[str, dict[str, int]], read: dict[str, list]):
    """The provenance README written beside the sets."""
    wheels = "\n".join(
        f"| {w.project} | {w.version} | `{w.file}` | `{w.sha256}` | {w.licence} | `LICENSE-{w.project}` | "
        f"{w.homepage} |"
        for w in WHEELS
    )
    catalogues = "\n".join(f"- {w.project}: " + ", ".join(f"`{n}`" for n in read[w.project]) for w in WHEELS)
    counts = "\n".join(
        f"| `{name}` | {len(pairs):,} | "
        + " / ".join(f"{origins[name][w.project]:,}" for w in WHEELS)
        + f" | {len({fr for _, fr in pairs}):,} | `{sha256_of(GETTEXT_SETS_DIR / f'{name}.eng')}` | "
        f"`{sha256_of(GETTEXT_SETS_DIR / f'{name}.fra')}` |"
        for name, pairs in sets.items()
    )
    projects = " / ".join(w.project for w in WHEELS)
    return f"""# Gettext test sets: software messages and fragments, English-French

Built by `measurements/build_gettext_test_sets.py` (its docstring gives the rules) from the French gettext
catalogues that these PyPI wheels ship; the translations are the projects' own (their translators'), under each
project's licence, whose text is in the file named here. Nothing here is used in training.

| project | version | wheel | sha256 | licence | licence text | home |
| --- | --- | --- | --- | --- | --- | --- |
{wheels}

Catalogues read:
{catalogues}

| set | lines | of which {projects} | distinct French lines | sha256 `.eng` | sha256 `.fra` |
| --- | --- | --- | --- | --- | --- |
{counts}

UTF-8, LF, final newline; line i of `.eng` is translated by line i of `.fra`; each English line occurs once (the
first translation kept), a French line may occur more than once. `hf-seq2seq evaluate MODEL --test-set NAME`
reads them English->French, with `--source-lang fr --target-lang en` French->English.
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument("--wheels", type=Path, help="a folder holding the wheels (default: pip download them)")
    p.add_argument(
        "--fra-txt", type=Path, help="count the sets' lines whose source is a sentence of this fra.txt"
    )
    args = p.parse_args()

    sets: dict[str, list[tuple[str, str]]] = {FRAGMENTS: [], MESSAGES: []}
    origins: dict[str, dict[str, int]] = {name: {} for name in sets}
    read: dict[str, list[str]] = {}
    seen: set[str] = set()
    GETTEXT_SETS_DIR.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as downloads:
        for wheel in WHEELS:
            path = wheel_path(wheel, args.wheels, Path(downloads))
            messages, read[wheel.project] = read_messages(wheel, path)
            with zipfile.ZipFile(path) as archive:
                (GETTEXT_SETS_DIR / f"LICENSE-{wheel.project}").write_bytes(archive.read(wheel.licence_file))
            for name in sets:
                origins[name][wheel.project] = 0
            for english, french in messages:
                if english in seen:
                    continue
                seen.add(english)
                for name in (MESSAGES, FRAGMENTS) if is_fragment(english) else (MESSAGES,):
                    sets[name].append((english, french))
                    origins[name][wheel.project] += 1
    for name, pairs in sets.items():
        for lang, column in (("en", 0), ("fr", 1)):
            text = "".join(pair[column] + "\n" for pair in pairs)
            (GETTEXT_SETS_DIR / f"{name}.{FILE_LANGUAGES[lang]}").write_text(text, encoding="utf-8")
    (GETTEXT_SETS_DIR / "README.md").write_text(readme(sets, origins, read), encoding="utf-8")

    sides = fra_txt_sides(args.fra_txt) if args.fra_txt else None
    for name, pairs in sets.items():
        built = {
            lang: sha256_of(GETTEXT_SETS_DIR / f"{name}.{FILE_LANGUAGES[lang]}") for lang in FILE_LANGUAGES
        }
        pinned = test_sets.PACKAGED_TEST_SETS.get(name)
        print(f"{name}: {len(pairs):,} lines ({origins[name]}); sha256 {built}")
        print("  the package's pins: " + ("match" if pinned == built else f"differ ({pinned}): update them"))
        if sides is not None:
            for lang, column in (("en", 0), ("fr", 1)):
                exact = sum(pair[column] in sides[lang] for pair in pairs)
                keys = {overlap_key(text) for text in sides[lang]}
                folded = sum(overlap_key(pair[column]) in keys for pair in pairs)
                print(
                    f"  {lang} lines that are a {lang} sentence of {args.fra_txt}: {exact:,} as written, "
                    f"{folded:,} as overlap_key compares them"
                )


if __name__ == "__main__":
    main()

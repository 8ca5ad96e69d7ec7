"""Fragment training data: short phrase pairs mined from the train split with a word aligner, and casing and
punctuation variants of short pairs, so that a model trained on full sentences also learns words, labels and
titles ("warning", "next", "Save", "DONE", "The cat").

**Phrase pairs** (:func:`mine_phrase_pairs`): both sides are cut into words (:func:`word_spans`: runs of letters
and digits, apostrophes inside a word kept, every other mark a token of its own), aligned by eflomal (Östling &
Tiedemann 2016; its forward and reverse alignments symmetrised by :func:`grow_diag_final_and`, as Moses and
fast_align's `atools` do), and every phrase pair of 1-3 source words consistent with the alignment is extracted
(:func:`consistent_phrases`, Koehn et al. 2003: no word inside the pair is aligned outside it; unaligned target
words at its edges may join it). Pairs that start or end in a mark are left out. For each source phrase
(compared lower-cased) the target it is most often extracted with is kept, when they were extracted together at
least `min_count` times, in the surface form each side most often has inside a sentence (not at its start, where a
capital says nothing). The result is cached on disk (:func:`default_cache_dir` / `phrase-pairs`) under a key of the
texts and the settings, so that a second training run reads it back instead of aligning again.

**Variants** (:func:`variant`): title case, upper case, no final mark, lower-case first word, applied to source
and target alike. OpusTrainer's modifiers do the first three on `src<TAB>trg` lines, but it pins sentencepiece
0.1.99 and draws from the global `random` module; the rules are a few lines each here.

:func:`fragment_examples` draws the training examples of `--phrase_share` and `--variant_share`;
:func:`add_fragment_examples` tokenizes them after the train split's examples.
"""

from __future__ import annotations

import hashlib
import json
import os
import re
import tempfile
from collections import Counter, defaultdict
from collections.abc import Iterable, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

import numpy as np
from datasets import Dataset, concatenate_datasets

from hf_seq2seq.data.errors import DataError
from hf_seq2seq.data.fra_eng import default_cache_dir
from hf_seq2seq.data.splits import PAIR_FEATURES
from hf_seq2seq.data.tokenization import tokenize_dataset

WORD = re.compile(r"\w+(?:['’]\w+)*|[^\w\s]")
"""A word (letters and digits, with apostrophes inside: "l'homme", "don't", "aujourd'hui") or one mark."""

MAX_SOURCE_WORDS = 3
MAX_TARGET_WORDS = 5
SHORT_PAIR_WORDS = 4
"""Train pairs of at most this many source words (marks included) are the short pairs variants are made of."""

VARIANTS = ("title", "upper", "no_final_mark", "lower_first")
FINAL_MARKS = re.compile(r"\s*[.!?…]+$")
CACHE_FORMAT = 1  # bump when the mining changes what a cached file holds
INPUT_COLUMNS = ("input_ids", "attention_mask", "labels")


class AlignerMissingError(DataError):
    """Mining phrase pairs needs eflomal, which is not installed."""


@dataclass(frozen=True)
class PhrasePair:
    """A mined phrase pair: `count` times extracted together, `source_count` times the source phrase was
    extracted with any target."""

    source: str
    target: str
    count: int
    source_count: int


def word_spans(text: str) -> list[tuple[int, int]]:
    """The `(start, end)` character offsets of the words and marks of `text` (:data:`WORD`)."""
    return [match.span() for match in WORD.finditer(text)]


def grow_diag_final_and(
    forward: set[tuple[int, int]], reverse: set[tuple[int, int]], source_length: int, target_length: int
) -> set[tuple[int, int]]:
    """Symmetrise two alignments of `(source index, target index)` links (Koehn et al. 2005, Moses'
    grow-diag-final-and): start from their intersection, add union links next to a link (diagonals included)
    whose source or target word is still unaligned, until none can be added; then add union links whose source
    and target words are both unaligned."""
    union = forward | reverse
    links = forward & reverse
    aligned_source = {i for i, _ in links}
    aligned_target = {j for _, j in links}
    neighbours = [(-1, 0), (0, -1), (1, 0), (0, 1), (-1, -1), (-1, 1), (1, -1), (1, 1)]
    added = True
    while added:
        added = False
        for i in range(source_length):
            for j in range(target_length):
                if (i, j) not in links:
                    continue
                for di, dj in neighbours:
                    link = (i + di, j + dj)
                    if (
                        link in union
                        and link not in links
                        and (link[0] not in aligned_source or link[1] not in aligned_target)
                    ):
                        links.add(link)
                        aligned_source.add(link[0])
                        aligned_target.add(link[1])
                        added = True
    for links_in in (forward, reverse):  # final-and
        for i, j in sorted(links_in):
            if i not in aligned_source and j not in aligned_target:
                links.add((i, j))
                aligned_source.add(i)
                aligned_target.add(j)
    return links


def consistent_phrases(
    source_length: int,
    target_length: int,
    links: set[tuple[int, int]],
    max_source_words: int = MAX_SOURCE_WORDS,
    max_target_words: int = MAX_TARGET_WORDS,
) -> list[tuple[int, int, int, int]]:
    """Every phrase pair `(source start, source end, target start, target end)` (ends exclusive) of at most
    `max_source_words` / `max_target_words` words consistent with `links` (Koehn et al. 2003): at least one
    link inside, no word inside the pair linked to a word outside it; a pair extends over unaligned target
    words at its edges, each extension a pair of its own."""
    by_source: dict[int, list[int]] = defaultdict(list)
    by_target: dict[int, list[int]] = defaultdict(list)
    for i, j in links:
        by_source[i].append(j)
        by_target[j].append(i)
    phrases = []
    for start in range(source_length):
        for end in range(start + 1, min(start + max_source_words, source_length) + 1):
            targets = [j for i in range(start, end) for j in by_source.get(i, ())]
            if not targets:
                continue
            low, high = min(targets), max(targets) + 1
            if high - low > max_target_words:
                continue
            if any(not start <= i < end for j in range(low, high) for i in by_target.get(j, ())):
                continue
            left = low
            while left >= 0 and (left == low or left not in by_target):
                right = high
                while right <= target_length and (right == high or right - 1 not in by_target):
                    if right - left > max_target_words:
                        break
                    phrases.append((start, end, left, right))
                    right += 1
                left -= 1
    return phrases


def align(sources: Sequence[Sequence[str]], targets: Sequence[Sequence[str]]) -> list[set[tuple[int, int]]]:
    """eflomal's alignments of the tokenized pairs (each side a non-empty list of words), symmetrised with
    :func:`grow_diag_final_and`."""
    try:
        import eflomal  # GPL-3.0, an optional extra: pip install "hf_seq2seq[fragments]"
    except ImportError as error:
        raise AlignerMissingError(
            'mining phrase pairs needs the eflomal word aligner: pip install "hf_seq2seq[fragments]"'
        ) from error
    with tempfile.TemporaryDirectory(prefix="hf_seq2seq-align-") as folder:
        forward_file, reverse_file = os.path.join(folder, "forward"), os.path.join(folder, "reverse")
        eflomal.Aligner().align(
            [" ".join(words) for words in sources],
            [" ".join(words) for words in targets],
            links_filename_fwd=forward_file,
            links_filename_rev=reverse_file,
            quiet=True,
        )
        forward = Path(forward_file).read_text(encoding="utf-8").splitlines()
        reverse = Path(reverse_file).read_text(encoding="utf-8").splitlines()
    return [
        grow_diag_final_and(_links(f), _links(r), len(s), len(t))
        for f, r, s, t in zip(forward, reverse, sources, targets, strict=True)
    ]


def _links(line: str) -> set[tuple[int, int]]:
    return {(int(i), int(j)) for i, j in (link.split("-") for link in line.split())}


def mine_phrase_pairs(
    sources: Sequence[str],
    targets: Sequence[str],
    min_count: int = 3,
    rows: Sequence[int] | None = None,
    cache_dir: str | os.PathLike[str] | None = None,
) -> list[PhrasePair]:
    """The phrase pairs of 1-:data:`MAX_SOURCE_WORDS` source words mined from the pairs `sources[k]` ->
    `targets[k]` (the module docstring says how), sorted by source phrase; only the pairs of `rows` (default:
    all) are extracted from, while all are aligned (the aligner learns from every pair it is given). Cached
    under `cache_dir` (default: :func:`default_cache_dir` / `phrase-pairs`) by a key of the texts, `rows` and
    the settings."""
    if min_count < 1:
        raise DataError(f"the least count of a phrase pair must be >= 1, got {min_count}")
    settings = {"format": CACHE_FORMAT, "min_count": min_count, "max_source_words": MAX_SOURCE_WORDS}
    settings |= {"max_target_words": MAX_TARGET_WORDS}
    digest = hashlib.blake2b(json.dumps(settings, sort_keys=True).encode(), digest_size=16)
    for source, target in zip(sources, targets, strict=True):
        digest.update(f"{source}\t{target}\n".encode())
    digest.update(json.dumps(None if rows is None else list(rows)).encode())
    cache = Path(cache_dir if cache_dir is not None else default_cache_dir() / "phrase-pairs")
    path = cache / f"{digest.hexdigest()}.json"
    if path.is_file():
        return [PhrasePair(**pair) for pair in json.loads(path.read_text(encoding="utf-8"))]
    pairs = _mine(sources, targets, min_count, rows)
    cache.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=cache, prefix=f".{path.name}.", suffix=".part")
    with os.fdopen(fd, "w", encoding="utf-8") as out:
        json.dump([asdict(pair) for pair in pairs], out, ensure_ascii=False)
    os.replace(temporary, path)
    return pairs


def _mine(
    sources: Sequence[str], targets: Sequence[str], min_count: int, rows: Sequence[int] | None
) -> list[PhrasePair]:
    spans = [(word_spans(s), word_spans(t)) for s, t in zip(sources, targets, strict=True)]
    kept = [k for k, (s, t) in enumerate(spans) if s and t]  # a text of spaces alone has no words
    words = [
        ([sources[k][a:b] for a, b in spans[k][0]], [targets[k][a:b] for a, b in spans[k][1]]) for k in kept
    ]
    alignments = align([s for s, _ in words], [t for _, t in words]) if words else []
    wanted = set(range(len(sources)) if rows is None else rows)
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    surfaces: dict[str, Counter[tuple[bool, str]]] = defaultdict(Counter)
    for k, links in zip(kept, alignments, strict=True):
        if k not in wanted:
            continue
        source_spans, target_spans = spans[k]
        for start, end, low, high in consistent_phrases(len(source_spans), len(target_spans), links):
            source = _phrase(sources[k], source_spans, start, end)
            target = _phrase(targets[k], target_spans, low, high)
            if source is None or target is None:
                continue
            counts[source.lower()][target.lower()] += 1
            surfaces[source.lower()][(start > 0, source)] += 1
            surfaces["\t" + target.lower()][(low > 0, target)] += 1
    pairs = []
    for source, seen in sorted(counts.items()):
        target, count = seen.most_common(1)[0]
        if count >= min_count:
            pairs.append(
                PhrasePair(
                    _surface(surfaces[source]), _surface(surfaces["\t" + target]), count, sum(seen.values())
                )
            )
    return pairs


def _phrase(text: str, spans: list[tuple[int, int]], start: int, end: int) -> str | None:
    """The text of words `start:end`, None when it starts or ends in a mark."""
    if not (text[spans[start][0]].isalnum() and text[spans[end - 1][1] - 1].isalnum()):
        return None
    return text[spans[start][0] : spans[end - 1][1]]


def _surface(seen: Counter[tuple[bool, str]]) -> str:
    """The form most often seen inside a sentence, else the one most often seen at its start."""
    inside = Counter({text: n for (within, text), n in seen.items() if within})
    return (inside or Counter({text: n for (_, text), n in seen.items()})).most_common(1)[0][0]


def capitalised_words(texts: Iterable[str]) -> frozenset[str]:
    """The words seen with a capital inside a sentence (not first) more often than in lower case there: names
    ("Tom", "Boston"), "I"; a variant never lower-cases them."""
    capital: Counter[str] = Counter()
    lower: Counter[str] = Counter()
    for text in texts:
        for word in WORD.findall(text)[1:]:
            if word[0].isupper():
                capital[word] += 1
            elif word[0].islower():
                lower[word] += 1
    return frozenset(word for word, n in capital.items() if n > lower[word[0].lower() + word[1:]])


def variant(
    source: str, target: str, kind: str, keep: frozenset[str] = frozenset()
) -> tuple[str, str] | None:
    """The `kind` variant (:data:`VARIANTS`) of a pair, made alike on both sides; None when it would not change
    the pair or does not apply. `title`: each word's first letter upper-cased; `upper`: all of it; `no_final_mark`:
    the final `.`, `!`, `?` or `…` dropped (with the space before it, as French writes "Va !"), when both sides
    end in one; `lower_first`: the first letter lower-cased, on each side whose first word is not in `keep`
    (:func:`capitalised_words`) nor an acronym."""
    if kind == "title":
        changed = tuple(re.sub(r"(?<!\S)(\w)", lambda m: m[1].upper(), text) for text in (source, target))
    elif kind == "upper":
        changed = (source.upper(), target.upper())
    elif kind == "no_final_mark":
        if not (FINAL_MARKS.search(source) and FINAL_MARKS.search(target)):
            return None
        changed = (FINAL_MARKS.sub("", source), FINAL_MARKS.sub("", target))
    elif kind == "lower_first":
        changed = (_lower_first(source, keep), _lower_first(target, keep))
    else:
        raise ValueError(f"unknown variant {kind!r}: one of {', '.join(VARIANTS)}")
    if changed == (source, target) or not all(text.strip() for text in changed):
        return None
    return changed


def _lower_first(text: str, keep: frozenset[str]) -> str:
    words = WORD.findall(text)
    if not words or words[0] in keep or (len(words[0]) > 1 and words[0][1].isupper()):
        return text
    start = text.index(words[0])
    return text[:start] + text[start].lower() + text[start + 1 :]


def fragment_counts(train_pairs: int, phrase_share: float, variant_share: float) -> tuple[int, int]:
    """`(phrase examples, variant examples)` for a train split of `train_pairs` pairs."""
    for name, share in (("phrase", phrase_share), ("variant", variant_share)):
        if not share >= 0:
            raise DataError(f"the share of {name} examples must be >= 0, got {share}")
    return round(phrase_share * train_pairs), round(variant_share * train_pairs)


def fragment_examples(
    train: Dataset,
    phrase_share: float,
    variant_share: float,
    seed: int,
    min_count: int = 3,
    cache_dir: str | os.PathLike[str] | None = None,
) -> Dataset:
    """`src`/`tgt` examples to add to `train` (columns `src`, `tgt`): `round(phrase_share * len(train))` phrase
    pairs mined from it (:func:`mine_phrase_pairs`), drawn uniformly with replacement, then
    `round(variant_share * len(train))` variants (:func:`variant`), drawn uniformly among every variant of its
    short pairs (at most :data:`SHORT_PAIR_WORDS` source words) and, with `phrase_share`, of the phrase pairs.
    The same seed gives the same examples."""
    phrase_count, variant_count = fragment_counts(len(train), phrase_share, variant_share)
    columns = train.select_columns(["src", "tgt"])[:]
    sources, targets = columns["src"], columns["tgt"]
    generator = np.random.default_rng(seed)
    phrases: list[tuple[str, str]] = []
    if phrase_count or (variant_count and phrase_share):
        mined = mine_phrase_pairs(sources, targets, min_count, None, cache_dir)
        phrases = [(pair.source, pair.target) for pair in mined]
        if not phrases:
            raise DataError(
                f"no phrase pair of the train split's {len(train)} pairs was extracted {min_count} times or "
                "more: lower --phrase_min_count, or train without --phrase_share"
            )
    examples = [phrases[k] for k in generator.integers(0, max(len(phrases), 1), size=phrase_count)]
    if variant_count:
        keep = capitalised_words(sources) | capitalised_words(targets)
        pool = [
            (s, t) for s, t in zip(sources, targets, strict=True) if len(word_spans(s)) <= SHORT_PAIR_WORDS
        ] + phrases
        variants = [v for s, t in pool for kind in VARIANTS if (v := variant(s, t, kind, keep)) is not None]
        if not variants:
            raise DataError(
                f"no train pair has {SHORT_PAIR_WORDS} source words or fewer to vary: train without --variant_share"
            )
        examples += [variants[k] for k in generator.integers(0, len(variants), size=variant_count)]
    return Dataset.from_dict(
        {"src": [s for s, _ in examples], "tgt": [t for _, t in examples]}, features=PAIR_FEATURES
    )


@dataclass(frozen=True)
class FragmentSettings:
    """What :func:`add_fragment_examples` adds: `--phrase_share`, `--variant_share`, `--phrase_min_count`,
    the length limits and the seed."""

    phrase_share: float
    variant_share: float
    min_count: int
    max_source_length: int
    max_target_length: int
    seed: int


def add_fragment_examples(
    tokenized_train: Dataset,
    train: Dataset,
    tokenizer,
    settings: FragmentSettings,
) -> Dataset:
    """`tokenized_train` followed by the tokenized :func:`fragment_examples` of `train` (its texts)."""
    if not (settings.phrase_share or settings.variant_share):
        return tokenized_train
    if not isinstance(train, Dataset):
        raise DataError(
            "phrase and variant examples are drawn from a train split held in memory: not a stream"
        )
    examples = fragment_examples(
        train, settings.phrase_share, settings.variant_share, settings.seed, settings.min_count
    )
    extra = tokenize_dataset(
        examples, tokenizer, settings.max_source_length, settings.max_target_length, keep_columns=()
    )
    columns = tokenized_train.select_columns(INPUT_COLUMNS)
    return concatenate_datasets([columns, extra.select_columns(INPUT_COLUMNS).cast(columns.features)])

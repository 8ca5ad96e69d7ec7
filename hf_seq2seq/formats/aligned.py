"""Translating texts with their word alignments, and with a glossary: what markup, documents, `translate
--alignments` and `--glossary` build on.

`translate_aligned` cuts each text into sentences (as `hf_seq2seq.engines.base.translate` does), translates all
sentences of all texts in one batched call (URLs, paths, placeholders and the like kept as written:
`hf_seq2seq.models.transformer_mt.protected_spans`), aligns the sentences that need it (`Translator.align`: all of them
when alignments are asked for, else only those where a glossary term occurs), puts the glossary's terms in, and
joins each text back with its own spacing. Word indices count the whitespace words of the whole text. With
`scores`, each translation also gets the model's `Score` (`Translator.score`, of the translation as returned,
glossary terms included): a text's is that of its sentences together (`hf_seq2seq.engines.scoring`).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Sequence
from dataclasses import dataclass

from hf_seq2seq.data.segmentation import Segmented, split_sentences, token_length
from hf_seq2seq.engines.alignment import Alignment, word_spans
from hf_seq2seq.engines.base import Translator, translate_pieces
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.scoring import Score, joined
from hf_seq2seq.formats.glossary import Glossary, apply_terms
from hf_seq2seq.models.transformer_mt.protected_spans import ProtectedSplit
from hf_seq2seq.models.transformer_mt.sentence_splitting import trained_length


@dataclass(frozen=True)
class AlignedTranslation:
    """A text, its translation, which source words each target word translates (`(source word, target
    word)` pairs over `source.split()` and `target.split()`; None where no alignment was made), and how sure
    the model is of it (`score.confidence`; None unless scores were asked for)."""

    source: str
    target: str
    alignment: Alignment | None
    score: Score | None = None


def translate_aligned(
    translator: Translator,
    texts: Sequence[str],
    *,
    batch_size: int = 64,
    decoding: Decoding | None = None,
    source_lang: str = "en",
    glossary: Glossary | None = None,
    alignments: bool = True,
    scores: bool = False,
    split: bool = True,
    progress: bool = False,
) -> list[AlignedTranslation]:
    """Translations of `texts` (see the module docstring); `alignments` False aligns only what the glossary
    needs and returns `alignment` None; `scores` scores each translation (every engine of the package can). A
    glossary needs an engine that aligns (every engine of the package; one that cannot, such as an export made
    before its engine aligned, raises `hf_seq2seq.engines.base.UnsupportedFeature`)."""
    tokenizer = translator.tokenizer
    if split:
        length = token_length(tokenizer)
        segmented = [split_sentences(text, source_lang, trained_length(tokenizer), length) for text in texts]
        pieces = [(list(s.sentences), s) for s in segmented]
    else:
        pieces = [([text] if text.strip() else [], None) for text in texts]
    sentences = [sentence for parts, _ in pieces for sentence in parts]
    # URLs, placeholders, formatted numbers... kept as written, out of the model's sight
    split = ProtectedSplit(sentences)
    translations = split.join(
        translate_pieces(translator, split.pieces, batch_size, decoding, progress=progress)
    )
    matches = [glossary.find_terms(s) if glossary else [] for s in sentences]
    todo = [i for i, found in enumerate(matches) if alignments or found]
    aligned: list[Alignment | None] = [None] * len(sentences)
    if todo:
        for i, pairs in zip(
            todo,
            translator.align([sentences[i] for i in todo], [translations[i] for i in todo], batch_size),
            strict=True,
        ):
            aligned[i] = pairs
            if matches[i]:
                translations[i], aligned[i] = apply_terms(translations[i], pairs, matches[i])
    scored = translator.score(sentences, translations, batch_size) if scores else None
    out, position = [], 0
    for text, (parts, segmented) in zip(texts, pieces, strict=True):
        n = len(parts)
        done = translations[position : position + n]
        target = segmented.join(done) if segmented is not None else (done[0] if done else "")
        alignment = _joined(segmented, parts, done, aligned[position : position + n]) if alignments else None
        score = joined(scored[position : position + n]) if scored is not None else None
        out.append(AlignedTranslation(text, target, alignment, score))
        position += n
    return out


def _joined(
    segmented: Segmented | None, sources: list[str], targets: list[str], alignments: list
) -> Alignment:
    """One text's alignment from its sentences', each sentence's word indices made those of the whole text's words
    (source, and target as `segmented` joins the translations): by where each word begins in the text, since a
    sentence may begin inside a word of it (Chinese and Japanese put no space between sentences)."""
    if segmented is None:  # the text was translated whole: its one sentence is the text
        return sorted(alignments[0] or []) if alignments else []
    source_words, target_words = _text_words(segmented, sources), _text_words(segmented, targets)
    pairs = {
        (source_words[k][i], target_words[k][j])
        for k, alignment in enumerate(alignments)
        for i, j in alignment or []
    }
    return sorted(pairs)


def _text_words(segmented: Segmented, sentences: list[str]) -> list[list[int]]:
    """For each of `sentences`, the index of the word of `segmented.join(sentences)` each of its words begins in."""
    starts = [start for start, _ in word_spans(segmented.join(sentences))]
    out, position = [], len(segmented.separators[0])
    for sentence, separator in zip(sentences, segmented.separators[1:], strict=True):
        out.append([bisect_right(starts, position + start) - 1 for start, _ in word_spans(sentence)])
        position += len(sentence) + len(separator)
    return out

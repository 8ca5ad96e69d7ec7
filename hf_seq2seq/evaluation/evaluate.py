"""Scoring a test set with any engine: `evaluate_translations` translates sources with a
`hf_seq2seq.engines.base.Translator` (torch, CTranslate2 or ONNX Runtime) and scores them against their
references (BLEU/chrF, the shares of looping, empty and overlong outputs, scores by source length, the decoding
used, wall time); `evaluate_folder` loads a folder's translator (`hf_seq2seq.engines.factory.load_translator`),
reads the test set its `EvaluationSettings` name (text files, a standard set, or a dataset's split) and writes
its `EvalReport` and translations (`hf-seq2seq evaluate`)."""

import os
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from hf_seq2seq.data.errors import ColumnError, DataError, DataFormatError
from hf_seq2seq.engines.base import ENGINES, FULL_PRECISIONS, Translator, translate  # noqa: F401 (ENGINES: re-exported)
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator  # noqa: F401 (ENGINES: re-exported)
from hf_seq2seq.evaluation.metrics import (
    empty_share,
    loop_share,
    overlong_share,
    score_by_length,
    score_translations,
)
from hf_seq2seq.evaluation.report import EVAL_REPORT, EvalReport


def evaluate_translations(
    translator: Translator,
    sources: Sequence[str],
    references: Sequence[Sequence[str]],
    batch_size: int = 64,
    decoding: Decoding | None = None,
    split_sentences: bool = False,
    source_lang: str = "en",
    progress: bool = True,
) -> tuple[dict, list[str]]:
    """Translate `sources` with `translator` (any engine's) and score them against all `references` of each:
    BLEU/chrF with signatures, the number of sentences and references, the share of looping outputs, of empty
    translations of non-empty sources and of outputs more than three times their source's words, the over-long
    translations of short sentences replaced (`hf_seq2seq.engines.base.translate_pieces`), the scores by
    source length (in tokens), the decoding settings (with the translator's precision unless it is full
    precision) and the translation's wall time."""
    decoding = decoding or Decoding()
    tokenizer, precision = translator.tokenizer, translator.precision
    replaced_before = translator.replaced_overlong.copy()
    started = time.monotonic()
    hypotheses = translate(
        translator, sources, batch_size, decoding, split_sentences, source_lang, progress=progress
    )
    wall_time_s = round(time.monotonic() - started, 1)
    references = [list(r) for r in references]
    lengths = [
        len(ids) for ids in tokenizer(list(sources), add_special_tokens=False, verbose=False)["input_ids"]
    ]
    scores = score_translations(hypotheses, references)
    return {
        **scores,
        "loop_share": loop_share(hypotheses),
        "empty_share": empty_share(sources, hypotheses),
        "overlong_share": overlong_share(sources, hypotheses),
        "replaced_overlong": {
            kind: translator.replaced_overlong[kind] - replaced_before[kind]
            for kind in ("hypothesis", "source")
        },
        "by_length": score_by_length(lengths, hypotheses, references),
        "decoding": translator.settings(decoding)
        | ({"split_sentences": True} if split_sentences else {})
        | ({"precision": precision} if precision not in FULL_PRECISIONS else {}),
        "wall_time_s": wall_time_s,
    }, hypotheses


def read_lines(path: str | os.PathLike[str]) -> list[str]:
    """One sentence per line (a trailing newline does not make an extra, empty sentence)."""
    return Path(path).read_text(encoding="utf-8").removesuffix("\n").split("\n")


@dataclass(frozen=True)
class EvaluationSettings:
    """What `evaluate_folder` scores and how (`hf-seq2seq evaluate`'s flags).

    The test set is `src_file` with one or more aligned `ref_files` (plain text, one sentence per line), a
    standard `test_set` by name (`hf_seq2seq.data.test_sets`: one reference a line, as its leaderboard scores), or
    the `split` of `dataset` as `hf_seq2seq.data.loaders` loads it (all references of each source; `data_path`,
    `dataset_config` and `max_samples` are for it). `engine`, `precision` and `trust_remote_code` are
    `load_translator`'s: with `engine` "ctranslate2" the folder is an export of `hf-seq2seq export ctranslate2`,
    translated by CTranslate2; the torch engine translates at `precision` (see
    `hf_seq2seq.engines.torch_engine.set_precision`). `decoding`, `batch_size` and `split_sentences` are
    `evaluate_translations`'.
    """

    src_file: str | None = None
    ref_files: Sequence[str] = ()
    test_set: str | None = None
    data_path: str | None = None
    dataset: str = "fra-eng"
    dataset_config: str | None = None
    source_lang: str = "en"
    target_lang: str = "fr"
    split: str = "test"
    max_samples: int | None = None
    decoding: Decoding | None = None
    split_sentences: bool = False
    batch_size: int = 64
    engine: str = "torch"
    precision: str = "fp32"
    trust_remote_code: bool = False

    def __post_init__(self):
        if self.src_file and self.test_set:
            raise DataError("--src-file and --test-set each name a test set: give one")


def read_test_set(settings: EvaluationSettings) -> tuple[list[str], list[list[str]], str, str | None]:
    """The sources, the references of each and the names of the test set (its dataset and split; no split for a
    standard set or files) that `settings` names."""
    if settings.test_set:
        from hf_seq2seq.data.test_sets import load_test_set

        sources, lines = load_test_set(settings.test_set, settings.source_lang, settings.target_lang)
        return sources, [[line] for line in lines], settings.test_set, None
    if settings.src_file:
        if not settings.ref_files:
            raise DataError("--src-file needs at least one --ref-file with the reference translations")
        sources = read_lines(settings.src_file)
        streams = [read_lines(f) for f in settings.ref_files]
        for ref_file, stream in zip(settings.ref_files, streams, strict=True):
            if len(stream) != len(sources):
                raise DataFormatError(
                    f"{ref_file} has {len(stream)} lines but {settings.src_file} has {len(sources)}"
                )
        return sources, [list(refs) for refs in zip(*streams, strict=True)], str(settings.src_file), None
    from hf_seq2seq.data.loaders import load_named_dataset

    splits = load_named_dataset(
        settings.dataset,
        settings.dataset_config,
        data_path=settings.data_path,
        source_lang=settings.source_lang,
        target_lang=settings.target_lang,
        # the test split is the same either way: the test sets are kept out of train and validation only
        exclude_test_sets=["none"] if settings.split == "test" else ["default"],
    )
    if settings.split not in splits:
        raise ColumnError(f"split {settings.split!r} not found; available: {', '.join(splits)}")
    rows = splits[settings.split]
    if settings.max_samples is not None:
        rows = rows.select(range(min(settings.max_samples, len(rows))))
    references = rows["references"] if "references" in rows.column_names else [[t] for t in rows["tgt"]]
    return rows["src"], references, settings.dataset, settings.split


def evaluate_folder(
    folder: str | os.PathLike[str],
    output_dir: str | os.PathLike[str] | None = None,
    settings: EvaluationSettings = EvaluationSettings(),
) -> EvalReport:
    """Translate the test set `settings` names with the translator of `folder` and score it; write
    `<output_dir>/eval_report.json` (an `EvalReport`) and `<output_dir>/translations.txt` (default output_dir:
    the model folder)."""
    translator = load_translator(folder, settings.engine, settings.precision, settings.trust_remote_code)
    sources, references, dataset, split = read_test_set(settings)
    scores, hypotheses = evaluate_translations(
        translator,
        sources,
        references,
        settings.batch_size,
        settings.decoding,
        settings.split_sentences,
        settings.source_lang,
    )
    report = EvalReport(
        **scores,
        model=str(folder),
        dataset=dataset,
        split=split,
        direction=f"{settings.source_lang}-{settings.target_lang}",
        parameters=translator.parameters,  # counted before int8 quantization packs the Linear weights away
    )
    output_dir = Path(output_dir or folder)
    output_dir.mkdir(parents=True, exist_ok=True)
    report.save(output_dir / EVAL_REPORT)
    (output_dir / "translations.txt").write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    return report

"""Scoring a test set with any engine: `evaluate_translations` translates sources with a
`hf_seq2seq.engines.base.Translator` (torch, CTranslate2 or ONNX Runtime) and scores them against their
references (BLEU/chrF, loop share, scores by source length, the decoding used, wall time);
`evaluate_folder` loads a folder's translator (`hf_seq2seq.engines.factory.load_translator`), reads the test
set (text files, or a dataset's split) and writes its `EvalReport` and translations (`hf-seq2seq evaluate`)."""

import os
import time
from collections.abc import Sequence
from pathlib import Path

from hf_seq2seq.engines.base import ENGINES, FULL_PRECISIONS, Translator, translate  # noqa: F401 (ENGINES: re-exported)
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator  # noqa: F401 (ENGINES: re-exported)
from hf_seq2seq.evaluation.metrics import loop_share, score_by_length, score_translations
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
    BLEU/chrF with signatures, the number of sentences and references, the share of looping outputs, the
    scores by source length (in tokens), the decoding settings (with the translator's precision unless it is
    full precision) and the translation's wall time."""
    decoding = decoding or Decoding()
    tokenizer, precision = translator.tokenizer, translator.precision
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
        "by_length": score_by_length(lengths, hypotheses, references),
        "decoding": translator.settings(decoding)
        | ({"split_sentences": True} if split_sentences else {})
        | ({"precision": precision} if precision not in FULL_PRECISIONS else {}),
        "wall_time_s": wall_time_s,
    }, hypotheses


def read_lines(path: str | os.PathLike[str]) -> list[str]:
    """One sentence per line (a trailing newline does not make an extra, empty sentence)."""
    return Path(path).read_text(encoding="utf-8").removesuffix("\n").split("\n")


def evaluate_folder(
    folder: str | os.PathLike[str],
    output_dir: str | os.PathLike[str] | None = None,
    decoding: Decoding | None = None,
    split_sentences: bool = False,
    src_file: str | None = None,
    ref_files: Sequence[str] = (),
    test_set: str | None = None,
    data_path: str | None = None,
    dataset: str = "fra-eng",
    dataset_config: str | None = None,
    source_lang: str = "en",
    target_lang: str = "fr",
    split: str = "test",
    max_samples: int | None = None,
    batch_size: int = 64,
    trust_remote_code: bool = False,
    engine: str = "torch",
    precision: str = "fp32",
) -> EvalReport:
    """Translate a test set with a saved model and score it; write `<output_dir>/eval_report.json` (an
    `EvalReport`) and `<output_dir>/translations.txt` (default output_dir: the model folder).

    The test set is `src_file` with one or more aligned `ref_files` (plain text, one sentence per line), a
    standard `test_set` by name (`hf_seq2seq.data.test_sets`: one reference a line, as its leaderboard scores), or
    the `split` of a dataset as `hf_seq2seq.data.loaders` loads it (all references of each source). `folder`,
    `engine` and `precision` are `load_translator`'s: with `engine` "ctranslate2", `folder` is an export of
    `hf-seq2seq export ctranslate2`, translated by CTranslate2; the torch engine translates at `precision`
    (see `hf_seq2seq.engines.torch_engine.set_precision`).
    """
    if src_file and test_set:
        raise ValueError("--src-file and --test-set each name a test set: give one")
    translator = load_translator(folder, engine, precision, trust_remote_code)
    if test_set:
        from hf_seq2seq.data.test_sets import load_test_set

        sources, lines = load_test_set(test_set, source_lang, target_lang)
        references = [[line] for line in lines]
        dataset, split = test_set, None
    elif src_file:
        if not ref_files:
            raise ValueError("--src-file needs at least one --ref-file with the reference translations")
        sources = read_lines(src_file)
        streams = [read_lines(f) for f in ref_files]
        for ref_file, stream in zip(ref_files, streams, strict=True):
            if len(stream) != len(sources):
                raise ValueError(f"{ref_file} has {len(stream)} lines but {src_file} has {len(sources)}")
        references = [list(refs) for refs in zip(*streams, strict=True)]
        dataset, split = str(src_file), None
    else:
        from hf_seq2seq.data.loaders import load_named_dataset

        splits = load_named_dataset(
            dataset,
            dataset_config,
            data_path=data_path,
            source_lang=source_lang,
            target_lang=target_lang,
            # the test split is the same either way: the test sets are kept out of train and validation only
            exclude_test_sets=["none"] if split == "test" else ["default"],
        )
        if split not in splits:
            raise ValueError(f"split {split!r} not found; available: {', '.join(splits)}")
        rows = splits[split]
        if max_samples is not None:
            rows = rows.select(range(min(max_samples, len(rows))))
        sources = rows["src"]
        references = rows["references"] if "references" in rows.column_names else [[t] for t in rows["tgt"]]
    scores, hypotheses = evaluate_translations(
        translator, sources, references, batch_size, decoding, split_sentences, source_lang
    )
    report = EvalReport(
        **scores,
        model=str(folder),
        dataset=dataset,
        split=split,
        direction=f"{source_lang}-{target_lang}",
        parameters=translator.parameters,  # counted before int8 quantization packs the Linear weights away
    )
    output_dir = Path(output_dir or folder)
    output_dir.mkdir(parents=True, exist_ok=True)
    report.save(output_dir / EVAL_REPORT)
    (output_dir / "translations.txt").write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    return report

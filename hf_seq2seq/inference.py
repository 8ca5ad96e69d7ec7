"""Loading a saved model folder, batched translation, and scoring a whole test set."""

import logging
import os
import re
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import torch
from tqdm.auto import tqdm
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase

from .folder import check_model_folder
from .metrics import score_translations
from .report import EVAL_REPORT, EvalReport

logger = logging.getLogger(__name__)


def load_model_and_tokenizer(
    folder: str | os.PathLike[str], device: str | torch.device | None = None, trust_remote_code: bool = False
) -> tuple[PreTrainedModel, PreTrainedTokenizerBase]:
    """Load a saved folder through the Auto classes, in eval mode, on `device` (default: cuda if available)."""
    folder = check_model_folder(folder)
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    model = (
        AutoModelForSeq2SeqLM.from_pretrained(folder, trust_remote_code=trust_remote_code).to(device).eval()
    )
    tokenizer = AutoTokenizer.from_pretrained(folder, trust_remote_code=trust_remote_code)
    return model, tokenizer


@dataclass(frozen=True)
class Decoding:
    """generate() settings of a translation; None keeps the saved generation config's value."""

    num_beams: int | None = None
    length_penalty: float | None = None
    max_new_tokens: int | None = None

    def generate_kwargs(self) -> dict:
        return {name: value for name, value in vars(self).items() if value is not None}


_SENTENCE_END = re.compile(r"(?<=[.!?])\s+")


@torch.inference_mode()
def translate(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    texts: Sequence[str],
    batch_size: int = 64,
    decoding: Decoding | None = None,
    split_sentences: bool = False,
    source_lang: str = "en",
    max_source_length: int | None = None,
    progress: bool = False,
) -> list[str]:
    """Translations of `texts`, in order.

    Texts are batched by length to reduce padding. An empty (or blank) text translates to "". With
    `split_sentences`, each text is cut after sentence-final punctuation and its sentences are translated
    separately and joined with a space. A text longer than `max_source_length` (default: the model's
    `max_position_embeddings`) is truncated with a warning.
    """
    if split_sentences:
        pieces = [_SENTENCE_END.split(text.strip()) if text.strip() else [""] for text in texts]
        flat = translate(
            model, tokenizer, [p for ps in pieces for p in ps], batch_size, decoding, False, source_lang,
            max_source_length, progress,
        )  # fmt: skip
        out, start = [], 0
        for ps in pieces:
            out.append(" ".join(flat[start : start + len(ps)]))
            start += len(ps)
        return out
    sentences = list(texts)
    max_source_length = max_source_length or model.config.max_position_embeddings
    encoded = tokenizer(sentences, add_special_tokens=True)["input_ids"]
    too_long = [i for i, ids in enumerate(encoded) if len(ids) > max_source_length]
    if too_long:
        logger.warning(
            "%d input(s) longer than %d tokens were truncated (first: #%d, %d tokens)",
            len(too_long),
            max_source_length,
            too_long[0],
            len(encoded[too_long[0]]),
        )
    todo = sorted((i for i, s in enumerate(sentences) if s.strip()), key=lambda i: len(encoded[i]))
    out = [""] * len(sentences)
    settings = (decoding or Decoding()).generate_kwargs()
    for start in tqdm(range(0, len(todo), batch_size), desc="translating", disable=not progress):
        index = todo[start : start + batch_size]
        batch = tokenizer(
            [sentences[i] for i in index],
            max_length=max_source_length,
            truncation=True,
            padding=True,
            return_tensors="pt",
        ).to(model.device)
        generated = model.generate(**batch, do_sample=False, **settings)
        for i, text in zip(index, tokenizer.batch_decode(generated, skip_special_tokens=True), strict=True):
            out[i] = text.strip()
    return out


def evaluate_translations(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    sources: Sequence[str],
    references: Sequence[Sequence[str]],
    batch_size: int = 64,
    max_new_tokens: int | None = None,
    progress: bool = True,
) -> tuple[dict, list[str]]:
    """Translate `sources` and score them against all `references` of each: BLEU/chrF with signatures, the
    number of sentences and references, and the translation's wall time."""
    started = time.monotonic()
    hypotheses = translate(
        model,
        tokenizer,
        sources,
        batch_size=batch_size,
        decoding=Decoding(max_new_tokens=max_new_tokens),
        progress=progress,
    )
    scores = score_translations(hypotheses, [list(r) for r in references])
    return {**scores, "wall_time_s": round(time.monotonic() - started, 1)}, hypotheses


def read_lines(path: str | os.PathLike[str]) -> list[str]:
    """One sentence per line (a trailing newline does not make an extra, empty sentence)."""
    return Path(path).read_text(encoding="utf-8").removesuffix("\n").split("\n")


def evaluate_folder(
    folder: str | os.PathLike[str],
    output_dir: str | os.PathLike[str] | None = None,
    src_file: str | None = None,
    ref_files: Sequence[str] = (),
    data_path: str | None = None,
    dataset: str = "fra-eng",
    dataset_config: str | None = None,
    source_lang: str = "en",
    target_lang: str = "fr",
    split: str = "test",
    max_samples: int | None = None,
    batch_size: int = 64,
    trust_remote_code: bool = False,
) -> EvalReport:
    """Translate a test set with a saved model and score it; write `<output_dir>/eval_report.json` (an
    `EvalReport`) and `<output_dir>/translations.txt` (default output_dir: the model folder).

    The test set is `src_file` with one or more aligned `ref_files` (plain text, one sentence per line), or
    the `split` of a dataset as `hf_seq2seq.data` loads it (all references of each source).
    """
    model, tokenizer = load_model_and_tokenizer(folder, trust_remote_code=trust_remote_code)
    if src_file:
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
        from .data import load_named_dataset

        splits = load_named_dataset(
            dataset, dataset_config, data_path=data_path, source_lang=source_lang, target_lang=target_lang
        )
        if split not in splits:
            raise ValueError(f"split {split!r} not found; available: {', '.join(splits)}")
        rows = splits[split]
        if max_samples is not None:
            rows = rows.select(range(min(max_samples, len(rows))))
        sources = rows["src"]
        references = rows["references"] if "references" in rows.column_names else [[t] for t in rows["tgt"]]
    scores, hypotheses = evaluate_translations(model, tokenizer, sources, references, batch_size=batch_size)
    report = EvalReport(
        **scores,
        model=str(folder),
        dataset=dataset,
        split=split,
        direction=f"{source_lang}-{target_lang}",
        decoding=decoding_settings(model),
        parameters=model.num_parameters(),
    )
    output_dir = Path(output_dir or folder)
    output_dir.mkdir(parents=True, exist_ok=True)
    report.save(output_dir / EVAL_REPORT)
    (output_dir / "translations.txt").write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    return report


def decoding_settings(model: PreTrainedModel, **overrides) -> dict:
    """The generate() settings a translation used: the saved generation config's, with `overrides`."""
    saved = model.generation_config.to_diff_dict()
    names = ("num_beams", "length_penalty", "max_new_tokens", "no_repeat_ngram_size", "do_sample")
    settings = {name: saved[name] for name in names if name in saved}
    return settings | {key: value for key, value in overrides.items() if value is not None}

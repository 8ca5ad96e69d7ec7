"""The model card (``README.md``) of a Hub folder, rendered with ``huggingface_hub.ModelCard``.

Metadata (language, license, tags, datasets, metrics, ``model-index``: one entry per published result and
metric) is built with ``ModelCardData`` and ``EvalResult``; the text is ``model_card_template.md`` (package
data next to this module) filled with the model's configuration, its tokenizer, its results and the data's
attribution. `hf_seq2seq.hub.push.build_hub_folder` saves the card into the folder it builds.
"""

from __future__ import annotations

import datetime
import importlib.resources
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import transformers
from huggingface_hub import EvalResult, ModelCard, ModelCardData
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from hf_seq2seq.data.software_messages import SHORT_WORDS, SOFTWARE_CORPORA, SOFTWARE_MESSAGES_SHORT
from hf_seq2seq.data.test_sets import OPUS_MT_TESTSETS_COMMIT, TEST_SETS
from hf_seq2seq.evaluation.report import EvalReport
from hf_seq2seq.hub.layout import RESULTS_DIR
from hf_seq2seq.hub.validation import check_repo_id
from hf_seq2seq.models.folder import PIPELINE_FILE, pipeline_tasks, supported_releases

CARD_TEMPLATE = "model_card_template.md"
"""Jinja template of the model card, shipped as package data next to this module."""

DATASET_ID = "tatoeba"
"""``datasets`` entry of the card metadata: the sentences come from the Tatoeba Project."""


DATASET_NAME = "Tatoeba English-French (manythings.org/anki export of 2019-04-07, d2l fra-eng)"
DATA_ATTRIBUTION = "www.manythings.org/anki and tatoeba.org"
DATA_LICENSE = "CC-BY 2.0 FR"
DATA_LICENSE_URL = "https://creativecommons.org/licenses/by/2.0/fr/"
LICENSE = "apache-2.0"
SOFTWARE_MESSAGES_PROJECTS = (
    "JupyterLab (BSD-3-Clause), Wagtail (BSD-3-Clause), Trac (BSD-3-Clause), Indico (MIT)"
)
"""Whose French gettext catalogues ``software-messages-v1`` holds, and their licences (its README in the package)."""


LANGUAGE_NAMES = {"en": "English", "fr": "French"}


def _language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, code)


def _citation(repo_id: str, report: EvalReport) -> str:
    year = datetime.date.today().year
    key = repo_id.replace("/", "_").replace("-", "_").replace(".", "_")
    title = (
        f"{_language_name(report.source_lang)}-{_language_name(report.target_lang)} Transformer: {repo_id}"
    )
    return "\n".join(
        [
            f"@misc{{{key},",
            f"  title        = {{{title}}},",
            f"  author       = {{{repo_id.split('/')[0]}}},",
            f"  year         = {{{year}}},",
            f"  howpublished = {{\\url{{https://huggingface.co/{repo_id}}}}},",
            "}",
        ]
    )


def trained_on(report: EvalReport) -> list[str]:
    """The corpora a training report names (`--dataset`, comma-separated)."""
    return report.dataset.split(",")


def _dataset_of(report: EvalReport) -> tuple[str, str]:
    """(`dataset_type`, `dataset_name`) of a result's model-index entry; a training run's test split is its first
    corpus's."""
    if trained_on(report)[0] == "fra-eng":
        return DATASET_ID, DATASET_NAME
    if report.dataset in TEST_SETS:  # a standard test set, as its leaderboard scores it
        return report.dataset, f"{report.dataset} (OPUS-MT-testsets {OPUS_MT_TESTSETS_COMMIT[:7]})"
    name = Path(report.dataset).name if not report.split else report.dataset
    return name, f"{name} ({report.split} split)" if report.split else f"{name} (plain text)"


def supported_transformers() -> str:
    """The transformers releases this package supports (`supported_releases`), e.g. ">=5.18, <6"."""
    return ", ".join(supported_releases("transformers"))


def _eval_results(reports: Sequence[EvalReport]) -> list[EvalResult]:
    """The ``model-index`` entries: BLEU and chrF of each result, with its decoding settings and signatures,
    all under the first result's language pair."""
    language_pair = f"{reports[0].source_lang}-{reports[0].target_lang}"
    eval_results = []
    for result in reports:
        dataset_type, dataset_name = _dataset_of(result)
        settings = ", ".join(f"{key}={value}" for key, value in result.decoding.items())
        for metric_type, metric_name, value, signature in (
            ("bleu", "BLEU", result.bleu, result.bleu_signature),
            ("chrf", "chrF", result.chrf, result.chrf_signature),
        ):
            eval_results.append(
                EvalResult(
                    task_type="translation",
                    task_name=f"Translation {language_pair}",
                    dataset_type=dataset_type,
                    dataset_name=dataset_name,
                    dataset_config=language_pair,
                    dataset_split=result.split,
                    metric_type=metric_type,
                    metric_name=metric_name,
                    metric_value=value,
                    metric_config=settings or None,
                    metric_args={"signature": signature},
                )
            )
    return eval_results


def _card_data(model: PreTrainedModel, reports: Sequence[EvalReport], repo_id: str) -> ModelCardData:
    """The card's metadata; the first result gives the languages."""
    report = reports[0]
    return ModelCardData(
        model_name=repo_id,
        language=[report.source_lang, report.target_lang],
        license=LICENSE,
        library_name="transformers",
        pipeline_tag="translation",
        tags=["translation", "seq2seq", "transformer", model.config.model_type, "custom_code"],
        datasets=[DATASET_ID],
        metrics=["bleu", "chrf"],
        eval_results=_eval_results(reports),
    )


def _architecture(model: PreTrainedModel) -> dict[str, Any]:
    """The card's architecture table: row name -> value, from the model's configuration."""
    config = model.config
    return {
        "Layers (encoder + decoder)": f"{config.encoder_layers} + {config.decoder_layers}",
        "Model width (d_model)": config.d_model,
        "Attention heads (encoder / decoder)": f"{config.encoder_attention_heads} / {config.decoder_attention_heads}",
        "Feed-forward width (encoder / decoder)": f"{config.encoder_ffn_dim} / {config.decoder_ffn_dim}",
        "Activation": config.activation_function,
        "Residual layout": "pre-LN" if config.normalize_before else "post-LN (as in the paper)",
        "Positions": f"sinusoidal, up to {config.max_position_embeddings} tokens",
        "Embeddings": "one matrix for source, target and output layer"
        if config.tie_word_embeddings
        else "one matrix for source and target, separate output layer",
        "Dropout / attention / activation dropout": (
            f"{config.dropout} / {config.attention_dropout} / {config.activation_dropout}"
        ),
        "Label smoothing": config.label_smoothing,
        "Vocabulary": config.vocab_size,
        "Parameters": f"{model.num_parameters():,}",
    }


def _model_values(model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase) -> dict[str, Any]:
    """The template's values that describe the model, its decoding settings and its tokenizer."""
    config = model.config
    backend = getattr(tokenizer, "backend_tokenizer", None)
    return dict(
        model_type=config.model_type,
        architecture=_architecture(model),
        generation={
            key: value
            for key, value in model.generation_config.to_diff_dict().items()
            if key != "transformers_version" and not key.endswith("token_id")
        },
        tokenizer_class=type(tokenizer).__name__,
        tokenizer_model=type(backend.model).__name__ if backend is not None else None,
        tokenizer_size=len(tokenizer),
        special_tokens=sorted(
            (tokenizer.convert_tokens_to_ids(token), token) for token in tokenizer.all_special_tokens
        ),
        decoder_start_token_id=config.decoder_start_token_id,
        max_positions=config.max_position_embeddings,
    )


def _results_values(reports: Sequence[EvalReport], repo_id: str) -> dict[str, Any]:
    """The template's values that describe the results (the first is the headline one) and how to cite."""
    report = reports[0]
    software = next((c for r in reports if r.training for c in trained_on(r) if c in SOFTWARE_CORPORA), None)
    return dict(
        source_language=_language_name(report.source_lang),
        target_language=_language_name(report.target_lang),
        report=report,
        results=[(_dataset_of(result)[1], result) for result in reports],
        pipeline_tasks=pipeline_tasks(report.source_lang, report.target_lang),
        citation=_citation(repo_id, report),
        software_messages=software,  # the name of the software-messages corpus the model trained on, or None
        software_messages_words=SHORT_WORDS if software == SOFTWARE_MESSAGES_SHORT else None,
        software_messages_projects=SOFTWARE_MESSAGES_PROJECTS,
    )


def render_model_card(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    reports: Sequence[EvalReport],
    repo_id: str,
    ctranslate2: str | None = None,
    space: str | None = None,
    onnx: bool = False,
) -> ModelCard:
    """The model card of ``model`` as it will be published under ``repo_id``, with every result of ``reports``.

    Metadata (language, license, tags, datasets, metrics, ``model-index``: one entry per result and metric) is
    built with ``ModelCardData`` and ``EvalResult``; the text is ``model_card_template.md`` filled with the
    model's configuration. The first result is the headline one (training's test split when there is one).
    ``ctranslate2`` (a quantization) says the repository carries a CTranslate2 export in ``ctranslate2/``;
    ``space`` (a Space repo id) links the card to the Gradio demo of the model there; ``onnx`` says the
    repository carries the ONNX export in ``onnx/`` (and the card shows how to load it from JavaScript and Python).
    """
    check_repo_id(repo_id)
    reports = [report.published() for report in reports]
    template = importlib.resources.files(__package__).joinpath(CARD_TEMPLATE).read_text(encoding="utf-8")
    return ModelCard.from_template(
        _card_data(model, reports, repo_id),
        template_str=template,
        repo_id=repo_id,
        ctranslate2=ctranslate2,
        space=space,
        onnx=onnx,
        pipeline_file=PIPELINE_FILE,
        results_dir=RESULTS_DIR,
        dataset_name=DATASET_NAME,
        data_attribution=DATA_ATTRIBUTION,
        data_license=DATA_LICENSE,
        data_license_url=DATA_LICENSE_URL,
        transformers_version=transformers.__version__,
        supported_transformers=supported_transformers(),
        **_model_values(model, tokenizer),
        **_results_values(reports, repo_id),
    )

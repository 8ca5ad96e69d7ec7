"""The test evaluation at the end of a training run: the trained model as saved, its test translations with the
test decoding (`--num_beams`, ...) and greedy search, the warning when the two disagree too much, and the
standard test set's score (`--standard_test_set`), comparable with its leaderboard's."""

import logging
from pathlib import Path

from datasets import Dataset
from transformers import PreTrainedModel, Seq2SeqTrainer

from hf_seq2seq.data.test_sets import FILE_LANGUAGES, load_test_set
from hf_seq2seq.engines.base import Translator
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.evaluation.evaluate import evaluate_translations
from hf_seq2seq.evaluation.report import STANDARD_REPORT, EvalReport
from hf_seq2seq.training.arguments import FinalArguments

logger = logging.getLogger(__name__)

TRANSLATIONS_FILE = "test_translations.txt"

# Beam search scores above greedy search on a trained model, or a little below on a weak one; further below, the
# decoding is broken, e.g. by a transformers release whose decoding cache the model does not take.
BEAM_BELOW_GREEDY_LIMIT = 2.0  # test BLEU points


def final_model(trainer: Seq2SeqTrainer, model_class: type[PreTrainedModel]) -> PreTrainedModel:
    """The trained model as saved, on the training device: under FSDP the weights are sharded over processes
    that have moved on, so the saved model (of `model_class`, the class before the Trainer wrapped it); else
    the Trainer's model, without the autocast wrapper that mixed-precision training leaves around its forward."""
    if trainer.is_fsdp_enabled:
        return model_class.from_pretrained(trainer.args.output_dir).to(trainer.args.device)
    return trainer.accelerator.unwrap_model(trainer.model, keep_fp32_wrapper=False)


def evaluate_test(
    translator: Translator,
    test: Dataset,
    final_args: FinalArguments,
    batch_size: int,
    source_lang: str,
) -> tuple[dict, dict, list[str]]:
    """`(scores, greedy, hypotheses)`: the test split's scores and translations with the test decoding of
    `final_args`, and greedy search's scores (the same scores when the test decoding is greedy)."""
    scores, hypotheses = evaluate_translations(
        translator,
        test["src"],
        test["references"],
        batch_size=batch_size,
        decoding=Decoding(final_args.num_beams, final_args.length_penalty, final_args.max_new_tokens),
        source_lang=source_lang,
    )
    greedy = scores
    if scores["decoding"].get("num_beams", 1) != 1:
        greedy, _ = evaluate_translations(
            translator,
            test["src"],
            test["references"],
            batch_size=batch_size,
            decoding=Decoding(num_beams=1, max_new_tokens=final_args.max_new_tokens),
            source_lang=source_lang,
        )
    return scores, greedy, hypotheses


def decoding_problem(saved: dict, greedy: dict) -> str | None:
    """A plain warning when the saved decoding's test scores (`saved`, `evaluate_translations`' scores) are more
    than `BEAM_BELOW_GREEDY_LIMIT` BLEU below greedy search's (`greedy`), else None."""
    if greedy["bleu"] - saved["bleu"] <= BEAM_BELOW_GREEDY_LIMIT:
        return None
    return (
        f"the test BLEU with the saved decoding ({saved['decoding'].get('num_beams')} beams) is {saved['bleu']:.1f}, "
        f"{greedy['bleu'] - saved['bleu']:.1f} points below greedy search's {greedy['bleu']:.1f}: the decoding is "
        "broken, not the model (is this transformers release newer than the model code? see `hf-seq2seq "
        "upgrade`); do not publish this score"
    )


def evaluate_standard(
    translator: Translator,
    final_args: FinalArguments,
    batch_size: int,
    source_lang: str,
    target_lang: str,
    output_dir: str,
) -> EvalReport | None:
    """Score `--standard_test_set` with the test decoding, one reference a line (sacrebleu's defaults, as its
    leaderboard scores), and write its report (`STANDARD_REPORT`) and translations into `output_dir`; None where
    there is none to score (no set, or a direction other than English-French)."""
    name = final_args.standard_test_set
    if name in (None, "", "none"):
        return None
    if {source_lang, target_lang} != set(FILE_LANGUAGES):
        logger.info("no standard test set for %s-%s: %s is English-French", source_lang, target_lang, name)
        return None
    sources, references = load_test_set(name, source_lang, target_lang)
    scores, hypotheses = evaluate_translations(
        translator,
        sources,
        [[reference] for reference in references],
        batch_size=batch_size,
        decoding=Decoding(final_args.num_beams, final_args.length_penalty, final_args.max_new_tokens),
        source_lang=source_lang,
    )
    report = EvalReport(
        **scores,
        model=output_dir,
        dataset=name,
        split=None,
        direction=f"{source_lang}-{target_lang}",
        parameters=translator.parameters,
    )
    report.save(Path(output_dir, STANDARD_REPORT))
    Path(output_dir, f"{name}.translations.txt").write_text("\n".join(hypotheses) + "\n", encoding="utf-8")
    return report

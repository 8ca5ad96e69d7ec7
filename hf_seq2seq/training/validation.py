"""Validation BLEU during training: the `compute_metrics` that the Trainer calls after each evaluation."""

from collections import Counter
from collections.abc import Callable, Sequence

import numpy as np
from datasets import Dataset
from transformers import EvalPrediction, PreTrainedTokenizerBase

from hf_seq2seq.evaluation.metrics import build_compute_metrics, references_by_source


def validation_metrics(
    tokenizer: PreTrainedTokenizerBase, rows: Dataset, references: Sequence[Sequence[str]]
) -> Callable[[EvalPrediction], dict[str, float]]:
    """A `compute_metrics` for the tokenized validation `rows`: BLEU/chrF over each row once, all references.

    `build_compute_metrics` finds each prediction's references by its source ids, as the Trainer reorders
    the rows (length-grouped batches) and passes the ids along (`include_for_metrics=["inputs"]`). With
    several processes, `Seq2SeqTrainer.evaluate` gathers the predictions of all of them with
    `accelerator.gather`, which keeps the rows repeated to even out the last batches: those repeats are
    dropped here, so that each row counts once.
    """
    padding = (-100, tokenizer.pad_token_id)
    compute = build_compute_metrics(tokenizer, references_by_source(rows["input_ids"], references))
    expected = Counter(tuple(ids) for ids in rows["input_ids"])

    def compute_metrics(eval_pred: EvalPrediction) -> dict[str, float]:
        if eval_pred.inputs is None:
            return compute(eval_pred)  # which explains that it needs the inputs
        inputs = np.asarray(eval_pred.inputs)
        seen: Counter[tuple[int, ...]] = Counter()
        kept = []
        for position, source in enumerate(inputs):
            key = tuple(int(i) for i in source if i not in padding)
            seen[key] += 1
            # a repeat goes; a row that is not in the split stays, for `compute` to report
            if key not in expected or seen[key] <= expected[key]:
                kept.append(position)
        if len(kept) < expected.total():
            raise RuntimeError(f"evaluation returned {len(kept)} of the {expected.total()} validation rows")
        predictions = eval_pred.predictions
        if isinstance(predictions, tuple):
            predictions = predictions[0]
        return compute(
            EvalPrediction(
                predictions=np.asarray(predictions)[kept],
                label_ids=np.asarray(eval_pred.label_ids)[kept],
                inputs=inputs[kept],
            )
        )

    return compute_metrics

"""Evaluation: how good and how fast a model is.

* :mod:`hf_seq2seq.evaluation.metrics`: BLEU and chrF with sacrebleu; :mod:`~hf_seq2seq.evaluation.report`:
  `EvalReport`, the one result type; :mod:`~hf_seq2seq.evaluation.evaluate`: scoring a test set with any
  engine (`hf-seq2seq evaluate`).
* :mod:`hf_seq2seq.evaluation.benchmark`: speed against `MarianMTModel` (`hf-seq2seq benchmark`), with
  :mod:`~hf_seq2seq.evaluation.benchmark_exports` (the exports), :mod:`~hf_seq2seq.evaluation.training_options`
  (`hf-seq2seq measure-training`), :mod:`~hf_seq2seq.evaluation.measuring` (the shared tools) and
  :mod:`~hf_seq2seq.evaluation.benchmark_choices` (the sizes and dtypes, torch-free for the command line).
"""

"""Evaluation: how good a model's translations are.

* :mod:`hf_seq2seq.evaluation.metrics`: BLEU and chrF with sacrebleu; :mod:`~hf_seq2seq.evaluation.report`:
  `EvalReport`, the one result type; :mod:`~hf_seq2seq.evaluation.evaluate`: scoring a test set with any
  engine (`hf-seq2seq evaluate`). How fast a model is: :mod:`hf_seq2seq.benchmarks`; what an HTML or document
  translation kept: `measurements/counters.py`, outside the package.
"""

"""The data layer: corpora as ``src``/``tgt``/``references`` splits, the subword tokenizer, sentence splitting.

* :mod:`hf_seq2seq.data.splits`: the split contract (columns of ``train``/``validation``/``test``), the
  leakage-free hash split by source sentence and reference grouping.
* :mod:`hf_seq2seq.data.fra_eng`: the d2l/Tatoeba English-French pairs (locating, download with sha1 check,
  reading), :func:`~hf_seq2seq.data.fra_eng.load_fra_eng`.
* :mod:`hf_seq2seq.data.multi30k`: Multi30k's English-French image captions, pinned and checked the same way,
  :func:`~hf_seq2seq.data.multi30k.load_multi30k`.
* :mod:`hf_seq2seq.data.loaders`: any corpus ``datasets`` reads, by name or path
  (:func:`~hf_seq2seq.data.loaders.load_translation_dataset`, ``load_named_dataset``, ``load_corpora``).
* :mod:`hf_seq2seq.data.test_sets`: the standard English-French test sets by name (pinned, checksummed), and
  training data kept free of them.
* :mod:`hf_seq2seq.data.errors`: the errors these raise.
* :mod:`hf_seq2seq.data.tokenization`: training the joint BPE/Unigram tokenizer, tokenizing datasets.
* :mod:`hf_seq2seq.data.segmentation`: sentence splitting and joining for long inputs.

This layer imports nothing of the package outside itself but the sentence splitter that ships with the model
(`hf_seq2seq.models.transformer_mt.sentence_splitting`), so that the package and the pipeline cut texts alike.
"""

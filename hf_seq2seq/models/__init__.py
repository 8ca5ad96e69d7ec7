"""The model, and what the package does with a saved model folder.

* :mod:`hf_seq2seq.models.transformer_mt`: the files that ship inside every saved folder and Hub repository
  (they import only torch, transformers and each other).
* :mod:`hf_seq2seq.models.registration`: the registration with transformers' Auto classes, done when the
  package is imported, without importing torch then.
* :mod:`hf_seq2seq.models.folder`: what a complete model folder holds, its one check, the shipped files'
  copies in a saved folder.
"""

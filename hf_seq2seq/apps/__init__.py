"""The apps: ways to try a model without writing code, and the figures that show what it does.

* :mod:`hf_seq2seq.apps.demo`: the Gradio demo (`hf-seq2seq demo`) and a Hub Space built from it;
  :mod:`hf_seq2seq.apps.space_app` is the Space's ``app.py``.
* :mod:`hf_seq2seq.apps.webpage`: a static page that translates inside the browser with transformers.js from
  an ONNX export (`hf-seq2seq web`); the page itself is ``web/``.
* :mod:`hf_seq2seq.apps.plotting`: attention maps and training curves (`hf-seq2seq plot-attention`,
  `plot-training`).
"""

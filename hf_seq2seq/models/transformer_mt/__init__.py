"""The model as it ships inside every saved folder and Hub repository: exactly these files, copied next to
the weights, which a Hub user loads with ``trust_remote_code=True`` without this package. They import only torch,
transformers and each other (relative imports; ``pyproject.toml``'s import contracts check it).

* ``configuration_transformer_mt.py``: `TransformerMTConfig`.
* ``modeling_transformer_mt.py``: the network, as the paper writes it, and its transformers plumbing.
* ``generation_transformer_mt.py``: its decoding: the hand-written greedy search.
* ``length_rule.py``: the output-length rule of the saved decoding (no torch: the engines on exports apply it).
* ``pipeline_translation.py``: the ``translation`` pipeline, which translates a text sentence by sentence.
* ``sentence_splitting.py``: the one sentence splitter, of the pipeline and of the package alike.
* ``protected_spans.py``: what must come back as written (URLs, placeholders, numbers...), for both alike.

This ``__init__`` does not ship; the package's own entry points are ``hf_seq2seq``'s lazy names.
"""

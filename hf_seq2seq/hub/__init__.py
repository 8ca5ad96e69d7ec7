"""The Hub layer: publish a trained model folder on the Hugging Face Hub.

- `hf_seq2seq.hub.layout`: the names a Hub folder adds to a model folder, the sentence it is checked with
  (no torch, no transformers: the command line reads it for its parser);
- `hf_seq2seq.hub.validation`: the checks, offline: the repo id, the trained folder's weights and special
  tokens, and loading the built folder in a fresh process without this package;
- `hf_seq2seq.hub.card`: the model card (`README.md`), rendered from ``model_card_template.md``;
- `hf_seq2seq.hub.push`: building the Hub folder, validating it and uploading it (`hf-seq2seq push`).
"""

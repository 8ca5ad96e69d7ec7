"""Training: `hf-seq2seq train` from raw pairs to a saved, evaluated model folder, and checkpoint averaging.

`recipe.run` runs the steps in order; `arguments` and `presets` hold its flags and their named defaults, `checks`
the settings that cannot work;
`data_loading` the splits, `token_batches` the batches by tokens (`--max_tokens_per_batch`), `builders` the
tokenizer and model, `saved_decoding` the generation config saved with the model, `trainer`, `time_budget` and
`validation` the Trainer, its budget of time or tokens and validation BLEU, `final_evaluation` the test
evaluation, `averaging` the average of a run's last checkpoints.
"""

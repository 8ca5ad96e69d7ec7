#!/usr/bin/env python
"""Train and evaluate a translation model: raw pairs -> tokenizer -> Seq2SeqTrainer -> saved model + test BLEU.

python scripts/train.py --preset cpu                       # ~25 min on 2 CPU cores, fra-eng
python scripts/train.py --preset gpu --output_dir runs/base
python scripts/train.py --help                             # every Seq2SeqTrainingArguments flag too
"""

from hf_seq2seq.training import main

if __name__ == "__main__":
    main()

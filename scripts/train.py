#!/usr/bin/env python
"""Train a translation model and evaluate it, as `hf-seq2seq train` does: the entry point for launchers that
take a script (`torchrun scripts/train.py ...`, `accelerate launch scripts/train.py ...`). Flags: `hf-seq2seq
train --help`."""

import sys

from hf_seq2seq.cli import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]]))

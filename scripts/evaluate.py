#!/usr/bin/env python
"""Score a saved model on a test set (BLEU, chrF), as `hf-seq2seq evaluate` does, for those who look for the
entry points in scripts/. Flags: `hf-seq2seq evaluate --help`."""

import sys

from hf_seq2seq.cli import main

if __name__ == "__main__":
    sys.exit(main(["evaluate", *sys.argv[1:]]))

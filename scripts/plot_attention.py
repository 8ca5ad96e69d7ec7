#!/usr/bin/env python
"""Plot a saved model's attention over a sentence, as `hf-seq2seq plot-attention` does, for those who look for the
entry points in scripts/. Flags: `hf-seq2seq plot-attention --help`."""

import sys

from hf_seq2seq.cli import main

if __name__ == "__main__":
    sys.exit(main(["plot-attention", *sys.argv[1:]]))

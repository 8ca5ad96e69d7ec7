#!/usr/bin/env python
"""Plot a training run's loss and validation curves, as `hf-seq2seq plot-training` does, for those who look for
the entry points in scripts/. Flags: `hf-seq2seq plot-training --help`."""

import sys

from hf_seq2seq.cli import main

if __name__ == "__main__":
    sys.exit(main(["plot-training", *sys.argv[1:]]))

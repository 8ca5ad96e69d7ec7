#!/usr/bin/env python
"""Same as `hf-seq2seq plot-training` (kept so that older commands keep working): `hf-seq2seq plot-training --help`."""

import sys

from hf_seq2seq.cli import main

if __name__ == "__main__":
    sys.exit(main(["plot-training", *sys.argv[1:]]))

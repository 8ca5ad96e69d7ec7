#!/usr/bin/env python
"""Same as `hf-seq2seq plot-attention` (kept so that older commands keep working): `hf-seq2seq plot-attention --help`."""

import sys

from hf_seq2seq.cli import main

if __name__ == "__main__":
    sys.exit(main(["plot-attention", *sys.argv[1:]]))

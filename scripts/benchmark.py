#!/usr/bin/env python
"""Same as `hf-seq2seq benchmark` (kept so that older commands keep working): `hf-seq2seq benchmark --help`."""

import sys

from hf_seq2seq.cli import main

if __name__ == "__main__":
    sys.exit(main(["benchmark", *sys.argv[1:]]))

#!/usr/bin/env python
"""Same as `hf-seq2seq train` (kept so that older commands keep working): `hf-seq2seq train --help`."""

import sys

from hf_seq2seq.cli import main

if __name__ == "__main__":
    sys.exit(main(["train", *sys.argv[1:]]))

#!/usr/bin/env python
"""Same as `hf-seq2seq translate` (kept so that older commands keep working): `hf-seq2seq translate --help`."""

import sys

from hf_seq2seq.cli import main

if __name__ == "__main__":
    sys.exit(main(["translate", *sys.argv[1:]]))

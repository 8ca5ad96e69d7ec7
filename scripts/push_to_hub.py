#!/usr/bin/env python
"""Build a model's Hub folder with its card, check it offline and upload it, as `hf-seq2seq push` does, for
those who look for the entry points in scripts/. Flags: `hf-seq2seq push --help`."""

import sys

from hf_seq2seq.cli import main

if __name__ == "__main__":
    sys.exit(main(["push", *sys.argv[1:]]))

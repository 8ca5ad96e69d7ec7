#!/usr/bin/env python
"""How fast a model trains and translates on this machine, as `hf-seq2seq benchmark` measures it, for those who
look for the entry points in scripts/. Flags: `hf-seq2seq benchmark --help`."""

import sys

from hf_seq2seq.cli import main

if __name__ == "__main__":
    sys.exit(main(["benchmark", *sys.argv[1:]]))

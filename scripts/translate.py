#!/usr/bin/env python
"""Translate texts or files with a saved model or export, as `hf-seq2seq translate` does, for those who look
for the entry points in scripts/. Flags: `hf-seq2seq translate --help`."""

import sys

from hf_seq2seq.cli import main

if __name__ == "__main__":
    sys.exit(main(["translate", *sys.argv[1:]]))

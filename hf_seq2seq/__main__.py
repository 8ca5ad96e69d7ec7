"""`python -m hf_seq2seq <verb>`: the same as the `hf-seq2seq` command."""

import sys

from .cli import main

sys.exit(main())

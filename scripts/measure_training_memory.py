#!/usr/bin/env python
"""Peak training-step memory with and without gradient checkpointing (gpu preset's size) and tokens/s with and
without torch.compile (cpu preset's size): `python scripts/measure_training_memory.py --help`."""

from hf_seq2seq.cli.measure_training import main

if __name__ == "__main__":
    main()

#!/usr/bin/env python
"""Ours vs MarianMTModel at identical sizes: training throughput, generate throughput/latency, memory, MFU.

python scripts/benchmark.py --size cpu --json bench_cpu.json      # the CPU training preset's size
python scripts/benchmark.py --size large --device cuda            # d_model 512, 6+6 layers, on a GPU
python scripts/benchmark.py --quick                               # seconds-long smoke run
"""

from hf_seq2seq.benchmark import main

if __name__ == "__main__":
    main()

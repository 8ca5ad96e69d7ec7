"""`hf-seq2seq benchmark`: speed and memory of this model against MarianMTModel at identical sizes."""

from ..benchmark import main

__all__ = ["main"]

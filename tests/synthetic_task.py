"""The synthetic sequence task of seed 001, as token ids for a tiny model.

Source: a random string of 30-48 symbols over digits and lower-case letters (skewed frequencies, as in the
seed). Target: each symbol mapped (letters upper-cased, digit d -> 9 - d), the last mapped symbol repeated,
and the whole sequence reversed. Solving it needs attention to the right source position at every step.
"""

import numpy as np
import torch

PAD, BOS, EOS = 0, 1, 2
SOURCE_SYMBOLS = list("0123456789qwertyuiopasdfghjklzxcvbnm")
TARGET_SYMBOLS = [c.upper() for c in "qwertyuiopasdfghjklzxcvbnm"]
VOCAB = ["<pad>", "<s>", "</s>"] + SOURCE_SYMBOLS + TARGET_SYMBOLS
TOKEN_ID = {tok: i for i, tok in enumerate(VOCAB)}
_P = np.array(list(range(1, 11)) + list(range(1, 27)), dtype=np.float64)
_P /= _P.sum()


def map_symbol(c: str) -> str:
    return str(9 - int(c)) if c.isdigit() else c.upper()


def make_pair(rng: np.random.Generator, min_len: int = 30, max_len: int = 48) -> tuple[list[str], list[str]]:
    source = list(rng.choice(SOURCE_SYMBOLS, size=int(rng.integers(min_len, max_len + 1)), p=_P))
    target = [map_symbol(c) for c in source]
    return source, (target + [target[-1]])[::-1]


def make_batch(rng: np.random.Generator, batch_size: int, **kwargs) -> dict[str, torch.Tensor]:
    """Right-padded `input_ids`/`attention_mask` and `labels` (-100 on padding), each ending in </s>."""
    pairs = [make_pair(rng, **kwargs) for _ in range(batch_size)]
    src = [[TOKEN_ID[c] for c in s] + [EOS] for s, _ in pairs]
    tgt = [[TOKEN_ID[c] for c in t] + [EOS] for _, t in pairs]
    s_len, t_len = max(map(len, src)), max(map(len, tgt))
    input_ids = torch.tensor([s + [PAD] * (s_len - len(s)) for s in src])
    labels = torch.tensor([t + [-100] * (t_len - len(t)) for t in tgt])
    return {"input_ids": input_ids, "attention_mask": (input_ids != PAD).long(), "labels": labels}

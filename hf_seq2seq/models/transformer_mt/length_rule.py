"""The output-length rule of the saved decoding, as in fairseq and Marian: a translation of a source of S tokens gets
at most `ceil(max_length_a * S + max_length_b)` new tokens.

This file ships inside every saved checkpoint (the generation file imports it) and imports nothing but the
standard library, so that an engine that runs an export without torch applies the very same rule
(`hf_seq2seq.engines.ctranslate2_engine`).
"""

import math


def length_rule_limit(generation_config, source_length: int) -> int | None:
    """The most new tokens for a batch whose longest (padded) source has `source_length` tokens under the
    config's length rule, as in fairseq/Marian: `ceil(max_length_a * S + max_length_b)`, within the config's
    `max_new_tokens`; None when the config has no rule (`max_length_a` or `max_length_b` unset)."""
    a = getattr(generation_config, "max_length_a", None)
    b = getattr(generation_config, "max_length_b", None)
    if a is None or b is None:
        return None
    limit = max(1, math.ceil(round(a * source_length + b, 6)))
    return min(limit, generation_config.max_new_tokens or limit)

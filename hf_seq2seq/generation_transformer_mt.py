"""Decoding for `TransformerMTForConditionalGeneration`: the output-length rule and the fast greedy search.

This file ships inside every saved checkpoint beside the modeling and configuration files (the modeling file
imports it), and imports only torch and transformers.
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

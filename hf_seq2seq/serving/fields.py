"""Checking the fields of a LibreTranslate request once read (`hf_seq2seq.serving.bodies`): the texts, the
language pair (`hf_seq2seq.serving.routing`), the format, the glossary, the alternatives, yes/no flags, the API key,
LibreTranslate's limits and this server's sizes, the decoding fields. Each check answers what it refuses with a
`ServeError`: LibreTranslate's status and text where it defines one (a missing field, an unknown language or
pair, the alternatives, char and batch limits), this server's own otherwise."""

from __future__ import annotations

import json
import math

from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.formats.glossary import Glossary, GlossaryError
from hf_seq2seq.serving.config import DECODING_FIELDS, ServeConfig
from hf_seq2seq.serving.errors import ServeError
from hf_seq2seq.serving.limits import ApiKeys, KeyLimits
from hf_seq2seq.serving.routing import Route, Routes, pair_unavailable

FORMATS = ("text", "html")
"""The ``format`` values ``/translate`` takes: plain text, or HTML (`hf_seq2seq.formats.markup`)."""
TRUE = (True, 1, "1", "true", "True", "yes", "on")
FALSE = (None, False, 0, "", "0", "false", "False", "no", "off")


def parse_texts(fields: dict) -> tuple[list[str], bool]:
    """The texts of ``q`` and whether it was a single string; LibreTranslate's 400 when it is missing or empty
    (``""``, ``[]``)."""
    q = fields.get("q")
    if q is None or q == "" or q == []:
        raise ServeError(400, "Invalid request: missing q parameter")
    if isinstance(q, str):
        return [q], True
    if isinstance(q, list) and all(isinstance(text, str) for text in q):
        return q, False
    raise ServeError(400, f"q must be a string or a list of strings, got {type(q).__name__}")


def parse_decoding(fields: dict, config: ServeConfig, max_positions: int | None = None) -> Decoding:
    """The server's decoding with the request's decoding fields over it (form fields arrive as text);
    ``max_new_tokens`` is capped by the model's `max_positions` too."""
    overrides = {}
    limits = {
        "num_beams": (int, 1, config.max_beams),
        "max_new_tokens": (int, 1, min(config.max_new_tokens, max_positions or config.max_new_tokens)),
        "no_repeat_ngram_size": (int, 0, 16),
        "length_penalty": (float, -10.0, 10.0),
    }
    for name, (kind, low, high) in limits.items():
        value = fields.get(name)
        if value is None or value == "":
            continue
        try:
            if isinstance(value, bool) or not isinstance(value, str | int | float):
                raise ValueError
            number = kind(value)
            if kind is int and isinstance(value, float) and value != number:
                raise ValueError
        except (ValueError, OverflowError):  # OverflowError: int() of an infinite number (1e999, -Infinity)
            raise ServeError(
                400, f"{name} must be {'an integer' if kind is int else 'a number'}, got {value!r}"
            ) from None
        if not (low <= number <= high) or (kind is float and not math.isfinite(number)):
            raise ServeError(400, f"{name} must be between {low} and {high}, got {number}")
        overrides[name] = number
    decoding = config.decoding
    if overrides:
        decoding = Decoding(
            **({k: getattr(decoding, k) for k in DECODING_FIELDS} | overrides), compile=decoding.compile
        )
    return decoding


def check_languages(fields: dict, routes: Routes) -> tuple[str | None, str, Route | None]:
    """400 unless the request's ``source`` (or "auto") and ``target`` are languages served here and the pair is
    translated (by a model, or through English: `Routes.find`), with LibreTranslate's messages (a missing field,
    a code it does not list, a pair it does not translate). The source (None for "auto": each text's is
    detected, `hf_seq2seq.serving.sources`), the target, and the route (None for "auto")."""
    for name in ("source", "target"):
        value = fields.get(name)
        if value is None or value == "":
            raise ServeError(400, f"Invalid request: missing {name} parameter")
        if not isinstance(value, str):
            example = routes.default_pair[0 if name == "source" else 1]
            raise ServeError(400, f"{name} must be a language code such as {example!r}, got {value!r}")
        if value not in routes.codes and not (name == "source" and value == "auto"):
            raise ServeError(400, f"{value} is not supported")
    source, target = fields["source"], fields["target"]
    if source == "auto":
        return None, target, None
    route = routes.find(source, target)
    if route is None:
        raise pair_unavailable(source, target)
    return source, target, route


def parse_format(fields: dict) -> str:
    """The request's ``format``: "text" (the default) or "html"."""
    text_format = fields.get("format") or "text"
    if text_format not in FORMATS:
        raise ServeError(400, f"{text_format} format is not supported")
    return text_format


def parse_glossary(fields: dict, config: ServeConfig) -> Glossary | None:
    """The request's ``glossary``: an object of source term -> target term (in a form, that object as JSON
    text); None when absent or empty."""
    value = fields.get("glossary")
    if value is None or value == "":
        return None
    if isinstance(value, str):
        try:
            value = json.loads(value)
        except (ValueError, RecursionError) as error:
            raise ServeError(
                400,
                f"glossary must be a JSON object of source term -> target term: {error}",
            ) from None
    try:
        glossary = Glossary(value)
    except GlossaryError as error:
        raise ServeError(400, f"invalid glossary: {error}") from None
    if len(glossary) > config.max_glossary_terms:
        raise ServeError(
            413, f"the glossary has {len(glossary)} terms; the limit is {config.max_glossary_terms}"
        )
    chars = sum(len(source) + len(target) for source, target in value.items())
    if chars > config.max_glossary_chars:
        raise ServeError(
            413, f"the glossary's terms have {chars} characters; the limit is {config.max_glossary_chars}"
        )
    return glossary or None


def parse_alternatives(fields: dict, config: ServeConfig) -> int:
    """The request's ``alternatives`` (LibreTranslate's: 0 by default, negative counts as 0, 400 past
    `ServeConfig.alternatives_limit`)."""
    value = fields.get("alternatives", 0)
    try:
        if isinstance(value, bool) or not isinstance(value, str | int | float):
            raise ValueError
        count = max(0, int(value))
    except (ValueError, OverflowError):
        raise ServeError(400, "Invalid request: alternatives parameter is not a number") from None
    if count > config.alternatives_limit:
        raise ServeError(
            400, f"Invalid request: alternatives parameter must be <= {config.alternatives_limit}"
        )
    return count


def parse_flag(fields: dict, name: str) -> bool:
    """A yes/no field (JSON true/false, or text "true"/"1"/"false"/"0" in a form); absent: no."""
    value = fields.get(name)
    if value in TRUE:
        return True
    if value in FALSE:
        return False
    raise ServeError(400, f"{name} must be true or false, got {value!r}")


def check_api_key(fields: dict, keys: ApiKeys) -> KeyLimits | None:
    """When keys are configured: LibreTranslate's 400 when ``api_key`` is missing, 403 when it is not one of
    them; the key's limits (None when no key is needed)."""
    if not keys.required:
        return None
    key = fields.get("api_key")
    if not key:
        raise ServeError(400, "Please contact the server operator to get an API key")
    limits = keys.lookup(key) if isinstance(key, str) else None
    if limits is None:
        raise ServeError(403, "Invalid API key")
    return limits


def check_text_limits(texts: list[str], config: ServeConfig, key: KeyLimits | None) -> None:
    """LibreTranslate's limits, with its status and messages (400): `ServeConfig.batch_limit` texts, and
    `ServeConfig.char_limit` characters per text (the key's own when it has one)."""
    if config.batch_limit is not None and len(texts) > config.batch_limit:
        raise ServeError(
            400, f"Invalid request: request ({len(texts)}) exceeds text limit ({config.batch_limit})"
        )
    char_limit = key.char_limit if key is not None and key.char_limit is not None else config.char_limit
    if char_limit is not None:
        for text in texts:
            if len(text) > char_limit:
                raise ServeError(
                    400, f"Invalid request: request ({len(text)}) exceeds text limit ({char_limit})"
                )


def check_texts_size(texts: list[str], config: ServeConfig) -> None:
    """413 past `max_texts` texts or `max_chars` characters in one request."""
    if len(texts) > config.max_texts:
        raise ServeError(413, f"too many texts: {len(texts)}; the limit is {config.max_texts} per request")
    chars = sum(map(len, texts))
    if chars > config.max_chars:
        raise ServeError(413, f"the request has {chars} characters; the limit is {config.max_chars}")


def check_sentence_count(sentences: list[str], config: ServeConfig) -> None:
    """413 for a request with more sentences than the queue holds."""
    if len(sentences) > config.max_queue_sentences:
        raise ServeError(
            413, f"the request has {len(sentences)} sentences; the limit is {config.max_queue_sentences}"
        )

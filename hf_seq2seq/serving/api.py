"""LibreTranslate's API, as the service reads and answers it: the request's fields (a JSON, url-encoded or
multipart body; for ``/translate_file``, a multipart body with its file), their checks (texts, language pair,
format, glossary, alternatives, API key and limits, decoding fields, sizes), the ``/languages`` list and
``/frontend/settings``, and error answers (``{"error": message}`` with a status). Where LibreTranslate defines
an error's status and text (the alternatives, char and batch limits, ``Slowdown``), they are its."""

from __future__ import annotations

import asyncio
import json
import math

from starlette.requests import ClientDisconnect, Request
from starlette.responses import JSONResponse

from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.formats.glossary import Glossary, GlossaryError
from hf_seq2seq.serving.config import DECODING_FIELDS, ServeConfig
from hf_seq2seq.serving.errors import ServeError
from hf_seq2seq.serving.limits import ApiKeys, KeyLimits
from hf_seq2seq.serving.worker import BatchWorker

LANGUAGE_NAMES = {
    "am": "Amharic", "ar": "Arabic", "bg": "Bulgarian", "da": "Danish", "de": "German", "el": "Greek",
    "en": "English", "es": "Spanish", "fa": "Persian", "fr": "French", "hi": "Hindi", "hy": "Armenian",
    "it": "Italian", "ja": "Japanese", "kk": "Kazakh", "mr": "Marathi", "my": "Burmese", "nl": "Dutch",
    "pl": "Polish", "pt": "Portuguese", "ru": "Russian", "sk": "Slovak", "ur": "Urdu", "zh": "Chinese",
}  # fmt: skip
FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
CLOSE = {"Connection": "close"}
"""The header of an answer sent before the body was read to its end: the server will not read the rest."""
FORMATS = ("text", "html")
"""The ``format`` values ``/translate`` takes: plain text, or HTML (`hf_seq2seq.formats.markup`)."""
FRONTEND_TIMEOUT_MS = 500
"""``/frontend/settings``'s ``frontendTimeout``: how long LibreTranslate's web page waits after a keystroke
before it translates (LibreTranslate's default)."""
TRUE = (True, 1, "1", "true", "True", "yes", "on")
FALSE = (None, False, 0, "", "0", "false", "False", "no", "off")


async def read_fields(request: Request, config: ServeConfig) -> dict:
    """The fields of a JSON, url-encoded or multipart body, and of the query string (a field the body does not
    have; LibreTranslate reads both); a repeated form or query field ``q`` gives a list. A form's texts have
    their line breaks as LF (LibreTranslate's CRLF -> LF, before the character limit counts them). Text that is
    not valid Unicode (a lone surrogate, which JSON can spell) is refused (400)."""
    query = query_fields(request)
    body = await read_body(request, config.max_body_bytes, config.body_timeout_s, empty_ok=bool(query))
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if not body.strip():
        fields = {}
    elif kind == "application/json" or (not kind and body.lstrip()[:1] in (b"{", b"[")):
        fields = json_fields(body)
    elif kind in FORM_TYPES:
        fields = with_lf(await form_fields(request, body))
    else:
        raise ServeError(
            415,
            f"unsupported content type {kind!r}: send application/json, application/x-www-form-urlencoded or "
            "multipart/form-data",
        )
    for key, value in with_lf(query).items():
        fields.setdefault(key, value)
    check_unicode(fields)
    return fields


def query_fields(request: Request) -> dict:
    """The query string's fields (a repeated ``q`` gives a list)."""
    params = request.query_params
    return {
        key: params.getlist(key) if key == "q" and len(params.getlist(key)) > 1 else params[key]
        for key in params
    }


def with_lf(fields: dict) -> dict:
    """`fields` with the line breaks of its texts (``q``) as LF, as LibreTranslate reads a form."""
    q = fields.get("q")
    if isinstance(q, str):
        fields["q"] = lf(q)
    elif isinstance(q, list):
        fields["q"] = [lf(text) if isinstance(text, str) else text for text in q]
    return fields


def lf(text: str) -> str:
    return text.replace("\r\n", "\n").replace("\r", "\n")


def check_unicode(value, name: str = "") -> None:
    """400 for a string anywhere in `value` (a field, a list, an object's keys and values) that is not valid
    Unicode: a lone surrogate, which UTF-8 cannot encode."""
    todo = [(name, value)]
    while todo:
        where, item = todo.pop()
        if isinstance(item, str):
            if item.isascii():
                continue
            try:
                item.encode("utf-8")
            except UnicodeEncodeError as error:
                raise ServeError(
                    400,
                    f"{where or 'the request'} is not valid Unicode: a lone surrogate "
                    f"(U+{ord(item[error.start]):04X}) at character {error.start}",
                ) from None
        elif isinstance(item, dict):
            todo += [(where or field_name(key), key) for key in item]
            todo += [(where or field_name(key), v) for key, v in item.items()]
        elif isinstance(item, list):
            todo += [(where, v) for v in item]


def field_name(key) -> str:
    """A field's name as an error message says it: as written when ASCII, else escaped."""
    return key if isinstance(key, str) and key.isascii() else ascii(key)


async def read_body(request: Request, max_bytes: int, timeout_s: float, empty_ok: bool = False) -> bytes:
    """The request's body, refused (413) past `max_bytes` before or while it is read, (408) when it has not
    arrived whole within `timeout_s`, and when empty (400, unless `empty_ok`)."""
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > max_bytes:
        raise ServeError(413, f"the request body has {length} bytes; the limit is {max_bytes}", CLOSE)
    body = bytearray()
    try:
        async with asyncio.timeout(timeout_s):
            async for chunk in request.stream():
                body += chunk
                if len(body) > max_bytes:
                    raise ServeError(413, f"the request body is over the limit of {max_bytes} bytes", CLOSE)
    except TimeoutError:
        raise body_timeout(timeout_s) from None
    body = bytes(body)
    if not body.strip() and not empty_ok:
        raise ServeError(400, 'empty body: send JSON such as {"q": "Hello!", "source": "en", "target": "fr"}')
    return body


def body_timeout(timeout_s: float) -> ServeError:
    return ServeError(408, f"the request body did not arrive within {timeout_s:g} s", CLOSE)


def json_fields(body: bytes) -> dict:
    """The object of a JSON body; LibreTranslate's 400 ``Invalid JSON format`` for anything else."""
    try:
        data = json.loads(body)
    except (ValueError, UnicodeDecodeError) as error:
        raise ServeError(400, f"Invalid JSON format: {error}") from None
    except RecursionError:
        raise ServeError(400, "Invalid JSON format: nested too deeply") from None
    if not isinstance(data, dict):
        raise ServeError(400, "Invalid JSON format")
    return data


async def form_fields(request: Request, body: bytes) -> dict:
    """The fields of a form `body` (already read from `request`); a repeated ``q`` gives a list."""

    async def replay() -> dict:
        return {"type": "http.request", "body": body, "more_body": False}

    try:
        form = await Request(request.scope, replay).form()
    except Exception as error:  # python-multipart's or starlette's parse errors
        raise ServeError(400, f"the form body cannot be parsed: {error}") from None
    fields = {}
    for key in form:
        values = form.getlist(key)
        if not all(isinstance(value, str) for value in values):
            raise ServeError(400, f"form field {key!r} must be text, not a file")
        fields[key] = values if key == "q" and len(values) > 1 else values[0]
    return fields


async def read_upload(request: Request, config: ServeConfig) -> tuple[dict, str, bytes]:
    """The text fields, the file's name and its content of a ``/translate_file`` body (multipart/form-data,
    the file in field ``file``). The body is counted while it is read (413 past `max_file_bytes` for the file
    plus `max_body_bytes` for the rest, before a byte is read when its Content-Length says so; the connection
    is then closed rather than the rest of the body read), then the file's own size is checked (413)."""
    kind = request.headers.get("content-type", "").split(";")[0].strip().lower()
    if kind != "multipart/form-data":
        raise ServeError(415, f"unsupported content type {kind!r}: send the file as multipart/form-data")
    limit = config.max_file_bytes + config.max_body_bytes
    length = request.headers.get("content-length")
    if length is not None and length.isdigit() and int(length) > limit:
        raise ServeError(
            413, f"the upload has {length} bytes; the limit is {config.max_file_bytes} bytes per file", CLOSE
        )
    received = 0

    async def receive() -> dict:
        nonlocal received
        message = await request.receive()
        received += len(message.get("body", b""))
        if received > limit:
            raise ServeError(
                413, f"the upload is over the limit of {config.max_file_bytes} bytes per file", CLOSE
            )
        return message

    try:
        async with asyncio.timeout(config.body_timeout_s):
            form = await Request(request.scope, receive).form(max_files=1)
    except TimeoutError:
        raise body_timeout(config.body_timeout_s) from None
    except (ServeError, ClientDisconnect):
        raise
    except Exception as error:  # python-multipart's or starlette's parse errors
        detail = getattr(error, "detail", error)
        raise ServeError(400, f"the form body cannot be parsed: {detail}") from None
    try:
        upload, fields = None, {}
        for key, value in form.multi_items():
            if key == "file" and not isinstance(value, str):
                upload = value
            elif isinstance(value, str):
                fields.setdefault(key, value)
            else:
                raise ServeError(
                    400, f"form field {key!r} must be text; the file to translate goes in field file"
                )
        if upload is None:
            problem = "field file must be a file" if "file" in fields else "missing field file"
            raise ServeError(400, f"{problem}: send the file to translate as multipart/form-data")
        if upload.size is not None and upload.size > config.max_file_bytes:
            raise ServeError(
                413, f"the file has {upload.size} bytes; the limit is {config.max_file_bytes} bytes per file"
            )
        for key, value in query_fields(request).items():
            fields.setdefault(key, value)
        check_unicode(fields)
        check_unicode(upload.filename or "", "the file's name")
        return fields, upload.filename or "", await upload.read()
    finally:
        await form.close()


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


def check_languages(fields: dict, worker: BatchWorker) -> bool:
    """400 unless the request's ``source`` (or "auto") and ``target`` are the model's pair, with LibreTranslate's
    messages (a missing field, a code it does not list, a pair it does not translate); whether the source is
    "auto" (its texts are then checked by language detection)."""
    codes = (worker.source_lang, worker.target_lang)
    for name in ("source", "target"):
        value = fields.get(name)
        if value is None or value == "":
            raise ServeError(400, f"Invalid request: missing {name} parameter")
        if not isinstance(value, str):
            raise ServeError(
                400, f"{name} must be a language code such as {worker.source_lang!r}, got {value!r}"
            )
        if value not in codes and not (name == "source" and value == "auto"):
            raise ServeError(400, f"{value} is not supported")
    source, target = fields["source"], fields["target"]
    auto = source == "auto"
    if auto:  # one source language, which detection checks the texts against
        source = worker.source_lang
    if (source, target) != codes:
        raise ServeError(
            400,
            f"{language_name(target)} ({target}) is not available as a target language from "
            f"{language_name(source)} ({source})",
        )
    return auto


def language_name(code: str) -> str:
    return LANGUAGE_NAMES.get(code, code)


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


def language_list(worker: BatchWorker) -> list[dict]:
    """``GET /languages``: the worker's source language with its one target, and the target with none."""
    codes = [(worker.source_lang, [worker.target_lang]), (worker.target_lang, [])]
    return [
        {"code": code, "name": LANGUAGE_NAMES.get(code, code), "targets": targets} for code, targets in codes
    ]


def frontend_settings(worker: BatchWorker, config: ServeConfig, keys: ApiKeys, formats: list[str]) -> dict:
    """``GET /frontend/settings``: what LibreTranslate's web page and browser extensions read before anything
    else, with LibreTranslate's fields. ``charLimit`` is the most characters one text may have here
    (`ServeConfig.char_limit`, within `ServeConfig.max_chars`); keys, when configured, are always required;
    ``supportedFilesFormat`` lists the `formats` the engine translates; the languages are the model's pair."""
    source, target = worker.source_lang, worker.target_lang
    required = keys.required
    return {
        "charLimit": min(config.char_limit or config.max_chars, config.max_chars),
        "frontendTimeout": FRONTEND_TIMEOUT_MS,
        "apiKeys": required,
        "keyRequired": required,
        "suggestions": False,
        "filesTranslation": True,
        "supportedFilesFormat": formats,
        "language": {
            "source": {"code": source, "name": LANGUAGE_NAMES.get(source, source)},
            "target": {"code": target, "name": LANGUAGE_NAMES.get(target, target)},
        },
    }


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)

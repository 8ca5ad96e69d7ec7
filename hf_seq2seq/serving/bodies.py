"""Reading a request of LibreTranslate's API: the fields of its body (JSON, url-encoded or multipart) and of its
query string, and for ``/translate_file`` its file, each read with its limits (size, time) and its text checked
as Unicode. What the fields must hold is `hf_seq2seq.serving.fields`'s to check."""

from __future__ import annotations

import asyncio
import json

from starlette.requests import ClientDisconnect, Request

from hf_seq2seq.serving.config import ServeConfig
from hf_seq2seq.serving.errors import ServeError

FORM_TYPES = ("application/x-www-form-urlencoded", "multipart/form-data")
CLOSE = {"Connection": "close"}
"""The header of an answer sent before the body was read to its end: the server will not read the rest."""


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

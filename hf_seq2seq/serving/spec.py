"""``GET /spec``: the service's API as an OpenAPI 3 document, LibreTranslate's endpoints and fields with this
server's own (``confidence``, ``glossary``, the decoding fields; ``/health``'s engine facts, ``/metrics``), and
the server's limits in their descriptions. Written out here rather than derived from the routes, so that a test
can hold the two against each other."""

from __future__ import annotations

from hf_seq2seq import __version__
from hf_seq2seq.formats.documents import DOCUMENT_FORMATS
from hf_seq2seq.serving.config import ServeConfig

ERROR = {"$ref": "#/components/schemas/Error"}
TEXTS = {"oneOf": [{"type": "string"}, {"type": "array", "items": {"type": "string"}}]}
DETECTED = {
    "type": "object",
    "properties": {"language": {"type": "string"}, "confidence": {"type": "number"}},
}


def _json(schema: dict, description: str = "") -> dict:
    return {"description": description or "OK", "content": {"application/json": {"schema": schema}}}


def _errors(*statuses: int) -> dict:
    reasons = {
        400: "bad request: a missing or malformed field, an unknown language, a file that cannot be read",
        403: "wrong API key, or suggestions disabled",
        404: "no such file (never made here, or expired)",
        408: "the body did not arrive in time",
        413: "over a size limit (request, texts, file, document, answer, glossary)",
        415: "a body that is not JSON or a form",
        429: "over the client's requests per minute (with Retry-After)",
        503: "the model is loading, the queue is full or the model stalled (with Retry-After)",
        504: "a model call past the batch timeout",
    }
    return {str(status): _json(ERROR, reasons[status]) for status in statuses}


def _body(properties: dict, required: list[str], multipart: bool = False) -> dict:
    schema = {"type": "object", "properties": properties, "required": required}
    kinds = ["multipart/form-data"] if multipart else [
        "application/json", "application/x-www-form-urlencoded", "multipart/form-data"
    ]  # fmt: skip
    return {"required": True, "content": {kind: {"schema": schema} for kind in kinds}}


def openapi_document(config: ServeConfig) -> dict:
    """The API of a server with `config` (see the module docstring)."""
    decoding = {
        "num_beams": {"type": "integer", "minimum": 1, "maximum": config.max_beams},
        "length_penalty": {"type": "number", "minimum": -10, "maximum": 10},
        "max_new_tokens": {"type": "integer", "minimum": 1, "maximum": config.max_new_tokens},
        "no_repeat_ngram_size": {"type": "integer", "minimum": 0, "maximum": 16},
        "glossary": {
            "type": "object",
            "additionalProperties": {"type": "string"},
            "description": "source term -> target term (in a form: this object as JSON text); this server's own",
        },
    }
    languages = {
        "source": {
            "type": "string",
            "description": "a language served (GET /languages), or auto: each text's own, detected",
        },
        "target": {"type": "string", "description": "one of the source's targets (GET /languages)"},
        "api_key": {"type": "string"},
    }
    translate = {
        "q": {**TEXTS, "description": f"the text(s); at most {config.max_chars} characters in all"},
        **languages,
        "format": {"type": "string", "enum": ["text", "html"], "default": "text"},
        "alternatives": {"type": "integer", "minimum": 0, "maximum": config.alternatives_limit},
        "confidence": {"type": "boolean", "description": "each translation's score; this server's own"},
        **decoding,
    }
    translated = {
        "type": "object",
        "properties": {
            "translatedText": TEXTS,
            "detectedLanguage": {"oneOf": [DETECTED, {"type": "array", "items": DETECTED}]},
            "alternatives": {"type": "array"},
            "confidence": {"oneOf": [{"type": "number", "nullable": True}, {"type": "array"}]},
            "pivotLanguage": {
                "oneOf": [{"type": "string"}, {"type": "array"}],
                "description": "where a text went through English (a pair without a model of its own); this "
                "server's own",
            },
        },
        "required": ["translatedText"],
    }
    file_fields = {"file": {"type": "string", "format": "binary"}, **languages, **decoding}
    paths = {
        "/": {"get": {"summary": "What this server is and its endpoints", "responses": {"200": _json({})}}},
        "/translate": {
            "post": {
                "summary": "Translate text or HTML",
                "requestBody": _body(translate, ["q", "source", "target"]),
                "responses": {"200": _json(translated), **_errors(400, 403, 408, 413, 415, 429, 503, 504)},
            }
        },
        "/translate_file": {
            "post": {
                "summary": f"Translate a file: {', '.join(sorted(DOCUMENT_FORMATS))}",
                "requestBody": _body(file_fields, ["file", "source", "target"], multipart=True),
                "responses": {
                    "200": _json(
                        {
                            "type": "object",
                            "properties": {
                                "translatedFileUrl": {"type": "string"},
                                "pivotLanguage": {"type": "string"},
                            },
                        }
                    ),
                    **_errors(400, 403, 408, 413, 415, 429, 503, 504),
                },
            }
        },
        "/download_file/{name}": {
            "get": {
                "summary": f"A translated file, for {config.file_expiry_minutes:g} minutes after it was made",
                "parameters": [
                    {"name": "name", "in": "path", "required": True, "schema": {"type": "string"}}
                ],
                "responses": {
                    "200": {"description": "the file", "content": {"application/octet-stream": {}}},
                    **_errors(400, 404),
                },
            }
        },
        "/detect": {
            "post": {
                "summary": "Detect the language of text",
                "requestBody": _body({"q": TEXTS, "api_key": {"type": "string"}}, ["q"]),
                "responses": {
                    "200": _json({"type": "array", "items": DETECTED}),
                    **_errors(400, 403, 408, 413, 415, 429),
                },
            }
        },
        "/languages": {
            "get": {
                "summary": "The languages this server translates, each with its targets",
                "responses": {"200": _json({"type": "array", "items": {"type": "object"}}), **_errors(503)},
            }
        },
        "/frontend/settings": {
            "get": {
                "summary": "What LibreTranslate's web page reads first",
                "responses": {"200": _json({"type": "object"}), **_errors(503)},
            }
        },
        "/suggest": {
            "post": {"summary": "Suggestions: disabled on this server", "responses": _errors(403)},
        },
        "/health": {
            "get": {
                "summary": 'Whether every model is loaded: {"status": "ok"} with each model\'s facts (engine, '
                "pair, bytes of its weights) and the package's version",
                "responses": {
                    "200": _json({"type": "object"}),
                    "503": _json({"type": "object"}, "not ready"),
                },
            }
        },
        "/metrics": {
            "get": {
                "summary": "Prometheus metrics",
                "responses": {"200": {"description": "text format", "content": {"text/plain": {}}}},
            }
        },
        "/spec": {"get": {"summary": "This document", "responses": {"200": _json({"type": "object"})}}},
    }
    return {
        "openapi": "3.0.3",
        "info": {
            "title": "hf-seq2seq translation API (LibreTranslate-compatible)",
            "version": __version__,
            "license": {"name": "Apache-2.0"},
        },
        "paths": paths,
        "components": {"schemas": {"Error": {"type": "object", "properties": {"error": {"type": "string"}}}}},
    }

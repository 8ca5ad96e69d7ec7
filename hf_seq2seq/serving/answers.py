"""Building the answers of LibreTranslate's API that are not translations: ``/languages`` (each language with
its targets), ``/frontend/settings`` (what LibreTranslate's web page reads first), and error answers
(``{"error": message}`` with a status)."""

from __future__ import annotations

from starlette.responses import JSONResponse

from hf_seq2seq.models.languages import language_name
from hf_seq2seq.serving.config import ServeConfig
from hf_seq2seq.serving.limits import ApiKeys
from hf_seq2seq.serving.routing import Routes

FRONTEND_TIMEOUT_MS = 500
"""``/frontend/settings``'s ``frontendTimeout``: how long LibreTranslate's web page waits after a keystroke
before it translates (LibreTranslate's default)."""


def language_list(routes: Routes) -> list[dict]:
    """``GET /languages``: LibreTranslate's list, every language served (a model's source or target) with the
    targets it translates into (a model's, or through English: `Routes.targets`)."""
    return [
        {"code": code, "name": language_name(code), "targets": routes.targets(code)} for code in routes.codes
    ]


def frontend_settings(routes: Routes, config: ServeConfig, keys: ApiKeys, formats: list[str]) -> dict:
    """``GET /frontend/settings``: what LibreTranslate's web page and browser extensions read before anything
    else, with LibreTranslate's fields. ``charLimit`` is the most characters one text may have here
    (`ServeConfig.char_limit`, within `ServeConfig.max_chars`); keys, when configured, are always required;
    ``supportedFilesFormat`` lists the `formats` every model translates; the languages the page starts with are
    the first model's pair."""
    source, target = routes.default_pair
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
            "source": {"code": source, "name": language_name(source)},
            "target": {"code": target, "name": language_name(target)},
        },
    }


def error_response(status: int, message: str, headers: dict[str, str] | None = None) -> JSONResponse:
    return JSONResponse({"error": message}, status_code=status, headers=headers)

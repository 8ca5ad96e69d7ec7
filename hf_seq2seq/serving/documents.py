"""What the service's ``/translate_file`` does: the upload read and checked (`hf_seq2seq.serving.bodies`,
`hf_seq2seq.serving.fields`), the file translated by `hf_seq2seq.formats.documents` on the pair's route (through
English for a pivoted pair: the file translated into English, then that file into the target) and stored for its
download (`hf_seq2seq.serving.files`)."""

from __future__ import annotations

import asyncio

from starlette.requests import Request

from hf_seq2seq.formats.documents import (
    DOCUMENT_FORMATS,
    DocumentError,
    MissingExtra,
    translate_document_bytes,
)
from hf_seq2seq.formats.markup import MarkupError
from hf_seq2seq.serving.bodies import read_upload
from hf_seq2seq.serving.errors import ServeError
from hf_seq2seq.serving.fields import check_languages, parse_decoding, parse_glossary
from hf_seq2seq.serving.files import extension_of
from hf_seq2seq.serving.formats import BatchedTranslator
from hf_seq2seq.serving.translation import Service, check_formats, run_formats, unless_disconnected


async def translate_file(service: Service, request: Request) -> dict:
    """The answer to a ``/translate_file`` request: the file translated and stored for its download, charged
    against the request limit by its size (LibreTranslate's: its bytes over the character limit, at least 1).
    The link is `ServeConfig.public_url`'s, or relative; ``pivotLanguage`` says when the file went through
    English."""
    config = service.config
    fields, filename, data = await read_upload(request, config)
    key = service.admit(request, fields)
    routes = service.ready_routes()
    source, target, route = check_languages(fields, routes)
    if route is None:  # "auto": the one language translated into the target, if there is one
        sources = routes.sources_to(target)
        if len(sources) != 1:
            raise ServeError(
                400,
                f"source auto takes a file's language as the one translated into {target}; here "
                f"{' and '.join(sources) or 'none'} are: give the file's source language",
            )
        source, route = sources[0], routes.find(sources[0], target)
    if not filename:
        raise ServeError(400, "Invalid request: empty file")
    extension = extension_of(filename)
    if extension not in DOCUMENT_FORMATS:
        raise ServeError(400, "Invalid request: file format not supported")
    char_limit = key.char_limit if key is not None and key.char_limit is not None else config.char_limit
    service.limit_rate(request, key, max(1, len(data) // char_limit) if char_limit else 1)
    positions = [m.worker.max_positions for m in route.models if m.worker.max_positions is not None]
    decoding = parse_decoding(fields, config, min(positions, default=None))
    glossary = parse_glossary(fields, config)
    if glossary and route.pivot:
        raise ServeError(
            400,
            f"a glossary needs a model of the pair: {source}-{target} is translated through {route.pivot}",
        )
    check_formats(route, "a glossary" if glossary else None)
    name = service.files.new_name(filename, target)
    warnings: list[str] = []

    async def translate_and_store(data: bytes) -> None:
        for model in route.models:

            def translate(translator: BatchedTranslator, data: bytes = data, model=model) -> bytes:
                try:
                    translated = translate_document_bytes(
                        translator, data, extension, batch_size=config.max_batch_sentences, decoding=decoding,
                        source_lang=model.worker.splitter_language, glossary=glossary, target_lang=model.target,
                        warnings=warnings,
                    )  # fmt: skip
                except (DocumentError, MarkupError, MissingExtra) as error:
                    raise ServeError(400, f"cannot translate {filename!r}: {error}") from None
                if len(translated) > config.max_answer_bytes:
                    raise ServeError(
                        413,
                        f"the translated file has {len(translated)} bytes; the limit is {config.max_answer_bytes}",
                    )
                return translated

            data = await run_formats(service, model, decoding, translate)
        await asyncio.to_thread(service.files.save, name, data)

    work = translate_and_store(data)
    await (unless_disconnected(request, work) if config.watch_disconnect else work)
    base = config.public_url.rstrip("/") if config.public_url else request.scope.get("root_path", "")
    answer = {"translatedFileUrl": f"{base}/download_file/{name}"}
    if route.pivot:
        answer["pivotLanguage"] = route.pivot
    if warnings:  # what came out worse than its source, and where (a PDF paragraph set smaller to fit)
        answer["warnings"] = warnings
    return answer

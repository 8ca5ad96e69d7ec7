"""What the service's ``/translate``, ``/translate_file`` and ``/detect`` do with a request once its fields are
read (`hf_seq2seq.serving.api`): `TranslateRequest`, the checked ``/translate`` request, and the paths a text
takes.

A plain request's texts are split into sentences (`hf_seq2seq.data.segmentation`, the package's splitter; long
requests off the event loop) before they are queued for the batcher. Markup, glossaries and files are
translated by `hf_seq2seq.formats` in threads of their own, whose sentences go through the same batcher
(`hf_seq2seq.serving.formats`). Each function takes the `Service` whose state (worker, batcher, threads,
files, limits) it uses.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from functools import partial
from typing import Protocol, TypeVar

from starlette.requests import Request

from hf_seq2seq.data.segmentation import Segmented
from hf_seq2seq.engines.base import Translator, UnsupportedFeature
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.scoring import joined
from hf_seq2seq.formats.aligned import translate_aligned
from hf_seq2seq.formats.documents import DOCUMENT_FORMATS, DocumentError, translate_document_bytes
from hf_seq2seq.formats.glossary import Glossary
from hf_seq2seq.formats.markup import MarkupError, translate_html
from hf_seq2seq.serving.api import (
    LANGUAGE_NAMES,
    check_languages,
    check_sentence_count,
    check_text_limits,
    check_texts_size,
    parse_alternatives,
    parse_decoding,
    parse_flag,
    parse_format,
    parse_glossary,
    parse_texts,
    read_fields,
    read_upload,
)
from hf_seq2seq.serving.batcher import Batcher
from hf_seq2seq.serving.config import ServeConfig
from hf_seq2seq.serving.detection import LanguageDetector, percent
from hf_seq2seq.serving.errors import ClientGone, ServeError
from hf_seq2seq.serving.files import FileStore, extension_of
from hf_seq2seq.serving.formats import BatchedTranslator
from hf_seq2seq.serving.limits import KeyLimits
from hf_seq2seq.serving.worker import BatchWorker, Hypotheses, Task, join_alternatives

T = TypeVar("T")

INLINE_SPLIT_CHARS = 300  # longer requests are split into sentences in a thread, off the event loop


class Service(Protocol):
    """What these functions use of `hf_seq2seq.serving.service.Service`."""

    config: ServeConfig
    worker: BatchWorker | None
    batcher: Batcher | None
    model_thread: ThreadPoolExecutor
    split_thread: ThreadPoolExecutor
    formats_threads: ThreadPoolExecutor
    files: FileStore | None
    detector: LanguageDetector

    def ready_worker(self) -> BatchWorker: ...

    def admit(self, request: Request, fields: dict) -> KeyLimits | None: ...

    def limit_rate(self, request: Request, key: KeyLimits | None, cost: int) -> None: ...


@dataclass(frozen=True)
class TranslateRequest:
    """A checked ``/translate`` request: its texts, whether ``q`` was one string, its decoding, its format
    ("text" or "html"), its glossary (None: none), how many alternatives it asks for, whether it asks for
    confidence, and whether its source is "auto"."""

    texts: list[str]
    single: bool
    decoding: Decoding
    text_format: str
    glossary: Glossary | None
    alternatives: int = 0
    confidence: bool = False
    auto: bool = False

    @property
    def plain(self) -> bool:
        """Plain text without a glossary: what the batcher translates alone."""
        return self.text_format == "text" and not self.glossary


def check_formats(worker: BatchWorker, aligning: str | None) -> None:
    """400 unless `worker` can translate markup, glossaries and files; `aligning` names what in the request
    needs word alignments (None: nothing)."""
    if worker.translator is None:
        raise ServeError(400, f"the {worker.name} engine of this server translates plain text only")
    if aligning and worker.alignment_error:
        raise ServeError(400, f"{aligning} needs word alignments: {worker.alignment_error}")


async def read_request(service: Service, request: Request) -> TranslateRequest:
    """A checked ``/translate`` request, LibreTranslate's checks first (the API key, after the address's
    failed keys; ``q``, ``source``, ``target``), then the request limit."""
    config = service.config
    fields = await read_fields(request, config)
    key = service.admit(request, fields)
    texts, single = parse_texts(fields)
    worker = service.ready_worker()
    auto = check_languages(fields, worker)
    service.limit_rate(request, key, max(1, len(texts)))
    text_format = parse_format(fields)
    decoding = parse_decoding(fields, config, worker.max_positions)
    glossary = parse_glossary(fields, config)
    alternatives = parse_alternatives(fields, config)
    confidence = parse_flag(fields, "confidence")
    check_text_limits(texts, config, key)
    check_texts_size(texts, config)
    job = TranslateRequest(texts, single, decoding, text_format, glossary, alternatives, confidence, auto)
    if not job.plain:
        check_formats(worker, "format 'html'" if text_format == "html" else "a glossary")
    if confidence:
        if text_format == "html":
            raise ServeError(400, "confidence is given for format 'text' only")
        if worker.score_error:
            raise ServeError(400, f"confidence needs the model's scores: {worker.score_error}")
    if alternatives and job.plain and worker.hypotheses_error:
        raise ServeError(400, f"alternatives: {worker.hypotheses_error}")
    return job


async def translate(service: Service, request: Request) -> dict:
    """The answer to a ``/translate`` request: the source checked by language detection when "auto"
    (`detect_source`); plain text through the batcher (`translate_text`, `translate_more` for alternatives
    or confidence); markup or a glossary by `hf_seq2seq.formats` (`translate_formats`), without
    alternatives (an empty list per text, as LibreTranslate answers for HTML)."""
    job = await read_request(service, request)
    detected = await detect_source(service, job.texts) if job.auto else None
    alternatives = confidence = None
    if not job.plain:
        out, confidence = await translate_formats(service, request, job)
        alternatives = [[] for _ in job.texts]
    elif job.alternatives or job.confidence:
        out, alternatives, confidence = await translate_more(service, request, job)
    else:
        out = await translate_text(service, request, job.texts, job.decoding)

    def each(values: list):
        return values[0] if job.single else values

    answer = {"translatedText": each(out)}
    if detected is not None:
        answer["detectedLanguage"] = each(detected)
    if job.alternatives:
        answer["alternatives"] = each(alternatives)
    if job.confidence:
        answer["confidence"] = each(confidence)
    return answer


async def detect_source(service: Service, texts: list[str]) -> list[dict]:
    """Each text's ``detectedLanguage`` for ``source: "auto"``: the model's source language with the
    detector's confidence in it; 400 naming the language of a text that is reliably in another one
    (`hf_seq2seq.serving.detection`). In a thread when long, or before the detector has loaded (about a
    second, on first use)."""
    worker, detector = service.worker, service.detector
    source = worker.source_lang

    def guess() -> list:
        return [detector.guess(text, source) for text in texts]

    if detector.loaded and sum(map(len, texts)) <= INLINE_SPLIT_CHARS:
        guesses = guess()
    else:
        guesses = await asyncio.get_running_loop().run_in_executor(service.split_thread, guess)
    for number, found in enumerate(guesses, 1):
        if found.other_language:
            which = "the text" if len(texts) == 1 else f"text {number} of q"
            raise ServeError(
                400,
                f"{which} is in {LANGUAGE_NAMES.get(found.language, found.language)} ({found.language}, "
                f"{percent(found.probability)}% confidence), not {LANGUAGE_NAMES.get(source, source)}: this "
                f"model translates {source} to {worker.target_lang} only",
            )
    return [{"language": source, "confidence": percent(g.expected_probability)} for g in guesses]


def split(worker: BatchWorker, texts: list[str]) -> tuple[list[Segmented], list[str], list[int]]:
    """Each text's sentences, all sentences in order, and their lengths in the model's tokens."""
    segmented = [worker.segment(text) for text in texts]
    sentences = [sentence for parts in segmented for sentence in parts.sentences]
    return segmented, sentences, [worker.length(sentence) for sentence in sentences]


async def through_batcher(
    service: Service, request: Request, texts: list[str], task: Task
) -> tuple[list[Segmented], list]:
    """Each text's sentences, and the batcher's results for all of them in order (`Task`)."""
    if sum(map(len, texts)) <= INLINE_SPLIT_CHARS:  # a sentence or two: quicker here than in a thread
        segmented, sentences, lengths = split(service.worker, texts)
    else:
        loop = asyncio.get_running_loop()
        segmented, sentences, lengths = await loop.run_in_executor(
            service.split_thread, split, service.worker, texts
        )
    check_sentence_count(sentences, service.config)
    work = service.batcher.translate(sentences, lengths, task)
    if service.config.watch_disconnect:
        work = unless_disconnected(request, work)
    return segmented, await work


async def translate_text(
    service: Service, request: Request, texts: list[str], decoding: Decoding
) -> list[str]:
    """Plain texts: split into sentences, translated by the batcher, joined back."""
    segmented, translations = await through_batcher(service, request, texts, Task(decoding))
    out, position = [], 0
    for parts in segmented:
        out.append(parts.join(translations[position : position + len(parts.sentences)]))
        position += len(parts.sentences)
    return out


async def translate_more(
    service: Service, request: Request, job: TranslateRequest
) -> tuple[list[str], list[list[str]], list[float | None]]:
    """Plain texts with alternatives or confidence: each sentence's hypotheses and score from the batcher
    (a `Task` of its own), joined back into each text's translation, alternatives (`join_alternatives`) and
    confidence (of its sentences together, `hf_seq2seq.engines.scoring.joined`)."""
    task = Task(job.decoding, job.alternatives + 1, job.confidence)
    segmented, results = await through_batcher(service, request, job.texts, task)
    out, alternatives, confidence, position = [], [], [], 0
    for parts in segmented:
        mine: list[Hypotheses] = results[position : position + len(parts.sentences)]
        position += len(parts.sentences)
        out.append(parts.join([h.translations[0] for h in mine]))
        alternatives.append(join_alternatives(parts, mine, job.alternatives))
        confidence.append(rounded(joined(h.score for h in mine).confidence) if job.confidence else None)
    return out, alternatives, confidence


async def translate_formats(
    service: Service, request: Request, job: TranslateRequest
) -> tuple[list[str], list[float | None] | None]:
    """HTML texts (`translate_html`), or plain texts with a glossary (`translate_aligned`, with their
    confidence when asked for)."""
    options = dict(
        batch_size=service.config.max_batch_sentences,
        decoding=job.decoding,
        source_lang=service.worker.splitter_language,
        glossary=job.glossary,
    )
    if job.text_format == "html":
        work = partial(translate_html, documents=job.texts, **options)
        return await run_formats(service, request, job.decoding, work), None
    work = partial(translate_aligned, texts=job.texts, alignments=False, scores=job.confidence, **options)
    results = await run_formats(service, request, job.decoding, work)
    confidence = [rounded(r.score.confidence) for r in results] if job.confidence else None
    return [result.target for result in results], confidence


async def run_formats(
    service: Service, request: Request, decoding: Decoding, work: Callable[[Translator], T]
) -> T:
    """`work(translator)` in a formats thread, with a `BatchedTranslator` of this request and `decoding`
    (`hf_seq2seq.serving.formats`): cancelled when the client disconnects (with `watch_disconnect`). An
    engine that cannot do what `work` needs, and a document or markup that cannot be read, answer 400."""
    loop = asyncio.get_running_loop()
    config = service.config
    translator = BatchedTranslator(
        service.worker, service.batcher, service.model_thread, loop, decoding,
        min(config.max_batch_sentences, config.max_queue_sentences),
    )  # fmt: skip
    future = loop.run_in_executor(service.formats_threads, work, translator)
    work = unless_disconnected(request, future) if config.watch_disconnect else future
    try:
        return await work
    except (UnsupportedFeature, DocumentError, MarkupError) as error:
        raise ServeError(400, str(error)) from None
    finally:  # a thread that has not finished (its wait cancelled) stops at its next step
        translator.cancel()


async def translate_file(service: Service, request: Request) -> dict:
    """The answer to a ``/translate_file`` request: the file translated by `hf_seq2seq.formats.documents`
    and stored for its download, charged against the request limit by its size (LibreTranslate's: its bytes
    over the character limit, at least 1). The link is `ServeConfig.public_url`'s, or relative."""
    config = service.config
    fields, filename, data = await read_upload(request, config)
    key = service.admit(request, fields)
    worker = service.ready_worker()
    check_languages(fields, worker)
    if not filename:
        raise ServeError(400, "Invalid request: empty file")
    extension = extension_of(filename)
    if extension not in DOCUMENT_FORMATS:
        raise ServeError(400, "Invalid request: file format not supported")
    char_limit = key.char_limit if key is not None and key.char_limit is not None else config.char_limit
    service.limit_rate(request, key, max(1, len(data) // char_limit) if char_limit else 1)
    decoding = parse_decoding(fields, config, worker.max_positions)
    glossary = parse_glossary(fields, config)
    check_formats(worker, "a glossary" if glossary else None)
    name = service.files.new_name(filename, worker.target_lang)

    def translate_and_save(translator: BatchedTranslator) -> None:
        try:
            translated = translate_document_bytes(
                translator, data, extension, batch_size=config.max_batch_sentences, decoding=decoding,
                source_lang=worker.splitter_language, glossary=glossary, target_lang=worker.target_lang,
            )  # fmt: skip
        except (DocumentError, MarkupError) as error:
            raise ServeError(400, f"cannot translate {filename!r}: {error}") from None
        if len(translated) > config.max_answer_bytes:
            raise ServeError(
                413,
                f"the translated file has {len(translated)} bytes; the limit is {config.max_answer_bytes}",
            )
        service.files.save(name, translated)

    await run_formats(service, request, decoding, translate_and_save)
    base = config.public_url.rstrip("/") if config.public_url else request.scope.get("root_path", "")
    return {"translatedFileUrl": f"{base}/download_file/{name}"}


async def detect(service: Service, request: Request) -> list[dict]:
    """The answer to a ``/detect`` request: the likeliest languages of ``q`` (a list of texts: of all of
    them together), LibreTranslate's way (`hf_seq2seq.serving.detection`)."""
    config = service.config
    fields = await read_fields(request, config)
    key = service.admit(request, fields)
    texts, _ = parse_texts(fields)
    service.limit_rate(request, key, 1)
    check_texts_size(texts, config)
    loop = asyncio.get_running_loop()
    return await loop.run_in_executor(service.split_thread, service.detector.top, "\n".join(texts))


async def unless_disconnected(request: Request, work):
    """`work`'s result, or `ClientGone` (with `work` cancelled) if the client disconnects first."""

    async def disconnected() -> None:
        while (await request.receive())["type"] != "http.disconnect":
            pass

    work = asyncio.ensure_future(work)
    watcher = asyncio.ensure_future(disconnected())
    try:
        await asyncio.wait({work, watcher}, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for task in (work, watcher):
            if not task.done():
                task.cancel()
    if work.done() and not work.cancelled():
        return work.result()
    raise ClientGone()


def rounded(confidence: float | None) -> float | None:
    """A confidence as answered: 4 decimals (None for a text with nothing to translate)."""
    return None if confidence is None else round(confidence, 4)

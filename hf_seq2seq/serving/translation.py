"""What the service's ``/translate`` does with a request once its fields are read (`hf_seq2seq.serving.bodies`,
`hf_seq2seq.serving.fields`): `TranslateRequest`, the checked request, its route to the models
(`hf_seq2seq.serving.routing`: one model, or two through English), and the paths a text takes.

A plain request's texts are split into sentences (`hf_seq2seq.data.segmentation`, the package's splitter; long
requests off the event loop) before they go to their model (`hf_seq2seq.serving.served.ServedModel`: its cache,
then its batcher). Markup and glossaries are translated by `hf_seq2seq.formats` in threads of their own, whose
sentences go through the same model (`hf_seq2seq.serving.formats`). A pivoted pair translates the text into
English, then that into the target: plain text, alternatives (the second model's, of the English text) and HTML
pivot; a glossary and confidence, which hold for one model's translation, are refused. With ``source: "auto"``
each text goes to the model of its own detected language (`hf_seq2seq.serving.sources`). Each function takes
the `Service` whose state (routes, threads, limits) it uses.
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
from hf_seq2seq.formats.documents import DocumentError
from hf_seq2seq.formats.glossary import Glossary
from hf_seq2seq.formats.markup import MarkupError, translate_html
from hf_seq2seq.serving.bodies import read_fields
from hf_seq2seq.serving.config import ServeConfig
from hf_seq2seq.serving.detection import LanguageDetector
from hf_seq2seq.serving.errors import ClientGone, ServeError
from hf_seq2seq.serving.fields import (
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
)
from hf_seq2seq.serving.files import FileStore
from hf_seq2seq.serving.formats import BatchedTranslator
from hf_seq2seq.serving.limits import KeyLimits
from hf_seq2seq.serving.routing import Route, Routes
from hf_seq2seq.serving.served import ServedModel
from hf_seq2seq.serving.sources import detect_sources, detected_language
from hf_seq2seq.serving.worker import Hypotheses, Task, join_alternatives

T = TypeVar("T")

INLINE_SPLIT_CHARS = 300  # longer requests are split into sentences in a thread, off the event loop


class Service(Protocol):
    """What these functions use of `hf_seq2seq.serving.service.Service`."""

    config: ServeConfig
    routes: Routes | None
    split_thread: ThreadPoolExecutor
    formats_threads: ThreadPoolExecutor
    files: FileStore | None
    detector: LanguageDetector

    def ready_routes(self) -> Routes: ...

    def admit(self, request: Request, fields: dict) -> KeyLimits | None: ...

    def limit_rate(self, request: Request, key: KeyLimits | None, cost: int) -> None: ...


@dataclass(frozen=True)
class TranslateRequest:
    """A checked ``/translate`` request: its texts, whether ``q`` was one string, its decoding, its format
    ("text" or "html"), its glossary (None: none), how many alternatives it asks for, whether it asks for
    confidence, its target, and its route (None for ``source: "auto"``: each text's is found by detection)."""

    texts: list[str]
    single: bool
    decoding: Decoding
    text_format: str
    glossary: Glossary | None
    target: str
    route: Route | None = None
    alternatives: int = 0
    confidence: bool = False

    @property
    def plain(self) -> bool:
        """Plain text without a glossary: what the batcher translates alone."""
        return self.text_format == "text" and not self.glossary


def check_formats(route: Route, aligning: str | None) -> None:
    """400 unless every model of `route` can translate markup, glossaries and files; `aligning` names what in
    the request needs word alignments (None: nothing)."""
    for model in route.models:
        worker = model.worker
        if worker.translator is None:
            raise ServeError(400, f"the {worker.name} engine of this server translates plain text only")
        if aligning and worker.alignment_error:
            raise ServeError(400, f"{aligning} needs word alignments: {worker.alignment_error}")


def check_route(job: TranslateRequest, route: Route) -> None:
    """400 for what `route`'s models cannot give `job`: markup or a glossary without word alignments,
    confidence without scores, alternatives without hypotheses; a glossary or confidence on a pivoted pair
    (each holds for one model's translation)."""
    if route.pivot and (job.glossary or job.confidence):
        what = "a glossary" if job.glossary else "confidence"
        raise ServeError(
            400,
            f"{what} needs a model of the pair: {route.source}-{route.target} is translated through "
            f"{route.pivot} here ({route.name})",
        )
    if not job.plain:
        check_formats(route, "format 'html'" if job.text_format == "html" else "a glossary")
    last = route.models[-1].worker
    if job.confidence and last.score_error:
        raise ServeError(400, f"confidence needs the model's scores: {last.score_error}")
    if job.alternatives and job.plain and last.hypotheses_error:
        raise ServeError(400, f"alternatives: {last.hypotheses_error}")


async def read_request(service: Service, request: Request) -> TranslateRequest:
    """A checked ``/translate`` request, LibreTranslate's checks first (the API key, after the address's
    failed keys; ``q``, ``source``, ``target``), then the request limit."""
    config = service.config
    fields = await read_fields(request, config)
    key = service.admit(request, fields)
    texts, single = parse_texts(fields)
    routes = service.ready_routes()
    _, target, route = check_languages(fields, routes)
    service.limit_rate(request, key, max(1, len(texts)))
    text_format = parse_format(fields)
    models = route.models if route is not None else routes.models
    positions = [m.worker.max_positions for m in models if m.worker.max_positions is not None]
    decoding = parse_decoding(fields, config, min(positions, default=None))
    glossary = parse_glossary(fields, config)
    alternatives = parse_alternatives(fields, config)
    confidence = parse_flag(fields, "confidence")
    check_text_limits(texts, config, key)
    check_texts_size(texts, config)
    job = TranslateRequest(
        texts, single, decoding, text_format, glossary, target, route, alternatives, confidence
    )
    if confidence and text_format == "html":
        raise ServeError(400, "confidence is given for format 'text' only")
    if route is not None:
        check_route(job, route)
    else:  # "auto": refused now, before any detection, when no route into the target could answer it
        refusals = []
        for candidate in (routes.find(code, target) for code in routes.sources_to(target)):
            try:
                check_route(job, candidate)
            except ServeError as refusal:
                refusals.append(refusal)
            else:
                break
        else:
            if refusals:
                raise refusals[0]
    return job


async def translate(service: Service, request: Request) -> dict:
    """The answer to a ``/translate`` request (`answer`), given up when the client disconnects (with
    `ServeConfig.watch_disconnect`: its queued sentences are dropped)."""
    job = await read_request(service, request)
    work = answer(service, job)
    return await (unless_disconnected(request, work) if service.config.watch_disconnect else work)


async def answer(service: Service, job: TranslateRequest) -> dict:
    """The answer to a checked request: with ``source: "auto"`` each text's language detected among the
    sources of the target (``detectedLanguage``), then the texts of each route translated (`translate_on`;
    routes at once, each on its own models), and where a text went through English, ``pivotLanguage``."""
    routes: list[Route] = [job.route] * len(job.texts)
    detected = None
    if job.route is None:
        guesses = await detect_sources(service, job.texts, job.target)
        routes = [service.routes.find(guess.expected, job.target) for guess in guesses]
        for route in dict.fromkeys(routes):
            check_route(job, route)
        detected = [detected_language(guess) for guess in guesses]
    groups: dict[Route, list[int]] = {}
    for number, route in enumerate(routes):
        groups.setdefault(route, []).append(number)
    work = [
        asyncio.ensure_future(translate_on(service, job, route, [job.texts[i] for i in numbers]))
        for route, numbers in groups.items()
    ]
    try:
        done = await asyncio.gather(*work)
    finally:  # one failing route ends the others
        for task in work:
            task.cancel()
    out, alternatives, confidence = [None] * len(job.texts), [None] * len(job.texts), [None] * len(job.texts)
    for numbers, results in zip(groups.values(), done, strict=True):
        for number, text, more, sure in zip(numbers, *results, strict=True):
            out[number], alternatives[number], confidence[number] = text, more, sure

    def each(values: list):
        return values[0] if job.single else values

    result = {"translatedText": each(out)}
    if detected is not None:
        result["detectedLanguage"] = each(detected)
    if job.alternatives:
        result["alternatives"] = each(alternatives)
    if job.confidence:
        result["confidence"] = each(confidence)
    if any(route.pivot for route in routes):
        result["pivotLanguage"] = each([route.pivot for route in routes])
    return result


async def translate_on(
    service: Service, job: TranslateRequest, route: Route, texts: list[str]
) -> tuple[list[str], list[list[str]], list[float | None]]:
    """`texts` by `route`: each text's translation, alternatives and confidence (an empty list and None where
    not asked for). Plain text through the batcher (`translate_text`, `translate_more` for alternatives or
    confidence), markup or a glossary by `hf_seq2seq.formats` (`translate_formats`), without alternatives (an
    empty list per text, as LibreTranslate answers for HTML); a pivoted route translates into English first."""
    nothing = [None] * len(texts)
    for model in route.models[:-1]:  # into the pivot language
        if job.plain:
            texts = await translate_text(service, model, texts, job.decoding)
        else:
            texts, _ = await translate_formats(service, model, job, texts)
    model = route.models[-1]
    if not job.plain:
        out, confidence = await translate_formats(service, model, job, texts)
        return out, [[] for _ in texts], confidence or nothing
    if job.alternatives or job.confidence:
        return await translate_more(service, model, job, texts)
    return await translate_text(service, model, texts, job.decoding), [[] for _ in texts], nothing


def split(model: ServedModel, texts: list[str]) -> tuple[list[Segmented], list[str], list[int]]:
    """Each text's sentences, all sentences in order, and their lengths in the model's tokens."""
    worker = model.worker
    segmented = [worker.segment(text) for text in texts]
    sentences = [sentence for parts in segmented for sentence in parts.sentences]
    return segmented, sentences, [worker.length(sentence) for sentence in sentences]


async def through_model(
    service: Service, model: ServedModel, texts: list[str], task: Task
) -> tuple[list[Segmented], list]:
    """Each text's sentences, and the model's results for all of them in order (`Task`)."""
    if sum(map(len, texts)) <= INLINE_SPLIT_CHARS:  # a sentence or two: quicker here than in a thread
        segmented, sentences, lengths = split(model, texts)
    else:
        loop = asyncio.get_running_loop()
        segmented, sentences, lengths = await loop.run_in_executor(service.split_thread, split, model, texts)
    check_sentence_count(sentences, service.config)
    return segmented, await model.translate(sentences, lengths, task)


async def translate_text(
    service: Service, model: ServedModel, texts: list[str], decoding: Decoding
) -> list[str]:
    """Plain texts: split into sentences, translated by the model, joined back."""
    segmented, translations = await through_model(service, model, texts, Task(decoding))
    out, position = [], 0
    for parts in segmented:
        out.append(parts.join(translations[position : position + len(parts.sentences)]))
        position += len(parts.sentences)
    return out


async def translate_more(
    service: Service, model: ServedModel, job: TranslateRequest, texts: list[str]
) -> tuple[list[str], list[list[str]], list[float | None]]:
    """Plain texts with alternatives or confidence: each sentence's hypotheses and score from the model (a
    `Task` of its own), joined back into each text's translation, alternatives (`join_alternatives`) and
    confidence (of its sentences together, `hf_seq2seq.engines.scoring.joined`)."""
    task = Task(job.decoding, job.alternatives + 1, job.confidence)
    segmented, results = await through_model(service, model, texts, task)
    out, alternatives, confidence, position = [], [], [], 0
    for parts in segmented:
        mine: list[Hypotheses] = results[position : position + len(parts.sentences)]
        position += len(parts.sentences)
        out.append(parts.join([h.translations[0] for h in mine]))
        alternatives.append(join_alternatives(parts, mine, job.alternatives))
        confidence.append(rounded(joined(h.score for h in mine).confidence) if job.confidence else None)
    return out, alternatives, confidence


async def translate_formats(
    service: Service, model: ServedModel, job: TranslateRequest, texts: list[str]
) -> tuple[list[str], list[float | None] | None]:
    """HTML texts (`translate_html`), or plain texts with a glossary (`translate_aligned`, with their
    confidence when asked for)."""
    options = dict(
        batch_size=service.config.max_batch_sentences,
        decoding=job.decoding,
        source_lang=model.worker.splitter_language,
        glossary=job.glossary,
    )
    if job.text_format == "html":
        work = partial(translate_html, documents=texts, **options)
        return await run_formats(service, model, job.decoding, work), None
    work = partial(translate_aligned, texts=texts, alignments=False, scores=job.confidence, **options)
    results = await run_formats(service, model, job.decoding, work)
    confidence = [rounded(r.score.confidence) for r in results] if job.confidence else None
    return [result.target for result in results], confidence


async def run_formats(
    service: Service, model: ServedModel, decoding: Decoding, work: Callable[[Translator], T]
) -> T:
    """`work(translator)` in a formats thread, with a `BatchedTranslator` of `model` for this request and
    `decoding` (`hf_seq2seq.serving.formats`); the thread stops at its next step once this is cancelled. An
    engine that cannot do what `work` needs, and a document or markup that cannot be read, answer 400."""
    loop = asyncio.get_running_loop()
    config = service.config
    slice_sentences = min(config.max_batch_sentences, config.max_queue_sentences)
    translator = BatchedTranslator(model, loop, decoding, slice_sentences)
    try:
        return await loop.run_in_executor(service.formats_threads, work, translator)
    except (UnsupportedFeature, DocumentError, MarkupError) as error:
        raise ServeError(400, str(error)) from None
    finally:  # a thread that has not finished (its wait cancelled) stops at its next step
        translator.cancel()


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

"""The languages of texts, as the service finds them (`hf_seq2seq.serving.detection`): each text's source for
``source: "auto"``, among the languages translated into the target asked for, and the answer to ``/detect``."""

from __future__ import annotations

import asyncio
from concurrent.futures import ThreadPoolExecutor
from typing import Protocol

from starlette.requests import Request

from hf_seq2seq.models.languages import language_name
from hf_seq2seq.serving.bodies import read_fields
from hf_seq2seq.serving.config import ServeConfig
from hf_seq2seq.serving.detection import Guess, LanguageDetector, percent
from hf_seq2seq.serving.errors import ServeError
from hf_seq2seq.serving.fields import check_texts_size, parse_texts
from hf_seq2seq.serving.limits import KeyLimits
from hf_seq2seq.serving.routing import Routes

INLINE_DETECT_CHARS = 300  # longer texts are judged in a thread, off the event loop


class Service(Protocol):
    """What these functions use of `hf_seq2seq.serving.service.Service`."""

    config: ServeConfig
    routes: Routes | None
    split_thread: ThreadPoolExecutor
    detector: LanguageDetector

    def admit(self, request: Request, fields: dict) -> KeyLimits | None: ...

    def limit_rate(self, request: Request, key: KeyLimits | None, cost: int) -> None: ...


async def detect_sources(service: Service, texts: list[str], target: str) -> list[Guess]:
    """Each text's language among the sources translated into `target` here (`Routes.sources_to`; the first
    model's source first: what a blank text or a tie is taken as), its `Guess.expected`; 400 naming the language
    of a text that is reliably in another one, and when nothing is translated into `target`. In a thread when
    long, or before the detector has loaded (about a second, on first use)."""
    routes, detector = service.routes, service.detector
    candidates = routes.sources_to(target)
    if not candidates:
        raise ServeError(400, f"nothing is translated into {language_name(target)} ({target}) here")
    first = routes.default_pair[0]
    candidates.sort(key=lambda code: code != first)

    def guess() -> list[Guess]:
        return [detector.guess(text, candidates) for text in texts]

    if detector.loaded and sum(map(len, texts)) <= INLINE_DETECT_CHARS:
        guesses = guess()
    else:
        guesses = await asyncio.get_running_loop().run_in_executor(service.split_thread, guess)
    for number, found in enumerate(guesses, 1):
        if found.other_language:
            which = "the text" if len(texts) == 1 else f"text {number} of q"
            raise ServeError(
                400,
                f"{which} is in {language_name(found.language)} ({found.language}, "
                f"{percent(found.probability)}% confidence), not "
                f"{' or '.join(map(language_name, candidates))}: this server translates "
                f"{' or '.join(candidates)} to {target} only",
            )
    return guesses


def detected_language(guess: Guess) -> dict:
    """A text's ``detectedLanguage``: the source it is translated from, with the detector's confidence in it."""
    return {"language": guess.expected, "confidence": percent(guess.expected_probability)}


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

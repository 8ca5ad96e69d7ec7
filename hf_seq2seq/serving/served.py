"""One model of the server, `ServedModel`: its worker (a language pair, an engine), its own model thread and
batcher, so that a slow pair holds no other, its metrics, and the translation cache every model shares
(`hf_seq2seq.serving.cache`), through which its sentences, alignments and scores go."""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor

from hf_seq2seq.serving.batcher import Batcher
from hf_seq2seq.serving.cache import MISSING, TranslationCache
from hf_seq2seq.serving.config import ServeConfig
from hf_seq2seq.serving.metrics import Metrics
from hf_seq2seq.serving.worker import BatchWorker, Task

logger = logging.getLogger(__name__)


class ServedModel:
    """A loaded model as the server runs it (see the module docstring): `worker` on `thread`, its pair
    (`source`, `target`) and `name` ("en-fr", its metrics' label)."""

    def __init__(
        self,
        worker: BatchWorker,
        thread: ThreadPoolExecutor,
        config: ServeConfig,
        metrics: Metrics,
        cache: TranslationCache | None = None,
    ):
        self.worker, self.thread, self.cache = worker, thread, cache
        self.source, self.target = worker.source_lang, worker.target_lang
        self.name = f"{self.source}-{self.target}"
        self.metrics = metrics.for_model(self.name)
        self.batcher = Batcher(self._run, config, self.metrics, thread)
        self.metrics.weights.set_function(lambda: self.weights_bytes or 0)

    def _run(self, sentences: list[str], task: Task) -> list:
        """The batcher's call (in the model thread): the worker's, counting the over-long translations its
        engine replaced (`hf_seq2seq.engines.base.translate_pieces`)."""
        translator = getattr(self.worker, "translator", None)
        if translator is None:
            return self.worker.run(sentences, task)
        before = translator.replaced_overlong.copy()
        results = self.worker.run(sentences, task)
        replaced = translator.replaced_overlong - before
        self.metrics.overlong_shortened.inc(replaced["hypothesis"])
        self.metrics.overlong_copied.inc(replaced["source"])
        return results

    @property
    def weights_bytes(self) -> int | None:
        """The bytes its weights take in memory, as its engine counts them (None: a worker without an engine's
        `Translator`)."""
        return getattr(self.worker.translator, "weights_bytes", None)

    @property
    def trouble(self) -> str | None:
        """Why the model cannot translate now (its batcher failed or stalled); None when it can."""
        return self.batcher.failed or self.batcher.stalled

    def describe(self) -> dict:
        """The model's facts for ``/health``: its engine's, its pair and the bytes of its weights."""
        return self.worker.describe() | {"weights_bytes": self.weights_bytes}

    async def translate(self, sentences: Sequence[str], lengths: Sequence[int], task: Task) -> list:
        """The results of `task` for `sentences`, in order (`Batcher.translate`): those the cache holds from it,
        the others from the batcher, each distinct sentence sent once."""
        if self.cache is None or not sentences:
            return await self.batcher.translate(sentences, lengths, task)
        found = [self.cache.get((self.name, task, sentence)) for sentence in sentences]
        todo: dict[str, int] = {}  # sentence -> its length, in order
        for sentence, length, result in zip(sentences, lengths, found, strict=True):
            if result is MISSING:
                todo.setdefault(sentence, length)
        self._count(len(sentences), len(todo))
        fresh = {}
        if todo:
            results = await self.batcher.translate(list(todo), list(todo.values()), task)
            fresh = dict(zip(todo, results, strict=True))
            for sentence, result in fresh.items():
                self.cache.put((self.name, task, sentence), result)
        return [fresh[s] if r is MISSING else r for s, r in zip(sentences, found, strict=True)]

    def pairs(
        self, kind: str, call: Callable, sources: Sequence[str], targets: Sequence[str], *options
    ) -> list:
        """`call(sources, targets, *options)`'s results (an alignment or a score per pair; `kind` names which),
        those the cache holds from it, the model called on the others, each distinct pair once. Runs `call` in
        the calling thread (the caller puts it on the model thread)."""
        pairs = list(zip(sources, targets, strict=True))
        keys = [(self.name, kind, *options, source, target) for source, target in pairs]
        found = [self.cache.get(key) for key in keys] if self.cache is not None else [MISSING] * len(keys)
        todo = list(
            dict.fromkeys(pair for pair, result in zip(pairs, found, strict=True) if result is MISSING)
        )
        if self.cache is not None:
            self._count(len(pairs), len(todo))
        fresh = {}
        if todo:
            fresh = dict(zip(todo, call([s for s, _ in todo], [t for _, t in todo], *options), strict=True))
            self.metrics.aligned.inc(len(todo))
            if self.cache is not None:
                for (source, target), result in fresh.items():
                    self.cache.put((self.name, kind, *options, source, target), result)
        return [
            fresh[pair] if result is MISSING else result for pair, result in zip(pairs, found, strict=True)
        ]

    def _count(self, asked: int, missed: int) -> None:
        self.metrics.cache_hits.inc(asked - missed)
        self.metrics.cache_misses.inc(missed)

    async def close(self) -> None:
        await self.batcher.close()
        self.thread.shutdown(wait=False, cancel_futures=True)


async def load_models(
    loaders: Sequence[Callable[[], BatchWorker]],
    config: ServeConfig,
    metrics: Metrics,
    cache: TranslationCache | None,
) -> list[ServedModel]:
    """Each loader's worker, loaded one after another, each in the thread its model will run on, as a
    `ServedModel` (its batcher not started)."""
    loop, models = asyncio.get_running_loop(), []
    for number, load in enumerate(loaders, 1):
        thread = ThreadPoolExecutor(1, thread_name_prefix=f"hf-seq2seq-model-{number}")
        try:
            worker = await loop.run_in_executor(thread, load)
        except BaseException:
            thread.shutdown(wait=False)
            for model in models:
                model.thread.shutdown(wait=False)
            raise
        models.append(ServedModel(worker, thread, config, metrics, cache))
        logger.info("model %d of %d loaded: %s", number, len(loaders), models[-1].describe())
    return models

"""The translation service (`hf-seq2seq serve`): a LibreTranslate-compatible HTTP API with dynamic batching.

- `config`: `ServeConfig` (limits, batching, decoding, pivot, cache) and the defaults the command line shares;
  torch-free.
- `errors`: the errors a request is answered with, or fails on.
- `worker`: `BatchWorker`, what the service translates with (a `TranslatorWorker` over any engine's
  `Translator`), and `worker_loader`, which loads a model folder into one.
- `metrics`: the Prometheus metrics (the models' own labelled by pair) and the middleware that counts HTTP
  answers.
- `batcher`: `Batcher`, which merges the sentences of concurrent requests into model batches.
- `cache`: `TranslationCache`, the sentences' translations, alignments and scores kept for the next time.
- `served`: `ServedModel`, one model of the server: its worker, thread, batcher and cache lookups.
- `routing`: the languages served and each pair's route (a model, or two through English).
- `formats`: `BatchedTranslator`, with which markup, glossaries and documents (`hf_seq2seq.formats`) go through
  a served model.
- `files`: `FileStore`, the translated files waiting for their download, and their names.
- `limits`: `ApiKeys` (the API keys and their own limits, from a file re-read when it changes) and
  `RateLimiter` (requests per minute per client).
- `detection`: `LanguageDetector`; `sources`: each text's source for ``source: "auto"``, and ``/detect``.
- `bodies`, `fields`, `answers`: LibreTranslate's requests read, their fields checked, and the answers that are
  not translations (``/languages``, ``/frontend/settings``, errors).
- `translation`: what ``/translate`` does with a request; `documents`: what ``/translate_file`` does.
- `service`: `Service`, the app's state and endpoints; `app`: `create_app`, the Starlette (ASGI) app that
  uvicorn runs.
- `spec`: `GET /spec`, the API as an OpenAPI 3 document, written out so that a test holds it against the
  routes.
- `ray_serve`: the same app as a Ray Serve deployment (needs the ray extra).
- `loadtest`: `hf-seq2seq serve-benchmark`'s load test on localhost.
"""

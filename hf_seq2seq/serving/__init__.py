"""The translation service (`hf-seq2seq serve`): a LibreTranslate-compatible HTTP API with dynamic batching.

- `config`: `ServeConfig` (limits, batching, decoding) and the defaults the command line shares; torch-free.
- `errors`: the errors a request is answered with, or fails on.
- `worker`: `BatchWorker`, what the service translates with (a `TranslatorWorker` over any engine's
  `Translator`), and `worker_loader`, which loads a model folder into one.
- `metrics`: the Prometheus metrics and the middleware that counts HTTP answers.
- `batcher`: `Batcher`, which merges the sentences of concurrent requests into model batches.
- `formats`: `BatchedTranslator`, with which markup, glossaries and documents (`hf_seq2seq.formats`) go through
  the batcher.
- `files`: `FileStore`, the translated files waiting for their download, and their names.
- `limits`: `ApiKeys` (the API keys and their own limits, from a file re-read when it changes) and
  `RateLimiter` (requests per minute per client).
- `detection`: `LanguageDetector`, for ``/detect`` and ``source: "auto"``.
- `api`: LibreTranslate's request fields, their checks, and error answers.
- `app`: `create_app`, the Starlette (ASGI) app that uvicorn runs.
- `spec`: `GET /spec`, the API as an OpenAPI 3 document, written out so that a test holds it against the
  routes.
- `ray_serve`: the same app as a Ray Serve deployment (needs the ray extra).
- `loadtest`: `hf-seq2seq serve-benchmark`'s load test on localhost.
"""

"""`hf-seq2seq serve --ray`: the same app and batcher as a Ray Serve deployment, one local replica."""

import signal

import pytest

pytest.importorskip("ray.serve")
pytest.importorskip("starlette")

from helpers import free_port  # noqa: E402
from serve_helpers import HOST, get, post_json, start_server, wait_ready  # noqa: E402

from hf_seq2seq.engines.base import translate  # noqa: E402
from hf_seq2seq.engines.decoding import Decoding  # noqa: E402
from hf_seq2seq.engines.factory import load_translator  # noqa: E402


def test_the_application_builder_refuses_unknown_arguments(trained):
    from hf_seq2seq.serving.ray_serve import build_app

    with pytest.raises(ValueError, match="unknown argument 'max_batch'"):
        build_app({"model": str(trained), "max_batch": 8})
    with pytest.raises(ValueError, match="needs model="):
        build_app({})
    with pytest.raises(ValueError, match="languages names 1 pairs for 2 models: one per model"):
        build_app({"model": f"{trained},{trained}", "languages": "en-fr"})
    build_app({"model": [str(trained), str(trained)], "languages": ["en-fr", "fr-en"], "pivot": "false"})


@pytest.mark.slow
def test_a_ray_serve_replica_answers_requests(trained, tmp_path):
    port = free_port()
    url = f"http://{HOST}:{port}"
    log = tmp_path / "ray.log"
    process = start_server(trained, port, "--ray", "--max-new-tokens", "8", log=log)
    try:
        wait_ready(url, process, timeout=300)
        translator = load_translator(trained)
        texts = ["the cat sat on the mat .", "good morning ! how are you ?"]
        expected = translate(translator, texts, 1, Decoding(max_new_tokens=8), split_sentences=True)
        assert post_json(f"{url}/translate", {"q": texts[0], "source": "en", "target": "fr"})[:2] == (
            200,
            {"translatedText": expected[0]},
        )
        assert post_json(f"{url}/translate", {"source": "en", "target": "fr", "q": texts})[1] == {
            "translatedText": expected
        }
        status, body, _ = post_json(f"{url}/translate", {"source": "en", "q": "the cat .", "target": "de"})
        assert status == 400 and body["error"] == "de is not supported"
        assert get(f"{url}/health")[1]["status"] == "ok"
    finally:
        process.send_signal(signal.SIGTERM)
        returncode = process.wait(timeout=120)
    assert returncode == 0, log.read_text()[-3000:]

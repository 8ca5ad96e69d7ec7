"""`hf-seq2seq web`: the export check, the read-only file server (routes, MIME types, no escape from the export
folder), and the page itself in a headless Chromium translating with transformers.js as the package's Python
engines do. The browser test needs Chromium, its driver and Selenium (the `demo` extra), and transformers.js
installed beforehand (`hf-seq2seq web --install-js`, with npm): nothing is downloaded at test time. `.ci/run`
installs all of them; without one the test skips, except in CI (`CI=true`), where it fails."""

import dataclasses
import http.client
import importlib.util
import json
import os
import shutil

import pytest
import torch

from hf_seq2seq import TransformerMTConfig, TransformerMTForConditionalGeneration
from hf_seq2seq.apps.webpage import (
    PageServer,
    js_cache_dir,
    js_installed,
    make_server,
    page_settings,
    start_in_thread,
)
from hf_seq2seq.cli import main as cli
from hf_seq2seq.data.tokenization import train_tokenizer
from hf_seq2seq.export.folder import NotAnOnnxExport, check_onnx_export
from hf_seq2seq.export.metadata import ExportMetadata
from hf_seq2seq.models.folder import register_pipeline, save_model_folder
from hf_seq2seq.models.languages import UnknownLanguagePair
from hf_seq2seq.training.saved_decoding import greedy_generation_config

CHROMIUM = shutil.which("chromium") or shutil.which("chromium-browser")
CHROMEDRIVER = shutil.which("chromedriver")
IN_CI = os.environ.get("CI", "").lower() in ("1", "true", "yes")  # `.ci/run` sets CI=true
MARIAN_CONFIG = {
    "model_type": "marian", "architectures": ["MarianMTModel"], "is_encoder_decoder": True, "d_model": 16,
    "encoder_layers": 1, "decoder_layers": 1, "encoder_attention_heads": 2, "decoder_attention_heads": 2,
    "vocab_size": 50, "pad_token_id": 0, "eos_token_id": 1, "decoder_start_token_id": 0,
    "max_position_embeddings": 32,
}  # fmt: skip
# format, source model type, longest source, parameters, quantization, format version (the ONNX opset), the pair
ONNX_METADATA = ExportMetadata(
    "onnx", "transformer_mt", 24, 2_000, "float32", "18", source_language="en", target_language="fr"
)
UNLABELLED = dataclasses.replace(ONNX_METADATA, source_language=None, target_language=None)  # 0.1.0's exports


def fake_export(folder, quantized_only=False, metadata=ONNX_METADATA):
    """An export folder's layout with placeholder graphs (for the server and the checks, not for a model)."""
    (folder / "onnx").mkdir(parents=True)
    (folder / "config.json").write_text(json.dumps(MARIAN_CONFIG))
    for name in ("tokenizer.json", "tokenizer_config.json", "generation_config.json"):
        (folder / name).write_text("{}")
    metadata.write(folder)
    suffix = "_quantized" if quantized_only else ""
    for graph in ("encoder_model", "decoder_model_merged"):
        (folder / "onnx" / f"{graph}{suffix}.onnx").write_bytes(b"\x08\x01graph")
    return folder


def test_the_export_check_names_what_is_wrong(tmp_path):
    """One check of an export folder (`hf_seq2seq.export.folder`), for the ONNX Runtime engine and the page."""
    export = fake_export(tmp_path / "export")
    settings = page_settings(export)
    assert (settings.dtype, settings.max_source_length, settings.model) == (
        "fp32",
        24,
        "en-fr",
    )  # the pair it records
    with pytest.raises(NotAnOnnxExport, match="no q8 graphs"):
        page_settings(export, "q8")
    with pytest.raises(NotAnOnnxExport, match="no int8 graphs .*export with --quantization int8"):
        check_onnx_export(export).graphs("int8")
    assert page_settings(fake_export(tmp_path / "q8", quantized_only=True)).dtype == "q8"

    hub_repository = (
        tmp_path / "repository"
    )  # `push --with-onnx`: the PyTorch model on top, the export in onnx/
    fake_export(hub_repository)
    (hub_repository / "config.json").write_text('{"model_type": "transformer_mt"}')
    (hub_repository / "hf_seq2seq_export.json").unlink()
    (hub_repository / "onnx" / "config.json").write_text(json.dumps(MARIAN_CONFIG))
    ONNX_METADATA.write(hub_repository / "onnx")
    found = check_onnx_export(hub_repository)
    assert (found.place, found.precisions, found.config["model_type"]) == (
        hub_repository / "onnx",
        ("fp32",),
        "marian",
    )
    with pytest.raises(NotAnOnnxExport, match="a Hub repository's layout"):
        page_settings(hub_repository)

    model_folder = tmp_path / "model"
    model_folder.mkdir()
    (model_folder / "config.json").write_text('{"model_type": "transformer_mt"}')
    with pytest.raises(
        NotAnOnnxExport, match="is a saved model folder, not an ONNX export.*export onnx .*model .*model-onnx"
    ):
        check_onnx_export(model_folder)
    with pytest.raises(NotAnOnnxExport, match="is not a folder"):
        check_onnx_export(tmp_path / "nowhere")
    (export / "tokenizer.json").unlink()
    with pytest.raises(NotAnOnnxExport, match="lacks tokenizer.json"):
        page_settings(export)


def test_the_command_refuses_a_folder_that_is_not_an_export(tmp_path):
    (tmp_path / "config.json").write_text('{"model_type": "transformer_mt"}')
    with pytest.raises(
        SystemExit, match="^hf-seq2seq web: .* not an ONNX export"
    ):  # before installing or serving
        cli(["web", str(tmp_path), "--port", "0"])


@pytest.fixture
def fake_server(tmp_path):
    export = fake_export(tmp_path / "export")
    vendor_dir = tmp_path / "vendor"
    vendor_dir.mkdir()
    vendor = {}
    for name, body in [
        ("transformers.js", b"export const env = {};"),
        ("ort/x.asyncify.mjs", b"//"),
        ("ort/x.wasm", b"\0asm"),
    ]:
        path = vendor_dir / name.replace("/", "_")
        path.write_bytes(body)
        vendor[name] = path
    (tmp_path / "secret.txt").write_text("not served")
    back = fake_export(tmp_path / "back", metadata=UNLABELLED)  # served: its pair is given
    exports = [(export, page_settings(export)), (back, page_settings(back, languages=("fr", "en")))]
    server = PageServer(("127.0.0.1", 0), exports, vendor)
    start_in_thread(server)
    yield server
    server.shutdown()
    server.server_close()


def get(server, path, method="GET"):
    connection = http.client.HTTPConnection(*server.server_address[:2], timeout=10)
    connection.request(method, path)
    response = connection.getresponse()
    body = response.read()
    connection.close()
    return response.status, response.getheader("Content-Type"), body


def test_the_server_hands_out_the_page_the_javascript_and_the_export_only(fake_server):
    status, kind, body = get(fake_server, "/")
    assert status == 200 and kind.startswith("text/html") and b"app.js" in body
    assert get(fake_server, "/app.js")[1].startswith("text/javascript")
    assert get(fake_server, "/vendor/transformers.js")[1].startswith("text/javascript")
    assert get(fake_server, "/vendor/ort/x.asyncify.mjs")[1].startswith("text/javascript")
    assert get(fake_server, "/vendor/ort/x.wasm")[:2] == (200, "application/wasm")
    for pair in ("en-fr", "fr-en"):  # each export under its pair
        assert get(fake_server, f"/models/{pair}/onnx/encoder_model.onnx") == (
            200,
            "application/octet-stream",
            b"\x08\x01graph",
        )
    status, kind, body = get(fake_server, "/models/en-fr/config.json")
    assert kind.startswith("application/json") and json.loads(body)["model_type"] == "marian"
    settings = json.loads(get(fake_server, "/settings.json")[2])
    english = {
        "model": "en-fr",
        "source": "en",
        "target": "fr",
        "sourceName": "English",
        "targetName": "French",
    }
    assert settings == {
        "localModelPath": "/models/",
        "models": [
            english | {"dtype": "fp32", "maxSourceLength": 24},
            {
                "model": "fr-en", "source": "fr", "target": "en", "sourceName": "French", "targetName": "English",
                "dtype": "fp32", "maxSourceLength": 24,
            },
        ],
    }  # fmt: skip
    assert get(fake_server, "/settings.json", "HEAD")[2] == b""
    for path in (
        "/models/en-fr/../secret.txt", "/models/en-fr/%2e%2e/secret.txt", "/models/en-fr/", "/models/en-fr/onnx",
        "/vendor/other.js", "/package.json", "/secret.txt", "/models/en-fr/missing.json", "/models/export/config.json",
        "/models/de-fr/config.json", "/models/en-fr/../back/config.json",
    ):  # fmt: skip
        assert get(fake_server, path)[0] == 404, path
    assert get(fake_server, "/models/en-fr/config.json", "POST")[0] == 405


def test_each_export_is_served_as_the_pair_it_records_and_one_that_records_none_only_when_given(tmp_path):
    """An fr->en export is labelled fr->en (never en-fr); an export of 0.1.0, which records no pair, is refused
    with the flag to give (the command ends before installing or serving), and served as the pair given."""
    fr_en = fake_export(
        tmp_path / "fr-en",
        metadata=dataclasses.replace(ONNX_METADATA, source_language="fr", target_language="en"),
    )
    settings = page_settings(fr_en).to_dict()
    assert (settings["model"], settings["sourceName"], settings["targetName"]) == (
        "fr-en",
        "French",
        "English",
    )
    old = fake_export(tmp_path / "old", metadata=UNLABELLED)
    with pytest.raises(UnknownLanguagePair, match="records no language pair.*--languages SRC-TGT"):
        page_settings(old)
    with pytest.raises(SystemExit, match=r"^hf-seq2seq web: .*old records no language pair"):
        cli(["web", str(old), "--port", "0"])
    assert page_settings(old, languages=("de", "en")).model == "de-en"


def test_two_exports_of_one_pair_are_refused(tmp_path):
    export = fake_export(tmp_path / "export")
    with pytest.raises(ValueError, match="are both en-fr"):
        PageServer(("127.0.0.1", 0), [(export, page_settings(export)), (export, page_settings(export))], {})
    with pytest.raises(ValueError, match="1 language pairs for 2 exports"):
        make_server([export, export], port=0, install=False, languages=[("en", "fr")])


# ------------------------------------------------------------------------------------------------- the page

SENTENCES = ["the boy sees a red cat .", "her mother likes a small book ."]


def train_tiny_model(folder):
    """A model trained for a few seconds on synthetic pairs (the grammar of helpers.py), so that it writes French-like
    output rather than nothing, saved as training saves it."""
    from helpers import synthetic_pairs

    pairs = synthetic_pairs()[::7]
    tokenizer = train_tokenizer(
        [text for pair in pairs for text in pair], vocab_size=200, model_max_length=24
    )
    config = TransformerMTConfig(
        vocab_size=len(tokenizer), d_model=32, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=64, decoder_ffn_dim=64, max_position_embeddings=24,
        dropout=0.0, pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    torch.manual_seed(0)
    model = TransformerMTForConditionalGeneration(config)
    optimizer = torch.optim.AdamW(model.parameters(), lr=5e-3)
    generator = torch.Generator().manual_seed(0)
    model.train()
    for _ in range(100):
        batch = [pairs[i] for i in torch.randint(len(pairs), (32,), generator=generator).tolist()]
        inputs = tokenizer(
            [en for en, _ in batch], text_target=[fr for _, fr in batch], padding=True, return_tensors="pt"
        )
        inputs["labels"][inputs["labels"] == tokenizer.pad_token_id] = -100
        loss = model(**inputs).loss
        loss.backward()
        optimizer.step()
        optimizer.zero_grad()
    model.eval()
    model.generation_config = greedy_generation_config(model, (1.5, 4))
    register_pipeline(model, "en", "fr")
    return save_model_folder(model, tokenizer, folder)


def importable(*modules: str) -> bool:
    return all(importlib.util.find_spec(module) for module in modules)


def page_tools_missing() -> list[str]:
    """What the browser test lacks, each with how to get it (`.ci/run` gets them all)."""
    tools = [
        ("Chromium and its driver: apt-get install chromium chromium-driver", CHROMIUM and CHROMEDRIVER),
        ("Selenium: pip install -e '.[demo]'", importable("selenium")),
        ("the ONNX export: pip install -e '.[onnx]'", importable("onnx", "onnxscript", "onnxruntime")),
        (f"transformers.js in {js_cache_dir()}: hf-seq2seq web --install-js (npm)", js_installed()),
    ]
    return [what for what, there in tools if not there]


@pytest.fixture(scope="module")
def page_tools():
    """Skips the browser test when a tool is missing, but fails it in CI, where `.ci/run` installs every tool:
    there a skip would hide that the only end-to-end check of the page did not run."""
    missing = page_tools_missing()
    if missing:
        (pytest.fail if IN_CI else pytest.skip)("needs " + "; ".join(missing))


@pytest.fixture(scope="module")
def exported(page_tools, tmp_path_factory):
    """A tiny trained model folder and its ONNX export (fp32 and int8), made once `page_tools` found the browser
    test's tools (so that a missing one is reported before the training and the export)."""
    from hf_seq2seq.export import onnx as onnx_export

    folder = tmp_path_factory.mktemp("web")
    model_dir = train_tiny_model(folder / "model")
    return model_dir, onnx_export.export_onnx(model_dir, folder / "export", quantize="int8")


def translate_in_browser(
    export_dir, lines: list[str], dtype: str | None = None, other=None, direction: str | None = None
) -> list[str]:
    """Serve `export_dir` (and `other`, an export of French -> English, when given), open the page in a headless
    Chromium, pick `direction` when given, translate `lines` (one per line of the text box) and return the lines
    of the output; fails on an error shown by the page or logged in the console."""
    from selenium import webdriver
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    if other is None:
        server = make_server(export_dir, port=0, dtype=dtype, install=False)
    else:
        server = make_server(
            [export_dir, other], port=0, dtype=dtype, install=False, languages=[("en", "fr"), ("fr", "en")]
        )
    start_in_thread(server)
    options = webdriver.ChromeOptions()
    options.binary_location = CHROMIUM
    for flag in ("--headless=new", "--no-sandbox", "--disable-dev-shm-usage", "--window-size=1280,900"):
        options.add_argument(flag)
    browser = webdriver.Chrome(options=options, service=webdriver.ChromeService(executable_path=CHROMEDRIVER))
    wait = WebDriverWait(browser, 90)

    def state() -> str:
        return browser.find_element(By.TAG_NAME, "body").get_attribute("data-state") or ""

    def status() -> str:
        return browser.find_element(By.ID, "status").text

    try:
        browser.get(f"http://127.0.0.1:{server.server_address[1]}/")
        wait.until(lambda b: state() in ("ready", "error"))
        assert state() == "ready", status()
        assert f"{dtype or 'fp32'} ONNX export" in browser.find_element(By.ID, "details").text
        assert browser.find_element(By.ID, "direction-row").is_displayed() == (other is not None)
        if direction is not None:
            Select(browser.find_element(By.ID, "direction")).select_by_visible_text(direction)
            source_name = direction.split(" → ")[0]
            wait.until(
                lambda b: b.find_element(By.ID, "source-label").text == source_name and state() == "ready"
            )
        browser.find_element(By.ID, "source").send_keys("\n".join(lines))
        browser.find_element(By.ID, "translate").click()
        wait.until(lambda b: state() == "error" or "Translated in" in status())
        assert state() == "ready", status()
        severe = [entry["message"] for entry in browser.get_log("browser") if entry["level"] == "SEVERE"]
        assert not severe, severe  # no failed request (a CDN, the Hub, a missing file) and no error
        return browser.find_element(By.ID, "output").text.split("\n")
    finally:
        browser.quit()
        server.shutdown()
        server.server_close()


# sentences of the training grammar, three of them in one line longer than the model's 24 source positions
# (truncated, </s> kept), a word (the length rule stops its translation early), a repetition
LINES = [
    "the boy sees a red cat .",
    "her mother likes a small book .",
    "the king draws a green boat . the doctor finds a cheap pen . my friend wants a big ball .",
    "cat",
    "the the the the",
]


def onnx_runtime_translations(export_dir, lines: list[str], precision: str = "fp32") -> list[str]:
    """The package's Python ONNX Runtime engine on the same export, one line at a time."""
    from hf_seq2seq.engines.onnxruntime_engine import OnnxTranslator

    engine = OnnxTranslator(export_dir, precision)
    return [engine.translate_sentences([line])[0] for line in lines]


@pytest.mark.slow  # an export (the other is tests/test_never_empty.py's too) and two browser sessions
def test_the_page_never_answers_a_word_with_nothing(page_tools, end_first_export, tmp_path):
    """Models whose first choice is always the end token (`helpers.save_end_first_model`): the page forbids it
    before a first token, as the Python engines do (tests/test_never_empty.py), and gives the line back where
    that token decodes to nothing (padding)."""
    from helpers import random_model_tokenizer, save_end_first_model

    from hf_seq2seq.export import onnx as onnx_export

    padding_first = save_end_first_model(random_model_tokenizer(), tmp_path / "model", None)
    lines = ["cat", "where is the dog ?"]
    for export, expected in (
        (end_first_export[1], ["chat", "chat"]),  # its second choice is the word "chat"
        (onnx_export.export_onnx(padding_first, tmp_path / "onnx"), lines),
    ):
        assert onnx_runtime_translations(export, lines) == expected
        assert translate_in_browser(export, lines) == expected


@pytest.mark.slow  # training, the export (the bulk) and two browser sessions
def test_the_page_translates_in_the_browser_as_the_python_engines_do(exported):
    from hf_seq2seq.engines.factory import load_translator

    model_dir, export_dir = exported
    engine = load_translator(model_dir)
    # one line at a time, as the page translates them (in a batch, the length rule follows the longest source)
    expected = [engine.translate_sentences([line])[0] for line in LINES]
    assert expected[0] == "le garçon voit un chat rouge ."  # it learnt something
    assert onnx_runtime_translations(export_dir, LINES) == expected
    assert translate_in_browser(export_dir, LINES) == expected

    # the int8 graphs: the Python engine's translations of the same graphs (on sentences of the training
    # grammar, whose best tokens win by a wide margin: int8 kernels of wasm and of a native CPU may round apart)
    quantized = onnx_runtime_translations(export_dir, LINES[:2], "int8")
    assert translate_in_browser(export_dir, LINES[:2], dtype="q8") == quantized

    # a second direction on the page: the user picks it, and the page loads its export and translates with it.
    # No second model is exported for it (the export is the slow part): a copy of the export whose saved decoding
    # writes one token, listed as French -> English, so that its translations differ from the first's
    other = shutil.copytree(export_dir, export_dir.parent / "other")
    saved = json.loads((other / "generation_config.json").read_text())
    (other / "generation_config.json").write_text(json.dumps(saved | {"max_new_tokens": 1}))
    expected = onnx_runtime_translations(other, LINES[:2])
    assert expected != onnx_runtime_translations(export_dir, LINES[:2])
    assert translate_in_browser(export_dir, LINES[:2], other=other, direction="French → English") == expected

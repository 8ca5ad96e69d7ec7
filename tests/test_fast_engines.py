"""Every job on the fast engines: HTML, glossaries, alignments, subtitles, Word documents and PDFs translate with a
CTranslate2 export and an ONNX export (fp32 and int8 graphs) of the memorising model, from the command line and
from the server, with the torch engine's output contract: the same text where the model is sure of it, the same
tags, timings and formatting (where a tag or a run goes is the engine's attention's to say).

The CTranslate2 export keeps fp32 weights, as tests/test_confidence.py's does: int8 decoding of a d_model-32 model
depends on which int8 matmul the CPU gets (MKL's on Intel, oneDNN's elsewhere: docs/tests.md), and these tests are
about the jobs, not the weight type (int8 exports: tests/test_export.py)."""

import io
import re

import pytest

pytest.importorskip("ctranslate2")
pytest.importorskip("onnxruntime")
pytest.importorskip("starlette")
docx = pytest.importorskip("docx")
srt = pytest.importorskip("srt")

from helpers import MEMORISED_PAIRS, needs_pdf_extra, pdf_page_texts, text_pdf  # noqa: E402
from starlette.testclient import TestClient  # noqa: E402

from hf_seq2seq.cli import translate as translate_cli  # noqa: E402
from hf_seq2seq.engines.alignment import parse_pharaoh  # noqa: E402
from hf_seq2seq.engines.base import translate  # noqa: E402
from hf_seq2seq.engines.factory import engine_of, load_translator  # noqa: E402
from hf_seq2seq.export.ctranslate2 import export_ctranslate2  # noqa: E402
from hf_seq2seq.formats.documents import translate_document  # noqa: E402
from hf_seq2seq.serving.app import create_app  # noqa: E402
from hf_seq2seq.serving.config import ServeConfig  # noqa: E402
from hf_seq2seq.serving.worker import TranslatorWorker  # noqa: E402

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

ENGINES = [("ctranslate2", "fp32"), ("onnxruntime", "fp32"), ("onnxruntime", "int8")]
IDS = ["ctranslate2-fp32", "onnxruntime-fp32", "onnxruntime-int8"]
TARGETS = dict(MEMORISED_PAIRS)


@pytest.fixture(scope="module")
def exports(pre_ln_memorising_export, tmp_path_factory):
    """The pre-LN memorising model (the CPU presets' layout) exported to CTranslate2 (fp32 weights) and to ONNX (fp32
    and int8 graphs, the export the decoding tests read too)."""
    folder, onnx_export = pre_ln_memorising_export
    root = tmp_path_factory.mktemp("fast-engines")
    return {
        "ctranslate2": export_ctranslate2(folder, root / "ct2", quantization="float32"),
        "onnxruntime": onnx_export,
    }


@pytest.fixture(params=ENGINES, ids=IDS)
def engine(request, exports):
    """(the command's flags for one engine and precision, its loaded translator)."""
    name, precision = request.param
    flags = [str(exports[name]), "--engine", name]
    if name == "onnxruntime":
        flags += ["--precision", precision]
        return flags, load_translator(exports[name], name, precision=precision)
    return flags, load_translator(exports[name], name)


def words_and_tags(html: str) -> tuple[list[str], list[str]]:
    return re.sub("<[^>]+>", " ", html).split(), re.findall("<[^>]+>", html)


def test_html_a_glossary_and_alignments_from_the_command(engine, tmp_path):
    flags, _ = engine
    out = translate_cli.main([*flags, "--format", "html", "<p>how are you ?</p>", "thank <b>you</b> !"])
    assert out[0] == "<p>comment allez vous ?</p>"
    assert words_and_tags(out[1]) == (
        ["merci", "!"],
        ["<b>", "</b>"],
    )  # <b> where the engine's attention puts it

    glossary = tmp_path / "terms.tsv"
    glossary.write_text("cat\tmatou\n")
    out = translate_cli.main([*flags, "the cat is here .", "i like cheese .", "--glossary", str(glossary)])
    assert "matou" in out[0].split() and out[1] == "je aime le fromage ."

    sources = ["how are you ?", "the big dog sat on the mat ."]
    for line, source in zip(translate_cli.main([*flags, "--alignments", *sources]), sources, strict=True):
        translation, pairs = line.split("\t")
        links = parse_pharaoh(pairs)
        assert translation == TARGETS[source]
        assert {j for _, j in links} == set(range(len(translation.split())))  # every target word aligned
        assert all(i < len(source.split()) for i, _ in links)


def test_subtitles_and_a_word_document_from_the_command(engine, tmp_path):
    flags, _ = engine
    subtitles = (
        "1\n00:00:01,000 --> 00:00:02,000\nthe cat is here .\n\n"
        "2\n00:00:03,000 --> 00:00:04,500\nthe big dog sat\non the mat .\n\n"
        "3\n00:00:05,000 --> 00:00:06,000\n<i>thank you !</i>\n"
    )
    source, output = tmp_path / "film.srt", tmp_path / "film.fr.srt"
    source.write_text(subtitles)
    assert translate_cli.main([*flags, "--input-file", str(source), "--output-file", str(output)]) == [
        f"wrote {output}"
    ]
    before, after = list(srt.parse(subtitles)), list(srt.parse(output.read_text()))
    assert [(c.index, c.start, c.end) for c in after] == [(c.index, c.start, c.end) for c in before]
    assert [c.content for c in after][0::2] == ["le chat est ici .", "<i>merci !</i>"]
    assert after[1].content.count("\n") == 1
    assert after[1].content.replace("\n", " ") == "le grand chien est sur le tapis ."

    document = docx.Document()
    document.add_heading("good morning !", level=2)
    paragraph = document.add_paragraph("the cat is ")
    paragraph.add_run("here").bold = True
    paragraph.add_run(" .")
    source, output = tmp_path / "letter.docx", tmp_path / "lettre.docx"
    document.save(source)
    translate_cli.main([*flags, "--input-file", str(source), "--output-file", str(output)])
    translated = docx.Document(output)
    assert [(p.style.name, p.text) for p in translated.paragraphs] == [
        ("Heading 2", "bonjour !"),
        ("Normal", "le chat est ici ."),
    ]
    assert any(run.bold for run in translated.paragraphs[1].runs)  # on the words the engine aligns to "here"


def test_a_pdf_comes_back_with_its_pages_each_paragraph_the_engines_translation(engine, tmp_path):
    """A PDF of two pages through `translate_document` and the command (`translate EXPORT paper.pdf`): the same
    pages and page sizes, each paragraph replaced by the engine's own translation of it, none empty, whatever
    the model's quality."""
    needs_pdf_extra()
    import pikepdf

    flags, translator = engine
    pages = [["the cat is here .", "how are you ?"], ["thank you !"]]
    source = tmp_path / "paper.pdf"
    source.write_bytes(text_pdf(pages))
    expected = [" ".join(translate(translator, texts)) for texts in pages]  # the engine's, one page each
    assert all(expected) and expected != [" ".join(texts) for texts in pages]
    written = translate_document(translator, source, tmp_path / "out.pdf")
    assert translate_cli.main([*flags, str(source)]) == [f"wrote {tmp_path / 'paper.fr.pdf'}"]
    for output in (written, tmp_path / "paper.fr.pdf"):
        assert pdf_page_texts(output.read_bytes()) == expected
        with pikepdf.open(source) as before, pikepdf.open(output) as after:
            assert [list(page.mediabox) for page in after.pages] == [
                list(page.mediabox) for page in before.pages
            ]


def test_html_glossaries_documents_and_subtitles_through_the_server(engine):
    _, translator = engine
    app = create_app(
        lambda: TranslatorWorker(translator, "en", "fr"), ServeConfig(), load_in_background=False
    )
    with TestClient(app) as client:
        answer = client.post(
            "/translate",
            json={"q": ["<p>i like <b>cheese</b> .</p>", "the cat is here ."], "source": "en", "target": "fr",
                  "format": "html", "glossary": {"cheese": "camembert"}},
        )  # fmt: skip
        assert answer.status_code == 200, answer.text
        page, text = answer.json()["translatedText"]
        words, tags = words_and_tags(page)
        assert (
            sorted(tags) == sorted(["<p>", "</p>", "<b>", "</b>"]) and tags[0] == "<p>" and tags[-1] == "</p>"
        )
        assert "camembert" in words and text == "le chat est ici ."

        document = docx.Document()
        document.add_paragraph("thank you !").runs[0].italic = True
        data = io.BytesIO()
        document.save(data)
        answer = client.post(
            "/translate_file",
            files={"file": ("note.docx", data.getvalue())},
            data={"source": "en", "target": "fr"},
        )
        assert answer.status_code == 200, answer.text
        download = client.get(answer.json()["translatedFileUrl"])
        translated = docx.Document(io.BytesIO(download.content)).paragraphs[0]
        assert translated.text == "merci !" and all(run.italic for run in translated.runs)

        subtitles = "1\n00:00:01,000 --> 00:00:02,500\nthe big dog sat\non the mat .\n"
        answer = client.post(
            "/translate_file",
            files={"file": ("talk.srt", subtitles.encode())},
            data={"source": "en", "target": "fr"},
        )
        assert answer.status_code == 200, answer.text
        (cue,) = srt.parse(client.get(answer.json()["translatedFileUrl"]).text)
        assert (cue.start.total_seconds(), cue.end.total_seconds()) == (1.0, 2.5)
        assert (
            cue.content.count("\n") == 1
            and cue.content.replace("\n", " ") == "le grand chien est sur le tapis ."
        )

        # the memory /health states: the files the engine holds (ONNX: the cross-attention graph too, which the
        # alignments above loaded)
        if translator.engine == "ctranslate2":
            files = [translator.export_dir / "model.bin"]
        else:
            export, precision = translator.export, translator.precision
            files = [*export.graphs(precision), export.cross_attention_graph(precision)]
        (model,) = client.get("/health").json()["models"]
        assert model["weights_bytes"] == sum(file.stat().st_size for file in files)


def test_a_command_on_an_export_picks_its_engine_itself(exports, memorising_folder, capsys):
    """`--engine auto`, the default: an export runs on the engine it was made for, a model folder on torch."""
    assert {name: engine_of(folder) for name, folder in exports.items()} == {
        "ctranslate2": "ctranslate2",
        "onnxruntime": "onnxruntime",
    }
    assert engine_of(memorising_folder) == "torch" and engine_of("someone/some-model") == "torch"
    for folder in (*exports.values(), memorising_folder):
        assert translate_cli.main([str(folder), "how are you ?"]) == ["comment allez vous ?"]
    assert load_translator(exports["ctranslate2"], "auto").engine == "ctranslate2"

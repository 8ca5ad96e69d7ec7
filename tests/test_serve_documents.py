"""PowerPoint, OpenDocument and EPUB files through the server (`POST /translate_file`, `GET /download_file`):
offered in `/frontend/settings`, and each real file of tests/fixtures/documents comes back from
`python -m hf_seq2seq serve` (the memorising model, a real multipart client) as the command writes it: the
same bytes for OpenDocument and EPUB, the same slides and paragraphs for PowerPoint (python-pptx stamps the
time it saves into the zip)."""

import io
import zipfile
from pathlib import Path

import pytest

pytestmark = pytest.mark.releases  # CI runs these at the oldest releases too

pytest.importorskip("starlette")
pytest.importorskip("uvicorn")
pptx = pytest.importorskip("pptx")
requests = pytest.importorskip("requests")

from serve_helpers import get, serving  # noqa: E402

from hf_seq2seq.engines.factory import load_translator  # noqa: E402
from hf_seq2seq.formats.documents import translate_document_bytes  # noqa: E402
from hf_seq2seq.serving.files import MEDIA_TYPES  # noqa: E402

FILES = Path(__file__).parent / "fixtures" / "documents"
NEW = ["sld-notes.pptx", "simplestyles.odt", "ol.odp", "cnt-xhtml-support.epub"]
A = "{http://schemas.openxmlformats.org/drawingml/2006/main}"


@pytest.fixture(scope="module")
def server(memorising_folder, tmp_path_factory):
    folder = tmp_path_factory.mktemp("serve-documents")
    with serving(memorising_folder, "--file-dir", str(folder / "files"), log=folder / "server.log") as url:
        yield url


@pytest.fixture(scope="module")
def memorising(memorising_folder):
    """The model the server runs, in this process: what the command translates with."""
    return load_translator(memorising_folder)


def test_the_new_formats_are_offered_in_the_frontend_settings(server):
    status, settings, _ = get(f"{server}/frontend/settings")
    assert status == 200
    assert {".pptx", ".odt", ".odp", ".epub"} <= set(settings["supportedFilesFormat"])


def paragraphs(data: bytes) -> list[list[str]]:
    """Each slide's and notes page's paragraphs: the tags of their children."""
    presentation = pptx.Presentation(io.BytesIO(data))
    parts = [slide.element for slide in presentation.slides]
    parts += [slide.notes_slide.element for slide in presentation.slides if slide.has_notes_slide]
    return [[child.tag for child in p] for part in parts for p in part.iter(A + "p")]


@pytest.mark.parametrize("name", NEW)
def test_each_new_format_round_trips_through_the_server_as_the_command_writes_it(server, memorising, name):
    data = (FILES / name).read_bytes()
    answer = requests.post(
        f"{server}/translate_file", files={"file": (name, data)}, data={"source": "en", "target": "fr"},
        timeout=120,
    )  # fmt: skip
    assert answer.status_code == 200, answer.text
    download = requests.get(server + answer.json()["translatedFileUrl"], timeout=30)  # a link relative to it
    assert download.status_code == 200
    stem, extension = name.rsplit(".", 1)
    assert download.headers["content-disposition"] == f'attachment; filename="{stem}_fr.{extension}"'
    assert download.headers["content-type"] == MEDIA_TYPES[f".{extension}"] != "application/octet-stream"
    expected = translate_document_bytes(memorising, data, f".{extension}", target_lang="fr")  # marked French
    if extension == "pptx":
        assert paragraphs(download.content) == paragraphs(expected) == paragraphs(data)
        with (
            zipfile.ZipFile(io.BytesIO(download.content)) as got,
            zipfile.ZipFile(io.BytesIO(expected)) as want,
        ):
            assert {i.filename: got.read(i) for i in got.infolist()} == {
                i.filename: want.read(i) for i in want.infolist()
            }  # the same files with the same content
    else:
        assert download.content == expected
    assert download.content != data

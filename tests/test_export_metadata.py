"""Both exports' one metadata schema and one folder check: what is written, what exports made before the schema
wrote (still read), and what the check says of a folder that is not the export asked for."""

import json

import pytest

from hf_seq2seq.export.folder import check_export, check_onnx_export
from hf_seq2seq.export.metadata import EXPORT_FILE, ExportMetadata, NotAnExport, read_metadata

CTRANSLATE2 = ExportMetadata(
    format="ctranslate2",
    source_model_type="transformer_mt",
    max_source_length=512,
    parameters=44_612_608,
    quantization="int8",
    format_version="4.6.0",
    alignment={"layer": -1, "heads": "all"},
)
# the files exports made before schema 2 wrote, as they wrote them
CTRANSLATE2_SCHEMA_1 = {
    "model_type": "transformer_mt",
    "max_source_length": 512,
    "parameters": 44_612_608,
    "quantization": "int8",
    "ctranslate2_version": "4.6.0",
    "alignment": {"layer": -1, "heads": "all"},
}
ONNX_SCHEMA_1 = {
    "format": "onnx",
    "source_model_type": "transformer_mt",
    "precisions": ["fp32", "int8"],
    "max_source_length": 64,
    "parameters": 71_872,
    "opset": 18,
}


def ctranslate2_folder(folder, metadata: dict | None = None):
    """A CTranslate2 export's files (placeholders) with `metadata` as its metadata file (default: schema 2's)."""
    folder.mkdir(parents=True)
    for name in ("model.bin", "config.json", "shared_vocabulary.json", "tokenizer.json", "tokenizer_config.json",
                 "generation_config.json"):  # fmt: skip
        (folder / name).write_text("{}")
    if metadata is None:
        CTRANSLATE2.write(folder)
    else:
        (folder / EXPORT_FILE).write_text(json.dumps(metadata))
    return folder


def test_the_metadata_file_reads_back_as_written(tmp_path):
    path = CTRANSLATE2.write(tmp_path)
    written = json.loads(path.read_text())
    assert written["schema"] == 2 and written["format"] == "ctranslate2" and written["quantization"] == "int8"
    assert read_metadata(tmp_path) == CTRANSLATE2
    assert read_metadata(tmp_path / "elsewhere") is None


def test_the_files_of_exports_made_before_the_schema_are_still_read(tmp_path):
    (tmp_path / EXPORT_FILE).write_text(json.dumps(CTRANSLATE2_SCHEMA_1))
    assert read_metadata(tmp_path) == CTRANSLATE2
    without_alignment = {k: v for k, v in CTRANSLATE2_SCHEMA_1.items() if k != "alignment"}
    (tmp_path / EXPORT_FILE).write_text(json.dumps(without_alignment))  # before alignments on CTranslate2
    assert read_metadata(tmp_path).alignment is None

    (tmp_path / EXPORT_FILE).write_text(json.dumps(ONNX_SCHEMA_1))
    assert read_metadata(tmp_path) == ExportMetadata(
        format="onnx",
        source_model_type="transformer_mt",
        max_source_length=64,
        parameters=71_872,
        quantization="int8",  # its int8 graphs
        format_version="18",
    )
    (tmp_path / EXPORT_FILE).write_text(json.dumps(ONNX_SCHEMA_1 | {"precisions": ["fp32"]}))
    assert read_metadata(tmp_path).quantization == "float32"


def test_a_file_that_breaks_the_schema_is_named_with_its_fields(tmp_path):
    (tmp_path / EXPORT_FILE).write_text(json.dumps({"schema": 2, "format": "tflite", "parameters": "many"}))
    with pytest.raises(NotAnExport, match=f"{EXPORT_FILE} lacks or holds wrong: format, source_model_type, "
                       "max_source_length, parameters, quantization, format_version .*export the model again"):  # fmt: skip
        read_metadata(tmp_path)
    for text in ("{", "[]", '"schema"'):
        (tmp_path / EXPORT_FILE).write_text(text)
        with pytest.raises(NotAnExport, match="is not a JSON object"):
            read_metadata(tmp_path)


def test_one_check_for_both_exports_names_what_is_wrong(tmp_path):
    export = ctranslate2_folder(tmp_path / "ct2")
    checked = check_export(export, "ctranslate2")
    assert (checked.folder, checked.place, checked.metadata) == (export, export, CTRANSLATE2)
    assert check_export(
        ctranslate2_folder(tmp_path / "old", CTRANSLATE2_SCHEMA_1), "ctranslate2"
    ).metadata == (CTRANSLATE2)
    with pytest.raises(
        NotAnExport, match="ct2 is not an ONNX export .*no hf_seq2seq_export.json of format onnx"
    ):
        check_onnx_export(export)
    (export / "model.bin").unlink()
    (export / "tokenizer.json").unlink()
    with pytest.raises(
        NotAnExport, match="a CTranslate2 export .*ct2 lacks model.bin, tokenizer.json; make one with"
    ):
        check_export(export, "ctranslate2")

    model = tmp_path / "model"
    model.mkdir()
    (model / "config.json").write_text('{"model_type": "transformer_mt"}')
    with pytest.raises(
        NotAnExport, match="saved model folder, not a CTranslate2 export.*export ctranslate2 .*model "
    ):
        check_export(model, "ctranslate2")
    with pytest.raises(NotAnExport, match="is not a folder"):
        check_export(tmp_path / "nowhere", "ctranslate2")

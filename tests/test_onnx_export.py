"""The ONNX export: the layout and names transformers.js and Optimum load, the same greedy and beam tokens as
`generate()` on ONNX Runtime, int8 graphs, the refusal of other folders, and the command."""

import dataclasses
import json
import shutil
from pathlib import Path

import numpy as np
import pytest
import torch
from helpers import REPORT, random_model_tokenizer, save_random_model
from transformers import AutoTokenizer, MarianConfig, MarianMTModel

from hf_seq2seq import TransformerMTForConditionalGeneration
from hf_seq2seq.cli import main as cli
from hf_seq2seq.engines.alignment import AlignmentRule
from hf_seq2seq.engines.base import UnsupportedFeature, translate
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.factory import load_translator
from hf_seq2seq.export.folder import NotAnOnnxExport, cache_names
from hf_seq2seq.export.metadata import EXPORT_FILE, read_metadata
from hf_seq2seq.hub.push import build_hub_folder
from hf_seq2seq.models.folder import ExportError
from hf_seq2seq.models.transformer_mt.modeling_transformer_mt import CACHE_NAME

pytest.importorskip("onnxruntime")
import onnx  # noqa: E402
import onnxruntime  # noqa: E402

from hf_seq2seq.engines.onnxruntime_engine import PRECISIONS, OnnxTranslator, load_onnx_model  # noqa: E402
from hf_seq2seq.export import onnx as onnx_export  # noqa: E402
from hf_seq2seq.export.onnx import export_onnx  # noqa: E402

# CI runs these at the oldest releases and under the newest torch on PyPI too
pytestmark = [pytest.mark.releases, pytest.mark.newest_torch]

SOURCES = [
    "the cat sat on the mat .",
    "where is the dog ?",
    "i like green apples and red cheese . where ?",
    "dog",
]
LAYERS, HEADS = 2, 4  # save_random_model's network: 2 decoder layers of 4 heads of 8 dimensions


@pytest.fixture(scope="module")
def tokenizer():
    return random_model_tokenizer()


@pytest.fixture(scope="module")
def exported(tokenizer, tmp_path_factory):
    """(model folder with a test report, its ONNX export with int8 graphs), shared: tracing is slow. The model
    is post-LN; the pre-LN export (the CPU presets' layout) is test_beam_search.py's."""
    root = tmp_path_factory.mktemp("onnx")
    folder = save_random_model(tokenizer, root / "model")
    REPORT.save(folder)
    return folder, export_onnx(folder, root / "export", quantize="int8")


def generated(model, tokenizer, **kwargs) -> torch.Tensor:
    inputs = tokenizer(SOURCES, return_tensors="pt", padding=True)
    with torch.no_grad():
        return model.generate(**inputs, max_new_tokens=12, **kwargs)


def op_types(graph) -> set[str]:
    """The operators of `graph` and of its subgraphs (the merged decoder's `If` branches)."""
    types = set()
    for node in graph.node:
        types.add(node.op_type)
        for attribute in node.attribute:
            if attribute.type == onnx.AttributeProto.GRAPH:
                types |= op_types(attribute.g)
    return types


@pytest.mark.parametrize("num_beams", [1, 4])
def test_onnx_runtime_generates_the_tokens_of_generate(exported, tokenizer, num_beams):
    folder, export = exported
    model = TransformerMTForConditionalGeneration.from_pretrained(folder).eval()
    onnx_model = load_onnx_model(export)
    expected = generated(model, tokenizer, num_beams=num_beams)
    assert expected.shape[1] > 5  # translations of several tokens, padded batch: a real comparison
    torch.testing.assert_close(
        generated(onnx_model, tokenizer, num_beams=num_beams), expected, rtol=0, atol=0
    )


def test_int8_graphs_have_int8_matmuls_and_translate(exported, tokenizer):
    _, export = exported
    for name in ("encoder_model", "decoder_model_merged"):
        assert "MatMulInteger" in op_types(onnx.load(export / "onnx" / f"{name}_quantized.onnx").graph), name
        assert "MatMulInteger" not in op_types(onnx.load(export / "onnx" / f"{name}.onnx").graph), name
    inputs = tokenizer(SOURCES, return_tensors="pt", padding=True)
    start = torch.zeros(len(SOURCES), 1, dtype=torch.long)
    fp32, int8 = (
        load_onnx_model(export, precision)(**inputs, decoder_input_ids=start).logits
        for precision in PRECISIONS
    )
    # the same model, quantized (coarsely: random weights scaled x3 make large activations; the trained
    # model's int8 BLEU is measured in docs/onnx.md)
    assert np.corrcoef(fp32.flatten(), int8.flatten())[0, 1] > 0.5
    assert generated(load_onnx_model(export, "int8"), tokenizer).shape[0] == len(SOURCES)


def test_export_has_the_layout_and_names_that_transformers_js_and_optimum_load(exported):
    folder, export = exported
    source = json.loads((folder / "config.json").read_text())
    config = json.loads((export / "config.json").read_text())
    assert config["model_type"] == "marian" and config["hf_seq2seq"]["model_type"] == "transformer_mt"
    marian = MarianConfig.from_pretrained(export)
    for name in (
        "d_model",
        "decoder_layers",
        "decoder_attention_heads",
        "vocab_size",
        "decoder_start_token_id",
    ):
        assert getattr(marian, name) == source[name], name
    assert AutoTokenizer.from_pretrained(export)("the cat")["input_ids"]
    assert (
        json.loads((export / "tokenizer_config.json").read_text())["tokenizer_class"]
        == "PreTrainedTokenizerFast"
    )
    assert json.loads((export / "generation_config.json").read_text())["max_length_a"] == 1.5

    encoder = onnxruntime.InferenceSession(str(export / "onnx" / "encoder_model.onnx"))
    assert [i.name for i in encoder.get_inputs()] == ["input_ids", "attention_mask"]
    assert [o.name for o in encoder.get_outputs()] == ["last_hidden_state"]
    decoder = onnxruntime.InferenceSession(str(export / "onnx" / "decoder_model_merged.onnx"))
    inputs = {i.name: i.shape for i in decoder.get_inputs()}
    assert list(inputs) == [
        "encoder_attention_mask", "input_ids", "encoder_hidden_states",
        *cache_names("past_key_values", LAYERS), "use_cache_branch",
    ]  # fmt: skip
    # transformers.js makes the first step's empty past from these shapes: "batch_size" is the batch, any other
    # name 0, numbers as they are
    assert inputs["past_key_values.0.decoder.key"] == ["batch_size", HEADS, "past_decoder_sequence_length", 8]
    assert inputs["past_key_values.1.encoder.value"] == [
        "batch_size",
        HEADS,
        "encoder_sequence_length_out",
        8,
    ]
    assert [o.name for o in decoder.get_outputs()] == ["logits", *cache_names("present", LAYERS)]


def test_first_step_and_later_steps_of_the_merged_decoder(exported, tokenizer):
    """Fed as transformers.js feeds it: an empty past and `use_cache_branch` false, then the presents back."""
    folder, export = exported
    model = TransformerMTForConditionalGeneration.from_pretrained(folder).eval()
    inputs = tokenizer(SOURCES, return_tensors="pt", padding=True)
    with torch.no_grad():
        states = model.get_encoder()(**inputs).last_hidden_state
        start = torch.full((len(SOURCES), 1), model.config.decoder_start_token_id)
        first = model(
            attention_mask=inputs["attention_mask"], encoder_outputs=(states,), decoder_input_ids=start
        )
        step = first.logits.argmax(-1)
        later = model(
            attention_mask=inputs["attention_mask"], encoder_outputs=(states,), decoder_input_ids=step,
            **{CACHE_NAME: getattr(first, CACHE_NAME)},
        )  # fmt: skip
    decoder = onnxruntime.InferenceSession(str(export / "onnx" / "decoder_model_merged.onnx"))
    feeds = {
        "encoder_attention_mask": inputs["attention_mask"].numpy(),
        "input_ids": start.numpy(),
        "encoder_hidden_states": states.numpy(),
        "use_cache_branch": np.array([False]),
    } | {
        name: np.zeros((len(SOURCES), HEADS, 0, 8), np.float32)
        for name in cache_names("past_key_values", LAYERS)
    }
    logits, *presents = decoder.run(None, feeds)
    np.testing.assert_allclose(logits, first.logits.numpy(), atol=1e-4, rtol=1e-4)
    assert presents[0].shape[2] == 1 and presents[2].shape[2] == states.shape[1]
    feeds |= dict(zip(cache_names("past_key_values", LAYERS), presents, strict=True))
    feeds |= {"input_ids": step.numpy(), "use_cache_branch": np.array([True])}
    logits, *presents = decoder.run(None, feeds)
    np.testing.assert_allclose(logits, later.logits.numpy(), atol=1e-4, rtol=1e-4)
    assert presents[0].shape[2] == 2


def test_refuses_other_models_and_an_existing_folder(tokenizer, tmp_path, exported):
    config = MarianConfig(
        vocab_size=len(tokenizer), d_model=16, encoder_layers=1, decoder_layers=1, encoder_attention_heads=2,
        decoder_attention_heads=2, encoder_ffn_dim=32, decoder_ffn_dim=32, max_position_embeddings=32,
        pad_token_id=tokenizer.pad_token_id, eos_token_id=tokenizer.eos_token_id,
        decoder_start_token_id=tokenizer.pad_token_id,
    )  # fmt: skip
    marian = tmp_path / "marian"
    MarianMTModel(config).save_pretrained(marian)
    tokenizer.save_pretrained(marian)
    with pytest.raises(ExportError, match="holds a 'marian' model"):
        export_onnx(marian, tmp_path / "out")
    folder, export = exported
    with pytest.raises(ExportError, match="exists"):
        export_onnx(folder, export)
    with pytest.raises(NotAnOnnxExport, match="is a saved model folder, not an ONNX export"):
        load_onnx_model(folder)
    with pytest.raises(SystemExit):
        cli(["export", "onnx", str(folder), str(tmp_path / "x"), "--quantization", "bfloat16"])


def test_onnxruntime_engine_translates_as_the_torch_engine(exported, tmp_path, capsys):
    """`--engine onnxruntime`: the same batching, blank lines, sentence splitting and length rule as torch."""
    folder, export = exported
    texts = ["the cat sat on the mat . where is the dog ?", "", "i like green apples and red cheese .", "dog"]
    torch_engine, onnx_engine = load_translator(folder), load_translator(export, engine="onnxruntime")
    assert (onnx_engine.engine, onnx_engine.parameters) == ("onnxruntime", torch_engine.parameters)
    for split in (False, True):
        expected = translate(torch_engine, texts, batch_size=2, split_sentences=split)
        assert translate(onnx_engine, texts, batch_size=2, split_sentences=split) == expected
    beams = Decoding(num_beams=3)
    assert translate(onnx_engine, texts, decoding=beams) == translate(torch_engine, texts, decoding=beams)
    source = tmp_path / "source.txt"
    source.write_text("\n".join(texts) + "\n")
    cli(["translate", str(export), "--engine", "onnxruntime", "--input-file", str(source)])
    assert capsys.readouterr().out.splitlines() == translate(torch_engine, texts, split_sentences=True)


def test_onnxruntime_engine_scores_and_gives_hypotheses_as_the_torch_engine(exported):
    """`Translator.score` (confidence) and `translate_hypotheses` (alternatives) on the export: the torch
    engine's teacher-forced pass and beam search, run by ONNX Runtime."""
    folder, export = exported
    torch_engine, onnx_engine = load_translator(folder), load_translator(export, engine="onnxruntime")
    targets = torch_engine.translate_sentences(SOURCES)
    expected = torch_engine.score(SOURCES + [""], targets + ["x"], batch_size=2)
    got = onnx_engine.score(SOURCES + [""], targets + ["x"], batch_size=2)
    assert [s.tokens for s in got] == [s.tokens for s in expected] and got[-1].tokens == 0
    assert [s.log_prob for s in got] == pytest.approx([s.log_prob for s in expected], abs=1e-3)
    hypotheses = onnx_engine.translate_hypotheses(SOURCES, 3, batch_size=2)
    assert hypotheses == torch_engine.translate_hypotheses(SOURCES, 3, batch_size=2)
    assert all(len(h) == 3 for h in hypotheses)


@pytest.mark.parametrize("layer", [None, 0, -1])
def test_onnxruntime_engine_aligns_words_as_the_torch_engine(exported, layer):
    """Word alignments (what markup, documents and glossaries need) on the export: its cross-attention graph gives
    each layer's attention, heads averaged, so every rule's word pairs are the torch engine's, fp32 and int8."""
    folder, export = exported
    torch_engine, onnx_engine = load_translator(folder), load_translator(export, engine="onnxruntime")
    sources = [*SOURCES, "  "]
    targets = [*torch_engine.translate_sentences(SOURCES), "le chat"]  # the last: a blank source
    targets[0] = "le chat est assis sur le tapis ."  # a target the model did not make
    rule = AlignmentRule(layer=layer)
    expected = torch_engine.align(sources, targets, batch_size=3, rule=rule)
    assert onnx_engine.align(sources, targets, batch_size=3, rule=rule) == expected
    assert expected[-1] == [] and all(expected[:-1])
    int8 = load_translator(export, engine="onnxruntime", precision="int8").align(sources, targets, rule=rule)
    assert [len(pairs) > 0 for pairs in int8] == [len(pairs) > 0 for pairs in expected]


def test_an_onnx_export_without_the_cross_attention_graph_translates_but_says_how_to_align(
    exported, tmp_path
):
    """An export made before the cross-attention graph (and before both exports' one metadata schema:
    `hf_seq2seq.export.metadata`) still translates; alignments name the command that adds it."""
    folder, export = exported
    old = tmp_path / "old-export"
    shutil.copytree(export, old)
    for graph in (old / "onnx").glob("cross_attention_model*.onnx"):
        graph.unlink()
    written = read_metadata(export)
    for place in (old, old / "onnx"):  # the metadata of that release, at the top and in onnx/
        (place / EXPORT_FILE).write_text(
            json.dumps(
                {
                    "format": "onnx",
                    "source_model_type": written.source_model_type,
                    "precisions": ["fp32", "int8"],
                    "max_source_length": written.max_source_length,
                    "parameters": written.parameters,
                    "opset": int(written.format_version),
                }
            )
        )
    # that release recorded no language pair
    assert read_metadata(old) == dataclasses.replace(written, source_language=None, target_language=None)
    translator = load_translator(old, engine="onnxruntime")
    assert translator.translate_sentences(SOURCES[:1]) == load_translator(folder).translate_sentences(
        SOURCES[:1]
    )
    with pytest.raises(UnsupportedFeature, match="export it again with `hf-seq2seq export onnx`"):
        translator.align(SOURCES[:1], ["le chat"])


def test_push_with_onnx_puts_the_export_where_transformers_js_looks(exported, tmp_path, monkeypatch):
    """`hf-seq2seq push --with-onnx`: the graphs and their Marian-type config in the repository's onnx/, the
    PyTorch model untouched at the top, a card that shows both loaders, and what the card's Python downloads
    (onnx/, the tokenizer, the generation config) translates as the PyTorch model does."""
    folder, export = exported
    exports = []

    def export_again(model_dir, output_dir, quantize=None):  # the fixture's export of this model, not another
        exports.append((Path(model_dir), quantize))  # tracing again would be slow
        return Path(shutil.copytree(export, output_dir))

    monkeypatch.setattr(onnx_export, "export_onnx", export_again)
    hub_folder = build_hub_folder(folder, tmp_path / "hub", "someone/tiny-en-fr", onnx=True)
    assert exports == [(hub_folder, "int8")]
    assert json.loads((hub_folder / "config.json").read_text())["model_type"] == "transformer_mt"
    assert json.loads((hub_folder / "onnx" / "config.json").read_text())["model_type"] == "marian"
    for name in ("encoder_model", "decoder_model_merged"):
        assert (hub_folder / "onnx" / f"{name}.onnx").is_file()
        assert (hub_folder / "onnx" / f"{name}_quantized.onnx").is_file()
    card = (hub_folder / "README.md").read_text()
    assert 'subfolder: "onnx"' in card and "OnnxTranslator(folder" in card

    download = tmp_path / "download"  # snapshot_download(..., allow_patterns=["onnx/*", "tokenizer*", ...])
    shutil.copytree(hub_folder / "onnx", download / "onnx")
    for path in [*hub_folder.glob("tokenizer*"), hub_folder / "generation_config.json"]:
        shutil.copyfile(path, download / path.name)
    expected = load_translator(hub_folder).translate_sentences(SOURCES)
    assert OnnxTranslator(download).translate_sentences(SOURCES) == expected


def test_the_command_names_what_is_wrong_without_a_traceback(exported, tmp_path, capsys):
    folder, export = exported
    for argv in (["onnx", str(folder), str(export)], ["onnx", str(export), str(tmp_path / "x")]):
        with pytest.raises(SystemExit, match="hf-seq2seq export: .*(exists|holds a 'marian' model)"):
            cli(["export", *argv])


def test_both_exports_take_quantization_and_quantize_is_its_deprecated_alias(monkeypatch, tmp_path, capsys):
    """`--quantization int8` writes an ONNX export's int8 graphs beside the fp32 ones (float32 or none: the fp32
    ones alone), as it picks CTranslate2's weight type; `--quantize int8`, the ONNX export's flag before, still
    works and says it is deprecated; the two contradicting each other are refused."""
    from hf_seq2seq.export import onnx as onnx_export

    asked = []
    monkeypatch.setattr(
        onnx_export, "export_onnx", lambda model, out, quantize, force: asked.append(quantize)
    )
    for flags, quantize in (
        ([], None),
        (["--quantization", "float32"], None),
        (["--quantization", "int8"], "int8"),
    ):
        cli(["export", "onnx", "model", str(tmp_path / "x"), *flags])
        assert asked.pop() == quantize and "deprecated" not in capsys.readouterr().err
    cli(["export", "onnx", "model", str(tmp_path / "x"), "--quantize", "int8"])
    assert asked.pop() == "int8"
    assert "--quantize is deprecated: use --quantization int8" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        cli(
            [
                "export",
                "onnx",
                "model",
                str(tmp_path / "x"),
                "--quantize",
                "int8",
                "--quantization",
                "float32",
            ]
        )
    assert "contradicts --quantization float32" in capsys.readouterr().err and not asked

"""Try a model in a browser: a Gradio app that translates with a trained folder or a Hub repository (English into
French, or the pair the folder records), or with several, one per direction (e.g. en->fr and fr->en: the user
picks the direction), and the files of a Hugging Face Space that does the same with one.

`build_demo` builds the app (`launch_demo` starts it, `hf-seq2seq demo` is its command): a text box, the
direction when there are several, the decoding settings (greedy or beam search and the number of beams), the translation, the cross-attention map
of that translation as a heat map beside it, example sentences, the model's scores from its result files
(`test_results.json` of training, `eval_report.json` of `hf-seq2seq evaluate`, `results/*.json` of a Hub
folder) and the decoding time of each request. Every request is answered: an empty text gets an empty
translation and a hint, a long one a warning, and a failure an error message instead of a crashed server.

`write_space` writes a Space folder (`app.py`, `requirements.txt`, `README.md`) whose app loads a Hub
repository with `trust_remote_code=True`, without this package.
"""

from __future__ import annotations

import io
import logging
import os
import time
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

import torch
from PIL import Image
from transformers import PreTrainedModel, PreTrainedTokenizerBase

from hf_seq2seq.apps.plotting import attention_figure, model_attentions
from hf_seq2seq.engines.base import translate
from hf_seq2seq.engines.decoding import Decoding
from hf_seq2seq.engines.torch_engine import TorchTranslator, load_model_and_tokenizer
from hf_seq2seq.evaluation.report import EVAL_REPORT, TRAINING_REPORT, EvalReport, ReportError
from hf_seq2seq.models.folder import supported_releases
from hf_seq2seq.models.languages import language_name, require_languages

if TYPE_CHECKING:
    import gradio as gr

    from hf_seq2seq.engines.base import Translator


logger = logging.getLogger(__name__)


EXAMPLES = (
    "How are you?",
    "The cat is sleeping on the sofa.",
    "I would like a cup of coffee, please.",
    "Where is the train station?",
    "We are going to the beach tomorrow because the weather is nice.",
)
MAX_INPUT_CHARS = 2000
"""Longer texts are cut here (with a warning): a public demo bounds the work of one request."""


REPORT_PATTERNS = (TRAINING_REPORT, EVAL_REPORT, "results/*.json")
"""Result files of a model folder, in the order they are shown."""


EMPTY_HINT = "Type an English sentence, or pick an example below, and press **Translate**."


GREEDY, BEAM = "greedy", "beam search"


SPACE_APP = Path(__file__).with_name("space_app.py")
SPACE_IMPORTS = ("torch", "transformers", "tokenizers", "gradio", "matplotlib")
"""What a Space's app imports: its requirements, at the releases this package supports."""


class Direction(NamedTuple):
    """One model of the app: the pair it translates, its translator, and its folder (for its result files)."""

    source: str
    target: str
    translator: TorchTranslator
    folder: Path
    name: str  # the folder or Hub id given

    @property
    def label(self) -> str:
        return f"{language_name(self.source)} → {language_name(self.target)}"


def empty_hint(source: str) -> str:
    """What an empty request shows: `EMPTY_HINT` for English, its like for another source language."""
    if source == "en":
        return EMPTY_HINT
    return f"Type a sentence in {language_name(source)}, or pick an example below, and press **Translate**."


def load_directions(
    models: Sequence[str | os.PathLike[str]],
    trust_remote_code: bool = False,
    device: str | None = None,
    languages: Sequence[tuple[str, str]] | None = None,
) -> dict[str, Direction]:
    """Each model loaded, by the label of its direction ("English → French": its pair from `languages`, one per
    model in order, or the pair its folder records, `hf_seq2seq.models.languages.require_languages`, which
    refuses a folder that records none), in order; ValueError for two of one direction."""
    if languages and len(languages) != len(models):
        raise ValueError(f"{len(languages)} language pairs for {len(models)} models: give one per model")
    directions = {}
    for number, model in enumerate(models):
        folder = resolve_model(model)
        pair = require_languages(folder, languages[number] if languages else None)
        translator = TorchTranslator(
            *load_model_and_tokenizer(folder, device=device, trust_remote_code=trust_remote_code)
        )
        direction = Direction(*pair, translator, folder, str(model))
        if direction.label in directions:
            raise ValueError(
                f"{directions[direction.label].name} and {model} both translate {direction.label}"
            )
        directions[direction.label] = direction
    return directions


class DemoReply(NamedTuple):
    """What one request shows: the translation, its cross-attention heat map, a message and the timing."""

    translation: str
    attention: Image.Image | None
    message: str  # a hint, warning or error (Markdown); "" when all went well
    timing: str


def resolve_model(model: str | os.PathLike[str]) -> Path:
    """A local model folder as it is, or the local copy of a Hub repository (from the cache when offline)."""
    if Path(model).is_dir():
        return Path(model)
    from huggingface_hub import snapshot_download

    return Path(snapshot_download(str(model)))


def find_reports(folder: str | os.PathLike[str], extra: Sequence[str | os.PathLike[str]] = ()) -> list[Path]:
    """The result files of a model folder (see `REPORT_PATTERNS`), then `extra`."""
    found = [path for pattern in REPORT_PATTERNS for path in sorted(Path(folder).glob(pattern))]
    return found + [Path(path) for path in extra]


def scores_markdown(paths: Sequence[Path]) -> str:
    """One line per result file: BLEU and chrF, the test set and the decoding; "not evaluated" when none.

    A file that cannot be read is named with the reason instead of stopping the app.
    """
    if not paths:
        return "**BLEU:** not evaluated (no result file next to the model)"
    lines = []
    for path in paths:
        try:
            report = EvalReport.load(path)
        except (OSError, ReportError) as error:
            lines.append(f"- `{path.name}`: unreadable ({error})")
            continue
        beams = report.decoding.get("num_beams", 1)
        decoding = "greedy" if beams == 1 else f"beam search, {beams} beams"
        size = f", {report.num_sentences} sentences" if report.num_sentences else ""
        lines.append(
            f"- **BLEU {report.bleu:.1f}**, chrF {report.chrf:.1f} on {report.test_set} "
            f"({report.direction}{size}, {decoding})"
        )
    return "\n".join(lines)


def figure_image(fig) -> Image.Image:
    """A matplotlib figure rendered as a PNG image."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg

    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=100)
    buffer.seek(0)
    return Image.open(buffer).convert("RGB")


def cross_attention_image(
    model: PreTrainedModel,
    tokenizer: PreTrainedTokenizerBase,
    source: str,
    translation: str,
    every_head: bool = False,
) -> Image.Image:
    """The cross-attention of `translation` as it reads `source`: a heat map, target tokens x source tokens.

    The weights come from one forward pass on (source, start token + the translation's tokens) with
    `output_attentions=True`, so they belong to the translation shown whatever decoding produced it. By
    default one panel, the last layer averaged over its heads; `every_head` draws a panel per layer and head.
    """
    limit = model.config.max_position_embeddings
    input_ids = tokenizer(source, return_tensors="pt", truncation=True, max_length=limit)["input_ids"]
    start = model.generation_config.decoder_start_token_id
    target_ids = [start] + tokenizer(translation, verbose=False)["input_ids"][: limit - 1]
    decoder_input_ids = torch.tensor([target_ids])  # (1, T)
    weights = model_attentions(
        model,
        input_ids.to(model.device),
        torch.ones_like(input_ids).to(model.device),
        decoder_input_ids.to(model.device),
    )["cross_attentions"][0]  # (layers, heads, T, S)
    layers, heads = weights.shape[:2]
    if not every_head:
        weights = weights[-1:].mean(axis=1, keepdims=True)
    figure = attention_figure(
        weights,
        tokenizer.convert_ids_to_tokens(target_ids),
        tokenizer.convert_ids_to_tokens(input_ids[0].tolist()),
        "Cross-attention of the translation",
        query_label="decoder input (query)",
        key_label="source token (key)",
    )
    if not every_head:
        figure.axes[0].set_title(f"layer {layers} (the last), mean of its {heads} heads", fontsize=9)
    return figure_image(figure)


def answer(
    translator: Translator,
    text: str,
    method: str = GREEDY,
    beams: int = 4,
    every_head: bool = False,
    hint: str = EMPTY_HINT,
) -> DemoReply:
    """One request of the app: translate `text` with `translator` and draw its cross-attention (where the
    translator has the network itself, `.model`: the torch engine); never raises. An empty text gets `hint`."""
    text = (text or "").strip()
    if not text:
        return DemoReply("", None, hint, "")
    warnings = []
    try:
        if len(text) > MAX_INPUT_CHARS:
            warnings.append(
                f"⚠️ The text has {len(text):,} characters; only the first {MAX_INPUT_CHARS:,} were translated."
            )
            text = text[:MAX_INPUT_CHARS]
        model, tokenizer = getattr(translator, "model", None), translator.tokenizer
        limit = translator.max_source_length
        length = len(tokenizer(text, verbose=False)["input_ids"])
        if length > limit:
            warnings.append(
                f"⚠️ The text has {length} tokens, more than the {limit} the model reads at once: it was "
                f"translated sentence by sentence (a longer sentence is cut), and no attention map is drawn."
            )
        decoding = Decoding(num_beams=1 if method == GREEDY else int(beams))
        started = time.perf_counter()
        (translation,) = translate(translator, [text], decoding=decoding, split_sentences=True)
        elapsed_ms = (time.perf_counter() - started) * 1000
        how = GREEDY if decoding.num_beams == 1 else f"{BEAM}, {decoding.num_beams} beams"
        where = model.device.type if model is not None else translator.engine
        timing = f"Decoded in **{elapsed_ms:,.0f} ms** ({how}, on {where})"
        image = (
            cross_attention_image(model, tokenizer, text, translation, every_head)
            if model is not None and length <= limit and translation
            else None
        )
        return DemoReply(translation, image, "\n\n".join(warnings), timing)
    except Exception as error:  # a request must never take the server down
        logger.exception("demo request failed")
        message = f"❌ The translation failed: {type(error).__name__}: {error}"
        return DemoReply("", None, "\n\n".join([*warnings, message]), "")


def build_demo(
    model: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    reports: Sequence[str | os.PathLike[str]] = (),
    examples: Sequence[str] = EXAMPLES,
    trust_remote_code: bool = False,
    device: str | None = None,
    languages: Sequence[tuple[str, str]] | None = None,
) -> gr.Blocks:
    """The Gradio app for a model folder or Hub repository id, or several (one per direction: the user picks
    the direction; `languages`: their pairs, `load_directions`), plus any extra result files in `reports`."""
    try:
        import gradio as gr
    except ImportError as error:
        raise ImportError('the demo needs gradio: pip install "hf_seq2seq[demo]"') from error

    models = [model] if isinstance(model, str | os.PathLike) else list(model)
    directions = load_directions(models, trust_remote_code, device, languages)
    first = next(iter(directions.values()))
    saved_beams = first.translator.generation_config.num_beams or 1
    title = ", ".join(directions)
    described = [
        f"`{d.name}` ({d.label}, {d.translator.parameters / 1e6:.1f}M parameters)"
        for d in directions.values()
    ]
    with gr.Blocks(
        title=f"{first.name if len(models) == 1 else 'hf-seq2seq'}: {title}", analytics_enabled=False
    ) as demo:
        gr.Markdown(
            f"# {title}\nModel {', '.join(described)}, a Transformer trained from scratch with hf_seq2seq.",
        )
        scores = [
            (f"**{d.label}**\n\n" if len(directions) > 1 else "")
            + scores_markdown(find_reports(d.folder, reports if d is first else ()))
            for d in directions.values()
        ]
        gr.Markdown("\n\n".join(scores), elem_id="scores")
        with gr.Row():
            with gr.Column():
                direction = gr.Radio(
                    list(directions), value=first.label, label="Direction", elem_id="direction",
                    visible=len(directions) > 1,
                )  # fmt: skip
                source = gr.Textbox(
                    label=language_name(first.source), lines=4, placeholder=EXAMPLES[0] if first.source == "en" else "",
                    elem_id="source",
                )  # fmt: skip
                with gr.Row():
                    method = gr.Radio(
                        [GREEDY, BEAM], value=GREEDY if saved_beams == 1 else BEAM, label="Decoding"
                    )
                    beams = gr.Slider(2, 8, value=max(saved_beams, 4), step=1, label="Beams (beam search)")
                every_head = gr.Checkbox(label="Attention of every layer and head", value=False)
                button = gr.Button("Translate", variant="primary", elem_id="translate")
                target = gr.Textbox(
                    label=language_name(first.target), lines=4, interactive=False, elem_id="translation"
                )
                message = gr.Markdown(elem_id="message")
                timing = gr.Markdown(elem_id="timing")
            with gr.Column():
                attention = gr.Image(
                    label="Cross-attention", type="pil", interactive=False, elem_id="attention"
                )
        gr.Examples(list(examples), inputs=source, label="Examples")

        def respond(text: str, label: str, method: str, beams: float, every_head: bool):
            chosen = directions.get(label, first)
            reply = answer(chosen.translator, text, method, int(beams), every_head, empty_hint(chosen.source))
            return tuple(reply)

        def switch(label: str):
            chosen = directions.get(label, first)
            placeholder = EXAMPLES[0] if chosen.source == "en" else ""
            return (
                gr.update(label=language_name(chosen.source), placeholder=placeholder),
                gr.update(label=language_name(chosen.target), value=""),
            )

        inputs = [source, direction, method, beams, every_head]
        outputs = [target, attention, message, timing]
        button.click(respond, inputs, outputs)
        source.submit(respond, inputs, outputs)
        direction.change(switch, direction, [source, target])
    return demo


def launch_demo(
    model: str | os.PathLike[str] | Sequence[str | os.PathLike[str]],
    port: int | None = None,
    share: bool = False,
    reports: Sequence[str | os.PathLike[str]] = (),
    trust_remote_code: bool = False,
    block: bool = True,
    languages: Sequence[tuple[str, str]] | None = None,
) -> gr.Blocks:
    """Build the app for one model or several (`build_demo`) and serve it on localhost:`port` (default: Gradio's,
    7860 or the next free one); `share`
    also opens a public gradio.live link. With `block=False` it returns while the server runs in a thread."""
    demo = build_demo(model, reports=reports, trust_remote_code=trust_remote_code, languages=languages)
    demo.queue(default_concurrency_limit=1)  # one request at a time
    # quiet: Gradio's own lines point at `launch(share=True)`, which a command-line user cannot act on
    demo.launch(server_port=port, share=share, prevent_thread_lock=True, quiet=True)
    if block:
        public = f" and {demo.share_url} (public, 72 hours)" if demo.share_url else ""
        shown = model if isinstance(model, str | os.PathLike) else ", ".join(map(str, model))
        print(f"Serving {shown} on {demo.local_url}{public}; press Ctrl+C to stop", flush=True)
        demo.block_thread()
    return demo


def write_space(out_dir: str | os.PathLike[str], repo_id: str, title: str | None = None) -> Path:
    """Write a Gradio Space folder for the Hub model `repo_id`: `app.py` (loads the repository with
    `trust_remote_code=True`; needs no hf_seq2seq), `requirements.txt`, and `README.md` with the Space's
    settings. Returns `out_dir`."""
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    app = SPACE_APP.read_text(encoding="utf-8")
    if 'MODEL_REPO = "user/model"' not in app:
        raise RuntimeError(f"{SPACE_APP} has no MODEL_REPO line to fill in")
    (out_dir / "app.py").write_text(app.replace('"user/model"', repr(repo_id).replace("'", '"')), "utf-8")
    requirements = [name + ",".join(supported_releases(name)) for name in SPACE_IMPORTS]
    (out_dir / "requirements.txt").write_text("\n".join(requirements) + "\n", encoding="utf-8")
    title = title or f"{repo_id.split('/')[-1]} English to French"
    (out_dir / "README.md").write_text(
        f"---\ntitle: {title}\nemoji: 🇫🇷\ncolorFrom: blue\ncolorTo: red\nsdk: gradio\napp_file: app.py\n"
        f"models:\n- {repo_id}\n---\n\nTry [{repo_id}](https://huggingface.co/{repo_id}): English in, French out.\n",
        encoding="utf-8",
    )
    return out_dir

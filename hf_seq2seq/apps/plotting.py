"""Figures: attention maps of one translated sentence, and training curves from a Trainer run.

Figures are built with matplotlib's object-oriented API on an Agg canvas (`FigureCanvasAgg`), never through
`pyplot`, so nothing global (the backend, open figures) is touched. Every PNG records what it shows in its
text metadata, computed from the figure's own artists at save time and readable with
`PIL.Image.open(path).text`: attention grids store `Panels` (number of heat-map axes) and `Grid`
(`layers x heads`); training curves store `Series` (`name:points` for every line drawn).
"""

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any, NamedTuple, TypedDict

import numpy as np
import torch
from matplotlib.axes import Axes
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.cm import ScalarMappable
from matplotlib.colors import Normalize
from matplotlib.figure import Figure
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer, PreTrainedModel, PreTrainedTokenizerBase
from transformers.trainer import TRAINER_STATE_NAME as TRAINER_STATE

from hf_seq2seq.models.folder import last_checkpoint

ATTENTION_KINDS = ("encoder_attentions", "decoder_attentions", "cross_attentions")


# series name -> key of a `log_history` entry holding it (training logs carry loss/learning_rate,
# evaluations eval_*; the final summary entry uses `train_loss`, not `loss`, and is left out)
TRAINING_SERIES = {
    "train_loss": "loss",
    "eval_loss": "eval_loss",
    "learning_rate": "learning_rate",
    "eval_bleu": "eval_bleu",
}


class AttentionPlot(NamedTuple):
    """One attention PNG: which stack of `AttentionMaps` it shows and which tokens label its axes."""

    filename: str
    kind: str
    title: str
    queries: str  # "source" or "target"
    keys: str


ATTENTION_PLOTS = (
    AttentionPlot(
        "encoder_self_attention.png", "encoder_attentions", "Encoder self-attention", "source", "source"
    ),
    AttentionPlot(
        "decoder_self_attention.png", "decoder_attentions", "Decoder self-attention", "target", "target"
    ),
    AttentionPlot("cross_attention.png", "cross_attentions", "Cross-attention", "target", "source"),
)


class AttentionMaps(TypedDict):
    """Attention of one greedy translation; arrays are [layers, heads, queries, keys].

    `target_tokens` are the decoder inputs: the start token followed by every generated token. Query row t
    of the decoder and cross attentions is the step that reads `target_tokens[t]` and predicts
    `target_tokens[t + 1]` (the last row reads the final token and predicts nothing that was kept).
    """

    source_tokens: list[str]
    target_tokens: list[str]
    translation: str
    encoder_attentions: np.ndarray  # (L, H, S, S): queries and keys = source tokens
    decoder_attentions: np.ndarray  # (L, H, T, T): queries and keys = target tokens
    cross_attentions: np.ndarray  # (L, H, T, S): queries = target tokens, keys = source tokens


def model_attentions(
    model: PreTrainedModel,
    input_ids: torch.Tensor,
    attention_mask: torch.Tensor,
    decoder_input_ids: torch.Tensor,
    decoder_attention_mask: torch.Tensor | None = None,
) -> dict[str, np.ndarray]:
    """One forward pass with `output_attentions=True`; each kind stacked as a [batch, layers, heads, Q, K] array.

    Raises `ValueError` when the model's outputs carry no attention weights.
    """
    with torch.no_grad():
        outputs = model(
            input_ids=input_ids,
            attention_mask=attention_mask,
            decoder_input_ids=decoder_input_ids,
            decoder_attention_mask=decoder_attention_mask,
            output_attentions=True,
            use_cache=False,
        )
    found = {name: getattr(outputs, name, None) for name in ATTENTION_KINDS}
    missing = [name for name, weights in found.items() if not weights]
    if missing:
        raise ValueError(
            f"the model returned no {', '.join(missing)} with output_attentions=True: this looks like a model "
            f"saved without the attention path (a kernel that never materialises the weights). Load it with "
            f"attn_implementation='eager', or with the hf_seq2seq TransformerMT code, which returns them"
        )
    return {name: torch.stack(weights, dim=1).float().cpu().numpy() for name, weights in found.items()}


def attention_maps(
    model: PreTrainedModel, tokenizer: PreTrainedTokenizerBase, sentence: str, max_new_tokens: int = 64
) -> AttentionMaps:
    """Translate `sentence` greedily, then return the tokens and every attention weight of that translation.

    The weights come from one forward pass of the model on (source ids, start token + generated ids) with
    `output_attentions=True`; with greedy decoding they equal (up to float rounding) the weights of each
    `generate` step. At most `max_new_tokens` are generated, fewer if the model's `max_position_embeddings` leaves
    no room for them after the start token. The model is run in eval mode (no dropout) and its mode is
    restored afterwards.
    """
    if not sentence.strip():
        raise ValueError("the sentence is empty or whitespace: pass the source text to translate")
    # verbose=False: no "longer than the maximum" warning (the tokenizer's model_max_length is training's length)
    encoded = tokenizer(sentence, return_tensors="pt", verbose=False)
    input_ids = encoded["input_ids"].to(model.device)  # (1, S)
    if input_ids.shape[1] == 0:
        raise ValueError(
            f"the tokenizer produced no tokens for {sentence!r}: pass text in the source language"
        )
    attention_mask = torch.ones_like(input_ids)
    max_positions = getattr(model.config, "max_position_embeddings", None)
    if max_positions is not None:
        max_new_tokens = min(max_new_tokens, max_positions - 1)
    was_training = model.training
    model.eval()
    try:
        with torch.no_grad():
            generated = model.generate(
                input_ids=input_ids,
                attention_mask=attention_mask,
                num_beams=1,
                do_sample=False,
                max_new_tokens=max_new_tokens,
            )  # (1, T): start token + generated tokens
        weights = model_attentions(model, input_ids, attention_mask, generated)
    finally:
        model.train(was_training)
    return AttentionMaps(
        source_tokens=tokenizer.convert_ids_to_tokens(input_ids[0].tolist()),
        target_tokens=tokenizer.convert_ids_to_tokens(generated[0].tolist()),
        translation=tokenizer.decode(generated[0], skip_special_tokens=True).strip(),
        **{name: array[0] for name, array in weights.items()},
    )


def _literal(text: str) -> str:
    """`text` as literal matplotlib text: `$` would otherwise start mathtext."""
    return text.replace("$", r"\$")


def _save(fig: Figure, path: Path, metadata: dict[str, str]) -> Path:
    """Render `fig` on an Agg canvas into the PNG `path` (parents created), with text metadata."""
    path.parent.mkdir(parents=True, exist_ok=True)
    FigureCanvasAgg(fig)
    fig.savefig(path, dpi=100, metadata=metadata)
    return path


def attention_figure(
    weights: np.ndarray,
    query_tokens: Sequence[str],
    key_tokens: Sequence[str],
    title: str,
    query_label: str = "query",
    key_label: str = "key",
) -> Figure:
    """A grid of heat maps, rows = layers and columns = heads, for a [layers, heads, queries, keys] array.

    Each panel is titled "layer i, head j" (1-based), has the key tokens on x and the query tokens on y,
    and all panels share one colour scale from 0 to the largest weight, shown by one colorbar.
    """
    if (
        weights.ndim != 4
        or 0 in weights.shape[:2]
        or weights.shape[2:] != (len(query_tokens), len(key_tokens))
    ):
        raise ValueError(
            f"weights of shape {weights.shape} do not match {len(query_tokens)} query and {len(key_tokens)} key "
            f"tokens: expected [layers, heads, {len(query_tokens)}, {len(key_tokens)}]"
        )
    layers, heads, queries, keys = weights.shape
    cell = 0.16  # inches per token
    panel_w, panel_h = max(2.4, cell * keys + 0.8), max(2.4, cell * queries + 0.8)
    fig = Figure(figsize=(heads * panel_w + 1.2, layers * panel_h + 0.6), layout="constrained")
    axes = fig.subplots(layers, heads, squeeze=False)
    norm = Normalize(vmin=0.0, vmax=max(float(weights.max()), 1e-12))
    for i in range(layers):
        for j in range(heads):
            ax: Axes = axes[i, j]
            ax.imshow(weights[i, j], cmap="viridis", norm=norm, aspect="auto", interpolation="nearest")
            ax.set_title(f"layer {i + 1}, head {j + 1}", fontsize=9)
            ax.set_xticks(range(keys), [_literal(t) for t in key_tokens], rotation=90, fontsize=7)
            ax.set_yticks(range(queries), [_literal(t) for t in query_tokens], fontsize=7)
            if i == layers - 1:
                ax.set_xlabel(key_label, fontsize=8)
            if j == 0:
                ax.set_ylabel(query_label, fontsize=8)
    colorbar = fig.colorbar(ScalarMappable(norm=norm, cmap="viridis"), ax=axes.ravel().tolist(), shrink=0.8)
    colorbar.set_label("attention weight")
    colorbar.ax.set_label("colorbar")
    fig.suptitle(_literal(title))
    return fig


def plot_attention(maps: AttentionMaps, out_dir: str | Path) -> list[Path]:
    """Write `encoder_self_attention.png`, `decoder_self_attention.png` and `cross_attention.png` to `out_dir`.

    Each is an `attention_figure` grid (one panel per layer x head); returns the paths written.
    """
    out_dir = Path(out_dir)
    tokens = {"source": maps["source_tokens"], "target": maps["target_tokens"]}
    axis_labels = {"source": "source token", "target": "decoder input"}
    paths = []
    for plot in ATTENTION_PLOTS:
        fig = attention_figure(
            maps[plot.kind],
            tokens[plot.queries],
            tokens[plot.keys],
            f"{plot.title}; translation: {maps['translation']!r}",
            query_label=f"{axis_labels[plot.queries]} (query)",
            key_label=f"{axis_labels[plot.keys]} (key)",
        )
        panels = [ax for ax in fig.axes if ax.get_label() != "colorbar"]
        rows, cols = panels[0].get_subplotspec().get_geometry()[:2]
        paths.append(
            _save(fig, out_dir / plot.filename, {"Panels": str(len(panels)), "Grid": f"{rows}x{cols}"})
        )
    return paths


def plot_checkpoint_attention(
    model_path: str | Path,
    sentence: str,
    out_dir: str | Path,
    tokenizer_path: str | Path | None = None,
    max_new_tokens: int = 64,
) -> list[Path]:
    """Load a saved model (and its tokenizer, from the same folder unless `tokenizer_path`), plot one sentence."""
    tokenizer = AutoTokenizer.from_pretrained(tokenizer_path or model_path)
    model = AutoModelForSeq2SeqLM.from_pretrained(model_path)
    return plot_attention(attention_maps(model, tokenizer, sentence, max_new_tokens), out_dir)


def find_trainer_state(path: str | Path) -> Path:
    """`trainer_state.json` of a run: the file itself, `<dir>/trainer_state.json`, or the newest checkpoint's."""
    path = Path(path)
    if path.is_file():
        return path
    if not path.is_dir():
        raise FileNotFoundError(
            f"{path} does not exist: pass a training output_dir, a checkpoint-<step> folder or a "
            f"{TRAINER_STATE} (the Trainer writes one into every checkpoint)"
        )
    if (path / TRAINER_STATE).is_file():
        return path / TRAINER_STATE
    checkpoint = last_checkpoint(path)
    if checkpoint is None:
        raise FileNotFoundError(
            f"no {TRAINER_STATE} at {path / TRAINER_STATE} nor in any {path}/checkpoint-*/: the Trainer writes "
            f"it into each checkpoint-<step> folder it saves (and into output_dir on trainer.save_state()), so "
            f"pass a run directory that has at least one checkpoint"
        )
    return checkpoint / TRAINER_STATE


def training_series(log_history: list[dict[str, Any]]) -> dict[str, tuple[list[int], list[float]]]:
    """The `TRAINING_SERIES` found in a Trainer `log_history`, as (steps, values); absent series are left out."""
    series: dict[str, tuple[list[int], list[float]]] = {}
    for name, key in TRAINING_SERIES.items():
        points = [(int(entry["step"]), float(entry[key])) for entry in log_history if key in entry]
        if points:
            steps, values = zip(*points, strict=True)
            series[name] = (list(steps), list(values))
    return series


def plot_training_curves(trainer_state_path_or_run_dir: str | Path, out_path: str | Path) -> Path:
    """Plot loss (train and eval), learning rate and validation BLEU against the step from a Trainer run.

    Accepts a run directory, a checkpoint folder or a `trainer_state.json` (see `find_trainer_state`).
    The PNG's `Series` metadata lists every line drawn as `name:points`.
    """
    state_path = find_trainer_state(trainer_state_path_or_run_dir)
    log_history = json.loads(state_path.read_text(encoding="utf-8")).get("log_history", [])
    series = training_series(log_history)
    if not series:
        raise ValueError(
            f"{state_path} logs none of {', '.join(TRAINING_SERIES)}: train with logging_steps set and an "
            f"eval_strategy with a compute_metrics returning 'bleu'"
        )
    fig = Figure(figsize=(15, 4.2), layout="constrained")
    loss_ax, lr_ax, bleu_ax = fig.subplots(1, 3)
    panels = [
        (loss_ax, ("train_loss", "eval_loss"), "loss"),
        (lr_ax, ("learning_rate",), "learning rate"),
        (bleu_ax, ("eval_bleu",), "validation BLEU"),
    ]
    for ax, names, ylabel in panels:
        for name in names:
            if name in series:
                steps, values = series[name]
                ax.plot(
                    steps, values, label=name, marker="o" if name.startswith("eval") else None, markersize=3
                )
        if not ax.get_lines():
            ax.text(0.5, 0.5, "not logged", ha="center", va="center", transform=ax.transAxes)
        ax.set_xlabel("step")
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    if loss_ax.get_lines():
        loss_ax.legend()
    fig.suptitle(str(state_path))
    drawn = [f"{line.get_label()}:{len(line.get_xdata())}" for ax in fig.axes for line in ax.get_lines()]
    return _save(fig, Path(out_path), {"Series": ",".join(drawn)})

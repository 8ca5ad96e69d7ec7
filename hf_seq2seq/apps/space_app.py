"""A Hugging Face Space for an hf_seq2seq translation model: English in, French out.

`hf_seq2seq.apps.demo.write_space` copies this file as the Space's `app.py` with MODEL_REPO filled in. It
needs no hf_seq2seq: the model repository brings its own code (`trust_remote_code=True`), which returns the
real attention weights with `output_attentions=True`.
"""

import time

import gradio as gr
import torch
from matplotlib.figure import Figure
from transformers import AutoModelForSeq2SeqLM, AutoTokenizer

MODEL_REPO = "user/model"
EXAMPLES = ["How are you?", "The cat is sleeping on the sofa.", "Where is the train station?"]


tokenizer = AutoTokenizer.from_pretrained(MODEL_REPO, trust_remote_code=True)


model = AutoModelForSeq2SeqLM.from_pretrained(MODEL_REPO, trust_remote_code=True).eval()


LIMIT = model.config.max_position_embeddings


def cross_attention(input_ids: torch.Tensor, output_ids: torch.Tensor) -> Figure:
    """Last decoder layer's cross-attention, mean of its heads: generated tokens x source tokens."""
    with torch.no_grad():
        out = model(
            input_ids=input_ids, decoder_input_ids=output_ids, output_attentions=True, use_cache=False
        )
    weights = out.cross_attentions[-1][0].mean(0).float().numpy()  # (T, S)
    fig = Figure(figsize=(2 + 0.3 * weights.shape[1], 1.5 + 0.3 * weights.shape[0]), layout="constrained")
    ax = fig.subplots()
    ax.imshow(weights, cmap="viridis", aspect="auto")
    ax.set_xticks(range(weights.shape[1]), tokenizer.convert_ids_to_tokens(input_ids[0]), rotation=90)
    ax.set_yticks(range(weights.shape[0]), tokenizer.convert_ids_to_tokens(output_ids[0]))
    ax.set_xlabel("source token")
    ax.set_ylabel("decoder input")
    return fig


def translate(text: str, method: str, beams: float):
    text = (text or "").strip()
    if not text:
        return "", None, "Type an English sentence and press **Translate**."
    try:
        batch = tokenizer(text[:2000], return_tensors="pt", truncation=True, max_length=LIMIT)
        note = (
            "⚠️ The text was cut to the model's maximum length."
            if len(tokenizer(text, verbose=False)["input_ids"]) > LIMIT
            else ""
        )
        started = time.perf_counter()
        with torch.no_grad():
            output_ids = model.generate(
                **batch, num_beams=1 if method == "greedy" else int(beams), do_sample=False
            )
        elapsed_ms = (time.perf_counter() - started) * 1000
        translation = tokenizer.decode(output_ids[0], skip_special_tokens=True).strip()
        timing = f"Decoded in **{elapsed_ms:,.0f} ms** ({method})"
        return (
            translation,
            cross_attention(batch["input_ids"], output_ids),
            "\n\n".join(filter(None, [note, timing])),
        )
    except Exception as error:  # a request must never take the Space down
        return "", None, f"❌ The translation failed: {type(error).__name__}: {error}"


with gr.Blocks(title=f"{MODEL_REPO}: English → French") as demo:
    gr.Markdown(f"# English → French\n[{MODEL_REPO}](https://huggingface.co/{MODEL_REPO})")
    with gr.Row():
        with gr.Column():
            source = gr.Textbox(label="English", lines=4)
            method = gr.Radio(["greedy", "beam search"], value="greedy", label="Decoding")
            beams = gr.Slider(2, 8, value=4, step=1, label="Beams (beam search)")
            button = gr.Button("Translate", variant="primary")
            target = gr.Textbox(label="French", lines=4, interactive=False)
            message = gr.Markdown()
        attention = gr.Plot(label="Cross-attention")
    gr.Examples(EXAMPLES, inputs=source)
    button.click(translate, [source, method, beams], [target, attention, message])


if __name__ == "__main__":
    demo.launch()

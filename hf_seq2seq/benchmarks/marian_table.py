"""The printed table of a `hf_seq2seq.benchmarks.marian.run_benchmark` result (`hf-seq2seq benchmark`): ours
against Marian row by row, then the rows each option adds (batches by tokens, CUDA graphs, compiled training, the
opt-in generate() rows)."""

from hf_seq2seq.benchmarks.marian_runs import GENERATE_B64

HUB_USER_LABEL = "  as a Hub user (new tokens/s)"
"""The table's label of the `HUB_USER` row, under the batch-64 generate() row."""

# (label, figure, format, divided by) of ours against Marian
FIGURES = [
    ("training throughput (tokens/s)", "train_tokens_per_s", "{:,.0f}", 1),
    ("generate b=64 (new tokens/s)", GENERATE_B64, "{:,.0f}", 1),
    ("latency b=1 (ms/token)", "latency_b1_ms_per_token", "{:.2f}", 1),
    ("peak train memory (MB)", "peak_memory_mb", "{:.0f}", 1),
    ("training FLOP/s (G)", "train_flops_per_s", "{:.1f}", 1e9),
    ("training FLOP/s / matmul peak", "train_mfu", "{:.1%}", 1),
]
TRAINING_FIGURES = [FIGURES[0], FIGURES[4], FIGURES[5]]


def _cell(value: float | None, fmt: str) -> str:
    return "n/a" if value is None else fmt.format(value)


def _row(label: str, ours: float | None, marian: float | None, ratio: float, fmt: str) -> str:
    """A row of ours against Marian: both figures and ours over Marian."""
    return f"{label:34}{_cell(ours, fmt):>12}{_cell(marian, fmt):>12}{ratio:>12.2f}x"


def _figure_rows(figures: list, ours: dict, marian: dict, ratio: dict, skip_unmeasured: bool) -> list[str]:
    """The rows of `figures` (see `FIGURES`); with `skip_unmeasured`, none for a figure neither model has."""
    lines = []
    for label, key, fmt, scale in figures:
        if skip_unmeasured and ours[key] is None and marian[key] is None:
            continue  # not measured (--generate-only)
        a, b = (None if row[key] is None else row[key] / scale for row in (ours, marian))
        lines.append(_row(label, a, b, ratio.get(key, float("nan")), fmt))
    return lines


def _batches(result: dict, set_name: str) -> str:
    """What a batch set's batches are, for a row's label."""
    return f"{result['settings']['train_batch_size']} sentences" if set_name == "sentences" else "by tokens"


def _header(result: dict) -> list[str]:
    """The table's first lines: what was measured on what, and which decoding loop each model runs."""
    return [
        f"size={result['size']} {result['sizes']} device={result['device']} ({result['device_name']}), "
        f"{result['threads']} threads, {result['dtype']}; {result['matmul_peak_dtype']} matmul peak "
        f"{result['matmul_peak_flops_per_s'] / 1e9:.1f} GFLOP/s"
        + (f" ({result['matmul_peak_note']})" if result.get("matmul_peak_note") else ""),
        f"generate(): ours runs {result['generate_path']['ours']}, Marian {result['generate_path']['marian']}",
        "ours on "
        + (
            "packed weights (as `hf-seq2seq translate`)"
            if result["ours_packed_weights"]
            else "plain Linear layers"
        )
        + "; as a Hub user (the folder loaded with trust_remote_code, no hf_seq2seq) on plain Linear layers",
        f"{'':34}{'ours':>12}{'Marian':>12}{'ours/Marian':>13}",
    ]


def _token_batch_lines(result: dict) -> list[str]:
    """The table's rows of training on batches by tokens."""
    by_tokens = result["token_batches"]
    sentences = by_tokens["sentences_per_batch"]
    return [
        f"training on batches of up to {result['settings']['train_batch_tokens']:,} padded tokens "
        f"({min(sentences)}-{max(sentences)} sentences):"
    ] + _figure_rows(
        [(f"  {label}", *rest) for label, *rest in TRAINING_FIGURES],
        by_tokens["ours"],
        by_tokens["marian"],
        by_tokens["ratio_ours_over_marian"],
        skip_unmeasured=False,
    )


def _compiled_training_lines(result: dict) -> list[str]:
    """The table's rows of the compiled models' training (`compiled_training`)."""
    how = result["compiled_training_settings"]
    mode = f", {how['mode']}" if how.get("mode") else ""
    compiled = f"{how['backend']}{mode}, dynamic shapes" + (", layer by layer" if how["regions"] else "")
    lines = [
        f"training of torch.compile'd models ({compiled}; the first pass, compiling, timed apart):",
        f"{'':34}{'tokens/s':>12}{'peak':>8}{'x Marian':>10}{'x M. comp.':>12}{'first pass':>12}",
    ]
    for set_name, rows in result["compiled_training"].items():
        for name, model in (("ours compiled", "ours"), ("marian compiled", "Marian")):
            row = rows[name]
            over = (
                f"{rows['ours_compiled_over_marian']:>9.2f}x{rows['ours_compiled_over_marian_compiled']:>11.2f}x"
                if name == "ours compiled"
                else f"{'':>10}{'':>12}"
            )
            lines.append(
                f"{'  ' + model + ', ' + _batches(result, set_name):34}{row['train_tokens_per_s']:>12,.0f}"
                f"{_cell(row['train_mfu'], '{:.1%}'):>8}{over}{row['compile_and_first_pass_s']:>11.1f}s"
            )
    return lines


def _graphed_training_lines(result: dict) -> list[str]:
    """The table's rows of ours trained with CUDA graphs (`cuda_graphs`), beside both eager models in turn."""
    lines = [
        "training of ours with CUDA graphs, in turn with both eager models (the first passes timed apart):",
        f"{'':34}{'tokens/s':>12}{'peak':>8}{'x eager':>10}{'x Marian':>10}{'first passes':>16}",
    ]
    for set_name, rows in result["cuda_graphs"].items():
        row = rows["ours cuda graphs"]
        first = " + ".join(f"{s:.1f}" for s in rows["first_passes_s"])
        lines.append(
            f"{'  ours, ' + _batches(result, set_name):34}{row['train_tokens_per_s']:>12,.0f}"
            f"{_cell(row['train_mfu'], '{:.1%}'):>8}{rows['over_eager']:>9.2f}x{rows['over_marian']:>9.2f}x"
            f"{first:>15}s"
        )
    return lines


def _opt_in_lines(result: dict) -> list[str]:
    """The table's rows of the opt-in generate() rows of ours, against Marian."""
    lines = [
        f"opt-in generate() of ours, against Marian ({result['dtype']['marian']}):",
        f"{'':34}{'b=64 tok/s':>12}{'x Marian':>10}{'b=1 ms/tok':>12}{'x Marian':>10}  path",
    ]
    for name, row in result["opt_in"].items():
        over = row["ratio_over_marian"]
        lines.append(
            f"{name:34}{row[GENERATE_B64]:>12,.0f}{over[GENERATE_B64]:>9.2f}x"
            f"{row['latency_b1_ms_per_token']:>12.2f}{over['latency_b1_ms_per_token']:>9.2f}x"
            f"  {result['generate_path'][name]}"
        )
    return lines


def format_table(result: dict) -> str:
    """The printed table of a `run_benchmark` result: ours against Marian, row by row, then the opt-in rows."""
    ours, marian, ratio = result["ours"], result["marian"], result["ratio_ours_over_marian"]
    lines = _header(result)
    for figure in FIGURES:
        lines += _figure_rows([figure], ours, marian, ratio, skip_unmeasured=True)
        if figure[1] == GENERATE_B64:
            hub_user = result["ours_as_hub_user"]
            over = hub_user["ratio_over_marian"][GENERATE_B64]
            lines.append(_row(HUB_USER_LABEL, hub_user[GENERATE_B64], marian[GENERATE_B64], over, figure[2]))
    if result["token_batches"]:
        lines += _token_batch_lines(result)
    if result.get("cuda_graphs"):
        lines += _graphed_training_lines(result)
    if result.get("compiled_training"):
        lines += _compiled_training_lines(result)
    if result["opt_in"]:
        lines += _opt_in_lines(result)
    return "\n".join(lines)

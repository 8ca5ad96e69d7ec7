#!/usr/bin/env bash
# The device check of issue 47 on one CUDA GPU, under 9 minutes in all: `hf-seq2seq benchmark` of the paper's base
# size in bf16 (64-sentence batches, and batches of 25,000 tokens), then `hf-seq2seq train --preset gpu` for a
# 6-minute budget on fra-eng with its test BLEU. It prints the figures the issue asks for and writes them, named
# after the GPU (nvidia-smi's name), to docs/bench/<gpu>_gpu_check.json (the summary),
# docs/bench/<gpu>_benchmark_large_bf16.json (with ours also trained with CUDA graphs, as the preset trains),
# docs/bench/<gpu>_training_step_profile.json (the preset's step alone, with its CUDA graphs: kernels a step, the
# GPU's busy share, the attention kernels; measurements/profile_training_step.py) and
# docs/bench/<gpu>_gpu_preset_6min.json (test_results.json; the run's trainer_state.json beside it).
#
#   measurements/gpu_check.sh                       # on the GPU machine, from anywhere in the repository
#   GPU_CHECK_DRY_RUN=1 measurements/gpu_check.sh   # the same steps at toy sizes on the CPU, into a temporary folder
#
# It installs nothing and needs no network. It expects: the repository (its hf_seq2seq is put first on
# PYTHONPATH) and a Python ($PYTHON, default python3) with torch built for CUDA and the package's dependencies
# (pip install -e . done once); nvidia-smi; the fra-eng pairs as a fra.txt, from $HF_SEQ2SEQ_FRA_ENG or at
# shared/data/fra-eng/fra.txt in or beside the repository. GPU_CHECK_MINUTES sets the training budget (default 6;
# 0.3 in a dry run), GPU_CHECK_OUT the folder of the JSON (default docs/bench; a new temporary one in a dry run).
# GPU_CHECK_STEPS picks the steps (default "benchmark profile train"), so that the check can be split across calls
# that must each end sooner: the summary is written once the benchmark's and the training's JSON are both in
# docs/bench, from this call or an earlier one (the compiled benchmark's eager rows stand in for the benchmark's
# where it alone ran). The benchmark and the step profile run the attention kernels the preset trains with (its
# sdpa_backends: cuDNN's left out). The step "options" (not in the default; at most 150 s a variant) times the
# preset's step alone beside what could change it (measurements/profile_training_step.py, each on new batch shapes,
# then on seen ones): PyTorch's own choice of attention (cuDNN's on an H100 or H200, which builds a plan for each
# new shape) and the model torch.compile'd layer by layer (<gpu>_training_step_profile_<variant>.json;
# GPU_CHECK_VARIANTS picks some of cudnn, compiled_regions, and, not in the default, compiled (whole: more than
# 245 s on an H100), cudagraphs (compiled whole with torch.compile's mode reduce-overhead) and cuda_graphs (the
# eager step replayed as CUDA graphs, as `hf-seq2seq train --cuda_graphs true`)). The step
# "compiled" (not in the default; more than 290 s on an H200, 136 s on an H100 with --compile-regions) runs the
# benchmark with --compile-training (both models also compiled as `hf-seq2seq train --torch_compile true` compiles
# them, the compilation's seconds apart): <gpu>_benchmark_large_bf16_compiled.json. GPU_CHECK_BENCHMARK_FLAGS adds
# flags to both benchmarks (e.g. "--compile-regions"), GPU_CHECK_TRAIN_FLAGS to the training (e.g. "--torch_compile
# true"; ACCELERATE_DYNAMO_USE_REGIONAL_COMPILATION=1 in the environment compiles it layer by layer);
# GPU_CHECK_TAG=NAME then keeps the training's figures apart: <gpu>_gpu_preset_6min_NAME.json and
# <gpu>_gpu_check_NAME.json. The summary shows every variant measured.
# The step "screen" (not in the default; about 2 minutes a recipe) is the recipe's short screen: `hf-seq2seq
# compare` of the preset beside changes of it (GPU_CHECK_SCREEN: "NAME=PRESET FLAGS;..."; by default the learning
# rate 2e-3, 4,000 subwords, batches of 12,500 tokens), each trained with seed 0 for GPU_CHECK_SCREEN_MINUTES
# (default 1), stopped after GPU_CHECK_SCREEN_LIMIT seconds if set: <gpu>_gpu_screen.json, and each run's test
# figures as it ends, <gpu>_gpu_screen_<NAME>-seed0.json.
set -euo pipefail
root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"
export PYTHONPATH=$root${PYTHONPATH:+:$PYTHONPATH} HF_HUB_OFFLINE=1 HF_DATASETS_OFFLINE=1 TOKENIZERS_PARALLELISM=false
python=${PYTHON:-python3}
dry_run=${GPU_CHECK_DRY_RUN:-0}
minutes=${GPU_CHECK_MINUTES:-}
read -r -a extra_train_flags <<<"${GPU_CHECK_TRAIN_FLAGS:-}"
read -r -a extra_benchmark_flags <<<"${GPU_CHECK_BENCHMARK_FLAGS:-}"
tag=${GPU_CHECK_TAG:+_$GPU_CHECK_TAG}
steps=" ${GPU_CHECK_STEPS:-benchmark profile train} "

fail() { echo "gpu_check.sh: $*" >&2; exit 2; }

data=${HF_SEQ2SEQ_FRA_ENG:-}
for candidate in "$root/shared/data/fra-eng/fra.txt" "$root/../shared/data/fra-eng/fra.txt"; do
    [ -z "$data" ] && [ -f "$candidate" ] && data=$candidate
done
[ -n "$data" ] && [ -f "$data" ] || fail "no fra-eng pairs: set HF_SEQ2SEQ_FRA_ENG to a fra.txt (no download here)"
# the attention kernels the gpu preset trains with, for the benchmark and the step profile too (cuDNN's, which it
# leaves out, would also cost the check minutes of plan building on new shapes), and its step as it trains: replayed
# as CUDA graphs where the preset says so (on a GPU); read in one process, which imports torch and the package
read -r preset_attention preset_graphs < <("$python" -c "from hf_seq2seq.training.presets import PRESETS
print(PRESETS['gpu']['sdpa_backends'], PRESETS['gpu']['cuda_graphs'])" 2>/dev/null) \
    || fail "$python cannot import torch and hf_seq2seq: pip install -e . (with a CUDA build of torch) first"
attention=(--sdpa-backends "$preset_attention")
if [ "$dry_run" = 1 ]; then
    gpu="dry-run-cpu" device=cpu out=${GPU_CHECK_OUT:-$(mktemp -d)} minutes=${minutes:-0.3}
    benchmark_flags=(--quick --size tiny --device cpu --dtype fp32 --train-batch-tokens 300 "${attention[@]}"
        "${extra_benchmark_flags[@]}")
    profile_flags=(--device cpu --d-model 64 --ffn-dim 128 --heads 4 --layers 2 --batch-tokens 300 --steps 2
        "${attention[@]}")
    compile_flags=(--compile-backend eager)  # dynamo alone: inductor's C++ compilation would take minutes
    toy_flags=(--use_cpu true --bf16 false --vocab_size 500 --d_model 64 --encoder_layers 1 --decoder_layers 1
        --attention_heads 4 --ffn_dim 128 --max_tokens_per_batch 2000 --max_train_samples 3000
        --max_eval_samples 40 --max_test_samples 40 --eval_steps 30 --save_steps 30 --dataloader_num_workers 1
        --num_beams 2 --standard_test_set none)  # the 12,681-line standard set: minutes on a CPU
    train_flags=(--max_train_minutes "$minutes" "${toy_flags[@]}" "${extra_train_flags[@]}")
    screen_minutes=${GPU_CHECK_SCREEN_MINUTES:-0.1}
else
    "$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)" \
        || fail "no CUDA GPU: torch.cuda.is_available() is False (torch $("$python" -c 'import torch; print(torch.__version__)')); run it on a machine with an NVIDIA GPU and a CUDA build of torch, or GPU_CHECK_DRY_RUN=1 for a rehearsal on the CPU"
    command -v nvidia-smi >/dev/null || fail "nvidia-smi not found"
    gpu=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -n 1)
    device=cuda out=${GPU_CHECK_OUT:-$root/docs/bench} minutes=${minutes:-6}
    benchmark_flags=(--size large --device cuda --dtype bf16 --train-batch-tokens 25000 --repeats 3 "${attention[@]}"
        "${extra_benchmark_flags[@]}")
    profile_flags=(--device cuda --batch-tokens 25000 --steps 10 "${attention[@]}")
    compile_flags=()
    toy_flags=()
    train_flags=(--max_train_minutes "$minutes" "${extra_train_flags[@]}")
    screen_minutes=${GPU_CHECK_SCREEN_MINUTES:-1}
fi
slug=$(echo "$gpu" | tr '[:upper:]' '[:lower:]' | tr -cs 'a-z0-9' '-' | sed 's/^-*//; s/-*$//')
mkdir -p "$out"
run_dir=$(mktemp -d)
bench_json=$out/${slug}_benchmark_large_bf16.json train_json=$out/${slug}_gpu_preset_${minutes}min$tag.json
echo "== gpu_check on $gpu ($device), $(date -u +%FT%TZ), commit $(git rev-parse --short HEAD 2>/dev/null || echo '?')"

profile_json=$out/${slug}_training_step_profile.json
seconds_json=$out/${slug}_gpu_check_seconds$tag.json
[ -f "$seconds_json" ] || echo '{}' >"$seconds_json"
took() {  # took STEP SECONDS: kept beside the JSON, for a summary written by a later call
    "$python" -c "import json, sys; p = sys.argv[1]; d = json.load(open(p)); d[sys.argv[2]] = int(sys.argv[3]);
json.dump(d, open(p, 'w'))" "$seconds_json" "$1" "$2"
}

if [[ $steps == *" benchmark "* ]]; then
    started=$SECONDS
    echo "== hf-seq2seq benchmark ${benchmark_flags[*]}"
    timeout 170 "$python" -m hf_seq2seq benchmark "${benchmark_flags[@]}" --json "$bench_json"
    took benchmark $((SECONDS - started))
fi

if [[ $steps == *" profile "* ]]; then
    # the gpu preset's step alone: kernels a step, the GPU's busy share, which attention kernels run, host reads
    rm -f "$profile_json"
    preset_step=("${profile_flags[@]}")
    [ "$preset_graphs" != False ] && [ "$device" = cuda ] && preset_step+=(--cuda-graphs)  # None: where it can
    echo "== measurements/profile_training_step.py --timed ${preset_step[*]}"
    timeout 120 "$python" measurements/profile_training_step.py --timed "${preset_step[@]}" --json "$profile_json" \
        || echo "gpu_check.sh: the step profile failed (the rest goes on)" >&2
fi

if [[ $steps == *" options "* ]]; then
    # the model compiled whole is not among the default: on an H100 its compilation outlasted 245 s (docs/training.md)
    read -r -a variants <<<"${GPU_CHECK_VARIANTS:-cudnn compiled_regions}"
    for variant in "${variants[@]}"; do
        case $variant in
            cudnn) flags=(--sdpa-backends "") ;;  # PyTorch's own choice of attention: cuDNN's on an H100 or H200
            compiled) flags=(--compile full "${compile_flags[@]}") ;;
            compiled_regions) flags=(--compile regional "${compile_flags[@]}") ;;
            # CUDA graphs (a graph recorded for each new shape, then replayed: one launch a step)
            cudagraphs) flags=(--compile full --compile-mode reduce-overhead "${compile_flags[@]}") ;;
            # the eager step's forward and backward replayed as CUDA graphs, no compilation (--cuda_graphs true)
            cuda_graphs) flags=(--cuda-graphs) ;;
            *) fail "unknown GPU_CHECK_VARIANTS entry $variant: cudnn, compiled, compiled_regions, cudagraphs, cuda_graphs" ;;
        esac
        echo "== measurements/profile_training_step.py --timed ${profile_flags[*]} ${flags[*]}"
        timeout 150 "$python" measurements/profile_training_step.py --timed "${profile_flags[@]}" "${flags[@]}" \
            --json "$out/${slug}_training_step_profile_$variant.json" \
            || echo "gpu_check.sh: the step profile ($variant) failed (the rest goes on)" >&2
    done
fi

compiled_json=$out/${slug}_benchmark_large_bf16_compiled.json
if [[ $steps == *" compiled "* ]]; then
    started=$SECONDS
    echo "== hf-seq2seq benchmark ${benchmark_flags[*]} --compile-training ${compile_flags[*]}"
    timeout 420 "$python" -m hf_seq2seq benchmark "${benchmark_flags[@]}" --compile-training "${compile_flags[@]}" \
        --json "$compiled_json" || echo "gpu_check.sh: the benchmark with compiled training failed (the rest goes on)" >&2
    took compiled $((SECONDS - started))
fi

if [[ $steps == *" train "* ]]; then
    started=$SECONDS
    echo "== hf-seq2seq train --preset gpu ${train_flags[*]}"
    timeout "$(awk -v m="$minutes" 'BEGIN { print int(m * 60 + 180) }')" "$python" -m hf_seq2seq train --preset gpu --data_path "$data" \
        --output_dir "$run_dir/gpu" --disable_tqdm true "${train_flags[@]}"
    took train $((SECONDS - started))
    cp "$run_dir/gpu/test_results.json" "$train_json"
    # the run's log (loss, learning rate, each validation's seconds), for the training curve and where time went
    cp "$run_dir/gpu/trainer_state.json" "${train_json%.json}_trainer_state.json"
fi

if [[ $steps == *" screen "* ]]; then
    # the recipe's short screen: the preset beside changes of it, each trained for GPU_CHECK_SCREEN_MINUTES with seed
    # 0 by `hf-seq2seq compare` (as the cpu recipe was chosen: docs/recipe.md); each run's test figures are kept as it
    # ends, so that a call stopped early keeps the runs it finished
    IFS=';' read -r -a recipes <<<"${GPU_CHECK_SCREEN:-base=gpu;lr2e-3=gpu --learning_rate 2e-3;vocab4000=gpu --vocab_size 4000;tokens12500=gpu --max_tokens_per_batch 12500}"
    variant_flags=()
    for recipe in "${recipes[@]}"; do variant_flags+=(--variant "$recipe"); done
    started=$SECONDS
    echo "== hf-seq2seq compare ${variant_flags[*]} --max-train-minutes $screen_minutes --seeds 0"
    timeout "${GPU_CHECK_SCREEN_LIMIT:-$(awk -v m="$screen_minutes" -v n="${#recipes[@]}" 'BEGIN { print int(n * (m * 60 + 120)) }')}" \
        "$python" -m hf_seq2seq compare "${variant_flags[@]}" --max-train-minutes "$screen_minutes" --seeds 0 \
        --latency-sentences 20 --output-dir "$run_dir/screen" --json "$out/${slug}_gpu_screen.json" \
        -- --data_path "$data" --disable_tqdm true "${toy_flags[@]}" \
        || echo "gpu_check.sh: the screen stopped before its end (the runs it finished are kept)" >&2
    for report in "$run_dir"/screen/*/test_results.json; do
        [ -f "$report" ] && cp "$report" "$out/${slug}_gpu_screen_$(basename "$(dirname "$report")").json"
    done
    took screen $((SECONDS - started))
fi

keep_seconds=0
if [ ! -f "$bench_json" ] && [ -f "$compiled_json" ]; then
    # the compiled benchmark measured the eager models too, in the same run: its eager rows stand for the benchmark
    # (the steps' seconds are kept for a later call's summary, which the plain benchmark's would replace)
    bench_json=$compiled_json benchmark_flags+=(--compile-training "${compile_flags[@]}") keep_seconds=1
fi
if [ ! -f "$bench_json" ] || [ ! -f "$train_json" ]; then
    echo "gpu_check.sh: no summary yet: it needs $bench_json and $train_json (GPU_CHECK_STEPS=\"${steps# }\")"
    rm -rf "$run_dir"
    exit 0
fi
"$python" - "$gpu" "$bench_json" "$train_json" "$out/${slug}_gpu_check$tag.json" "$seconds_json" \
    "${benchmark_flags[*]}" "${train_flags[*]}" "$profile_json" "$out/${slug}" <<'EOF'
"""The summary: the figures issue 47 names, from the benchmark's and the training's JSON, and the variants of the
step (`options`) and the compiled benchmark (`compiled`) where they were measured."""
import glob
import json
import os
import sys

import torch

gpu, bench_path, train_path, summary_path, seconds_path, bench_flags, train_flags, profile_path, prefix = sys.argv[1:]
bench, train = json.load(open(bench_path)), json.load(open(train_path))
facts, by_tokens = train["training"], bench["token_batches"]
summary = {
    "gpu": gpu,
    "torch": torch.__version__,
    "commands": {
        "benchmark": f"hf-seq2seq benchmark {bench_flags}",
        "train": f"hf-seq2seq train --preset gpu --data_path fra.txt {train_flags}",
    },
    "wall_s": json.load(open(seconds_path)),  # each step's seconds, from whichever call ran it
    "benchmark": {
        "matmul_peak_dtype": bench["matmul_peak_dtype"],
        "matmul_peak_tflops_per_s": bench["matmul_peak_flops_per_s"] / 1e12,
        "train_64_sentences_ours_over_marian": bench["ratio_ours_over_marian"]["train_tokens_per_s"],
        "train_64_sentences_mfu": bench["ours"]["train_mfu"],
        "train_token_batch_tokens": bench["settings"]["train_batch_tokens"],
        "train_token_batch_tokens_per_s": by_tokens["ours"]["train_tokens_per_s"],
        "train_token_batch_mfu": by_tokens["ours"]["train_mfu"],
        "train_token_batch_ours_over_marian": by_tokens["ratio_ours_over_marian"]["train_tokens_per_s"],
        "generate_b64_ours_over_marian": bench["ratio_ours_over_marian"]["generate_b64_new_tokens_per_s"],
    },
    "train": {
        "train_tokens": facts["train_tokens"],
        "train_runtime_s": facts["train_runtime_s"],
        "train_tokens_per_s": facts["train_tokens"] / facts["train_runtime_s"],
        "global_step": facts["global_step"],
        "epochs": facts["epochs"],
        "test_bleu": train["bleu"],
        "test_beams": train["decoding"].get("num_beams", 1),
        "test_bleu_greedy": facts["greedy_bleu"],
        "test_chrf": train["chrf"],
        # how the step ran, where the flags changed it (`hf-seq2seq train`'s report facts)
        **{key: value for key, value in facts.items()
           if key.startswith(("torch_compile", "cuda_graph")) or key == "sdpa_backends"},
    },
}
if bench.get("cuda_graphs"):  # ours trained with CUDA graphs, as the preset trains on a GPU, in turn with both
    graphed = bench["cuda_graphs"]
    summary["benchmark"] |= {
        "train_64_sentences_ours_cuda_graphs_over_marian": graphed["sentences"]["over_marian"],
        "train_64_sentences_ours_cuda_graphs_over_eager": graphed["sentences"]["over_eager"],
        "train_token_batch_cuda_graphs_tokens_per_s": graphed["token_batches"]["ours cuda graphs"]["train_tokens_per_s"],
        "train_token_batch_cuda_graphs_mfu": graphed["token_batches"]["ours cuda graphs"]["train_mfu"],
        "train_token_batch_ours_cuda_graphs_over_marian": graphed["token_batches"]["over_marian"],
    }
if os.path.exists(profile_path):
    profile = json.load(open(profile_path))
    keys = ("train_tokens_per_s", "ms_per_step", "kernels_per_step", "kernel_busy_share", "attention_kernels",
            "host_reads_per_step")
    summary["step_profile"] = {key: profile[key] for key in keys}
    summary["step_profile"]["new_shapes_train_tokens_per_s"] = profile.get("new_shapes_train_tokens_per_s")
    summary["step_profile"]["cuda_graphs"] = profile.get("cuda_graphs", False)
variants = {}
for path in sorted(glob.glob(f"{prefix}_training_step_profile*.json")):
    profile = json.load(open(path))
    name = os.path.basename(path)[len(os.path.basename(prefix)) + len("_training_step_profile") :][1:-5]
    variants[name or "default"] = {
        key: profile.get(key)
        for key in ("sdpa_backends", "compile", "warm_up_s", "new_shapes_ms_per_step", "ms_per_step",
                    "train_tokens_per_s", "kernels_per_step", "kernel_busy_share")
    }
if variants:
    summary["step_variants"] = variants
if os.path.exists(f"{prefix}_benchmark_large_bf16_compiled.json"):
    compiled = json.load(open(f"{prefix}_benchmark_large_bf16_compiled.json"))
    rows = compiled["compiled_training"]
    summary["compiled_benchmark"] = {
        "settings": compiled["compiled_training_settings"],
        "sdpa_backends": compiled["settings"].get("sdpa_backends", "default"),
        "train_64_sentences_ours_compiled_over_marian": rows["sentences"]["ours_compiled_over_marian"],
        "train_64_sentences_ours_compiled_over_marian_compiled": rows["sentences"][
            "ours_compiled_over_marian_compiled"],
        "train_token_batch_ours_compiled_mfu": rows["token_batches"]["ours compiled"]["train_mfu"],
        "train_token_batch_ours_compiled_tokens_per_s": rows["token_batches"]["ours compiled"]["train_tokens_per_s"],
        "ours_compile_and_first_pass_s": rows["sentences"]["ours compiled"]["compile_and_first_pass_s"],
    }
json.dump(summary, open(summary_path, "w"), indent=2)
b, t = summary["benchmark"], summary["train"]
print(f"\n== {gpu}, torch {summary['torch']}")
print(f"benchmark ({b['matmul_peak_dtype']} matmul peak {b['matmul_peak_tflops_per_s']:.0f} TFLOP/s):")
print(f"  training, 64 sentences: {b['train_64_sentences_ours_over_marian']:.2f}x Marian, "
      f"{b['train_64_sentences_mfu']:.2%} of the peak")
print(f"  training, {b['train_token_batch_tokens']:,}-token batches: {b['train_token_batch_tokens_per_s']:,.0f} "
      f"tokens/s, {b['train_token_batch_mfu']:.3%} of the peak, {b['train_token_batch_ours_over_marian']:.2f}x Marian")
if "train_64_sentences_ours_cuda_graphs_over_marian" in b:
    print(f"  with CUDA graphs (as the preset trains): 64 sentences {b['train_64_sentences_ours_cuda_graphs_over_marian']:.2f}x"
          f" Marian ({b['train_64_sentences_ours_cuda_graphs_over_eager']:.2f}x eager ours); "
          f"{b['train_token_batch_tokens']:,}-token batches {b['train_token_batch_cuda_graphs_tokens_per_s']:,.0f} tokens/s, "
          f"{b['train_token_batch_cuda_graphs_mfu']:.3%} of the peak, {b['train_token_batch_ours_cuda_graphs_over_marian']:.2f}x Marian")
print(f"  generate() b=64: {b['generate_b64_ours_over_marian']:.2f}x Marian")
print(f"train --preset gpu: {t['train_tokens']:,} tokens in {t['train_runtime_s']:.0f} s = "
      f"{t['train_tokens_per_s']:,.0f} tokens/s, {t['global_step']} steps, {t['epochs']:.1f} epochs")
print(f"  test BLEU {t['test_bleu']:.1f} ({t['test_beams']} beams), greedy {t['test_bleu_greedy']:.1f}, "
      f"chrF {t['test_chrf']:.1f}")
if "step_profile" in summary:
    s = summary["step_profile"]
    print(f"the preset's step alone: {s['train_tokens_per_s']:,.0f} tokens/s, {s['kernels_per_step']:.0f} kernels a "
          f"step, GPU busy {s['kernel_busy_share']:.0%} of it (profiled), host reads {s['host_reads_per_step'] or 'none'}")
    if s["new_shapes_train_tokens_per_s"]:
        print(f"  the same batches the first time (shapes not seen before): {s['new_shapes_train_tokens_per_s']:,.0f} "
              "tokens/s")
    print(f"  attention kernels: {s['attention_kernels'] or 'none found'}")
for name, v in summary.get("step_variants", {}).items():
    # a profile written by an earlier version of the script lacks some figures: shown as "?"
    fig = lambda key, fmt: "?" if v[key] is None else format(v[key], fmt)  # noqa: E731
    print(f"step variant {name} (attention {v['sdpa_backends'] or 'default'}, compile {v['compile'] or 'no'}): "
          f"warm-up {fig('warm_up_s', '.1f')} s, new shapes {fig('new_shapes_ms_per_step', '.1f')} ms/step, seen "
          f"{fig('ms_per_step', '.1f')} ms/step = {fig('train_tokens_per_s', ',.0f')} tokens/s")
if "compiled_benchmark" in summary:
    c = summary["compiled_benchmark"]
    print(f"compiled benchmark ({c['settings']}, attention {c['sdpa_backends']}): 64 sentences "
          f"{c['train_64_sentences_ours_compiled_over_marian']:.2f}x eager Marian, "
          f"{c['train_64_sentences_ours_compiled_over_marian_compiled']:.2f}x compiled Marian; token batches "
          f"{c['train_token_batch_ours_compiled_tokens_per_s']:,.0f} tokens/s, "
          f"{c['train_token_batch_ours_compiled_mfu']:.3%} of the peak; compile + first pass "
          f"{c['ours_compile_and_first_pass_s']:.0f} s")
print(f"wrote {summary_path}")
EOF
rm -rf "$run_dir"
[ "$keep_seconds" = 1 ] || rm -f "$seconds_json"

#!/usr/bin/env bash
# Speed of an earlier commit of the package against the work tree, on this machine: `hf-seq2seq benchmark` of
# each, alternating (before, after, after, before, ...) so that a drift of the machine falls on both, with the
# same Python environment (the earlier commit's code is put first on PYTHONPATH). Each run writes its table and
# JSON to OUT/NAME_{before,after}_runK.{txt,json}. Run it on a quiet machine.
#
#   scripts/ab_benchmark.sh BEFORE_COMMIT NAME RUNS OUT [benchmark flags...]
#   scripts/ab_benchmark.sh 6307576 cpu-avx2_layout 2 docs/bench --generate-only --repeats 7 --latency-runs 10
set -euo pipefail
before_commit=$1 name=$2 runs=$3 out=$(realpath -m "$4")
shift 4
root=$(cd "$(dirname "$0")/.." && pwd)
before=$(mktemp -d)
trap 'git -C "$root" worktree remove --force "$before"' EXIT
git -C "$root" worktree add --detach --force "$before" "$before_commit" >/dev/null
mkdir -p "$out"

bench() {  # bench LABEL RUN: one benchmark of the code LABEL names
    local label=$1 run=$2 path=$root
    shift 2
    [ "$label" = before ] && path=$before
    local stem=$out/${name}_${label}_run${run}
    echo "== $label ($(git -C "$path" rev-parse --short HEAD)$([ "$label" = after ] && echo ', work tree'))"
    (cd "$path" && PYTHONPATH=$path python -m hf_seq2seq benchmark "$@" --json "$stem.json") \
        | tee "$stem.txt"
}

for run in $(seq 1 "$runs"); do
    if [ $((run % 2)) = 1 ]; then order="before after"; else order="after before"; fi
    for label in $order; do bench "$label" "$run" "$@"; done
done

#!/usr/bin/env bash
# The one prepared GPU check: on a CUDA machine, measure the GPU kernel model's
# micro-benchmarks (`nerframe probe --device cuda`), capture the tests' tiny NeRF and
# the two held-out models (benchmarks/heldout_models.py) forward, and one training
# iteration of each held-out model (`trace capture --train`), then compare every
# traced op with the GPU kernel model: the H200's figures (`--system h200`) and this
# machine's probe (`--probe`); last, a kernel profile of the hash grid's training
# iteration (benchmarks/train_profile.py). Everything is written to one folder, $OUT.
#
# Needs: Python with nerframe and its dependencies, a CUDA build of torch, an NVIDIA
# driver (nvidia-smi). Each stage is guarded (a time limit, its own log): one failing
# stage loses only its own results. The whole check takes about 2-4 minutes.
#
# Run from the repository root (or anywhere, with NERFRAME and PY pointing at the tools):
#   OUT=/tmp/gpu-out PY=python NERFRAME=nerframe bash benchmarks/gpu_check.sh
# Results in $OUT: cuda.probe.json; {tiny,vanilla,hashgrid}.trace.json (forward) and
# {vanilla,hashgrid}.train.trace.json; per trace *.h200.csv and *.probe.csv (measured
# vs predicted per op) with the summary lines in *.err; hashgrid.profile.json (the
# training iteration's kernels by phase); stages.txt (each stage's exit
# status and seconds); nvidia-smi.txt, versions.txt.
set -uo pipefail
OUT=${OUT:-gpu-out}
PY=${PY:-.venv/bin/python}
NERFRAME=${NERFRAME:-.venv/bin/nerframe}
RAYS=${RAYS:-4096}
DEVICE=${DEVICE:-cuda}  # DEVICE=cpu runs the same stages on the CPU (to check the script)
HERE=$(cd "$(dirname "$0")" && pwd)
ROOT=$(dirname "$HERE")
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
: > "$OUT/stages.txt"
cd "$ROOT" || exit 2

stage() {  # name command...: run one stage, log its output, status and time
    local name=$1
    shift
    local start=$SECONDS
    "$@" > "$OUT/$name.log" 2>&1
    local rc=$?
    echo "$name rc=$rc seconds=$((SECONDS - start))" | tee -a "$OUT/stages.txt"
    return 0
}

nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed" >> "$OUT/nvidia-smi.txt"
"$PY" -c "import sys, torch, nerframe; print(sys.version); print('torch', torch.__version__, \
'cuda', torch.version.cuda, 'available', torch.cuda.is_available()); print('nerframe', \
nerframe.__version__, nerframe.__file__)" > "$OUT/versions.txt" 2>&1
cat "$OUT/versions.txt"
if [ "$DEVICE" = cuda ] && ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    echo "error: torch has no CUDA here (see $OUT/versions.txt)" | tee -a "$OUT/stages.txt" >&2
    exit 2
fi

# class maps of the models (the model files live in the repository's tests/ and benchmarks/)
"$PY" - "$OUT" "$ROOT" <<'PY'
import sys
from pathlib import Path
out, root = Path(sys.argv[1]), Path(sys.argv[2])
sys.path[:0] = [str(root / "tests"), str(root / "benchmarks")]
import heldout_models, tiny_nerf
(out / "tiny.yaml").write_text(tiny_nerf.MAP)
(out / "heldout.yaml").write_text(heldout_models.MAP)
PY

stage probe timeout 100 "$NERFRAME" probe --device cuda -o "$OUT/cuda.probe.json"

compare() {  # name map: the trace against the H200 figures and this machine's probe
    timeout 60 "$NERFRAME" trace compare "$OUT/$1.trace.json" --map "$2" --system h200 \
        --format csv -o "$OUT/$1.h200.csv" 2> "$OUT/$1.h200.err"
    cat "$OUT/$1.h200.err"
    if [ -s "$OUT/cuda.probe.json" ]; then
        timeout 60 "$NERFRAME" trace compare "$OUT/$1.trace.json" --map "$2" \
            --probe "$OUT/cuda.probe.json" \
            --format csv -o "$OUT/$1.probe.csv" 2> "$OUT/$1.probe.err"
        cat "$OUT/$1.probe.err"
    fi
}
capture() {  # name target map [flags]: capture on CUDA, then compare
    local name=$1 target=$2 map=$3
    shift 3
    timeout 60 "$NERFRAME" trace capture "$target" --device "$DEVICE" --repeats 10 "$@" \
        -o "$OUT/$name.trace.json" && compare "$name" "$map"
}
export NERFRAME_RAYS=$RAYS
stage tiny capture tiny tests/tiny_nerf.py:build "$OUT/tiny.yaml"
stage vanilla capture vanilla benchmarks/heldout_models.py:build_vanilla "$OUT/heldout.yaml"
stage hashgrid capture hashgrid benchmarks/heldout_models.py:build_hashgrid "$OUT/heldout.yaml"
stage vanilla.train capture vanilla.train benchmarks/heldout_models.py:build_vanilla \
    "$OUT/heldout.yaml" --train
stage hashgrid.train capture hashgrid.train benchmarks/heldout_models.py:build_hashgrid \
    "$OUT/heldout.yaml" --train
# what the GPU ran in a hash-grid training iteration, kernel by kernel and phase by phase
stage hashgrid.profile timeout 120 "$PY" benchmarks/train_profile.py hashgrid \
    "$OUT/hashgrid.profile.json" --device "$DEVICE"
grep -h "median\|whole\|error" "$OUT"/*.err 2>/dev/null | sort | uniq -c | head -40
echo "results in $OUT"

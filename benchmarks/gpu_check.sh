#!/usr/bin/env bash
# The one prepared GPU check of issue 18 item 6: capture the tests' tiny NeRF and the
# two held-out models (benchmarks/heldout_models.py) on a CUDA device with
# `nerframe trace capture --device cuda` (timed with CUDA events after synchronising)
# and compare every traced op with the roofline system `h200:fp32` (the models run
# float32; torch does not use TF32 for float32 matmuls by default). Writes under $OUT.
#
# What it needs on the device machine (it has no network):
#   - Python 3.11 and nerframe's dependencies (pyproject.toml: polars, pyarrow, numba,
#     msgspec, pyyaml, ...), e.g. the repository's .venv carried with the run;
#   - a CUDA build of torch (e.g. torch 2.13.0+cu12x) installed from a local wheel
#     (pip install --no-index --find-links WHEELS torch). The CPU torch of this
#     project's environment is NOT enough: `torch.cuda.is_available()` is then False,
#     and the script stops with that message before capturing anything.
#   - an NVIDIA driver matching that CUDA build (nvidia-smi works).
#
# Run from the repository root:   OUT=/tmp/gpu-out bash benchmarks/gpu_check.sh
# Results: $OUT/{tiny,vanilla,hashgrid}.trace.json, the comparisons as CSV, the
# median |log10(measured / predicted)| lines (*.err) and nvidia-smi's report.
set -euo pipefail
OUT=${OUT:-gpu-out}
PY=${PY:-.venv/bin/python}
NERFRAME=${NERFRAME:-.venv/bin/nerframe}
mkdir -p "$OUT"
nvidia-smi > "$OUT/nvidia-smi.txt" 2>&1 || echo "nvidia-smi failed" >> "$OUT/nvidia-smi.txt"
if ! "$PY" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 1)"; then
    "$PY" -c "import torch; print('torch', torch.__version__, 'CUDA build:', torch.version.cuda)" \
        > "$OUT/gpu_check.txt" 2>&1 || echo "torch is not importable" > "$OUT/gpu_check.txt"
    echo "torch has no CUDA here: install a CUDA build of torch from a local wheel (see the header)" \
        | tee -a "$OUT/gpu_check.txt" >&2
    exit 2
fi
"$PY" - "$OUT" <<'PY'
import sys
from pathlib import Path
sys.path[:0] = ["tests", "benchmarks"]
import heldout_models, tiny_nerf
out = Path(sys.argv[1])
(out / "tiny.yaml").write_text(tiny_nerf.MAP)
(out / "heldout.yaml").write_text(heldout_models.MAP)
PY
run() {  # name target map
    "$NERFRAME" trace capture "$2" --device cuda --repeats 10 -o "$OUT/$1.trace.json"
    "$NERFRAME" trace compare "$OUT/$1.trace.json" --map "$3" --system h200:fp32 \
        --format csv -o "$OUT/$1.h200.csv" 2> "$OUT/$1.err" || true
    cat "$OUT/$1.err"
}
run tiny tests/tiny_nerf.py:build "$OUT/tiny.yaml"
run vanilla benchmarks/heldout_models.py:build_vanilla "$OUT/heldout.yaml"
run hashgrid benchmarks/heldout_models.py:build_hashgrid "$OUT/heldout.yaml"

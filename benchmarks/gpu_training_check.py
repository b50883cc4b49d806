"""Predict the held-out pair's training iteration on the H200 from a CPU capture, and
compare with the H200's timed iterations (``../shared/data/gpu/h200/training.json``).

Run from the repository root (not collected by pytest; 4,096 rays take about a minute;
the hash grid alone at 65,536 rays about five and 14 GB of memory, the vanilla NeRF
there far more)::

    .venv/bin/python benchmarks/gpu_training_check.py [--rays 4096] [--models vanilla,hashgrid]

For each model it captures one training iteration on this CPU (``capture(...,
train=True)``: every kernel the forward, the backward and the Adam step ran, recorded
as they run unrecorded), predicts the phases with the H200's kernel model (the
optimizer's per-parameter kernels merged as torch's CUDA foreach step,
`nerframe.gpu.foreach`) and prints them beside the measured phases, then the hash
grid's scatter-adds with the most lookups any one row took (``max_row_lookups``). The
traces are written under ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
H200 = HERE.parent.parent / "shared" / "data" / "gpu" / "h200" / "training.json"


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--rays", type=int, default=4096)
    parser.add_argument("--models", default="vanilla,hashgrid", help="[vanilla,hashgrid]")
    parser.add_argument("--out", type=Path, default=Path("gpu-training-out"))
    args = parser.parse_args()
    if not H200.is_file():
        print(f"error: {H200} is absent (the H200 reference measurements)", file=sys.stderr)
        return 2
    measured = json.loads(H200.read_text())["iterations"]
    os.environ["NERFRAME_RAYS"] = str(args.rays)  # read by heldout_models on import
    sys.path.insert(0, str(HERE))
    import heldout_models

    from nerframe.gpu import foreach, gpu_model
    from nerframe.trace import capture, write_trace

    model = gpu_model("h200")
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"{'model':<16}{'phase':<10}{'measured ms':>12}{'predicted ms':>14}{'ratio':>8}")
    for name in args.models.split(","):
        key = f"{name}@{args.rays}"
        if not hasattr(heldout_models, f"build_{name}"):
            print(f"error: no held-out model {name!r} (vanilla, hashgrid)", file=sys.stderr)
            return 2
        if key not in measured:
            print(f"{key}: not in training.json (rays measured: 4096, 65536)")
            continue
        net, inputs = getattr(heldout_models, f"build_{name}")()
        trace = capture(net, *inputs, repeats=1, warmup=1, name=name, train=True)
        write_trace(trace, args.out / f"{name}.{args.rays}.train.trace.json")
        assert trace.train is not None
        phases = {
            "forward": [k for c in trace.calls for k in c.kernels],
            "backward": [k for c in trace.calls for k in c.backward_kernels]
            + list(trace.train.loss_kernels),
            "adam": foreach(trace.train.optimizer_kernels),
        }
        total_m = total_p = 0.0
        for phase, kernels in phases.items():
            seconds = measured[key][f"{phase}_s"]
            predicted = model.predict(kernels).total_s
            total_m, total_p = total_m + seconds, total_p + predicted
            print(
                f"{key:<16}{phase:<10}{seconds * 1e3:12.2f}{predicted * 1e3:14.2f}"
                f"{seconds / predicted:8.2f}"
            )
        print(
            f"{key:<16}{'whole':<10}{total_m * 1e3:12.2f}{total_p * 1e3:14.2f}"
            f"{total_m / total_p:8.2f}"
        )
        runs = [k.max_row_lookups for c in trace.calls for k in c.backward_kernels]
        if any(runs):
            print(
                f"{key:<16}most lookups into one row, per scatter-add: "
                f"{', '.join(str(r) for r in runs if r)}"
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

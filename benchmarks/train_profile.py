"""The kernels of one training iteration of a held-out model, by name: what the GPU ran
in the forward, the backward and the optimizer step (``torch.profiler``), for costing
the backward's kernels against measurement (docs/traces.md, "Training iterations").

Run by ``benchmarks/gpu_check.sh`` (stage ``hashgrid.profile``); by hand::

    python benchmarks/train_profile.py hashgrid out.json            # CUDA
    python benchmarks/train_profile.py hashgrid out.json --device cpu

It writes one JSON object: the device, torch, the model and its rays, the phases'
wall times (CUDA-synchronised, median of the timed iterations) and, per kernel name
and phase, the calls and the device time (the kernels' own time on a GPU, the
operators' self time on a CPU), largest first.
"""

from __future__ import annotations

import argparse
import json
import statistics
import time
from pathlib import Path
from typing import Any

import heldout_models
import torch

PHASES = ("forward", "backward", "step")
WARMUP, TIMED = 3, 5


def _iteration(
    model: torch.nn.Module, inputs: tuple[torch.Tensor, ...], adam: Any, sync: Any
) -> dict[str, float]:
    """One training iteration (the loss of `nerframe trace capture --train`), each phase
    under a profiler label and timed to the device's completion."""
    seconds = {}
    start = time.perf_counter()
    with torch.profiler.record_function("forward"):
        loss = model(*inputs).square().mean()
        sync()
    seconds["forward"] = time.perf_counter() - start
    start = time.perf_counter()
    with torch.profiler.record_function("backward"):
        loss.backward()
        sync()
    seconds["backward"] = time.perf_counter() - start
    start = time.perf_counter()
    with torch.profiler.record_function("step"):
        adam.step()
        adam.zero_grad(set_to_none=True)
        sync()
    seconds["step"] = time.perf_counter() - start
    return seconds


def profile(name: str, device: str) -> dict[str, Any]:
    """The record of the module docstring for held-out model `name` on `device`."""
    model, inputs = getattr(heldout_models, f"build_{name}")()
    model = model.to(device)
    inputs = tuple(t.to(device) for t in inputs)
    adam = torch.optim.Adam(model.parameters())
    cuda = device.startswith("cuda")
    sync = torch.cuda.synchronize if cuda else (lambda: None)
    for _ in range(WARMUP):
        _iteration(model, inputs, adam, sync)
    timed = [_iteration(model, inputs, adam, sync) for _ in range(TIMED)]
    activities = [torch.profiler.ProfilerActivity.CPU]
    if cuda:
        activities.append(torch.profiler.ProfilerActivity.CUDA)
    with torch.profiler.profile(activities=activities) as prof:
        _iteration(model, inputs, adam, sync)
    kernels: dict[tuple[str, str], list[float]] = {}
    spans = {e.name: e for e in prof.events() if e.name in PHASES}
    for event in prof.events():
        on_device = event.device_type == torch.autograd.DeviceType.CUDA
        if cuda != on_device or event.name in PHASES:
            continue
        start = event.time_range.start
        phase = next(
            (p for p, s in spans.items() if s.time_range.start <= start <= s.time_range.end),
            "other",
        )
        own = (event.device_time if on_device else event.self_cpu_time_total) * 1e-6
        entry = kernels.setdefault((event.name, phase), [0, 0.0])
        entry[0] += 1
        entry[1] += own
    rows = [
        {"name": n, "phase": p, "calls": int(c), "seconds": s} for (n, p), (c, s) in kernels.items()
    ]
    rows.sort(key=lambda r: (-r["seconds"], r["name"], r["phase"]))
    return {
        "device": torch.cuda.get_device_name() if cuda else "cpu",
        "torch": str(torch.__version__),
        "model": name,
        "rays": heldout_models.RAYS,
        "phase_s": {p: statistics.median(t[p] for t in timed) for p in PHASES},
        "kernels": rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("model", choices=("vanilla", "hashgrid"))
    parser.add_argument("output", type=Path)
    parser.add_argument("--device", default="cuda")
    args = parser.parse_args()
    record = profile(args.model, args.device)
    args.output.write_text(json.dumps(record, indent=1) + "\n")
    for phase in PHASES:
        total = sum(r["seconds"] for r in record["kernels"] if r["phase"] == phase)
        wall = record["phase_s"][phase]
        print(f"{phase}: {wall * 1e3:.2f} ms wall, {total * 1e3:.2f} ms in kernels")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())

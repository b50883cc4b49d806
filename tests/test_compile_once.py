"""Every numba kernel compiles one specialisation, and a second process compiles none.

numba compiles a kernel once per combination of argument types (dtype, layout,
read-only or not, literal constants): a boundary that hands the same kernel
different array flavours pays seconds of compilation per flavour, on every user's
first calls. A child process, with a fresh numba cache folder, runs every built-in
pipeline on every built-in accelerator (both parallelisms, both workload models),
sweeps that take the single-block and the parallel path, schedules, and ops tables
that leave optional columns out or set them; it reports each kernel's
specialisations. A second child over the same cache folder must load every kernel
from the cache and compile nothing (`Dispatcher.stats`: cache hits, no misses).
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

# The workload (run in a child): every kernel entry the package reaches.
WORKLOAD = """
import importlib, json, pkgutil, sys, tempfile, time
from numba.core.registry import CPUDispatcher
import nerframe, nerframe.kernels

start = time.perf_counter()
for model in ("realistic", "spec"):
    for parallelism in ("split", "instance"):
        nerframe.analyze(None, "all", tempfile.mkdtemp(), parallelism=parallelism,
                         model=model, report=False)
grid = {"frequency_mhz": [500, 1000], "systolic_array_32x32.count": list(range(1, 1501))}
for parallelism in ("split", "instance"):
    nerframe.sweep("neurex", "neurex", {"frequency_mhz": [500, 1000]}, parallelism=parallelism)
    nerframe.sweep("neurex", "neurex", grid, parallelism=parallelism,
                   constraints={"fps": {"min": 30}})
nerframe.sweep("3dgs", "gscore", {"frequency_mhz": [500, 1000]})
nerframe.schedule("instant_ngp", "neurex", parallelism="instance", pipelined=False)
rows = [
    {"op_type": "MLP", "B": 64, "N": 8, "in_dim": 3, "num_layers": 2, "layer_width": 16},
    {"op_type": "MLP", "B": 64, "N": 8, "in_dim": 3, "num_layers": 3, "layer_width": 16,
     "out_dim": 4, "skip_connections": [1], "use_bias": False, "bitwidth": 8},
    {"op_type": "HashEncoding", "B": 4096, "N": 64},
    {"op_type": "Sorting", "B": 4, "N": 8, "backward": True},
    {"op_type": "RFFEncoding", "B": 16, "N": 4, "input_dim": 3, "num_features": 8,
     "use_sin_cos": False},
]
for n in range(1, len(rows) + 1):
    nerframe.costs(nerframe.operators(rows[:n]))
    nerframe.costs(nerframe.operators(rows[-n:] * 3000))
seconds = time.perf_counter() - start
kernels = {}
for info in pkgutil.iter_modules(nerframe.kernels.__path__):
    module = importlib.import_module(f"nerframe.kernels.{info.name}")
    for name, value in vars(module).items():
        if isinstance(value, CPUDispatcher) and value.__module__ == module.__name__:
            stats = value.stats
            kernels[f"{info.name}.{name}"] = {
                "signatures": [str(s) for s in value.signatures],
                "hits": sum(stats.cache_hits.values()),
                "misses": sum(stats.cache_misses.values()),
            }
json.dump({"seconds": seconds, "kernels": kernels}, sys.stdout)
"""


def _run(cache: Path) -> dict[str, dict[str, object]]:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(cache)}
    done = subprocess.run(
        [sys.executable, "-c", WORKLOAD], capture_output=True, text=True, env=env, check=False
    )
    assert done.returncode == 0, done.stderr
    report: dict[str, dict[str, object]] = json.loads(done.stdout)["kernels"]
    return report


@pytest.mark.slow
def test_one_specialisation_per_kernel_and_a_warm_cache_compiles_nothing(tmp_path: Path) -> None:
    cold = _run(tmp_path / "numba")
    used = {name: k for name, k in cold.items() if k["signatures"]}
    # the workload reaches the kernels (an empty report would pass vacuously)
    assert {"costs.cost_rows", "schedule._schedule_chunk", "sweep_chunk._block"} <= set(used)
    assert {"sweep_chunk._blocks", "sweep_chunk._own_blocks", "frames.frames"} <= set(used)
    several = {name: k["signatures"] for name, k in used.items() if len(k["signatures"]) > 1}
    assert not several, f"kernels with more than one specialisation: {several}"
    assert sum(int(k["misses"]) for k in used.values()) > 0  # the first child compiled

    warm = _run(tmp_path / "numba")
    compiled = {name: k["misses"] for name, k in warm.items() if k["misses"]}
    assert not compiled, f"compiled again in a second process: {compiled}"
    loaded = {name for name, k in warm.items() if k["hits"]}
    # every kernel the first child called from Python is loaded from the cache
    assert {"costs.cost_rows", "sweep_chunk._blocks", "frames.frames"} <= loaded

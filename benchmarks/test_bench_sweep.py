"""Sweeps at campaign scale, measured in one run (``benchmark.extra_info``):

- configurations/s of `nerframe.sweep` in memory and into a store, for the 5-op
  neurex graph and a traced 20-op graph (five passes of the tests' tiny NeRF,
  captured with torch; skipped without the trace extra), with the kernel alone as
  the ceiling;
- store mode as a share of in-memory (asserted >= 60 %): the median, over seven
  pairs of an in-memory run and the store run right after it, of their time ratio.
  Each pair sees the same load; the best of each side does not (this VM's speed
  swings by half within minutes, and best-of-each shares of the same code ranged
  from 0.57 to 0.87), so that ratio is recorded too (``store_share_best``);
- the local backend against a Dask LocalCluster on the same store sweep (parts
  asserted byte-identical);
- peak RSS of a 100 M-configuration sweep printing its best rows (asserted < 2 GB);
- the fused kernel on 1 and on 2 threads in the same run (`thread_scaling.py`, rounds
  interleaved): the speedup is asserted >= 1.8x on a machine with 2 cores to spare
  (``cpu_efficiency``, 1-thread over 2-thread CPU seconds, says whether threads
  contend where the cores are shared). ``python benchmarks/thread_scaling.py
  --threads 1,2,4,8,16`` measures more counts.

The target of 5 M configurations/s in memory for neurex on 2 cores is
asserted. The sweep spends most of its time in the fused chunk kernel
(`nerframe.kernels.sweep_chunk`; ``kernel_share``), whose own rate bounds it;
into a store, a writer thread encodes each Parquet part while the kernel computes
the next chunk, so ``store_share`` is what that encoding costs on top. CPU seconds
and the load average are recorded beside the wall times, as a loaded machine
inflates them.
Run with ``pytest benchmarks/test_bench_sweep.py``.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path

import numpy as np
import pytest

import nerframe
from nerframe.sweeps.evaluate import Evaluator, Task
from nerframe.sweeps.spec import sweep_spec

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
sys.path.insert(0, str(Path(__file__).resolve().parent))  # thread_scaling

CONFIGS = 1_000_000
GRID = {
    "frequency_mhz": np.linspace(200, 2000, 100),
    "systolic_array_32x32.count": np.arange(1, 101),
    "index_generation_unit.count": np.arange(1, 101),
}
MIN_STORE_SHARE = 0.6
TARGET_PER_S = 5e6
MAX_RSS_MB = 2048
MIN_SPEEDUP_2 = 1.8


def _traced(folder: Path) -> nerframe.Graph:
    """A traced graph of 20 ops: five passes of the tests' tiny NeRF (sampler, hash
    grid, MLP, renderer), each starting from the colour the last one rendered,
    captured with torch and mapped by the tiny NeRF's own map."""
    torch = pytest.importorskip("torch", reason="optional: the trace extra is not installed")
    import tiny_nerf

    from nerframe.trace import capture, trace_graph

    class Passes(torch.nn.Module):
        def __init__(self) -> None:
            super().__init__()
            self.passes = torch.nn.ModuleList(tiny_nerf.TinyNeRF() for _ in range(5))

        def forward(self, origins: torch.Tensor, directions: torch.Tensor) -> torch.Tensor:
            for nerf in self.passes:
                origins = origins + 0.01 * nerf(origins, directions)
            return origins

    torch.manual_seed(0)
    _, inputs = tiny_nerf.build()
    trace = capture(Passes(), *inputs, repeats=1, warmup=0)
    (folder / "tiny.yaml").write_text(tiny_nerf.MAP)
    return trace_graph(trace, [folder / "tiny.yaml"])


def _seconds(fn, repeat: int = 2) -> float:
    best = float("inf")
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        best = min(best, time.perf_counter() - start)
    return best


def _cpu_seconds(fn) -> float:
    start = time.process_time()
    fn()
    return time.process_time() - start


@pytest.mark.parametrize("graph_name", [pytest.param("neurex", marks=pytest.mark.quick), "traced"])
def test_sweep_rates(benchmark, measure, target, graph_name: str, tmp_path: Path) -> None:
    graph = nerframe.pipeline("neurex") if graph_name == "neurex" else _traced(tmp_path)
    accel = nerframe.accelerator("neurex")
    nerframe.sweep(graph, accel, {"frequency_mhz": [1000]})  # compile outside the timing
    result, in_memory = measure(nerframe.sweep, graph, accel, GRID, rounds=3)
    assert result.height == CONFIGS
    assert graph.ops.height == (5 if graph_name == "neurex" else 20)
    memories, stores = [], []
    for n in range(7):
        memories.append(_seconds(lambda: nerframe.sweep(graph, accel, GRID), 1))
        into = partial(nerframe.sweep, graph, accel, GRID, output=tmp_path / f"s{n}")
        stores.append(_seconds(into, 1))
    share = statistics.median(m / s for m, s in zip(memories, stores, strict=True))
    memory, store = min(memories), min(stores)
    spec = sweep_spec({"graphs": [graph], "hardware": accel, "grid": GRID})
    evaluate = Evaluator(spec)
    kernel = _seconds(lambda: evaluate.kernel(Task(0, 0, 0, 0, CONFIGS)), 3)
    benchmark.extra_info.update(
        ops=graph.ops.height,
        in_memory_per_s=round(CONFIGS / in_memory),
        store_per_s=round(CONFIGS / store),
        kernel_per_s=round(CONFIGS / kernel),
        store_share=round(share, 2),
        store_share_best=round(memory / store, 2),
        kernel_share=round(kernel / memory, 2),
        in_memory_cpu_s=round(_cpu_seconds(lambda: nerframe.sweep(graph, accel, GRID)), 3),
        store_cpu_s=round(
            _cpu_seconds(lambda: nerframe.sweep(graph, accel, GRID, output=tmp_path / "cpu")), 3
        ),
        load_average=round(os.getloadavg()[0], 2),
    )
    if graph_name == "neurex":
        rate = CONFIGS / in_memory
        target(rate >= TARGET_PER_S, f"{rate / 1e6:.2f} M configurations/s (target 5 M)")
    target(share >= MIN_STORE_SHARE, f"store mode at {share:.0%} of in memory (target 60 %)")


def test_local_against_dask_local_cluster(benchmark, measure, tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="optional: the dask extra is not installed")
    graph = nerframe.pipeline("neurex")
    spec = {"graphs": [graph], "hardware": "neurex", "grid": GRID, "chunk_size": 250_000}
    local = _seconds(lambda: nerframe.sweep(spec, output=tempfile.mkdtemp(dir=tmp_path)), 1)
    out = tmp_path / "dask"
    _, dask = measure(nerframe.sweep, spec, output=out, backend="dask")
    nerframe.sweep(spec, output=tmp_path / "reference")
    for part in sorted((tmp_path / "reference").rglob("*.parquet")):
        twin = out / part.relative_to(tmp_path / "reference")
        assert twin.read_bytes() == part.read_bytes()
    benchmark.extra_info.update(
        local_per_s=round(CONFIGS / local),
        dask_per_s=round(CONFIGS / dask),
        dask_over_local=round(local / dask, 2),
    )


def test_peak_rss_of_a_100m_sweep(benchmark, measure) -> None:
    # The child reports the peak of its own memory, VmHWM, which belongs to the address
    # space exec created. Not ru_maxrss: Linux carries that over from the forking
    # process, so after the costs benchmarks (GBs in this process) it gave their peak.
    code = (
        "import sys\n"
        "from nerframe.cli import main\n"
        "values = ','.join(str(v) for v in range(100, 10100))\n"
        "counts = ','.join(str(v) for v in range(1, 10001))\n"
        "main(['sweep', 'neurex', '--hardware', 'neurex', '--top', '3', '--yes',"
        " '--vary', 'frequency_mhz=' + values, '--vary', 'systolic_array_32x32.count=' + counts])\n"
        "peak = next(line for line in open('/proc/self/status') if line.startswith('VmHWM'))\n"
        "print(int(peak.split()[1]) // 1024, file=sys.stderr)\n"
    )

    def run() -> int:
        done = subprocess.run(
            [sys.executable, "-c", code], capture_output=True, text=True, check=True
        )
        return int(done.stderr.strip().splitlines()[-1])

    peak_mb, seconds = measure(run)
    benchmark.extra_info.update(
        configurations=100_000_000, peak_rss_mb=peak_mb, per_s=round(1e8 / seconds)
    )
    assert peak_mb < MAX_RSS_MB


@pytest.mark.quick
def test_sweep_kernel_on_two_threads(benchmark, measure, target) -> None:
    import numba
    import thread_scaling

    if numba.config.NUMBA_NUM_THREADS < 2:
        pytest.skip("optional: numba has fewer than 2 threads here")
    spec = thread_scaling.neurex_spec(2_000_000, 1_000_000)
    kernel = thread_scaling.sweep_kernel(spec)
    times = thread_scaling.measure({"kernel": kernel}, [1, 2], repeats=7)["kernel"]
    numba.set_num_threads(2)
    measure(kernel)  # the 2-thread run as the benchmark's own timing
    pairs = list(zip(times[1], times[2], strict=True))
    speedup = statistics.median(one[0] / two[0] for one, two in pairs)
    efficiency = statistics.median(one[1] / two[1] for one, two in pairs)
    benchmark.extra_info.update(
        configurations=spec.configurations,
        speedup_2_threads=round(speedup, 2),
        cpu_efficiency=round(efficiency, 2),
        load_average=round(os.getloadavg()[0], 2),
    )
    target(speedup >= MIN_SPEEDUP_2, f"2 threads ran {speedup:.2f}x 1 thread (target 1.8x)")

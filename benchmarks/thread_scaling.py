"""How the sweep kernel and the cost kernel scale with threads, measured in one run.

    python benchmarks/thread_scaling.py --threads 1,2,4,8,16 --points 100000000

Sweeps `--points` configurations of the neurex accelerator (clock x
index-generation units x systolic arrays) on the neurex graph with the fused chunk kernel
(`nerframe.kernels.sweep_chunk`, results into reused matrices, as a sweep into a
store computes them) and end to end in memory (`nerframe.sweep`, up to its
in-memory limit of rows), and costs an ops table of `--rows` rows (`nerframe.costs`),
at each thread count (`numba.set_num_threads`). Thread counts take turns within
each of `--repeats` rounds, so a load that comes and goes (other processes on the
cores) hits every count alike; the speedup is the median over rounds of that
round's 1-thread time over its n-thread time. On cores that other processes
share, wall times say little about scaling; the process's CPU seconds do: work
that scales costs the same CPU seconds at any thread count, while contention
(threads waiting on one cache line, spinning at a barrier) adds CPU seconds, so
``cpu efficiency`` (the median over rounds of 1-thread CPU seconds over n-thread
CPU seconds) is 1 for work that would scale linearly on idle cores. Prints a
table; needs only numpy, numba, polars and pyarrow besides nerframe.
"""

from __future__ import annotations

import argparse
import math
import statistics
import time
from collections.abc import Callable
from functools import partial

import numba
import numpy as np
import polars as pl

import nerframe
from nerframe.kernels.sweep_chunk import result_matrices
from nerframe.sweeps.evaluate import Evaluator, tasks
from nerframe.sweeps.runner import IN_MEMORY_ROWS, run
from nerframe.sweeps.spec import SweepSpec, sweep_spec


def neurex_spec(points: int, chunk: int) -> SweepSpec:
    """A sweep of at least `points` neurex configurations on the neurex graph."""
    counts = max(1, min(100, points))
    arrays = max(1, min(100, points // counts))
    units = max(1, math.ceil(points / (counts * arrays)))
    # The array count fastest, as in a sweep over it: every configuration times
    # the graph's GEMMs anew.
    grid = {
        "frequency_mhz": np.linspace(200, 2000, units),
        "index_generation_unit.count": np.arange(1, counts + 1),
        "systolic_array_32x32.count": np.arange(1, arrays + 1),
    }
    return sweep_spec(
        {"graphs": ["neurex"], "hardware": "neurex", "grid": grid, "chunk_size": chunk}
    )


def sweep_kernel(spec: SweepSpec) -> Callable[[], None]:
    """A function running the fused sweep kernel over the configurations of `spec`."""
    evaluate = Evaluator(spec)
    grid, chunk = spec.grid, spec.chunk_size
    work = list(tasks(spec))
    out = result_matrices(chunk, len(grid))

    def run() -> None:
        for task in work:
            size = task.stop - task.start
            view = out if size == chunk else result_matrices(size, len(grid))
            evaluate.kernel(task, view)

    return run


def costs(rows: int) -> Callable[[], None]:
    """A function costing an ops table of `rows` rows mixing the neurex graph's ops."""
    ops = nerframe.pipeline("neurex").ops
    table = pl.concat([ops] * math.ceil(rows / ops.height)).head(rows).rechunk()

    def run() -> None:
        nerframe.costs(table)

    return run


Job = Callable[[], object]
Times = dict[str, dict[int, list[tuple[float, float]]]]


def measure(work: dict[str, Job], threads: list[int], repeats: int) -> Times:
    """(wall, CPU) seconds of each piece of `work` at each thread count, `repeats` rounds."""
    seconds: Times = {name: {t: [] for t in threads} for name in work}
    for name, job in work.items():
        numba.set_num_threads(max(threads))
        job()  # compile and warm up outside the timing
        for r in range(repeats):
            # Rotate the order, so no count always runs right after another.
            for t in threads[r % len(threads) :] + threads[: r % len(threads)]:
                numba.set_num_threads(t)
                start, cpu = time.perf_counter(), time.process_time()
                job()
                seconds[name][t].append((time.perf_counter() - start, time.process_time() - cpu))
    return seconds


def _ratio(a: float, b: float) -> float:
    # A run too short for the clock's resolution has no ratio.
    return a / b if b > 0 else math.nan


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--threads", default="1,2", help="thread counts [1,2]")
    parser.add_argument("--points", type=int, default=2_000_000, help="sweep configurations")
    parser.add_argument("--rows", type=int, default=4_000_000, help="ops rows to cost")
    parser.add_argument("--chunk", type=int, default=1_000_000, help="sweep chunk size")
    parser.add_argument("--repeats", type=int, default=5, help="rounds")
    args = parser.parse_args(argv)
    threads = sorted({int(t) for t in args.threads.split(",")})
    try:  # numba refuses counts above its pool's size (NUMBA_NUM_THREADS)
        numba.set_num_threads(max(threads))
        numba.set_num_threads(min(threads))
    except ValueError as e:
        parser.error(f"--threads: {e}")
    spec = neurex_spec(args.points, min(args.chunk, args.points))
    work: dict[str, Job] = {"sweep kernel": sweep_kernel(spec)}
    size = {"sweep kernel": (spec.configurations, "configs/s")}
    if spec.configurations <= IN_MEMORY_ROWS:
        work["sweep"] = partial(run, spec)  # end to end, rows as one DataFrame
        size["sweep"] = size["sweep kernel"]
    work["costs"] = costs(args.rows)
    size["costs"] = (args.rows, "rows/s")
    seconds = measure(work, threads, args.repeats)
    print(
        f"{'work':<13} {'threads':>7} {'best s':>7} {'median s':>8} {'rate':>20} "
        f"{'speedup':>7} {'cpu s':>7} {'cpu efficiency':>14}"
    )
    for name, by_threads in seconds.items():
        one = by_threads[threads[0]]
        count, unit = size[name]
        for t, times in by_threads.items():
            wall = [w for w, _ in times]
            pairs = list(zip(one, times, strict=True))
            speedup = statistics.median(_ratio(a[0], b[0]) for a, b in pairs)
            efficiency = statistics.median(_ratio(a[1], b[1]) for a, b in pairs)
            cpu = statistics.median(c for _, c in times)
            print(
                f"{name:<13} {t:>7} {min(wall):>7.3f} {statistics.median(wall):>8.3f} "
                f"{f'{count / min(wall):,.0f} {unit}':>20} {speedup:>6.2f}x {cpu:>7.3f} "
                f"{efficiency:>14.2f}"
            )


if __name__ == "__main__":
    main()

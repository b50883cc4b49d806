"""The fused sweep kernel: every row is bit-identical to `nerframe.schedule` of its variant."""

from __future__ import annotations

import math
import os
import subprocess
import sys
from pathlib import Path

import numba
import numpy as np
import polars as pl
import pytest

import nerframe
from nerframe.kernels.sweep_chunk import INT_ROWS, claim
from nerframe.scheduling import bottleneck_names, frame_figures, overlaps
from nerframe.schemas import SWEEP_CYCLES, SWEEP_FIGURES
from nerframe.sweeps.evaluate import Evaluator, Task, tasks, variant
from nerframe.sweeps.parts import part_path, write_part
from nerframe.sweeps.spec import sweep_spec

# The figures a schedule's summary has too (area and peak come from the accelerator).
FIGURES = [
    "batches",
    *SWEEP_CYCLES,
    *(f for f in SWEEP_FIGURES if f not in ("area_mm2", "peak_tflops")),
    "bottleneck_module",
]


def _grid(accel: nerframe.Accelerator) -> dict[str, list[float]]:
    first, last = accel.modules[0].name, accel.modules[-1].name
    return {
        "frequency_mhz": [300, 1700],
        f"{first}.count": [1, 7],
        f"{last}.count": [1, 3],
        f"{last}.latency_cycles": [0, 100_000],
        f"{first}.throughput_ops_per_cycle": [3.5, 4096],
        f"{first}.power_uw": [0, 7.25e5],
        f"{last}.area_um2": [10, 3e6],
        "dram_bandwidth_gbps": [8, 2000],
        "dram_pj_per_byte": [0, 31],
    }


# Pre- and post-batch phases (gsarch), pre only (gbu), batches only (neurex), and a
# GPU, whose batches never overlap (rtx3090).
@pytest.mark.parametrize(
    ("graph", "hardware"),
    [("gsarch", "gsarch"), ("gbu", "gbu"), ("neurex", "neurex"), ("neurex", "rtx3090")],
)
@pytest.mark.parametrize("parallelism", ["split", "instance"])
def test_rows_are_bit_identical_to_single_schedules(
    graph: str, hardware: str, parallelism: str
) -> None:
    accel = nerframe.accelerator(hardware)
    grid = _grid(accel)
    constraints = {"avg_power_w": {"min": 0.05, "max": 40}, "fps": {"min": 1}}
    rows = nerframe.sweep(graph, accel, grid, parallelism=parallelism, constraints=constraints)
    assert rows.height == 2 ** len(grid)
    # Every fourth row: one schedule per variant is slow; the stride visits every axis value.
    for row in rows.gather_every(4).iter_rows(named=True):
        changed = variant(accel, {name: row[name] for name in grid})
        summary = nerframe.schedule(graph, changed, parallelism=parallelism).summary.row(
            0, named=True
        )
        assert {k: row[k] for k in FIGURES} == {k: summary[k] for k in FIGURES}
        # gbu's modules have no published area: NaN, a null in the rows.
        assert row["area_mm2"] == (None if math.isnan(changed.area_mm2) else changed.area_mm2)
        assert row["peak_tflops"] == (changed.peak_tflops or None)  # no FLOP unit: null
        power, fps = summary["avg_power_w"], summary["fps"]
        meets = power is not None and 0.05 <= power <= 40 and fps is not None and fps >= 1
        assert row["feasible"] == meets


def test_blocks_and_chunk_offsets_equal_the_array_path() -> None:
    """Chunks that start inside the kernel's blocks and grids longer than a block give
    what scheduling the task's configurations as arrays gives."""
    spec = sweep_spec(
        {
            "graphs": ["gsarch"],
            "hardware": "gsarch",
            "grid": {
                "frequency_mhz": np.linspace(100, 2000, 13).tolist(),
                "dram_bandwidth_gbps": [16, 64, 900],
                "feature_compute_unit.count": list(range(1, 80)),
            },
            "parallelism": "instance",
            "chunk_size": 1777,
        }
    )
    evaluate = Evaluator(spec)
    graph, mapped = evaluate.mapped(0, 0)
    for task in [Task(0, 0, 0, 1, 1778), Task(1, 0, 0, 1778, spec.hardware_points)]:
        rows = evaluate(task)
        assert rows["config"].to_list() == list(range(task.start, task.stop))
        configs = evaluate._configurations(task)
        run = mapped.run(configs, spec.parallelism, keep_ops=False)
        figures = frame_figures(run, configs, graph.batches, overlaps(spec.hardware, True))
        names = [m.name for m in spec.hardware.modules]
        expected_names = bottleneck_names(names, figures.pop("bottleneck"))
        assert rows["bottleneck_module"].to_list() == expected_names
        expected = pl.DataFrame(figures).fill_nan(None)
        assert rows.select(expected.columns).equals(expected)
        for name, values in spec.grid.items():
            index = np.unravel_index(np.arange(task.start, task.stop), spec.shape)
            axis = list(spec.grid).index(name)
            assert rows[name].to_list() == values[index[axis]].tolist()


def test_a_frame_beyond_int64_is_refused() -> None:
    graph = nerframe.pipeline("neurex", frame_pixels=2**40)  # 2**28 batches
    latency = {"systolic_array_32x32.latency_cycles": [0, 2**40]}
    assert nerframe.sweep(graph, "neurex", {"systolic_array_32x32.latency_cycles": [0]}).height
    # makespan and interval both exceed 2**40 cycles: about 2 * 2**40 * 2**28 = 2**69.
    with pytest.raises(nerframe.InvalidInputError, match=r"about 5.9e\+20 cycles, beyond"):
        nerframe.sweep(graph, "neurex", latency)


def test_store_parts_are_byte_identical_to_fresh_chunks(tmp_path: Path) -> None:
    """The writer hands a written part's memory back to the kernel: with many small
    chunks that happens often, and every part still holds exactly its own rows."""
    spec = sweep_spec(
        {
            "graphs": ["neurex"],
            "hardware": "neurex",
            "grid": {"frequency_mhz": list(range(100, 2100, 50)), "dram_pj_per_byte": [0, 9]},
            "constraints": {"fps": {"min": 100}},
            "chunk_size": 7,
        }
    )
    rows = nerframe.sweep(spec, output=tmp_path / "store").collect()
    assert rows.equals(nerframe.sweep(spec))
    evaluate = Evaluator(spec)
    for task in tasks(spec):
        part = part_path(tmp_path / "store", spec, ["neurex"], task)
        write_part(tmp_path / "fresh.parquet", evaluate(task))
        assert part.read_bytes() == (tmp_path / "fresh.parquet").read_bytes()


@numba.njit(parallel=True)
def _tickets(threads: int, total: int) -> np.ndarray:
    """Threads claim numbers below `total` as the chunk kernel claims its blocks, and
    count how often each number was handed out."""
    counter = np.zeros(1, np.int64)
    taken = np.zeros((threads, total), np.int64)
    for t in numba.prange(threads):
        while True:
            n = claim(counter)
            if n >= total:
                break
            taken[t, n] += 1
    return taken


def test_threads_claim_every_block_exactly_once() -> None:
    """Blocks go to whichever thread is free next: under contention no number may be
    handed out twice or skipped, whatever thread takes it."""
    threads = numba.get_num_threads()
    taken = _tickets(threads, 200_000)
    assert taken.sum(axis=0).tolist() == [1] * 200_000


_IDLE = """
import os, time, nerframe
grid = {"frequency_mhz": list(range(1, 3001))}  # three blocks: the parallel loop runs
idle = 0.0
for _ in range(20):
    nerframe.sweep("neurex", "neurex", grid)
    start = time.process_time()
    time.sleep(0.02)
    idle += time.process_time() - start
print(idle, os.environ.get("OMP_WAIT_POLICY", "unset"))
"""


def _idle_cpu(policy: str | None) -> tuple[float, str]:
    env = {k: v for k, v in os.environ.items() if k != "OMP_WAIT_POLICY"}
    if policy is not None:
        env["OMP_WAIT_POLICY"] = policy
    done = subprocess.run(
        [sys.executable, "-c", _IDLE], env=env, capture_output=True, text=True, check=True
    )
    seconds, used = done.stdout.split()
    return float(seconds), used


@pytest.mark.slow
def test_kernel_threads_sleep_between_sweep_chunks() -> None:
    """OpenMP threads spin about 8 ms after each parallel loop by default (160 ms of
    CPU over these twenty idle pauses); nerframe lets them sleep, unless told otherwise."""
    seconds, used = _idle_cpu(None)
    assert used == "PASSIVE"
    assert seconds < 0.02
    assert _idle_cpu("passive")[1] == "passive"


@pytest.mark.parametrize("when", ["at once", "after the caller", "never"])
def test_a_helper_thread_computes_blocks_of_the_same_chunk(when: str) -> None:
    """A store's writer thread joins the kernel when it is free: however late it comes
    (or if it never does), the chunk's rows equal those computed without it."""
    import threading

    spec = sweep_spec(
        {
            "graphs": ["neurex"],
            "hardware": "neurex",
            "grid": {"frequency_mhz": list(range(100, 2100)), "dram_pj_per_byte": [0, 3, 9]},
        }
    )  # 6,000 configurations: six blocks
    evaluate = Evaluator(spec)
    task = Task(0, 0, 0, 0, 6000)
    alone = evaluate.kernel(task)
    late: list = []
    helped = []

    def helper(work) -> None:
        if when == "at once":
            thread = threading.Thread(target=lambda: helped.append(work()))
            thread.start()
            late.append(thread)
        else:
            late.append(work)

    together = evaluate.kernel(task, helper=helper)
    copy = [m.copy() for m in together]
    if when == "after the caller":
        late.pop()()  # computes nothing: every block is done
    elif when == "at once":
        late.pop().join()
        assert helped == [None]
    rows = (slice(len(INT_ROWS)), slice(None), slice(None))  # the axes are float: the
    for a, b, c, r in zip(alone, together, copy, rows, strict=True):  # int rows unset
        assert np.array_equal(a[r], b[r]) and np.array_equal(b[r], c[r])

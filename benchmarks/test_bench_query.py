"""Named DuckDB queries over a 10-million-row result store and a 10-million-row sweep
store, and building the report of a 9-pair store.

The big store is synthetic: 20 pipelines of 100,000 ops on five built-in targets
(three accelerators and two GPUs, so that ``speedup`` has baselines) gives 10 M
schedule rows, and the same ops on 5 roofline systems 10 M roofline rows. Every
table is cast to its schema in `nerframe.schemas` (a column the schema gains or
loses fails the fixture by name), ``module_busy`` holds the busy cycles the
scheduler's `module_busy` gives for the synthetic schedule, and ``summary`` the
frame figures that follow from them. The sweep store is a real `nerframe.sweep` of
neurex over a 2-axis grid of 10 M configurations with area, power and energy
budgets. Both are written once per session.

Run with ``pytest benchmarks/test_bench_query.py``; ``extra_info`` holds rows/s
(input rows of the scanned table over the best time) and the report's seconds.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import polars as pl
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

import nerframe
from nerframe import schemas
from nerframe.accelerator_model import Accelerator
from nerframe.hardware import accelerator, accelerator_table, module_table
from nerframe.report import build_report
from nerframe.scheduling import Schedule, module_busy
from nerframe.sql import named_queries, query
from nerframe.store import TableWriter, write_manifest
from nerframe.taxonomy import op_types

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from cli_process import peak_kb
from store_fixture import write_store

T = TypeVar("T")

GRAPHS = 20
OPS = 100_000
# Built-in targets, so the accelerators and modules tables are what analyze writes;
# the two GPUs are the baselines of ``speedup``.
HARDWARE = ("neurex_server", "icarus", "instant3d", "a100", "rtx3090")
SYSTEMS = 5
RAYS = 4096
FRAME_PIXELS = 640_000
BATCHES = -(-FRAME_PIXELS // RAYS)
SCHEDULE_ROWS = GRAPHS * len(HARDWARE) * OPS
ROOFLINE_ROWS = GRAPHS * OPS * SYSTEMS
SUMMARY_ROWS = GRAPHS * len(HARDWARE)

SWEEP_GRID: dict[str, list[float]] = {
    "frequency_mhz": np.linspace(200, 2000, 3125).tolist(),
    "index_generation_unit.count": list(range(1, 3201)),
}
# Budgets that about a third of the grid meets (the rest is ``feasible`` false).
SWEEP_BUDGETS = {"area_mm2": 80.0, "avg_power_w": 1.0, "energy_per_frame_j": 0.25}
SWEEP_ROWS = len(SWEEP_GRID["frequency_mhz"]) * len(SWEEP_GRID["index_generation_unit.count"])

# Per named query: the store it runs on (a fixture) and the row count of the table it
# scans most, the throughput's numerator.
SCANNED = {
    "best_under_budget": ("sweep_store", SWEEP_ROWS),
    "bottlenecks": ("big_store", SCHEDULE_ROWS),
    "breakdown": ("big_store", SCHEDULE_ROWS),
    "matrix": ("big_store", SUMMARY_ROWS),
    "pareto": ("sweep_store", SWEEP_ROWS),
    "roofline": ("big_store", ROOFLINE_ROWS),
    "sensitivity": ("sweep_store", SWEEP_ROWS),
    "speedup": ("big_store", SUMMARY_ROWS),
    "top_ops": ("big_store", SCHEDULE_ROWS),
}


def _conform(frame: pl.DataFrame, schema: pl.Schema, table: str) -> pl.DataFrame:
    """`frame` with exactly the columns of `schema`, in its order and dtypes."""
    missing = [c for c in schema if c not in frame.columns]
    extra = [c for c in frame.columns if c not in schema]
    if missing or extra:
        raise AssertionError(
            f"the synthetic {table} table no longer matches schemas: "
            f"missing {missing}, not in the schema {extra}"
        )
    return frame.select(pl.col(c).cast(t) for c, t in schema.items())


def _ops(graph: int, rng: np.random.Generator) -> pl.DataFrame:
    kinds = list(op_types().values())
    pick = rng.integers(0, len(kinds), OPS)

    def column(values: list[object], dtype: pl.DataType) -> pl.Series:
        return pl.Series(values).cast(dtype).gather(pick)

    return pl.DataFrame(
        {
            "graph": f"g{graph:02d}",
            "op_id": np.arange(OPS, dtype=np.int32),
            "op_type": column([k.name for k in kinds], schemas.OP_TYPE),
            "category": column([k.category for k in kinds], schemas.CATEGORY),
            "backward": rng.random(OPS) < 0.3,
            # each op type's own scope: about a fifth of the ops are frame-scoped
            "scope": column([k.scope for k in kinds], schemas.SCOPE),
            "flops": rng.lognormal(18, 2, OPS),
            "bytes_total": rng.lognormal(16, 2, OPS),
        }
    )


def _schedule(ops: pl.DataFrame, accel: Accelerator, rng: np.random.Generator) -> pl.DataFrame:
    """The ops run one after another in frame time, the frame-scoped ones first (the
    frame's ``pre`` phase) and then one batch; each takes every instance of its module
    (split parallelism)."""
    compute = rng.integers(1, 100_000, OPS)
    memory = rng.integers(1, 100_000, OPS)
    duration = np.maximum(compute, memory) + 8
    names = np.array([m.name for m in accel.modules])
    counts = np.array([m.count for m in accel.modules], np.int64)
    module = rng.integers(0, len(names), OPS)
    batch = (ops.get_column("scope") == "batch").to_numpy()
    order = np.concatenate([np.flatnonzero(~batch), np.flatnonzero(batch)])
    start = np.empty(OPS, np.int64)
    start[order] = np.concatenate([[0], np.cumsum(duration[order])[:-1]])
    frame = ops.with_columns(
        accelerator=pl.lit(accel.name),
        module=pl.Series(names[module]),
        instances=pl.Series(counts[module]),
        first_instance=pl.lit(0),
        start_cycle=pl.Series(start),
        end_cycle=pl.Series(start + duration),
        duration_cycles=pl.Series(duration),
        compute_cycles=pl.Series(compute),
        memory_cycles=pl.Series(memory),
        bound=pl.Series(np.where(compute >= memory, "compute", "memory")),
        energy_j=pl.Series(duration * 1e-9),
        array_utilization=pl.lit(None, pl.Float64),
    )
    return _conform(frame, schemas.SCHEDULE, "schedule")


def _module_busy(schedule: pl.DataFrame, accel: Accelerator) -> pl.DataFrame:
    """Busy cycles per instance of every module in one batch:
    ceil(sum(duration * instances) / count) over the batch-scoped ops."""
    cycles = dict(
        schedule.filter(pl.col("scope") == "batch")
        .group_by("module")
        .agg((pl.col("duration_cycles") * pl.col("instances")).sum())
        .iter_rows()
    )
    rows = [
        {
            "graph": schedule.get_column("graph")[0],
            "accelerator": accel.name,
            "module": m.name,
            "count": m.count,
            "busy_cycles": -(-cycles.get(m.name, 0) // m.count),
        }
        for m in accel.modules
    ]
    return _conform(pl.DataFrame(rows), schemas.MODULE_BUSY, "module_busy")


def _summary(schedule: pl.DataFrame, busy: pl.DataFrame, accel: Accelerator) -> pl.DataFrame:
    """The frame figures of `schedule` by the scheduler's frame model: the ``pre``
    phase, then the batches streaming one interval apart (one after another on a GPU)."""
    batch = schedule.get_column("scope") == "batch"
    pre, one_batch = schedule.filter(~batch), schedule.filter(batch)
    pre_cycles = int(pre.get_column("duration_cycles").sum())
    makespan = int(one_batch.get_column("duration_cycles").sum())
    busiest = int(busy.get_column("busy_cycles").arg_max() or 0)
    interval = int(busy.get_column("busy_cycles")[busiest])
    pipelined = accel.kind != "gpu"
    stream = makespan + (BATCHES - 1) * interval if pipelined else BATCHES * makespan
    frame_cycles = pre_cycles + stream
    frame_time = frame_cycles / (accel.frequency_mhz * 1e6)
    energy = float(pre.get_column("energy_j").sum()) + BATCHES * float(
        one_batch.get_column("energy_j").sum()
    )
    bytes_per_cycle = (
        accel.dram_bandwidth_gbps * accel.memory_efficiency * 1e9 / (accel.frequency_mhz * 1e6)
    )
    utilization = max(
        float(phase.get_column("bytes_total").sum()) / (cycles * bytes_per_cycle)
        for phase, cycles in ((pre, pre_cycles), (one_batch, makespan))
    )
    area = accel.area_mm2
    row = {
        "graph": schedule.get_column("graph")[0],
        "accelerator": accel.name,
        "status": "ok",
        "message": None,
        "parallelism": "split",
        "pipelined": pipelined,
        "rays": RAYS,
        "frame_pixels": FRAME_PIXELS,
        "batches": BATCHES,
        "pre_cycles": pre_cycles,
        "makespan_cycles": makespan,
        "interval_cycles": interval,
        "post_cycles": 0,
        "frame_cycles": frame_cycles,
        "frame_time_s": frame_time,
        "fps": 1 / frame_time,
        "energy_per_frame_j": energy,
        "avg_power_w": energy / frame_time,
        "area_mm2": None if np.isnan(area) else area,
        "dram_utilization": utilization,
        "bottleneck_module": busy.get_column("module")[busiest],
        "total_flops": float(schedule.get_column("flops").sum()),
        "total_bytes": float(schedule.get_column("bytes_total").sum()),
        "frame_flops": float(pre.get_column("flops").sum())
        + BATCHES * float(one_batch.get_column("flops").sum()),
        "frame_bytes": float(pre.get_column("bytes_total").sum())
        + BATCHES * float(one_batch.get_column("bytes_total").sum()),
    }
    return _conform(pl.DataFrame([row]), schemas.SUMMARY, "summary")


def _roofline(ops: pl.DataFrame) -> pl.DataFrame:
    systems = pl.DataFrame(
        {"system": [f"s{i}" for i in range(SYSTEMS)], "peak_tflops": [1.0, 10, 100, 314, 989]}
    ).with_columns(bandwidth_gbps=pl.col("peak_tflops") * 8.0)
    peak = pl.col("peak_tflops") * 1e12
    bandwidth = pl.col("bandwidth_gbps") * 1e9
    frame = (
        ops.drop("scope")
        .join(systems, how="cross")
        .with_columns(
            intensity=pl.col("flops") / pl.col("bytes_total"),
            t_compute_s=pl.col("flops") / peak,
            t_memory_s=pl.col("bytes_total") / bandwidth,
        )
        .with_columns(
            time_s=pl.max_horizontal("t_compute_s", "t_memory_s"),
            attainable_flops_per_s=pl.min_horizontal(peak, pl.col("intensity") * bandwidth),
            bound=pl.when(pl.col("t_compute_s") >= pl.col("t_memory_s"))
            .then(pl.lit("compute"))
            .otherwise(pl.lit("memory")),
            ridge=peak / bandwidth,
        )
    )
    return _conform(frame, schemas.ROOFLINE, "roofline")


@pytest.fixture(scope="session")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("big-store")
    rng = np.random.default_rng(2024)
    accels = [accelerator(name) for name in HARDWARE]
    with TableWriter(store) as writer:
        writer.write(
            "accelerators",
            _conform(accelerator_table(accels), schemas.ACCELERATORS, "accelerators"),
        )
        writer.write("modules", _conform(module_table(accels), schemas.MODULES, "modules"))
        for g in range(GRAPHS):
            ops = _ops(g, rng)
            graph = ops.get_column("graph")[0]
            writer.write("roofline", _roofline(ops), pipeline=graph)
            for accel in accels:
                schedule = _schedule(ops, accel, rng)
                busy = _module_busy(schedule, accel)
                summary = _summary(schedule, busy, accel)
                # the scheduler's own definition of the busy cycles, on this schedule
                assert busy.equals(module_busy(Schedule(schedule, summary), accel))
                partition = {"pipeline": graph, "hardware": accel.name}
                writer.write("schedule", schedule, **partition)
                writer.write("module_busy", busy, **partition)
                writer.write("summary", summary, **partition)
    write_manifest(store, {"benchmark": "synthetic 10M-operator store"})
    return store


@pytest.fixture(scope="session")
def sweep_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("sweep") / "store"
    nerframe.sweep("neurex", "neurex", SWEEP_GRID, constraints=SWEEP_BUDGETS, output=store)
    return store


def _timed(function: Callable[[], T], times: list[tuple[float, float]]) -> Callable[[], T]:
    """`function`, recording each call's wall and CPU seconds (pytest-benchmark's own
    statistics are absent under --benchmark-disable; CPU time is steadier under load)."""

    def run() -> T:
        wall, cpu = time.perf_counter(), time.process_time()
        result = function()
        times.append((time.perf_counter() - wall, time.process_time() - cpu))
        return result

    return run


@pytest.mark.parametrize("name", sorted(named_queries()))
def test_named_query(
    benchmark: BenchmarkFixture, request: pytest.FixtureRequest, name: str
) -> None:
    if name not in SCANNED:
        pytest.fail(
            f"SCANNED has no entry for the named query {name!r}: add the store it runs "
            "on and the row count of the table it scans most"
        )
    fixture, scanned = SCANNED[name]
    store: Path = request.getfixturevalue(fixture)
    times: list[tuple[float, float]] = []
    result = benchmark.pedantic(_timed(lambda: query(name, store), times), rounds=2, iterations=1)
    assert result.height > 0
    wall, cpu = min(times)
    benchmark.extra_info["rows_scanned"] = scanned
    benchmark.extra_info["rows_out"] = result.height
    benchmark.extra_info["rows_per_s"] = round(scanned / wall)
    benchmark.extra_info["cpu_s"] = round(cpu, 3)
    benchmark.extra_info["load_average"] = round(os.getloadavg()[0], 2)


def test_build_report_of_nine_pairs(
    benchmark: BenchmarkFixture, tmp_path_factory: pytest.TempPathFactory
) -> None:
    store = write_store(
        tmp_path_factory.mktemp("nine-pairs"),
        graphs=("hashnerf_train", "gsplat", "rff_nerf"),
        accels=("edge_npu", "server_npu", "tiny_dsp"),
    )
    times: list[tuple[float, float]] = []
    path = benchmark.pedantic(_timed(lambda: build_report(store), times), rounds=2, iterations=1)
    assert path.exists()
    wall, cpu = min(times)
    benchmark.extra_info["pairs"] = 9
    benchmark.extra_info["seconds"] = round(wall, 3)
    benchmark.extra_info["cpu_s"] = round(cpu, 3)


# The most memory `nerframe query "SELECT * FROM sweep"` may take over the 10 M-row
# sweep store, whatever it prints or writes (before it streamed, the same query over a
# 9.8 M-row store took 14.8 GB to a terminal and 6.6 GB to a CSV file).
SELECT_STAR_KB = 1_000_000


@pytest.mark.parametrize(
    "output", ["table", "csv into a pipe", "all.csv", "all.parquet"], ids=lambda o: o.split()[0]
)
def test_select_star_streams(
    benchmark: BenchmarkFixture, sweep_store: Path, tmp_path: Path, output: str
) -> None:
    """Peak memory of a child process printing or writing every row of the sweep store."""
    args = ["query", "SELECT * FROM sweep", "--store", str(sweep_store)]
    if output == "csv into a pipe":
        args += ["--format", "csv"]
    elif output != "table":
        args += ["-o", str(tmp_path / output)]
    times: list[tuple[float, float]] = []
    peak = benchmark.pedantic(_timed(lambda: peak_kb(*args), times), rounds=1, iterations=1)
    if output.startswith("all."):
        assert (tmp_path / output).stat().st_size > 0
    benchmark.extra_info["rows"] = SWEEP_ROWS
    benchmark.extra_info["peak_rss_mb"] = round(peak / 1e3)
    benchmark.extra_info["seconds"] = round(min(times)[0], 3)
    assert peak < SELECT_STAR_KB, f"{output}: {peak / 1e3:.0f} MB"

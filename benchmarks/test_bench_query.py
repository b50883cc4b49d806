"""Named DuckDB queries over a 10-million-operator result store, and building the
report of a 9-pair store.

The big store is synthetic: 20 pipelines of 100,000 ops on 5 accelerators (10 M
schedule rows) and the same ops on 5 roofline systems (10 M roofline rows), written
once per session with polars through `nerframe.store.write_table`.

Run with ``pytest benchmarks/test_bench_query.py``; ``extra_info`` holds rows/s
(input rows of the scanned table over the best time) and the report's seconds.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import TypeVar

import numpy as np
import polars as pl
import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from nerframe import schemas
from nerframe.report import build_report
from nerframe.sql import named_queries, query
from nerframe.store import write_manifest, write_table
from nerframe.taxonomy import op_types

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from store_fixture import write_store

T = TypeVar("T")

GRAPHS = 20
ACCELERATORS = 5
OPS = 100_000
SYSTEMS = 5
SCHEDULE_ROWS = GRAPHS * ACCELERATORS * OPS
ROOFLINE_ROWS = GRAPHS * OPS * SYSTEMS

# The table each query scans most: its row count is the throughput's numerator.
SCANNED = {
    "roofline": ROOFLINE_ROWS,
    "bottlenecks": SCHEDULE_ROWS,
    "breakdown": SCHEDULE_ROWS,
    "matrix": GRAPHS * ACCELERATORS,
    "top_ops": SCHEDULE_ROWS,
}


def _ops(graph: int, rng: np.random.Generator) -> pl.DataFrame:
    kinds = list(op_types().values())
    pick = rng.integers(0, len(kinds), OPS)
    flops = rng.lognormal(18, 2, OPS)
    nbytes = rng.lognormal(16, 2, OPS)
    return pl.DataFrame(
        {
            "graph": f"g{graph:02d}",
            "op_id": np.arange(OPS, dtype=np.int32),
            "op_type": pl.Series([kinds[i].name for i in range(len(kinds))])
            .cast(schemas.OP_TYPE)
            .gather(pick),
            "category": pl.Series([kinds[i].category for i in range(len(kinds))])
            .cast(schemas.CATEGORY)
            .gather(pick),
            "backward": rng.random(OPS) < 0.3,
            "flops": flops,
            "bytes_total": nbytes,
        }
    )


def _schedule(ops: pl.DataFrame, accel: str, rng: np.random.Generator) -> pl.DataFrame:
    compute = rng.integers(1, 100_000, OPS)
    memory = rng.integers(1, 100_000, OPS)
    duration = np.maximum(compute, memory) + 8
    start = np.concatenate([[0], np.cumsum(duration)[:-1]])
    modules = np.array(["sampler", "encoder", "mlp", "renderer"])
    return ops.with_columns(
        accelerator=pl.lit(accel),
        module=pl.Series(modules[rng.integers(0, 4, OPS)]),
        instances=pl.Series(np.where(rng.random(OPS) < 0.5, 4, 1)),
        first_instance=pl.lit(0, pl.Int64),
        start_cycle=pl.Series(start),
        end_cycle=pl.Series(start + duration),
        duration_cycles=pl.Series(duration),
        compute_cycles=pl.Series(compute),
        memory_cycles=pl.Series(memory),
        bound=pl.Series(np.where(compute >= memory, "compute", "memory")),
        energy_j=pl.Series(duration * 1e-9),
    ).select(pl.col(c).cast(t) for c, t in schemas.SCHEDULE.items())


def _roofline(ops: pl.DataFrame) -> pl.DataFrame:
    systems = pl.DataFrame(
        {"system": [f"s{i}" for i in range(SYSTEMS)], "peak_tflops": [1.0, 10, 100, 314, 989]}
    ).with_columns(bandwidth_gbps=pl.col("peak_tflops") * 8.0)
    peak = pl.col("peak_tflops") * 1e12
    bandwidth = pl.col("bandwidth_gbps") * 1e9
    return (
        ops.join(systems, how="cross")
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
        .select(pl.col(c).cast(t) for c, t in schemas.ROOFLINE.items())
    )


def _summary(graph: str, accel: str, schedule: pl.DataFrame) -> pl.DataFrame:
    busiest = (
        schedule.group_by("module")
        .agg(pl.col("duration_cycles").sum())
        .sort("duration_cycles", "module", descending=[True, False])
    )
    makespan = int(schedule["end_cycle"].max())
    return pl.DataFrame(
        [
            {
                "graph": graph,
                "accelerator": accel,
                "status": "ok",
                "makespan_cycles": makespan,
                "interval_cycles": int(busiest["duration_cycles"][0]),
                "fps": 1e9 / makespan,
                "energy_per_frame_j": float(schedule["energy_j"].sum()),
                "bottleneck_module": busiest["module"][0],
            }
        ],
        schema=schemas.SUMMARY,
    )


@pytest.fixture(scope="session")
def big_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("big-store")
    rng = np.random.default_rng(2024)
    for g in range(GRAPHS):
        ops = _ops(g, rng)
        graph = ops["graph"][0]
        write_table(store, "roofline", _roofline(ops), pipeline=graph)
        for a in range(ACCELERATORS):
            accel = f"a{a}"
            schedule = _schedule(ops, accel, rng)
            write_table(store, "schedule", schedule, pipeline=graph, hardware=accel)
            summary = _summary(graph, accel, schedule)
            write_table(store, "summary", summary, pipeline=graph, hardware=accel)
    write_manifest(store, {"benchmark": "synthetic 10M-operator store"})
    return store


def _timed(function: Callable[[], T], times: list[float]) -> Callable[[], T]:
    """`function`, recording each call's wall time (pytest-benchmark's own statistics
    are absent under --benchmark-disable)."""

    def run() -> T:
        start = time.perf_counter()
        result = function()
        times.append(time.perf_counter() - start)
        return result

    return run


@pytest.mark.parametrize("name", sorted(named_queries()))
def test_named_query(benchmark: BenchmarkFixture, big_store: Path, name: str) -> None:
    times: list[float] = []
    result = benchmark.pedantic(
        _timed(lambda: query(name, big_store), times), rounds=2, iterations=1
    )
    assert result.height > 0
    benchmark.extra_info["rows_scanned"] = SCANNED[name]
    benchmark.extra_info["rows_out"] = result.height
    benchmark.extra_info["rows_per_s"] = round(SCANNED[name] / min(times))


def test_build_report_of_nine_pairs(
    benchmark: BenchmarkFixture, tmp_path_factory: pytest.TempPathFactory
) -> None:
    store = write_store(
        tmp_path_factory.mktemp("nine-pairs"),
        graphs=("hashnerf_train", "gsplat", "rff_nerf"),
        accels=("edge_npu", "server_npu", "tiny_dsp"),
    )
    times: list[float] = []
    path = benchmark.pedantic(_timed(lambda: build_report(store), times), rounds=2, iterations=1)
    assert path.exists()
    benchmark.extra_info["pairs"] = 9
    benchmark.extra_info["seconds"] = round(min(times), 3)

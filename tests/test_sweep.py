"""Design-space sweeps: every row equals a single schedule; chunks, stores, resumption."""

from __future__ import annotations

import dataclasses
import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import nerframe
from nerframe.kernels import reference_schedule as ref
from nerframe.mapping import map_operators, work
from nerframe.sweeps.evaluate import variant

MODULES = ["index_generation_unit", "systolic_array_32x32", "interpolation_compute_unit"]
GRID = {
    "frequency_mhz": [400, 1000],
    "dram_bandwidth_gbps": [16, 512],
    "systolic_array_32x32.count": [1, 3],
    "index_generation_unit.throughput_ops_per_cycle": [8, 96],
    "interpolation_compute_unit.latency_cycles": [0, 50],
}


@pytest.fixture(scope="module")
def neurex() -> nerframe.Graph:
    return nerframe.expand(nerframe.pipeline("neurex"))


def _expected(graph: nerframe.Graph, accel: nerframe.Accelerator, parallelism: str) -> dict:
    """Frame figures of `graph` on `accel` from the scalar reference scheduler and the
    frame formulas of spec/hardware.md, written out here (no code shared with sweeps)."""
    table = nerframe.costs(graph.ops)
    src, dst = graph.data_edges()
    n = graph.ops.height
    preds = [[int(s) for s, d in zip(src, dst, strict=True) if d == op] for op in range(n)]
    succs = [[int(d) for s, d in zip(src, dst, strict=True) if s == op] for op in range(n)]
    module = map_operators(table["op_type"], table["backward"], accel).tolist()
    counts = [m.count for m in accel.modules]
    # a module that keeps its data on chip moves no DRAM bytes
    dram_bytes = [
        0.0 if accel.modules[m].on_chip else b
        for m, b in zip(module, table["bytes_total"], strict=True)
    ]
    one = ref.schedule_one(
        ref.Graph(
            preds,
            succs,
            list(range(n)),
            module,
            # work in each module's unit (lookups, samples, FLOPs: tested in test_units)
            work(table, np.array(module), accel).tolist(),
            dram_bytes,
        ),
        ref.Config(
            count=counts,
            instances=counts if parallelism == "split" else [1] * len(counts),
            throughput=[m.throughput_ops_per_cycle for m in accel.modules],
            latency=[m.latency_cycles for m in accel.modules],
            power_uw=[m.power_uw for m in accel.modules],
            frequency_mhz=accel.frequency_mhz,
            dram_bandwidth_gbps=accel.dram_bandwidth_gbps,
            dram_pj_per_byte=accel.dram_pj_per_byte,
        ),
    )
    # a batch starts no more often than the DRAM moves its bytes (the memory
    # efficiency is 1 here), the DRAM then its bottleneck
    per_cycle = accel.dram_bandwidth_gbps * 1e9 / (accel.frequency_mhz * 1e6)
    dram = math.ceil(sum(dram_bytes) / per_cycle)
    interval = max(one.interval, dram)
    bottleneck = "dram" if dram > one.interval else accel.modules[one.bottleneck].name
    frame_cycles = one.makespan + (graph.batches - 1) * interval
    hz = accel.frequency_mhz * 1e6
    # every op is batch-scoped: SRAM traffic is each op's bytes, once per batch;
    # leakage runs for the whole frame
    sram = graph.batches * sum(table["bytes_total"]) * accel.sram_energy_pj_per_byte * 1e-12
    energy = graph.batches * one.energy_j + sram + accel.leakage_w * frame_cycles / hz
    return {
        "makespan_cycles": one.makespan,
        "interval_cycles": interval,
        "frame_cycles": frame_cycles,
        "fps": hz / frame_cycles,
        "energy_per_frame_j": energy,
        "avg_power_w": energy * hz / frame_cycles,
        "area_mm2": accel.area_mm2,
        "peak_tflops": accel.peak_tflops,
        "bottleneck_module": bottleneck,
    }


@pytest.mark.parametrize("parallelism", ["split", "instance"])
def test_every_row_equals_the_reference_schedule_of_its_variant(neurex, parallelism: str) -> None:
    # this oracle times an MLP by its module's throughput: the arrays' folded timing
    # has its own oracle (tests/test_systolic.py), so the server's arrays lose their shape
    server = nerframe.accelerator("neurex_server")
    shapeless = tuple(dataclasses.replace(m, array=None, dataflow=None) for m in server.modules)
    accel = dataclasses.replace(server, modules=shapeless)
    grid = {
        "frequency_mhz": [700, 1300],
        "systolic_array.count": [1, 16],
        "index_generation_unit.count": [4, 64],
        "dram_pj_per_byte": [0, 20],
    }
    result = nerframe.sweep(neurex, accel, grid, parallelism=parallelism)
    assert result.height == 16
    assert result["config"].to_list() == list(range(16))
    # The scheduler's topological order is 0..n-1 for this chain; the reference needs one.
    assert neurex.edges.filter(pl.col("src") >= pl.col("dst")).height == 0
    assert accel.memory_efficiency == 1
    assert "dram" in result["bottleneck_module"].to_list()  # the DRAM sets some intervals
    for row in result.iter_rows(named=True):
        expected = _expected(neurex, variant(accel, {k: row[k] for k in grid}), parallelism)
        for key, value in expected.items():
            if isinstance(value, float):
                assert row[key] == pytest.approx(value, rel=1e-12), key
            else:
                assert row[key] == value, key


def test_grid_order_last_parameter_fastest(neurex) -> None:
    result = nerframe.sweep(neurex, "neurex", GRID)
    assert result.height == math.prod(len(v) for v in GRID.values())
    assert result["frequency_mhz"].to_list()[:17] == [400.0] * 16 + [1000.0]
    assert result["interpolation_compute_unit.latency_cycles"].to_list()[:4] == [0, 50, 0, 50]
    assert result.schema["systolic_array_32x32.count"] == pl.Int64


def test_chunks_do_not_change_results(neurex) -> None:
    whole = nerframe.sweep(neurex, "neurex", GRID)
    assert nerframe.sweep(neurex, "neurex", GRID, chunk_size=5).equals(whole)


def test_store_is_queryable_and_resumable(neurex, tmp_path: Path) -> None:
    store = tmp_path / "sweep"
    first = nerframe.sweep(neurex, "neurex", GRID, output=store, chunk_size=10).collect()
    assert first.equals(nerframe.sweep(neurex, "neurex", GRID))
    parts = sorted((store / "sweep/graph=neurex/hardware=neurex").glob("*.parquet"))
    assert len(parts) == 4
    best = nerframe.query("SELECT max(fps) AS best FROM sweep", store)["best"].item()
    assert best == first["fps"].max()
    # An interrupted sweep: one chunk is missing, the others stay as they were.
    parts[2].unlink()
    kept = parts[0].stat().st_mtime_ns
    again = nerframe.sweep(neurex, "neurex", GRID, output=store, chunk_size=10)
    assert again.collect().equals(first)
    assert parts[0].stat().st_mtime_ns == kept and parts[2].exists()


def test_a_different_sweep_will_not_overwrite_a_store(neurex, tmp_path: Path) -> None:
    store = tmp_path / "sweep"
    nerframe.sweep(neurex, "neurex", GRID, output=store)
    with pytest.raises(nerframe.NerframeError, match="holds something other than this sweep"):
        nerframe.sweep(neurex, "neurex", {**GRID, "frequency_mhz": [500]}, output=store)


def test_a_store_from_before_the_dram_bottleneck_reads_but_is_not_resumed(
    neurex, tmp_path: Path
) -> None:
    # A store whose manifest lacks the sweep's `bottlenecks` (the rows' Enum of
    # bottleneck_module: written before 'dram' was one of them) reads as before ...
    store = tmp_path / "sweep"
    rows = nerframe.sweep(neurex, "neurex", GRID, output=store, chunk_size=10).collect()
    assert rows["bottleneck_module"].dtype == pl.Enum([*MODULES, "dram"])
    manifest = json.loads((store / "store.json").read_text())
    assert manifest["run"]["sweep"].pop("bottlenecks") == [*MODULES, "dram"]
    (store / "store.json").write_text(json.dumps(manifest))
    counted = nerframe.query("SELECT count(*) AS n FROM sweep", store)["n"].item()
    assert counted == rows.height
    # ... and, interrupted, is not resumed into parts of another Enum.
    manifest["run"]["complete"] = False
    (store / "store.json").write_text(json.dumps(manifest))
    next((store / "sweep/graph=neurex/hardware=neurex").glob("*.parquet")).unlink()
    with pytest.raises(nerframe.NerframeError, match="its bottlenecks differs"):
        nerframe.sweep(neurex, "neurex", GRID, output=store, chunk_size=10)


@pytest.mark.parametrize(
    ("grid", "message"),
    [
        ({"frequency": [1]}, r"unknown sweep parameter 'frequency' \(did you mean 'frequency_mhz'"),
        ({"systolic.count": [1]}, "MODULE in index_generation_unit, systolic_array_32x32"),
        ({"systolic_array_32x32.count": [1.5]}, "values must be integers"),
        ({"systolic_array_32x32.count": [0]}, "values must be > 0"),
        ({"frequency_mhz": []}, "non-empty list"),
        ({"dram_bandwidth_gbps": [float("nan")]}, "values must be finite"),
        ({"interpolation_compute_unit.latency_cycles": [-1]}, "values must be >= 0"),
    ],
)
def test_bad_grids(neurex, grid: dict, message: str) -> None:
    with pytest.raises(nerframe.NerframeError, match=message):
        nerframe.sweep(neurex, "neurex", grid)


def test_unmapped_graph_is_refused() -> None:
    with pytest.raises(nerframe.UnmappedError):
        nerframe.sweep(nerframe.pipeline("gbu"), "neurex", {"frequency_mhz": [1000]})

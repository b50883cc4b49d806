"""SQL over result stores: views, named queries against polars, and bad input."""

from __future__ import annotations

import json
import re
import shutil
from dataclasses import replace
from pathlib import Path

import polars as pl
import pytest
from store_fixture import write_store

import nerframe
from nerframe.errors import NerframeError
from nerframe.sql import connect, named_queries, query
from nerframe.store import TableWriter, tables, write_manifest

ANALYZE_VIEWS = {
    "ops",
    "edges",
    "costs",
    "schedule",
    "summary",
    "roofline",
    "module_busy",
    "accelerators",
    "modules",
}
# Named queries over a sweep store's table ``sweep`` (tested in tests/test_sweep_campaign.py).
SWEEP_QUERIES = {"pareto", "best_under_budget", "sensitivity"}


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return write_store(
        tmp_path_factory.mktemp("store"),
        graphs=("hashnerf_train", "gsplat", "rff_nerf"),
        accels=("edge_npu", "server_npu", "tiny_dsp"),
    )


@pytest.fixture(scope="module")
def frames(store: Path) -> dict[str, pl.DataFrame]:
    return {
        name: pl.read_parquet(files).with_columns(pl.col(pl.Enum).cast(pl.String))
        for name, files in tables(store).items()
    }


# A store written by hand (not by nerframe's models) whose query results are derived
# on paper in each test. Rows are stored out of order to check the queries' sorting.
ROOFLINE = {
    "graph": pl.String,
    "op_id": pl.Int32,
    "system": pl.String,
    "op_type": pl.String,
    "category": pl.String,
    "backward": pl.Boolean,
    "flops": pl.Float64,
    "bytes_total": pl.Float64,
    "intensity": pl.Float64,
    "attainable_flops_per_s": pl.Float64,
    "peak_tflops": pl.Float64,
    "bound": pl.String,
    "ridge": pl.Float64,
    "time_s": pl.Float64,
}
# System A: 10 TFLOP/s, 1 TB/s (ridge 10 FLOP/B); B: 100 TFLOP/s, 2 TB/s (ridge 50).
# Op 0: 2 GFLOP over 1 GB; op 1: 40 GFLOP over 1 GB.
ROOFLINE_ROWS = [
    ("g", 1, "A", "Mlp", "mlp", False, 4e10, 1e9, 40.0, 1e13, 10.0, "compute", 10.0, 4e-3),
    ("g", 0, "B", "Enc", "encoding", False, 2e9, 1e9, 2.0, 4e12, 100.0, "memory", 50.0, 5e-4),
    ("g", 0, "A", "Enc", "encoding", False, 2e9, 1e9, 2.0, 2e12, 10.0, "memory", 10.0, 1e-3),
]
SCHEDULE = {
    "graph": pl.String,
    "accelerator": pl.String,
    "op_id": pl.Int32,
    "op_type": pl.String,
    "category": pl.String,
    "backward": pl.Boolean,
    "module": pl.String,
    "instances": pl.Int32,
    "flops": pl.Float64,
    "bytes_total": pl.Float64,
    "duration_cycles": pl.Int64,
    "energy_j": pl.Float64,
    "bound": pl.String,
}
_ENC = ("Enc", "encoding", False, "enc", 2, 100.0, 10.0)
_MLP = ("Mlp", "mlp", False, "mlp", 1, 50.0, 40.0)
SCHEDULE_ROWS = [
    ("g", "y", 1, *_MLP, 12, 0.25, "memory"),
    ("g", "y", 0, *_ENC, 4, 0.5, "compute"),
    *(
        ("g", "x", i, *(_ENC if i < 4 else _MLP), cycles, 0.5 if i < 4 else 0.25, "compute")
        for i, cycles in enumerate([5, 30, 5, 10, 1, 2, 3, 4, 6, 7, 8, 9])
    ),
]
SUMMARY = {
    "graph": pl.String,
    "accelerator": pl.String,
    "status": pl.String,
    "fps": pl.Float64,
    "energy_per_frame_j": pl.Float64,
    "area_mm2": pl.Float64,
    "avg_power_w": pl.Float64,
    "frame_time_s": pl.Float64,
    "dram_utilization": pl.Float64,
    "bottleneck_module": pl.String,
    "message": pl.String,
}
SUMMARY_ROWS = [
    ("h", "x", "ok", 50.0, 0.02, 3.0, 1.0, 0.02, 0.5, "enc", None),
    ("g", "y", "unmapped", None, None, None, None, None, None, None, "y has no module for Foo"),
    ("g", "x", "ok", 100.0, 0.01, 2.0, 1.0, 0.01, 0.25, "mlp", None),
]


def approx(value: float) -> object:
    return pytest.approx(value, rel=1e-12)


@pytest.fixture(scope="module")
def hand_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("hand")
    with TableWriter(store) as writer:
        for table, schema, rows in [
            ("roofline", ROOFLINE, ROOFLINE_ROWS),
            ("schedule", SCHEDULE, SCHEDULE_ROWS),
            ("summary", SUMMARY, SUMMARY_ROWS),
        ]:
            writer.write(table, pl.DataFrame(rows, schema=schema, orient="row"), pipeline="g")
    write_manifest(store, {"command": "hand-written"})
    return store


def test_views_cover_every_table_without_hive_columns(store: Path) -> None:
    con = connect(store)
    views = {name for (name,) in con.execute("SELECT view_name FROM duckdb_views()").fetchall()}
    assert views >= ANALYZE_VIEWS | {"accelerators", "modules"}
    columns = [c[0] for c in con.execute("DESCRIBE schedule").fetchall()]
    assert "pipeline" not in columns and "hardware" not in columns
    assert con.execute("SELECT COUNT(*) FROM schedule").fetchone() == (7 * 3 + 5 * 2 + 4 * 3,)


def test_duckdb_draws_no_progress_bar_into_stdout(store: Path) -> None:
    # DuckDB draws its bar on stdout once a query runs over 2 s (a named query over a
    # 10 M-row sweep store did, in a pipe): stdout is the caller's table.
    con = connect(store)
    assert con.sql("SELECT current_setting('enable_progress_bar')").fetchall() == [(False,)]
    con.close()


def test_best_under_budget_breaks_fps_ties_by_energy_then_config(tmp_path: Path) -> None:
    # A module's power changes the energy and not the fps; its area changes neither:
    # all six rows tie on fps, two of them on energy too.
    grid = {
        "systolic_array_32x32.power_uw": [3.0e5, 1.0e5, 2.0e5],
        "systolic_array_32x32.area_um2": [2.0, 1.0],
    }
    # without leakage (which grows with the area), as the test's premise needs
    accel = replace(nerframe.accelerator("neurex"), leakage_uw_per_mm2=0.0)
    rows = nerframe.sweep(nerframe.pipeline("neurex"), accel, grid, output=tmp_path / "s")
    rows = rows.collect()
    assert rows["fps"].n_unique() == 1 and rows["energy_per_frame_j"].n_unique() == 3
    best = query("best_under_budget", tmp_path / "s")
    # config counts the last axis fastest: power 1e5 is the second value, area 2.0 the first
    assert best["config"].to_list() == [2]
    assert best.row(0) == rows.filter(config=2).row(0)


def test_named_queries_are_documented_and_use_analyze_views() -> None:
    queries = named_queries()
    analyze_queries = {"roofline", "bottlenecks", "breakdown", "matrix", "top_ops", "speedup"}
    assert set(queries) == analyze_queries | SWEEP_QUERIES
    for name, sql in queries.items():
        first = sql.splitlines()[0]
        assert first.startswith(f"-- {name}: "), first
        local = set(re.findall(r"\b(\w+)\s+AS\s*\(", sql, flags=re.IGNORECASE))
        used = set(re.findall(r"\b(?:FROM|JOIN)\s+(\w+)", sql, flags=re.IGNORECASE))
        views = {"sweep"} if name in SWEEP_QUERIES else ANALYZE_VIEWS
        assert used - local <= views, (name, used - local)


def test_roofline_query(hand_store: Path) -> None:
    # Rows come back sorted by graph, op id, system; peak_share = attainable / peak:
    # op 0 (2 FLOP/B) on A (10 TFLOP/s, ridge 10): 2e12 / 10e12 = 0.2; on B (100 TFLOP/s,
    # 2 TB/s): 4e12 / 100e12 = 0.04; op 1 (40 FLOP/B) on A reaches the peak: 1.0.
    got = query("roofline", hand_store)
    assert got.columns == [
        *list(ROOFLINE)[:10],
        "peak_share",
        *list(ROOFLINE)[11:],
    ]
    rows = [(r[0], r[1], r[2], r[10], r[11]) for r in got.rows()]
    assert rows == [
        ("g", 0, "A", pytest.approx(0.2, rel=1e-15), "memory"),
        ("g", 0, "B", pytest.approx(0.04, rel=1e-15), "memory"),
        ("g", 1, "A", pytest.approx(1.0, rel=1e-15), "compute"),
    ]
    assert got["time_s"].to_list() == [1e-3, 5e-4, 4e-3]


def test_bottlenecks_query(store: Path, frames: dict[str, pl.DataFrame]) -> None:
    got = query("bottlenecks", store)
    assert got.height == 8  # the unmapped pair has no bottleneck
    summary = frames["summary"].filter(status="ok").sort("graph", "accelerator")
    assert (
        got.select("graph", "accelerator", "bottleneck_module").rows()
        == summary.select("graph", "accelerator", "bottleneck_module").rows()
    )
    # The bottleneck's busy cycles per instance are, by definition, the scheduler's
    # interval; the share divides them by the makespan.
    assert got["busy_cycles"].to_list() == summary["interval_cycles"].cast(pl.Float64).to_list()
    assert got["busy_share"].to_list() == pytest.approx(
        (summary["interval_cycles"] / summary["makespan_cycles"]).to_list(), rel=1e-12
    )
    # Bound mix counted op by op in Python, not with the query's own grouping.
    schedule = frames["schedule"]
    for row in got.iter_rows(named=True):
        ops = schedule.filter(graph=row["graph"], accelerator=row["accelerator"]).rows(named=True)
        bounds = [op["bound"] for op in ops]
        memory_time = sum(op["duration_cycles"] for op in ops if op["bound"] == "memory")
        assert row["compute_bound_ops"] == bounds.count("compute")
        assert row["memory_bound_ops"] == bounds.count("memory")
        total = sum(op["duration_cycles"] for op in ops)
        assert row["memory_bound_time_share"] == pytest.approx(memory_time / total, rel=1e-12)
    assert got["compute_bound_ops"].sum() > 0 and got["memory_bound_ops"].sum() > 0


def _three_sorts_on_two_lanes(
    tmp_path: Path, name: str, bandwidth_gbps: float
) -> tuple[Path, Path]:
    """Analyzed into ``tmp_path / "out"`` with instance parallelism: three independent
    sorts (N = 4, 8, 2) on one module of two instances at `bandwidth_gbps`; the graph
    and accelerator files."""
    accel = {
        "name": name,
        "frequency_mhz": 1000,
        "dram_bandwidth_gbps": bandwidth_gbps,
        "dram_pj_per_byte": 0,
        "modules": [
            {
                "name": "alu",
                "type": "SAMPLING",
                "count": 2,
                "throughput_ops_per_cycle": 1,
                "latency_cycles": 0,
                "area_um2": 1,
                "power_uw": 1,
            }
        ],
        "operator_mapping": {"Sorting": "alu"},
    }
    accel_file = tmp_path / f"{name}.json"
    accel_file.write_text(json.dumps(accel))
    # Sorting of B=1, N=n costs n*log2(n) FLOPs: N=4 -> 8, N=8 -> 24, N=2 -> 2.
    graph_file = tmp_path / "three.json"
    ops = [{"op_type": "Sorting", "B": 1, "N": n, "bitwidth": 8} for n in (4, 8, 2)]
    graph_file.write_text(json.dumps({"name": "three", "ops": ops, "frame_pixels": 1}))
    nerframe.analyze(
        [str(graph_file)], [str(accel_file)], tmp_path / "out", parallelism="instance", report=False
    )
    return graph_file, accel_file


def test_bottlenecks_busy_cycles_under_instance_parallelism(tmp_path: Path) -> None:
    # Three independent ops of 8, 24 and 2 cycles on one module of two instances,
    # one instance each: 34 instance-cycles over 2 instances -> 17 per instance, the
    # scheduler's interval.
    graph_file, accel_file = _three_sorts_on_two_lanes(tmp_path, "two_lanes", 1000)
    got = query("bottlenecks", tmp_path / "out").row(0, named=True)
    schedule = nerframe.schedule(
        nerframe.read_graph(graph_file), str(accel_file), parallelism="instance"
    )
    durations = schedule.schedule["duration_cycles"].to_list()
    assert durations == [8, 24, 2]
    assert got["busy_cycles"] == 17.0 == -(-sum(durations) // 2)
    assert got["interval_cycles"] == 17


def test_bottlenecks_names_the_dram_with_its_busy_cycles(tmp_path: Path) -> None:
    # Three sorts on two lanes at 1 byte/cycle: every op is memory-bound (its bytes
    # take more cycles than its FLOPs), so the lanes are busy about half of the
    # bytes' cycles each and the DRAM all of them: the DRAM sets the interval.
    graph_file, _ = _three_sorts_on_two_lanes(tmp_path, "slow_dram", 1)
    got = query("bottlenecks", tmp_path / "out").row(0, named=True)
    table = nerframe.costs(nerframe.read_graph(graph_file).ops)
    assert (table["bytes_total"] > table["flops"]).all()
    moved = table["bytes_total"].sum()  # bytes at 1 byte/cycle
    assert got["bottleneck_module"] == "dram"
    assert got["busy_cycles"] == moved == got["interval_cycles"]
    assert got["busy_share"] == pytest.approx(moved / got["makespan_cycles"], rel=1e-12)


def test_breakdown_query(hand_store: Path) -> None:
    # Pair (g, x): ops 0-3 encoding (100 FLOPs, 10 B, 0.5 J each; 5+30+5+10 = 50 cycles),
    # ops 4-11 mlp (50 FLOPs, 40 B, 0.25 J each; 1+2+3+4+6+7+8+9 = 40 cycles): FLOPs
    # 400/400, bytes 40/320 of 360, cycles 50/40 of 90. Pair (g, y): op 0 encoding
    # (4 cycles), op 1 mlp (12 cycles).
    got = query("breakdown", hand_store)
    assert got.columns == [
        "graph",
        "accelerator",
        "category",
        "ops",
        "flops",
        "bytes_total",
        "busy_cycles",
        "energy_j",
        "flops_share",
        "bytes_share",
        "time_share",
    ]
    assert got.rows() == [
        ("g", "x", "encoding", 4, 400.0, 40.0, 50, 2.0, 0.5, approx(1 / 9), approx(5 / 9)),
        ("g", "x", "mlp", 8, 400.0, 320.0, 40, 2.0, 0.5, approx(8 / 9), approx(4 / 9)),
        ("g", "y", "encoding", 1, 100.0, 10.0, 4, 0.5, approx(2 / 3), 0.2, 0.25),
        ("g", "y", "mlp", 1, 50.0, 40.0, 12, 0.25, approx(1 / 3), 0.8, 0.75),
    ]


def test_matrix_query(hand_store: Path) -> None:
    # The summary rows, stored out of order, come back sorted by graph and accelerator.
    got = query("matrix", hand_store)
    assert got.columns == list(SUMMARY)
    assert got.rows() == [SUMMARY_ROWS[2], SUMMARY_ROWS[1], SUMMARY_ROWS[0]]


def test_top_ops_query(hand_store: Path) -> None:
    # Pair (g, x) has 12 ops of 5, 30, 5, 10, 1, 2, 3, 4, 6, 7, 8, 9 cycles (90 in all):
    # the ten longest, ops 0 and 2 tied at 5 in op-id order, ops 5 and 4 left out.
    got = query("top_ops", hand_store)
    assert got.columns == [
        "graph",
        "accelerator",
        "op_rank",
        "op_id",
        "op_type",
        "category",
        "backward",
        "module",
        "instances",
        "duration_cycles",
        "busy_share",
        "bound",
    ]
    x = got.filter(accelerator="x")
    assert x["op_rank"].to_list() == list(range(1, 11))
    assert x["op_id"].to_list() == [1, 3, 11, 10, 9, 8, 0, 2, 7, 6]
    assert x["duration_cycles"].to_list() == [30, 10, 9, 8, 7, 6, 5, 5, 4, 3]
    assert x["busy_share"].to_list() == [approx(c / 90) for c in (30, 10, 9, 8, 7, 6, 5, 5, 4, 3)]
    assert x.row(0) == (
        "g",
        "x",
        1,
        1,
        "Enc",
        "encoding",
        False,
        "enc",
        2,
        30,
        approx(1 / 3),
        "compute",
    )
    y = got.filter(accelerator="y").select("op_rank", "op_id", "module", "busy_share")
    assert y.rows() == [(1, 1, "mlp", 0.75), (2, 0, "enc", 0.25)]


def test_raw_sql(store: Path) -> None:
    got = query("SELECT accelerator, COUNT(*) AS pairs FROM summary GROUP BY ALL ORDER BY 1", store)
    assert got.rows() == [("edge_npu", 3), ("server_npu", 3), ("tiny_dsp", 3)]


def test_bad_sql_is_one_clear_line(store: Path) -> None:
    with pytest.raises(NerframeError) as error:
        query("SELEC graph FROM summary", store)
    message = str(error.value)
    assert "\n" not in message
    assert message.startswith("SQL query failed on store ")
    assert "Parser Error" in message and "SELEC" in message


def test_unknown_table_names_the_view(store: Path) -> None:
    with pytest.raises(NerframeError, match="nope"):
        query("SELECT * FROM nope", store)


def test_unknown_query_name_lists_the_names(store: Path) -> None:
    expected = (
        r"unknown query 'hot_ops' \(did you mean 'top_ops'\?\); "
        "named queries: best_under_budget, bottlenecks"
    )
    with pytest.raises(NerframeError, match=expected):
        query("hot_ops", store)
    with pytest.raises(NerframeError, match="empty query"):
        query("  ", store)


def test_missing_store(tmp_path: Path) -> None:
    with pytest.raises(NerframeError, match="not a nerframe result store"):
        query("matrix", tmp_path / "absent")
    with pytest.raises(NerframeError, match="not a nerframe result store"):
        connect(tmp_path)


def test_named_query_on_a_store_without_its_table(store: Path, tmp_path: Path) -> None:
    partial = tmp_path / "partial"
    shutil.copytree(store, partial)
    shutil.rmtree(partial / "roofline")
    with pytest.raises(NerframeError) as error:
        query("roofline", partial)
    assert str(error.value).startswith(f"query 'roofline' failed on store {partial}: ")
    assert "roofline" in str(error.value).split(": ", 1)[1]


def test_named_queries_on_an_analyze_store(tmp_path: Path) -> None:
    from nerframe.analysis import analyze

    hardware = ["neurex", "neurex_server", "xavier_nx"]
    store = analyze(["neurex"], hardware, output=tmp_path / "out", report=False).store
    summary = pl.read_parquet(tables(store)["summary"])
    for name in set(named_queries()) - SWEEP_QUERIES:
        assert query(name, store).height > 0, name
    fps = dict(summary.select("accelerator", "fps").iter_rows())
    speedup = query("speedup", store)
    # each accelerator against the one GPU of the store, fps over fps
    assert speedup.select("accelerator", "gpu").rows() == [
        ("neurex", "xavier_nx"),
        ("neurex_server", "xavier_nx"),
    ]
    assert speedup["speedup"].to_list() == [
        fps["neurex"] / fps["xavier_nx"],
        fps["neurex_server"] / fps["xavier_nx"],
    ]
    matrix = query("matrix", store)
    assert matrix.select("graph", "accelerator").rows() == sorted(
        summary.select("graph", "accelerator").rows()
    )

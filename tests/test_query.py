"""SQL over result stores: views, named queries against polars, and bad input."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from store_fixture import write_store

import nerframe
from nerframe.errors import NerframeError
from nerframe.sql import connect, named_queries, query
from nerframe.store import tables

ANALYZE_VIEWS = {"ops", "edges", "costs", "schedule", "summary", "roofline", "module_busy"}
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


def _same(got: pl.DataFrame, expected: pl.DataFrame) -> None:
    assert got.columns == expected.columns
    assert_frame_equal(got, expected, check_dtypes=False, rel_tol=1e-12)


def test_views_cover_every_table_without_hive_columns(store: Path) -> None:
    con = connect(store)
    views = {name for (name,) in con.execute("SELECT view_name FROM duckdb_views()").fetchall()}
    assert views >= ANALYZE_VIEWS | {"accelerators", "modules"}
    columns = [c[0] for c in con.execute("DESCRIBE schedule").fetchall()]
    assert "pipeline" not in columns and "hardware" not in columns
    assert con.execute("SELECT COUNT(*) FROM schedule").fetchone() == (7 * 3 + 5 * 2 + 4 * 3,)


def test_named_queries_are_documented_and_use_analyze_views() -> None:
    queries = named_queries()
    analyze_queries = {"roofline", "bottlenecks", "breakdown", "matrix", "top_ops"}
    assert set(queries) == analyze_queries | SWEEP_QUERIES
    for name, sql in queries.items():
        first = sql.splitlines()[0]
        assert first.startswith(f"-- {name}: "), first
        local = set(re.findall(r"\b(\w+)\s+AS\s*\(", sql, flags=re.IGNORECASE))
        used = set(re.findall(r"\b(?:FROM|JOIN)\s+(\w+)", sql, flags=re.IGNORECASE))
        views = {"sweep"} if name in SWEEP_QUERIES else ANALYZE_VIEWS
        assert used - local <= views, (name, used - local)


def test_roofline_query(store: Path, frames: dict[str, pl.DataFrame]) -> None:
    expected = (
        frames["roofline"]
        .select(
            "graph",
            "op_id",
            "system",
            "op_type",
            "category",
            "backward",
            "flops",
            "bytes_total",
            "intensity",
            "attainable_flops_per_s",
            peak_share=pl.col("attainable_flops_per_s") / (pl.col("peak_tflops") * 1e12),
            bound="bound",
            ridge="ridge",
            time_s="time_s",
        )
        .sort("graph", "op_id", "system")
    )
    got = query("roofline", store)
    _same(got, expected)
    assert got.filter(graph="gsplat", system="A100").height == 5


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


def test_bottlenecks_busy_cycles_under_instance_parallelism(tmp_path: Path) -> None:
    # Three independent ops of 8, 24 and 2 cycles on one module of two instances,
    # one instance each: 34 instance-cycles over 2 instances -> 17 per instance, the
    # scheduler's interval.
    accel = {
        "name": "two_lanes",
        "frequency_mhz": 1000,
        "dram_bandwidth_gbps": 1000,
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
    accel_file = tmp_path / "two_lanes.json"
    accel_file.write_text(json.dumps(accel))
    # Sorting of B=1, N=n costs n*log2(n) FLOPs: N=4 -> 8, N=8 -> 24, N=2 -> 2.
    graph_file = tmp_path / "three.json"
    ops = [{"op_type": "Sorting", "B": 1, "N": n, "bitwidth": 8} for n in (4, 8, 2)]
    graph_file.write_text(json.dumps({"name": "three", "ops": ops, "frame_pixels": 1}))
    nerframe.analyze(
        [str(graph_file)], [str(accel_file)], tmp_path / "out", "instance", report=False
    )
    got = query("bottlenecks", tmp_path / "out").row(0, named=True)
    schedule = nerframe.schedule(nerframe.read_graph(graph_file), str(accel_file), "instance")
    durations = schedule.schedule["duration_cycles"].to_list()
    assert durations == [8, 24, 2]
    assert got["busy_cycles"] == 17.0 == -(-sum(durations) // 2)
    assert got["interval_cycles"] == 17


def test_breakdown_query(store: Path, frames: dict[str, pl.DataFrame]) -> None:
    pair = ["graph", "accelerator"]
    expected = (
        frames["schedule"]
        .group_by("graph", "accelerator", "category")
        .agg(
            ops=pl.len().cast(pl.Int64),
            flops=pl.col("flops").sum(),
            bytes_total=pl.col("bytes_total").sum(),
            busy_cycles=pl.col("duration_cycles").sum(),
            energy_j=pl.col("energy_j").sum(),
        )
        .with_columns(
            flops_share=pl.col("flops") / pl.col("flops").sum().over(pair),
            bytes_share=pl.col("bytes_total") / pl.col("bytes_total").sum().over(pair),
            time_share=pl.col("busy_cycles") / pl.col("busy_cycles").sum().over(pair),
        )
        .sort("graph", "accelerator", "category")
    )
    got = query("breakdown", store)
    _same(got, expected)
    sums = got.group_by(pair).agg(pl.col("flops_share", "bytes_share", "time_share").sum())
    assert sums.select(pl.all().exclude(pair)).to_numpy() == pytest.approx(1.0)


def test_matrix_query(store: Path, frames: dict[str, pl.DataFrame]) -> None:
    columns = ["graph", "accelerator", "status", "fps", "energy_per_frame_j", "area_mm2"]
    columns += ["avg_power_w", "frame_time_s", "dram_utilization", "bottleneck_module", "message"]
    got = query("matrix", store)
    _same(got, frames["summary"].select(columns).sort("graph", "accelerator"))
    unmapped = got.filter(status="unmapped")
    assert unmapped.select("graph", "accelerator").rows() == [("gsplat", "edge_npu")]
    assert unmapped["fps"].is_null().all()
    assert "has no module for op types Projection, SubtileSkip" in unmapped["message"][0]


def test_top_ops_query(store: Path, frames: dict[str, pl.DataFrame]) -> None:
    pair = ["graph", "accelerator"]
    expected = (
        frames["schedule"]
        .sort("duration_cycles", "op_id", descending=[True, False])
        .with_columns(
            op_rank=pl.int_range(1, pl.len() + 1).over(pair).cast(pl.Int64),
            busy_share=pl.col("duration_cycles") / pl.col("duration_cycles").sum().over(pair),
        )
        .filter(pl.col("op_rank") <= 10)
        .select(
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
        )
        .sort("graph", "accelerator", "op_rank")
    )
    got = query("top_ops", store)
    _same(got, expected)
    assert got.group_by(pair).len()["len"].max() <= 10


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

    store = analyze(["neurex"], output=tmp_path / "out", report=False).store
    summary = pl.read_parquet(tables(store)["summary"])
    for name in set(named_queries()) - SWEEP_QUERIES:
        assert query(name, store).height > 0, name
    matrix = query("matrix", store)
    assert matrix.select("graph", "accelerator").rows() == sorted(
        summary.select("graph", "accelerator").rows()
    )

"""SQL over result stores: views, named queries against polars, and bad input."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import polars as pl
import pytest
from polars.testing import assert_frame_equal
from store_fixture import write_store

from nerframe.errors import NerframeError
from nerframe.sql import connect, named_queries, query
from nerframe.store import tables

ANALYZE_VIEWS = {"ops", "edges", "costs", "schedule", "summary", "roofline"}
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
    schedule = frames["schedule"]
    modules = schedule.group_by("graph", "accelerator", "module").agg(
        busy_cycles=(pl.col("duration_cycles") * pl.col("instances")).sum()
        / (pl.col("first_instance") + pl.col("instances")).max()
    )
    mix = schedule.group_by("graph", "accelerator").agg(
        compute_bound_ops=(pl.col("bound") == "compute").sum().cast(pl.Int64),
        memory_bound_ops=(pl.col("bound") == "memory").sum().cast(pl.Int64),
        memory_bound_time_share=pl.col("duration_cycles").filter(pl.col("bound") == "memory").sum()
        / pl.col("duration_cycles").sum(),
    )
    expected = (
        frames["summary"]
        .filter(status="ok")
        .join(
            modules,
            left_on=["graph", "accelerator", "bottleneck_module"],
            right_on=["graph", "accelerator", "module"],
            how="left",
        )
        .join(mix, on=["graph", "accelerator"], how="left")
        .select(
            "graph",
            "accelerator",
            "bottleneck_module",
            "busy_cycles",
            "makespan_cycles",
            "interval_cycles",
            busy_share=pl.col("busy_cycles") / pl.col("makespan_cycles"),
            compute_bound_ops="compute_bound_ops",
            memory_bound_ops="memory_bound_ops",
            memory_bound_time_share="memory_bound_time_share",
        )
        .sort("graph", "accelerator")
    )
    got = query("bottlenecks", store)
    _same(got, expected)
    assert got.height == 8  # the unmapped pair has no bottleneck
    # The store is scheduled with split parallelism (an op takes every instance of its
    # module), so the bottleneck's busy cycles per instance are the scheduler's interval.
    assert got["busy_cycles"].to_list() == got["interval_cycles"].cast(pl.Float64).to_list()
    assert got["compute_bound_ops"].sum() > 0 and got["memory_bound_ops"].sum() > 0


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

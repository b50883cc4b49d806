"""nerframe.analyze: the result store, the full matrix, atomic replacement."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import nerframe
from nerframe.schemas import TABLES


@pytest.fixture(scope="module")
def matrix(tmp_path_factory: pytest.TempPathFactory) -> nerframe.Analysis:
    out = tmp_path_factory.mktemp("matrix") / "store"
    return nerframe.analyze(["all"], "all", output=out, report=False)


def test_matrix_has_228_pairs_with_unmapped_reasons(matrix: nerframe.Analysis) -> None:
    s = matrix.summary
    # 12 built-in pipelines (gbu_train, 3dgs, instant_ngp included) x (10 accelerators
    # + 9 GPUs)
    assert s.height == 12 * 19
    ok = s.filter(status="ok")
    unmapped = s.filter(status="unmapped")
    assert ok.height + unmapped.height == 228
    reasons = "has no module for op types|a unit .+ does not count"
    assert unmapped["message"].str.contains(reasons).all()
    # a GPU runs every pipeline
    assert ok.filter(accelerator="xavier_nx").height == 12
    assert unmapped["fps"].is_null().all()
    assert ok["fps"].is_not_null().all()
    natives = {("neurex", "neurex"), ("gaurast", "gscore"), ("srender", "srender")}
    assert natives <= set(ok.select("graph", "accelerator").iter_rows())


def test_store_tables_follow_their_schemas(matrix: nerframe.Analysis) -> None:
    store = matrix.store
    manifest = json.loads((store / "store.json").read_text())
    assert manifest["rows"]["summary"] == 228
    for table in (
        "ops",
        "edges",
        "costs",
        "schedule",
        "summary",
        "roofline",
        "accelerators",
        "modules",
    ):
        parts = sorted((store / table).rglob("*.parquet"))
        assert parts, table
        frame = pl.concat([pl.read_parquet(p, hive_partitioning=False) for p in parts])
        assert frame.schema == TABLES[table], table
    assert (store / "schedule" / "pipeline=neurex" / "hardware=neurex" / "part-0.parquet").exists()
    assert not list(store.parent.glob(".store.*.tmp")), "temporary folders left behind"


def test_store_matches_the_api(matrix: nerframe.Analysis) -> None:
    stored = pl.read_parquet(matrix.store / "schedule/pipeline=gbu/hardware=gbu/part-0.parquet")
    direct = nerframe.schedule(nerframe.pipeline("gbu"), "gbu").schedule
    assert stored.equals(direct)


def test_native_default_and_deterministic_bytes(tmp_path: Path) -> None:
    a = nerframe.analyze(["neurex", "gsarch"], output=tmp_path / "a", report=False)
    b = nerframe.analyze(["neurex", "gsarch"], output=tmp_path / "b", report=False)
    assert a.summary.select("graph", "accelerator").rows() == [
        ("neurex", "neurex"),
        ("neurex", "neurex_server"),
        ("gsarch", "gsarch"),
    ]
    files = sorted(p.relative_to(a.store) for p in a.store.rglob("*.parquet"))
    assert files == sorted(p.relative_to(b.store) for p in b.store.rglob("*.parquet"))
    for f in files:
        assert (a.store / f).read_bytes() == (b.store / f).read_bytes(), f


def test_a_failed_run_keeps_the_old_store(tmp_path: Path) -> None:
    out = tmp_path / "store"
    nerframe.analyze(["neurex"], output=out, report=False)
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    with pytest.raises(nerframe.NerframeError, match="unknown accelerator 'nope'"):
        nerframe.analyze(["gbu"], ["nope"], output=out, report=False)
    with pytest.raises(nerframe.NerframeError, match="unknown pipeline"):
        nerframe.analyze(["gbu", "nope"], output=out, report=False)
    assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert sorted(x.name for x in tmp_path.iterdir()) == [".store.lock", "store"]  # lock: kept


def test_refuses_to_replace_a_foreign_folder(tmp_path: Path) -> None:
    (tmp_path / "mine").mkdir()
    (tmp_path / "mine" / "notes.txt").write_text("keep me")
    with pytest.raises(nerframe.NerframeError, match="not a nerframe result store"):
        nerframe.analyze(["neurex"], output=tmp_path / "mine", report=False)
    assert (tmp_path / "mine" / "notes.txt").read_text() == "keep me"


def test_custom_graph_needs_named_hardware(graph_file: Path, tmp_path: Path) -> None:
    with pytest.raises(nerframe.NerframeError, match="no native accelerator"):
        nerframe.analyze([str(graph_file)], output=tmp_path / "s", report=False)
    result = nerframe.analyze([str(graph_file)], ["neurex"], output=tmp_path / "s", report=False)
    assert result.summary["status"].to_list() == ["ok"]

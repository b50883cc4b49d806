"""Stores are checked against their manifests: ``nerframe verify STORE``, the cheap
check every reader runs, and damaged parts in query, report and sweep resume (the
defects D5 and D7 of ``shared/research/newuser_defects.md``, with the report's cases).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from nerframe import cli
from nerframe.errors import NerframeWarning
from nerframe.store import verify

# 5 frequencies x 3 array counts = 15 configurations in 3 chunks of 5 (the report's W)
SWEEP = [
    "sweep",
    "neurex",
    "--hardware",
    "neurex",
    "--vary",
    "frequency_mhz=200,400,600,800,1000",
    "--vary",
    "systolic_array_32x32.count=1,2,4",
    "--chunk-size",
    "5",
]
PARTS = "sweep/graph=neurex/hardware=neurex"


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    status = cli.main(list(args))
    out, err = capsys.readouterr()
    return status, out, err


def count(capsys: pytest.CaptureFixture[str], store: Path) -> tuple[str, str]:
    """`count(*)`, `count(distinct config)` of a sweep store, and the warnings."""
    sql = "select count(*) n, count(distinct config) d from sweep"
    status, out, err = run(capsys, "query", sql, "--store", str(store), "--format", "csv")
    assert status == 0, err
    return out.splitlines()[1], err


@pytest.fixture(scope="module")
def sweep_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("w") / "W"
    assert cli.main([*SWEEP, "-o", str(store)]) == 0
    return store


@pytest.fixture(scope="module")
def analysis_store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    store = tmp_path_factory.mktemp("a") / "A"
    args = ["analyze", "neurex", "instant_ngp", "--hardware", "neurex", "a100"]
    assert cli.main([*args, "-o", str(store), "--no-report"]) == 0
    return store


def copy(store: Path, tmp_path: Path) -> Path:
    target = tmp_path / store.name
    shutil.copytree(store, target)
    return target


def test_a_whole_store_verifies(sweep_store: Path, analysis_store: Path, capsys) -> None:
    for store in (sweep_store, analysis_store):
        status, out, err = run(capsys, "verify", str(store))
        assert (status, err) == (0, "")
        assert out == f"{store}: ok (every part whole and as its manifest says)\n"
    assert count(capsys, sweep_store) == ("15,15", "")


def test_duplicate_part_is_reported_and_not_read(sweep_store: Path, tmp_path, capsys) -> None:
    store = copy(sweep_store, tmp_path)
    shutil.copy(store / PARTS / "part-000001.parquet", store / PARTS / "part-000007.parquet")
    # the report's case: 20 rows, 15 distinct; now the copy is left out with a warning
    line, err = count(capsys, store)
    assert line == "15,15"
    assert err.startswith(f"warning: {store}/{PARTS}/part-000007.parquet: not a part of this")
    assert f"'nerframe verify {store}'" in err
    status, out, err = run(capsys, "verify", str(store))
    assert status == 1 and err == f"error: {store}: 1 problem (listed above)\n"
    assert out.startswith(f"{store}/{PARTS}/part-000007.parquet: not a part of this sweep")
    assert "remove it" in out
    # pareto (a named query) reads 15 rows too
    status, out, _ = run(capsys, "query", "select count(*) from sweep", "--store", str(store))
    assert status == 0 and out.split()[-1] == "15"


def test_foreign_part_and_edited_manifest(sweep_store: Path, tmp_path, capsys) -> None:
    store = copy(sweep_store, tmp_path)
    pl.DataFrame({"x": [1, 2]}).write_parquet(store / PARTS / "part-000003.parquet")
    assert count(capsys, store)[0] == "15,15"  # was 17 with 2 null rows
    manifest = json.loads((store / "store.json").read_text())
    manifest["nerframe_version"] = "99.0.0"
    (store / "store.json").write_text(json.dumps(manifest))
    _, err = count(capsys, store)
    assert "written by nerframe 99.0.0, newer than this nerframe" in err
    problems = verify(store)
    assert [p.path.name for p in problems] == ["store.json", "part-000003.parquet"]


def test_a_part_in_a_chunks_place_with_other_rows_or_columns(
    sweep_store: Path, tmp_path, capsys
) -> None:
    store = copy(sweep_store, tmp_path)
    part = store / PARTS / "part-000002.parquet"
    rows = pl.read_parquet(part)
    rows.head(3).write_parquet(part)  # 3 rows where chunk 2 has 5
    problems = verify(store)
    assert next((p.path, p.what) for p in problems) == (
        part,
        "holds 3 rows; chunk 2 of this sweep has 5",
    )
    rows.drop("fps").write_parquet(part)  # the right rows, a column less
    assert [p.what for p in verify(store)] == ["has other columns than the sweep's other parts"]
    # a missing chunk
    part.unlink()
    assert [p.what for p in verify(store)] == ["chunk 2 is missing"]


def test_analysis_store_rows_and_foreign_table(analysis_store: Path, tmp_path) -> None:
    store = copy(analysis_store, tmp_path)
    manifest = json.loads((store / "store.json").read_text())
    manifest["rows"]["summary"] = 999
    (store / "store.json").write_text(json.dumps(manifest))
    [problem] = verify(store)
    assert problem.path.name == "store.json"
    assert problem.what == "table summary holds 4 rows; the manifest lists 999"  # 2 x 2 pairs
    assert "nerframe analyze" in problem.repair
    extra = store / "notes" / "part-0.parquet"
    extra.parent.mkdir()
    pl.DataFrame({"x": [1]}).write_parquet(extra)
    from nerframe.sql import connect

    with pytest.warns(NerframeWarning, match="not a part of this store"):
        con = connect(store)
    views = {name for (name,) in con.sql("select view_name from duckdb_views()").fetchall()}
    con.close()
    assert "summary" in views and "notes" not in views


# ------------------------------------------------------------------ D7: damaged parts


@pytest.mark.parametrize("damage", ["truncate", "garbage"])
def test_damaged_part_is_one_line_in_query_and_verify(
    sweep_store: Path, tmp_path, capsys, damage: str
) -> None:
    store = copy(sweep_store, tmp_path)
    part = store / PARTS / "part-000001.parquet"
    if damage == "truncate":
        part.write_bytes(part.read_bytes()[:100])
    else:
        part.write_bytes(bytes(range(256)) * 20)
    for query in ("select count(*) from sweep", "pareto"):
        status, _, err = run(capsys, "query", query, "--store", str(store))
        assert status == 1 and err.count("\n") == 1, err
        assert err.startswith(f"error: {part}: not a whole Parquet file"), err
        assert "run the same sweep again" in err
    status, out, _ = run(capsys, "verify", str(store))
    assert status == 1 and out.startswith(f"{part}: not a whole Parquet file")


def test_sweep_resume_computes_a_damaged_part_again(sweep_store: Path, tmp_path, capsys) -> None:
    store = copy(sweep_store, tmp_path)
    part = store / PARTS / "part-000001.parquet"
    part.write_bytes(part.read_bytes()[:100])
    status, _, err = run(capsys, *SWEEP, "-o", str(store))
    assert status == 0, err
    assert f"warning: {part}: not a whole Parquet file (truncated or overwritten); computing" in err
    assert part.read_bytes() == (sweep_store / PARTS / part.name).read_bytes()
    assert verify(store) == []


def test_damaged_analysis_part_in_query_and_report(analysis_store: Path, tmp_path, capsys):
    store = copy(analysis_store, tmp_path)
    part = store / "summary" / "pipeline=instant_ngp" / "hardware=neurex" / "part-0.parquet"
    part.write_bytes(part.read_bytes()[:50])
    for args in (["query", "matrix", "--store", str(store)], ["report", str(store)]):
        status, _, err = run(capsys, *args)
        assert status == 1 and err.count("\n") == 1, err
        assert err.startswith(f"error: {part}: not a whole Parquet file"), err
        assert "run the same 'nerframe analyze' again" in err


def test_verify_of_no_store(tmp_path: Path, capsys) -> None:
    status, out, err = run(capsys, "verify", str(tmp_path / "none"))
    assert (status, out) == (1, "")
    assert err == f"error: {tmp_path / 'none'}: not a nerframe result store (no such folder)\n"


def test_manifest_chunks_against_its_grid(sweep_store: Path, tmp_path) -> None:
    store = copy(sweep_store, tmp_path)
    manifest = json.loads((store / "store.json").read_text())
    manifest["run"]["chunks"] = 10**30  # the report's edit: 15 configurations in 3 chunks of 5
    (store / "store.json").write_text(json.dumps(manifest))
    [problem] = verify(store)
    assert problem.what == f"it lists {10**30} chunks; its sweep's grid gives 3"
    del manifest["run"]["sweep"]["chunk_size"]  # a manifest that does not say: not checked
    (store / "store.json").write_text(json.dumps(manifest))
    assert verify(store) == []

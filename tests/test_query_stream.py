"""`nerframe query` reads only what it shows: the first rows to a terminal with a
count of the rest, csv/json into a pipe a batch at a time, and -o files written by
DuckDB as it reads (memory bounded whatever the row count)."""

from __future__ import annotations

import io
import json
from pathlib import Path

import polars as pl
import pytest
from cli_process import peak_kb

import nerframe
from nerframe.cli import QUERY_ROWS, main
from nerframe.output import emit_batches, to_text
from nerframe.sql import Result, opened

ROWS = 150  # more than QUERY_ROWS


@pytest.fixture(scope="module")
def store(tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp("q") / "s"
    nerframe.sweep(
        "neurex",
        "neurex",
        {"frequency_mhz": list(range(100, 100 + ROWS))},
        output=folder,
        chunk_size=40,  # four parts: the rows come from several files
    )
    return folder


def _cli(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[str, str]:
    assert main(list(args)) == 0
    out = capsys.readouterr()
    return out.out, out.err


SQL = "SELECT config, frequency_mhz FROM sweep ORDER BY config"


def test_a_table_shows_the_first_rows_and_counts_the_rest(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out, _ = _cli(capsys, "query", SQL, "--store", str(store), "--limit", "5")
    lines = out.splitlines()
    assert [line.split()[0] for line in lines[2:7]] == ["0", "1", "2", "3", "4"]
    assert lines[7:] == [f"… {ROWS - 5} more rows; use -o FILE (or --limit N)"]
    # the default: QUERY_ROWS rows under the header and its rule
    out, _ = _cli(capsys, "query", SQL, "--store", str(store))
    lines = out.splitlines()
    assert len(lines) == 2 + QUERY_ROWS + 1
    assert lines[-2].split()[0] == str(QUERY_ROWS - 1)
    assert lines[-1] == f"… {ROWS - QUERY_ROWS} more rows; use -o FILE (or --limit N)"


def test_all_rows_fit_without_a_note(store: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out, _ = _cli(capsys, "query", SQL, "--store", str(store), "--limit", str(ROWS))
    assert len(out.splitlines()) == 2 + ROWS and "more row" not in out
    out, _ = _cli(capsys, "query", SQL, "--store", str(store), "--limit", "0")
    assert len(out.splitlines()) == 2 + ROWS and "more row" not in out


def test_csv_and_json_into_a_pipe_give_every_row(
    store: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    expected = nerframe.query(SQL, store)
    assert expected.height == ROWS
    out, err = _cli(capsys, "query", SQL, "--store", str(store), "--format", "csv")
    assert pl.read_csv(io.StringIO(out)).equals(expected) and not err
    out, _ = _cli(capsys, "query", SQL, "--store", str(store), "--format", "json")
    assert json.loads(out) == expected.to_dicts()
    # a limit counts the rest on stderr, leaving stdout a valid document
    out, err = _cli(capsys, "query", SQL, "--store", str(store), "--format", "json", "--limit", "3")
    assert json.loads(out) == expected.head(3).to_dicts()
    assert err == f"… {ROWS - 3} more rows; use -o FILE (or --limit N)\n"


@pytest.mark.parametrize("fmt", ["csv", "json"])
def test_batches_join_into_the_text_of_all_rows_at_once(
    store: Path, fmt: str, capsys: pytest.CaptureFixture[str]
) -> None:
    with opened("SELECT * FROM sweep ORDER BY config", store) as result:
        whole = result.frame()
        assert emit_batches(result.batches(size=7), fmt) == ROWS
    assert capsys.readouterr().out == to_text(whole, fmt)


@pytest.mark.parametrize("suffix", [".csv", ".json", ".parquet"])
def test_files_are_written_by_duckdb(
    store: Path, tmp_path: Path, suffix: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = nerframe.query("SELECT * FROM sweep", store)

    def refused(*args: object, **kwargs: object) -> None:
        raise AssertionError("the rows went through a DataFrame")

    # Nothing of polars may write the file, nor may the rows be gathered into a frame.
    monkeypatch.setattr(Result, "frame", refused)
    monkeypatch.setattr(pl.DataFrame, "write_csv", refused)
    monkeypatch.setattr(pl.DataFrame, "write_parquet", refused)
    target = tmp_path / f"rows{suffix}"
    assert main(["query", "SELECT * FROM sweep", "--store", str(store), "-o", str(target)]) == 0
    monkeypatch.undo()
    if suffix == ".csv":
        got = pl.read_csv(target, schema=expected.schema)
    elif suffix == ".json":
        got = pl.DataFrame(json.loads(target.read_text()), schema=expected.schema)
    else:
        got = pl.read_parquet(target)
    assert got.equals(expected)
    assert [p.name for p in tmp_path.iterdir()] == [target.name]  # no temporary left


def test_a_file_takes_the_limit_and_lists_as_the_table_shows_them(
    store: Path, tmp_path: Path
) -> None:
    target = tmp_path / "rows.csv"
    sql = "SELECT config, [config, 2 * config] AS pair FROM sweep ORDER BY config"
    assert main(["query", sql, "--store", str(store), "-o", str(target), "--limit", "3"]) == 0
    assert target.read_text() == 'config,pair\n0,"0,0"\n1,"1,2"\n2,"2,4"\n'


def test_an_error_while_writing_leaves_no_file(
    store: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    target = tmp_path / "rows.csv"
    sql = "SELECT CAST('x' || config AS INTEGER) AS bad FROM sweep"
    assert main(["query", sql, "--store", str(store), "-o", str(target)]) != 0
    err = capsys.readouterr().err
    assert err.startswith("error: SQL query failed on store") and err.count("\n") == 1
    assert not any(tmp_path.iterdir())


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="reads Linux's /proc")
def test_an_export_holds_no_more_than_a_count(tmp_path: Path) -> None:
    """A 400,000-row CSV export (78 MB) in the memory of a ``count(*)``: gathering the
    rows into a frame first took 3.3 bytes per byte written (about 260 MB more)."""
    store = tmp_path / "s"
    nerframe.sweep(
        "neurex",
        "neurex",
        {
            "frequency_mhz": list(range(100, 500)),
            "index_generation_unit.count": list(range(1, 1001)),
        },
        output=store,
    )
    count = peak_kb("query", "SELECT count(*) FROM sweep", "--store", str(store))
    target = tmp_path / "all.csv"
    export = peak_kb("query", "SELECT * FROM sweep", "--store", str(store), "-o", str(target))
    assert target.stat().st_size > 60e6
    assert export - count < 100_000, (count, export)

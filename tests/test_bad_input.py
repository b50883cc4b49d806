"""Bad input a demanding new user tried against every command: each case gets one
``error: …`` line naming the culprit, a non-zero exit, no file left behind and no
user file (or device) touched."""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import pytest

from nerframe.cli import main

NEUREX = Path(__file__).parents[1] / "nerframe" / "accelerators" / "neurex.json"
# A small valid trace: one Linear layer of 16 x 4 rows.
LINEAR = {
    "id": 0,
    "parent": None,
    "path": "mlp",
    "classes": ["torch.nn.modules.linear.Linear", "torch.nn.modules.module.Module"],
    "attributes": {"in_features": 8, "out_features": 16},
    "params": {"weight": [16, 8]},
    "inputs": [[16, 4, 8]],
    "outputs": [[16, 4, 16]],
    "input_dtypes": ["float32"],
    "output_dtypes": ["float32"],
    "sources": [],
    "output_sources": [[]],
    "time_s": 1e-4,
}
TRACE = {
    "format": "nerframe-trace",
    "version": 2,
    "model": "net",
    "torch": "2.13.0",
    "repeats": 1,
    "warmup": 0,
    "total_s": 1e-3,
    "calls": [LINEAR],
}
GRAPH = {
    "name": "g",
    "ops": [
        {"op_type": "UniformSampler", "B": 64, "N": 8},
        {"op_type": "RGBRenderer", "B": 64, "N": 8},
    ],
    "edges": [[0, 1]],
}


def one_error(capsys: pytest.CaptureFixture[str], *args: str) -> str:
    """The single ``error:`` line of a command that must fail, with exit status 1."""
    capsys.readouterr()
    status = main(list(args))
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert status == 1 and len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def listing(folder: Path) -> list[str]:
    """Every entry below `folder`, hidden ones included."""
    return sorted(p.relative_to(folder).as_posix() for p in folder.rglob("*"))


@pytest.fixture
def store(tmp_path: Path) -> Path:
    """A small analyze store."""
    assert main(["analyze", "neurex", "--hardware", "neurex", "-o", str(tmp_path / "S"),
                 "--no-report"]) == 0  # fmt: skip
    return tmp_path / "S"


# ------------------------------------------------------------ numbers past Python's limits


def test_an_integer_of_thousands_of_digits_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    # Python refuses to convert an integer of more than 4,300 digits (a ValueError
    # that was a traceback); in JSON and in YAML it is the file's error.
    digits = "1" + "0" * 5000
    text = json.dumps(GRAPH).replace('"B": 64', f'"B": {digits}', 1)
    for name in ("g.json", "g.yaml"):
        (tmp_path / name).write_text(text)
        for args in (["costs", str(tmp_path / name)], ["hardware", str(tmp_path / name)]):
            line = one_error(capsys, *args)
            assert f"{name}: malformed" in line and "4300 digits" in line, line
            assert "set_int_max_str_digits" not in line  # (Python's advice is not the user's)


@pytest.mark.parametrize(
    ("module", "field", "value", "bound"),
    [
        (0, "count", 2**64, "<= 9007199254740992"),
        (1, "latency_cycles", 2**64, "<= 9007199254740992"),
        (1, "buffers", {"input": 1e308, "weight": 64, "output": 64}, "<= 1073741824"),
    ],
)
def test_accelerator_integers_and_buffers_have_upper_bounds(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    module: int,
    field: str,
    value: object,
    bound: str,
) -> None:
    # 2**64 overflowed a polars int64 column (traceback in `hardware`); a buffer of
    # 1e308 KB made the tiling's floor division NaN (traceback in `schedule`).
    accelerator = json.loads(NEUREX.read_text())
    accelerator["modules"][module][field] = value
    path = tmp_path / "big.json"
    path.write_text(json.dumps(accelerator))
    for args in (["hardware", str(path)], ["schedule", "neurex", "--hardware", str(path)]):
        line = one_error(capsys, *args)
        assert f"big.json: field 'modules[{module}].{field}" in line and bound in line, line


def test_the_bounds_themselves_are_accepted(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    accelerator = json.loads(NEUREX.read_text())
    accelerator["modules"][1]["buffers"]["input"] = 2.0**30  # 1 TiB: at the bound
    path = tmp_path / "edge.json"
    path.write_text(json.dumps(accelerator))
    assert main(["schedule", "neurex", "--hardware", str(path), "--format", "csv"]) == 0


# ------------------------------------------------------------ outputs that are no files


@pytest.mark.parametrize("kind", ["device", "fifo"])
def test_no_output_replaces_a_device_or_pipe(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: Path, kind: str
) -> None:
    # As root, `-o /dev/null` renamed a plain file over the system's /dev/null. A
    # null device of our own (or a pipe) stands in for it.
    special = tmp_path / "special"
    if kind == "device":
        try:
            os.mknod(special, 0o666 | stat.S_IFCHR, os.makedev(1, 3))
        except PermissionError:
            pytest.skip("optional: making a device node needs root")
    else:
        os.mkfifo(special)
    before = listing(tmp_path)
    for args in (
        ["costs", "neurex", "-o", str(special)],
        ["report", str(store), "-o", str(special)],
        ["query", "matrix", "--store", str(store), "-o", str(special)],
        ["roofline", "neurex", "-o", str(special)],
        ["analyze", "neurex", "--hardware", "neurex", "-o", str(special), "--no-report"],
        ["sweep", "neurex", "--hardware", "neurex", "--vary", "frequency_mhz=100", "-o",
         str(special)],
    ):  # fmt: skip
        line = one_error(capsys, *args)
        assert f"{special}: not a regular file" in line, (args, line)
    mode = os.lstat(special).st_mode
    assert stat.S_ISCHR(mode) if kind == "device" else stat.S_ISFIFO(mode)
    assert listing(tmp_path) == before  # (no lock file, no temporary)


def test_a_store_over_a_file_is_refused_before_any_lock(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    target = tmp_path / "notes.txt"
    target.write_text("mine")
    for args in (
        ["analyze", "neurex", "--hardware", "neurex", "-o", str(target), "--no-report"],
        ["sweep", "neurex", "--hardware", "neurex", "--vary", "frequency_mhz=100", "-o",
         str(target)],
    ):  # fmt: skip
        assert "notes.txt: exists and is not a folder" in one_error(capsys, *args)
    assert listing(tmp_path) == ["notes.txt"] and target.read_text() == "mine"


# ------------------------------------------------------------ SQL that is not one SELECT


@pytest.mark.parametrize(
    ("sql", "message"),
    [
        ("select 1; select 2", "2 statements"),
        ("select * from summary; COPY summary TO 'w.csv'", "2 statements"),
        ("COPY summary TO 'w.csv'", "COPY is not a reading statement"),
        ("ATTACH 'z.duckdb' AS z", "ATTACH is not a reading statement"),
        ("EXPORT DATABASE 'exp'", "EXPORT is not a reading statement"),
        ("CREATE TABLE t AS SELECT 1", "CREATE is not a reading statement"),
        ("DROP VIEW summary", "DROP is not a reading statement"),
        ("SET threads = 1000", "SET is not a reading statement"),
        ("INSTALL httpfs", "is not a reading statement"),
        ("PRAGMA version", "PRAGMA is not a reading statement"),
        ("-- only a comment", "no statement"),
        ("select * from read_csv('/etc/passwd')", 'Cannot access file "/etc/passwd"'),
        ("select * from sniff_csv('/etc/hostname')", "Cannot access file"),
        ("select * from glob('/*')", "Cannot access"),
    ],
)
def test_query_runs_one_reading_statement_over_its_store_only(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    store: Path,
    monkeypatch: pytest.MonkeyPatch,
    sql: str,
    message: str,
) -> None:
    monkeypatch.chdir(tmp_path)
    before = listing(tmp_path)
    capsys.readouterr()
    status = main(["query", sql, "--store", str(store)])
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert status == 1 and len(lines) == 1 and lines[0].startswith("error: "), err
    assert message in lines[0], lines[0]
    assert listing(tmp_path) == before  # no w.csv, z.duckdb or exp/


def test_reading_queries_and_exports_still_work(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: Path
) -> None:
    # The store's rows by SELECT, DESCRIBE and EXPLAIN; -o into a new folder.
    for sql in ("select count(*) n from summary", "describe summary", "explain select 1"):
        assert main(["query", sql, "--store", str(store)]) == 0, sql
    target = tmp_path / "new" / "rows.csv"
    assert main(["query", "select graph from summary", "--store", str(store), "-o",
                 str(target)]) == 0  # fmt: skip
    assert target.read_text().splitlines() == ["graph", "neurex"]


def test_sql_that_is_not_utf8_is_one_line(capsys: pytest.CaptureFixture[str], store: Path) -> None:
    # A non-UTF-8 byte on the command line reaches Python as a lone surrogate, which
    # DuckDB's binding refused with a TypeError traceback.
    line = one_error(capsys, "query", "select '\udcff'", "--store", str(store))
    assert line == "error: query 'select '\\xff'' is not UTF-8 text"


# ------------------------------------------------------------ contradictory options


def test_sweep_options_that_contradict_each_other(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    sweep = ["sweep", "neurex", "--hardware", "neurex", "--vary", "frequency_mhz=100"]
    line = one_error(capsys, *sweep, "--pareto", "fps,fps")
    assert line == "error: --pareto: figure 'fps' is given twice; name each once"
    # (energy is an alias of energy_per_frame_j: the same figure twice)
    assert "given twice" in one_error(capsys, *sweep, "--pareto", "energy,energy_per_frame_j")
    line = one_error(capsys, *sweep, "--scheduler", "tcp://127.0.0.1:1")
    assert line == (
        "error: a scheduler (tcp://127.0.0.1:1) is the address of a Dask scheduler: use it "
        "with the dask backend (--backend dask), or leave it out"
    )
    assert listing(tmp_path) == []


@pytest.mark.parametrize("name", ["rows.csv", "page", "-"])
def test_report_writes_only_an_html_name(
    capsys: pytest.CaptureFixture[str],
    tmp_path: Path,
    store: Path,
    monkeypatch: pytest.MonkeyPatch,
    name: str,
) -> None:
    # `report S -o rows.csv` wrote an HTML page under a table's name.
    monkeypatch.chdir(tmp_path)
    line = one_error(capsys, "report", str(store), "-o", name)
    assert line == f"error: {name}: a report is an HTML page: give a name ending in .html"
    assert not (tmp_path / name).exists()
    assert main(["report", str(store), "-o", "page.HTM"]) == 0  # (any case of .html/.htm)


# ------------------------------------------------------------ sweep spec fields of the wrong kind


@pytest.mark.parametrize("field", ["grid", "workload", "constraints"])
def test_a_spec_field_of_the_wrong_kind_names_the_file(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, field: str
) -> None:
    # `grid: [1]` gave "TypeError: cannot convert dictionary update sequence".
    spec = {"graphs": ["neurex"], "hardware": "neurex", "grid": {"frequency_mhz": [100]}}
    spec[field] = [1]
    path = tmp_path / "spec.yaml"
    path.write_text(json.dumps(spec))
    line = one_error(capsys, "sweep", "--spec", str(path))
    assert line.startswith(f"error: {path}: field '{field}'"), line
    # and when the command line adds to it
    extra = {"grid": ["--vary", "frequency_mhz=1"], "workload": ["--vary", "rays=64"]}
    more = extra.get(field, ["--max", "fps=1"])
    line = one_error(capsys, "sweep", "--spec", str(path), *more)
    assert line.startswith(f"error: {path}: field '{field}' must be a mapping"), line


# ------------------------------------------------------------ the last resort


def test_an_unforeseen_exception_is_one_line(
    capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    # Whatever input no check foresaw, the user sees one line, not a traceback; a
    # developer sets NERFRAME_TRACEBACK=1 for the traceback.
    import nerframe.cli

    def broken(args: object) -> None:
        raise TypeError("unhashable type: 'list'\nsecond line")

    monkeypatch.setattr(nerframe.cli, "cmd_scenes", broken)
    line = one_error(capsys, "scenes")
    assert line.startswith("error: unexpected TypeError: unhashable type: 'list' (a nerframe bug")
    monkeypatch.setenv("NERFRAME_TRACEBACK", "1")
    with pytest.raises(TypeError):
        main(["scenes"])


# ------------------------------------------------------------ stores with foreign tables


def test_report_names_a_table_of_other_columns_or_types(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: Path
) -> None:
    import polars as pl

    (part,) = sorted((store / "summary").rglob("*.parquet"))
    original = pl.read_parquet(part)
    # A readable part of other columns (TypeError deep in the report before), and
    # one whose fps is text: both name the table and the repair.
    for frame, problem in (
        (pl.DataFrame({"x": [1]}), "column 'graph' is missing"),
        (original.with_columns(pl.lit("fast").alias("fps")), "a column of another type"),
    ):
        frame.write_parquet(part)
        line = one_error(capsys, "report", str(store), "-o", str(tmp_path / "r.html"))
        assert line.startswith(f"error: {store / 'summary'}: table 'summary' is not nerframe's: "
                               f"{problem}"), line  # fmt: skip
        assert "run the same analyze again" in line
        assert not (tmp_path / "r.html").exists()


# ------------------------------------------------------------ probe files


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ('{"a": 1' + "0" * 5000 + "}", "4300 digits"),
        ("\udcff", "can't decode byte 0xff"),
        ("[" * 100_000, ""),  # (nested too deeply: one line, whichever reader meets it)
    ],
)
def test_a_broken_probe_file_is_one_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, text: str, reason: str
) -> None:
    trace = tmp_path / "t.trace.json"
    trace.write_text(json.dumps(TRACE))
    probe = tmp_path / "p.json"
    probe.write_bytes(text.encode("utf-8", "surrogateescape"))
    line = one_error(capsys, "trace", "compare", str(trace), "--probe", str(probe))
    assert reason in line, line


def test_a_format_that_contradicts_the_suffix_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, store: Path
) -> None:
    # `-o rows.csv --format json` wrote JSON under a CSV name.
    before = listing(tmp_path)
    rows = tmp_path / "rows.csv"
    line = one_error(capsys, "costs", "neurex", "-o", str(rows), "--format", "json")
    assert line == f"error: {rows}: the name says csv but --format says json; give one of them"
    rows = tmp_path / "rows.parquet"
    line = one_error(capsys, "query", "matrix", "--store", str(store), "-o", str(rows),
                     "--format", "csv")  # fmt: skip
    assert "the name says parquet but --format says csv" in line
    assert listing(tmp_path) == before
    # --format names the format of another suffix, as before
    assert main(["costs", "neurex", "-o", str(tmp_path / "rows.out"), "--format", "csv"]) == 0
    assert (tmp_path / "rows.out").read_text().startswith("graph,op_id,")


@pytest.mark.slow
def test_bad_input_in_a_fresh_process_is_one_line(tmp_path: Path) -> None:
    # The whole path a user takes (`python -m nerframe`, the interpreter's own exit):
    # one error line on stderr, status 1, nothing on stdout, no file left.
    from cli_process import run_cli

    digits = tmp_path / "g.json"
    digits.write_text(json.dumps(GRAPH).replace('"B": 64', '"B": 1' + "0" * 5000, 1))
    before = listing(tmp_path)
    for args in (
        ["costs", str(digits)],
        ["costs", "neurex", "-o", str(tmp_path / "rows.csv"), "--format", "json"],
        ["sweep", "neurex", "--hardware", "neurex", "--vary", "frequency_mhz=1",
         "--pareto", "fps,fps"],
    ):  # fmt: skip
        result = run_cli(*args, cwd=tmp_path)
        lines = result.stderr.splitlines()
        assert result.returncode == 1 and len(lines) == 1, result.stderr
        assert lines[0].startswith("error: ") and result.stdout == ""
    assert listing(tmp_path) == before


@pytest.mark.parametrize(("field", "axis"), [("grid", "frequency_mhz"), ("workload", "rays")])
def test_a_spec_axis_listing_a_value_twice_is_refused(
    capsys: pytest.CaptureFixture[str], tmp_path: Path, field: str, axis: str
) -> None:
    # `--vary frequency_mhz=100,100` was refused, the same list in a spec swept two
    # identical configurations (64 and 64.0 are one value too).
    path = tmp_path / "spec.yaml"
    spec = {"graphs": ["neurex"], "hardware": "neurex", field: {axis: [64, 100, 64.0]}}
    path.write_text(json.dumps(spec))
    line = one_error(capsys, "sweep", "--spec", str(path))
    assert line == f"error: axis '{axis}' lists 64 twice; give each value once"

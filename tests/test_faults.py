"""Regression tests of the fault defects D8-D17, D19 and D20 of
``shared/research/newuser_defects.md`` (round 4): every fault is one ``error:`` line
(or an interrupt's quiet status 130), never a traceback or a partial output. Each test
reproduces the report's case.
"""

from __future__ import annotations

import errno
import json
import os
import pathlib
import signal
import subprocess
import sys
from pathlib import Path

import pytest

import nerframe
from nerframe import cli
from nerframe.errors import InvalidInputError

NEUREX = Path(nerframe.__file__).parent / "accelerators" / "neurex.json"
ONE_OP = [{"op_type": "UniformSampler", "B": 64, "N": 8}]


def error_line(capsys: pytest.CaptureFixture[str]) -> str:
    """The one line a refused command wrote on stderr (and nothing else)."""
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), err
    return lines[0]


def accelerator_file(path: Path, **fields: object) -> Path:
    """The neurex accelerator file with `fields` changed (json.dumps escapes a lone
    surrogate as ``\\udc80``, valid JSON, as a user's editor may write it)."""
    document = json.loads(NEUREX.read_text())
    document.update(fields)
    path.write_text(json.dumps(document))
    return path


def graph_file(path: Path, name: str) -> Path:
    path.write_text(json.dumps({"name": name, "ops": ONE_OP, "edges": []}))
    return path


# --------------------------------------------------------- D8: lone surrogates


def test_d8_a_lone_surrogate_in_an_accelerator_file_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    name = accelerator_file(tmp_path / "surr_name.json", name="acc\udc80x")
    description = accelerator_file(tmp_path / "surr_desc.json", description="\ud800 x")
    assert '"acc\\udc80x"' in name.read_text()  # the report's file, byte for byte
    assert cli.main(["hardware", str(name)]) == 1
    assert error_line(capsys) == (
        f"error: {name}: field 'name': not UTF-8 text (a lone surrogate in \"acc\\udc80x\")"
    )
    # the report: the table was printed, then a traceback at the description line
    assert cli.main(["hardware", str(description)]) == 1
    assert error_line(capsys) == (
        f"error: {description}: field 'description': not UTF-8 text (a lone surrogate in "
        '"\\ud800 x")'
    )
    out = tmp_path / "o"
    args = ["analyze", "neurex", "--hardware", str(name), "-o", str(out), "--no-report"]
    assert cli.main(args) == 1
    assert "lone surrogate" in error_line(capsys)
    assert not out.exists()


def test_d8_a_lone_surrogate_in_a_graph_name_is_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    graph = graph_file(tmp_path / "surr_graph.json", "g\udc80")
    out = tmp_path / "o2"
    args = ["analyze", str(graph), "--hardware", "neurex", "-o", str(out), "--no-report"]
    assert cli.main(args) == 1
    assert error_line(capsys) == (
        f"error: {graph}: field 'name': not UTF-8 text (a lone surrogate in \"g\\udc80\")"
    )
    assert not out.exists()
    # and from the API, where no file is read
    with pytest.raises(InvalidInputError, match=r"graph name 'g\\udc80': not UTF-8 text"):
        nerframe.graph("g\udc80", ONE_OP)


def test_d8_surrogate_pairs_and_plain_escapes_are_still_text(tmp_path: Path) -> None:
    # A pair is one character (an emoji); an escaped backslash before "ud800" is text.
    for name, expected in (("g\\ud83d\\ude00", "g\U0001f600"), ("g\\\\ud800", "g\\ud800")):
        path = tmp_path / "g.json"
        path.write_text(f'{{"name": "{name}", "ops": {json.dumps(ONE_OP)}}}')
        assert nerframe.read_graph(path).name == expected


# ---------------------------------------------------- D9: non-UTF-8 output paths

# Python keeps the byte 0xff of a command-line argument as the lone surrogate \udcff.
BAD = os.fsdecode(b"bad\xffname")


@pytest.mark.parametrize(
    "args",
    [
        ["analyze", "neurex", "--hardware", "neurex", "--no-report", "-o", BAD],
        ["sweep", "neurex", "--hardware", "neurex", "--vary", "frequency_mhz=100,200", "-o", BAD],
        ["costs", "neurex", "-o", BAD + ".csv"],
    ],
    ids=["analyze", "sweep", "costs"],
)
def test_d9_a_non_utf8_output_path_is_one_line_and_leaves_nothing(
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
    args: list[str],
) -> None:
    monkeypatch.chdir(tmp_path)
    assert cli.main(args) == 1
    shown = "bad\\xffname" + (".csv" if args[0] == "costs" else "")
    assert error_line(capsys) == (
        f"error: {shown}: the output path is not UTF-8 text; give a name in UTF-8"
    )
    assert list(tmp_path.iterdir()) == []  # the report: a sweep left an incomplete store


def test_d9_query_output_path(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s"
    nerframe.analyze(["neurex"], "neurex", output=store, report=False)
    monkeypatch.chdir(tmp_path)
    before = sorted(p.name for p in tmp_path.iterdir())
    assert cli.main(["query", "select 1 as x", "--store", str(store), "-o", BAD + ".csv"]) == 1
    assert "bad\\xffname.csv: the output path is not UTF-8 text" in error_line(capsys)
    assert sorted(p.name for p in tmp_path.iterdir()) == before


def test_d9_the_api_refuses_a_non_utf8_store_path_too(tmp_path: Path) -> None:
    message = r"bad\\xffname: the output path is not UTF-8 text"
    with pytest.raises(InvalidInputError, match=message):
        nerframe.analyze(["neurex"], "neurex", output=tmp_path / BAD, report=False)
    with pytest.raises(InvalidInputError, match=message):
        nerframe.sweep("neurex", "neurex", {"frequency_mhz": [100, 200]}, output=tmp_path / BAD)
    assert list(tmp_path.iterdir()) == []


# ------------------------------------------------------------- D10: a full disk


def full_disk(*args: object, **kwargs: object) -> None:
    """A write to a full disk, as Python reports it: no file name (the file is open)."""
    raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))


def test_d10_a_full_disk_during_analyze_names_the_part(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    import polars as pl

    store = tmp_path / "full"
    nerframe.analyze(["neurex"], "neurex", output=store, report=False)
    before = {p: p.read_bytes() for p in store.rglob("*") if p.is_file()}
    write = pl.DataFrame.write_parquet

    # What polars says on a full disk (measured on a 2 MB tmpfs): the system's error
    # is lost. Writing into memory still works; Python's own write fails.
    def polars_on_a_full_disk(self: pl.DataFrame, file: object, **options: object) -> None:
        if isinstance(file, str | Path):
            raise pl.exceptions.ComputeError(
                "parquet: File out of specification: Invalid thrift: transport error"
            )
        write(self, file, **options)  # type: ignore[arg-type]

    monkeypatch.setattr(pl.DataFrame, "write_parquet", polars_on_a_full_disk)
    monkeypatch.setattr(pathlib.Path, "write_bytes", full_disk)
    assert cli.main(["analyze", "neurex", "--hardware", "neurex", "-o", str(store)]) == 1
    line = error_line(capsys)
    assert line.startswith(f"error: {store}/") and line.endswith(
        ".parquet: No space left on device"
    ), line
    # the earlier store is as it was, and no temporary folder is left
    assert {p: p.read_bytes() for p in store.rglob("*") if p.is_file()} == before
    assert sorted(p.name for p in tmp_path.iterdir()) == [".full.lock", "full"]


def test_d10_a_full_disk_during_a_sweep_names_the_part_and_can_be_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from nerframe.sweeps import parts
    from nerframe.sweeps import store as sweep_store

    store = tmp_path / "sw"
    args = ["sweep", "neurex", "--hardware", "neurex", "-o", str(store), "--chunk-size", "2"]
    args += ["--vary", "frequency_mhz=100,200,300,400,500,600"]
    groups = parts._write_groups
    written: list[int] = []

    def second_part_fills_the_disk(part: object, table: object) -> None:
        written.append(1)
        if len(written) == 2:
            full_disk()  # pyarrow's writer reports it so: an OSError without a file
        groups(part, table)

    for module in (parts, sweep_store):  # the store's writer holds its own reference
        monkeypatch.setattr(module, "_write_groups", second_part_fills_the_disk)
    assert cli.main(args) == 1
    line = error_line(capsys)
    assert line.startswith(f"error: {store}/sweep/") and line.endswith(
        ".parquet: No space left on device"
    ), line
    assert json.loads((store / "store.json").read_text())["run"]["complete"] is False
    assert not list(tmp_path.rglob("*.tmp"))
    monkeypatch.undo()
    assert cli.main(args) == 0  # resumed
    assert json.loads((store / "store.json").read_text())["run"]["complete"] is True
    capsys.readouterr()
    query = ["query", "select count(*) as n from sweep", "--store", str(store)]
    assert cli.main([*query, "--format", "csv"]) == 0
    assert capsys.readouterr().out == "n\n6\n"


def test_d10_a_full_disk_during_report_names_the_page(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "s"
    nerframe.analyze(["neurex"], "neurex", output=store, report=False)
    page = tmp_path / "r.html"
    page.write_text("an earlier page")
    monkeypatch.setattr(pathlib.Path, "write_text", full_disk)
    assert cli.main(["report", str(store), "-o", str(page)]) == 1
    assert error_line(capsys) == f"error: {page}: No space left on device"
    assert page.read_text() == "an earlier page"  # (read_text is not patched)
    assert sorted(p.name for p in tmp_path.iterdir()) == [".s.lock", "r.html", "s"]


# ------------------------------------------- D11, D16: Ctrl-C while loading, SIG_IGN

# Presses Ctrl-C (SIGINT to itself) when polars starts to load, i.e. while the command
# line is importing its modules, then runs the command as `python -m nerframe` does.
_CTRL_C_WHILE_LOADING = """
import os, signal, sys
class Press:
    def find_spec(self, name, path=None, target=None):
        if name == "polars":
            sys.meta_path.remove(self)
            os.kill(os.getpid(), signal.SIGINT)
        return None
sys.meta_path.insert(0, Press())
sys.argv = ["nerframe", "pipelines", "--format", "csv"]
import runpy
runpy.run_module("nerframe", run_name="__main__")
"""


@pytest.mark.slow
@pytest.mark.parametrize("inherited", ["default", "ignore"])
def test_d11_d16_ctrl_c_while_the_command_line_loads(inherited: str) -> None:
    def ignore() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    result = subprocess.run(
        [sys.executable, "-c", _CTRL_C_WHILE_LOADING],
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=ignore if inherited == "ignore" else None,
        timeout=120,
    )
    if inherited == "default":  # the report: a 17-42 line KeyboardInterrupt traceback
        assert (result.returncode, result.stdout, result.stderr) == (130, "", "")
    else:  # a background job of a script: it goes on
        assert result.returncode == 0, result.stderr
        assert result.stdout.startswith("pipeline,kind,")


# Reads how the kernel will treat SIGINT (ignored, caught) while a command runs:
# polars, imported by the command line, installs a handler of its own that Python's
# signal.getsignal does not show, and that turned a Ctrl-C during a polars query into
# an interrupt although the process was started to ignore it.
_DISPOSITION = """
import sys
from nerframe import cli
def disposition(args):
    status = dict(
        line.split(":", 1) for line in open("/proc/self/status").read().splitlines()
        if line.startswith(("SigIgn", "SigCgt"))
    )
    print(int(status["SigIgn"], 16) & 2, int(status["SigCgt"], 16) & 2)
cli.cmd_pipelines = disposition
sys.exit(cli.main(["pipelines"]))
"""


@pytest.mark.slow
@pytest.mark.skipif(not Path("/proc/self/status").exists(), reason="optional: needs Linux /proc")
def test_d16_an_inherited_ignore_stays_ignored_below_python() -> None:
    def ignore() -> None:
        signal.signal(signal.SIGINT, signal.SIG_IGN)

    result = subprocess.run(
        [sys.executable, "-c", _DISPOSITION],
        capture_output=True,
        text=True,
        check=False,
        preexec_fn=ignore,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout == "2 0\n"  # SIGINT ignored (bit 2 of SigIgn), not caught


def test_d16_an_inherited_ignore_of_ctrl_c_is_kept(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    pipelines = cli.cmd_pipelines

    def ctrl_c_then_pipelines(args: object) -> None:
        os.kill(os.getpid(), signal.SIGINT)  # the Ctrl-C meant for the foreground job
        pipelines(args)  # type: ignore[arg-type]

    monkeypatch.setattr(cli, "cmd_pipelines", ctrl_c_then_pipelines)
    previous = signal.signal(signal.SIGINT, signal.SIG_IGN)
    try:
        assert cli.main(["pipelines", "--format", "csv"]) == 0
        assert signal.getsignal(signal.SIGINT) is signal.SIG_IGN
    finally:
        signal.signal(signal.SIGINT, previous)
    assert capsys.readouterr().out.startswith("pipeline,kind,")


def test_d11_the_loading_guard_is_gone_once_the_command_line_has_loaded() -> None:
    # A library user importing nerframe.cli keeps Python's Ctrl-C.
    from nerframe import interrupts

    assert signal.getsignal(signal.SIGINT) is not interrupts._quit


# --------------------------------------------------------- D17: lookalike names


def test_d17_accelerators_named_alike_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nfc = accelerator_file(tmp_path / "nfc.json", name="\u00e9")
    nfd = accelerator_file(tmp_path / "nfd.json", name="e\u0301")
    out = tmp_path / "N"
    args = ["analyze", "neurex", "--hardware", str(nfc), str(nfd), "-o", str(out), "--no-report"]
    assert cli.main(args) == 1
    assert error_line(capsys) == (
        "error: two accelerators are named 'e\u0301' (written '\\xe9' and 'e\\u0301': alike); "
        "accelerator names must be unique in one analysis"
    )
    assert not out.exists()


def test_d17_graphs_named_alike_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    nfc, nfd = graph_file(tmp_path / "c.json", "\u00e9"), graph_file(tmp_path / "d.json", "e\u0301")
    out = tmp_path / "N"
    args = ["analyze", str(nfc), str(nfd), "--hardware", "neurex", "-o", str(out), "--no-report"]
    assert cli.main(args) == 1
    line = error_line(capsys)
    assert line.startswith("error: two graphs are named 'e\u0301' (") and "c.json" in line
    assert not out.exists()
    args = ["sweep", str(nfc), str(nfd), "--hardware", "neurex", "--vary", "frequency_mhz=100"]
    assert cli.main(args) == 1
    assert "two graphs are named '\u00e9'" in error_line(capsys)


# --------------------------------------------------- D12: a store through a symlink


def test_d12_analyze_writes_through_a_link_to_a_folder(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    big_disk = tmp_path / "big_disk"
    big_disk.mkdir()
    link = tmp_path / "scratch"
    link.symlink_to(big_disk)
    for _ in range(2):  # a new store, then one that replaces it
        assert cli.main(["analyze", "neurex", "--hardware", "neurex", "-o", str(link)]) == 0
        assert link.is_symlink() and link.resolve() == big_disk
        assert (big_disk / "store.json").exists() and (big_disk / "report.html").exists()
        # no hidden temporary (the report: the link itself, moved aside and left)
        assert sorted(p.name for p in tmp_path.iterdir()) == [
            ".big_disk.lock",
            "big_disk",
            "scratch",
        ]
    capsys.readouterr()
    # the store reads through the link too
    query = ["query", "select count(*) as n from summary", "--store", str(link), "--format", "csv"]
    assert cli.main(query) == 0
    assert capsys.readouterr().out == "n\n1\n"


# ------------------------------------------- D13: an interrupted report --images


def test_d13_an_interrupted_chart_export_leaves_the_earlier_charts(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from nerframe import charts

    store = tmp_path / "R"
    nerframe.analyze(["neurex"], "neurex", output=store, report=False)
    save = charts.save_chart
    saved: list[object] = []

    def ctrl_c_after_three(chart: object, *paths: Path) -> Path:
        if len(saved) == 3:
            raise KeyboardInterrupt  # Ctrl-C while the charts are being written
        saved.append(chart)
        return save(chart, *paths)  # type: ignore[arg-type]

    monkeypatch.setattr(charts, "save_chart", ctrl_c_after_three)
    assert cli.main(["report", str(store), "--images"]) == 130
    assert capsys.readouterr().err == "error: interrupted\n"
    # the report: 34 of 124 chart files in charts/, which looks complete
    assert not (store / "charts").exists()
    assert not [p for p in store.iterdir() if p.name.startswith(".")]
    # with the charts of an earlier build in place: they stay, whole and unchanged
    monkeypatch.setattr(charts, "save_chart", save)
    assert cli.main(["report", str(store), "--images"]) == 0
    earlier = {p.name: p.read_bytes() for p in (store / "charts").iterdir()}
    assert len(earlier) >= 8
    saved.clear()
    monkeypatch.setattr(charts, "save_chart", ctrl_c_after_three)
    assert cli.main(["report", str(store), "--images"]) == 130
    assert {p.name: p.read_bytes() for p in (store / "charts").iterdir()} == earlier
    assert not [p for p in store.iterdir() if p.name.startswith(".")]


# ----------------------------------------------------- D14: integers beyond 2**63


@pytest.mark.parametrize(
    ("axis", "value"),
    [
        ("systolic_array_32x32.count", "99999999999999999999"),
        ("systolic_array_32x32.latency_cycles", "9223372036854775808"),
    ],
)
def test_d14_a_huge_integer_in_a_grid_is_one_line_naming_the_axis(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], axis: str, value: str
) -> None:
    # The report: NumPy's "invalid value encountered in cast" warning, then a count of
    # -9223372036854775808. The value is shown as typed (not rounded through a float).
    expected = (
        f"error: sweep parameter '{axis}': values must be integers of at most 2**53, got [{value}]"
    )
    # (a NumPy warning would be a "warning: ..." line of its own)
    assert cli.main(["sweep", "neurex", "--hardware", "neurex", "--vary", f"{axis}={value}"]) == 1
    assert capsys.readouterr().err == expected + "\n"
    spec = tmp_path / "s.yaml"
    spec.write_text(f"graphs: [neurex]\nhardware: neurex\ngrid: {{{axis}: [{value}]}}\n")
    assert cli.main(["sweep", "--spec", str(spec)]) == 1
    assert error_line(capsys).endswith(f"values must be integers of at most 2**53, got [{value}]")


def test_d14_a_huge_workload_value_names_its_axis(capsys: pytest.CaptureFixture[str]) -> None:
    # before: "ops row 0 (UniformSampler): B is out of range for Int64", no axis named
    for axis in ("rays", "MLP.layer_width"):
        args = ["sweep", "neurex", "--hardware", "neurex", "--vary", f"{axis}=99999999999999999999"]
        assert cli.main(args) == 1
        assert capsys.readouterr().err == (
            f"error: workload axis '{axis}': values must be at most 2**53, "
            "got 99999999999999999999\n"
        )


# ------------------------------------------------ D15: messages that lose the file


@pytest.mark.parametrize(
    ("line", "message"),
    [
        (
            "grid: {frequency_mhz: {start: 100, stop: 500, step: -100}}",
            "field 'grid.frequency_mhz.step': expected float > 0.0, got -100",
        ),
        ("chunk_size: 0", "field 'chunk_size': expected int >= 1, got 0"),
        (
            "objectives: {fps: maximize}",
            'field \'objectives.fps\': expected one of "max", "min", got "maximize"',
        ),
    ],
    ids=["step", "chunk_size", "objectives"],
)
def test_d15_a_spec_file_s_field_faults_name_the_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], line: str, message: str
) -> None:
    spec = tmp_path / "s4.yaml"
    grid = "" if line.startswith("grid") else "grid: {frequency_mhz: [100]}\n"
    spec.write_text(f"graphs: [neurex]\nhardware: neurex\n{grid}{line}\n")
    assert cli.main(["sweep", "--spec", str(spec)]) == 1
    assert error_line(capsys) == f"error: {spec}: {message}"  # was "sweep spec: field …"


def test_d15_a_json_spec_is_read_as_json(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    deep = tmp_path / "deep_spec.json"
    deep.write_text("[" * 100_000 + "]" * 100_000)
    assert cli.main(["sweep", "--spec", str(deep)]) == 1
    # was "malformed YAML at line 1 column 1001: exceeded maximum nesting depth"
    assert error_line(capsys) == f"error: {deep}: nested too deeply to be an input file"


def test_d15_chunk_size_on_the_command_line_names_the_option(
    capsys: pytest.CaptureFixture[str],
) -> None:
    args = ["sweep", "neurex", "--hardware", "neurex", "--vary", "frequency_mhz=100"]
    with pytest.raises(SystemExit) as status:
        cli.main([*args, "--chunk-size", "0"])
    assert status.value.code == 2
    assert error_line(capsys) == (
        "error: argument --chunk-size: invalid positive value: '0' (see 'nerframe sweep --help')"
    )


@pytest.mark.parametrize("damage", [b"garbage\n", None], ids=["garbage", "truncated"])
def test_d15_a_corrupt_part_is_named_by_report(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], damage: bytes | None
) -> None:
    store = tmp_path / "A1"
    nerframe.analyze(["neurex"], "neurex", output=store, report=False)
    part = next((store / "schedule").rglob("part-*.parquet"))
    part.write_bytes(damage if damage is not None else part.read_bytes()[:100])
    assert cli.main(["report", str(store)]) == 1
    line = error_line(capsys)
    assert line.startswith(f"error: {part}: not a whole Parquet file"), line
    assert "run the same 'nerframe analyze' again" in line, line


# ------------------------------------------------ D19: unbounded and denormal values


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("dram_pj_per_byte", 1e30, "expected float <= 10000.0, got 1e+30"),
        ("leakage_uw_per_mm2", 1e30, "expected float <= 1000000.0, got 1e+30"),
        ("technology_nm", 1e30, "expected float <= 10000.0, got 1e+30"),
        ("technology_nm", 0.5, "expected float >= 1.0, got 0.5"),
        (
            "technology_nm",
            1e-320,
            "expected a number of normal size, got 1e-320 (below 2.2e-308, where a float "
            "loses precision)",
        ),
    ],
)
def test_d19_absurd_accelerator_values_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str, value: float, message: str
) -> None:
    # the report: dram_pj_per_byte 1e30 gave 4.686e+27 J per frame, without a word
    path = accelerator_file(tmp_path / "a.json", **{field: value})
    assert cli.main(["hardware", str(path)]) == 1
    assert error_line(capsys) == f"error: {path}: field '{field}': {message}"


def test_d19_absurd_module_and_buffer_values_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    document = json.loads(NEUREX.read_text())
    document["modules"][0]["area_um2"] = 1e30  # the report: area 2e24 mm²
    path = tmp_path / "area.json"
    path.write_text(json.dumps(document))
    assert cli.main(["hardware", str(path)]) == 1
    assert error_line(capsys) == (
        f"error: {path}: field 'modules[0].area_um2': expected float <= 100000000000.0, got 1e+30"
    )
    document = json.loads(NEUREX.read_text())
    array = next(m for m in document["modules"] if "buffers" in m)
    array["buffers"]["input"] = 1e-320  # the report: fps 3.04 instead of 4.94
    index = document["modules"].index(array)
    path.write_text(json.dumps(document))
    assert cli.main(["hardware", str(path)]) == 1
    assert error_line(capsys).startswith(
        f"error: {path}: field 'modules[{index}].buffers.input': expected a number of normal "
        "size, got 1e-320"
    )
    # a published chip's figures stay well inside the bounds (every built-in loads)
    assert nerframe.accelerators().height >= 10


@pytest.mark.parametrize("field", ["rendered_fraction", "cull_ratio"])
def test_d19_denormal_graph_values_are_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], field: str
) -> None:
    # the report: rendered_fraction 1e-320 gave 1.41e9 frames per second
    op = {"op_type": "FrustumCulling", "G": 1000, "cull_ratio": 0.5}
    document: dict[str, object] = {"name": "g", "ops": [op]}
    if field == "rendered_fraction":
        document["rendered_fraction"] = 1e-320
    else:
        op["cull_ratio"] = 1e-320
    path = tmp_path / "g.yaml"  # YAML, read by the other parser
    path.write_text(json.dumps(document).replace("1e-320", "1.0e-320"))
    assert cli.main(["costs", str(path)]) == 1
    where = "rendered_fraction" if field == "rendered_fraction" else "ops[0].cull_ratio"
    assert error_line(capsys).startswith(
        f"error: {path}: field '{where}': expected a number of normal size, got 1e-320"
    )


# ------------------------------------------------------------------ D20: assorted


def test_d20_a_graph_without_batches_says_so_not_0_batches(
    capsys: pytest.CaptureFixture[str],
) -> None:
    graph = nerframe.pipeline("3dgs")
    assert graph.batches == 0  # every op of 3dgs is frame-scoped
    # by hand: with no batch ops, a frame runs each op once, so the frame's FLOPs are
    # the table's total
    flops = int(nerframe.costs(graph.ops)["flops"].sum())
    assert cli.main(["costs", "3dgs"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith(f"per frame (frame ops only, each once): {flops:,} FLOPs, "), last
    assert cli.main(["costs", "neurex"]) == 0
    last = capsys.readouterr().out.splitlines()[-1]
    assert last.startswith("per frame (157 batches of the batch ops, the frame ops once): ")


def test_d10_a_full_disk_while_charts_are_exported_names_the_chart(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    store = tmp_path / "R"
    nerframe.analyze(["neurex"], "neurex", output=store, report=False)
    monkeypatch.setattr(pathlib.Path, "write_bytes", full_disk)  # the PNGs
    assert cli.main(["report", str(store), "--images"]) == 1
    line = error_line(capsys)
    # the chart's own name, not that of the hidden folder it was being written into
    assert line.startswith(f"error: {store / 'charts'}/") and line.endswith(
        ".png: No space left on device"
    ), line
    assert not (store / "charts").exists()
    assert not [p for p in store.iterdir() if p.name.startswith(".")]

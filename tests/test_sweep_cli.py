"""The ``nerframe sweep`` command, the progress bar, and the Dask backend."""

from __future__ import annotations

import io
import subprocess
import sys
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

import nerframe
from nerframe.cli import main
from nerframe.progress import Progress

BASE = ["sweep", "neurex", "--hardware", "neurex", "--format", "csv"]


def test_pareto_on_the_command_line(capsys) -> None:
    args = [*BASE, "--vary", "frequency_mhz=500,1000", "--vary", "systolic_array_32x32.count=1,2,4"]
    assert main([*args, "--pareto", "fps,energy,area", "--top", "0"]) == 0
    shown = pl.read_csv(capsys.readouterr().out.encode())
    rows = nerframe.sweep(
        nerframe.pipeline("neurex"),
        "neurex",
        {"frequency_mhz": [500, 1000], "systolic_array_32x32.count": [1, 2, 4]},
    )
    expected = nerframe.pareto(
        [rows], {"fps": "max", "energy_per_frame_j": "min", "area_mm2": "min"}
    )
    assert shown["config"].to_list() == expected["config"].to_list()
    assert shown.columns[:5] == [
        "config",
        "frequency_mhz",
        "systolic_array_32x32.count",
        "fps",
        "energy_per_frame_j",
    ]


def test_spec_file_with_command_line_additions(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("graphs: [neurex]\nhardware: neurex\ngrid: {frequency_mhz: [500, 1000]}\n")
    assert main(["sweep", "--spec", str(spec), "--vary", "rays=1024,4096", "--format", "csv"]) == 0
    shown = pl.read_csv(capsys.readouterr().out.encode())
    assert shown.height == 4
    assert shown.columns[:3] == ["rays", "config", "frequency_mhz"]


def test_budgets_filter_the_rows(capsys) -> None:
    args = [*BASE, "--vary", "systolic_array_32x32.count=1,2,4,8", "--top", "0"]
    assert main([*args, "--max", "area_mm2=3.7", "--min", "fps=0"]) == 0
    shown = pl.read_csv(capsys.readouterr().out.encode())
    assert (shown["area_mm2"] <= 3.7).all()  # 3.14 mm2 + 0.48 per extra array
    assert sorted(shown["systolic_array_32x32.count"].to_list()) == [1, 2]


def test_chart_of_the_front(tmp_path: Path, capsys) -> None:
    chart = tmp_path / "front.svg"
    args = [*BASE, "--vary", "systolic_array_32x32.count=1,2,4", "--pareto", "fps,energy"]
    assert main([*args, "--chart", str(chart)]) == 0
    assert chart.read_text().startswith("<svg")


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (
            ["--vary", "frequency_mhz=1", "--vary", "frequency_mhz=2"],
            "frequency_mhz is given twice",
        ),
        (["--vary", "rays=1024", "--rays", "4096"], "rays is given twice"),
        (["--vary", "frequency_mhz=a"], "--vary expects PARAM=V1,V2"),
        (["--pareto", "fps"], "--pareto expects two or more figures"),
        (["--pareto", "fps,speed"], "--pareto: unknown figure 'speed'"),
        (["--max", "area_mm2"], "--max expects FIGURE=VALUE"),
        (["--backend", "dask"], "the dask backend writes a store"),
        (["--chart", "front.svg"], "--chart draws the Pareto front: give --pareto too"),
    ],
)
def test_bad_command_lines(args: list[str], message: str, capsys) -> None:
    assert main([*BASE, *args]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and message in err and err.count("\n") == 1


def test_a_sweep_spec_given_as_a_pipeline_is_named(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text("graphs: [neurex]\nhardware: neurex\ngrid: {frequency_mhz: [500]}\n")
    assert main(["sweep", str(spec)]) == 1
    err = capsys.readouterr().err
    assert err == (
        "error: name the accelerator to sweep with --hardware (or give a sweep spec with "
        f"--spec FILE); {spec} is a sweep spec: give it with --spec\n"
    )
    for graph in ("neurex", tmp_path / "model.json"):  # a pipeline; a file of any bytes
        (tmp_path / "model.json").write_bytes(b"\xff\xfe\x00")
        assert main(["sweep", str(graph), "--vary", "frequency_mhz=500"]) == 1
        err = capsys.readouterr().err
        assert err.startswith("error: name the accelerator to sweep with") and "spec:" not in err


def test_large_grids_need_yes_and_get_an_estimate(capsys) -> None:
    values = ",".join(str(v) for v in range(1, 5001))
    args = [*BASE, "--vary", f"frequency_mhz={values}", "--vary", f"dram_bandwidth_gbps={values}"]
    assert main(args) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: this sweep has 25,000,000 configurations: about ")
    assert "GB store; run it with --yes" in err


def test_compression_on_the_command_line_is_the_stores_and_query_reads_it(
    tmp_path: Path, capsys
) -> None:
    store = tmp_path / "s"
    vary = ["--vary", "frequency_mhz=500,1000"]
    assert main([*BASE, *vary, "-o", str(store), "--compression", "zstd"]) == 0
    assert '"compression": "zstd"' in (store / "store.json").read_text()
    (part,) = store.rglob("*.parquet")
    assert pq.read_metadata(part).row_group(0).column(0).compression == "ZSTD"
    capsys.readouterr()
    assert main(["query", "SELECT frequency_mhz FROM sweep ORDER BY 1", "--store", str(store)]) == 0
    shown = [line.split()[0] for line in capsys.readouterr().out.splitlines()[2:]]
    assert shown == ["500", "1,000"]


def test_query_warns_about_an_incomplete_sweep(tmp_path: Path, capsys) -> None:
    store = tmp_path / "s"
    assert main([*BASE, "--vary", "frequency_mhz=500", "-o", str(store)]) == 0
    manifest = (store / "store.json").read_text()
    (store / "store.json").write_text(manifest.replace('"complete": true', '"complete": false'))
    capsys.readouterr()
    assert main(["query", "SELECT count(*) AS n FROM sweep", "--store", str(store)]) == 0
    err = capsys.readouterr().err
    assert err.startswith("warning: ") and "the sweep is incomplete" in err


def test_progress_bar_line_and_terminal_only(monkeypatch) -> None:
    drawn = io.StringIO()
    with Progress(4_000_000, "sweep", "configs", stream=drawn, enabled=True) as bar:
        bar.advance(1_000_000)
    line = drawn.getvalue().split("\r")[-1]
    assert line.startswith("sweep [#####               ]  25%  1,000,000/4,000,000 configs  ")
    assert "configs/s  ETA " in line
    assert Progress(10, "x", "u", stream=io.StringIO()).enabled is False

    class Terminal(io.StringIO):
        def isatty(self) -> bool:
            return True

    monkeypatch.delenv("CI", raising=False)
    monkeypatch.delenv("NERFRAME_PROGRESS", raising=False)
    terminal = Terminal()
    with Progress(10, "sweep", "configs", stream=terminal) as bar:
        bar.advance(10)
    assert "100%" in terminal.getvalue() and terminal.getvalue().endswith("\n")
    monkeypatch.setenv("CI", "true")
    assert Progress(10, "x", "u", stream=Terminal()).enabled is False


@pytest.mark.slow
def test_sweep_in_a_pipe_prints_no_progress(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "nerframe.cli", *BASE, "--vary", "frequency_mhz=500,1000"],
        capture_output=True,
        text=True,
        check=True,
    )
    assert done.stderr == ""
    assert done.stdout.startswith("config,frequency_mhz,fps")


def test_dask_local_cluster_gives_byte_identical_parts(tmp_path: Path) -> None:
    pytest.importorskip("distributed", reason="optional: the dask extra is not installed")
    spec = {
        "graphs": ["neurex", "srender"],
        "hardware": "neurex_server",
        "workload": {"rays": [1024, 4096]},
        "grid": {"frequency_mhz": [500, 1000, 1500], "systolic_array.count": [1, 2, 4, 8]},
        "chunk_size": 5,
    }
    from distributed import LocalCluster

    nerframe.sweep(spec, output=tmp_path / "local")
    # An in-process cluster at an address, as a real one would be given (CI-friendly),
    # with two task threads sharing one process; the benchmarks run the default
    # LocalCluster of worker processes.
    with LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        nerframe.sweep(
            spec, output=tmp_path / "dask", backend="dask", scheduler=cluster.scheduler_address
        )
    local = sorted(
        p.relative_to(tmp_path / "local") for p in (tmp_path / "local").rglob("*.parquet")
    )
    remote = sorted(
        p.relative_to(tmp_path / "dask") for p in (tmp_path / "dask").rglob("*.parquet")
    )
    assert local == remote and len(local) == 2 * 2 * 3
    for part in local:
        assert (tmp_path / "local" / part).read_bytes() == (tmp_path / "dask" / part).read_bytes()

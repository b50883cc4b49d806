"""The nerframe command line: outputs, one-line errors, no partial files."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest
from cli_process import run_cli as run

from nerframe.cli import main


def test_pipelines_table(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pipelines"]) == 0
    out = capsys.readouterr().out
    assert "825,444,532,224" in out and "instant3d" in out


def test_costs_table_has_totals(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["costs", "neurex", "--model", "spec"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[-2].startswith("total") and "7,887,388,672" in lines[-2]
    # D18: a frame of 800x800 pixels is ceil(640000 / 4096) = 157 batches of these ops
    # (all batch-scoped in the spec model): 157 x 7,887,388,672 FLOPs
    assert lines[-1].startswith("per frame (157 batches") and "1,238,320,021,504 FLOPs" in lines[-1]


def test_costs_formats(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["costs", "gbu_train", "--gaussians", "1000000", "--fine", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["op_type"] for r in rows][:2] == ["FrustumCulling", "Projection"]
    assert rows[0]["G"] == 1_000_000
    for suffix in ("csv", "json", "parquet"):
        assert (
            main(["costs", "neurex", "--model", "spec", "-o", str(tmp_path / f"c.{suffix}")]) == 0
        )
    frame = pl.read_parquet(tmp_path / "c.parquet")
    assert frame["flops"].sum() == 7_887_388_672
    assert pl.read_csv(tmp_path / "c.csv")["flops"].sum() == 7_887_388_672
    assert len(json.loads((tmp_path / "c.json").read_text())) == 5


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["costs", "nope"], "error: unknown pipeline 'nope'"),
        (["costs", "neurex", "--rays", "0"], "error: ops row 0 (graph 'neurex', op_id 0"),
        (["costs", "neurex", "--rays", "x"], "error: argument --rays: invalid int value"),
        # a 3DGS frame is sized by its width, height and scene, never by rays or samples
        (["costs", "3dgs", "--samples", "8"], "error: pipeline '3dgs' has no op sized by samples"),
        (["schedule", "gaurast", "--hardware", "gaurast", "--rays", "64"], "error: pipeline"),
        (["schedule", "gscore", "--hardware", "neurex"], "error: accelerator 'neurex' has no"),
        (["hardware", "missing.json"], "error: "),
        (["query", "matrix", "--store", "nowhere"], "error: nowhere: not a nerframe result store"),
        (["report", "nowhere"], "error: nowhere: not a nerframe result store"),
    ],
)
def test_errors_are_one_line(args: list[str], message: str, tmp_path: Path) -> None:
    result = run(*args, "-o", str(tmp_path / "out.csv")) if args[0] == "costs" else run(*args)
    assert result.returncode != 0
    assert result.stderr.startswith(message), result.stderr
    assert result.stderr.count("\n") == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert not (tmp_path / "out.csv").exists()


def test_bad_format_leaves_no_file(tmp_path: Path) -> None:
    result = run("roofline", "neurex", "-o", str(tmp_path / "chart.gif"))
    assert result.returncode == 1 and result.stderr.startswith("error: ")
    assert list(tmp_path.iterdir()) == []


def test_hardware_listing_and_warnings(shared: Path) -> None:
    listing = run("hardware")
    assert listing.returncode == 0 and "neurex_server" in listing.stdout
    original = run("hardware", str(shared / "data/rendersim/hardware/cicero_config.json"))
    assert original.returncode == 0
    assert "warning: accelerator_name 'ICARUS' does not match" in original.stderr


def test_hardware_states_an_unpublished_area(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hardware", "gbu"]) == 0
    assert "area not published" in capsys.readouterr().out  # the Orin NX's area is not
    assert main(["hardware", "neurex"]) == 0
    assert "area 3.14 mm²" in capsys.readouterr().out  # NeuRex Table 4


def test_schedule_command(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedule", "neurex", "--hardware", "neurex"]) == 0
    out = capsys.readouterr().out
    assert "index_generation_unit" in out and "bottleneck_module" in out
    assert (
        main(["schedule", "neurex", "--hardware", "neurex", "--summary", "--format", "json"]) == 0
    )
    (summary,) = json.loads(capsys.readouterr().out)
    assert summary["status"] == "ok" and summary["batches"] == 157


def test_schedule_a_graph_file(graph_file: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedule", str(graph_file), "--hardware", "neurex", "--format", "csv"]) == 0
    assert "systolic_array_32x32" in capsys.readouterr().out


def test_analyze_then_query(tmp_path: Path) -> None:
    store = tmp_path / "store"
    result = run("analyze", "neurex", "gbu", "-o", str(store), "--no-report")
    assert result.returncode == 0, result.stderr
    assert "neurex_server" in result.stdout
    assert (store / "store.json").exists()
    query = run(
        "query", "SELECT count(*) AS n FROM summary", "--store", str(store), "--format", "json"
    )
    assert json.loads(query.stdout) == [{"n": 3}]


def test_sweep_command(tmp_path: Path) -> None:
    store = tmp_path / "sweep"
    args = [
        "sweep",
        "neurex",
        "--hardware",
        "neurex",
        "--vary",
        "frequency_mhz=500,1000",
        "--vary",
        "systolic_array_32x32.count=1,2,4",
        "--top",
        "2",
        "--format",
        "json",
    ]
    result = run(*args, "-o", str(store))
    assert result.returncode == 0, result.stderr
    rows = json.loads(result.stdout)
    assert len(rows) == 2 and rows[0]["fps"] >= rows[1]["fps"]
    assert "6 configurations" in result.stderr
    query = run(
        "query", "SELECT count(*) AS n FROM sweep", "--store", str(store), "--format", "json"
    )
    assert json.loads(query.stdout) == [{"n": 6}]
    bad = run("sweep", "neurex", "--hardware", "neurex", "--vary", "frequency_mhz=fast")
    assert bad.returncode == 1 and bad.stderr.startswith("error: --vary expects")


def test_unwritable_output_is_one_error_line(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    result = run("costs", "neurex", "-o", str(blocker / "out.csv"))
    assert result.returncode == 1
    assert result.stderr.startswith("error: ") and result.stderr.count("\n") == 1
    assert "Traceback" not in result.stderr

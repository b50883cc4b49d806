"""nerframe validate: published figures, predictions, errors, calibration."""

from __future__ import annotations

import re
import statistics
from html import escape as html_escape
from pathlib import Path

import polars as pl
import pytest

import nerframe
from nerframe import validation
from nerframe.cli import main
from nerframe.errors import NerframeError
from nerframe.validation import _Predictor, calibrate, published, summary


@pytest.fixture(scope="module")
def table() -> pl.DataFrame:
    return nerframe.validate()


def test_every_published_row_has_a_source_a_tag_and_a_prediction(table: pl.DataFrame) -> None:
    assert table.height == published().height >= 15
    assert set(table["tag"]) == {"calibration", "validation"}
    assert all(s.strip() for s in table["source"])
    assert table["predicted"].null_count() == 0


def test_error_is_predicted_over_published_minus_one(table: pl.DataFrame) -> None:
    for row in table.iter_rows(named=True):
        assert row["error"] == pytest.approx(row["predicted"] / row["value"] - 1)


def test_icarus_calibration_rows_are_met(table: pl.DataFrame) -> None:
    rows = {r["id"]: r for r in table.iter_rows(named=True)}
    for name in ("icarus-throughput", "icarus-power", "icarus-energy"):
        assert abs(rows[name]["error"]) < 0.01
    # held out: modules + SRAM of the file, 9.98 mm2, against the paper's 16.5
    assert rows["icarus-area"]["predicted"] == pytest.approx(9.980348, rel=1e-6)


def test_summary_line_states_median_and_max_over_validation_rows(table: pl.DataFrame) -> None:
    rows = table.filter(tag="validation")
    scores = [abs(e) for e in rows["score"]]
    line = summary(table)
    assert f"median |error| {100 * statistics.median(scores):.1f} %" in line
    assert f"max |error| {100 * max(scores):.1f} %" in line
    within = sum(0.5 <= 1 + e <= 2 for e in rows["score"])
    assert f"within 2x: {within} of {len(scores)}" in line
    met = rows.filter(bound="upper", score=0.0).height
    assert f"else their excess: {met} of {rows.filter(bound='upper').height} met" in line
    points = [abs(r["error"]) for r in rows.iter_rows(named=True) if r["bound"] != "upper"]
    assert (
        f"median over the {len(points)} point figures alone "
        f"{100 * statistics.median(points):.1f} %" in line
    )


def test_upper_bounds_score_zero_when_met_else_their_excess(table: pl.DataFrame) -> None:
    rows = {r["id"]: r for r in table.iter_rows(named=True)}
    # "up to" figures (maxima over the paper's scenes) and a power budget met
    assert {i for i, r in rows.items() if r["bound"] == "upper"} == {
        "neurex-speedup",
        "neurex-server-speedup",
        "instant3d-power",
    }
    for r in rows.values():
        if r["bound"] == "upper":
            assert r["score"] == (0.0 if r["predicted"] <= r["value"] else r["error"])
            assert "upper bound" in r["source"]
        else:
            assert r["score"] == r["error"]
    assert rows["neurex-speedup"]["score"] == 0.0 < rows["neurex-speedup"]["value"]


def test_a_row_runs_the_workload_its_paper_evaluated(table: pl.DataFrame) -> None:
    row = table.filter(id="instant3d-power").row(0, named=True)
    # Instant-3D's abstract: up to 200,000 embedding interpolations per training
    # iteration, i.e. 8,334 rays x 24 samples = 200,016 sample points
    assert row["workload"] == "frame_pixels=8334"
    assert 8334 * 24 == 200_016
    graph = nerframe.pipeline("instant3d", frame_pixels=8334)
    assert graph.batches == 3  # ceil(8334 / 4096)
    expected = nerframe.schedule(graph, nerframe.accelerator("instant3d")).summary
    assert row["predicted"] == pytest.approx(expected["avg_power_w"].item(), rel=1e-12)
    # every other row but the Orin NX calibration (GBU's scenes) runs the pipeline's defaults
    assert table.filter(pl.col("workload").is_not_null())["id"].to_list() == [
        "orin-3dgs",
        "instant3d-power",
    ]


def test_area_row_refuses_hardware_whose_area_is_not_published() -> None:
    row = published().filter(id="icarus-area").row(0, named=True)
    with pytest.raises(NerframeError, match="icarus-area: the area of orin_nx is not published"):
        _Predictor(nerframe.accelerator)({**row, "accelerator": "orin_nx"})


@pytest.mark.parametrize(
    ("column", "value", "message"),
    [
        ("bound", "lower", "bound 'lower' is not empty or 'upper'"),
        ("workload", "pixels=5", "unknown parameter 'pixels'"),
        ("workload", "frame_pixels=many", "workload 'frame_pixels=many'"),
    ],
)
def test_bad_published_rows_are_errors_naming_the_row(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, column: str, value: str, message: str
) -> None:
    bad = published().with_columns(
        pl.when(pl.col("id") == "icarus-area").then(pl.lit(value)).otherwise(column).alias(column)
    )
    path = tmp_path / "published.csv"
    bad.write_csv(path)
    monkeypatch.setattr(validation, "PUBLISHED", path)
    with pytest.raises(NerframeError, match=f"row icarus-area: .*{re.escape(message)}"):
        published()


def test_builtin_files_hold_the_calibrated_values() -> None:
    found = {
        (r["accelerator"], r["parameter"]): r["value"] for r in calibrate().iter_rows(named=True)
    }
    icarus = nerframe.accelerator("icarus")
    mlp = icarus.modules[icarus.module_index("mlp_engine")]
    assert mlp.throughput_ops_per_cycle == found[("icarus", "mlp_engine.throughput_ops_per_cycle")]
    assert (
        found[("icarus", "power_scale (of every module's power_uw; 1 once applied)")] == 1.0
    )  # already applied
    for gpu in ("xavier_nx", "orin_nx", *validation.TRANSFERRED):
        a = nerframe.accelerator(gpu)
        assert a.memory_efficiency == found[(gpu, "efficiency")]
        assert {m.efficiency for m in a.modules} == {found[(gpu, "efficiency")]}
    rast = nerframe.accelerator("gaurast").modules[-1]
    assert (
        rast.throughput_ops_per_cycle
        == found[("gaurast", "gaussian_rasterizer.throughput_ops_per_cycle")]
    )
    assert rast.power_uw == found[("gaurast", "gaussian_rasterizer.power_uw")]


def test_cli_validate_prints_table_and_summary(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["validate", "--format", "csv"]) == 0
    out, err = capsys.readouterr()
    assert out.splitlines()[0].startswith("id,accelerator,pipeline,metric")
    assert len(out.splitlines()) == published().height + 1
    assert err.startswith("validation: ")


def test_report_section_lists_every_row_and_the_summary(table: pl.DataFrame) -> None:
    from nerframe.report import _Page, _validation_section

    page = _Page([], [])
    _validation_section(page)
    html = "".join(page.parts)
    assert '<section id="validation">' in html
    assert html_escape(summary(table)) in html  # "<=" is escaped
    for row_id in table["id"]:
        assert f">{row_id}<" in html
    for column in ("workload", "bound", "score"):
        assert f"<th>{column}</th>" in html
    assert ">frame_pixels=8334<" in html and ">upper<" in html


def test_speedup_against_another_pipeline_on_the_same_gpu(table: pl.DataFrame) -> None:
    # GBU's dataflow alone on the Orin NX against plain 3DGS (the gaurast graph) there
    row = table.filter(id="gbu-irss-on-gpu").row(0, named=True)
    assert (row["accelerator"], row["baseline"], row["baseline_pipeline"]) == (
        "orin_nx",
        "orin_nx",
        "gaurast",
    )
    fps = {
        name: nerframe.schedule(nerframe.pipeline(name), "orin_nx").summary["fps"].item()
        for name in ("gbu", "gaurast")
    }
    assert row["predicted"] == pytest.approx(fps["gbu"] / fps["gaurast"], rel=1e-12)
    assert row["value"] == 1.72 and row["tag"] == "validation"


def test_gscore_speedup_is_over_plain_3dgs_on_the_gpu(table: pl.DataFrame) -> None:
    # the paper's GPU baseline runs the original 3DGS, not GSCore's subtile skipping
    row = table.filter(id="gscore-speedup").row(0, named=True)
    assert (row["baseline"], row["baseline_pipeline"]) == ("xavier_nx", "gaurast")
    mine = nerframe.schedule(nerframe.pipeline("gscore"), "gscore").summary["fps"].item()
    gpu = nerframe.schedule(nerframe.pipeline("gaurast"), "xavier_nx").summary["fps"].item()
    assert row["predicted"] == pytest.approx(mine / gpu, rel=1e-12)


def test_gbu_row_setup_on_the_gpu_is_its_operands_over_the_calibrated_bandwidth() -> None:
    # 57,600 tile rows x 556 Gaussians x (5 + 5) elements x 2 bytes through DRAM at the
    # Orin NX's 102.4 GB/s x 0.8896 efficiency, 918 MHz: memory-bound on the CUDA cores
    run = nerframe.schedule(nerframe.pipeline("gbu"), "orin_nx").schedule
    gen = run.filter(op_type="RowGeneration").row(0, named=True)
    bytes_per_cycle = 102.4e9 / 918e6 * 0.8896
    assert gen["module"] == "cuda_cores" and gen["bound"] == "memory"
    assert gen["memory_cycles"] == pytest.approx(640_512_000 / bytes_per_cycle, rel=1e-6)

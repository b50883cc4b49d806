"""nerframe validate: published figures, predictions, errors, calibration."""

from __future__ import annotations

import statistics
from html import escape as html_escape

import polars as pl
import pytest

import nerframe
from nerframe.cli import main
from nerframe.validation import calibrate, published, summary


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
    errors = [abs(e) for e in table.filter(tag="validation")["error"]]
    line = summary(table)
    assert f"median |error| {100 * statistics.median(errors):.1f} %" in line
    assert f"max |error| {100 * max(errors):.1f} %" in line
    within = sum(0.5 <= 1 + e <= 2 for e in table.filter(tag="validation")["error"])
    assert f"within 2x: {within} of {len(errors)}" in line


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
    for gpu in ("xavier_nx", "orin_nx"):
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

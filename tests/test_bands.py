"""Assumed figures (the accelerator format's ``assumptions``) and the uncertainty bands
they give (`nerframe.bands`), checked against hand derivations on a tiny accelerator."""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any

import pytest

import nerframe
from nerframe.accelerator_model import parameter_value
from nerframe.bands import FIGURES, bands, corners
from nerframe.cli import main
from nerframe.errors import InvalidInputError
from nerframe.hardware import BUILTIN, accelerator

# One op whose DRAM bytes bound it: RGBRenderer over 4096 rays x 64 samples moves
# 2,121,728 bytes (its costs row) and does 1,572,864 FLOPs, on a host of 10^6 FLOP per
# cycle (2 cycles of compute) at 1 GHz, so 1 GB/s is 1 byte per cycle.
BYTES = 2_121_728
WATTS = 1.0


def _tiny(tmp_path: Path, **extra: Any) -> Path:
    data: dict[str, Any] = {
        "name": "tiny",
        "frequency_mhz": 1000,
        "dram_bandwidth_gbps": 10,
        "dram_pj_per_byte": 0,
        "modules": [
            {
                "name": "host",
                "type": "HOST",
                "count": 1,
                "throughput_ops_per_cycle": 1e6,
                "latency_cycles": 0,
                "area_um2": 1e6,
                "power_uw": WATTS * 1e6,
            }
        ],
        "assumptions": [
            {"parameter": "dram_bandwidth_gbps", "low": 5, "high": 20, "reason": "test"}
        ],
    }
    data.update(extra)
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    return path


def _graph() -> nerframe.Graph:
    return nerframe.graph(
        "tiny", [{"op_type": "RGBRenderer", "B": 4096, "N": 64}], frame_pixels=4096
    )


def test_costs_row_is_the_hand_derivation_input() -> None:
    row = nerframe.costs(_graph().ops).row(0, named=True)
    assert row["bytes_total"] == BYTES


def test_fps_band_of_a_memory_bound_op_follows_the_bandwidth(tmp_path: Path) -> None:
    # oracle: one memory-bound op in one batch takes ceil(bytes / (GB/s)) cycles at 1 GHz
    table = bands(_graph(), _tiny(tmp_path))
    band = {r["figure"]: r for r in table.iter_rows(named=True)}
    for bandwidth, column in ((10, "nominal"), (5, "low"), (20, "high")):
        cycles = math.ceil(BYTES / bandwidth)
        assert band["fps"][column] == pytest.approx(1e9 / cycles, rel=1e-12)
    # energy: the module's 1 W over the frame (no DRAM energy, no node: no leakage);
    # the slowest corner spends the most
    assert band["energy_per_frame_j"]["low"] == pytest.approx(WATTS * math.ceil(BYTES / 20) / 1e9)
    assert band["energy_per_frame_j"]["high"] == pytest.approx(WATTS * math.ceil(BYTES / 5) / 1e9)
    assert band["avg_power_w"]["low"] == band["avg_power_w"]["high"] == pytest.approx(WATTS)
    assert band["area_mm2"]["low"] == band["area_mm2"]["high"] == 1.0
    assert band["fps"]["configurations"] == 2


def test_a_compute_assumption_leaves_a_memory_bound_frame_alone(tmp_path: Path) -> None:
    # oracle: the op needs 2 compute cycles at 10^6 FLOP/cycle and 212,173 memory
    # cycles; a 4x slower host (8 cycles) changes nothing, a faster one neither
    more = [
        {"parameter": "dram_bandwidth_gbps", "low": 5, "high": 20, "reason": "test"},
        {"parameter": "host.throughput_ops_per_cycle", "low": 2.5e5, "high": 4e6, "reason": "t"},
        {"parameter": "host.power_uw", "low": 5e5, "high": 2e6, "reason": "test"},
    ]
    rows = corners(_graph(), _tiny(tmp_path, assumptions=more))
    assert rows.height == 8  # 2^3 corners
    table = bands(_graph(), _tiny(tmp_path, assumptions=more))
    band = {r["figure"]: r for r in table.iter_rows(named=True)}
    assert band["fps"]["low"] == pytest.approx(1e9 / math.ceil(BYTES / 5))
    assert band["fps"]["high"] == pytest.approx(1e9 / math.ceil(BYTES / 20))
    assert band["avg_power_w"]["low"] == pytest.approx(0.5)
    assert band["avg_power_w"]["high"] == pytest.approx(2.0)
    # energy: 0.5 W over the fastest frame to 2 W over the slowest
    assert band["energy_per_frame_j"]["low"] == pytest.approx(0.5 * math.ceil(BYTES / 20) / 1e9)
    assert band["energy_per_frame_j"]["high"] == pytest.approx(2.0 * math.ceil(BYTES / 5) / 1e9)


def test_an_accelerator_without_assumptions_has_a_point_band(tmp_path: Path) -> None:
    table = bands(_graph(), _tiny(tmp_path, assumptions=[]))
    assert (table["low"] == table["nominal"]).all() and (table["high"] == table["nominal"]).all()
    assert table["configurations"].to_list() == [0] * 4


@pytest.mark.parametrize("name", BUILTIN)
def test_every_builtin_bounds_its_assumed_figures(name: str) -> None:
    accel = accelerator(name)
    assert accel.assumptions, f"{name} assumes nothing"
    for a in accel.assumptions:
        assert a.low <= parameter_value(accel, a.parameter) <= a.high
        assert a.reason.strip()


def test_assumptions_are_the_last_key_of_every_builtin_file() -> None:
    folder = Path(nerframe.__file__).with_name("accelerators")
    for name in BUILTIN:
        keys = list(json.loads((folder / f"{name}.json").read_text(encoding="utf-8")))
        assert keys[-1] == "assumptions", name


def test_extends_carries_the_base_assumptions() -> None:
    gbu, orin = accelerator("gbu"), accelerator("orin_nx")
    inherited = {a.parameter for a in orin.assumptions}
    assert inherited <= {a.parameter for a in gbu.assumptions}
    assert {a.parameter for a in accelerator("gaurast").assumptions} == inherited


def test_an_extending_file_replaces_an_assumption_by_parameter(tmp_path: Path) -> None:
    path = tmp_path / "plug.json"
    path.write_text(
        json.dumps(
            {
                "name": "plug",
                "extends": "orin_nx",
                "modules": [
                    {
                        "name": "extra",
                        "type": "HOST",
                        "count": 1,
                        "throughput_ops_per_cycle": 8,
                        "latency_cycles": 0,
                        "area_um2": 1,
                        "power_uw": 1,
                    }
                ],
                "assumptions": [
                    {"parameter": "dram_pj_per_byte", "low": 15, "high": 25, "reason": "mine"}
                ],
            }
        ),
        encoding="utf-8",
    )
    found = [a for a in accelerator(path).assumptions if a.parameter == "dram_pj_per_byte"]
    assert [(a.low, a.high, a.reason) for a in found] == [(15.0, 25.0, "mine")]


@pytest.mark.parametrize(
    ("assumption", "message"),
    [
        (
            {"parameter": "dram_bandwith_gbps", "low": 5, "high": 20},
            "names no parameter of accelerator 'tiny' (did you mean 'dram_bandwidth_gbps'?)",
        ),
        ({"parameter": "host.speed", "low": 5, "high": 20}, "names no parameter"),
        ({"parameter": "dram_bandwidth_gbps", "low": 11, "high": 20}, "lies outside"),
        ({"parameter": "dram_bandwidth_gbps", "low": 10, "high": 10}, "must be below high"),
        ({"parameter": "host.count", "low": 1, "high": 2.5}, "takes integers"),
        ({"parameter": "dram_bandwidth_gbps", "low": -1, "high": 20}, ">= 0"),
    ],
)
def test_a_bad_assumption_is_one_error_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], assumption: dict[str, Any], message: str
) -> None:
    path = _tiny(tmp_path, assumptions=[{**assumption, "reason": "test"}])
    with pytest.raises(InvalidInputError, match="assumptions"):
        accelerator(path)
    assert main(["hardware", str(path)]) != 0
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("error: ") and message in err[0], err


def test_an_assumption_given_twice_is_refused(tmp_path: Path) -> None:
    twice = [{"parameter": "dram_bandwidth_gbps", "low": 5, "high": 20, "reason": "t"}] * 2
    with pytest.raises(InvalidInputError, match=r"assumptions\[1\].parameter"):
        accelerator(_tiny(tmp_path, assumptions=twice))


def test_an_inherited_assumption_must_still_hold(tmp_path: Path) -> None:
    # orin_nx assumes dram_pj_per_byte in [10, 80]; a plug-in changing the base's
    # figure is not possible (figures are inherited), but a base figure the file
    # overrides is: the clock is not assumed, the DRAM energy is
    path = tmp_path / "plug.json"
    path.write_text(
        json.dumps(
            {
                "name": "plug",
                "extends": "orin_nx",
                "dram_pj_per_byte": 100,
                "modules": [
                    {
                        "name": "extra",
                        "type": "HOST",
                        "count": 1,
                        "throughput_ops_per_cycle": 8,
                        "latency_cycles": 0,
                        "area_um2": 1,
                        "power_uw": 1,
                    }
                ],
            }
        ),
        encoding="utf-8",
    )
    with pytest.raises(InvalidInputError, match="inherits dram_pj_per_byte from 'orin_nx'"):
        accelerator(path)


def test_assumption_paths_are_the_sweep_grid_paths() -> None:
    from nerframe.accelerator_model import ACCELERATOR_PARAMETERS, MODULE_PARAMETERS
    from nerframe.sweeps.spec import ACCELERATOR_FIELDS, MODULE_FIELDS

    assert set(ACCELERATOR_PARAMETERS) == set(ACCELERATOR_FIELDS)
    assert set(MODULE_PARAMETERS) == set(MODULE_FIELDS)


def test_validate_bands_follow_the_efficiency_range_of_a_transferred_gpu() -> None:
    # oracle: the A6000 assumes its custom kernels reach 0.5 to 1 of the FP32 peak (the
    # transferred efficiency, clamped at 1); a GPU op's time is its work at that rate
    # (nerframe.gpu.op_seconds), so at half the rate every op takes twice as long, and
    # a DRAM at 0.5 to 1 of its peak never outlasts it (each op's time already holds
    # its bytes at the measured 0.8554 share)
    from nerframe.validation import validate

    table = validate(bands=True)
    row = table.filter(id="a6000-3dgs-tanks").row(0, named=True)
    assert row["high"] == pytest.approx(row["predicted"], rel=1e-3)
    assert row["low"] == pytest.approx(row["predicted"] * 0.5, rel=1e-3)
    # one accelerator on both sides of a ratio: its corners pair up, and the Xavier
    # NX's assumed power and DRAM energy leave its frame rates, so the speed-up, alone
    cicero = table.filter(id="cicero-sw-speedup").row(0, named=True)
    assert cicero["low"] == pytest.approx(cicero["predicted"])
    assert cicero["high"] == pytest.approx(cicero["predicted"])
    for r in table.iter_rows(named=True):
        if r["low"] is None:
            assert r["inside"] is None
            continue
        assert r["low"] <= r["predicted"] <= r["high"]
        expected = r["low"] <= r["value"] and (r["bound"] == "upper" or r["value"] <= r["high"])
        assert r["inside"] == expected, r["id"]
    # op-level metrics have no band: the sweep engine gives frame figures
    assert (
        table.filter(metric="stage_share")["low"].null_count()
        == table.filter(metric="stage_share").height
    )


def test_validate_without_bands_keeps_its_columns() -> None:
    from nerframe.validation import validate

    assert "inside" not in validate().columns


def test_schedule_and_analyze_take_bands(tmp_path: Path) -> None:
    s = nerframe.schedule("neurex", "neurex")
    assert bands("neurex", "neurex", nominal=s).equals(bands("neurex", "neurex"))
    a = nerframe.analyze("neurex", "neurex", output=tmp_path / "out", report=False, bands=True)
    assert a.bands is not None and a.bands.equals(bands("neurex", "neurex"))
    with pytest.raises(InvalidInputError, match="bands must be True or False"):
        nerframe.analyze("neurex", "neurex", output=tmp_path / "x", bands="yes")  # type: ignore[arg-type]


def test_cli_bands(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["schedule", "neurex", "--hardware", "neurex", "--bands", "--format", "csv"]) == 0
    lines = capsys.readouterr().out.strip().splitlines()
    assert lines[0].startswith("graph,accelerator,figure,nominal,low,high")
    assert [line.split(",")[2] for line in lines[1:]] == list(FIGURES)
    assert main(["schedule", "neurex", "--hardware", "neurex", "--bands"]) == 0
    assert "bands over the assumed figures (8 corners" in capsys.readouterr().out
    out = tmp_path / "v.csv"
    assert main(["validate", "--bands", "-o", str(out)]) == 0
    assert "inside the band" in capsys.readouterr().err
    assert out.read_text(encoding="utf-8").splitlines()[0].endswith(",low,high,inside")
    store = tmp_path / "store"
    assert main(["analyze", "neurex", "--bands", "--no-report", "-o", str(store)]) == 0
    assert "area_mm2" in capsys.readouterr().out


def test_the_validation_chart_draws_each_band_over_its_published_figure() -> None:
    import polars as pl

    from nerframe.charts.validation import validation_chart

    table = pl.DataFrame(
        {
            "id": ["a", "b", "c"],
            "tag": ["validation", "validation", "calibration"],
            "metric": ["fps", "stage_share", "fps"],
            "value": [10.0, 0.5, 1.0],
            "predicted": [12.0, 0.25, 1.0],
            "score": [0.2, -0.5, 0.0],
            "low": [8.0, None, 1.0],
            "high": [15.0, None, 1.0],
            "inside": [True, None, True],
        }
    )
    spec = validation_chart(table).to_dict()
    rows = {r["id"]: r for r in spec["layer"][3]["data"]["values"]}
    assert set(rows) == {"a", "b"}  # calibration rows are not drawn
    # oracle: the bar spans low / published to high / published, the dot predicted /
    # published
    assert (rows["a"]["low_ratio"], rows["a"]["ratio"], rows["a"]["high_ratio"]) == (0.8, 1.2, 1.5)
    assert rows["a"]["band"] == "inside its band" and rows["b"]["band"] == "no band"
    assert rows["b"]["ratio"] == 0.5 and rows["b"]["low_ratio"] is None

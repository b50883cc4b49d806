"""Model defects, each against a hand derivation: the node table from 3 to 180 nm (D4 of
``shared/research/newuser_defects.md``), a sweep's FLOP peak of an accelerator without a
FLOP-rated unit, the SRAM density a file that ``extends`` another keeps, and GSArch's
update ops over the tiles a Gaussian touches.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

import nerframe
from nerframe import cli, technology
from nerframe.errors import InvalidInputError
from nerframe.hardware import accelerator_table
from nerframe.sweeps.spec import sweep_spec

# Stillmaker and Baas (2017): area relative to 45 nm, energy polynomials a V^2 + b V + c
# at 0.9 V (technology.json's sources), typed here from the paper's tables.
V = 0.9
E45 = 1.103 * V * V - 0.362 * V + 0.2767
E7 = 0.1776 * V * V - 0.09097 * V + 0.02447
E180 = 24.64 * V - 17.98
A28 = 0.46 + (32 - 28) / (32 - 20) * (0.21 - 0.46)  # between the 32 and 20 nm rows


# ------------------------------------------------------------------ D4: 3 to 180 nm


def test_node_table_covers_3_to_180_nm_by_hand() -> None:
    # TSMC N5 against N7: 1.8x logic density, 30 % less power at the same speed
    assert technology.area_factor(7, 5) == pytest.approx(1 / 1.8)
    assert technology.energy_factor(7, 5) == pytest.approx(0.70)
    # N3 against N5: 1.7x logic density, 25-30 % less power (0.725 taken)
    assert technology.area_factor(5, 3) == pytest.approx(1 / 1.7)
    assert technology.energy_factor(7, 3) == pytest.approx(0.70 * 0.725)
    # 180 nm: 19x the 45 nm area; energy polynomial (0, 24.64, -17.98)
    assert technology.area_factor(180, 45) == pytest.approx(1 / 19)
    assert technology.energy_factor(45, 180) == pytest.approx(E180 / E45)
    # SRAM below 7 nm by the published bitcell areas (0.021/0.027, then 0.0199/0.021)
    assert technology.sram_um2_per_kb(5) == pytest.approx(1758 * 0.059 / A28 * 0.78)
    assert technology.sram_um2_per_kb(3) == pytest.approx(1758 * 0.059 / A28 * 0.78 * 0.95)
    assert technology.sram_pj_per_byte(5) == pytest.approx(2.5 * 0.7 * E7 / E45)
    # 4 nm lies between 5 and 3 nm, linearly
    assert technology.energy_factor(7, 4) == pytest.approx(0.70 * (1 + 0.725) / 2)
    for node in (3, 4, 5, 180):
        assert technology.covers(node) and technology.leakage_uw_per_mm2(node) == 5000


def my_accelerator(node: float) -> dict[str, object]:
    """The report's appendix accelerator (`my/myaccel.json`) at `node` nm."""
    modules = [
        ("sampler", "SAMPLING", 2, 4, 3, 20_000, 5_000, None),
        ("hash_unit", "ENCODING", 4, 16, 5, 60_000, 15_000, "lookup"),
        ("mac_array", "FIELD_COMPUTATION", 2, 4096, 20, 500_000, 200_000, None),
        ("vr_unit", "VOLUME_RENDERING", 1, 8, 4, 30_000, 8_000, "sample"),
    ]
    keys = ("name", "type", "count", "throughput_ops_per_cycle", "latency_cycles")
    rows = []
    for *fields, area, power, unit in modules:
        row = dict(zip(keys, fields, strict=True), area_um2=area, power_uw=power)
        rows.append(row | ({"unit": unit} if unit else {}))
    return {
        "name": "myaccel",
        "frequency_mhz": 800,
        "dram_bandwidth_gbps": 64,
        "dram_pj_per_byte": 15,
        "technology_nm": node,
        "modules": rows,
        "sram": [{"name": "buf", "size_kb": 512, "area_um2": 600_000}],
        "operator_mapping": {
            "UniformSampler": "sampler",
            "HashEncoding": "hash_unit",
            "MLP": "mac_array",
            "RGBRenderer": "vr_unit",
        },
    }


@pytest.mark.parametrize("node", [3, 5, 180])
def test_nodes_outside_the_old_table_keep_leakage_and_sram_energy(tmp_path: Path, node) -> None:
    path = tmp_path / "tech.json"
    path.write_text(json.dumps(my_accelerator(node)))
    accel = nerframe.accelerator(str(path))
    # 1.91 mm2 (modules 1.31, SRAM 0.6) x 5 mW/mm2: as at 7 and 16 nm in the report
    assert accel.leakage_w == pytest.approx(0.00955)
    expected_pj = {3: 2.5 * 0.7 * 0.725 * E7 / E45, 5: 2.5 * 0.7 * E7 / E45, 180: 2.5 * E180 / E45}
    assert accel.sram_energy_pj_per_byte == pytest.approx(expected_pj[node])
    assert math.isfinite(accel.area_mm2_28nm)


@pytest.mark.parametrize("node", [2, 250])
def test_nodes_outside_the_table_are_refused(tmp_path: Path, capsys, node) -> None:
    path = tmp_path / "tech.json"
    path.write_text(json.dumps(my_accelerator(node)))
    assert cli.main(["hardware", str(path)]) == 1
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 1 and err[0].startswith(f"error: {path}: field 'technology_nm': ")
    assert "outside the node table (3-180 nm)" in err[0]
    # with its own leakage and SRAM energy the file needs no table figure
    own = my_accelerator(node) | {"leakage_uw_per_mm2": 4000, "sram_pj_per_byte": 0.5}
    path.write_text(json.dumps(own))
    accel = nerframe.accelerator(str(path))
    assert accel.leakage_w == pytest.approx(1.91 * 4000e-6)
    assert accel.sram_energy_pj_per_byte == 0.5


def test_original_format_nodes_outside_the_table_are_refused(tmp_path: Path) -> None:
    data = {
        "accelerator_name": "Toy",
        "hardware_modules": {
            "mac": {
                "module_type": "FIELD_COMPUTATION",
                "count": 2,
                "performance": {"latency_cycles": 3, "throughput_ops_per_cycle": 8.0},
                "resources": {"area_um2": 10, "power_uw": 5},
            }
        },
        "system_specifications": {"target_frequency_mhz": 500, "technology_node_nm": 1},
        "memory_hierarchy": {"main_memory": {"bandwidth_gbps": 16}},
    }
    path = tmp_path / "toy.json"
    path.write_text(json.dumps(data))
    with pytest.raises(InvalidInputError, match="technology_node_nm': 1 nm is outside"):
        nerframe.accelerator(str(path))
    data["system_specifications"]["technology_node_nm"] = 5  # type: ignore[index]
    path.write_text(json.dumps(data))
    assert nerframe.accelerator(str(path)).leakage_density_uw_per_mm2 == 5000


# ------------------------------------------------------------------ a FLOP peak of none


def test_sweep_rows_have_no_flop_peak_without_a_flop_unit() -> None:
    gscore = nerframe.accelerator("gscore")
    assert all(m.unit != "flop" for m in gscore.modules)  # its file rates no unit in FLOPs
    assert accelerator_table([gscore])["peak_tflops"].to_list() == [None]
    spec = {"graphs": ["gscore"], "hardware": "gscore", "grid": {"frequency_mhz": [500, 1000]}}
    rows = nerframe.sweep(sweep_spec(spec))
    assert rows["peak_tflops"].to_list() == [None, None]
    # neurex's systolic array: 2048 FLOP per cycle at 500 MHz = 1.024 TFLOP/s
    spec = {"graphs": ["neurex"], "hardware": "neurex", "grid": {"frequency_mhz": [500]}}
    assert nerframe.sweep(sweep_spec(spec))["peak_tflops"].to_list() == [pytest.approx(1.024)]


def test_no_flop_peak_in_a_sweep_store(tmp_path: Path, capsys) -> None:
    args = ["sweep", "gscore", "--hardware", "gscore", "--vary", "frequency_mhz=500"]
    assert cli.main([*args, "-o", str(tmp_path / "s")]) == 0
    sql = "select count(*) filter (where peak_tflops is null) n from sweep"
    capsys.readouterr()
    assert cli.main(["query", sql, "--store", str(tmp_path / "s"), "--format", "csv"]) == 0
    assert capsys.readouterr().out == "n\n1\n"


# ------------------------------------------------------------------ extends keeps SRAM density


def test_extending_file_keeps_the_base_sram_density(tmp_path: Path) -> None:
    base = my_accelerator(28) | {"name": "base", "sram_um2_per_kb": 1000}
    base["sram"] = [{"name": "buf", "size_kb": 100}]  # no area: 100 KB x 1000 um2/KB
    (tmp_path / "base.json").write_text(json.dumps(base))
    plugin = {
        "name": "plugin",
        "extends": "base.json",
        "modules": [{"name": "extra", "type": "SORTING", "count": 1,
                     "throughput_ops_per_cycle": 4, "latency_cycles": 1,
                     "area_um2": 1000, "power_uw": 10}],
    }  # fmt: skip
    (tmp_path / "plugin.json").write_text(json.dumps(plugin))
    for name in ("base.json", "plugin.json"):
        accel = nerframe.accelerator(str(tmp_path / name))
        assert accel.sram_um2_per_kb == 1000
        assert accel.sram_area_um2 / 1e6 == pytest.approx(0.1000)


# ------------------------------------------------------------------ GSArch's update ops


def test_gsarch_update_ops_cover_the_tiles_a_gaussian_touches() -> None:
    # The frame model by hand (docs/workloads.md): the realistic scene's 1 M Gaussians
    # at 1280 x 720, half visible; each visible box covers 688.7 * pixels / visible px,
    # a side of 35.6 px, so it spans 1 + 35.6 / 16 tiles along each axis: 10.4 tiles
    visible = math.ceil(0.5 * 1_000_000)
    side = math.sqrt(688.7 * 1280 * 720 / visible)
    tiles = round((1 + side / 16) ** 2)
    assert tiles == 10
    ops = nerframe.pipeline("gsarch").ops.filter(backward=True)
    updates = ops.filter(pl.col("op_type").cast(pl.String).is_in(["Rearrangement", "TileMerging"]))
    assert updates.select("B", "N").rows() == [(visible, tiles), (visible, tiles)]
    model = (Path(__file__).parents[1] / "docs" / "model.md").read_text(encoding="utf-8")
    assert "N = 4`" not in model

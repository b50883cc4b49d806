"""The accelerators rebuilt from the papers, and the area and power model, term by term.

Each rebuilt figure is asserted against its source value, written here as a literal
with the table or page it comes from (the oracle); each term of the area and power
model has a case computed by hand from the node table's published inputs.
"""

from __future__ import annotations

import json
import math
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import nerframe
from nerframe import technology
from nerframe.area_power import breakdown
from nerframe.builtin_pipelines import PIPELINES
from nerframe.cli import main
from nerframe.kernels import reference_schedule as ref
from nerframe.kernels.frames import frame


def _module(accel: nerframe.Accelerator, name: str) -> nerframe.Module:
    return accel.modules[accel.module_index(name)]


def _sram_kb(accel: nerframe.Accelerator) -> dict[str, float]:
    return {s.name: s.size_kb for s in accel.sram}


# ------------------------------------------------------------------ rebuilt from the papers


def test_neurex_edge_is_table_4_of_the_paper() -> None:
    a = nerframe.accelerator("neurex")
    # NeuRex (ISCA 2023) p.2, 7-9: 28 nm, 1 GHz; 1 systolic array 32x32, 8 IGU, 8 ICU
    assert (a.technology_nm, a.frequency_mhz) == (28, 1000)
    array = _module(a, "systolic_array_32x32")
    igu, icu = _module(a, "index_generation_unit"), _module(a, "interpolation_compute_unit")
    assert (array.count, igu.count, icu.count) == (1, 8, 8)
    assert array.throughput_ops_per_cycle == 32 * 32 * 2  # 1024 MACs = 2048 FLOP/cycle
    assert igu.throughput_ops_per_cycle == 8 and igu.unit == "lookup"  # 8 indexes/cycle, p.7-8
    # Table 4 (p.11), mm2 and W per module group
    for m, area, power in ((array, 0.48, 0.19), (igu, 0.60, 0.16), (icu, 0.11, 0.05)):
        assert m.area_um2 * m.count / 1e6 == pytest.approx(area)
        assert m.power_uw * m.count / 1e6 == pytest.approx(power)
    # Table 4 (p.8) SRAM, KB; double buffers as two blocks
    assert _sram_kb(a) == {
        "weight_buffer": 20,
        "input_buffer0": 128,
        "input_buffer1": 128,
        "output_buffer0": 128,
        "output_buffer1": 128,
        "position_buffer0": 12,
        "position_buffer1": 12,
        "grid_cache": 64,
        "subgrid_buffer0": 128,
        "subgrid_buffer1": 128,
        "request_buffer": 8,
    }
    # Table 4 (p.11): total 3.14 mm2
    assert a.area_mm2 == pytest.approx(3.14)
    # LPDDR4-3200 (p.9): 3200 MT/s x 8 bytes (a 64-bit interface)
    assert a.dram_bandwidth_gbps == pytest.approx(3200e6 * 8 / 1e9)


def test_neurex_server_counts_and_sram_are_the_papers() -> None:
    a = nerframe.accelerator("neurex_server")
    # NeuRex p.2, 7-9: 16 arrays, 64 IGU, 64 ICU; Table 4 (p.8) Server SRAM
    counts = {m.name: m.count for m in a.modules}
    assert counts == {"systolic_array": 16, "interpolation_unit": 64, "index_generation_unit": 64}
    assert _module(a, "index_generation_unit").throughput_ops_per_cycle == 8
    assert a.peak_tflops == pytest.approx(16 * 2048 * 1e9 / 1e12)
    kb = _sram_kb(a)
    assert kb["input_buffer0"] + kb["input_buffer1"] == 2 * 1024  # 2 x 1 MB
    assert kb["output_buffer0"] + kb["output_buffer1"] == 2 * 1024
    assert kb["position_buffer0"] + kb["position_buffer1"] == 2 * 96
    assert (kb["weight_buffer"], kb["grid_cache"], kb["request_buffer"]) == (20, 64, 16)


def test_gscore_units_and_sram_are_nerarch_sims() -> None:
    a = nerframe.accelerator("gscore")
    # NeRArch-Sim SIM1 Table III: 1 GHz, 28 nm, units (4, 8, 4, 64)
    assert (a.frequency_mhz, a.technology_nm) == (1000, 28)
    counts = [
        _module(a, n).count
        for n in (
            "culling_conversion_unit",
            "quick_sorting_unit",
            "bitonic_sorting_unit",
            "volume_rendering_unit",
        )
    ]
    assert counts == [4, 8, 4, 64]
    # SIM2 Table VIII: 8 + 32 + 64 + 128 + 16 KB = 248 KB of the paper's 272 KB
    assert sorted(_sram_kb(a).values()) == [8, 16, 32, 64, 128]
    assert sum(_sram_kb(a).values()) == 248


def test_gbu_components_are_its_table_3() -> None:
    a = nerframe.accelerator("gbu")
    # reading notes BGS-N (GBU Tables II-III, p.9): 28 nm, 63 KB SRAM (32 KB reuse cache)
    assert a.technology_nm == 28
    assert sum(_sram_kb(a).values()) == 63 and _sram_kb(a)["gaussian_reuse_cache"] == 32
    for name, area_mm2, power_w in (
        ("row_processing_element", 0.36, 0.11),
        ("row_generation_engine", 0.14, 0.04),
        ("decomp_binning_engine", 0.10, 0.03),
    ):
        m = _module(a, name)
        assert m.area_um2 * m.count / 1e6 == pytest.approx(area_mm2)
        assert m.power_uw * m.count / 1e6 == pytest.approx(power_w)
        assert m.power_reference_mhz == 1000  # the GBU's 1 GHz
    # "cache and others" 0.30 mm2
    assert sum(s.area_um2 or 0 for s in a.sram) / 1e6 == pytest.approx(0.30)
    # the GPU beside it is still the built-in Orin NX (extends)
    gpu = nerframe.accelerator("orin_nx")
    assert a.modules[: len(gpu.modules)] == gpu.modules
    assert a.frequency_mhz == gpu.frequency_mhz and math.isnan(a.area_mm2)


def test_instant3d_clock_dram_and_module_areas() -> None:
    a = nerframe.accelerator("instant3d")
    # BGS-N (GBU Table VII): 800 MHz, 59.7 GB/s; 4 grid cores
    assert (a.frequency_mhz, a.dram_bandwidth_gbps, a.technology_nm) == (800, 59.7, 28)
    assert _module(a, "hash_encoder").count == 4
    # SIM2 Table XII, mm2
    for name, area in (
        ("feed_forward_read_mapper", 0.204),
        ("backprop_update_merger", 1.428),
        ("mlp_units", 1.496),
    ):
        m = _module(a, name)
        assert m.area_um2 * m.count / 1e6 == pytest.approx(area)


def test_srender_is_the_native_hardware_of_its_pipeline() -> None:
    a = nerframe.accelerator("srender")
    # SIM1 Table III: 500 MHz, 28 nm; SIM2 Table XII module areas, mm2
    assert (a.frequency_mhz, a.technology_nm) == (500, 28)
    published = {
        "hash_index_generator": 4.8,
        "interpolation_unit": 0.9,
        "point_rearrangement_unit": 0.2,
        "distance_compute_unit": 0.03,
        "comparison_unit": 0.01,
        "processing_elements": 5.51,
    }
    for name, area in published.items():
        m = _module(a, name)
        assert m.area_um2 * m.count / 1e6 == pytest.approx(area)
    assert PIPELINES["srender"].native == ("srender",)
    s = nerframe.schedule("srender", "srender")
    assert s.summary["status"].item() == "ok"
    used = set(s.schedule["module"].to_list())
    assert {"distance_compute_unit", "point_rearrangement_unit", "comparison_unit"} <= used


def test_gsarch_areas_are_published_and_power_is_flagged_unknown() -> None:
    a = nerframe.accelerator("gsarch")
    # SIM2 Table XII, mm2
    published = {
        "culling_conversion_unit": 0.100,
        "sorting_unit": 0.060,
        "tile_merging_unit": 0.090,
        "feature_compute_unit": 0.016,
        "gradient_compute_unit": 0.030,
        "gradient_pruning_unit": 0.020,
        "rearrangement_unit": 0.004,
    }
    assert {m.name: m.area_um2 / 1e6 for m in a.modules} == pytest.approx(published)
    assert any(s.startswith("flag: power unknown") for s in a.sources)


def test_icarus_and_cicero_state_their_node() -> None:
    icarus, cicero = nerframe.accelerator("icarus"), nerframe.accelerator("cicero")
    assert icarus.technology_nm == 40  # ICARUS abstract: 40 nm
    assert any(s.startswith("node: 40 nm") for s in icarus.sources)
    assert any("16 nm" in s for s in cicero.sources if s.startswith("node:"))


# ------------------------------------------------------------------ the node table

# Stillmaker & Baas 2017, 45 nm row of the area table and energy polynomials (a, b, c)
AREA_45 = {45: 1.0, 32: 0.46, 20: 0.21, 16: 0.19}
ENERGY = {45: (1.103, -0.362, 0.2767), 32: (0.9559, -0.7823, 0.471), 20: (0.373, -0.1582, 0.04104)}
ENERGY[16] = (0.2958, -0.1241, 0.03024)


def _e(node: int, v: float = 0.9) -> float:
    a, b, c = ENERGY[node]
    return a * v * v + b * v + c


def test_node_scaling_by_hand() -> None:
    # 28 nm lies a third of the way from 32 to 20 nm, 40 nm 5/13 of the way from 45 to 32
    a28 = 0.46 + (32 - 28) / 12 * (0.21 - 0.46)
    a40 = 1.0 + (45 - 40) / 13 * (0.46 - 1.0)
    e28 = _e(32) + (32 - 28) / 12 * (_e(20) - _e(32))
    e40 = _e(45) + (45 - 40) / 13 * (_e(32) - _e(45))
    assert technology.area_factor(40) == pytest.approx(a28 / a40)  # ICARUS to 28 nm
    assert technology.area_factor(16) == pytest.approx(a28 / 0.19)  # CICERO-16 to 28 nm
    assert technology.energy_factor(40) == pytest.approx(e28 / e40)
    assert technology.energy_factor(16) == pytest.approx(e28 / _e(16))
    assert technology.area_factor(28) == 1.0 and technology.area_factor(45, 45) == 1.0
    icarus = nerframe.accelerator("icarus")
    assert icarus.area_mm2_28nm == pytest.approx(icarus.area_mm2 * a28 / a40)
    with pytest.raises(nerframe.NerframeError, match="outside the scaling table"):
        technology.area_factor(2)


def test_sram_area_term_by_hand(tmp_path: Path) -> None:
    # 1758 um2/KB at 28 nm (the reference framework's SRAM blocks); 100 KB -> 0.1758 mm2
    path = _toy(tmp_path, sram=[{"name": "buf", "size_kb": 100}])
    a = nerframe.accelerator(path)
    assert a.sram_um2_per_kb == 1758
    assert a.area_mm2 == pytest.approx((2 * 1000 + 100 * 1758) / 1e6)
    parts = breakdown(a).filter(pl.col("part") == "sram")
    assert parts["area_mm2"].item() == pytest.approx(0.1758)
    # at 40 nm the density is the 28 nm one over the area factor
    a40 = nerframe.accelerator(_toy(tmp_path, sram=[{"name": "b", "size_kb": 1}], node=40))
    assert a40.sram_um2_per_kb == pytest.approx(1758 / technology.area_factor(40))


def test_sram_density_predicts_neurex_table_4_within_a_quarter() -> None:
    # held out: the node table's density was not fitted to NeuRex; Table 4 (p.11) gives
    # 0.57 mm2 for each 2 x 128 KB buffer and 0.14 mm2 for the 64 KB grid cache
    density = technology.sram_um2_per_kb(28)
    for kb, mm2 in ((256, 0.57), (64, 0.14)):
        assert kb * density / 1e6 == pytest.approx(mm2, rel=0.25)


def test_sram_access_energy_term_by_hand(tmp_path: Path) -> None:
    # Horowitz ISSCC 2014: 20 pJ per 64-bit read of a 32 KB SRAM at 45 nm = 2.5 pJ/B
    pj_28 = 20 / 8 * technology.energy_factor(45, 28)
    a = nerframe.accelerator(_toy(tmp_path, sram=[{"name": "buf", "size_kb": 10}]))
    assert a.sram_energy_pj_per_byte == pytest.approx(pj_28)
    run = nerframe.schedule(_graph(), a)
    ops = run.schedule
    # each op's energy: power x duration + DRAM bytes x 10 pJ + its bytes x the SRAM pJ
    hz = a.frequency_mhz * 1e6
    power = [m.power_uw * m.count for m in a.modules]
    module = [a.module_index(n) for n in ops["module"]]
    expected = [
        power[m] * 1e-6 * d / hz + b * 10e-12 + b * pj_28 * 1e-12
        for m, d, b in zip(module, ops["duration_cycles"], ops["bytes_total"], strict=True)
    ]
    assert ops["energy_j"].to_list() == pytest.approx(expected, rel=1e-12)
    # no SRAM blocks: no SRAM energy; a GPU: none either (its board power holds it)
    assert nerframe.accelerator(_toy(tmp_path, sram=[])).sram_energy_pj_per_byte == 0
    assert nerframe.accelerator("orin_nx").sram_energy_pj_per_byte == 0


def test_leakage_term_by_hand(tmp_path: Path) -> None:
    # assumption of the node table: 5 mW per mm2; toy: 2 x 1000 um2 + 10 KB x 1758 um2/KB
    a = nerframe.accelerator(_toy(tmp_path, sram=[{"name": "buf", "size_kb": 10}]))
    area_mm2 = (2 * 1000 + 10 * 1758) / 1e6
    assert a.leakage_w == pytest.approx(area_mm2 * 5e-3)
    row = nerframe.schedule(_graph(), a).summary.row(0, named=True)
    run = nerframe.schedule(_graph(), a).schedule
    per_batch = run["energy_j"].sum()
    expected = row["batches"] * per_batch + a.leakage_w * row["frame_time_s"]
    assert row["energy_per_frame_j"] == pytest.approx(expected, rel=1e-12)
    # a file may set both figures itself
    own = _toy(tmp_path, sram=[], extra={"leakage_uw_per_mm2": 0, "sram_pj_per_byte": 3})
    b = nerframe.accelerator(own)
    assert (b.leakage_w, b.sram_energy_pj_per_byte) == (0, 3)
    # GPUs: leakage inside their board power
    assert nerframe.accelerator("a100").leakage_w == 0


def test_module_term_and_breakdown_totals_by_hand() -> None:
    t = (
        breakdown(nerframe.accelerator("neurex"))
        .filter(pl.col("part") == "total")
        .row(0, named=True)
    )
    # Table 4 module powers 0.19 + 0.16 + 0.05 W at 1 GHz; leakage 5 mW/mm2 x 3.14 mm2
    assert t["dynamic_power_w"] == pytest.approx(0.40)
    assert t["leakage_w"] == pytest.approx(3.14 * 5e-3)
    assert t["power_w"] == pytest.approx(0.40 + 3.14 * 5e-3)
    assert t["area_mm2_28nm"] == pytest.approx(3.14)  # a 28 nm design is unchanged
    icarus = breakdown(nerframe.accelerator("icarus"))
    total = icarus.filter(pl.col("part") == "total").row(0, named=True)
    k_area, k_power = technology.area_factor(40), technology.energy_factor(40)
    assert total["area_mm2_28nm"] == pytest.approx(total["area_mm2"] * k_area)
    expected = total["dynamic_power_w"] * k_power + total["leakage_w"] * k_area
    assert total["power_w_28nm"] == pytest.approx(expected)
    parts = icarus.filter(pl.col("part") != "total")
    assert parts["area_mm2"].sum() == pytest.approx(total["area_mm2"])


def test_frame_kernel_and_scalar_oracle_agree_on_sram_and_leakage() -> None:
    out = frame(
        makespan=(0, 100, 0),
        interval=40,
        energy=(0.0, 1e-6, 0.0),
        busiest=(0, 1, 0),
        dram_bytes=(0.0, 4096.0, 0.0),
        sram_bytes=(0.0, 1e3, 0.0),
        batches=10,
        pipelined=True,
        frequency_mhz=1000.0,
        dram_bandwidth_gbps=512.0,
        derated_gbps=512.0,
        sram_pj_per_byte=2.0,
        leakage_w=0.5,
    )
    expected = ref.frame_energy((0.0, 1e-6, 0.0), (0.0, 1e3, 0.0), 10, out.frame_time_s, 2.0, 0.5)
    assert out.energy_per_frame_j == expected  # same terms, same order: bit for bit
    # by hand: 10 uJ + 10 x 1000 B x 2 pJ + 0.5 W x 460 ns
    assert out.energy_per_frame_j == pytest.approx(1e-5 + 2e-8 + 0.5 * 460e-9, rel=1e-12)


def test_hardware_command_shows_the_breakdown(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["hardware", "icarus"]) == 0
    out = capsys.readouterr().out
    assert "area and power" in out and "mlp_weight_memory_sonb" in out
    assert "total at 40 nm: area 9.98 mm²" in out and "at 28 nm: area 4.745 mm²" in out
    assert main(["hardware", "neurex", "--breakdown", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert [r["name"] for r in rows if r["part"] == "total"] == ["neurex"]
    assert sum(r["area_mm2"] for r in rows if r["part"] != "total") == pytest.approx(3.14)


# ------------------------------------------------------------------ helpers


def _toy(tmp_path: Path, *, sram: list[dict], node: float = 28, extra: dict | None = None) -> Path:
    data = {
        "name": "toy",
        "frequency_mhz": 1000,
        "dram_bandwidth_gbps": 100,
        "dram_pj_per_byte": 10,
        "technology_nm": node,
        "modules": [
            {
                "name": "mlp",
                "type": "MLP",
                "count": 2,
                "throughput_ops_per_cycle": 64,
                "latency_cycles": 2,
                "area_um2": 1000,
                "power_uw": 500,
            },
            {
                "name": "rest",
                "type": "HOST",
                "count": 1,
                "throughput_ops_per_cycle": 1024,
                "latency_cycles": 0,
                "area_um2": 0,
                "power_uw": 100,
            },
        ],
        "sram": sram,
        **(extra or {}),
    }
    path = tmp_path / f"toy_{len(list(tmp_path.iterdir()))}.json"
    path.write_text(json.dumps(data))
    return path


def _graph() -> nerframe.Graph:
    return nerframe.pipeline("icarus", rays=64, samples=4)


def test_toy_graph_runs_every_op_on_the_toy() -> None:
    ops = nerframe.costs(_graph().ops)
    assert ops.height > 0 and np.all(ops["bytes_total"].to_numpy() > 0)

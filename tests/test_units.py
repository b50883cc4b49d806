"""Work units, on-chip traffic, clock-scaled power and GPU rooflines, with hand-derived values."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nerframe
from nerframe.errors import UnmappedError
from nerframe.rooflines import PRESETS
from nerframe.scheduling import Configurations


def _file(tmp_path: Path, **module: object) -> Path:
    unit = {
        "name": "u",
        "type": "HOST",
        "count": 1,
        "throughput_ops_per_cycle": 2,
        "latency_cycles": 3,
        "area_um2": 10,
        "power_uw": 1000,
        **module,
    }
    doc = {
        "name": "t",
        "frequency_mhz": 100,
        "dram_bandwidth_gbps": 0.1,  # 1 byte per cycle at 100 MHz
        "dram_pj_per_byte": 10,
        "modules": [unit],
    }
    path = tmp_path / "t.json"
    path.write_text(json.dumps(doc))
    return path


def _sampler(rays: int, samples: int) -> nerframe.Graph:
    ops = [{"op_type": "UniformSampler", "B": rays, "N": samples}]
    return nerframe.graph("g", ops, [], frame_pixels=rays)


def test_a_sample_rated_module_takes_samples_per_cycle(tmp_path: Path) -> None:
    accel = nerframe.accelerator(_file(tmp_path, unit="sample", on_chip=True))
    row = nerframe.schedule(_sampler(4, 8), accel).schedule.row(0, named=True)
    # 4 rays x 8 samples = 32 samples at 2 per cycle = 16 cycles, plus 3 of latency
    assert row["compute_cycles"] == 16
    assert row["duration_cycles"] == 19


def test_an_on_chip_module_moves_no_dram_bytes(tmp_path: Path) -> None:
    g = _sampler(4, 8)
    nbytes = nerframe.costs(g.ops)["bytes_total"].item()
    off = nerframe.schedule(g, nerframe.accelerator(_file(tmp_path))).schedule.row(0, named=True)
    on = nerframe.schedule(g, nerframe.accelerator(_file(tmp_path, on_chip=True))).schedule
    on_row = on.row(0, named=True)
    # off chip: nbytes at 1 byte/cycle; energy = 1 mW x cycles / 100 MHz + nbytes x 10 pJ
    assert off["memory_cycles"] == nbytes
    seconds = off["duration_cycles"] / 100e6
    assert off["energy_j"] == pytest.approx(1e-3 * seconds + nbytes * 10e-12)
    assert on_row["memory_cycles"] == 0
    assert on_row["energy_j"] == pytest.approx(1e-3 * on_row["duration_cycles"] / 100e6)


def test_dynamic_power_scales_with_the_clock(tmp_path: Path) -> None:
    accel = nerframe.accelerator(_file(tmp_path, power_reference_mhz=50))
    configs = Configurations.of(accel)
    # given at 50 MHz, run at 100 MHz: twice the power
    assert configs.power_uw[0, 0] == 2000.0
    static = Configurations.of(nerframe.accelerator(_file(tmp_path)))
    assert static.power_uw[0, 0] == 1000.0


def test_a_unit_the_op_type_does_not_count_is_an_unmapped_error(tmp_path: Path) -> None:
    accel = nerframe.accelerator(_file(tmp_path, unit="gaussian"))
    with pytest.raises(UnmappedError, match=r"UniformSampler.*rated in gaussians"):
        nerframe.schedule(_sampler(4, 8), accel)


def test_unknown_unit_is_a_load_error_naming_the_field(tmp_path: Path) -> None:
    with pytest.raises(
        nerframe.NerframeError,
        match=r"'modules\[0\]\.unit': expected one of \"flop\", .*got \"photons\"",
    ):
        nerframe.accelerator(_file(tmp_path, unit="photons"))


def test_gpu_efficiency_derates_throughput(tmp_path: Path) -> None:
    path = _file(tmp_path)
    doc = json.loads(path.read_text())
    doc.update(kind="gpu", compute_efficiency=0.5, memory_efficiency=0.5)
    path.write_text(json.dumps(doc))
    accel = nerframe.accelerator(path)
    g = _sampler(4, 8)
    flops = nerframe.costs(g.ops)["flops"].item()
    row = nerframe.schedule(g, accel).schedule.row(0, named=True)
    assert row["compute_cycles"] == pytest.approx(flops / (2 * 0.5), abs=1)


def test_gpu_roofline_presets_come_from_the_gpu_files() -> None:
    # A100: 108 SMs x 4 tensor cores x 256 FP16 FMA x 2 FLOP x 1410 MHz
    assert PRESETS["A100"].peak_tflops == pytest.approx(108 * 2048 * 1410e6 / 1e12)
    assert PRESETS["A100"].bandwidth_gbps == 1935.0
    # H100 SXM: 132 SMs x 4096 FLOP/cycle = 540,672 FLOP/cycle, x 1830 MHz = 989.43 TFLOP/s
    assert PRESETS["H100"].peak_tflops == pytest.approx(989.42976)


def test_every_pipeline_runs_on_a_gpu() -> None:
    for name in nerframe.pipelines()["pipeline"]:
        summary = nerframe.schedule(nerframe.pipeline(name), "xavier_nx").summary
        assert summary["status"].item() == "ok"
        assert summary["pipelined"].item() is False  # a GPU runs one kernel at a time


def test_lookup_and_gaussian_counts_follow_the_catalogue(tmp_path: Path) -> None:
    ops = [
        {"op_type": "HashEncoding", "B": 2, "N": 3},  # 16 levels, 3-D: 8 corners a level
        {"op_type": "FrustumCulling", "G": 64},
    ]
    g = nerframe.graph("g", ops, [], frame_pixels=2)
    for unit, expected in (("lookup", 2 * 3 * 16 * 8 // 2), ("gaussian", 64 // 2)):
        accel = nerframe.accelerator(_file(tmp_path, unit=unit, on_chip=True))
        op = "HashEncoding" if unit == "lookup" else "FrustumCulling"
        one = nerframe.graph("g", [o for o in ops if o["op_type"] == op], [], frame_pixels=2)
        row = nerframe.schedule(one, accel).schedule.row(0, named=True)
        assert row["compute_cycles"] == expected  # items at 2 per cycle
    with pytest.raises(UnmappedError):  # HashEncoding counts no Gaussians
        nerframe.schedule(g, nerframe.accelerator(_file(tmp_path, unit="gaussian")))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"on_chip": "yes"}, r"modules\[0\]\.on_chip': expected bool, got \"yes\""),
        (
            {"power_reference_mhz": 0},
            r"modules\[0\]\.power_reference_mhz': expected float > 0.0, got 0",
        ),
        ({"efficiency": 0.5}, r"unknown field 'modules\[0\]\.efficiency'"),
    ],
)
def test_new_module_fields_are_checked(tmp_path: Path, change: dict, message: str) -> None:
    with pytest.raises(nerframe.NerframeError, match=message):
        nerframe.accelerator(_file(tmp_path, **change))


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"compute_efficiency": 1.5}, r"'compute_efficiency': expected float <= 1.0, got 1.5"),
        ({"memory_efficiency": 0}, r"'memory_efficiency': expected float > 0.0, got 0"),
        ({"kind": "fpga"}, r"'kind': expected one of \"accelerator\", \"gpu\", got \"fpga\""),
        ({"extends": "nope"}, r"'extends' names no loadable accelerator"),
    ],
)
def test_new_file_fields_are_checked(tmp_path: Path, change: dict, message: str) -> None:
    path = _file(tmp_path)
    path.write_text(json.dumps({**json.loads(path.read_text()), **change}))
    with pytest.raises(nerframe.NerframeError, match=message):
        nerframe.accelerator(path)


def test_extends_adds_units_to_a_base(tmp_path: Path) -> None:
    doc = {
        "name": "plug",
        "extends": "orin_nx",
        "kind": "accelerator",
        "modules": [
            {
                "name": "blender",
                "type": "BLENDING",
                "count": 1,
                "throughput_ops_per_cycle": 4,
                "latency_cycles": 0,
                "area_um2": 5,
                "power_uw": 7,
            }
        ],
        "operator_mapping": {"GaussianAlphaBlend": "blender"},
    }
    path = tmp_path / "plug.json"
    path.write_text(json.dumps(doc))
    plug, base = nerframe.accelerator(path), nerframe.accelerator("orin_nx")
    assert [m.name for m in plug.modules] == [*(m.name for m in base.modules), "blender"]
    assert plug.frequency_mhz == base.frequency_mhz == 918.0
    # the base's modules keep its calibrated efficiency, the file's own take its own (1)
    assert [m.efficiency for m in plug.modules] == [*(m.efficiency for m in base.modules), 1.0]
    assert any(s.startswith("orin_nx: ") for s in plug.sources)


def test_an_accelerator_rated_only_in_items_has_no_flop_roofline() -> None:
    gscore = nerframe.accelerator("gscore")
    assert {m.unit for m in gscore.modules} == {"gaussian", "sample"}
    assert gscore.peak_tflops == 0
    with pytest.raises(nerframe.NerframeError, match="no module rated in FLOPs"):
        nerframe.roofline(nerframe.pipeline("gscore").ops, ["gscore"])

"""Roofline systems and the roofline table: formulas against hand-computed numbers."""

from __future__ import annotations

import math
import random

import polars as pl
import pytest

import nerframe
from nerframe import schemas
from nerframe.errors import NerframeError
from nerframe.rooflines import PRESETS, System, roofline, system


def _costs(rows: list[tuple[float, float]], intensity: list[float] | None = None) -> pl.DataFrame:
    """Costs rows of MLP ops with the given (flops, bytes_total)."""
    flops = [f for f, _ in rows]
    nbytes = [b for _, b in rows]
    return pl.DataFrame(
        {
            "graph": ["g"] * len(rows),
            "op_id": list(range(len(rows))),
            "op_type": ["MLP"] * len(rows),
            "category": ["COMPUTATION"] * len(rows),
            "backward": [i % 2 == 1 for i in range(len(rows))],
            "flops": flops,
            "bytes_total": nbytes,
            "intensity": intensity
            if intensity is not None
            else [f / b if b else 0.0 for f, b in rows],
        }
    )


# 100 TFLOP/s and 1000 GB/s: ridge at 100 FLOP/byte.
S = System("S", 100.0, 1000.0)


def test_compute_bound_op_by_hand() -> None:
    # 1e12 FLOPs / 1e14 FLOP/s = 10 ms; 1e9 B / 1e12 B/s = 1 ms.
    row = roofline(_costs([(1e12, 1e9)]), [S]).row(0, named=True)
    assert row["t_compute_s"] == pytest.approx(0.01, rel=1e-15)
    assert row["t_memory_s"] == pytest.approx(0.001, rel=1e-15)
    assert row["time_s"] == row["t_compute_s"]
    assert row["bound"] == "compute"
    assert row["attainable_flops_per_s"] == pytest.approx(1e14)  # min(1e14, 1000 * 1e12)
    assert row["ridge"] == pytest.approx(100.0)
    assert (row["system"], row["peak_tflops"], row["bandwidth_gbps"]) == ("S", 100.0, 1000.0)


def test_memory_bound_op_by_hand() -> None:
    # intensity 0.5 FLOP/byte: t_compute = 5e8/1e14 = 5 µs, t_memory = 1e9/1e12 = 1 ms.
    row = roofline(_costs([(5e8, 1e9)]), [S]).row(0, named=True)
    assert row["t_compute_s"] == pytest.approx(5e-6, rel=1e-15)
    assert row["t_memory_s"] == pytest.approx(1e-3, rel=1e-15)
    assert row["time_s"] == row["t_memory_s"]
    assert row["bound"] == "memory"
    assert row["attainable_flops_per_s"] == pytest.approx(0.5 * 1e12)


def test_tie_is_compute_bound() -> None:
    # Exactly at the ridge of a 2 TFLOP/s, 1 GB/s system both times are exactly 1 s.
    tie = System("T", 2.0, 1.0)
    row = roofline(_costs([(2e12, 1e9)]), [tie]).row(0, named=True)
    assert row["t_compute_s"] == row["t_memory_s"] == 1.0
    assert row["bound"] == "compute"
    assert row["attainable_flops_per_s"] == 2e12


def test_efficiencies_stretch_times_not_the_roof() -> None:
    derated = System("D", 100.0, 1000.0, compute_efficiency=0.5, memory_efficiency=0.25)
    row = roofline(_costs([(1e12, 1e9)]), [derated]).row(0, named=True)
    assert row["t_compute_s"] == pytest.approx(0.02)
    assert row["t_memory_s"] == pytest.approx(0.004)
    assert row["attainable_flops_per_s"] == pytest.approx(1e14)
    assert row["ridge"] == pytest.approx(100.0)


def test_zero_bytes_attains_the_peak() -> None:
    # nerframe.costs records intensity 0 for an op without bytes.
    rows = roofline(_costs([(1e12, 0.0), (0.0, 0.0)], intensity=[0.0, 0.0]), [S])
    first, second = rows.iter_rows(named=True)
    assert first["t_memory_s"] == 0.0
    assert first["bound"] == "compute"
    assert first["attainable_flops_per_s"] == 1e14
    assert first["intensity"] == 0.0  # passed through as recorded
    assert second["time_s"] == 0.0
    assert second["bound"] == "compute"  # 0 == 0 is a tie


def test_schema_rows_and_order() -> None:
    costs = _costs([(1e12, 1e9), (5e8, 1e9), (3e9, 2e7)])
    table = roofline(costs, [S, "A100", "h100"])
    assert table.schema == schemas.ROOFLINE
    assert table.height == 9
    assert table.select("op_id", "system").rows() == [
        (op, s) for op in range(3) for s in ("S", "A100", "H100")
    ]
    assert table["backward"].to_list() == [b for b in costs["backward"] for _ in range(3)]


def test_matches_scalar_formulas_on_random_ops() -> None:
    rng = random.Random(7)
    rows = [(rng.uniform(0, 1e13), rng.uniform(1, 1e10)) for _ in range(300)]
    systems = [S, PRESETS["A100"], System("E", 2.5, 64.0, 0.8, 0.6)]
    table = roofline(_costs(rows), systems)
    for got, ((flops, nbytes), s) in zip(
        table.iter_rows(named=True), [(r, s) for r in rows for s in systems], strict=True
    ):
        t_c = flops / (s.peak_tflops * 1e12 * s.compute_efficiency)
        t_m = nbytes / (s.bandwidth_gbps * 1e9 * s.memory_efficiency)
        attainable = min(s.peak_tflops * 1e12, flops / nbytes * s.bandwidth_gbps * 1e9)
        assert got["t_compute_s"] == pytest.approx(t_c, rel=1e-12)
        assert got["t_memory_s"] == pytest.approx(t_m, rel=1e-12)
        assert got["time_s"] == pytest.approx(max(t_c, t_m), rel=1e-12)
        assert got["bound"] == ("compute" if t_c >= t_m else "memory")
        assert got["attainable_flops_per_s"] == pytest.approx(attainable, rel=1e-12)
        assert got["ridge"] == pytest.approx(s.ridge, rel=1e-12)


def test_presets_are_the_tensor_cores_of_the_gpu_files() -> None:
    # The spec's 314 and 989 TFLOP/s are the reference framework's rounded figures;
    # the presets now read the GPU files (one place per fact): A100 108 SMs x 2048
    # dense FP16 FLOP/cycle x 1410 MHz = 311.86944; H100 132 x 4096 x 1830 MHz = 989.42976.
    a100, h100 = PRESETS["A100"], PRESETS["H100"]
    assert (a100.peak_tflops, a100.bandwidth_gbps) == (pytest.approx(311.86944), 1935.0)
    assert (h100.peak_tflops, h100.bandwidth_gbps) == (pytest.approx(989.42976), 3350.0)
    assert all(s.source for s in PRESETS.values())
    assert a100.ridge == pytest.approx(311.86944e12 / 1935e9)
    assert system("a100") is a100
    assert system(h100) is h100


def test_system_of_an_accelerator_object() -> None:
    class Accel:
        name = "npu"
        peak_tflops = 2.0
        dram_bandwidth_gbps = 512.0

    s = system(Accel())
    assert (s.name, s.peak_tflops, s.bandwidth_gbps) == ("npu", 2.0, 512.0)
    assert math.isclose(s.ridge, 2e12 / 512e9)


def test_system_of_a_builtin_accelerator_name() -> None:
    hardware = pytest.importorskip("nerframe.hardware")
    accel = hardware.accelerator("neurex")
    s = system("neurex")
    assert (s.peak_tflops, s.bandwidth_gbps) == (accel.peak_tflops, accel.dram_bandwidth_gbps)


def test_unknown_system_lists_presets_and_accelerators() -> None:
    pytest.importorskip("nerframe.hardware")
    with pytest.raises(NerframeError, match=r"unknown roofline system 'B200'.*A100, H100.*neurex"):
        system("B200")


@pytest.mark.parametrize(
    ("kwargs", "field"),
    [
        ({"peak_tflops": 0.0}, "peak_tflops"),
        ({"bandwidth_gbps": -1.0}, "bandwidth_gbps"),
        ({"peak_tflops": math.inf}, "peak_tflops"),
        ({"compute_efficiency": 1.5}, "compute_efficiency"),
        ({"memory_efficiency": 0.0}, "memory_efficiency"),
    ],
)
def test_invalid_system_names_the_field(kwargs: dict[str, float], field: str) -> None:
    values = {"peak_tflops": 1.0, "bandwidth_gbps": 1.0} | kwargs
    with pytest.raises(NerframeError, match=field):
        System("bad", **values)


def test_bad_roofline_input() -> None:
    costs = _costs([(1.0, 1.0)])
    with pytest.raises(NerframeError, match="no system"):
        roofline(costs, [])
    with pytest.raises(NerframeError, match="named twice"):
        roofline(costs, [S, S])
    with pytest.raises(NerframeError, match="bytes_total"):
        roofline(costs.drop("bytes_total"), [S])
    with pytest.raises(NerframeError, match="not a roofline system"):
        system(42)  # type: ignore[arg-type]


def test_an_ops_table_is_costed_first() -> None:
    ops = nerframe.pipeline("neurex").ops
    from_ops = nerframe.roofline(ops, ["A100"])
    assert from_ops.equals(nerframe.roofline(nerframe.costs(ops), ["A100"]))

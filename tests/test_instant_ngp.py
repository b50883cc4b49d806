"""The instant_ngp pipeline (Instant-NGP's own NeRF networks), the hash-table reads
counted as SRAM traffic, NeuRex-Edge's SRAM access energy, and the published rows
that run Instant-NGP.

Oracles: the layer sizes of Mueller et al. 2022 (Sec. 5.4) and NeuRex p.4-5 worked
by hand into MACs, FLOPs and bytes; Horowitz's ISSCC 2014 SRAM figures worked by
hand; each re-pointed row recomputed from its two columns by scheduling the
workload directly.
"""

from __future__ import annotations

import math

import numpy as np
import polars as pl
import pytest

import nerframe
from nerframe.mapping import table_read_bytes
from nerframe.scheduling import Mapped

B, N = 1024, 24  # NeuRex-Edge's batch; hash-grid samples per ray
BN = B * N
HALF = 2  # FP16 bytes


def _costs() -> dict[int, dict[str, float]]:
    # keyed by op id less one: the network rows from the sampler on (op 0 is the
    # occupancy-grid march, tests/test_scenes.py and tests/test_costs.py)
    c = nerframe.costs(nerframe.pipeline("instant_ngp", rays=B).ops)
    return {i - 1: row for i, row in enumerate(c.iter_rows(named=True))}


def test_graph_is_instant_ngps_network_with_sourced_layer_sizes() -> None:
    g = nerframe.pipeline("instant_ngp", rays=B)
    assert g.ops["op_type"].to_list() == [
        "OccupancyMarch",
        "UniformSampler",
        "HashEncoding",
        "MLP",
        "SphericalHarmonics",
        "MLP",
        "RGBRenderer",
    ]
    assert g.ops["N"].to_list() == [394] + [N] * 6  # a bounded scene's march steps
    hash_row = g.ops.row(2, named=True)  # L = 16, T = 2^19, F = 2 (NRX-PDF p.4-5)
    assert (hash_row["num_levels"], hash_row["log2_hashmap_size"]) == (16, 19)
    assert hash_row["features_per_level"] == 2
    density, colour = g.ops.row(3, named=True), g.ops.row(5, named=True)
    # density: the 16 x 2 hash features -> 64 -> 16; colour: 16 + 16 SH -> 64 -> 64 -> 3
    assert (density["in_dim"], density["layer_width"], density["out_dim"]) == (32, 64, 16)
    assert (colour["in_dim"], colour["layer_width"], colour["out_dim"]) == (32, 64, 3)
    edges = set(g.edges.select("src", "dst").rows())
    assert edges == {(0, 1), (1, 2), (2, 3), (1, 4), (3, 5), (4, 5), (3, 6), (5, 6)}


def test_mlp_flops_and_bytes_per_op_against_a_hand_derivation() -> None:
    c = _costs()
    density_macs = 32 * 64 + 64 * 16  # 3072 per sample
    colour_macs = 32 * 64 + 64 * 64 + 64 * 3  # 6336 per sample
    assert c[2]["flops"] == 2 * BN * density_macs == 150_994_944
    assert c[4]["flops"] == 2 * BN * colour_macs == 311_427_072
    # weights and biases once, inputs and outputs per sample, FP16
    assert c[2]["bytes_w"] == (density_macs + 64 + 16) * HALF == 6304
    assert c[4]["bytes_w"] == (colour_macs + 64 + 64 + 3) * HALF == 12934
    assert c[2]["bytes_in"] == c[4]["bytes_in"] == 32 * BN * HALF
    assert c[2]["bytes_out"] == 16 * BN * HALF
    assert c[4]["bytes_out"] == 3 * BN * HALF
    # the SH direction encoding at the catalogue's degree 3: 16 coefficients,
    # 10 FLOP each, a direction in and a colour triple out
    assert c[3]["flops"] == 10 * 16 * BN
    assert (c[3]["bytes_in"], c[3]["bytes_w"], c[3]["bytes_out"]) == (
        3 * BN * HALF,
        3 * 16 * HALF,
        3 * BN * HALF,
    )
    # the hash encoding: 56 FLOP per level for the indexes, 16 per feature for the
    # trilinear weights; a position in, 16 x 2 features out
    assert c[1]["flops"] == 56 * BN * 16 + 16 * BN * 16 * 2
    assert (c[1]["bytes_in"], c[1]["bytes_out"]) == (3 * BN * HALF, 32 * BN * HALF)


def test_networks_are_two_thirds_of_the_spec_mlp() -> None:
    spec_macs = 32 * 64 + 3 * 64 * 64  # the spec's 4 x 64 MLP, out_dim 64
    ngp = nerframe.costs(nerframe.pipeline("instant_ngp", rays=B).ops)
    spec = nerframe.costs(nerframe.pipeline("neurex", rays=B).ops)
    ngp_mlp = ngp.filter(op_type="MLP")["flops"].sum()
    assert spec.filter(op_type="MLP")["flops"].sum() == 2 * BN * spec_macs
    assert ngp_mlp / (2 * BN * spec_macs) == pytest.approx(9408 / 14336)  # 0.656


def test_spec_model_is_the_spec_neurex_graph() -> None:
    g = nerframe.pipeline("instant_ngp", model="spec")
    spec = nerframe.pipeline("neurex", model="spec")
    assert g.ops.drop("graph").equals(spec.ops.drop("graph"))
    assert nerframe.pipelines(model="spec").filter(pipeline="instant_ngp")[
        "total_flops"
    ].item() == pytest.approx(7_887_388_672)


def test_hash_table_reads_are_sram_traffic_on_an_accelerator() -> None:
    c = nerframe.costs(nerframe.pipeline("instant_ngp", rays=B).ops)
    corners = BN * 16 * 8  # 16 levels x 8 voxel corners per sample
    reads = table_read_bytes(c)
    assert reads.tolist() == [0.0, 0.0, corners * 2 * HALF, 0.0, 0.0, 0.0, 0.0]
    neurex = nerframe.accelerator("neurex")
    mapped = Mapped.of(nerframe.pipeline("instant_ngp", rays=B), neurex)
    # off the systolic array an op's SRAM bytes are its bytes plus its table reads
    assert mapped.sram_bytes[2] == c["bytes_total"][2] + corners * 2 * HALF
    # the fine graph counts the reads in HashLookup's output, so nothing is added
    fine = nerframe.costs(nerframe.expand(nerframe.pipeline("instant_ngp", rays=B)).ops)
    assert not table_read_bytes(fine).any()
    lookup = fine.filter(op_type="HashLookup")
    assert lookup["bytes_out"].item() == corners * 2 * HALF


def test_neurex_edge_sram_energy_is_horowitzs_128_kb_figure_at_28_nm() -> None:
    # Horowitz ISSCC 2014: 20 pJ (32 KB) and 100 pJ (1 MB) per 64-bit access at 45 nm;
    # power-law in capacity between them, at 128 KB; 28 nm by the node table's factor
    per_64_bits = 20 * (128 / 32) ** (math.log(100 / 20) / math.log(1024 / 32))
    at_28 = per_64_bits / 8 * nerframe.technology.energy_factor(45, 28)
    neurex = nerframe.accelerator("neurex")
    assert neurex.sram_energy_pj_per_byte == pytest.approx(at_28, rel=1e-3)
    assert neurex.sram_energy_pj_per_byte == 2.411


REPOINTED = {
    "neurex-power": ("neurex", None, 1024),
    "neurex-speedup": ("neurex", "xavier_nx", 1024),
    "neurex-server-speedup": ("neurex_server", "rtx3070", 8192),
    "titan-rtx-ngp-lego": ("titan_rtx", None, None),
}


@pytest.fixture(scope="module")
def table() -> dict[str, dict[str, object]]:
    return {r["id"]: r for r in nerframe.validate().iter_rows(named=True)}


@pytest.mark.parametrize("row_id", REPOINTED)
def test_repointed_rows_run_instant_ngp_and_follow_from_their_two_columns(
    table: dict[str, dict[str, object]], row_id: str
) -> None:
    row = table[row_id]
    accel, base, rays = REPOINTED[row_id]
    assert row["pipeline"] == "instant_ngp" and row["tag"] == "validation"
    assert "instant_ngp" in str(row["source"])
    assert row["baseline_pipeline"] is None  # the baseline runs Instant-NGP too
    workload = {"rays": rays} if rays else {"scene": "lego"}
    graph = nerframe.pipeline("instant_ngp", **workload)
    mine = nerframe.schedule(graph, nerframe.accelerator(accel)).summary.row(0, named=True)
    if row["metric"] == "avg_power_w":
        expected = mine["avg_power_w"]
    elif row["metric"] == "fps":
        expected = mine["fps"]
    else:
        assert base is not None and row["baseline"] == base
        theirs = nerframe.schedule(graph, nerframe.accelerator(base)).summary
        expected = mine["fps"] / theirs["fps"].item()
    assert row["predicted"] == pytest.approx(expected, rel=1e-12)
    assert row["error"] == pytest.approx(expected / float(row["value"]) - 1, rel=1e-12)


def test_neurex_power_splits_into_modules_sram_dram_and_leakage() -> None:
    # the average power over a frame is the energy of its parts over the frame time
    neurex = nerframe.accelerator("neurex")
    graph = nerframe.pipeline("instant_ngp", rays=B)
    run = nerframe.schedule(graph, neurex)
    s = run.summary.row(0, named=True)
    mapped = Mapped.of(graph, neurex)
    batches = s["batches"]
    sram_j = mapped.sram_bytes.sum() * batches * 2.411e-12
    dram_j = mapped.dram_bytes.sum() * batches * 20e-12
    leak_w = 5000e-6 * 3.14  # 5 mW per mm2 (the node table's assumption) x 3.14 mm2
    busy = run.schedule.group_by("module").agg(cycles=pl.col("duration_cycles").sum())
    module_w = {"systolic_array_32x32": 0.19, "index_generation_unit": 0.16}
    module_w["interpolation_compute_unit"] = 0.05
    module_j = sum(
        module_w[m] * c * batches / 1e9 for m, c in busy.select("module", "cycles").rows()
    )
    total = (module_j + sram_j + dram_j) / s["frame_time_s"] + leak_w
    assert s["avg_power_w"] == pytest.approx(total, rel=0.02)
    # within 2x of NeuRex Table 4's 1.31 W, the buffers' share the largest part
    assert 0.655 <= s["avg_power_w"] <= 2.62
    assert sram_j / s["frame_time_s"] > module_w["systolic_array_32x32"]
    assert np.isfinite(s["avg_power_w"])

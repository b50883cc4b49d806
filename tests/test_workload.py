"""The workload model: op scope and the frame's phases, scene-sized Gaussian
pipelines, tile overlap, NeRF sampling and warping, and the spec model."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

import nerframe
from nerframe.builtin_pipelines import PIPELINES
from nerframe.cli import main
from nerframe.graphs import phases


def accelerator(tmp_path: Path) -> nerframe.Accelerator:
    """100 MHz, 1,000 DRAM bytes per cycle, no DRAM energy; 'alu' 10 FLOP/cycle at
    1 mW (1e-11 J/cycle), 'blend' 4 FLOP/cycle at 2 mW (2e-11 J/cycle), no latency."""
    module = {"type": "SAMPLING", "count": 1, "latency_cycles": 0, "area_um2": 1, "memory_kb": 0}
    spec = {
        "name": "phases",
        "frequency_mhz": 100,
        "dram_bandwidth_gbps": 100,
        "dram_pj_per_byte": 0,
        "sram_um2_per_kb": 1,
        "modules": [
            {**module, "name": "alu", "throughput_ops_per_cycle": 10, "power_uw": 1000},
            {**module, "name": "blend", "throughput_ops_per_cycle": 4, "power_uw": 2000},
        ],
        "operator_mapping": {
            "FrustumCulling": "alu",
            "UniformSampler": "alu",
            "RGBRenderer": "blend",
            "Sorting": "blend",
        },
    }
    path = tmp_path / "phases.json"
    path.write_text(json.dumps(spec))
    return nerframe.accelerator(path)


def frame_graph(sorting_scope: str = "frame", everything: str | None = None) -> nerframe.Graph:
    """Culling (frame) -> sampler -> renderer (batch) -> sorting; 10 batches of 10 rays.

    FLOPs: culling 17*100 = 1,700 (170 alu cycles); sampler 40 (4 alu cycles);
    renderer 6*40 = 240 (60 blend cycles); sorting 40*log2(4) = 80 (20 blend cycles).
    Every op moves fewer than 1,000 bytes: one memory cycle, so all are compute-bound.
    """
    ops = [
        {"op_type": "FrustumCulling", "G": 100},
        {"op_type": "UniformSampler", "B": 10, "N": 4},
        {"op_type": "RGBRenderer", "B": 10, "N": 4},
        {"op_type": "Sorting", "B": 10, "N": 4, "scope": sorting_scope},
    ]
    if everything:
        ops = [{**op, "scope": everything} for op in ops]
    return nerframe.graph("phases", ops, [(0, 1), (1, 2), (2, 3)], frame_pixels=100)


def test_catalogue_scope_defaults() -> None:
    scope = dict(nerframe.catalogue().select("op_type", "scope").iter_rows())
    per_gaussian = ["FrustumCulling", "Projection", "AABBIntersection", "OBBIntersection"]
    assert {scope[t] for t in [*per_gaussian, "FrustumCullingProjection", "SubtileSkip"]} == {
        "frame"
    }
    assert scope["MLP"] == scope["SphericalHarmonics"] == scope["Sorting"] == "batch"
    ops = frame_graph().ops
    assert ops["scope"].to_list() == ["frame", "batch", "batch", "frame"]


def test_phases_of_a_graph() -> None:
    assert phases(frame_graph()).tolist() == [0, 1, 1, 2]
    assert phases(frame_graph(everything="batch")).tolist() == [1, 1, 1, 1]
    assert phases(frame_graph(everything="frame")).tolist() == [0, 0, 0, 0]


def test_frame_op_between_batch_ops_is_an_error() -> None:
    ops = [
        {"op_type": "UniformSampler", "B": 10, "N": 4},
        {"op_type": "Sorting", "B": 10, "N": 4, "scope": "frame"},
        {"op_type": "RGBRenderer", "B": 10, "N": 4},
    ]
    with pytest.raises(
        nerframe.NerframeError,
        match=r"graph 'bad': op 1 \(Sorting\) has scope 'frame' but lies between batch-scoped",
    ):
        nerframe.graph("bad", ops, [(0, 1), (1, 2)])
    # Through a side path too: 0 (batch) -> 1 (frame) -> 3 (batch), 0 -> 2 -> 3.
    side = [*ops, {"op_type": "RGBRenderer", "B": 10, "N": 4}]
    with pytest.raises(nerframe.NerframeError, match=r"op 1 \(Sorting\)"):
        nerframe.graph("bad", side, [(0, 1), (0, 2), (1, 3), (2, 3)])


def test_bad_scope_is_refused() -> None:
    with pytest.raises(
        nerframe.NerframeError, match="scope must be 'frame' or 'batch', got 'frme'"
    ):
        nerframe.operators([{"op_type": "Sorting", "B": 1, "N": 1, "scope": "frme"}])


def test_pre_batch_post_frame_formula(tmp_path: Path) -> None:
    accel = accelerator(tmp_path)
    result = nerframe.schedule(frame_graph(), accel)
    s = result.summary.row(0, named=True)
    # pre: culling 170; one batch: sampler 4 then renderer 60 = 64, interval 60 (blend);
    # post: sorting 20. Pipelined: 170 + (64 + 9 * 60) + 20.
    assert (s["pre_cycles"], s["makespan_cycles"], s["interval_cycles"]) == (170, 64, 60)
    assert (s["post_cycles"], s["batches"]) == (20, 10)
    assert s["frame_cycles"] == 170 + 64 + 9 * 60 + 20 == 794
    assert s["fps"] == pytest.approx(100e6 / 794, rel=1e-12)
    # Energy: pre 170 * 1e-11; per batch 4 * 1e-11 + 60 * 2e-11; post 20 * 2e-11.
    energy = 170e-11 + 10 * (4e-11 + 120e-11) + 40e-11
    assert s["energy_per_frame_j"] == pytest.approx(energy, rel=1e-12)
    assert s["bottleneck_module"] == "blend"  # the batch stream is the longest phase
    rows = result.schedule.select("op_id", "scope", "start_cycle", "end_cycle").rows()
    assert rows == [
        (0, "frame", 0, 170),
        (1, "batch", 170, 174),
        (2, "batch", 174, 234),
        (3, "frame", 774, 794),
    ]
    serial = nerframe.schedule(frame_graph(), accel, pipelined=False).summary
    assert serial["frame_cycles"].item() == 170 + 10 * 64 + 20


def test_everything_per_batch_is_the_spec_frame_formula(tmp_path: Path) -> None:
    s = nerframe.schedule(frame_graph(everything="batch"), accelerator(tmp_path)).summary
    # One batch: 170 + 4 + 60 + 20 = 254; interval: alu busy 174 > blend 80.
    row = s.row(0, named=True)
    assert (row["pre_cycles"], row["makespan_cycles"], row["interval_cycles"]) == (0, 254, 174)
    assert row["frame_cycles"] == 254 + 9 * 174
    assert row["bottleneck_module"] == "alu"


def test_frame_work_dominating_names_its_module(tmp_path: Path) -> None:
    g = nerframe.graph("one", [{"op_type": "FrustumCulling", "G": 100_000}], frame_pixels=100)
    row = nerframe.schedule(g, accelerator(tmp_path)).summary.row(0, named=True)
    assert (row["batches"], row["pre_cycles"], row["makespan_cycles"]) == (0, 170_000, 0)
    assert (row["frame_cycles"], row["bottleneck_module"]) == (170_000, "alu")


def test_sweep_rows_follow_the_frame_model(tmp_path: Path) -> None:
    accel = accelerator(tmp_path)
    swept = nerframe.sweep(frame_graph(), accel, {"alu.throughput_ops_per_cycle": [10, 20]})
    # alu at 20: culling 85, sampler 2 -> one batch 62, interval 60.
    assert swept["frame_cycles"].to_list() == [794, 85 + 62 + 9 * 60 + 20]
    assert swept["bottleneck_module"].to_list() == ["blend", "blend"]


# --- Gaussian pipelines ----------------------------------------------------------------


def cost_of(**record: object) -> dict[str, object]:
    return nerframe.costs(nerframe.operators([record])).row(0, named=True)


def test_tile_tests_count_only_overlapped_tiles() -> None:
    # T = 80 * 45 = 3,600 tiles; each Gaussian tested against 4 of them.
    aabb = cost_of(op_type="AABBIntersection", G=1000, tiles_per_gaussian=4)
    assert (aabb["flops"], aabb["elems_w"], aabb["elems_out"]) == (4 * 1000 * 4, 4 * 3600, 400)
    assert cost_of(op_type="OBBIntersection", G=1000, tiles_per_gaussian=4)["flops"] == 40_000
    assert cost_of(op_type="SubtileSkip", G=1000, tiles_per_gaussian=4)["flops"] == 16_000
    # 17*1000 + 72*500 + (4 + 10) * 500 * 4
    fcp = cost_of(op_type="FrustumCullingProjection", G=1000, tiles_per_gaussian=4)
    assert fcp["flops"] == 17_000 + 36_000 + 28_000
    # Never more than every tile: a 64x64 image has 16 tiles of 16 px.
    small = {"image_w": 64, "image_h": 64}
    clamped = cost_of(op_type="AABBIntersection", G=10, tiles_per_gaussian=100, **small)
    assert clamped["flops"] == 4 * 10 * 16
    # 0 (the default) keeps the spec's all-pairs formula.
    assert cost_of(op_type="AABBIntersection", G=10, tiles_per_gaussian=0)["flops"] == 144_000


def test_expand_conserves_flops_with_tile_overlap() -> None:
    g = nerframe.pipeline("gbu_train")  # the realistic graph that keeps the composite
    fine = nerframe.expand(g)
    assert nerframe.costs(fine.ops)["flops"].sum() == nerframe.costs(g.ops)["flops"].sum()
    # the 1280x720 frame, 500,000 visible Gaussians: boxes of 688.7 x 921,600 / 500,000
    # = 1,269 px^2 (35.6 px a side) span 1 + 35.6/16 tiles a side: round(10.4) = 10 tiles
    assert fine.ops.filter(op_type="OBBIntersection")["tiles_per_gaussian"].item() == 10
    assert set(fine.ops.head(4)["scope"]) == {"frame"}


def test_gscore_realistic_workload() -> None:
    g = nerframe.pipeline("gscore")
    table = nerframe.costs(g.ops)
    flops = dict(zip(table["op_type"], table["flops"], strict=True))
    # G = 1,000,000 Gaussians, 500,000 kept by culling; their boxes overlap 688.7 deep:
    # 1,269 px^2 each (35.6 px a side), 1 + 35.6/16 tiles a side: round(10.4) = 10 tiles.
    box = math.sqrt(688.7 * 1280 * 720 / 500_000)
    hit = round((1 + box / 16) ** 2)
    assert hit == 10
    assert flops["FrustumCulling"] == 17e6
    # Preprocessing (projection, covariance, SH) once per visible Gaussian, as the GPU's.
    assert flops["GaussianPreprocess"] == 600 * 500_000
    assert flops["SubtileSkip"] == 4 * 500_000 * hit
    # Per-tile sorting: 3,600 tiles of ceil(500,000 * 10 / 3,600) = 1,389 Gaussians.
    assert flops["Sorting"] == 3600 * 1389 * math.log2(1389)
    # Blending: every pair's tile list entry, on the pixels of the tile inside the
    # Gaussian's box (subtile skipping): 1,269 px over 10 tiles, ceil(126.9) = 127
    # fragments a pair, 34 thread instructions (68 FLOP-equivalents) each.
    assert flops["TileBlend"] == 68 * 500_000 * hit * math.ceil(box * box / hit)
    assert math.ceil(box * box / hit) == 127
    assert phases(g).tolist() == [0, 0, 0, 0, 0]  # every stage once per frame


def test_gaussians_and_tiles_are_workload_parameters() -> None:
    g = nerframe.pipeline("gbu", gaussians=3_000_000, tiles_per_gaussian=2, rays=4096)
    pre = g.ops.filter(op_type="GaussianPreprocess").row(0, named=True)
    assert (pre["B"], pre["N"], pre["scope"]) == (1_500_000, 1, "frame")
    assert g.ops.filter(op_type="RadixSort").select("B", "N").row(0) == (1_500_000, 2)
    assert g.ops.filter(op_type="RowGeneration")["N"].item() == math.ceil(1_500_000 * 2 / 3600)
    assert g.batches == math.ceil(1280 * 720 / 4096)


def test_gbu_renders_and_gbu_train_trains() -> None:
    gbu = nerframe.pipeline("gbu")
    assert gbu.kind == "inference" and not gbu.ops["backward"].any()
    # the GPU runs 3DGS's own stages up to the sort (the 3dgs graph's rows); the GBU
    # replaces the blending
    assert gbu.ops["op_type"].to_list() == [
        "FrustumCulling",
        "GaussianPreprocess",
        "TileDuplicate",
        "RadixSort",
        "DecompBinning",
        "RowGeneration",
        "RowProcessing",
        "GaussianAlphaBlend",
    ]
    assert phases(gbu).tolist() == [0, 0, 0, 0, 0, 1, 1, 1]
    # the GPU evaluates each visible Gaussian's colour before the GBU blends
    assert gbu.edges.filter(dst=7)["src"].to_list() == [6, 1]
    train = nerframe.pipeline("gbu_train")
    assert train.kind == "training" and train.ops.height == 11
    spec = nerframe.pipeline("gbu", model="spec")
    assert spec.kind == "training"
    same = nerframe.pipeline("gbu_train", model="spec").ops.with_columns(graph=pl.lit("gbu"))
    assert spec.ops.equals(same)


def test_gbu_sets_up_each_gaussian_once_per_pixel_row() -> None:
    # IRSS shades a row of pixels left to right after one set-up per Gaussian of
    # the row's tile list: RowGeneration runs per 16-px tile row, not per pixel.
    g = nerframe.pipeline("gbu")
    table = nerframe.costs(g.ops)
    gen = table.filter(op_type="RowGeneration").row(0, named=True)
    # 1280 x 720 / 16 = 57,600 rows of a tile; ceil(500,000 * 10 / 3,600) = 1,389 each
    assert (gen["B"], gen["N"], gen["scope"]) == (57_600, 1389, "batch")
    assert gen["flops"] == 8 * 57_600 * 1389
    assert gen["bytes_total"] == (5 + 5) * 57_600 * 1389 * 2
    shade = table.filter(op_type="RowProcessing").row(0, named=True)
    assert (shade["B"], shade["N"], shade["flops"]) == (921_600, 167, 16 * 921_600 * 167)
    assert nerframe.pipeline("gbu", rays=1000).ops.filter(op_type="RowGeneration")["B"].item() == 63
    train = nerframe.pipeline("gbu_train").ops.filter(op_type="RowGeneration")
    assert set(train.select("B", "N").rows()) == {(921_600, 167)}  # per pixel, as the spec


def test_gsarch_update_runs_after_the_batches() -> None:
    g = nerframe.pipeline("gsarch")
    assert phases(g).tolist() == [0, 0, 0, 1, 1, 1, 1, 1, 2, 2]
    update = g.ops.filter(op_type="Rearrangement").row(0, named=True)
    assert (update["B"], update["N"], update["backward"]) == (500_000, 10, True)


# --- NeRF pipelines --------------------------------------------------------------------


def test_hash_grid_pipelines_take_24_samples() -> None:
    # Every neurex formula is linear in B*N: the spec total scaled by 24/64.
    total = nerframe.costs(nerframe.pipeline("neurex").ops)["flops"].sum()
    assert total == 7_887_388_672 * 24 // 64 == 2_957_770_752
    for name in ("cicero", "srender", "instant3d"):
        assert set(nerframe.pipeline(name).ops["N"]) == {24}
    assert set(nerframe.pipeline("icarus").ops["N"]) == {192}


def test_cicero_renders_a_fraction_of_the_pixels() -> None:
    g = nerframe.pipeline("cicero")
    # 12 % of 800x800 = 76,800 pixels, in batches of 4,096 rays.
    assert (g.rendered_fraction, g.rendered_pixels, g.batches) == (0.12, 76_800, 19)
    assert nerframe.pipeline("cicero", rendered_fraction=1).batches == 157
    row = nerframe.schedule(g, "cicero").summary.row(0, named=True)
    assert row["batches"] == 19
    assert row["frame_cycles"] == row["makespan_cycles"] + 18 * row["interval_cycles"]
    with pytest.raises(
        nerframe.NerframeError, match=r"rendered_fraction must be a number in \(0, 1\]"
    ):
        nerframe.pipeline("cicero", rendered_fraction=1.5)


# --- the spec model --------------------------------------------------------------------


@pytest.mark.parametrize("name", PIPELINES)
def test_spec_model_is_batch_only(name: str) -> None:
    g = nerframe.pipeline(name, model="spec")
    assert set(g.ops["scope"]) == {"batch"}
    assert g.rendered_fraction == 1.0
    assert set(g.ops["tiles_per_gaussian"].drop_nulls()) <= {0}


def test_spec_model_keeps_the_spec_frame_formula() -> None:
    row = nerframe.schedule(nerframe.pipeline("gscore", model="spec"), "gscore").summary.row(
        0, named=True
    )
    assert (row["batches"], row["pre_cycles"], row["post_cycles"]) == (225, 0, 0)
    assert row["frame_cycles"] == row["makespan_cycles"] + 224 * row["interval_cycles"]


def test_unknown_model() -> None:
    with pytest.raises(nerframe.NerframeError, match="unknown workload model 'real'"):
        nerframe.pipeline("gscore", model="real")


def test_cli_model_flag(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["costs", "gscore", "--model", "spec", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["G"] == 4096 * 64 and rows[0]["scope"] == "batch"
    assert main(["costs", "gscore", "--format", "json"]) == 0
    assert json.loads(capsys.readouterr().out)[0]["G"] == 1_000_000
    with pytest.raises(SystemExit):
        main(["costs", "gscore", "--model", "real"])
    assert "invalid choice: 'real'" in capsys.readouterr().err


# --- graph files -----------------------------------------------------------------------


def test_graph_file_scope_and_rendered_fraction(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    ops = [
        {"op_type": "FrustumCulling", "G": 100},
        {"op_type": "SphericalHarmonics", "B": 50, "N": 1, "scope": "frame"},
        {"op_type": "GaussianAlphaBlend", "B": 64, "N": 16},
    ]
    document = {"ops": ops, "edges": [[0, 1], [1, 2]], "frame_pixels": 640}
    path.write_text(json.dumps({**document, "rendered_fraction": 0.5}))
    g = nerframe.read_graph(path)
    assert g.ops["scope"].to_list() == ["frame", "frame", "batch"]
    assert (g.rays, g.rendered_pixels, g.batches) == (64, 320, 5)
    path.write_text(json.dumps({**document, "rendered_fraction": "half"}))
    assert main(["costs", str(path)]) == 1

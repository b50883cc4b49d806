"""3DGS workloads that follow the frame and the scene (nerframe.builtin_pipelines:
`gaussian_frame`, `pipeline(width=, height=)`, one stage vocabulary); docs/workloads.md.

Expected sizes are derived by hand here from the published figures the model rests on
(GBU, HPCA 2025, p.5: 1.67e9 fragments a frame, 161 per Gaussian-tile pair, 13.7 %
contributing, 1.68 M visible Gaussians) and the scene table's frames, not read back
from the code under test.
"""

from __future__ import annotations

import json
import math

import pytest

import nerframe
from nerframe.builtin_pipelines import gaussian_frame, pipeline
from nerframe.cli import main
from nerframe.errors import InvalidInputError

# GBU's profile: 1.1 TFLOP/s at 60 FPS at 11 FLOP a fragment, 161 fragments a pair,
# 1.68 M visible Gaussians: 6.16 tiles per visible Gaussian.
PAIRS_PER_VISIBLE = 1.1e12 / 60 / 11 / 161 / 1.68e6
BOX_AT_GBU = ((math.sqrt(PAIRS_PER_VISIBLE) - 1) * 16) ** 2  # 562 px^2: 23.7 px a side
# the seven Mip-NeRF360 frames of the scene table (3DGS's evaluation sizes), mean pixels
MIPNERF360 = [(1237, 822), (1297, 840), (1245, 825), (1559, 1039), (1558, 1038)]
MIPNERF360 += [(1558, 1039), (1557, 1038)]
GBU_PIXELS = sum(w * h for w, h in MIPNERF360) / 7
OVERLAP = BOX_AT_GBU * 1.68e6 / GBU_PIXELS  # box area over the frame: 688.7


def by_hand(width: int, height: int, gaussians: int) -> dict[str, int]:
    """The stage sizes of one frame, derived independently of `gaussian_frame`."""
    visible = math.ceil(gaussians / 2)
    tiles = math.ceil(width / 16) * math.ceil(height / 16)
    side = math.sqrt(OVERLAP * width * height / visible)
    hit = round((1 + side / 16) ** 2)
    return {"visible": visible, "tiles": tiles, "hit": hit, "pairs": visible * hit}


def test_the_constants_are_the_published_figures_derived() -> None:
    assert pytest.approx(6.16, abs=0.01) == PAIRS_PER_VISIBLE
    assert pytest.approx(1_372_193, abs=1) == GBU_PIXELS
    assert pytest.approx(nerframe.builtin_pipelines.OVERLAP, abs=0.05) == OVERLAP
    # contributing fragments per visible Gaussian over its box: 136 px of 562
    covered = 0.137 * 161 * PAIRS_PER_VISIBLE / BOX_AT_GBU
    assert covered == pytest.approx(nerframe.builtin_pipelines.COVERED, abs=1e-4)


@pytest.mark.parametrize(
    ("width", "height", "hit"),
    [(1920, 1080, 8), (3840, 2160, 22), (1280, 720, 5)],
)
def test_3dgs_at_a_frame_by_hand(width: int, height: int, hit: int) -> None:
    # the Mip-NeRF360 mean scene, 3.36 M Gaussians, at 1080p, 4K and 720p
    want = by_hand(width, height, 3_360_000)
    assert want["hit"] == hit
    rows = {
        r["op_type"]: r
        for r in pipeline("3dgs", gaussians=3_360_000, width=width, height=height).ops.iter_rows(
            named=True
        )
    }
    assert rows["FrustumCulling"]["G"] == 3_360_000
    assert (rows["GaussianPreprocess"]["B"], rows["GaussianPreprocess"]["N"]) == (1_680_000, 1)
    assert (rows["TileDuplicate"]["B"], rows["TileDuplicate"]["N"]) == (1_680_000, hit)
    assert (rows["RadixSort"]["B"], rows["RadixSort"]["N"]) == (1_680_000, hit)
    assert (rows["TileBlend"]["B"], rows["TileBlend"]["N"]) == (want["pairs"], 161)
    f = gaussian_frame(width, height, 3_360_000)
    assert (f.tiles, f.pairs) == (want["tiles"], want["pairs"])
    assert f.per_tile == math.ceil(want["pairs"] / want["tiles"])


def test_tiles_per_gaussian_saturate_at_the_grid() -> None:
    # a 40x24 frame is a 3x2 grid: a box larger than the frame overlaps all 6 tiles
    assert gaussian_frame(40, 24, 10).tiles_per_gaussian == 6
    assert gaussian_frame(1280, 720, 2, tiles_per_gaussian=0).tiles_per_gaussian == 3600
    assert gaussian_frame(1280, 720, 2, tiles_per_gaussian=10**6).tiles_per_gaussian == 3600
    # a published count overrides the footprint model
    assert pipeline("3dgs", tiles_per_gaussian=6).ops["N"].to_list()[2:4] == [6, 6]


def test_frame_time_grows_with_resolution_sub_linearly() -> None:
    # same scene (3.36 M Gaussians) at 720p, 1080p and 4K on the RTX A6000: slower with
    # every step, by less than the pixels grow (per-Gaussian work does not grow, per-pair
    # work grows as (1 + s/16)^2 with the box side s proportional to the frame's side)
    times = []
    for width, height in ((1280, 720), (1920, 1080), (3840, 2160)):
        g = pipeline("3dgs", gaussians=3_360_000, width=width, height=height)
        times.append(nerframe.schedule(g, "a6000").summary["frame_time_s"].item())
    assert times[0] < times[1] < times[2]
    assert times[1] / times[0] < 1920 * 1080 / (1280 * 720)
    assert times[2] / times[1] < 4
    # the pairs (the sort and blend work) grow by the hand-derived ratio: 22/8 = 2.75
    pairs = [by_hand(w, h, 3_360_000)["pairs"] for w, h in ((1920, 1080), (3840, 2160))]
    assert pairs[1] / pairs[0] == pytest.approx(22 / 8)
    assert 1.5 < times[2] / times[1] < 2.75


def test_frame_pixels_alone_scales_the_default_frame() -> None:
    # 1920 x 1080 is 1280 x 720 scaled by 1.5: the same graph as width and height give
    by_pixels = pipeline("3dgs", frame_pixels=1920 * 1080)
    by_size = pipeline("3dgs", width=1920, height=1080)
    assert by_pixels.ops.equals(by_size.ops) and by_pixels.frame_pixels == 2_073_600
    # ray pipelines: the frame sets only the pixels (800 x 800 default)
    assert pipeline("neurex", width=1920, height=1080).frame_pixels == 2_073_600
    # the spec model keeps its graph; the frame sets its pixels
    spec = pipeline("gscore", model="spec", width=1920, height=1080)
    assert spec.frame_pixels == 2_073_600
    assert spec.ops.equals(pipeline("gscore", model="spec", frame_pixels=2_073_600).ops)


@pytest.mark.parametrize(
    ("options", "culprit"),
    [
        ({"width": 1920}, "width"),
        ({"height": 1080}, "height"),
        ({"width": 1920, "height": 1080, "frame_pixels": 100}, "frame_pixels"),
        ({"width": 0, "height": 1080}, "width"),
        ({"width": 19.5, "height": 1080}, "width"),
        ({"frame_pixels": -1}, "frame_pixels"),
    ],
)
def test_bad_frames_are_refused(options: dict[str, object], culprit: str) -> None:
    with pytest.raises(InvalidInputError) as caught:
        pipeline("3dgs", **options)  # type: ignore[arg-type]
    assert caught.value.culprit == culprit and "\n" not in str(caught.value)


GPU_STAGES = ["FrustumCulling", "GaussianPreprocess", "TileDuplicate", "RadixSort"]


@pytest.mark.parametrize("scene", [None, "bicycle", "room"])
def test_one_stage_vocabulary(scene: str | None) -> None:
    def rows(name: str) -> list[tuple[object, ...]]:
        ops = pipeline(name, scene=scene).ops
        return ops.select("op_type", "scope", "B", "N", "G", "tiles_per_gaussian").rows()

    three = rows("3dgs")
    assert [r[0] for r in three] == [*GPU_STAGES, "TileBlend"]
    # GauRast replaces only the rasteriser (its file maps TileBlend): the same graph
    assert rows("gaurast") == three
    # GBU: the GPU's four stages as 3DGS runs them, then the GBU's blending
    assert rows("gbu")[:4] == three[:4]
    # GSCore and GSArch: culling and preprocessing of the same sizes on their own units
    assert rows("gscore")[:2] == three[:2] and rows("gsarch")[:2] == three[:2]
    # GSCore's sorting unit sorts every tile's list: the pairs 3DGS radix-sorts
    sort = pipeline("gscore", scene=scene).ops.filter(op_type="Sorting").row(0, named=True)
    duplicate = pipeline("3dgs", scene=scene).ops.filter(op_type="TileDuplicate")
    pairs = duplicate["B"].item() * duplicate["N"].item()
    assert sort["N"] == math.ceil(pairs / sort["B"])
    # GSCore blends the same pairs, on the pixels inside each Gaussian's box
    blend = pipeline("gscore", scene=scene).ops.filter(op_type="TileBlend").row(0, named=True)
    assert blend["B"] == pairs and blend["N"] <= 256


def test_gbu_speedup_compares_the_same_gpu_work() -> None:
    # the GPU half of gbu on the Orin NX costs what the same stages of 3dgs cost there
    gbu = nerframe.schedule(pipeline("gbu"), "gbu").schedule
    gpu = nerframe.schedule(pipeline("3dgs"), "orin_nx").schedule
    for op in GPU_STAGES:
        mine = gbu.filter(op_type=op)["duration_cycles"].item()
        assert mine == gpu.filter(op_type=op)["duration_cycles"].item(), op


def test_cli_width_and_height(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["costs", "3dgs", "--width", "3840", "--height", "2160", "--format", "json"]
    assert main(args) == 0
    rows = json.loads(capsys.readouterr().out)
    want = by_hand(3840, 2160, 1_000_000)
    assert [r["N"] for r in rows][2:] == [want["hit"], want["hit"], 161]
    assert main(["costs", "3dgs", "--width", "3840"]) != 0
    assert capsys.readouterr().err.startswith("error: pipeline: width needs its pair")

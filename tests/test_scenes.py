"""Standard scenes: the packaged table against its sources, what a scene sets in each
pipeline, `--scene` on every workload command, the sweep axis, and the errors."""

from __future__ import annotations

import json
import math
import tomllib
from pathlib import Path

import polars as pl
import pytest
from cli_process import run_cli

import nerframe
from nerframe.builtin_pipelines import PIPELINES, pipeline
from nerframe.cli import main
from nerframe.errors import InvalidInputError, NerframeError
from nerframe.scene_table import SCENES, Scene, read_scenes, scenes

ROOT = Path(__file__).resolve().parents[1]

# The published figures, as their sources print them (width, height, Gaussians).
NERF_SYNTHETIC = ["chair", "drums", "ficus", "hotdog", "lego", "materials", "mic", "ship"]
"""800x800 each: the dataset's README.txt ("Images are 800x800"); no per-scene 3DGS
count is published (the 3DGS paper gives 200-500 K per scene, p.9)."""
MIPNERF360 = {
    # images_4 / images_2 sizes: DirectVoxGO configs/nerf_unbounded/*.py comments and
    # code-index id 58148948977; Gaussians: gsplat docs/source/tests/eval.rst, inria-30k.
    "bicycle": (1237, 822, 6.06e6),
    "garden": (1297, 840, 5.71e6),
    "stump": (1245, 825, 4.82e6),
    "bonsai": (1559, 1039, 1.24e6),
    "counter": (1558, 1038, 1.19e6),
    "kitchen": (1558, 1039, 1.78e6),
    "room": (1557, 1038, 1.55e6),
}
# The scenes the two means are over, as 3DGS renders them (code-index ids 58148948977,
# 69737873598), and the means of w-m/3dgs-compression-survey (3DGS-30K rows).
MEANS = {
    "tanks_temples": ("Tanks&Temples", [(980, 545), (979, 546)], 1783867.00),  # train, truck
    # drjohnson, playroom
    "deep_blending": ("Deep Blending", [(1332, 876), (1264, 832)], 2975634.50),
}
GAUSSIAN_PIPELINES = ["gscore", "gaurast", "gsarch", "gbu", "gbu_train", "3dgs"]
HASH_GRID = ["neurex", "cicero", "srender", "instant3d", "instant_ngp"]


def half_up(x: float) -> int:
    return math.floor(x + 0.5)


def mean_frame(sizes: list[tuple[int, int]]) -> tuple[int, int]:
    return (
        half_up(sum(w for w, _ in sizes) / len(sizes)),
        half_up(sum(h for _, h in sizes) / len(sizes)),
    )


def expected() -> dict[str, tuple[str, int, int, int | None]]:
    """Every scene: dataset, width, height, Gaussians (None: not published)."""
    rows: dict[str, tuple[str, int, int, int | None]] = {
        s: ("NeRF-Synthetic", 800, 800, None) for s in NERF_SYNTHETIC
    }
    for s, (w, h, g) in MIPNERF360.items():
        rows[s] = ("Mip-NeRF360", w, h, round(g))
    for name, (dataset, sizes, gaussians) in MEANS.items():
        rows[name] = (dataset, *mean_frame(sizes), half_up(gaussians))
    return rows


def test_table_holds_the_published_figures() -> None:
    table = scenes()
    want = expected()
    assert table["name"].to_list() == list(want)
    for row in table.iter_rows(named=True):
        dataset, width, height, gaussians = want[row["name"]]
        got = (row["dataset"], row["width"], row["height"], row["gaussians"])
        assert got == (dataset, width, height, gaussians), row["name"]
        assert row["unbounded"] == (dataset != "NeRF-Synthetic"), row["name"]
    # the two derived means, by hand: (980 + 979) / 2 = 979.5 -> 980, and so on
    assert want["tanks_temples"][1:] == (980, 546, 1_783_867)
    assert want["deep_blending"][1:] == (1298, 854, 2_975_635)


def test_every_figure_has_its_source() -> None:
    table = scenes()
    for column in ("resolution_source", "gaussians_source", "samples_source", "march_source"):
        assert table[column].null_count() == 0 and (table[column].str.len_chars() > 20).all()
    sources = dict(zip(table["name"], table["gaussians_source"], strict=True))
    assert all("inria-30k" in sources[s] for s in MIPNERF360)
    assert all(sources[s].startswith("not published") for s in NERF_SYNTHETIC)
    assert "TanksAndTemples" in sources["tanks_temples"]
    assert "DeepBlending" in sources["deep_blending"]
    frames = dict(zip(table["name"], table["resolution_source"], strict=True))
    assert all("(derived)" in frames[s] for s in ("tanks_temples", "deep_blending"))
    assert all("full_eval.py" in frames[s] for s in MIPNERF360)


def test_sampling_figures_by_hand() -> None:
    # Instant-NGP's stepping (NVlabs/instant-ngp testbed_nerf.cu): dt = sqrt(3)/1024 in
    # a bounded scene; in an unbounded one dt = t/256 once t passes 256 * sqrt(3)/1024,
    # the coarsest cell never binding inside an aabb_scale-16 box.
    dt = math.sqrt(3) / 1024
    bounded = round((2 / 3) / dt)  # a unit cube's mean chord 4V/S = 2/3
    assert bounded == 394
    flat = math.ceil((256 * dt - 0.05) / dt)  # from the near distance 0.05
    t = 0.05 + flat * dt
    growing = math.ceil(math.log(8 / t) / math.log(1 + 1 / 256))  # to the face at 16/2
    assert (flat, growing) == (227, 748)
    unbounded = flat + growing
    kept = round(unbounded * 24 / bounded)  # the bounded scene's share of kept samples
    assert (unbounded, kept) == (975, 59)
    for row in scenes().iter_rows(named=True):
        want = (1, bounded, 24) if not row["unbounded"] else (16, unbounded, kept)
        assert (row["aabb_scale"], row["march_steps"], row["samples_per_ray"]) == want
        assert "derived" in row["samples_source"] and "range" in row["march_source"]


def test_a_captured_scene_costs_more_per_pixel_for_its_march() -> None:
    # instant_ngp on bicycle (unbounded: 975 steps, 59 samples per ray) against lego
    # (bounded: 394 steps, 24 samples), per pixel of one frame
    def per_pixel(scene: str) -> dict[str, float]:
        g = pipeline("instant_ngp", scene=scene)
        c = nerframe.costs(g).with_columns(op_type=pl.col("op_type").cast(pl.String))
        frame = c.group_by("op_type").agg(pl.col("flops").sum() * g.batches / g.frame_pixels)
        return dict(frame.iter_rows())

    bicycle, lego = per_pixel("bicycle"), per_pixel("lego")
    # the march by hand: 20 FLOP-equivalents per step, every step of every ray
    # (4096-ray batches: 249 of them for bicycle's 1,016,814 px, the last one full)
    assert bicycle["OccupancyMarch"] == pytest.approx(249 * 4096 * 975 * 20 / 1_016_814)
    assert lego["OccupancyMarch"] == pytest.approx(157 * 4096 * 394 * 20 / 640_000)
    # the network work per kept sample is the scene's samples over lego's
    assert bicycle["MLP"] / lego["MLP"] == pytest.approx(
        (249 * 4096 * 59 / 1_016_814) / (157 * 4096 * 24 / 640_000)
    )
    assert sum(bicycle.values()) > 2 * sum(lego.values())
    # with lego's 24 samples, bicycle still costs more per pixel: its longer march
    fewer = pipeline("instant_ngp", scene="bicycle", samples=24)
    flops = nerframe.costs(fewer)["flops"].sum() * fewer.batches / fewer.frame_pixels
    extra = 249 * 4096 * (975 - 394) * 20 / 1_016_814  # the extra march steps alone
    assert flops > sum(lego.values()) + 0.9 * extra


def test_the_table_is_declared_and_packaged() -> None:
    assert scenes().schema == pl.Schema(
        {
            "name": pl.String,
            "dataset": pl.String,
            "width": pl.Int64,
            "height": pl.Int64,
            "gaussians": pl.Int64,
            "samples_per_ray": pl.Int64,
            "unbounded": pl.Boolean,
            "aabb_scale": pl.Int64,
            "march_steps": pl.Int64,
            "resolution_source": pl.String,
            "gaussians_source": pl.String,
            "samples_source": pl.String,
            "march_source": pl.String,
        }
    )
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "scenes.csv" in project["tool"]["setuptools"]["package-data"]["nerframe"]
    assert SCENES == ROOT / "nerframe" / "scenes.csv"
    assert nerframe.scenes().equals(scenes())


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda t: t.replace("bicycle,", "lego,", 1), "scene 'lego' is listed twice"),
        (lambda t: t.replace("stump,Mip-NeRF360,1245", "stump,Mip-NeRF360,-1"), "width must be"),
        (lambda t: t.replace("name,dataset", "name,data", 1), "columns are"),
        (lambda t: t.replace("ship,NeRF-Synthetic", "Ship,NeRF-Synthetic"), "'Ship' is not"),
        (lambda t: t.replace("room,Mip-NeRF360,1557", "room,Mip-NeRF360,wide"), "not a scene"),
    ],
)
def test_a_bad_table_is_refused_naming_the_file(change, message: str, tmp_path: Path) -> None:
    path = tmp_path / "scenes.csv"
    path.write_text(change(SCENES.read_text()))
    with pytest.raises(NerframeError, match=message) as caught:
        read_scenes(path)
    assert str(path) in str(caught.value)


def test_a_figure_without_its_source_is_refused(tmp_path: Path) -> None:
    table = scenes().with_columns(
        gaussians_source=pl.when(pl.col("name") == "garden")
        .then(None)
        .otherwise(pl.col("gaussians_source"))
    )
    path = tmp_path / "scenes.csv"
    table.write_csv(path)
    with pytest.raises(NerframeError, match="scene 'garden': gaussians has no gaussians_source"):
        read_scenes(path)


@pytest.mark.parametrize("name", list(expected()))
@pytest.mark.parametrize("pipe", list(PIPELINES))
def test_a_scene_sets_the_frame_of_every_pipeline(name: str, pipe: str) -> None:
    _, width, height, gaussians = expected()[name]
    g = pipeline(pipe, scene=name)
    assert g.frame_pixels == width * height
    ops = g.ops
    if pipe in ("3dgs", "gaurast", "gscore"):  # tile blenders: no per-pixel op
        first = ops.row(0, named=True)
        assert first["op_type"] == "FrustumCulling"
        assert first["G"] == (gaussians or 1_000_000)
        assert set(ops["scope"]) == {"frame"}  # every op once per frame
    elif pipe in GAUSSIAN_PIPELINES:
        first = ops.row(0, named=True)  # the frustum culling of every Gaussian
        assert first["op_type"] in ("FrustumCulling", "FrustumCullingProjection")
        assert first["G"] == (gaussians or 1_000_000)  # no published count: the default
        if "image_w" in ops.columns:  # ops that take the frame's size carry the scene's
            framed = ops.filter(pl.col("image_w").is_not_null())
            assert set(framed.select("image_w", "image_h").rows()) <= {(width, height)}
        assert g.batches == 1 and g.rays == width * height  # one batch: the frame
    else:
        assert "image_w" not in ops.columns or ops["image_w"].is_null().all()
        assert g.rays == 4096
        kept = ops.filter(pl.col("op_type") != "OccupancyMarch")["N"].drop_nulls()
        samples = (24 if name in NERF_SYNTHETIC else 59) if pipe in HASH_GRID else 192
        assert kept.max() == samples  # icarus: its own sampler's 192


def test_gscore_on_bicycle_by_hand() -> None:
    ops = pipeline("gscore", scene="bicycle").ops
    rows = {r["op_type"]: r for r in ops.iter_rows(named=True)}
    tiles = math.ceil(1237 / 16) * math.ceil(822 / 16)  # 3DGS's grid: 78 x 52 tiles
    visible = math.ceil(0.5 * 6_060_000)  # half the Gaussians survive culling
    # the boxes overlap 688.7 deep: each visible Gaussian's box is 688.7 px x its
    # share of the frame, 231 px^2 (15.2 px a side), spanning 1.95 tiles a side
    box = math.sqrt(688.7 * 1237 * 822 / visible)
    hit = round((1 + box / 16) ** 2)  # 3.8 tiles
    assert tiles == 4056 and visible == 3_030_000 and hit == 4
    # subtile skipping blends the pixels of each tile inside the box: 231 px over 4 tiles
    fragments = math.ceil(box * box / hit)
    assert fragments == 58
    assert rows["FrustumCulling"]["G"] == 6_060_000
    assert (rows["GaussianPreprocess"]["B"], rows["GaussianPreprocess"]["N"]) == (visible, 1)
    assert (rows["Sorting"]["B"], rows["Sorting"]["N"]) == (tiles, math.ceil(visible * 4 / tiles))
    assert rows["SubtileSkip"]["G"] == visible and rows["SubtileSkip"]["tiles_per_gaussian"] == 4
    assert (rows["SubtileSkip"]["image_w"], rows["SubtileSkip"]["image_h"]) == (1237, 822)
    assert (rows["TileBlend"]["B"], rows["TileBlend"]["N"]) == (visible * hit, fragments)


def test_neurex_on_room_by_hand() -> None:
    g = pipeline("neurex", scene="room")
    assert g.frame_pixels == 1557 * 1038 == 1_616_166
    assert g.batches == math.ceil(1_616_166 / 4096) == 395
    # room's 59 samples per ray (by hand in test_sampling_figures_by_hand)
    assert g.ops["N"].unique().to_list() == [59]
    # Instant-NGP's own renderer marches first: 975 steps per ray, 59 samples kept
    ngp = pipeline("instant_ngp", scene="room").ops
    assert ngp["op_type"].to_list()[:2] == ["OccupancyMarch", "UniformSampler"]
    assert ngp["N"].to_list() == [975, 59, 59, 59, 59, 59, 59]
    assert ngp["B"].unique().to_list() == [4096]


def test_lego_is_the_default_frame_of_ray_pipelines() -> None:
    for pipe in PIPELINES:
        if pipe not in GAUSSIAN_PIPELINES:
            lego, default = pipeline(pipe, scene="lego"), pipeline(pipe)
            assert lego.ops.equals(default.ops) and lego.frame_pixels == default.frame_pixels
    # Gaussian pipelines: 800x800 frames (2,500 tiles), G stays 1 M (no published count)
    sort = pipeline("gscore", scene="lego").ops.filter(op_type="Sorting").row(0, named=True)
    hit = round((1 + math.sqrt(688.7 * 800 * 800 / 500_000) / 16) ** 2)  # 8 tiles
    assert hit == 8
    assert (sort["B"], sort["N"]) == (2500, math.ceil(500_000 * hit / 2500))


def test_keyword_arguments_override_the_scene() -> None:
    g = pipeline("gbu", scene="bicycle", rays=4096, gaussians=2_000_000, frame_pixels=1280 * 720)
    assert g.frame_pixels == 921_600 and g.rays == 4096 and g.batches == 225
    assert g.ops["G"].drop_nulls().to_list() == [2_000_000]
    # frame_pixels alone keeps the scene's aspect ratio: 1237x822 scaled to 921,600 px
    pre = g.ops.filter(op_type="GaussianPreprocess").row(0, named=True)
    assert pre["B"] == 1_000_000
    scaled = pipeline("3dgs", scene="bicycle", frame_pixels=1280 * 720)
    assert scaled.ops.equals(pipeline("3dgs", scene="bicycle", width=1178, height=783).ops)
    assert pipeline("neurex", scene="room", samples=48).ops["N"].unique().to_list() == [48]
    # samples set the kept samples; the march stays the scene's
    march = pipeline("instant_ngp", scene="room", samples=48).ops["N"].to_list()[:3]
    assert march == [975, 48, 48]


def test_samples_per_ray_of_a_scene_set_hash_grid_pipelines(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # A scene's samples per ray set N of the hash-grid NeRFs only (ICARUS's 192 is
    # its sampler's, not the scene's).
    made_up = Scene("made_up", "test", 64, 32, None, 30)
    monkeypatch.setattr("nerframe.builtin_pipelines.find_scene", lambda name: made_up)
    assert pipeline("neurex", scene="made_up").ops["N"].unique().to_list() == [30]
    # no march steps given: the bounded scene's 394 (MARCH_STEPS)
    assert pipeline("instant_ngp", scene="made_up").ops["N"].to_list()[:3] == [394, 30, 30]
    assert pipeline("icarus", scene="made_up").ops["N"].unique().to_list() == [192]
    assert pipeline("neurex", scene="made_up").frame_pixels == 2048


def test_the_spec_model_takes_no_scene() -> None:
    with pytest.raises(InvalidInputError, match="spec workload model is spec/pipelines"):
        pipeline("neurex", scene="lego", model="spec")
    # the spec model is untouched: its golden total (spec/pipelines.md)
    assert nerframe.costs(pipeline("neurex", model="spec").ops)["flops"].sum() == 7_887_388_672


def test_an_unknown_scene_lists_the_known_ones() -> None:
    with pytest.raises(InvalidInputError) as caught:
        pipeline("neurex", scene="bycicle")
    message = str(caught.value)
    assert message.startswith("unknown scene 'bycicle' (did you mean 'bicycle'?); known scenes: ")
    assert message.endswith(", ".join(expected()))
    assert caught.value.culprit == "scene"


def test_graph_files_and_graphs_take_no_scene(graph_file: Path, tmp_path: Path) -> None:
    from nerframe.builtin_pipelines import load_graph

    with pytest.raises(InvalidInputError, match="applies to the built-in pipelines, not to"):
        load_graph(str(graph_file), scene="lego")
    with pytest.raises(InvalidInputError, match="scene applies to named pipelines"):
        nerframe.analyze(
            pipeline("neurex"), "neurex", output=tmp_path / "out", report=False, scene="lego"
        )
    assert not (tmp_path / "out").exists()


# --scene on every command that takes a workload


def test_scene_on_costs(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["costs", "gbu", "--scene", "bicycle", "--format", "json"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert rows[0]["G"] == 6_060_000 and rows[-1]["B"] == 1237 * 822


def test_scene_on_schedule(capsys: pytest.CaptureFixture[str]) -> None:
    args = ["schedule", "neurex", "--hardware", "neurex", "--summary", "--format", "json"]
    assert main([*args, "--scene", "room"]) == 0
    (room,) = json.loads(capsys.readouterr().out)
    assert (room["frame_pixels"], room["batches"]) == (1_616_166, 395)
    assert main(args) == 0
    (default,) = json.loads(capsys.readouterr().out)
    # same batch, 395 batches instead of 157: the frame takes longer
    assert default["batches"] == math.ceil(640_000 / 4096) == 157
    assert room["frame_cycles"] > default["frame_cycles"]


def test_scene_on_pipelines(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["pipelines", "--scene", "deep_blending", "--format", "json"]) == 0
    rows = {r["pipeline"]: r for r in json.loads(capsys.readouterr().out)}
    assert {r["frame_pixels"] for r in rows.values()} == {1298 * 854}
    assert rows["gscore"]["gaussians"] == 2_975_635 and rows["neurex"]["gaussians"] is None


def test_scene_on_roofline(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    out = tmp_path / "roof.csv"
    assert main(["roofline", "gscore", "--scene", "stump", "--system", "A100", "-o", str(out)]) == 0
    roof = pl.read_csv(out).filter(system="A100")
    assert main(["costs", "gscore", "--scene", "stump", "--format", "json"]) == 0
    costs = json.loads(capsys.readouterr().out)
    assert roof["flops"].to_list() == [r["flops"] for r in costs]
    default = tmp_path / "default.csv"
    assert main(["roofline", "gscore", "--system", "A100", "-o", str(default)]) == 0
    assert pl.read_csv(default).filter(system="A100")["flops"].to_list() != roof["flops"].to_list()


def test_scene_on_analyze_is_in_the_manifest_and_report(tmp_path: Path) -> None:
    out = tmp_path / "store"
    assert main(["analyze", "neurex", "gscore", "--scene", "room", "-o", str(out)]) == 0
    run = json.loads((out / "store.json").read_text())["run"]
    assert run["scene"] == "room"
    summary = pl.read_parquet(out / "summary" / "**" / "*.parquet")
    assert set(summary["frame_pixels"]) == {1_616_166}
    page = (out / "report.html").read_text(encoding="utf-8")
    assert "Scene: <strong>room</strong> (Mip-NeRF360): frames of 1557×1038 pixels" in page
    assert "1,550,000 Gaussians" in page


def test_a_store_without_a_scene_says_so(tmp_path: Path) -> None:
    out = nerframe.analyze(["neurex"], "neurex", output=tmp_path / "s").store
    assert json.loads((out / "store.json").read_text())["run"]["scene"] is None
    assert "Scene: none" in (out / "report.html").read_text(encoding="utf-8")


# the sweep axis


def test_scene_is_a_sweep_workload_axis() -> None:
    rows = nerframe.sweep(
        {
            "graphs": ["neurex"],
            "hardware": "neurex",
            "workload": {"scene": ["room", "lego"]},
            "grid": {"frequency_mhz": [500, 1000]},
        }
    )
    assert isinstance(rows, pl.DataFrame)
    assert rows["scene"].cast(pl.String).to_list() == ["room", "room", "lego", "lego"]
    assert rows["batches"].to_list() == [395, 395, 157, 157]
    # each row is what nerframe.schedule gives for its scene
    from nerframe.sweeps.evaluate import variant

    for name in ("room", "lego"):
        accel = variant(nerframe.accelerator("neurex"), {"frequency_mhz": 1000})
        fps = nerframe.schedule(pipeline("neurex", scene=name), accel).summary["fps"].item()
        row = rows.filter(pl.col("scene") == name, pl.col("frequency_mhz") == 1000)
        assert row["fps"].item() == pytest.approx(fps, rel=1e-12)


def test_sweep_cli_scene_axis_and_store(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    base = ["sweep", "neurex", "--hardware", "neurex", "--vary", "frequency_mhz=500,1000"]
    assert main([*base, "--vary", "scene=lego,kitchen", "--format", "json", "--top", "0"]) == 0
    rows = json.loads(capsys.readouterr().out)
    assert sorted({r["scene"] for r in rows}) == ["kitchen", "lego"] and len(rows) == 4
    store = tmp_path / "sweep"
    assert main([*base, "--scene", "bicycle", "-o", str(store), "--format", "json"]) == 0
    shown = json.loads(capsys.readouterr().out)
    assert {r["scene"] for r in shown} == {"bicycle"}
    manifest = json.loads((store / "store.json").read_text())
    assert manifest["run"]["sweep"]["workload"] == {"scene": ["bicycle"]}
    parts = pl.read_parquet(store / "sweep" / "**" / "*.parquet")
    assert parts["scene"].cast(pl.String).to_list() == ["bicycle", "bicycle"]
    assert parts["batches"].to_list() == [math.ceil(1237 * 822 / 4096)] * 2


@pytest.mark.parametrize(
    ("workload", "message"),
    [
        ({"scene": ["lego", "lego"]}, "'lego' is listed twice"),
        ({"scene": [3]}, "scenes are names, got 3"),
        ({"scene": []}, "give a non-empty list of scenes"),
        ({"scene": ["lgo"]}, "unknown scene 'lgo' (did you mean 'lego'?)"),
    ],
)
def test_a_bad_scene_axis_is_refused(workload: dict[str, object], message: str) -> None:
    from nerframe.sweeps.spec import sweep_spec

    with pytest.raises(InvalidInputError) as caught:
        sweep_spec({"graphs": ["neurex"], "hardware": "neurex", "workload": workload})
    assert message in str(caught.value)


def test_a_scene_axis_needs_built_in_pipelines_and_the_realistic_model(graph_file: Path) -> None:
    from nerframe.sweeps.spec import sweep_spec

    spec = {"hardware": "neurex", "workload": {"scene": ["lego"]}}
    with pytest.raises(InvalidInputError, match="not to the graph file"):
        sweep_spec({**spec, "graphs": [str(graph_file)]})
    with pytest.raises(InvalidInputError, match="spec workload model"):
        sweep_spec({**spec, "graphs": ["neurex"], "model": "spec"})


# errors on the command line: one line, the known scenes, nothing written


@pytest.mark.parametrize(
    "args",
    [
        ["costs", "neurex", "--scene", "nope", "-o", "OUT/c.csv"],
        ["schedule", "neurex", "--hardware", "neurex", "--scene", "nope", "-o", "OUT/s.csv"],
        ["analyze", "neurex", "--scene", "nope", "-o", "OUT/store"],
        ["sweep", "neurex", "--hardware", "neurex", "--vary", "scene=lego,nope", "-o", "OUT/sw"],
        ["roofline", "neurex", "--scene", "nope", "-o", "OUT/r.csv"],
        ["pipelines", "--scene", "nope", "-o", "OUT/p.csv"],
    ],
)
@pytest.mark.slow
def test_an_unknown_scene_is_one_error_line(args: list[str], tmp_path: Path) -> None:
    result = run_cli(*(a.replace("OUT", str(tmp_path)) for a in args))
    assert result.returncode == 1
    assert result.stderr.count("\n") == 1 and "Traceback" not in result.stderr
    assert "unknown scene 'nope'" in result.stderr
    assert result.stderr.rstrip().endswith("known scenes: " + ", ".join(expected()))
    assert list(tmp_path.iterdir()) == []


def test_scenes_command(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["scenes"]) == 0
    out = capsys.readouterr().out
    assert "bicycle" in out and "6,060,000" in out and "_source" not in out
    assert "march_steps" in out
    assert "sources of each figure" in out
    assert main(["scenes", "-o", str(tmp_path / "s.csv")]) == 0
    assert pl.read_csv(tmp_path / "s.csv", schema=scenes().schema).equals(scenes())

"""The built-in pipelines: the nine of ``spec/pipelines.md``, written as data,
in two workload models.

Each pipeline is a list of op rows (op type, fixed parameters, backward flag,
bitwidth) and its edges; `pipeline` fills the workload dimensions. Two models:

- ``"realistic"`` (the default; docs/model.md gives every departure from the
  spec and its source): per-Gaussian work is frame-scoped (once per frame) on a
  scene of ``G`` Gaussians (default `GAUSSIANS`); spherical harmonics run once
  per visible Gaussian at degree 3, Gaussians are sorted per tile, and
  tile tests visit only the tiles a Gaussian overlaps (`TILES_PER_GAUSSIAN`);
  a Gaussian pipeline renders its frame in one batch; hash-grid NeRFs take
  the scene's samples per ray after occupancy skipping (default
  `HASH_GRID_SAMPLES`), and Instant-NGP's own renderer (``instant_ngp``) pays
  for the occupancy-grid march that finds them (``OccupancyMarch``, the scene's
  march steps per ray, default `MARCH_STEPS`); CICERO renders
  `CICERO_RENDERED` of a frame's pixels and warps the rest; ``gbu`` is a
  rendering pipeline (its training graph is ``gbu_train``).
- ``"spec"``: the graphs of ``spec/pipelines.md`` exactly (every op batch-scoped,
  ``B = 4096``, ``N = 64`` (ICARUS 192), ``G = B*N``), whose golden FLOP totals
  and frame formulas the tests assert.

>>> import nerframe
>>> g = nerframe.pipeline("neurex", rays=1024)
>>> g.ops.height, g.batches
(5, 625)
>>> gscore = nerframe.pipeline("gscore").ops.select("op_type", "scope", "B", "N")
>>> gscore.rows()[1:]  # doctest: +NORMALIZE_WHITESPACE
[('GaussianPreprocess', 'frame', 500000, 1), ('SubtileSkip', 'frame', None, None),
 ('Sorting', 'frame', 3600, 1389), ('TileBlend', 'frame', 5000000, 127)]
"""

from __future__ import annotations

import contextlib
import math
from collections.abc import Iterator, Mapping
from contextvars import ContextVar
from dataclasses import dataclass
from numbers import Integral
from pathlib import Path
from typing import get_args

import polars as pl

from nerframe._typing import GraphKind, WorkloadModel
from nerframe.errors import InvalidInputError, did_you_mean
from nerframe.graphs import Graph, expand_graph, graph, read_graph_file
from nerframe.scene_table import Scene
from nerframe.scene_table import scene as find_scene
from nerframe.taxonomy import op_types

# Workload axes every graph has, and the ops column each one sets.
WORKLOAD_FIELDS = {"rays": "B", "samples": "N", "gaussians": "G", "bitwidth": "bitwidth"}

RAY_SIZE = (800, 800)
"""Default frame (width, height) of ray-based pipelines: NeRF-Synthetic's."""
GAUSSIAN_SIZE = (1280, 720)
"""Default frame (width, height) of Gaussian pipelines: a generic 720p frame."""
RAY_FRAME = RAY_SIZE[0] * RAY_SIZE[1]
GAUSSIAN_FRAME = GAUSSIAN_SIZE[0] * GAUSSIAN_SIZE[1]
MODELS: tuple[WorkloadModel, ...] = get_args(WorkloadModel)

GAUSSIANS = 1_000_000
"""Default scene size G (realistic model): the low end of the 1-5 million
Gaussians of real-world 3DGS scenes (Kerbl et al. 2023); see docs/model.md."""
HASH_GRID_SAMPLES = 24
"""Samples per ray of hash-grid NeRFs after occupancy skipping (nerfstudio's cap), on a
frame that names no scene; a scene sets its own (scene table, ``samples_per_ray``)."""
MARCH_STEPS = 394
"""Occupancy-grid march steps per ray on a frame that names no scene: a bounded
(NeRF-Synthetic) scene's, Instant-NGP's constant step sqrt(3)/1024 over a unit cube's
mean chord 2/3 (docs/workloads.md, "NeRF sampling"); a scene sets its own."""
CICERO_RENDERED = 0.12
"""Share of a frame's pixels CICERO renders fully (radiance warping removes up to 88 %)."""
SRENDER_SENSITIVE = 0.25
"""Share of a batch's rays SRender re-renders at high precision (realistic model). SRender
(MICRO 2024) predicts the sensitive rays from the low-precision pass's colours (a ray
whose pixel differs from its 3x3 neighbourhood's informative pixel by more than a
threshold) and "trigger[s] a high-precision rendering again on the sensitive ones"
(abstract); no source read gives the share. Assumption: a quarter, in a plausible
0.1-0.5 (edges and fine texture are a minority of a frame's pixels); docs/uncertainty.md."""
FRAGMENTS_PER_GAUSSIAN = 161
"""Fragments per Gaussian-tile pair (pixels of the pair's 16 x 16 tile still blending
when the pair is reached): GBU's profile of 3DGS on real-world static scenes on a
Jetson Orin NX (GBU, HPCA 2025, p.5); docs/workloads.md."""
TILE = 16
"""Tile edge in pixels of the 3DGS rasteriser (Kerbl et al. 2023, BLOCK_X = BLOCK_Y = 16)."""
VISIBLE_SHARE = 0.5
"""Share of a scene's Gaussians inside the view frustum: GBU's profile (1.68 M visible of
the 3.36 M Gaussians of the mean Mip-NeRF360 scene); docs/workloads.md."""
CONTRIBUTING_SHARE = 0.137
"""Share of evaluated fragments that contribute to their pixel (GBU, HPCA 2025, p.5)."""
_GBU_PAIRS_PER_VISIBLE = 1.1e12 / 60 / 11 / FRAGMENTS_PER_GAUSSIAN / 1.68e6
# GBU p.5: 11 FLOP per fragment need 1.1 TFLOP/s at 60 FPS, so 1.67e9 fragments a
# frame; at 161 fragments per pair, 10.4 M pairs over 1.68 M visible Gaussians: 6.16
# tiles per Gaussian, on static Mip-NeRF360 scenes at the 3DGS evaluation frames.
_GBU_VISIBLE = 1.68e6
_GBU_PIXELS = 1_372_193
# Assumption: GBU profiled at the frames 3DGS evaluates Mip-NeRF360 at; 1,372,193 px
# is the mean frame of the seven scene-table rows (1,016,814-1,619,801 px).
_GBU_BOX = ((math.sqrt(_GBU_PAIRS_PER_VISIBLE) - 1) * TILE) ** 2
# A box of side s px at a uniformly random position spans on average 1 + s/16 tiles
# along each axis: (1 + s/16)^2 = 6.16 gives s = 23.7 px, 562 px^2, at GBU's frame.
OVERLAP = round(_GBU_BOX * _GBU_VISIBLE / _GBU_PIXELS, 1)
"""Bounding-box overlap of a 3DGS frame (688.7): the visible Gaussians' screen-space
boxes cover each pixel this many times over. A scene's Gaussians tile what the camera
sees, so their boxes' total area follows the frame: a visible Gaussian's box covers
``OVERLAP * pixels / visible`` px (more pixels or fewer Gaussians: larger boxes).
Derived from GBU's profile (6.16 tiles per visible Gaussian, 1.68 M visible, at the
Mip-NeRF360 frames); that it holds across scenes is an assumption (docs/workloads.md)."""
COVERED = round(CONTRIBUTING_SHARE * FRAGMENTS_PER_GAUSSIAN * _GBU_PAIRS_PER_VISIBLE / _GBU_BOX, 4)
"""Share of a Gaussian's box where it contributes to the pixels (0.2416): GBU's
contributing fragments per visible Gaussian (13.7 % of 161 fragments on each of its
6.16 pairs: 136 pixels) over its box at GBU's frame (23.7 px a side); derived,
docs/workloads.md. Gaussians blended per pixel, ``OVERLAP * COVERED`` = 166.4, then
depend neither on the resolution nor on the scene's Gaussian count."""
_RFF = {"input_dim": 3, "num_features": 128, "use_sin_cos": True}
_HASH = {"input_dim": 3, "num_levels": 16, "features_per_level": 2, "log2_hashmap_size": 19}
_NGP_MLP = {"in_dim": 32, "num_layers": 4, "layer_width": 64, "out_dim": 64}
_TINY_MLP = {"in_dim": 32, "num_layers": 3, "layer_width": 64, "out_dim": 4}
# Instant-NGP's own NeRF networks (Mueller et al., ACM TOG 41(4) 2022, Sec. 5.4;
# NeuRex p.4-5 runs the same): the density MLP maps the 16 levels x 2 features of
# the hash encoding through one hidden layer of 64 to 16 values (the first is log
# density); the colour MLP takes those 16 and the 16 spherical-harmonics
# coefficients of the view direction (degree 4: bands l <= 3) through two hidden
# layers of 64 to RGB. num_layers counts weight matrices (kernels.costs._mlp_weights).
_NGP_DENSITY = {"in_dim": 32, "num_layers": 2, "layer_width": 64, "out_dim": 16}
_NGP_COLOUR = {"in_dim": 32, "num_layers": 3, "layer_width": 64, "out_dim": 3}
_NGP_SH_DEGREE = 3  # the catalogue's degree: (3 + 1)^2 = 16 coefficients
_TILES = {
    "image_w": GAUSSIAN_SIZE[0],
    "image_h": GAUSSIAN_SIZE[1],
    "tile": TILE,
    "tile_keep_ratio": 0.1,
}
_SH_DEGREE = 3  # 3DGS: degree 3, 16 coefficients per colour channel
_PER = (
    "ray",
    "march",
    "sensitive",
    "row",
    "gaussian",
    "visible",
    "tile",
    "visible_tile",
    "fragment",
    "box_fragment",
)
# per pixel (its samples or its march steps), sensitive pixel or pixel row:
# repeated per batch
_BATCH_PER = frozenset({"ray", "march", "sensitive", "row"})
# the kinds whose B and N are the rays and samples per ray of the realistic model (the
# others are sized by the frame and the scene)
_TAKES = {"rays": ("B", _BATCH_PER), "samples": ("N", frozenset({"ray", "sensitive"}))}


@dataclass(frozen=True)
class GaussianFrame:
    """What one 3DGS frame touches: the frame (`width` x `height` px, a grid of
    `tiles_x` x `tiles_y` tiles of `TILE` px), the scene's `gaussians`, the `visible`
    ones, the side of each one's screen-space bounding `box` (px), the tiles each
    one overlaps, the Gaussian-tile `pairs`, the pairs per tile (`per_tile`), the
    fragments per pair and the Gaussians blended per pixel (contributing fragments
    per pixel). `gaussian_frame` derives it.
    """

    width: int
    height: int
    gaussians: int
    visible: int
    tiles_x: int
    tiles_y: int
    tiles_per_gaussian: int
    fragments_per_pair: int
    box: float

    @property
    def tiles(self) -> int:
        """Tiles of the frame's grid."""
        return self.tiles_x * self.tiles_y

    @property
    def pairs(self) -> int:
        """Gaussian-tile pairs: the keys duplicated and sorted, the tile lists' entries."""
        return self.visible * self.tiles_per_gaussian

    @property
    def per_tile(self) -> int:
        """Mean length of a tile's sorted list (pairs per tile, rounded up)."""
        return -(-self.pairs // self.tiles)

    @property
    def blended_per_pixel(self) -> int:
        """Gaussians that contribute to a pixel: the boxes' overlap times the share
        of a box a Gaussian covers (``OVERLAP * COVERED``), at most the fragments a
        pixel evaluates, at least 1."""
        evaluated = self.pairs * self.fragments_per_pair / (self.width * self.height)
        return max(1, math.ceil(min(OVERLAP * COVERED, evaluated)))

    @property
    def box_fragments(self) -> int:
        """Fragments per pair of a blender that skips the pixels of a tile outside
        the Gaussian's box (GSCore's subtile skipping): the box's pixels over its
        tiles, at most a tile's `TILE` x `TILE`, at least 1."""
        return max(1, min(TILE * TILE, math.ceil(self.box**2 / self.tiles_per_gaussian)))


def gaussian_frame(
    width: int,
    height: int,
    gaussians: int,
    *,
    tiles_per_gaussian: int | None = None,
    fragments_per_pair: int | None = None,
) -> GaussianFrame:
    """The 3DGS frame model: `gaussians` rendered at `width` x `height` pixels.

    `VISIBLE_SHARE` of the Gaussians survive culling; each one's screen-space
    bounding box is a square of ``OVERLAP * pixels / visible`` px (side ``s``),
    which spans ``1 + s/TILE`` tiles along each axis on average (at most the
    grid's), rounded to a whole count of tiles (`tiles_per_gaussian` overrides
    it; 0: every tile). The grid is 3DGS's: ``ceil(width/16) x ceil(height/16)``
    tiles. Per-Gaussian work stays, per-pair work grows with ``(1 + s/16)^2``:
    frame time grows with the pixels, sub-linearly, towards linear once boxes
    span many tiles.

    >>> f = gaussian_frame(1920, 1080, 1_000_000)
    >>> f.tiles, f.visible, f.tiles_per_gaussian, f.pairs
    (8160, 500000, 19, 9500000)
    >>> gaussian_frame(3840, 2160, 1_000_000).tiles_per_gaussian
    59
    """
    tiles_x, tiles_y = -(-width // TILE), -(-height // TILE)
    visible = math.ceil(VISIBLE_SHARE * gaussians)
    box = math.sqrt(OVERLAP * width * height / visible)
    if tiles_per_gaussian is None:
        span = 1 + box / TILE
        tiles_per_gaussian = max(1, round(min(span, tiles_x) * min(span, tiles_y)))
    elif tiles_per_gaussian == 0 or tiles_per_gaussian > tiles_x * tiles_y:
        tiles_per_gaussian = tiles_x * tiles_y
    return GaussianFrame(
        width,
        height,
        gaussians,
        visible,
        tiles_x,
        tiles_y,
        tiles_per_gaussian,
        FRAGMENTS_PER_GAUSSIAN if fragments_per_pair is None else fragments_per_pair,
        box,
    )


@dataclass(frozen=True)
class Op:
    """One row of a built-in pipeline.

    `per` says what the row iterates over in the realistic model (the spec
    model always uses B rays x N samples, or G = B*N Gaussians):
    ``ray`` (B rays x N samples), ``march`` (B rays x N occupancy-grid march
    steps: the scene's, default `MARCH_STEPS`), ``sensitive`` (the `SRENDER_SENSITIVE` share of
    the B rays x N samples), ``row`` (B = ceil(rays / 16) pixel rows of
    16-px tiles x the N Gaussians of their tile's list), ``gaussian`` (the scene's G
    Gaussians), ``visible`` (the Gaussians kept by culling: G, or B with N = 1),
    ``tile`` (B tiles x N Gaussians per tile), ``visible_tile`` (B visible
    Gaussians x N tiles each), ``fragment`` (B Gaussian-tile pairs x N
    fragments each) or ``box_fragment`` (B pairs x the N pixels of the tile inside
    the Gaussian's box); ``ray``, ``march``, ``sensitive`` and ``row`` are
    batch-scoped, the
    others frame-scoped (`GaussianFrame` gives every size).
    `realistic` holds parameters that only the realistic model sets.
    """

    op_type: str
    params: Mapping[str, object] | None = None
    backward: bool = False
    bitwidth: int = 16
    per: str = "ray"
    realistic: Mapping[str, object] | None = None


def _chain(n: int) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(n - 1)]


@dataclass(frozen=True)
class Spec:
    """A built-in pipeline: its kind, native accelerators, rows, edges and defaults.

    `hash_grid` pipelines take the scene's samples per ray (default
    `HASH_GRID_SAMPLES`) in the realistic model; `rendered_fraction` is the
    share of a frame's pixels rendered in it; `spec_graph` names the pipeline
    whose graph the spec model uses when the spec describes a different task
    (``gbu``); `frame_ops` (with
    `frame_edges`, `frame_feedback`) is the realistic model's graph where it runs
    other stages than the spec's (the shared 3DGS stages, the occupancy-grid march
    of hash-grid NeRFs; docs/workloads.md).
    """

    kind: GraphKind
    native: tuple[str, ...]
    ops: tuple[Op, ...]
    edges: tuple[tuple[int, int], ...]
    feedback: tuple[tuple[int, int], ...] = ()
    samples: int = 64
    frame_pixels: int = RAY_FRAME
    description: str = ""
    hash_grid: bool = False
    rendered_fraction: float = 1.0
    spec_graph: str | None = None
    frame_ops: tuple[Op, ...] | None = None
    frame_edges: tuple[tuple[int, int], ...] = ()
    frame_feedback: tuple[tuple[int, int], ...] = ()

    def graph_of(
        self, realistic: bool
    ) -> tuple[tuple[Op, ...], tuple[tuple[int, int], ...], tuple[tuple[int, int], ...]]:
        """Rows, edges and feedback edges of the model's graph: `frame_ops` (with
        `frame_edges`, `frame_feedback`) in the realistic model where given."""
        if realistic and self.frame_ops is not None:
            return self.frame_ops, self.frame_edges, self.frame_feedback
        return self.ops, self.edges, self.feedback

    @property
    def gaussian(self) -> bool:
        """Whether the pipeline splats Gaussians (renders a frame in one batch)."""
        return self.frame_pixels == GAUSSIAN_FRAME


_FCP = Op("FrustumCullingProjection", {"cull_ratio": VISIBLE_SHARE, **_TILES}, per="gaussian")
_SH = Op("SphericalHarmonics", {"degree": 4}, per="visible", realistic={"degree": _SH_DEGREE})
_SORT = Op("Sorting", per="tile")


def _gpu_stages(bitwidth: int) -> tuple[Op, ...]:
    """The 3DGS stages a GPU runs before blending (Kerbl et al. 2023's kernels):
    culling, preprocessing (projection, covariance, SH colour), key duplication per
    Gaussian-tile pair and the radix sort of the pairs; docs/workloads.md."""
    return (
        Op("FrustumCulling", {"cull_ratio": VISIBLE_SHARE}, bitwidth=bitwidth, per="gaussian"),
        Op("GaussianPreprocess", bitwidth=bitwidth, per="visible"),
        Op("TileDuplicate", bitwidth=bitwidth, per="visible_tile"),
        Op("RadixSort", bitwidth=bitwidth, per="visible_tile"),
    )


_3DGS = (*_gpu_stages(32), Op("TileBlend", bitwidth=32, per="fragment"))
# Instant-NGP's renderer marches every ray through its occupancy grid (empty steps
# included) before the kept samples reach the network (docs/workloads.md).
_MARCH = Op("OccupancyMarch", per="march")
_CULL, _PREPROCESS = _gpu_stages(16)[:2]  # an accelerator's own units, FP16

PIPELINES: dict[str, Spec] = {
    "icarus": Spec(
        "inference",
        ("icarus",),
        (
            Op("UniformSampler"),
            Op("RFFEncoding", _RFF),
            Op("MLP", {"in_dim": 256, "num_layers": 8, "layer_width": 256, "out_dim": 256}),
            Op("RGBRenderer"),
        ),
        tuple(_chain(4)),
        samples=192,
        description="ICARUS: positional-encoding NeRF with a large MLP",
    ),
    "neurex": Spec(
        "inference",
        ("neurex", "neurex_server"),
        (
            Op("UniformSampler"),
            Op("HashEncoding", _HASH),
            Op("MLP", _NGP_MLP),
            Op("RGBRenderer"),
            Op("DensityRenderer"),
        ),
        ((0, 1), (1, 2), (2, 3), (2, 4)),
        description="NeuRex: Instant-NGP hash-grid NeRF",
        hash_grid=True,
    ),
    "instant_ngp": Spec(
        "inference",
        ("neurex", "neurex_server", "titan_rtx"),
        (
            Op("UniformSampler"),
            Op("HashEncoding", _HASH),
            Op("MLP", _NGP_DENSITY),
            Op("SphericalHarmonics", {"degree": _NGP_SH_DEGREE}),
            Op("MLP", _NGP_COLOUR),
            Op("RGBRenderer"),
        ),
        ((0, 1), (1, 2), (0, 3), (2, 4), (3, 4), (2, 5), (4, 5)),
        description="Instant-NGP's own NeRF: hash grid, density MLP, SH direction, colour MLP",
        hash_grid=True,
        spec_graph="neurex",
        frame_ops=(
            _MARCH,
            Op("UniformSampler"),
            Op("HashEncoding", _HASH),
            Op("MLP", _NGP_DENSITY),
            Op("SphericalHarmonics", {"degree": _NGP_SH_DEGREE}),
            Op("MLP", _NGP_COLOUR),
            Op("RGBRenderer"),
        ),
        frame_edges=((0, 1), (1, 2), (2, 3), (1, 4), (3, 5), (4, 5), (3, 6), (5, 6)),
    ),
    "cicero": Spec(
        "inference",
        ("cicero",),
        (
            Op("UniformSampler", bitwidth=4),
            Op("PointArrange", {"input_dim": 3}),
            Op("HashEncoding", _HASH, bitwidth=4),
            Op("MLP", _NGP_MLP, bitwidth=4),
            Op("RGBRenderer", bitwidth=4),
        ),
        tuple(_chain(5)),
        description="CICERO: hash-grid NeRF with point re-arrangement and radiance warping, 4-bit",
        hash_grid=True,
        rendered_fraction=CICERO_RENDERED,
    ),
    "gscore": Spec(
        "inference",
        ("gscore",),
        (
            _FCP,
            Op("SubtileSkip", _TILES, per="visible"),
            _SH,
            _SORT,
            Op("GaussianAlphaBlend"),
        ),
        ((0, 1), (0, 2), (0, 3), (1, 4), (2, 4), (3, 4)),
        frame_pixels=GAUSSIAN_FRAME,
        description="GSCore: 3D Gaussian splatting inference with subtile skipping",
        frame_ops=(
            _CULL,
            _PREPROCESS,
            Op("SubtileSkip", _TILES, per="visible"),
            _SORT,
            Op("TileBlend", per="box_fragment"),
        ),
        frame_edges=(*_chain(5), (1, 4)),
    ),
    "gaurast": Spec(
        "inference",
        ("gaurast",),
        (
            Op("FrustumCullingProjection", per="gaussian"),
            _SH,
            _SORT,
            Op("GaussianAlphaBlend"),
        ),
        ((0, 1), (0, 2), (1, 3), (2, 3)),
        frame_pixels=GAUSSIAN_FRAME,
        description="GauRast: 3D Gaussian splatting inference on a rasteriser",
        frame_ops=_3DGS,
        frame_edges=tuple(_chain(5)),
    ),
    "srender": Spec(
        "inference",
        ("srender",),
        (
            Op("UniformSampler", bitwidth=4),
            Op("HashEncoding", bitwidth=4),
            Op("MLP", {"in_dim": 32, "num_layers": 4, "layer_width": 64}, bitwidth=4),
            Op("RGBRenderer", bitwidth=4),
            Op("SensitivityPrediction"),
            # the fine pass: the sensitive rays only, at full (16-bit) precision
            Op("PointArrange", per="sensitive"),
            Op("HashEncoding", per="sensitive"),
            Op("MLP", {"in_dim": 32, "num_layers": 4, "layer_width": 64}, per="sensitive"),
            Op("RGBRenderer", per="sensitive"),
            Op("Recovery", per="sensitive"),
        ),
        (*_chain(10), (3, 9)),
        description="SRender: coarse 4-bit pass, sensitivity prediction, fine pass on the "
        "sensitive rays, recovery",
        hash_grid=True,
    ),
    "gsarch": Spec(
        "training",
        ("gsarch",),
        (
            Op("FrustumCullingProjection", per="gaussian"),
            _SORT,
            Op("FeatureCompute", per="visible"),
            Op("TileMerging"),
            Op("GaussianAlphaBlend"),
            Op("GaussianAlphaBlend", backward=True),
            Op("GradientCompute", backward=True),
            Op("GradientPruning", backward=True),
            Op("Rearrangement", backward=True, per="visible_tile"),
            Op("TileMerging", backward=True, per="visible_tile"),
        ),
        tuple(_chain(10)),
        feedback=((9, 1),),
        frame_pixels=GAUSSIAN_FRAME,
        description="GSArch: 3D Gaussian splatting training with gradient pruning",
        frame_ops=(
            _CULL,
            _PREPROCESS,
            _SORT,
            Op("TileMerging"),
            Op("GaussianAlphaBlend"),
            Op("GaussianAlphaBlend", backward=True),
            Op("GradientCompute", backward=True),
            Op("GradientPruning", backward=True),
            Op("Rearrangement", backward=True, per="visible_tile"),
            Op("TileMerging", backward=True, per="visible_tile"),
        ),
        frame_edges=tuple(_chain(10)),
        frame_feedback=((9, 2),),
    ),
    "gbu": Spec(
        "inference",
        ("gbu",),
        (
            *_gpu_stages(32),
            Op("DecompBinning", per="visible_tile"),
            Op("RowGeneration", per="row"),
            Op("RowProcessing"),
            Op("GaussianAlphaBlend"),
        ),
        (*_chain(8), (1, 7)),
        frame_pixels=GAUSSIAN_FRAME,
        description="GBU: 3D Gaussian splatting rendering with row-based blending beside a GPU",
        spec_graph="gbu_train",
    ),
    "gbu_train": Spec(
        "training",
        ("gbu",),
        (
            Op("FrustumCullingProjection", per="gaussian"),
            Op("RowProcessing"),
            Op("RowGeneration"),
            Op("DecompBinning"),
            Op("Sorting"),
            Op("GaussianAlphaBlend"),
            Op("GaussianAlphaBlend", backward=True),
            Op("Sorting", backward=True),
            Op("DecompBinning", backward=True),
            Op("RowGeneration", backward=True),
            Op("RowProcessing", backward=True),
        ),
        tuple(_chain(11)),
        frame_pixels=GAUSSIAN_FRAME,
        description="GBU (spec's graph): row-based 3D Gaussian splatting training",
    ),
    "instant3d": Spec(
        "training",
        ("instant3d",),
        (
            Op("UniformSampler"),
            Op("FRM"),
            Op("HashEncoding"),
            Op("MLP", _TINY_MLP),
            Op("RGBRenderer"),
            Op("RGBRenderer", backward=True),
            Op("MLP", _TINY_MLP, backward=True),
            Op("BUM", backward=True),
        ),
        tuple(_chain(8)),
        feedback=((7, 2),),
        description="Instant-3D: hash-grid NeRF training with read mapper and update merger",
        hash_grid=True,
    ),
    "3dgs": Spec(
        "inference",
        ("orin_nx", "a6000"),
        _3DGS,
        tuple(_chain(5)),
        frame_pixels=GAUSSIAN_FRAME,
        description="3DGS as a GPU runs it: Kerbl et al. 2023's CUDA tile rasteriser",
        spec_graph="gaurast",
    ),
}
"""Every built-in pipeline by name."""


def pipeline(
    name: str,
    *,
    rays: int | None = None,
    samples: int | None = None,
    gaussians: int | None = None,
    frame_pixels: int | None = None,
    model: WorkloadModel = "realistic",
    tiles_per_gaussian: int | None = None,
    rendered_fraction: float | None = None,
    scene: str | None = None,
    fragments_per_gaussian: int | None = None,
    width: int | None = None,
    height: int | None = None,
) -> Graph:
    """A built-in pipeline's graph for one workload, in workload `model`
    ``"realistic"`` (default) or ``"spec"`` (exactly ``spec/pipelines.md``).

    `rays` is B, `samples` N, `gaussians` G (the scene's Gaussians),
    `width` and `height` the frame (800x800 for ray-based pipelines, 1280x720
    for Gaussian ones), `frame_pixels` its pixels alone (the frame scaled at its
    aspect ratio), `tiles_per_gaussian` the tiles a Gaussian overlaps (0: all;
    default: from the frame, `gaussian_frame`), `rendered_fraction` the share of
    a frame's pixels rendered (the rest warped), `fragments_per_gaussian` the
    pixels at which the GPU rasteriser evaluates one Gaussian of a tile's list.
    `scene` names a standard scene of `nerframe.scenes` (realistic model
    only): it sets the frame (its width × height) and the Gaussians G where the
    scene publishes a count, N of hash-grid pipelines (its samples per ray)
    and the march steps of ``instant_ngp``'s ``OccupancyMarch`` row; the keyword
    arguments still override it (`samples` sets N, not the march). In the realistic
    model the frame sizes every 3DGS stage (`gaussian_frame`); in the spec model
    it sets `frame_pixels` only. Without a scene, the workload is the one below.
    Defaults, per model:

    ========================  ==============================  ======================
    parameter                 realistic                       spec
    ========================  ==============================  ======================
    rays (B)                  4096; Gaussian: the frame       4096
    samples (N)               64; ICARUS 192; hash grid 24;   64; ICARUS 192
                              Gaussian: blended per pixel
    gaussians (G)             `GAUSSIANS`                     ``B*N``
    tiles_per_gaussian        from the frame                  0 (all tiles)
    rendered_fraction         CICERO `CICERO_RENDERED`, 1     1
    fragments_per_gaussian    `FRAGMENTS_PER_GAUSSIAN`        (spec graph: none)
    ========================  ==============================  ======================

    >>> pipeline("gscore", gaussians=2_000_000).ops["G"].to_list()[::2]
    [2000000, 1000000, None]
    >>> pipeline("gscore", model="spec").ops["G"].to_list()[:2]
    [262144, 262144]
    >>> bicycle = pipeline("gscore", scene="bicycle")
    >>> bicycle.frame_pixels, bicycle.ops["G"].to_list()[::2]
    (1016814, [6060000, 3030000, None])
    >>> pipeline("3dgs", width=3840, height=2160).ops["N"].to_list()[2:]
    [59, 59, 161]
    """
    if not isinstance(name, str):
        raise InvalidInputError(
            f"pipeline: name must be a pipeline name (str), got {type(name).__name__}", "name"
        )
    if model not in MODELS:
        raise InvalidInputError(f"unknown workload model {model!r}; choose realistic or spec")
    for option, value in (("rays", rays), ("samples", samples), ("gaussians", gaussians)):
        if value is not None and (isinstance(value, bool) or not isinstance(value, Integral)):
            raise InvalidInputError(f"pipeline: {option} must be an integer, got {value!r}", option)
    spec = PIPELINES.get(name)
    if spec is None:
        raise InvalidInputError(
            f"unknown pipeline {name!r}{did_you_mean(name, PIPELINES)}; "
            f"built-in pipelines: {', '.join(PIPELINES)}"
        )
    realistic = model == "realistic"
    if not realistic and spec.spec_graph:
        spec = PIPELINES[spec.spec_graph]
    rows, data_edges, feedback = spec.graph_of(realistic)
    taken = {p for op in rows for p in op_types()[op.op_type].parameters}
    for option, parameter, value in (("samples", "N", samples), ("gaussians", "G", gaussians)):
        if value is not None and parameter not in taken:
            raise InvalidInputError(
                f"pipeline {name!r} has no op that takes {parameter}; "
                f"{option} does not apply to it",
                option,
            )
    for option, value in (("rays", rays), ("samples", samples)):
        parameter, kinds = _TAKES[option]
        if (
            realistic
            and value is not None
            and not any(
                op.per in kinds and parameter in op_types()[op.op_type].parameters for op in rows
            )
        ):
            raise InvalidInputError(
                f"pipeline {name!r} has no op sized by {option} in the realistic model "
                "(its stages follow the frame and the scene: width, height, scene); "
                f"{option} does not apply to it",
                option,
            )
    place = _scene(scene, realistic)
    if fragments_per_gaussian is not None and not any(op.per == "fragment" for op in rows):
        raise InvalidInputError(
            f"pipeline {name!r} has no per-fragment op; "
            "fragments_per_gaussian does not apply to it",
            "fragments_per_gaussian",
        )
    w, h, pixels = _frame(spec, place, width, height, frame_pixels)
    if rays is None:
        rays = pixels if realistic and spec.gaussian else 4096
    if realistic:
        g = GAUSSIANS if gaussians is None else gaussians
        if place and place.gaussians and gaussians is None:
            g = place.gaussians
        f = gaussian_frame(
            w,
            h,
            g,
            tiles_per_gaussian=tiles_per_gaussian,
            fragments_per_pair=fragments_per_gaussian,
        )
        if samples is None:
            samples = f.blended_per_pixel if spec.gaussian else spec.samples
            if spec.hash_grid:
                samples = (
                    place.samples_per_ray if place and place.samples_per_ray else HASH_GRID_SAMPLES
                )
        hit, visible = f.tiles_per_gaussian, f.visible
        steps = place.march_steps if place and place.march_steps else MARCH_STEPS
        dims: dict[str, dict[str, object]] = {
            "ray": {"B": rays, "N": samples, "G": g},
            "march": {"B": rays, "N": steps},
            "sensitive": {"B": math.ceil(SRENDER_SENSITIVE * rays), "N": samples, "G": g},
            "gaussian": {"G": g, "tiles_per_gaussian": hit},
            "visible": {"B": visible, "N": 1, "G": visible, "tiles_per_gaussian": hit},
            "tile": {"B": f.tiles, "N": f.per_tile},
            "visible_tile": {"B": visible, "N": hit},
            "row": {"B": -(-rays // TILE), "N": f.per_tile},
            "fragment": {"B": f.pairs, "N": f.fragments_per_pair},
            "box_fragment": {"B": f.pairs, "N": f.box_fragments},
        }
    else:
        n = spec.samples if samples is None else samples
        whole: dict[str, object] = {
            "B": rays,
            "N": n,
            "G": rays * n if gaussians is None else gaussians,
        }
        dims = dict.fromkeys(_PER, whole)
    records = []
    for op in rows:
        takes = op_types()[op.op_type].parameters
        record: dict[str, object] = {k: v for k, v in dims[op.per].items() if k in takes}
        record.update(op.params or {}, op_type=op.op_type, backward=op.backward)
        if realistic and "image_w" in takes:
            record.update(image_w=w, image_h=h)
        if realistic:
            record.update(op.realistic or {}, scope="batch" if op.per in _BATCH_PER else "frame")
        else:
            record["scope"] = "batch"
        records.append({**record, "bitwidth": op.bitwidth})
    edges = [(*e, "data") for e in data_edges] + [(*e, "feedback") for e in feedback]
    if rendered_fraction is None:
        rendered_fraction = spec.rendered_fraction if realistic else 1.0
    built = _BUILT.get()
    # repr tells 1 from 1.0 and True (equal as dict keys) and is exact for floats
    key = repr((name, records, edges, pixels, spec.kind, rendered_fraction))
    if built is not None and key in built:
        return built[key]
    result = graph(
        name,
        records,
        edges,
        frame_pixels=pixels,
        kind=spec.kind,
        rendered_fraction=rendered_fraction,
    )
    if built is not None:
        built[key] = result
    return result


_BUILT: ContextVar[dict[str, Graph] | None] = ContextVar("nerframe_built_pipelines", default=None)
"""The graphs `pipeline` built in the current `reusing_pipelines` block, by their
ops records, edges and frame (None outside one)."""


@contextlib.contextmanager
def reusing_pipelines() -> Iterator[None]:
    """Within the block, `pipeline` builds each distinct graph once and returns that
    same `Graph` whenever it is asked for again.

    One run needs one pipeline at one workload in several places (`nerframe.analyze`
    builds its pipelines, then the report's validation builds the pipelines of the
    published figures, many of them the same ones, several times each); building a
    graph (validating its ops, its DAG and phases) costs far more than looking it up.
    A `Graph` is immutable, so sharing it changes no result, and the schedules of the
    later users reuse what it derived once (`Graph._dag`). Outside a block every call
    builds a new graph, so a long-lived process holds no graphs; a nested block uses
    the outer one's graphs.

    >>> with reusing_pipelines():
    ...     pipeline("neurex") is pipeline("neurex", rays=4096), pipeline("neurex", rays=1024)
    (True, Graph('neurex', inference, 5 ops, 4 edges, frame_pixels=640000))
    >>> pipeline("neurex") is pipeline("neurex")
    False
    """
    if _BUILT.get() is not None:
        yield
        return
    token = _BUILT.set({})
    try:
        yield
    finally:
        _BUILT.reset(token)


def _scene(name: str | None, realistic: bool) -> Scene | None:
    """The scene `name` (None: none); the spec model takes none."""
    if name is None:
        return None
    if not realistic:
        raise InvalidInputError(
            f"scene {name!r}: the spec workload model is spec/pipelines.md exactly "
            "(its own B, N, G and frame); scenes apply to the realistic model",
            "scene",
        )
    return find_scene(name)


def _frame(
    spec: Spec,
    place: Scene | None,
    width: int | None,
    height: int | None,
    frame_pixels: int | None,
) -> tuple[int, int, int]:
    """The frame's width, height and pixels: `width` x `height` when given, else the
    scene's or the pipeline's frame, scaled at its aspect ratio to `frame_pixels`."""
    for option, value in (("width", width), ("height", height)):
        if value is not None and (
            isinstance(value, bool) or not isinstance(value, Integral) or value < 1
        ):
            raise InvalidInputError(
                f"pipeline: {option} must be a positive integer, got {value!r}", option
            )
    if (width is None) != (height is None):
        given = "width" if height is None else "height"
        raise InvalidInputError(f"pipeline: {given} needs its pair: give width and height", given)
    if width is not None and height is not None:
        if frame_pixels is not None and frame_pixels != width * height:
            raise InvalidInputError(
                f"pipeline: frame_pixels {frame_pixels} is not width x height "
                f"({width} x {height}); give one or the other",
                "frame_pixels",
            )
        return int(width), int(height), int(width * height)
    if place is not None:
        w0, h0 = place.width, place.height
    else:
        w0, h0 = GAUSSIAN_SIZE if spec.gaussian else RAY_SIZE
    if frame_pixels is None:
        return w0, h0, w0 * h0
    if isinstance(frame_pixels, bool) or not isinstance(frame_pixels, Integral) or frame_pixels < 1:
        return w0, h0, frame_pixels  # `graph` refuses it, naming frame_pixels
    scale = math.sqrt(frame_pixels / (w0 * h0))
    return max(1, round(w0 * scale)), max(1, round(h0 * scale)), frame_pixels


def pipelines(model: WorkloadModel = "realistic", *, scene: str | None = None) -> pl.DataFrame:
    """The built-in pipelines: kind, ops, default workload and FLOPs in `model` (at
    `scene`, a standard scene, when given): ``total_flops`` counts every op once,
    ``frame_flops`` one frame (`frame_total`).

    >>> pipelines(model="spec").filter(pipeline="neurex")["total_flops"].item()
    7887388672.0
    >>> pipelines(scene="bicycle").filter(pipeline="neurex")["frame_pixels"].item()
    1016814
    """
    from nerframe.costing import costs, frame_total

    rows = []
    for name, spec in PIPELINES.items():
        g = pipeline(name, model=model, scene=scene)
        rows.append(
            {
                "pipeline": name,
                "kind": g.kind,
                "ops": g.ops.height,
                "rays": g.rays,
                "samples": g.samples,
                "gaussians": g.ops["G"].max(),
                "frame_pixels": g.frame_pixels,
                "rendered_fraction": g.rendered_fraction,
                "native": list(spec.native),
                "total_flops": costs(g.ops)["flops"].sum(),
                "frame_flops": frame_total(costs(g.ops), "flops", g.batches),
                "description": spec.description,
            }
        )
    return pl.DataFrame(rows)


def load_graph(
    name: str,
    rays: int | None = None,
    samples: int | None = None,
    gaussians: int | None = None,
    fine: bool = False,
    model: WorkloadModel = "realistic",
    *,
    scene: str | None = None,
    width: int | None = None,
    height: int | None = None,
) -> Graph:
    """A built-in pipeline by name or a graph file (.json, .yaml) at a workload (the
    one `workload_graph` applies, `scene` and the frame's `width` and `height`
    included); expanded into its fine graph when `fine`.

    >>> load_graph("neurex").ops.height, load_graph("neurex", fine=True).ops.height
    (5, 7)
    """
    given = {
        "rays": rays,
        "samples": samples,
        "gaussians": gaussians,
        "scene": scene,
        "width": width,
        "height": height,
    }
    return workload_graph(name, {k: v for k, v in given.items() if v is not None}, fine, model)


def workload_graph(
    source: str | Graph,
    point: Mapping[str, float | str],
    fine: bool = False,
    model: WorkloadModel = "realistic",
) -> Graph:
    """`source` (a built-in name, a graph file or a `Graph`) at workload `point`.

    A built-in pipeline is rebuilt in workload `model` with the point's rays,
    samples, Gaussians, frame ``width`` and ``height`` and ``scene`` (a standard
    scene's name; defaults as `nerframe.pipeline`'s); otherwise the B, N, G
    columns of the ops that have them are set (a dimension no op has is refused; a
    scene or a frame is refused: what it sets is the built-in pipelines' workload).
    ``bitwidth`` sets every op's bitwidth and ``OPTYPE.PARAM`` that parameter of
    every op of that type.

    >>> workload_graph("neurex", {"rays": 1024, "MLP.layer_width": 128}).ops.filter(
    ...     op_type="MLP").select("B", "layer_width").row(0)
    (1024, 128)
    >>> workload_graph("neurex", {"scene": "room"}).frame_pixels
    1616166
    >>> workload_graph("3dgs", {"width": 1920, "height": 1080}).frame_pixels
    2073600
    """
    scene = point.get("scene")
    frame = {k: int(v) for k, v in point.items() if k in ("width", "height")}
    numbers = {k: v for k, v in point.items() if not isinstance(v, str) and k not in frame}
    dims = {k: int(v) for k, v in numbers.items() if k in ("rays", "samples", "gaussians")}
    builtin = isinstance(source, str) and (source in PIPELINES or not Path(source).suffix)
    if (scene is not None or frame) and not builtin:
        label = f"Graph {source.name!r}" if isinstance(source, Graph) else f"graph file {source}"
        what = f"scene {scene!r}" if scene is not None else "the frame's width and height"
        raise InvalidInputError(
            f"{what} applies to the built-in pipelines, not to the {label}: "
            "set its workload (rays, samples, gaussians) instead",
            "scene" if scene is not None else next(iter(frame)),
        )
    if isinstance(source, Graph):
        base = source
    elif builtin:
        base = pipeline(
            source, **dims, **frame, model=model, scene=None if scene is None else str(scene)
        )
        dims = {}
    else:
        base = read_graph(source)
    ops = base.ops
    for name, value in numbers.items():
        if name in dims or name == "bitwidth":
            column = WORKLOAD_FIELDS[name]
            if name in dims and ops[column].is_null().all():
                raise InvalidInputError(
                    f"graph {base.name!r} has no op that takes {column}; "
                    f"{name} does not apply to it",
                    name,
                )
            ops = ops.with_columns(
                pl.when(pl.col(column).is_not_null() | (column == "bitwidth"))
                .then(pl.lit(value))
                .otherwise(pl.col(column))
                .cast(ops.schema[column])
                .alias(column)
            )
        elif name not in WORKLOAD_FIELDS:
            ops = _set_parameter(base, ops, name, value)
    if ops is not base.ops:
        base = _rebuilt(base, ops)
    return expand_graph(base) if fine else base


def expand(g: Graph | str) -> Graph:
    """The fine graph of `g`, a Graph or a built-in pipeline's name: every composite
    row replaced by a chain of its stage rows (`nerframe.graphs.expand_graph`).

    >>> expand("neurex").ops.height
    7
    """
    return expand_graph(pipeline(g) if isinstance(g, str) else g)


def read_graph(path: str | Path) -> Graph:
    """A graph from a file: a trace file (``*.trace.json``) gives its traced graph
    (`nerframe.trace.read_traced_graph`), any other file is a JSON or YAML graph
    file (`nerframe.graphs.read_graph_file`).

    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.yaml"
    >>> _ = path.write_text(json.dumps({"ops": [{"op_type": "Sorting", "B": 8, "N": 4}]}))
    >>> read_graph(path).ops.height
    1
    """
    path = Path(path)
    if path.name.lower().endswith(".trace.json"):
        from nerframe.trace import read_traced_graph  # loaded only to read a trace

        return read_traced_graph(path)
    return read_graph_file(path)


def _set_parameter(base: Graph, ops: pl.DataFrame, name: str, value: float) -> pl.DataFrame:
    op_type, _, parameter = name.partition(".")
    if op_type not in ops["op_type"].cast(pl.String).to_list():
        raise InvalidInputError(f"workload axis {name!r}: graph {base.name!r} has no {op_type} op")
    if parameter not in op_types()[op_type].parameters:
        takes = ", ".join(op_types()[op_type].parameters)
        raise InvalidInputError(
            f"workload axis {name!r}: {op_type} has no parameter {parameter!r}; it takes {takes}"
        )
    rows = pl.col("op_type").cast(pl.String) == op_type
    if parameter not in ops.columns:
        ops = ops.with_columns(pl.lit(None).alias(parameter))
    return ops.with_columns(
        pl.when(rows).then(pl.lit(value)).otherwise(pl.col(parameter)).alias(parameter)
    )


def _rebuilt(base: Graph, ops: pl.DataFrame) -> Graph:
    """`base` with new op rows, validated again (a bad value names its op and column)."""
    records = [{k: v for k, v in row.items() if v is not None} for row in ops.to_dicts()]
    for record in records:
        record.pop("graph", None)
        record.pop("category", None)
    return graph(
        base.name,
        records,
        base.edges,
        frame_pixels=base.frame_pixels,
        kind=base.kind,
        rendered_fraction=base.rendered_fraction,
    )

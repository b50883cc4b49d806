"""The operator catalogue: every op type nerframe knows, as one table of data.

Each row names an op type, its category, the parameters it takes (with
defaults) and, for composites, its stages. The validator (`nerframe.operators`),
the cost kernel's dispatch codes (a row's position is its code) and the docs all
read this table; adding an op type means adding a row here and its formula in
`nerframe.kernels`.

Parameters are written ``name`` (required) or ``name=default``; a default that
names another parameter (``out_dim=layer_width``) copies that parameter's value.

>>> import nerframe
>>> nerframe.catalogue().filter(op_type="MLP")["category"].item()
'COMPUTATION'
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from functools import cache

import polars as pl

CATEGORIES: tuple[str, ...] = ("SAMPLING", "ENCODING", "COMPUTATION", "BLENDING", "OPTIMIZATION")

_TILING = "image_w=1280 image_h=720 tile=16 tiles_per_gaussian=0"
_HASH = "B N input_dim=3 num_levels=16 features_per_level=2 log2_hashmap_size=19"

# (op_type, category, parameters, composite stages)
_OP_TYPES: tuple[tuple[str, str, str, str], ...] = (
    ("UniformSampler", "SAMPLING", "B N", ""),
    ("PDFSampler", "SAMPLING", "B N", ""),
    ("FrustumCulling", "SAMPLING", "G cull_ratio=0.5", ""),
    ("Projection", "SAMPLING", "G", ""),
    ("AABBIntersection", "SAMPLING", f"G {_TILING} tile_keep_ratio=0.1", ""),
    ("OBBIntersection", "SAMPLING", f"G {_TILING} tile_keep_ratio=0.05", ""),
    (
        "FrustumCullingProjection",
        "SAMPLING",
        f"G cull_ratio=0.5 {_TILING} tile_keep_ratio=0.1",
        "FrustumCulling Projection AABBIntersection OBBIntersection",
    ),
    ("HashEncoding", "ENCODING", _HASH, "IndexGeneration HashLookup Interpolation"),
    ("IndexGeneration", "ENCODING", _HASH, ""),
    ("HashLookup", "ENCODING", _HASH, ""),
    ("Interpolation", "ENCODING", _HASH, ""),
    ("PointArrange", "ENCODING", "B N input_dim=3", ""),
    ("RFFEncoding", "ENCODING", "B N input_dim=3 num_features=256 use_sin_cos=true", ""),
    (
        "MLP",
        "COMPUTATION",
        "B N in_dim num_layers layer_width out_dim=layer_width skip_connections=[] use_bias=true",
        "",
    ),
    ("SphericalHarmonics", "COMPUTATION", "B N degree=4", ""),
    ("RGBRenderer", "BLENDING", "B N", ""),
    ("DensityRenderer", "BLENDING", "B N", ""),
    ("Sorting", "BLENDING", "B N", ""),
    ("GaussianAlphaBlend", "BLENDING", "B N", ""),
    ("SubtileSkip", "OPTIMIZATION", f"G {_TILING} tile_keep_ratio=0.1", ""),
    ("SensitivityPrediction", "OPTIMIZATION", "B N coarse_prop=0.4 patch_size=3", ""),
    ("Recovery", "OPTIMIZATION", "B N channels=4", ""),
    ("TileMerging", "OPTIMIZATION", "B N", ""),
    ("FeatureCompute", "OPTIMIZATION", "B N", ""),
    ("GradientCompute", "OPTIMIZATION", "B N", ""),
    ("GradientPruning", "OPTIMIZATION", "B N", ""),
    ("Rearrangement", "OPTIMIZATION", "B N", ""),
    ("RowProcessing", "OPTIMIZATION", "B N", ""),
    ("RowGeneration", "OPTIMIZATION", "B N", ""),
    ("DecompBinning", "OPTIMIZATION", "B N", ""),
    ("FRM", "OPTIMIZATION", "B N", ""),
    ("BUM", "OPTIMIZATION", "B N", ""),
    # The 3DGS tile rasteriser's kernels as a GPU runs them (pipeline "3dgs"):
    # per visible Gaussian (B, N = 1), per Gaussian-tile pair (B Gaussians x N
    # tiles) and per fragment (B pairs x N fragments); docs/model.md.
    ("GaussianPreprocess", "COMPUTATION", "B N", ""),
    ("TileDuplicate", "BLENDING", "B N", ""),
    ("RadixSort", "BLENDING", "B N", ""),
    ("TileBlend", "BLENDING", "B N", ""),
    # Occupancy-grid ray marching (Instant-NGP): B rays x N march steps, empty
    # steps included; the samples it keeps are the next sampler's N.
    ("OccupancyMarch", "SAMPLING", "B N", ""),
    # One Adam step over B x N parameters (B parameters, N = 1): a training iteration's
    # optimizer update, once per iteration.
    ("AdamUpdate", "COMPUTATION", "B N", ""),
)

OP_TYPES: tuple[str, ...] = tuple(row[0] for row in _OP_TYPES)
"""Every op type, in catalogue order (the position is the kernel's dispatch code)."""

SCOPES: tuple[str, ...] = ("frame", "batch")
"""When an op runs: once per frame (``frame``) or once per batch of rays (``batch``)."""

# Op types whose default scope is "frame": their work is per Gaussian (a scene
# quantity), so it is done once per rendered frame whatever the pixel batching.
# Every other op type's work is per ray or pixel and defaults to "batch"; a row
# may override its scope (e.g. SphericalHarmonics evaluated once per Gaussian).
_FRAME_SCOPED = frozenset(
    {
        "FrustumCulling",
        "Projection",
        "AABBIntersection",
        "OBBIntersection",
        "FrustumCullingProjection",
        "SubtileSkip",
        "AdamUpdate",
    }
)

_SAMPLES = "sample=B*N pixel=B ray=B"
_LOOKUPS = "sample=B*N lookup=B*N*num_levels*2^input_dim"

# (op_type, module types it prefers (best first), work items per unit)
_ON_HARDWARE: tuple[tuple[str, str, str], ...] = (
    ("UniformSampler", "SAMPLING VOLUME_RENDERING", _SAMPLES),
    ("PDFSampler", "SAMPLING VOLUME_RENDERING", _SAMPLES),
    ("FrustumCulling", "FRUSTUM_CULLING SAMPLING", "gaussian=G"),
    ("Projection", "PROJECTION SAMPLING", "gaussian=G"),
    ("AABBIntersection", "INTERSECTION SAMPLING", "gaussian=G"),
    ("OBBIntersection", "INTERSECTION SAMPLING", "gaussian=G"),
    ("FrustumCullingProjection", "FRUSTUM_CULLING PROJECTION SAMPLING", "gaussian=G"),
    ("HashEncoding", "HASH_ENCODE ENCODING", _LOOKUPS),
    ("IndexGeneration", "INDEX_GENERATION HASH_ENCODE ENCODING", _LOOKUPS),
    ("HashLookup", "HASH_LOOKUP HASH_ENCODE ENCODING", _LOOKUPS),
    ("Interpolation", "INTERPOLATION HASH_ENCODE ENCODING", _LOOKUPS),
    ("PointArrange", "POINT_ARRANGE ENCODING", "sample=B*N"),
    ("RFFEncoding", "POSITIONAL_ENCODE ENCODING", "sample=B*N"),
    ("MLP", "MLP FIELD_COMPUTATION", "sample=B*N"),
    # one SH evaluation per row item: a Gaussian when scoped per frame (B = Gaussians,
    # N = 1), a pixel-sample in the spec's per-batch form (where G = B*N anyway)
    (
        "SphericalHarmonics",
        "SPHERICAL_HARMONICS FEATURECOMPUTE FIELD_COMPUTATION",
        "sample=B*N gaussian=B*N",
    ),
    ("RGBRenderer", "VOLUME_RENDERING BLENDING", _SAMPLES),
    ("DensityRenderer", "VOLUME_RENDERING BLENDING", _SAMPLES),
    ("Sorting", "SORTING VOLUME_RENDERING", "sample=B*N pixel=B"),
    ("GaussianAlphaBlend", "VOLUME_RENDERING BLENDING", "sample=B*N pixel=B"),
    ("SubtileSkip", "SUBTILE_SKIP OPTIMIZATION", "gaussian=G"),
    ("SensitivityPrediction", "SENSITIVITY_PREDICTION OPTIMIZATION", _SAMPLES),
    ("Recovery", "RECOVERY OPTIMIZATION", _SAMPLES),
    ("TileMerging", "TILEMERGING OPTIMIZATION", "sample=B*N pixel=B"),
    ("FeatureCompute", "FEATURECOMPUTE OPTIMIZATION", "sample=B*N pixel=B"),
    ("GradientCompute", "GRADIENTCOMPUTE OPTIMIZATION", "sample=B*N pixel=B"),
    ("GradientPruning", "GRADIENTPRUNING OPTIMIZATION", "sample=B*N pixel=B"),
    ("Rearrangement", "REARRANGEMENT OPTIMIZATION", "sample=B*N pixel=B"),
    ("RowProcessing", "ROWPROCESSING OPTIMIZATION", "sample=B*N pixel=B"),
    ("RowGeneration", "ROWGENERATION OPTIMIZATION", "sample=B*N pixel=B"),
    ("DecompBinning", "DECOMPBINNING OPTIMIZATION", "sample=B*N pixel=B"),
    ("FRM", "FRM OPTIMIZATION", _SAMPLES),
    ("BUM", "BUM OPTIMIZATION", _SAMPLES),
    ("GaussianPreprocess", "SPHERICAL_HARMONICS PROJECTION SAMPLING", "gaussian=B*N"),
    ("TileDuplicate", "SORTING", "sample=B*N"),
    ("RadixSort", "SORTING", "sample=B*N"),
    ("TileBlend", "VOLUME_RENDERING BLENDING", "sample=B*N pixel=B"),
    ("OccupancyMarch", "OCCUPANCY_MARCH SAMPLING VOLUME_RENDERING", "sample=B*N ray=B"),
    # assumption: no accelerator names an optimizer unit; the unit with the MLP's
    # arithmetic takes the update
    ("AdamUpdate", "ADAM_UPDATE FIELD_COMPUTATION", ""),
)

WORK_UNITS: tuple[str, ...] = ("flop", "sample", "ray", "pixel", "gaussian", "lookup")
"""Units a module's throughput may count: FLOPs (the cost model's), or work items.

A ``sample`` is one point along a ray (B·N per row of a ray pipeline) or one
Gaussian-pixel pair of a splatting pipeline; ``ray`` and ``pixel`` are the B rays or
pixels of a batch; ``gaussian`` one of G Gaussians; ``lookup`` one hash-table read
(2^input_dim corners per level per sample).
"""

PREFERENCES: dict[str, tuple[str, ...]] = {
    op: tuple(types.split()) for op, types, _ in _ON_HARDWARE
}
"""Default preference table: op type -> module types, best first (mapping step 2).

Module types are free-form strings compared case-insensitively. The names follow the
original framework's files (``ENCODING``, ``FIELD_COMPUTATION``, ``VOLUME_RENDERING``,
``SORTING``, ``TILEMERGING``, ``ROWPROCESSING``, ``FRM``, ``BUM``…); an op type's own
upper-case name comes first where a dedicated unit is plausible, and a catalogue
category (``SAMPLING``, ``ENCODING``, ``BLENDING``, ``OPTIMIZATION``) last, so a
module typed by category takes that category's operators.
"""

WORK_ITEMS: dict[str, dict[str, tuple[str, ...]]] = {
    op: {
        unit: tuple(expression.split("*"))
        for unit, _, expression in (word.partition("=") for word in items.split())
    }
    for op, _, items in _ON_HARDWARE
}
"""Op type -> unit -> the factors whose product counts the unit's items in one row.

A factor is a parameter name, an integer, or ``2^parameter``. Every op type also
counts ``flop`` (its cost-model FLOPs), which is not listed here.

>>> WORK_ITEMS["HashEncoding"]["lookup"]
('B', 'N', 'num_levels', '2^input_dim')
"""


# Op types whose four costs are multiples of B*N (the samples they touch):
# (FLOPs, input, weight, output) elements per sample; a negative input or output
# multiple counts per ray instead (a multiple of B).
_PER_ELEMENT: dict[str, tuple[int, int, int, int]] = {
    "UniformSampler": (1, -1, 0, 1),
    "PDFSampler": (1, -1, 0, 1),
    "RGBRenderer": (6, 3, 1, -3),
    "DensityRenderer": (1, 1, 1, -1),
    "GaussianAlphaBlend": (6, 3, 1, -3),
    "TileMerging": (8, 2, 0, 2),
    "FeatureCompute": (12, 4, 0, 3),
    "GradientPruning": (4, 3, 0, 3),
    "RowProcessing": (16, 5, 0, 5),
    "RowGeneration": (8, 5, 0, 5),
    "DecompBinning": (12, 5, 0, 5),
    "FRM": (4, 3, 0, 3),
    "BUM": (6, 3, 0, 3),
    # GPU kernels of Kerbl et al. 2023's rasteriser (graphdeco-inria
    # diff-gaussian-rasterization), 4-byte elements at bitwidth 32. FLOPs here are
    # FMA-equivalents of thread instructions (2 per instruction: an SM issues one
    # instruction per FP32 lane and cycle, whatever it computes); counts in
    # docs/model.md ("3DGS on a GPU").
    "GaussianPreprocess": (600, 57, 0, 21),
    "TileDuplicate": (20, -5, 0, 3),
    "RadixSort": (180, 22, 0, 18),
    "TileBlend": (68, -10, 0, 0),
    # One march step of Instant-NGP's renderer (NVlabs/instant-ngp testbed_nerf.cu,
    # calc_dt and density_grid_occupied_at), whether its cell is empty or not:
    # the step size (1 multiply, 2 clamps), the advance (1 add), the position
    # (3 FMA = 6), the cascade from the position (4: 3 abs-max, exponent), the cell
    # (3 scales), its Morton bit address (2) and the occupancy-bit test (1) = 20
    # FLOP-equivalents; per ray the origin and direction are read (6). The
    # bitfield (128^3 bits = 256 KiB per cascade) stays in cache, so a lookup costs
    # issue slots, not memory bytes (weight 0); the kept samples are written by
    # the sampler that follows (output 0). docs/workloads.md, "NeRF sampling".
    "OccupancyMarch": (20, -6, 0, 0),
    # One parameter's Adam step (Kingma & Ba, ICLR 2015, Algorithm 1, as
    # torch.optim.Adam computes it): the first moment's lerp (3), the second moment's
    # scale and squared-gradient FMA (4), the denominator's sqrt, bias-correction
    # divide and epsilon (3), the parameter's divide and FMA (3) = 13; the gradient is
    # read (input 1), the parameter and both moments read (weight 3) and written back
    # (output 3): 28 bytes a parameter in float32, as one fused kernel moves them.
    "AdamUpdate": (13, 1, 3, 3),
}


@dataclass(frozen=True)
class Parameter:
    """One typed column of the ops table.

    ``kind`` is ``count`` (integer >= ``minimum``), ``ratio`` (float in (0, 1]),
    ``flag`` (bool) or ``indices`` (list of integers >= 0).
    """

    name: str
    kind: str
    dtype: pl.DataType
    minimum: int = 1
    description: str = ""


PARAMETERS: tuple[Parameter, ...] = (
    Parameter("B", "count", pl.Int64(), description="rays or pixels in one batch"),
    Parameter("N", "count", pl.Int64(), description="samples or primitives per ray/pixel"),
    Parameter("G", "count", pl.Int64(), description="Gaussians or points entering the op"),
    Parameter("input_dim", "count", pl.Int32(), description="coordinates per sample"),
    Parameter("num_levels", "count", pl.Int32(), description="hash-grid levels"),
    Parameter("features_per_level", "count", pl.Int32(), description="features per level"),
    Parameter("log2_hashmap_size", "count", pl.Int32(), 0, "log2 of hash-table entries per level"),
    Parameter("num_features", "count", pl.Int32(), description="random Fourier features"),
    Parameter("use_sin_cos", "flag", pl.Boolean(), description="emit sin and cos of each"),
    Parameter("in_dim", "count", pl.Int32(), description="MLP input width"),
    Parameter("num_layers", "count", pl.Int32(), description="MLP layers"),
    Parameter("layer_width", "count", pl.Int32(), description="MLP hidden width"),
    Parameter("out_dim", "count", pl.Int32(), description="MLP output width"),
    Parameter(
        "skip_connections", "indices", pl.List(pl.Int32()), 0, "layers that re-read the input"
    ),
    Parameter("use_bias", "flag", pl.Boolean(), description="MLP layers carry biases"),
    Parameter("degree", "count", pl.Int32(), 0, "spherical-harmonics degree"),
    Parameter("cull_ratio", "ratio", pl.Float64(), description="share of Gaussians kept"),
    Parameter("image_w", "count", pl.Int32(), description="image width in pixels"),
    Parameter("image_h", "count", pl.Int32(), description="image height in pixels"),
    Parameter("tile", "count", pl.Int32(), description="tile edge in pixels"),
    Parameter("tile_keep_ratio", "ratio", pl.Float64(), description="share of tiles hit"),
    Parameter(
        "tiles_per_gaussian", "count", pl.Int32(), 0, "tiles a Gaussian overlaps (0: all tiles)"
    ),
    Parameter("coarse_prop", "ratio", pl.Float64(), description="share of important patches"),
    Parameter("patch_size", "count", pl.Int32(), description="patch edge in pixels"),
    Parameter("channels", "count", pl.Int32(), description="recovered channels"),
)
"""Every parameter column of the ops table, in column order."""

PARAMETER = {p.name: p for p in PARAMETERS}


@dataclass(frozen=True)
class OpType:
    """One parsed catalogue row."""

    name: str
    code: int
    category: str
    required: tuple[str, ...]
    defaults: dict[str, object]
    stages: tuple[str, ...]
    scope: str
    per_element: tuple[int, int, int, int] | None = None
    """(FLOPs, input, weight, output) per sample if all costs are multiples of B*N
    (a negative input/output multiple counts per ray), else None."""

    @property
    def parameters(self) -> tuple[str, ...]:
        """Every parameter the op type uses, required ones first."""
        return self.required + tuple(self.defaults)


def _parse_default(name: str, text: str) -> object:
    kind = PARAMETER[name].kind
    if text in PARAMETER:
        return text  # a reference to another parameter, resolved per row
    if kind == "flag":
        return text == "true"
    if kind == "indices":
        return [int(v) for v in text.strip("[]").split(",") if v]
    if kind == "ratio":
        return float(text)
    return int(text)


@cache
def op_types() -> dict[str, OpType]:
    """The catalogue parsed into `OpType` records, keyed by name."""
    parsed = {}
    for code, (name, category, params, stages) in enumerate(_OP_TYPES):
        required, defaults = [], {}
        for word in params.split():
            key, _, default = word.partition("=")
            if default:
                defaults[key] = _parse_default(key, default)
            else:
                required.append(key)
        scope = "frame" if name in _FRAME_SCOPED else "batch"
        parsed[name] = OpType(
            name,
            code,
            category,
            tuple(required),
            defaults,
            tuple(stages.split()),
            scope,
            _PER_ELEMENT.get(name),
        )
    return parsed


def catalogue() -> pl.DataFrame:
    """The catalogue as a DataFrame: one row per op type, with its category,
    required parameters, defaults, composite stages and default ``scope``
    (``frame``: once per frame, ``batch``: once per batch of rays).

    >>> import nerframe
    >>> nerframe.catalogue().height
    38
    >>> nerframe.catalogue().filter(op_type="SubtileSkip")["scope"].item()
    'frame'
    """
    rows = [
        {
            "op_type": t.name,
            "code": t.code,
            "category": t.category,
            "required": list(t.required),
            "defaults": ", ".join(f"{k}={_show(v)}" for k, v in t.defaults.items()),
            "stages": list(t.stages),
            "scope": t.scope,
        }
        for t in op_types().values()
    ]
    return pl.DataFrame(rows)


def _show(value: object) -> str:
    if isinstance(value, bool):
        return str(value).lower()
    return str(value)


HOST = "HOST"
"""Module type that takes any operator no other rule maps."""

BACKWARD_SUFFIX = " (B)"
"""The suffix of an operator_mapping key that names an op type's backward pass."""
_OP_KEY = re.compile(r"^(?P<op>.+?)(?P<bwd> \(B\))?$")


def op_key(key: str) -> tuple[str, bool] | None:
    """``(op_type, backward)`` of an operator_mapping key, None if it names no op type.

    >>> op_key("GaussianAlphaBlend (B)")
    ('GaussianAlphaBlend', True)
    """
    match = _OP_KEY.match(key)
    if match is None or match["op"] not in OP_TYPES:
        return None
    return match["op"], match["bwd"] is not None

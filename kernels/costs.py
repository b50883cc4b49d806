"""The cost kernel: FLOPs, element counts and bytes of every ops row, in bulk.

`cost_kernel` reads one NumPy array per ops column (zero-copy views of the Arrow
buffers; booleans stay Arrow bitmaps) and fills the nine cost columns, in
parallel over rows. It dispatches on the op type's catalogue code, so a table
may mix every op type. Arithmetic is float64 throughout: integer-valued
products are exact while they stay below 2**53, which the kernel checks for the
element counts (it returns how many rows exceed it, so the caller can refuse
them). `kernels.reference_costs` is the scalar oracle it is tested against.

>>> import numpy as np
>>> from nerframe.kernels.costs import cost_columns
>>> out = cost_columns({"op_type": np.array([0], np.uint8), "B": np.array([4096]),
...                     "N": np.array([64])})
>>> out["flops"][0], out["elems_in"][0], out["bytes_out"][0]
(np.float64(262144.0), np.int64(4096), np.float64(524288.0))
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl
from numba import njit, prange

from nerframe.schemas import OPS
from nerframe.taxonomy import OP_TYPES, op_types

EXACT_LIMIT = 2.0**53
"""Largest element count the kernel represents exactly."""

# Dispatch codes are catalogue positions; numba folds these globals into constants.
FRUSTUM = OP_TYPES.index("FrustumCulling")
PROJECTION = OP_TYPES.index("Projection")
AABB = OP_TYPES.index("AABBIntersection")
OBB = OP_TYPES.index("OBBIntersection")
FCP = OP_TYPES.index("FrustumCullingProjection")
HASH = OP_TYPES.index("HashEncoding")
INDEX_GEN = OP_TYPES.index("IndexGeneration")
LOOKUP = OP_TYPES.index("HashLookup")
INTERP = OP_TYPES.index("Interpolation")
ARRANGE = OP_TYPES.index("PointArrange")
RFF = OP_TYPES.index("RFFEncoding")
MLP = OP_TYPES.index("MLP")
SH = OP_TYPES.index("SphericalHarmonics")
SORTING = OP_TYPES.index("Sorting")
SUBTILE = OP_TYPES.index("SubtileSkip")
SENSITIVITY = OP_TYPES.index("SensitivityPrediction")
RECOVERY = OP_TYPES.index("Recovery")
GRADIENT = OP_TYPES.index("GradientCompute")
REARRANGE = OP_TYPES.index("Rearrangement")

# Per-sample multiples (flops, A, W, O) of the op types whose costs are all
# multiples of B*N, from the catalogue; a negative A or O multiple means "per
# ray" (a multiple of B instead of BN).
_PIXELWISE = np.zeros((len(OP_TYPES), 4), np.float64)
for _t in op_types().values():
    if _t.per_element is not None:
        _PIXELWISE[_t.code] = _t.per_element
PIXELWISE = _PIXELWISE
IS_PIXELWISE = np.array([t.per_element is not None for t in op_types().values()])


@njit(inline="always")
def _bit(bitmap: np.ndarray, offset: int, i: int) -> bool:
    j = offset + i
    return (bitmap[j >> 3] >> (j & 7)) & 1 == 1


@njit(inline="always")
def _tiles(image_w: float, image_h: float, tile: float) -> float:
    return math.floor(image_w / tile) * math.floor(image_h / tile)


@njit(inline="always")
def _tiles_hit(t: float, tiles_per_gaussian: float) -> float:
    # The tiles each Gaussian is tested against: all T (the spec's all-pairs
    # formula) unless the row says how many a Gaussian overlaps.
    return t if tiles_per_gaussian == 0 else min(tiles_per_gaussian, t)


@njit(inline="always")
def _culled(g: float, cull_ratio: float, t: float, hit: float, keep: float) -> tuple:
    """FrustumCullingProjection: the sums of its four stages, and the last stage's O."""
    gk = math.ceil(cull_ratio * g)
    flops = 17.0 * g + 72.0 * gk + 4.0 * gk * hit + 10.0 * gk * hit
    a = 3.0 * g + 9.0 * gk + 5.0 * gk + 5.0 * gk
    w = 16.0 + 16.0 + 4.0 * t + 4.0 * t
    return flops, a, w, hit * math.ceil(keep * gk)


@njit(inline="always")
def _mlp_weights(
    in_dim: float,
    layers: int,
    width: float,
    out_dim: float,
    skips: np.ndarray,
    lo: int,
    hi: int,
    use_bias: bool,
) -> tuple:
    """M (weights) and the bias count of an MLP; skip layers re-read the input."""
    if layers == 1:
        m = in_dim * out_dim
        bias = out_dim
    else:
        m = in_dim * width + width * out_dim
        bias = width + out_dim
        for layer in range(1, layers - 1):
            fan_in = width
            for s in range(lo, hi):
                if skips[s] == layer:
                    fan_in = width + in_dim
                    break
            m += fan_in * width
            bias += width
    return m, (bias if use_bias else 0.0)


@njit(parallel=True, cache=True)
def cost_kernel(
    code: np.ndarray,
    backward: np.ndarray,
    backward_offset: int,
    bitwidth: np.ndarray,
    dim_b: np.ndarray,
    dim_n: np.ndarray,
    dim_g: np.ndarray,
    input_dim: np.ndarray,
    num_levels: np.ndarray,
    features_per_level: np.ndarray,
    log2_hashmap_size: np.ndarray,
    num_features: np.ndarray,
    use_sin_cos: np.ndarray,
    use_sin_cos_offset: int,
    in_dim: np.ndarray,
    num_layers: np.ndarray,
    layer_width: np.ndarray,
    out_dim: np.ndarray,
    skip_offsets: np.ndarray,
    skip_values: np.ndarray,
    use_bias: np.ndarray,
    use_bias_offset: int,
    degree: np.ndarray,
    cull_ratio: np.ndarray,
    image_w: np.ndarray,
    image_h: np.ndarray,
    tile: np.ndarray,
    tile_keep_ratio: np.ndarray,
    tiles_per_gaussian: np.ndarray,
    coarse_prop: np.ndarray,
    patch_size: np.ndarray,
    channels: np.ndarray,
    flops_out: np.ndarray,
    elems: np.ndarray,
    nbytes: np.ndarray,
    intensity: np.ndarray,
) -> int:
    """Fill `flops_out`, `elems` (int64, 3 x n: in, w, out), `nbytes` (4 x n: in, w,
    out, total) and `intensity`; return how many rows have an element count >= 2**53
    (their ``elems[0]`` is set to -1).

    Boolean columns are Arrow bitmaps with their bit offset. Only the columns an
    op type uses are read for its rows, so unused (null) slots may hold anything.
    """
    overflow = 0
    for i in prange(code.shape[0]):
        c = code[i]
        flops = 0.0
        a = 0.0
        w = 0.0
        o = 0.0
        if IS_PIXELWISE[c]:
            b = float(dim_b[i])
            bn = b * float(dim_n[i])
            k = PIXELWISE[c]
            flops = k[0] * bn
            a = k[1] * bn if k[1] >= 0 else -k[1] * b
            w = k[2] * bn
            o = k[3] * bn if k[3] >= 0 else -k[3] * b
        elif c in (FRUSTUM, PROJECTION, AABB, OBB, FCP, SUBTILE):
            g = float(dim_g[i])
            if c == FRUSTUM:
                flops = 17.0 * g
                a = 3.0 * g
                w = 16.0
                o = math.ceil(cull_ratio[i] * g)
            elif c == PROJECTION:
                flops = 72.0 * g
                a = 9.0 * g
                w = 16.0
                o = 5.0 * g
            else:
                t = _tiles(float(image_w[i]), float(image_h[i]), float(tile[i]))
                hit = _tiles_hit(t, float(tiles_per_gaussian[i]))
                keep = tile_keep_ratio[i]
                if c == FCP:
                    flops, a, w, o = _culled(g, cull_ratio[i], t, hit, keep)
                else:
                    per_tile = 4.0 if c in (AABB, SUBTILE) else 10.0
                    flops = per_tile * g * hit
                    a = 4.0 * g if c == SUBTILE else 5.0 * g
                    w = 4.0 * t
                    o = hit * math.ceil(keep * g)
        else:
            b = float(dim_b[i])
            n = float(dim_n[i])
            bn = b * n
            if c in (HASH, INDEX_GEN, LOOKUP, INTERP):
                levels = float(num_levels[i])
                f = float(features_per_level[i])
                if c == HASH:
                    flops = 56.0 * bn * levels + 16.0 * bn * levels * f
                    a = bn * float(input_dim[i])
                    o = bn * levels * f
                elif c == INDEX_GEN:
                    flops = 56.0 * bn * levels
                    a = bn * float(input_dim[i])
                    o = 16.0 * bn * levels
                elif c == LOOKUP:
                    a = 8.0 * bn * levels
                    w = 2.0 ** float(log2_hashmap_size[i]) * f * levels
                    o = 8.0 * bn * levels * f
                else:
                    flops = 16.0 * bn * levels * f
                    a = 8.0 * bn * levels * f
                    w = 8.0 * bn * levels
                    o = bn * levels * f
            elif c == ARRANGE:
                d = float(input_dim[i])
                flops = 4.0 * bn + 2.0 * bn * math.log2(bn)
                a = bn * d
                o = bn * d
            elif c == RFF:
                d = float(input_dim[i])
                nf = float(num_features[i])
                od = 2.0 * nf if _bit(use_sin_cos, use_sin_cos_offset, i) else nf
                flops = 2.0 * bn * d * nf + bn * od
                a = bn * d
                w = d * nf
                o = bn * od
            elif c == MLP:
                m, bias = _mlp_weights(
                    float(in_dim[i]),
                    num_layers[i],
                    float(layer_width[i]),
                    float(out_dim[i]),
                    skip_values,
                    skip_offsets[i],
                    skip_offsets[i + 1],
                    _bit(use_bias, use_bias_offset, i),
                )
                flops = 2.0 * bn * m
                a = bn * float(in_dim[i])
                w = m + bias
                o = bn * float(out_dim[i])
            elif c == SH:
                nb = (float(degree[i]) + 1.0) ** 2
                flops = 10.0 * bn * nb
                a = 3.0 * bn
                w = 3.0 * nb
                o = 3.0 * bn
            elif c == SORTING:
                flops = bn * math.log2(n)
                a = bn
                w = 3.0 * bn
                o = 3.0 * bn
            elif c == SENSITIVITY:
                p2 = patch_size[i] * patch_size[i]
                patches = (dim_b[i] - 1) // p2 + 1
                flops = bn + 72.0 * math.floor(coarse_prop[i] * float(patches))
                a = bn + 3.0 * b
                o = bn + b
            elif c == RECOVERY:
                ch = float(channels[i])
                flops = bn * ch
                a = bn * (1.0 + ch)
                o = bn * ch
            elif c == GRADIENT:
                flops = 16.0 * bn
                a = 3.0 * b
                w = 2.0 * bn
                o = 3.0 * bn
            elif c == REARRANGE:
                flops = bn + math.floor(math.log2(max(n, 2.0)))
                a = 3.0 * bn
                o = 3.0 * bn
        if _bit(backward, backward_offset, i):
            if c == MLP:
                flops = 2.0 * flops
            a, w, o = o + a, w, a + w
        bits = float(bitwidth[i])
        bytes_in = a * bits / 8.0
        bytes_w = w * bits / 8.0
        bytes_out = o * bits / 8.0
        total = bytes_in + bytes_w + bytes_out
        flops_out[i] = flops
        if a < EXACT_LIMIT and w < EXACT_LIMIT and o < EXACT_LIMIT:
            elems[0, i] = np.int64(a)
            elems[1, i] = np.int64(w)
            elems[2, i] = np.int64(o)
        else:
            elems[0, i] = -1
            overflow += 1
        nbytes[0, i] = bytes_in
        nbytes[1, i] = bytes_w
        nbytes[2, i] = bytes_out
        nbytes[3, i] = total
        intensity[i] = flops / total if total > 0.0 else 0.0
    return overflow


ARGUMENTS = (
    "op_type",
    "backward",
    "bitwidth",
    "B",
    "N",
    "G",
    "input_dim",
    "num_levels",
    "features_per_level",
    "log2_hashmap_size",
    "num_features",
    "use_sin_cos",
    "in_dim",
    "num_layers",
    "layer_width",
    "out_dim",
    "skip_connections",
    "use_bias",
    "degree",
    "cull_ratio",
    "image_w",
    "image_h",
    "tile",
    "tile_keep_ratio",
    "tiles_per_gaussian",
    "coarse_prop",
    "patch_size",
    "channels",
)
"""The ops columns the kernel reads, in argument order."""

_BITMAPS = {"backward", "use_sin_cos", "use_bias"}


def kernel_arguments(columns: Mapping[str, Any]) -> list[Any]:
    """The input arguments of `cost_kernel` (in order) from ops columns as arrays.

    `columns` maps ops column names to arrays; a missing column reads as zeros
    (``bitwidth`` as 16, ``backward`` as false, other flags as true). Flags may be
    bool arrays or ``(arrow_bitmap, bit_offset)`` pairs, and ``skip_connections``
    an ``(offsets, values)`` pair.
    """
    n = len(columns["op_type"])
    args: list[Any] = []
    for name in ARGUMENTS:
        value = columns.get(name)
        if name in _FLAGS:
            if value is None:
                value = np.full(n, name != "backward")
            args += value if isinstance(value, tuple) else _bitmap(value)
        elif name == "skip_connections":
            args += value or (np.zeros(n + 1, np.int64), np.zeros(0, np.int32))
        elif value is None:
            args.append(np.full(n, 16 if name == "bitwidth" else 0, _DTYPES[name]))
        else:
            args.append(value)
    return args


def cost_columns(columns: Mapping[str, Any]) -> dict[str, np.ndarray]:
    """Run the kernel on plain arrays (see `kernel_arguments`) and return the nine
    cost columns. Rows with an element count at or above 2**53 raise
    `OverflowError`, with the first offending row index in its args.
    """
    n = len(columns["op_type"])
    flops = np.empty(n)
    elems = np.empty((3, n), np.int64)
    nbytes = np.empty((4, n))
    intensity = np.empty(n)
    outputs = [flops, elems, nbytes, intensity]
    if n and cost_kernel(*kernel_arguments(columns), *outputs):
        raise OverflowError("element count reaches 2**53", int(np.argmax(elems[0] < 0)))
    return {
        "flops": flops,
        "elems_in": elems[0],
        "elems_w": elems[1],
        "elems_out": elems[2],
        "bytes_in": nbytes[0],
        "bytes_w": nbytes[1],
        "bytes_out": nbytes[2],
        "bytes_total": nbytes[3],
        "intensity": intensity,
    }


_FLAGS = {"backward", "use_sin_cos", "use_bias"}
# The ops schema's dtypes, so that filled-in columns compile the same specialisation.
_DTYPES = {
    name: pl.Series(dtype=dtype).to_numpy().dtype
    for name, dtype in OPS.items()
    if dtype.is_numeric()
}


def _bitmap(flags: np.ndarray) -> list[Any]:
    """A bool array as an Arrow-style little-endian bitmap and its bit offset."""
    return [np.packbits(np.asarray(flags, bool), bitorder="little"), 0]

"""The cost kernel: FLOPs, element counts and bytes of every ops row, in bulk.

`cost_kernel` reads one NumPy array per ops column (zero-copy views of the Arrow
buffers; booleans stay Arrow bitmaps), gathered in the NamedTuples of
`kernels.cost_inputs`, and fills the nine cost columns, in parallel over rows.
It dispatches on the op type's catalogue code, so a table may mix every op
type. In the same pass it checks every parameter a row's op type uses (not
null, in range; the catalogue says which) and the row's bitwidth and op id, so
a valid table is read once. Arithmetic is float64 throughout: integer-valued
products are exact while they stay below 2**53, which the kernel checks for the
element counts (it counts rows beyond it, so the caller can refuse them).
`kernels.reference_costs` is the scalar oracle it is tested against.

>>> import numba
import numpy as np
>>> from nerframe.kernels.costs import cost_columns
>>> out = cost_columns({"op_type": np.array([0], np.uint8), "B": np.array([4096]),
...                     "N": np.array([64])})
>>> out["flops"][0], out["elems_in"][0], out["bytes_out"][0]
(np.float64(262144.0), np.int64(4096), np.float64(524288.0))
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor

import numpy as np
from numba import get_num_threads, njit

from nerframe.kernels.cost_inputs import (
    CHECKS,
    COUNT,
    INDICES,
    RATIO,
    SIZE,
    CostInputs,
    CostOutputs,
    Counts,
    Ratios,
    Rows,
    Sizes,
    cost_inputs,
    cost_outputs,
)
from nerframe.taxonomy import OP_TYPES, PARAMETERS, op_types

EXACT_LIMIT = 2.0**53
"""Largest element count the kernel represents exactly."""

# Dispatch codes are catalogue positions; numba folds these globals into constants.
UNIFORM = OP_TYPES.index("UniformSampler")
PDF = OP_TYPES.index("PDFSampler")
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
RGB = OP_TYPES.index("RGBRenderer")
DENSITY = OP_TYPES.index("DensityRenderer")
SORTING = OP_TYPES.index("Sorting")
ALPHA = OP_TYPES.index("GaussianAlphaBlend")
SUBTILE = OP_TYPES.index("SubtileSkip")
SENSITIVITY = OP_TYPES.index("SensitivityPrediction")
RECOVERY = OP_TYPES.index("Recovery")
MERGING = OP_TYPES.index("TileMerging")
FEATURE = OP_TYPES.index("FeatureCompute")
GRADIENT = OP_TYPES.index("GradientCompute")
PRUNING = OP_TYPES.index("GradientPruning")
REARRANGE = OP_TYPES.index("Rearrangement")
ROW_PROC = OP_TYPES.index("RowProcessing")
ROW_GEN = OP_TYPES.index("RowGeneration")
DECOMP = OP_TYPES.index("DecompBinning")
FRM = OP_TYPES.index("FRM")
BUM = OP_TYPES.index("BUM")

# Per-sample multiples of the op types whose costs are all multiples of B*N.
_PER_ELEMENT = np.zeros((len(OP_TYPES), 4), np.float64)
for _t in op_types().values():
    if _t.per_element is not None:
        _PER_ELEMENT[_t.code] = _t.per_element
PER_ELEMENT = _PER_ELEMENT
IS_PER_ELEMENT = np.array([t.per_element is not None for t in op_types().values()])


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


@njit(inline="always")
def _row_is_valid(
    x: Rows, counts: Counts, sizes: Sizes, ratios: Ratios, valid: tuple, c: int, i: int
) -> bool:
    """Whether row i's bitwidth, op id and every parameter its op type uses are valid."""
    ok = 1 <= x.bitwidth[i] <= 64 and x.op_id[i] >= 0
    for k in range(CHECKS.shape[1]):
        kind, j, minimum, p = CHECKS[c, k]
        if kind < 0:
            break
        if x.valid_offsets[p] >= 0 and not _bit(valid[p], x.valid_offsets[p], i):
            ok = False
        elif kind == COUNT:
            ok &= counts[j][i] >= minimum
        elif kind == SIZE:
            ok &= sizes[j][i] >= minimum
        elif kind == RATIO:
            r = ratios[j][i]
            ok &= r > 0.0 and r <= 1.0
        elif kind == INDICES:
            for s in range(x.skip_offsets[i], x.skip_offsets[i + 1]):
                ok &= x.skip_values[s] >= 0
    return ok


@njit(cache=True, nogil=True)
def cost_kernel(inputs: CostInputs, out: CostOutputs, start: int, stop: int) -> tuple[int, int]:
    """Fill `out` for rows start..stop-1 of `inputs`; return (rows with an element
    count >= 2**53, invalid rows). An overflowing row's ``out.elems[0]`` is -1.

    Only the columns an op type uses are read for its rows, so unused (null)
    slots may hold anything; an invalid row's outputs are meaningless. Serial
    and without the GIL: `cost_columns` runs one call per thread on a share of
    the rows (numba 0.68 miscompiles NamedTuple arguments of a parallel loop).
    """
    x, flags, counts, sizes, ratios, valid = inputs.rows, *inputs[1:]
    overflow = 0
    invalid = 0
    for i in range(start, stop):
        c = x.code[i]
        if not _row_is_valid(x, counts, sizes, ratios, valid, c, i):
            invalid += 1
        flops = 0.0
        a = 0.0
        w = 0.0
        o = 0.0
        if IS_PER_ELEMENT[c]:
            b = float(counts.B[i])
            bn = b * float(counts.N[i])
            k = PER_ELEMENT[c]
            flops = k[0] * bn
            a = k[1] * bn if k[1] >= 0 else -k[1] * b
            w = k[2] * bn
            o = k[3] * bn if k[3] >= 0 else -k[3] * b
        elif c in (FRUSTUM, PROJECTION, AABB, OBB, FCP, SUBTILE):
            g = float(counts.G[i])
            if c == FRUSTUM:
                flops = 17.0 * g
                a = 3.0 * g
                w = 16.0
                o = math.ceil(ratios.cull_ratio[i] * g)
            elif c == PROJECTION:
                flops = 72.0 * g
                a = 9.0 * g
                w = 16.0
                o = 5.0 * g
            else:
                t = _tiles(float(sizes.image_w[i]), float(sizes.image_h[i]), float(sizes.tile[i]))
                hit = _tiles_hit(t, float(sizes.tiles_per_gaussian[i]))
                keep = ratios.tile_keep_ratio[i]
                if c == FCP:
                    flops, a, w, o = _culled(g, ratios.cull_ratio[i], t, hit, keep)
                else:
                    per_tile = 4.0 if c in (AABB, SUBTILE) else 10.0
                    flops = per_tile * g * hit
                    a = 4.0 * g if c == SUBTILE else 5.0 * g
                    w = 4.0 * t
                    o = hit * math.ceil(keep * g)
        else:
            b = float(counts.B[i])
            n = float(counts.N[i])
            bn = b * n
            if c in (HASH, INDEX_GEN, LOOKUP, INTERP):
                levels = float(sizes.num_levels[i])
                f = float(sizes.features_per_level[i])
                if c == HASH:
                    flops = 56.0 * bn * levels + 16.0 * bn * levels * f
                    a = bn * float(sizes.input_dim[i])
                    o = bn * levels * f
                elif c == INDEX_GEN:
                    flops = 56.0 * bn * levels
                    a = bn * float(sizes.input_dim[i])
                    o = 16.0 * bn * levels
                elif c == LOOKUP:
                    a = 8.0 * bn * levels
                    w = 2.0 ** float(sizes.log2_hashmap_size[i]) * f * levels
                    o = 8.0 * bn * levels * f
                else:
                    flops = 16.0 * bn * levels * f
                    a = 8.0 * bn * levels * f
                    w = 8.0 * bn * levels
                    o = bn * levels * f
            elif c == ARRANGE:
                d = float(sizes.input_dim[i])
                flops = 4.0 * bn + 2.0 * bn * math.log2(bn)
                a = bn * d
                o = bn * d
            elif c == RFF:
                d = float(sizes.input_dim[i])
                nf = float(sizes.num_features[i])
                sin_cos = _bit(flags.use_sin_cos, x.flag_offsets[1], i)
                od = 2.0 * nf if sin_cos else nf
                flops = 2.0 * bn * d * nf + bn * od
                a = bn * d
                w = d * nf
                o = bn * od
            elif c == MLP:
                m, bias = _mlp_weights(
                    float(sizes.in_dim[i]),
                    sizes.num_layers[i],
                    float(sizes.layer_width[i]),
                    float(sizes.out_dim[i]),
                    x.skip_values,
                    x.skip_offsets[i],
                    x.skip_offsets[i + 1],
                    _bit(flags.use_bias, x.flag_offsets[2], i),
                )
                flops = 2.0 * bn * m
                a = bn * float(sizes.in_dim[i])
                w = m + bias
                o = bn * float(sizes.out_dim[i])
            elif c == SH:
                nb = (float(sizes.degree[i]) + 1.0) ** 2
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
                p2 = sizes.patch_size[i] * sizes.patch_size[i]
                patches = (counts.B[i] - 1) // p2 + 1
                flops = bn + 72.0 * math.floor(ratios.coarse_prop[i] * float(patches))
                a = bn + 3.0 * b
                o = bn + b
            elif c == RECOVERY:
                ch = float(sizes.channels[i])
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
        if _bit(flags.backward, x.flag_offsets[0], i):
            if c == MLP:
                flops = 2.0 * flops
            a, w, o = o + a, w, a + w
        bits = float(x.bitwidth[i])
        bytes_in = a * bits / 8.0
        bytes_w = w * bits / 8.0
        bytes_out = o * bits / 8.0
        total = bytes_in + bytes_w + bytes_out
        out.flops[i] = flops
        if a < EXACT_LIMIT and w < EXACT_LIMIT and o < EXACT_LIMIT:
            out.elems[0, i] = np.int64(a)
            out.elems[1, i] = np.int64(w)
            out.elems[2, i] = np.int64(o)
        else:
            out.elems[0, i] = -1
            overflow += 1
        out.nbytes[0, i] = bytes_in
        out.nbytes[1, i] = bytes_w
        out.nbytes[2, i] = bytes_out
        out.nbytes[3, i] = total
        out.intensity[i] = flops / total if total > 0.0 else 0.0
    return overflow, invalid


SERIAL_ROWS = 65_536
"""Tables up to this many rows are costed on one thread (no pool start-up)."""


def _spread(inputs: CostInputs, out: CostOutputs, bounds: list[int]) -> tuple[list, ...]:
    """`pool.map` arguments: one (inputs, out, start, stop) per share of rows."""
    k = len(bounds) - 1
    return [inputs] * k, [out] * k, bounds[:-1], bounds[1:]


COLUMNS = ("op_type", "op_id", "backward", "bitwidth", *(p.name for p in PARAMETERS))
"""The ops columns the kernel reads."""


def cost_columns(
    columns: dict[str, object], validity: dict[str, tuple[np.ndarray, int]] | None = None
) -> dict[str, np.ndarray]:
    """Run the kernel on plain arrays (see `kernels.cost_inputs.cost_inputs`) and
    return the nine cost columns.

    Raises `ValueError` if a row is invalid (the caller names the culprit) and
    `OverflowError` if a row has an element count at or above 2**53, with the
    first offending row index in its args.
    """
    n = len(columns["op_type"])  # type: ignore[arg-type]
    out = cost_outputs(n)
    inputs = cost_inputs(columns, validity)
    threads = min(get_num_threads(), -(-n // SERIAL_ROWS))
    bounds = [n * k // threads for k in range(threads + 1)]
    if threads > 1:
        with ThreadPoolExecutor(threads) as pool:
            parts = list(pool.map(cost_kernel, *_spread(inputs, out, bounds)))
    else:
        parts = [cost_kernel(inputs, out, 0, n)]
    overflow, invalid = np.sum(parts, axis=0)
    if invalid:
        raise ValueError(f"{invalid} invalid ops rows")
    if overflow:
        raise OverflowError("element count reaches 2**53", int(np.argmax(out.elems[0] < 0)))
    return {
        "flops": out.flops,
        "elems_in": out.elems[0],
        "elems_w": out.elems[1],
        "elems_out": out.elems[2],
        "bytes_in": out.nbytes[0],
        "bytes_w": out.nbytes[1],
        "bytes_out": out.nbytes[2],
        "bytes_total": out.nbytes[3],
        "intensity": out.intensity,
    }

"""The cost kernel: FLOPs, element counts and bytes of every ops row, in bulk, with
the per-row checks of `nerframe.ops.validate` (``thorough=False``) folded in.

`cost_kernel` reads one NumPy array per ops column (zero-copy views of the Arrow
buffers; booleans and null masks stay Arrow bitmaps) and fills the nine cost
columns. It dispatches on the op type's catalogue code, so a table may mix every
op type. Each branch checks the parameters its op type uses as it loads them
(validity bit set, value in range), accumulating one flag per row instead of
branching; the kernel only counts invalid rows, and the caller names the first
(`nerframe.ops.validate` does, on that rare path). Large tables are split into
one share of rows per thread; small ones run on the calling thread alone, so a
call of a few rows wakes no other thread.

Arithmetic is float64 throughout: integer-valued products are exact while they
stay below 2**53, which the kernel checks for the element counts (it reports how
many rows exceed it, so the caller can refuse them). `kernels.reference_costs`
is the scalar oracle it is tested against.

The kernel reads arrays only: the API layer (`nerframe.cost_inputs`) builds
`CostInputs` from ops columns and the catalogue's tables.

>>> import numpy as np
>>> from nerframe.cost_inputs import kernel_inputs
>>> inputs = kernel_inputs({"op_type": np.array([0], np.uint8), "B": np.array([4096]),
...                         "N": np.array([64])})
>>> out = CostOutputs(np.empty(1), np.empty((3, 1), np.int64), np.empty((4, 1)), np.empty(1))
>>> cost_kernel(inputs, out), float(out.flops[0]), int(out.elems[0, 0]), float(out.nbytes[2, 0])
((0, 0), 262144.0, 4096, 524288.0)
"""

from __future__ import annotations

import math
from concurrent.futures import ThreadPoolExecutor
from functools import cache
from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit

EXACT_LIMIT = 2.0**53
"""Largest element count the kernel represents exactly."""

PARALLEL_FROM = 4096
"""Tables with fewer rows are costed on the calling thread: waking the thread
pool costs more than it saves, and far more when other processes hold the cores."""

# The catalogue as the kernel's formulas are written for it: op types in catalogue
# order (the position is the dispatch code), the parameter columns in ops-table
# order and each count parameter's minimum (nerframe.taxonomy). Kernels import
# nothing from the API layer, so these are declared here and tests/test_costs.py
# checks them against the catalogue; numba freezes them into its cached machine
# code, which it re-validates against this file only: a catalogue change must
# touch this file too.
OP_TYPES = (
    "UniformSampler",
    "PDFSampler",
    "FrustumCulling",
    "Projection",
    "AABBIntersection",
    "OBBIntersection",
    "FrustumCullingProjection",
    "HashEncoding",
    "IndexGeneration",
    "HashLookup",
    "Interpolation",
    "PointArrange",
    "RFFEncoding",
    "MLP",
    "SphericalHarmonics",
    "RGBRenderer",
    "DensityRenderer",
    "Sorting",
    "GaussianAlphaBlend",
    "SubtileSkip",
    "SensitivityPrediction",
    "Recovery",
    "TileMerging",
    "FeatureCompute",
    "GradientCompute",
    "GradientPruning",
    "Rearrangement",
    "RowProcessing",
    "RowGeneration",
    "DecompBinning",
    "FRM",
    "BUM",
    "GaussianPreprocess",
    "TileDuplicate",
    "RadixSort",
    "TileBlend",
    "OccupancyMarch",
    "AdamUpdate",
)
PARAMETERS = (
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
N_TYPES = len(OP_TYPES)

BLOCK = 2048
"""Rows are costed in blocks of this many (their columns fit in a core's L2 cache).
Within a block, the formulas run over the rows grouped by op type, so the branch
on the type goes the same way from one row to the next instead of at random; the
outputs are then written in row order, as sequential streams."""

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

# Each parameter's minimum (the kernel checks counts only against it) and, as
# AT_x, parameter x's position in PARAMETERS (its row of the validity bitmaps).
_FROM_ZERO = ("log2_hashmap_size", "skip_connections", "degree", "tiles_per_gaussian")
MINIMUM = np.array([0 if p in _FROM_ZERO else 1 for p in PARAMETERS], np.int64)
_at = PARAMETERS.index
AT_B = _at("B")
AT_N = _at("N")
AT_G = _at("G")
AT_INPUT_DIM = _at("input_dim")
AT_NUM_LEVELS = _at("num_levels")
AT_FEATURES_PER_LEVEL = _at("features_per_level")
AT_LOG2_HASHMAP_SIZE = _at("log2_hashmap_size")
AT_NUM_FEATURES = _at("num_features")
AT_USE_SIN_COS = _at("use_sin_cos")
AT_IN_DIM = _at("in_dim")
AT_NUM_LAYERS = _at("num_layers")
AT_LAYER_WIDTH = _at("layer_width")
AT_OUT_DIM = _at("out_dim")
AT_SKIP_CONNECTIONS = _at("skip_connections")
AT_USE_BIAS = _at("use_bias")
AT_DEGREE = _at("degree")
AT_CULL_RATIO = _at("cull_ratio")
AT_IMAGE_W = _at("image_w")
AT_IMAGE_H = _at("image_h")
AT_TILE = _at("tile")
AT_TILE_KEEP_RATIO = _at("tile_keep_ratio")
AT_TILES_PER_GAUSSIAN = _at("tiles_per_gaussian")
AT_COARSE_PROP = _at("coarse_prop")
AT_PATCH_SIZE = _at("patch_size")
AT_CHANNELS = _at("channels")


class CostInputs(NamedTuple):
    """The kernel's inputs: one array per ops column it reads (see `kernel_inputs`).

    Flags are Arrow bitmaps with their bit offset; ``skip_offsets``/``skip_values``
    are the list column's offsets and values; ``present`` holds one validity
    bitmap (bit offset 0) per parameter, in `PARAMETERS` order. ``pixelwise``
    (float64, `N_TYPES` + 1 x 4) holds the per-sample multiples (flops, A, W, O) of
    the op types whose costs are all multiples of B*N, from the catalogue, and
    ``is_pixelwise`` (bool, `N_TYPES` + 1) says which they are; a negative A or O
    multiple means "per ray" (a multiple of B instead of BN: the GPU op types
    TileDuplicate and TileBlend read per Gaussian or per pair); the last entry is
    for codes outside the catalogue (not pixelwise). The kernel takes
    them as separate arguments, in this order: given the tuple itself, numba's code
    ran about 20x slower (it copies an aggregate this large around).
    """

    code: np.ndarray
    op_id: np.ndarray
    backward: np.ndarray
    backward_offset: int
    bitwidth: np.ndarray
    B: np.ndarray
    N: np.ndarray
    G: np.ndarray
    input_dim: np.ndarray
    num_levels: np.ndarray
    features_per_level: np.ndarray
    log2_hashmap_size: np.ndarray
    num_features: np.ndarray
    use_sin_cos: np.ndarray
    use_sin_cos_offset: int
    in_dim: np.ndarray
    num_layers: np.ndarray
    layer_width: np.ndarray
    out_dim: np.ndarray
    skip_offsets: np.ndarray
    skip_values: np.ndarray
    use_bias: np.ndarray
    use_bias_offset: int
    degree: np.ndarray
    cull_ratio: np.ndarray
    image_w: np.ndarray
    image_h: np.ndarray
    tile: np.ndarray
    tile_keep_ratio: np.ndarray
    tiles_per_gaussian: np.ndarray
    coarse_prop: np.ndarray
    patch_size: np.ndarray
    channels: np.ndarray
    present: np.ndarray
    pixelwise: np.ndarray
    is_pixelwise: np.ndarray


class CostOutputs(NamedTuple):
    """The kernel's outputs: ``flops`` (n), ``elems`` (int64, 3 x n: in, w, out),
    ``nbytes`` (4 x n: in, w, out, total) and ``intensity`` (n)."""

    flops: np.ndarray
    elems: np.ndarray
    nbytes: np.ndarray
    intensity: np.ndarray


@njit(inline="always")
def _bit(bitmap: np.ndarray, offset: int, i: int) -> bool:
    j = offset + i
    return bool((bitmap[j >> 3] >> (j & 7)) & 1 == 1)


@njit(inline="always")
def _lacks(present: np.ndarray, p: int, i: int) -> bool:
    return bool((present[p, i >> 3] >> (i & 7)) & 1 == 0)


@njit(inline="always")
def _bad(values: np.ndarray, present: np.ndarray, p: int, i: int) -> bool:
    """Whether row `i` lacks count parameter `p` (``values``) or holds it below its minimum."""
    return bool(_lacks(present, p, i) | (values[i] < MINIMUM[p]))


@njit(inline="always")
def _bad_ratio(values: np.ndarray, present: np.ndarray, p: int, i: int) -> bool:
    """Whether row `i` lacks ratio parameter `p` or holds it outside (0, 1] (NaN too)."""
    v = values[i]
    return _lacks(present, p, i) | (not ((v > 0.0) & (v <= 1.0)))


@njit(inline="always")
def _bad_tiling(
    image_w: np.ndarray,
    image_h: np.ndarray,
    tile: np.ndarray,
    tiles_per_gaussian: np.ndarray,
    tile_keep_ratio: np.ndarray,
    present: np.ndarray,
    i: int,
) -> bool:
    return (
        _bad(image_w, present, AT_IMAGE_W, i)
        | _bad(image_h, present, AT_IMAGE_H, i)
        | _bad(tile, present, AT_TILE, i)
        | _bad(tiles_per_gaussian, present, AT_TILES_PER_GAUSSIAN, i)
        | _bad_ratio(tile_keep_ratio, present, AT_TILE_KEEP_RATIO, i)
    )


@njit(inline="always")
def _tiles(image_w: float, image_h: float, tile: float) -> float:
    return math.floor(image_w / tile) * math.floor(image_h / tile)


@njit(inline="always")
def _tiles_hit(t: float, tiles_per_gaussian: float) -> float:
    # The tiles each Gaussian is tested against: all T (the spec's all-pairs
    # formula) unless the row says how many a Gaussian overlaps.
    return t if tiles_per_gaussian == 0 else min(tiles_per_gaussian, t)


@njit(inline="always")
def _culled(
    g: float, cull_ratio: float, t: float, hit: float, keep: float
) -> tuple[float, float, float, float]:
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
) -> tuple[float, float]:
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
def _read_block(
    start: int,
    stop: int,
    B: np.ndarray,
    N: np.ndarray,
    G: np.ndarray,
    skip_offsets: np.ndarray,
    input_dim: np.ndarray,
    num_levels: np.ndarray,
    features_per_level: np.ndarray,
    log2_hashmap_size: np.ndarray,
    num_features: np.ndarray,
    in_dim: np.ndarray,
    num_layers: np.ndarray,
    layer_width: np.ndarray,
    out_dim: np.ndarray,
    degree: np.ndarray,
    image_w: np.ndarray,
    image_h: np.ndarray,
    tile: np.ndarray,
    tiles_per_gaussian: np.ndarray,
    patch_size: np.ndarray,
    channels: np.ndarray,
    cull_ratio: np.ndarray,
    tile_keep_ratio: np.ndarray,
    coarse_prop: np.ndarray,
) -> float:
    """A sum over one value in each cache line (8 rows) of every column in rows
    start..stop-1, in row order: it brings the lines in as sequential streams."""
    total = 0.0
    for i in range(start, stop, 8):
        total += (
            B[i]
            + N[i]
            + G[i]
            + skip_offsets[i]
            + input_dim[i]
            + num_levels[i]
            + features_per_level[i]
            + log2_hashmap_size[i]
            + num_features[i]
            + in_dim[i]
            + num_layers[i]
            + layer_width[i]
            + out_dim[i]
            + degree[i]
            + image_w[i]
            + image_h[i]
            + tile[i]
            + tiles_per_gaussian[i]
            + patch_size[i]
            + channels[i]
            + cull_ratio[i]
            + tile_keep_ratio[i]
            + coarse_prop[i]
        )
    return total


@njit(inline="always")
def _by_type(code: np.ndarray, start: int, stop: int, order: np.ndarray, first: np.ndarray) -> None:
    """Fill ``order[: stop - start]`` with the rows start..stop-1 grouped by op type
    code (a stable counting sort; `first` is scratch space of 256 slots, one per
    possible uint8 code, so that no code needs clipping)."""
    first[:] = 0
    for i in range(start, stop):
        first[code[i]] += 1
    at = 0
    for c in range(256):
        at, first[c] = at + first[c], at
    for i in range(start, stop):
        c = code[i]
        order[first[c]] = i
        first[c] += 1


@njit(cache=True, nogil=True, error_model="numpy")
def cost_rows(
    begin: int,
    end: int,
    code: np.ndarray,
    op_id: np.ndarray,
    backward: np.ndarray,
    backward_offset: int,
    bitwidth: np.ndarray,
    B: np.ndarray,
    N: np.ndarray,
    G: np.ndarray,
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
    present: np.ndarray,
    pixelwise: np.ndarray,
    is_pixelwise: np.ndarray,
    flops_out: np.ndarray,
    elems: np.ndarray,
    nbytes: np.ndarray,
    intensity: np.ndarray,
) -> tuple[int, int]:
    """Check and cost rows `begin`..`end`-1 (the `CostInputs` and `CostOutputs`
    fields follow the bounds); return how many rows are invalid (their costs are
    meaningless) and how many have an element count >= 2**53 (their ``elems[0]``
    is set to -1).

    A row is invalid if it lacks (validity bit unset) a parameter its op type
    uses, holds one out of range, or has a bitwidth outside 1..64 or a negative
    op id. Only the columns an op type uses enter its rows' costs and checks, so
    unused (null) slots may hold anything.

    Each `BLOCK` of rows takes three steps: every parameter column read in row
    order (`_read_block`); the formulas, op type by op type (the pixelwise types in
    one branch-free loop each), into per-block scratch (A, W, O before the backward
    swap); then, in row order, the backward swap (arithmetic selects: its direction
    is random from row to row), bytes, intensity and the 2**53 check into the
    outputs. One thread on the benchmark's mixed table, same-run A/B: 30 ns a row
    grouped by type alone, 16 ns with the columns read first and the swap without
    branches.
    """
    invalid = 0
    overflow = 0
    size = max(min(BLOCK, end - begin), 0)
    order = np.empty(size, np.int64)
    first = np.empty(256, np.int64)
    block_flops = np.empty(size)
    block_a = np.empty(size)
    block_w = np.empty(size)
    block_o = np.empty(size)
    block_bad = np.empty(size, np.bool_)
    for block in range(begin, end, BLOCK):
        stop = min(block + BLOCK, end)
        _by_type(code, block, stop, order, first)
        # Read every parameter column of the block in row order first: the formulas
        # then read them by op type, in an order the CPU cannot prefetch, and without
        # this the loads wait on memory (the docstring's measurement). Pass 1
        # overwrites this store, which keeps the loads.
        block_flops[0] = _read_block(
            block,
            stop,
            B,
            N,
            G,
            skip_offsets,
            input_dim,
            num_levels,
            features_per_level,
            log2_hashmap_size,
            num_features,
            in_dim,
            num_layers,
            layer_width,
            out_dim,
            degree,
            image_w,
            image_h,
            tile,
            tiles_per_gaussian,
            patch_size,
            channels,
            cull_ratio,
            tile_keep_ratio,
            coarse_prop,
        )
        # The rows of each op type in turn (`first` holds each type's end in `order`).
        start = 0
        for raw in range(256):
            group_end = first[raw]
            if group_end == start:
                continue
            # A code outside the catalogue takes the last branch, which no op type uses.
            c = min(raw, N_TYPES)
            if is_pixelwise[c]:
                per = pixelwise[c]
                # a negative multiple of A or O is per ray (B), not per sample (BN)
                a_bn, a_b = (per[1], 0.0) if per[1] >= 0 else (0.0, -per[1])
                o_bn, o_b = (per[3], 0.0) if per[3] >= 0 else (0.0, -per[3])
                for k in range(start, group_end):
                    i = order[k]
                    b = float(B[i])
                    bn = b * float(N[i])
                    j = i - block
                    block_flops[j] = per[0] * bn
                    block_a[j] = a_bn * bn + a_b * b
                    block_w[j] = per[2] * bn
                    block_o[j] = o_bn * bn + o_b * b
                    block_bad[j] = _bad(B, present, AT_B, i) | _bad(N, present, AT_N, i)
                start = group_end
                continue
            for k in range(start, group_end):
                i = order[k]
                bad = c == N_TYPES
                flops = 0.0
                a = 0.0
                w = 0.0
                o = 0.0
                if c in (FRUSTUM, PROJECTION, AABB, OBB, FCP, SUBTILE):
                    bad |= _bad(G, present, AT_G, i)
                    g = float(G[i])
                    if c == FRUSTUM:
                        bad |= _bad_ratio(cull_ratio, present, AT_CULL_RATIO, i)
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
                        bad |= _bad_tiling(
                            image_w, image_h, tile, tiles_per_gaussian, tile_keep_ratio, present, i
                        )
                        tiles = _tiles(float(image_w[i]), float(image_h[i]), float(tile[i]))
                        hit = _tiles_hit(tiles, float(tiles_per_gaussian[i]))
                        keep = tile_keep_ratio[i]
                        if c == FCP:
                            bad |= _bad_ratio(cull_ratio, present, AT_CULL_RATIO, i)
                            flops, a, w, o = _culled(g, cull_ratio[i], tiles, hit, keep)
                        else:
                            per_tile = 4.0 if c in (AABB, SUBTILE) else 10.0
                            flops = per_tile * g * hit
                            a = 4.0 * g if c == SUBTILE else 5.0 * g
                            w = 4.0 * tiles
                            o = hit * math.ceil(keep * g)
                else:
                    bad |= _bad(B, present, AT_B, i) | _bad(N, present, AT_N, i)
                    b = float(B[i])
                    n = float(N[i])
                    bn = b * n
                    if c in (HASH, INDEX_GEN, LOOKUP, INTERP):
                        # all four take all six parameters, though not every formula reads them
                        bad |= (
                            _bad(input_dim, present, AT_INPUT_DIM, i)
                            | _bad(num_levels, present, AT_NUM_LEVELS, i)
                            | _bad(features_per_level, present, AT_FEATURES_PER_LEVEL, i)
                            | _bad(log2_hashmap_size, present, AT_LOG2_HASHMAP_SIZE, i)
                        )
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
                        bad |= _bad(input_dim, present, AT_INPUT_DIM, i)
                        d = float(input_dim[i])
                        flops = 4.0 * bn + 2.0 * bn * math.log2(bn)
                        a = bn * d
                        o = bn * d
                    elif c == RFF:
                        bad |= (
                            _bad(input_dim, present, AT_INPUT_DIM, i)
                            | _bad(num_features, present, AT_NUM_FEATURES, i)
                            | _lacks(present, AT_USE_SIN_COS, i)
                        )
                        d = float(input_dim[i])
                        nf = float(num_features[i])
                        od = 2.0 * nf if _bit(use_sin_cos, use_sin_cos_offset, i) else nf
                        flops = 2.0 * bn * d * nf + bn * od
                        a = bn * d
                        w = d * nf
                        o = bn * od
                    elif c == MLP:
                        lo = skip_offsets[i]
                        hi = skip_offsets[i + 1]
                        bad |= (
                            _bad(in_dim, present, AT_IN_DIM, i)
                            | _bad(num_layers, present, AT_NUM_LAYERS, i)
                            | _bad(layer_width, present, AT_LAYER_WIDTH, i)
                            | _bad(out_dim, present, AT_OUT_DIM, i)
                            | _lacks(present, AT_SKIP_CONNECTIONS, i)
                            | _lacks(present, AT_USE_BIAS, i)
                        )
                        for j in range(lo, hi):
                            bad |= skip_values[j] < 0
                        # A garbage layer count in a null slot could loop for minutes.
                        m, bias = (
                            (0.0, 0.0)
                            if bad
                            else _mlp_weights(
                                float(in_dim[i]),
                                num_layers[i],
                                float(layer_width[i]),
                                float(out_dim[i]),
                                skip_values,
                                lo,
                                hi,
                                _bit(use_bias, use_bias_offset, i),
                            )
                        )
                        flops = 2.0 * bn * m
                        a = bn * float(in_dim[i])
                        w = m + bias
                        o = bn * float(out_dim[i])
                    elif c == SH:
                        bad |= _bad(degree, present, AT_DEGREE, i)
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
                        bad |= _bad(patch_size, present, AT_PATCH_SIZE, i) | _bad_ratio(
                            coarse_prop, present, AT_COARSE_PROP, i
                        )
                        p2 = patch_size[i] * patch_size[i]
                        patches = (B[i] - 1) // p2 + 1
                        flops = bn + 72.0 * math.floor(coarse_prop[i] * float(patches))
                        a = bn + 3.0 * b
                        o = bn + b
                    elif c == RECOVERY:
                        bad |= _bad(channels, present, AT_CHANNELS, i)
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
                j = i - block
                block_flops[j] = flops
                block_a[j] = a
                block_w[j] = w
                block_o[j] = o
                block_bad[j] = bad
            start = group_end
        # In row order: the nine outputs are written as sequential streams.
        for i in range(block, stop):
            j = i - block
            width = bitwidth[i]
            bad = block_bad[j] | (width < 1) | (width > 64) | (op_id[i] < 0)
            a = block_a[j]
            w = block_w[j]
            o = block_o[j]
            # Selects, not branches: the direction is random from row to row.
            back = 1.0 if _bit(backward, backward_offset, i) else 0.0
            flops = block_flops[j] * (1.0 + back * (1.0 if code[i] == MLP else 0.0))
            a, o = a + back * o, (1.0 - back) * o + back * (a + w)
            bits = float(width)
            bytes_in = a * bits / 8.0
            bytes_w = w * bits / 8.0
            bytes_out = o * bits / 8.0
            total = bytes_in + bytes_w + bytes_out
            flops_out[i] = flops
            nbytes[0, i] = bytes_in
            nbytes[1, i] = bytes_w
            nbytes[2, i] = bytes_out
            nbytes[3, i] = total
            intensity[i] = flops / total if total > 0.0 else 0.0
            invalid += bad
            if a < EXACT_LIMIT and w < EXACT_LIMIT and o < EXACT_LIMIT:
                elems[0, i] = np.int64(a)
                elems[1, i] = np.int64(w)
                elems[2, i] = np.int64(o)
            else:
                elems[0, i] = -1
                overflow += 1
    return invalid, overflow


def cost_kernel(inputs: CostInputs, outputs: CostOutputs) -> tuple[int, int]:
    """Check every row of `inputs` and fill `outputs`; return (invalid rows,
    overflowing rows), as `cost_rows` does. Tables of `PARALLEL_FROM` rows or more
    are split into one share per numba thread, costed by the calling thread and
    a pool of helper threads at once (`cost_rows` runs without the GIL)."""
    n = inputs.code.shape[0]
    threads = get_num_threads()
    if n < PARALLEL_FROM or threads == 1:
        result: tuple[int, int] = cost_rows(0, n, *inputs, *outputs)
        return result
    bounds = [k * n // threads for k in range(threads + 1)]
    shares = [
        _pool(threads).submit(cost_rows, bounds[k], bounds[k + 1], *inputs, *outputs)
        for k in range(1, threads)
    ]
    counts = [cost_rows(bounds[0], bounds[1], *inputs, *outputs)]
    counts += [share.result() for share in shares]
    return sum(c[0] for c in counts), sum(c[1] for c in counts)


@cache
def _pool(threads: int) -> ThreadPoolExecutor:
    # Plain threads, not a numba parallel loop: both paths run the one serial kernel,
    # and no call ever has to wake the OpenMP pool.
    return ThreadPoolExecutor(threads - 1, thread_name_prefix="nerframe-costs")

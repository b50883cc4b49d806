"""Scalar reference of every cost formula in ``spec/operators.md``.

One plain-Python function per op type, one row at a time, in exact integer
arithmetic where the spec is integer and float64 only where it has a float part.
It is the oracle the cost kernel is tested against and the baseline its speed is
measured against; it is not used to compute results.

>>> row = {"op_type": "MLP", "backward": False, "bitwidth": 16, "B": 4096, "N": 64,
...        "in_dim": 32, "num_layers": 3, "layer_width": 64, "out_dim": 4,
...        "skip_connections": [], "use_bias": True}
>>> reference_cost(row)["flops"]
3355443200.0
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping
from typing import Any

Row = Mapping[str, Any]
Elements = tuple[float, int, int, int]  # flops, A (in), W (weights), O (out)


def tiles(r: Row) -> int:
    """T: whole tiles per image."""
    return int((r["image_w"] // r["tile"]) * (r["image_h"] // r["tile"]))


def tiles_hit(r: Row) -> int:
    """The tiles each Gaussian is tested against: T, or the tiles it overlaps
    (``tiles_per_gaussian``, at most T) when the row gives a non-zero count."""
    per_gaussian = r.get("tiles_per_gaussian") or 0
    return tiles(r) if per_gaussian == 0 else min(per_gaussian, tiles(r))


def kept(ratio: float, x: int) -> int:
    """ceil(ratio * x), the product taken in float64 as the spec writes it."""
    return math.ceil(ratio * x)


def uniform_sampler(r: Row) -> Elements:
    bn = r["B"] * r["N"]
    return bn, r["B"], 0, bn


def frustum_culling(r: Row) -> Elements:
    g = r["G"]
    return 17 * g, 3 * g, 16, kept(r["cull_ratio"], g)


def projection(r: Row) -> Elements:
    g = r["G"]
    return 72 * g, 9 * g, 16, 5 * g


def _intersection(flops_per_tile: int) -> Callable[[Row], Elements]:
    def intersection(r: Row) -> Elements:
        g, t, hit = r["G"], tiles(r), tiles_hit(r)
        return flops_per_tile * g * hit, 5 * g, 4 * t, hit * kept(r["tile_keep_ratio"], g)

    return intersection


aabb_intersection = _intersection(4)
obb_intersection = _intersection(10)


def frustum_culling_projection(r: Row) -> Elements:
    culled = kept(r["cull_ratio"], r["G"])
    stages = (
        frustum_culling(r),
        projection({**r, "G": culled}),
        aabb_intersection({**r, "G": culled}),
        obb_intersection({**r, "G": culled}),
    )
    flops = sum(s[0] for s in stages)
    return flops, sum(s[1] for s in stages), sum(s[2] for s in stages), stages[-1][3]


def _hash_dims(r: Row) -> tuple[int, int, int, int]:
    return r["B"] * r["N"], r["input_dim"], r["num_levels"], r["features_per_level"]


def index_generation(r: Row) -> Elements:
    bn, d, levels, _ = _hash_dims(r)
    return 56 * bn * levels, bn * d, 0, 16 * bn * levels


def hash_lookup(r: Row) -> Elements:
    bn, _, levels, f = _hash_dims(r)
    return 0, 8 * bn * levels, 2 ** r["log2_hashmap_size"] * f * levels, 8 * bn * levels * f


def interpolation(r: Row) -> Elements:
    bn, _, levels, f = _hash_dims(r)
    return 16 * bn * levels * f, 8 * bn * levels * f, 8 * bn * levels, bn * levels * f


def hash_encoding(r: Row) -> Elements:
    bn, d, levels, f = _hash_dims(r)
    return 56 * bn * levels + 16 * bn * levels * f, bn * d, 0, bn * levels * f


def point_arrange(r: Row) -> Elements:
    bn, d = r["B"] * r["N"], r["input_dim"]
    return 4 * bn + 2 * bn * math.log2(bn), bn * d, 0, bn * d


def rff_encoding(r: Row) -> Elements:
    bn, d, nf = r["B"] * r["N"], r["input_dim"], r["num_features"]
    od = 2 * nf if r["use_sin_cos"] else nf
    return 2 * bn * d * nf + bn * od, bn * d, d * nf, bn * od


def mlp_layers(r: Row) -> list[tuple[int, int]]:
    """(fan_in, fan_out) of every layer, skip connections widening their layer's input."""
    in_dim, layers, width, out_dim = r["in_dim"], r["num_layers"], r["layer_width"], r["out_dim"]
    if layers == 1:
        return [(in_dim, out_dim)]
    skips = set(r["skip_connections"] or ())
    hidden = [(width + (in_dim if i in skips else 0), width) for i in range(1, layers - 1)]
    return [(in_dim, width), *hidden, (width, out_dim)]


def mlp_weights(r: Row) -> tuple[int, int]:
    """M (weights) and the bias count."""
    layers = mlp_layers(r)
    bias = sum(fan_out for _, fan_out in layers) if r["use_bias"] else 0
    return sum(fan_in * fan_out for fan_in, fan_out in layers), bias


def mlp(r: Row) -> Elements:
    bn = r["B"] * r["N"]
    m, bias = mlp_weights(r)
    return 2 * bn * m, bn * r["in_dim"], m + bias, bn * r["out_dim"]


def spherical_harmonics(r: Row) -> Elements:
    bn, nb = r["B"] * r["N"], (r["degree"] + 1) ** 2
    return 10 * bn * nb, 3 * bn, 3 * nb, 3 * bn


def _pixelwise(
    flops: int, a: int, w: int, o: int, *, o_per_ray: bool = False, a_per_ray: bool = False
) -> Callable[[Row], Elements]:
    """An op whose costs are multiples of BN (A or O a multiple of B when `a_per_ray`,
    `o_per_ray`)."""

    def op(r: Row) -> Elements:
        bn = r["B"] * r["N"]
        return (
            flops * bn,
            a * (r["B"] if a_per_ray else bn),
            w * bn,
            o * (r["B"] if o_per_ray else bn),
        )

    return op


rgb_renderer = _pixelwise(6, 3, 1, 3, o_per_ray=True)
density_renderer = _pixelwise(1, 1, 1, 1, o_per_ray=True)
gaussian_alpha_blend = _pixelwise(6, 3, 1, 3, o_per_ray=True)
tile_merging = _pixelwise(8, 2, 0, 2)
feature_compute = _pixelwise(12, 4, 0, 3)
gradient_pruning = _pixelwise(4, 3, 0, 3)
row_processing = _pixelwise(16, 5, 0, 5)
row_generation = _pixelwise(8, 5, 0, 5)
decomp_binning = _pixelwise(12, 5, 0, 5)
frm = _pixelwise(4, 3, 0, 3)
bum = _pixelwise(6, 3, 0, 3)
# 3DGS on a GPU (docs/model.md): per visible Gaussian, preprocessCUDA reads 57 and
# writes 21 four-byte values at 300 instructions; per Gaussian-tile pair the key
# duplication writes a 64-bit key and a 32-bit value after reading 5 values per
# Gaussian, and six 8-bit onesweep passes plus the histogram and the range scan
# read 22 and write 18 values; per fragment the blend loop issues 34 instructions
# after loading the Gaussian's 10 values once per pair.
gaussian_preprocess = _pixelwise(600, 57, 0, 21)
tile_duplicate = _pixelwise(20, 5, 0, 3, a_per_ray=True)
radix_sort = _pixelwise(180, 22, 0, 18)
tile_blend = _pixelwise(68, 10, 0, 0, a_per_ray=True)
# one occupancy-grid march step, empty or not: step, position, cell and bit test
# (20); the ray's origin and direction are read once (nerframe.taxonomy)
occupancy_march = _pixelwise(20, 6, 0, 0, a_per_ray=True)
# one parameter's Adam step: moments 3 + 4, denominator 3, update 3; the gradient
# read, the parameter and both moments read and written (nerframe.taxonomy)
adam_update = _pixelwise(13, 1, 3, 3)


def sorting(r: Row) -> Elements:
    bn = r["B"] * r["N"]
    return bn * math.log2(r["N"]), bn, 3 * bn, 3 * bn


def subtile_skip(r: Row) -> Elements:
    g, t, hit = r["G"], tiles(r), tiles_hit(r)
    return 4 * g * hit, 4 * g, 4 * t, hit * kept(r["tile_keep_ratio"], g)


def sensitivity_prediction(r: Row) -> Elements:
    b, bn = r["B"], r["B"] * r["N"]
    patches = -(-b // r["patch_size"] ** 2)
    important = math.floor(r["coarse_prop"] * patches)
    return bn + 72 * important, bn + 3 * b, 0, bn + b


def recovery(r: Row) -> Elements:
    bn, c = r["B"] * r["N"], r["channels"]
    return bn * c, bn * (1 + c), 0, bn * c


def gradient_compute(r: Row) -> Elements:
    bn = r["B"] * r["N"]
    return 16 * bn, 3 * r["B"], 2 * bn, 3 * bn


def rearrangement(r: Row) -> Elements:
    bn = r["B"] * r["N"]
    return bn + math.floor(math.log2(max(r["N"], 2))), 3 * bn, 0, 3 * bn


FORMULAS: dict[str, Callable[[Row], Elements]] = {
    "UniformSampler": uniform_sampler,
    "PDFSampler": uniform_sampler,
    "FrustumCulling": frustum_culling,
    "Projection": projection,
    "AABBIntersection": aabb_intersection,
    "OBBIntersection": obb_intersection,
    "FrustumCullingProjection": frustum_culling_projection,
    "HashEncoding": hash_encoding,
    "IndexGeneration": index_generation,
    "HashLookup": hash_lookup,
    "Interpolation": interpolation,
    "PointArrange": point_arrange,
    "RFFEncoding": rff_encoding,
    "MLP": mlp,
    "SphericalHarmonics": spherical_harmonics,
    "RGBRenderer": rgb_renderer,
    "DensityRenderer": density_renderer,
    "Sorting": sorting,
    "GaussianAlphaBlend": gaussian_alpha_blend,
    "SubtileSkip": subtile_skip,
    "SensitivityPrediction": sensitivity_prediction,
    "Recovery": recovery,
    "TileMerging": tile_merging,
    "FeatureCompute": feature_compute,
    "GradientCompute": gradient_compute,
    "GradientPruning": gradient_pruning,
    "Rearrangement": rearrangement,
    "RowProcessing": row_processing,
    "RowGeneration": row_generation,
    "DecompBinning": decomp_binning,
    "FRM": frm,
    "BUM": bum,
    "GaussianPreprocess": gaussian_preprocess,
    "TileDuplicate": tile_duplicate,
    "RadixSort": radix_sort,
    "TileBlend": tile_blend,
    "OccupancyMarch": occupancy_march,
    "AdamUpdate": adam_update,
}
"""Forward formula of every op type: row -> (flops, A, W, O)."""


def reference_cost(row: Row) -> dict[str, float | int]:
    """Every cost column of one ops row (a mapping of column name to value)."""
    flops, a, w, o = FORMULAS[row["op_type"]](row)
    if row["backward"]:
        if row["op_type"] == "MLP":
            flops = 2 * flops  # input gradient plus weight gradient: 4*BN*M
        a, w, o = o + a, w, a + w
    bits = row["bitwidth"]
    bytes_in, bytes_w, bytes_out = a * bits / 8, w * bits / 8, o * bits / 8
    total = bytes_in + bytes_w + bytes_out
    return {
        "flops": float(flops),
        "elems_in": a,
        "elems_w": w,
        "elems_out": o,
        "bytes_in": bytes_in,
        "bytes_w": bytes_w,
        "bytes_out": bytes_out,
        "bytes_total": total,
        "intensity": flops / total if total else 0.0,
    }

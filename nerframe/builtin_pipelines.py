"""The nine built-in pipelines of ``spec/pipelines.md``, written as data.

Each pipeline is a list of op rows (op type, fixed parameters, backward flag,
bitwidth) and its edges; `pipeline` fills the workload dimensions: ``B`` rays,
``N`` samples per ray and, for the Gaussian-splatting pipelines, ``G``
Gaussians (default ``B*N``, the reference framework's convention; real scenes
hold 1-5 million, so pass ``gaussians=``).

>>> import nerframe
>>> g = nerframe.pipeline("neurex", rays=1024)
>>> g.ops.height, g.batches
(5, 625)
"""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from nerframe.errors import InvalidInputError, NerframeError, did_you_mean
from nerframe.graphs import Graph, graph
from nerframe.taxonomy import op_types

RAY_FRAME = 800 * 800
GAUSSIAN_FRAME = 1280 * 720

_RFF = {"input_dim": 3, "num_features": 128, "use_sin_cos": True}
_HASH = {"input_dim": 3, "num_levels": 16, "features_per_level": 2, "log2_hashmap_size": 19}
_NGP_MLP = {"in_dim": 32, "num_layers": 4, "layer_width": 64, "out_dim": 64}
_TINY_MLP = {"in_dim": 32, "num_layers": 3, "layer_width": 64, "out_dim": 4}
_TILES = {"image_w": 1280, "image_h": 720, "tile": 16, "tile_keep_ratio": 0.1}


@dataclass(frozen=True)
class Op:
    """One row of a built-in pipeline."""

    op_type: str
    params: dict[str, object] | None = None
    backward: bool = False
    bitwidth: int = 16


def _chain(n: int) -> list[tuple[int, int]]:
    return [(i, i + 1) for i in range(n - 1)]


@dataclass(frozen=True)
class Spec:
    """A built-in pipeline: its kind, native accelerators, rows, edges and defaults."""

    kind: str
    native: tuple[str, ...]
    ops: tuple[Op, ...]
    edges: tuple[tuple[int, int], ...]
    feedback: tuple[tuple[int, int], ...] = ()
    samples: int = 64
    frame_pixels: int = RAY_FRAME
    description: str = ""


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
        description="CICERO: hash-grid NeRF with point re-arrangement, 4-bit",
    ),
    "gscore": Spec(
        "inference",
        ("gscore",),
        (
            Op("FrustumCullingProjection", {"cull_ratio": 0.5, **_TILES}),
            Op("SubtileSkip", _TILES),
            Op("SphericalHarmonics", {"degree": 4}),
            Op("Sorting"),
            Op("GaussianAlphaBlend"),
        ),
        ((0, 1), (0, 2), (0, 3), (1, 4), (2, 4), (3, 4)),
        frame_pixels=GAUSSIAN_FRAME,
        description="GSCore: 3D Gaussian splatting inference with subtile skipping",
    ),
    "gaurast": Spec(
        "inference",
        ("gscore",),
        (
            Op("FrustumCullingProjection"),
            Op("SphericalHarmonics", {"degree": 4}),
            Op("Sorting"),
            Op("GaussianAlphaBlend"),
        ),
        ((0, 1), (0, 2), (1, 3), (2, 3)),
        frame_pixels=GAUSSIAN_FRAME,
        description="GauRast: 3D Gaussian splatting inference on a rasteriser",
    ),
    "srender": Spec(
        "inference",
        ("neurex",),
        (
            Op("UniformSampler", bitwidth=4),
            Op("HashEncoding", bitwidth=4),
            Op("MLP", {"in_dim": 32, "num_layers": 4, "layer_width": 64}, bitwidth=4),
            Op("RGBRenderer", bitwidth=4),
            Op("SensitivityPrediction"),
            Op("PointArrange"),
            Op("HashEncoding"),
            Op("MLP", {"in_dim": 32, "num_layers": 4, "layer_width": 64}),
            Op("RGBRenderer"),
            Op("Recovery"),
        ),
        (*_chain(10), (3, 9)),
        description="SRender: coarse 4-bit pass, sensitivity prediction, fine pass, recovery",
    ),
    "gsarch": Spec(
        "training",
        ("gsarch",),
        (
            Op("FrustumCullingProjection"),
            Op("Sorting"),
            Op("FeatureCompute"),
            Op("TileMerging"),
            Op("GaussianAlphaBlend"),
            Op("GaussianAlphaBlend", backward=True),
            Op("GradientCompute", backward=True),
            Op("GradientPruning", backward=True),
            Op("Rearrangement", backward=True),
            Op("TileMerging", backward=True),
        ),
        tuple(_chain(10)),
        feedback=((9, 1),),
        frame_pixels=GAUSSIAN_FRAME,
        description="GSArch: 3D Gaussian splatting training with gradient pruning",
    ),
    "gbu": Spec(
        "training",
        ("gbu",),
        (
            Op("FrustumCullingProjection"),
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
        description="GBU: row-based 3D Gaussian splatting training",
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
    ),
}
"""Every built-in pipeline by name."""


def pipeline(
    name: str,
    rays: int | None = None,
    samples: int | None = None,
    gaussians: int | None = None,
    frame_pixels: int | None = None,
) -> Graph:
    """A built-in pipeline's graph for one workload.

    `rays` is B (default 4096), `samples` N (default 64; ICARUS 192),
    `gaussians` G for primitive-based ops (default ``rays * samples``),
    `frame_pixels` the pixels of one frame (800x800 for ray-based pipelines,
    1280x720 for Gaussian ones).

    >>> pipeline("gscore", gaussians=1_000_000).ops["G"].to_list()[:2]
    [1000000, 1000000]
    """
    spec = PIPELINES.get(name)
    if spec is None:
        raise NerframeError(
            f"unknown pipeline {name!r}{did_you_mean(name, PIPELINES)}; "
            f"built-in pipelines: {', '.join(PIPELINES)}"
        )
    taken = {p for op in spec.ops for p in op_types()[op.op_type].parameters}
    for option, parameter, value in (("samples", "N", samples), ("gaussians", "G", gaussians)):
        if value is not None and parameter not in taken:
            raise InvalidInputError(
                f"pipeline {name!r} has no op that takes {parameter}; "
                f"{option} does not apply to it",
                option,
            )
    b = 4096 if rays is None else rays
    n = spec.samples if samples is None else samples
    dims = {"B": b, "N": n, "G": b * n if gaussians is None else gaussians}
    records = []
    for op in spec.ops:
        takes = op_types()[op.op_type].parameters
        record = {k: v for k, v in dims.items() if k in takes}
        record.update(op.params or {}, op_type=op.op_type, backward=op.backward)
        records.append({**record, "bitwidth": op.bitwidth})
    edges = [(*e, "data") for e in spec.edges] + [(*e, "feedback") for e in spec.feedback]
    pixels = spec.frame_pixels if frame_pixels is None else frame_pixels
    return graph(name, records, edges, frame_pixels=pixels, kind=spec.kind)


def pipelines() -> pl.DataFrame:
    """The built-in pipelines: kind, ops, default workload and total FLOPs.

    >>> pipelines().filter(pipeline="neurex")["total_flops"].item()
    7887388672.0
    """
    from nerframe.costing import costs

    rows = []
    for name, spec in PIPELINES.items():
        g = pipeline(name)
        rows.append(
            {
                "pipeline": name,
                "kind": spec.kind,
                "ops": g.ops.height,
                "rays": g.rays,
                "samples": spec.samples,
                "frame_pixels": g.frame_pixels,
                "native": list(spec.native),
                "total_flops": costs(g.ops)["flops"].sum(),
                "description": spec.description,
            }
        )
    return pl.DataFrame(rows)

"""A small result store for the roofline, chart, query and report tests (and the report
benchmark), built by nerframe itself.

Three operator graphs (short chains with backward ops, a skip edge, branches and
feedback edges) are validated with `nerframe.graph` and written as graph files; three
accelerators are written as nerframe-format accelerator files. `write_store` runs
`nerframe.analyze` on them, so every table of the store (ops, edges, costs, roofline,
schedule, summary, accelerators, modules) is what a real ``nerframe analyze`` writes.

Properties the tests rely on:

- ``gsplat`` cannot run on ``edge_npu``: edge_npu has no module for Projection or
  SubtileSkip (no mapping entry, no module of a preferred type, no HOST module), so
  that pair is ``unmapped``. Every other pair is ``ok``.
- ``edge_npu``'s sampler gives the same figure for area_um2 and power_uw, so the
  accelerators table carries a load warning for it; the others load cleanly.
- Compute-bound ops (hash encodings, the backward MLP) and memory-bound ops (samplers,
  renderers, sorting) both occur.
- On ``server_npu`` the three gsplat branches run concurrently and move more data than
  DRAM delivers within the makespan (DRAM utilisation > 1); hashnerf_train on edge_npu
  stays below 1.

The stores are analysed with split parallelism (an op takes every instance of its
module); a test wanting single-instance ops schedules `graph` itself.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import nerframe

FRAME_PIXELS = 1280 * 720

_MLP = {"in_dim": 32, "num_layers": 3, "layer_width": 64, "out_dim": 64}
_HASHNERF = {"B": 4096, "N": 64}
_SPLAT = {"B": 8192, "N": 32}
_GAUSSIANS = {"G": 200_000}
# Subtile skipping over a 128x64 image (one batch of 8192 pixels) in 16-pixel tiles.
_SUBTILES = {**_GAUSSIANS, "image_w": 128, "image_h": 64, "tile": 16, "tile_keep_ratio": 0.5}
_RFF = {"B": 2048, "N": 128}

# Graph files (the format of `nerframe.read_graph`), by graph name.
GRAPHS: dict[str, dict[str, Any]] = {
    "hashnerf_train": {
        "kind": "training",
        "ops": [
            {"op_type": "UniformSampler", **_HASHNERF},
            {"op_type": "HashEncoding", **_HASHNERF},
            {"op_type": "MLP", **_HASHNERF, **_MLP},
            {"op_type": "MLP", **_HASHNERF, **_MLP},
            {"op_type": "RGBRenderer", **_HASHNERF},
            {"op_type": "MLP", **_HASHNERF, **_MLP, "backward": True},
            {"op_type": "HashEncoding", **_HASHNERF, "backward": True},
        ],
        # 0 -> 1 -> 2 -> 3 -> 4 with a skip 0 -> 4, then the backward pass 4 -> 5 -> 6,
        # whose update feeds the next iteration's encoding.
        "edges": [[0, 1], [1, 2], [2, 3], [3, 4], [0, 4], [4, 5], [5, 6], [6, 1, "feedback"]],
    },
    "gsplat": {
        "kind": "inference",
        "ops": [
            {"op_type": "Projection", **_GAUSSIANS},
            {"op_type": "SphericalHarmonics", **_SPLAT},
            {"op_type": "Sorting", **_SPLAT},
            {"op_type": "SubtileSkip", **_SUBTILES},
            {"op_type": "GaussianAlphaBlend", **_SPLAT},
        ],
        # Projection fans out into three branches that meet at the blend.
        "edges": [[0, 1], [0, 2], [0, 3], [1, 4], [2, 4], [3, 4]],
    },
    "rff_nerf": {
        "kind": "inference",
        "ops": [
            {"op_type": "PDFSampler", **_RFF},
            {"op_type": "RFFEncoding", **_RFF},
            {"op_type": "MLP", **_RFF, **_MLP},
            {"op_type": "DensityRenderer", **_RFF},
        ],
        "edges": [[0, 1], [1, 2], [2, 3], [3, 0, "feedback"]],
    },
}


def _module(
    name: str,
    type_: str,
    count: int,
    throughput: float,
    latency: int,
    area_um2: float,
    power_uw: float,
) -> dict[str, Any]:
    return {
        "name": name,
        "type": type_,
        "count": count,
        "throughput_ops_per_cycle": throughput,
        "latency_cycles": latency,
        "area_um2": area_um2,
        "power_uw": power_uw,
        "memory_kb": 16,
    }


def _accelerator(
    name: str,
    frequency_mhz: float,
    dram_bandwidth_gbps: float,
    modules: list[dict[str, Any]],
    operator_mapping: dict[str, str] | None = None,
) -> dict[str, Any]:
    return {
        "name": name,
        "description": f"synthetic test accelerator {name}",
        "frequency_mhz": frequency_mhz,
        "dram_bandwidth_gbps": dram_bandwidth_gbps,
        "dram_pj_per_byte": 20,
        "technology_nm": 7,
        "sram_um2_per_kb": 1758,
        "modules": modules,
        "sram": [{"name": "global_buffer", "size_kb": 256}],
        "operator_mapping": operator_mapping or {},
    }


# Accelerator files in nerframe's format, by name. Modules are typed by the preference
# table of `nerframe.hardware` (SAMPLING, ENCODING, MLP, VOLUME_RENDERING, OPTIMIZATION).
ACCELERATORS: dict[str, dict[str, Any]] = {
    "edge_npu": _accelerator(
        "edge_npu",
        1000,
        64,
        [
            # area_um2 == power_uw: a load warning ("may be copies of the power figures")
            _module("sampler", "RAY_SAMPLER", 1, 64, 4, 3_000, 3_000),
            _module("encoder", "ENCODING", 2, 256, 6, 50_000, 5_000),
            _module("mlp_array", "MLP", 4, 2048, 10, 400_000, 60_000),
            _module("blender", "VOLUME_RENDERING", 1, 128, 3, 30_000, 4_000),
        ],
        # No SAMPLING, PROJECTION, OPTIMIZATION or HOST module: the samplers and the
        # spherical harmonics are mapped by hand, Projection and SubtileSkip cannot be.
        {
            "UniformSampler": "sampler",
            "PDFSampler": "sampler",
            "SphericalHarmonics": "mlp_array",
        },
    ),
    "server_npu": _accelerator(
        "server_npu",
        1500,
        900,
        [
            _module("sampler", "SAMPLING", 2, 1024, 4, 40_000, 6_000),
            _module("encoder", "ENCODING", 4, 1024, 6, 150_000, 15_000),
            _module("mlp_array", "MLP", 8, 8192, 12, 1_600_000, 250_000),
            _module("blender", "VOLUME_RENDERING", 2, 512, 3, 60_000, 8_000),
            _module("optimizer", "OPTIMIZATION", 2, 2048, 2, 20_000, 2_000),
        ],
        {"SphericalHarmonics": "mlp_array"},
    ),
    "tiny_dsp": _accelerator(
        "tiny_dsp",
        400,
        25.6,
        [
            _module("sampler", "SAMPLING", 1, 16, 2, 8_000, 800),
            _module("encoder", "ENCODING", 1, 64, 4, 12_000, 1_200),
            _module("mlp_array", "MLP", 2, 512, 8, 90_000, 9_000),
            _module("blender", "VOLUME_RENDERING", 1, 32, 2, 8_000, 900),
            _module("optimizer", "OPTIMIZATION", 1, 16, 2, 4_000, 400),
        ],
        {"SphericalHarmonics": "mlp_array"},
    ),
}


def graph(name: str) -> nerframe.Graph:
    """The fixture graph `name`, validated by `nerframe.graph`."""
    spec = GRAPHS[name]
    edges = [tuple(e) for e in spec["edges"]]
    return nerframe.graph(name, spec["ops"], edges, frame_pixels=FRAME_PIXELS, kind=spec["kind"])


def write_inputs(
    folder: str | Path, graphs: tuple[str, ...], accels: tuple[str, ...]
) -> tuple[list[str], list[str]]:
    """Write the graph files and accelerator files into `folder`; return their paths."""
    folder = Path(folder)
    folder.mkdir(parents=True, exist_ok=True)
    graph_paths = []
    for name in graphs:
        graph(name)  # fail here, naming the graph, if a spec is invalid
        document = {"name": name, "frame_pixels": FRAME_PIXELS, **GRAPHS[name]}
        graph_paths.append(_write_json(folder / f"{name}.graph.json", document))
    accel_paths = [_write_json(folder / f"{a}.json", ACCELERATORS[a]) for a in accels]
    return graph_paths, accel_paths


def _write_json(path: Path, document: dict[str, Any]) -> str:
    path.write_text(json.dumps(document, indent=2) + "\n", encoding="utf-8")
    return str(path)


def write_store(
    root: str | Path,
    graphs: tuple[str, ...] = ("hashnerf_train", "gsplat"),
    accels: tuple[str, ...] = ("edge_npu", "server_npu"),
) -> Path:
    """`nerframe.analyze` of every graph × accelerator into `root` (absent or empty);
    ``gsplat`` on ``edge_npu`` is unmapped. The input files go to ``<root>-inputs``
    beside it (the accelerators table records their paths)."""
    root = Path(root)
    graph_paths, accel_paths = write_inputs(root.with_name(f"{root.name}-inputs"), graphs, accels)
    return nerframe.analyze(graph_paths, hardware=accel_paths, output=root, report=False).store

"""A small, self-consistent synthetic result store for the roofline, chart, query and
report tests (and the report benchmark).

Pipelines are short operator chains (optionally with backward ops and a feedback
edge); accelerators are a few modules; schedules are produced by a tiny list
scheduler so that start/end cycles, lanes, busy times and the summary agree with
each other the way a real `nerframe analyze` store does. One pair is unmapped.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from pathlib import Path

import polars as pl

from nerframe import schemas
from nerframe.roofline import PRESETS, roofline, system
from nerframe.store import write_manifest, write_table

# (op_type, backward, B, N, G) per pipeline; edges are given separately.
PIPELINES: dict[str, list[tuple[str, bool, int | None, int | None, int | None]]] = {
    "hashnerf_train": [
        ("UniformSampler", False, 4096, 64, None),
        ("HashEncoding", False, 4096, 64, None),
        ("MLP", False, 4096, 64, None),
        ("MLP", False, 4096, 64, None),
        ("RGBRenderer", False, 4096, 64, None),
        ("MLP", True, 4096, 64, None),
        ("HashEncoding", True, 4096, 64, None),
    ],
    "gsplat": [
        ("Projection", False, None, None, 200_000),
        ("SphericalHarmonics", False, 8192, 32, None),
        ("Sorting", False, 8192, 32, None),
        ("SubtileSkip", False, None, None, 200_000),
        ("GaussianAlphaBlend", False, 8192, 32, None),
    ],
    "rff_nerf": [
        ("PDFSampler", False, 2048, 128, None),
        ("RFFEncoding", False, 2048, 128, None),
        ("MLP", False, 2048, 128, None),
        ("DensityRenderer", False, 2048, 128, None),
    ],
}

EDGES: dict[str, list[tuple[int, int, str]]] = {
    "hashnerf_train": [
        (0, 1, "data"),
        (1, 2, "data"),
        (2, 3, "data"),
        (3, 4, "data"),
        (0, 4, "data"),
        (4, 5, "data"),
        (5, 6, "data"),
        (6, 1, "feedback"),
    ],
    "gsplat": [
        (0, 1, "data"),
        (0, 2, "data"),
        (0, 3, "data"),
        (1, 4, "data"),
        (2, 4, "data"),
        (3, 4, "data"),
    ],
    "rff_nerf": [(0, 1, "data"), (1, 2, "data"), (2, 3, "data"), (3, 0, "feedback")],
}

# FLOPs and input elements per sample (or per Gaussian): MLPs are compute-heavy, hash
# encodings and Gaussian-splatting stages memory-heavy, so both bounds occur.
FLOPS_PER_ELEMENT = {"MLP": 8200, "HashEncoding": 90, "RFFEncoding": 1500}
INPUTS_PER_ELEMENT = {"HashEncoding": 64, "SphericalHarmonics": 48, "Sorting": 16}


@dataclass(frozen=True)
class Module:
    name: str
    type: str
    count: int
    throughput_ops_per_cycle: float
    latency_cycles: int
    area_um2: float
    power_uw: float


@dataclass(frozen=True)
class Accel:
    name: str
    frequency_mhz: float
    dram_bandwidth_gbps: float
    modules: tuple[Module, ...]
    warnings: tuple[str, ...] = ()

    @property
    def peak_tflops(self) -> float:
        per_cycle = sum(m.throughput_ops_per_cycle * m.count for m in self.modules)
        return per_cycle * self.frequency_mhz * 1e6 / 1e12


ACCELS = (
    Accel(
        "edge_npu",
        1000.0,
        64.0,
        (
            Module("sampler", "SAMPLING", 1, 64, 4, 20_000, 3_000),
            Module("encoder", "ENCODING", 2, 256, 6, 50_000, 5_000),
            Module("mlp_array", "MLP", 4, 2048, 10, 400_000, 60_000),
            Module("blender", "VOLUME_RENDERING", 1, 128, 3, 30_000, 4_000),
            Module("optimizer", "OPTIMIZATION", 1, 64, 2, 10_000, 1_000),
        ),
        warnings=("original-format file: throughputs may be MAC counts",),
    ),
    Accel(
        "server_npu",
        1500.0,
        900.0,
        (
            Module("sampler", "SAMPLING", 2, 256, 4, 40_000, 6_000),
            Module("encoder", "ENCODING", 4, 1024, 6, 150_000, 15_000),
            Module("mlp_array", "MLP", 8, 8192, 12, 1_600_000, 250_000),
            Module("blender", "VOLUME_RENDERING", 2, 512, 3, 60_000, 8_000),
            Module("optimizer", "OPTIMIZATION", 2, 256, 2, 20_000, 2_000),
        ),
    ),
    Accel(
        "tiny_dsp",
        400.0,
        25.6,
        (
            Module("sampler", "SAMPLING", 1, 16, 2, 8_000, 800),
            Module("encoder", "ENCODING", 1, 64, 4, 12_000, 1_200),
            Module("mlp_array", "MLP", 2, 512, 8, 90_000, 9_000),
            Module("blender", "VOLUME_RENDERING", 1, 32, 2, 8_000, 900),
            Module("optimizer", "OPTIMIZATION", 1, 16, 2, 4_000, 400),
        ),
    ),
)

MODULE_OF_CATEGORY = {
    "SAMPLING": "sampler",
    "ENCODING": "encoder",
    "COMPUTATION": "mlp_array",
    "BLENDING": "blender",
    "OPTIMIZATION": "optimizer",
}
FRAME_PIXELS = 1280 * 720
DRAM_PJ_PER_BYTE = 20.0


def _ops(graph: str) -> pl.DataFrame:
    rows = []
    for op_id, (op_type, backward, b, n, g) in enumerate(PIPELINES[graph]):
        rows.append(
            {
                "graph": graph,
                "op_id": op_id,
                "op_type": op_type,
                "category": _category(op_type),
                "backward": backward,
                "bitwidth": 16,
                "B": b,
                "N": n,
                "G": g,
            }
            | (
                {"in_dim": 32, "num_layers": 3, "layer_width": 64, "out_dim": 64}
                if op_type == "MLP"
                else {}
            )
        )
    return pl.DataFrame(rows, schema=schemas.OPS)


def _category(op_type: str) -> str:
    from nerframe.catalogue import op_types

    return op_types()[op_type].category


def _costs(ops: pl.DataFrame) -> pl.DataFrame:
    elements = pl.coalesce(pl.col("B") * pl.col("N"), pl.col("G")).cast(pl.Int64)
    op_type = pl.col("op_type").cast(pl.String)
    per_element = op_type.replace_strict(FLOPS_PER_ELEMENT, default=20)
    scale = pl.when(pl.col("backward")).then(2.0).otherwise(1.0)
    costs = ops.with_columns(
        flops=(elements * per_element * scale).cast(pl.Float64),
        elems_in=elements * op_type.replace_strict(INPUTS_PER_ELEMENT, default=3),
        elems_w=pl.when(pl.col("op_type") == "MLP").then(pl.lit(12_480)).otherwise(0),
        elems_out=elements,
    ).with_columns(
        bytes_in=pl.col("elems_in") * 2.0,
        bytes_w=pl.col("elems_w") * 2.0,
        bytes_out=pl.col("elems_out") * 2.0,
    )
    costs = costs.with_columns(
        bytes_total=pl.col("bytes_in") + pl.col("bytes_w") + pl.col("bytes_out")
    ).with_columns(intensity=pl.col("flops") / pl.col("bytes_total"))
    return costs.select(pl.col(c).cast(t) for c, t in schemas.COSTS.items())


def _schedule(costs: pl.DataFrame, edges: pl.DataFrame, accel: Accel) -> pl.DataFrame:
    modules = {m.name: m for m in accel.modules}
    free = {m.name: [0] * m.count for m in accel.modules}
    preds: dict[int, list[int]] = {}
    for src, dst in edges.filter(kind="data").select("src", "dst").iter_rows():
        preds.setdefault(dst, []).append(src)
    bytes_per_cycle = accel.dram_bandwidth_gbps * 1e9 / (accel.frequency_mhz * 1e6)
    end: dict[int, int] = {}
    rows = []
    # op ids are a topological order of the data edges in every fixture pipeline
    for op in costs.sort("op_id").iter_rows(named=True):
        module = modules[MODULE_OF_CATEGORY[op["category"]]]
        # Odd ops use a single instance, so lanes are exercised both ways.
        k = module.count if op["op_id"] % 2 == 0 else 1
        lanes = sorted(range(module.count), key=lambda i: (free[module.name][i], i))[:k]
        first = min(lanes)
        compute = math.ceil(op["flops"] / (module.throughput_ops_per_cycle * k))
        memory = math.ceil(op["bytes_total"] / bytes_per_cycle)
        duration = module.latency_cycles + max(compute, memory)
        ready = max((end[p] for p in preds.get(op["op_id"], [])), default=0)
        start = max(ready, *(free[module.name][i] for i in lanes))
        for i in lanes:
            free[module.name][i] = start + duration
        end[op["op_id"]] = start + duration
        energy = module.power_uw * k * 1e-6 * duration / (accel.frequency_mhz * 1e6)
        rows.append(
            {
                **{c: op[c] for c in ("graph", "op_id", "op_type", "category", "backward")},
                "accelerator": accel.name,
                "module": module.name,
                "instances": k,
                "first_instance": first,
                "start_cycle": start,
                "end_cycle": start + duration,
                "duration_cycles": duration,
                "compute_cycles": compute,
                "memory_cycles": memory,
                "bound": "compute" if compute >= memory else "memory",
                "flops": op["flops"],
                "bytes_total": op["bytes_total"],
                "energy_j": energy + op["bytes_total"] * DRAM_PJ_PER_BYTE * 1e-12,
            }
        )
    return pl.DataFrame(rows, schema=schemas.SCHEDULE)


def _summary(graph: str, accel: Accel, schedule: pl.DataFrame | None, rays: int) -> dict:
    area = sum(m.area_um2 * m.count for m in accel.modules) / 1e6
    base = {
        "graph": graph,
        "accelerator": accel.name,
        "parallelism": "split",
        "pipelined": True,
        "rays": rays,
        "frame_pixels": FRAME_PIXELS,
        "area_mm2": area,
    }
    if schedule is None:
        return base | {
            "status": "unmapped",
            "message": f"unmapped op types: Projection, SubtileSkip; modules of {accel.name}: "
            + ", ".join(m.name for m in accel.modules),
        }
    counts = {m.name: m.count for m in accel.modules}
    busy = (
        schedule.group_by("module")
        .agg((pl.col("duration_cycles") * pl.col("instances")).sum().alias("busy"))
        .with_columns(
            per_instance=pl.col("busy") / pl.col("module").replace_strict(counts, default=1)
        )
        .sort("per_instance", "module", descending=[True, False])
    )
    makespan = schedule["end_cycle"].max()
    interval = math.ceil(busy["per_instance"][0])
    batches = math.ceil(FRAME_PIXELS / rays)
    frame_cycles = makespan + (batches - 1) * interval
    frame_time = frame_cycles / (accel.frequency_mhz * 1e6)
    energy = batches * schedule["energy_j"].sum()
    bytes_per_cycle = accel.dram_bandwidth_gbps * 1e9 / (accel.frequency_mhz * 1e6)
    return base | {
        "status": "ok",
        "batches": batches,
        "makespan_cycles": makespan,
        "interval_cycles": interval,
        "frame_cycles": frame_cycles,
        "frame_time_s": frame_time,
        "fps": 1 / frame_time,
        "energy_per_frame_j": energy,
        "avg_power_w": energy / frame_time,
        "dram_utilization": schedule["bytes_total"].sum() / (makespan * bytes_per_cycle),
        "bottleneck_module": busy["module"][0],
        "total_flops": schedule["flops"].sum(),
        "total_bytes": schedule["bytes_total"].sum(),
    }


def write_store(
    root: str | Path,
    graphs: tuple[str, ...] = ("hashnerf_train", "gsplat"),
    accels: tuple[str, ...] = ("edge_npu", "server_npu"),
) -> Path:
    """Write a store for every graph × accelerator; ``gsplat`` on ``edge_npu`` is unmapped."""
    root = Path(root)
    chosen = [a for a in ACCELS if a.name in accels]
    summaries = []
    for graph in graphs:
        ops = _ops(graph)
        edges = pl.DataFrame(
            [{"graph": graph, "src": s, "dst": d, "kind": k} for s, d, k in EDGES[graph]],
            schema=schemas.EDGES,
        )
        costs = _costs(ops)
        write_table(root, "ops", ops, pipeline=graph)
        write_table(root, "edges", edges, pipeline=graph)
        write_table(root, "costs", costs, pipeline=graph)
        rays = int(ops["B"].max() or 8192)
        for accel in chosen:
            unmapped = graph == "gsplat" and accel.name == "edge_npu"
            schedule = None if unmapped else _schedule(costs, edges, accel)
            summary = pl.DataFrame([_summary(graph, accel, schedule, rays)], schema=schemas.SUMMARY)
            summaries.append(summary)
            write_table(root, "summary", summary, pipeline=graph, hardware=accel.name)
            if schedule is None:
                continue
            write_table(root, "schedule", schedule, pipeline=graph, hardware=accel.name)
        # As `nerframe analyze` does: per pipeline, the presets and every accelerator.
        systems = [*PRESETS.values(), *(system(a) for a in chosen)]
        write_table(root, "roofline", roofline(costs, systems), pipeline=graph)
    accelerators = pl.DataFrame(
        [
            {
                "accelerator": a.name,
                "description": f"synthetic accelerator {a.name}",
                "frequency_mhz": a.frequency_mhz,
                "dram_bandwidth_gbps": a.dram_bandwidth_gbps,
                "dram_pj_per_byte": DRAM_PJ_PER_BYTE,
                "technology_nm": 7.0,
                "sram_um2_per_kb": 1758.0,
                "modules": len(a.modules),
                "peak_tflops": a.peak_tflops,
                "area_mm2": sum(m.area_um2 * m.count for m in a.modules) / 1e6,
                "source_format": "original" if a.warnings else "nerframe",
                "path": f"{a.name}.json",
                "warnings": list(a.warnings),
            }
            for a in chosen
        ],
        schema=schemas.ACCELERATORS,
    )
    write_table(root, "accelerators", accelerators)
    modules = pl.DataFrame(
        [
            {"accelerator": a.name, "module": m.name, "type": m.type, "count": m.count}
            | {
                "throughput_ops_per_cycle": float(m.throughput_ops_per_cycle),
                "latency_cycles": m.latency_cycles,
                "area_um2": m.area_um2,
                "power_uw": m.power_uw,
                "memory_kb": 16.0,
            }
            for a in chosen
            for m in a.modules
        ],
        schema=schemas.MODULES,
    )
    write_table(root, "modules", modules)
    write_manifest(root, {"command": "synthetic test store", "pipelines": list(graphs)})
    return root

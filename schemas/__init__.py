"""Schemas of every nerframe table.

Each table is declared once, as a polars schema; `arrow(name)` gives the same
schema as Arrow (what Parquet files in a result store carry). Enumerated string
columns (``op_type``, ``category``, ``scope``, ``kind``, ``bound``, ``status``) are polars
``Enum`` columns, so they are validated on construction and cost one byte a row.

>>> from nerframe import schemas
>>> schemas.arrow("edges").names
['graph', 'src', 'dst', 'kind']
"""

from __future__ import annotations

from typing import Literal

import polars as pl
import pyarrow as pa

from nerframe.taxonomy import CATEGORIES, OP_TYPES, PARAMETERS, SCOPES

OP_TYPE = pl.Enum(OP_TYPES)
CATEGORY = pl.Enum(CATEGORIES)
SCOPE = pl.Enum(SCOPES)
EDGE_KIND = pl.Enum(["data", "feedback"])
BOUND = pl.Enum(["compute", "memory"])
STATUS = pl.Enum(["ok", "unmapped"])

_IDENTITY = {
    "graph": pl.String(),
    "op_id": pl.Int32(),
    "op_type": OP_TYPE,
    "category": CATEGORY,
    "backward": pl.Boolean(),
}

OPS = pl.Schema(
    {
        **_IDENTITY,
        "bitwidth": pl.Int32(),
        "scope": SCOPE,
        **{p.name: p.dtype for p in PARAMETERS},
    }
)

EDGES = pl.Schema({"graph": pl.String(), "src": pl.Int32(), "dst": pl.Int32(), "kind": EDGE_KIND})

COST_COLUMNS = pl.Schema(
    {
        "flops": pl.Float64(),
        "elems_in": pl.Int64(),
        "elems_w": pl.Int64(),
        "elems_out": pl.Int64(),
        "bytes_in": pl.Float64(),
        "bytes_w": pl.Float64(),
        "bytes_out": pl.Float64(),
        "bytes_total": pl.Float64(),
        "intensity": pl.Float64(),
    }
)

COSTS = pl.Schema({**OPS, **COST_COLUMNS})

ACCELERATORS = pl.Schema(
    {
        "accelerator": pl.String(),
        "kind": pl.String(),
        "description": pl.String(),
        "frequency_mhz": pl.Float64(),
        "dram_bandwidth_gbps": pl.Float64(),
        "dram_pj_per_byte": pl.Float64(),
        "technology_nm": pl.Float64(),
        "sram_um2_per_kb": pl.Float64(),
        "modules": pl.Int64(),
        "peak_tflops": pl.Float64(),
        "area_mm2": pl.Float64(),
        "memory_efficiency": pl.Float64(),
        "source_format": pl.String(),
        "path": pl.String(),
        "warnings": pl.List(pl.String()),
    }
)

MODULES = pl.Schema(
    {
        "accelerator": pl.String(),
        "module": pl.String(),
        "type": pl.String(),
        "count": pl.Int64(),
        "throughput_ops_per_cycle": pl.Float64(),
        "unit": pl.String(),
        "latency_cycles": pl.Int64(),
        "area_um2": pl.Float64(),
        "power_uw": pl.Float64(),
        "power_reference_mhz": pl.Float64(),
        "memory_kb": pl.Float64(),
        "on_chip": pl.Boolean(),
        "efficiency": pl.Float64(),
    }
)

SCHEDULE = pl.Schema(
    {
        **_IDENTITY,
        "scope": SCOPE,
        "accelerator": pl.String(),
        "module": pl.String(),
        "instances": pl.Int64(),
        "first_instance": pl.Int64(),
        "start_cycle": pl.Int64(),
        "end_cycle": pl.Int64(),
        "duration_cycles": pl.Int64(),
        "compute_cycles": pl.Int64(),
        "memory_cycles": pl.Int64(),
        "bound": BOUND,
        "flops": pl.Float64(),
        "bytes_total": pl.Float64(),
        "energy_j": pl.Float64(),
        # Share of a systolic array's MAC slots the op fills; null off an array.
        "array_utilization": pl.Float64(),
    }
)

MODULE_BUSY = pl.Schema(
    {
        "graph": pl.String(),
        "accelerator": pl.String(),
        "module": pl.String(),
        "count": pl.Int64(),
        # Busy cycles per instance in one batch, as the scheduler's interval counts them.
        "busy_cycles": pl.Int64(),
    }
)

SUMMARY = pl.Schema(
    {
        "graph": pl.String(),
        "accelerator": pl.String(),
        "status": STATUS,
        "message": pl.String(),
        "parallelism": pl.String(),
        "pipelined": pl.Boolean(),
        "rays": pl.Int64(),
        "frame_pixels": pl.Int64(),
        "batches": pl.Int64(),
        "pre_cycles": pl.Int64(),
        "makespan_cycles": pl.Int64(),
        "interval_cycles": pl.Int64(),
        "post_cycles": pl.Int64(),
        "frame_cycles": pl.Int64(),
        "frame_time_s": pl.Float64(),
        "fps": pl.Float64(),
        "energy_per_frame_j": pl.Float64(),
        "avg_power_w": pl.Float64(),
        "area_mm2": pl.Float64(),
        "dram_utilization": pl.Float64(),
        "bottleneck_module": pl.String(),
        # every op once: one batch's ops plus the frame ops (scope frame) once
        "total_flops": pl.Float64(),
        "total_bytes": pl.Float64(),
        # one frame: frame ops once plus batches x batch ops (`frame_total`)
        "frame_flops": pl.Float64(),
        "frame_bytes": pl.Float64(),
    }
)

ROOFLINE = pl.Schema(
    {
        **_IDENTITY,
        "system": pl.String(),
        "peak_tflops": pl.Float64(),
        "bandwidth_gbps": pl.Float64(),
        "flops": pl.Float64(),
        "bytes_total": pl.Float64(),
        "intensity": pl.Float64(),
        "t_compute_s": pl.Float64(),
        "t_memory_s": pl.Float64(),
        "time_s": pl.Float64(),
        "attainable_flops_per_s": pl.Float64(),
        "bound": BOUND,
        "ridge": pl.Float64(),
    }
)

# A traced op's measured time against its roofline time (nerframe.trace.compare).
MEASURED = pl.Schema(
    {
        "graph": pl.String(),
        "op_id": pl.Int32(),
        "op_type": OP_TYPE,
        "path": pl.String(),
        "system": pl.String(),
        "measured_s": pl.Float64(),
        "predicted_s": pl.Float64(),
        "ratio": pl.Float64(),
        "log_error": pl.Float64(),
        "bound": BOUND,
        "approximate": pl.String(),
    }
)

# A sweep's rows (nerframe.sweeps). Their columns: ``graph`` and ``accelerator``,
# the workload axes, ``config`` (the variant's index in the hardware grid) and the
# grid's axes (both vary by sweep), ``batches``, then the results below,
# ``bottleneck_module`` and ``feasible``. The label columns are Enums of the sweep's
# own names; the axes take their values' types.
SWEEP_LABELS = ("graph", "accelerator", "config", "batches", "bottleneck_module", "feasible")
# Cycle counts of a frame: always given.
SWEEP_CYCLES = pl.Schema(
    {
        "pre_cycles": pl.Int64(),
        "makespan_cycles": pl.Int64(),
        "interval_cycles": pl.Int64(),
        "post_cycles": pl.Int64(),
        "frame_cycles": pl.Int64(),
    }
)
# Frame figures: null where a figure has no value (fps of a zero-time frame, an
# area that is not published); the only columns of a sweep part that may be null.
SWEEP_FIGURES = pl.Schema(
    {
        "frame_time_s": pl.Float64(),
        "fps": pl.Float64(),
        "energy_per_frame_j": pl.Float64(),
        "avg_power_w": pl.Float64(),
        "dram_utilization": pl.Float64(),
        "area_mm2": pl.Float64(),
        "peak_tflops": pl.Float64(),
    }
)
# The figures a constraint bounds or an objective ranks by, and which way is better.
SWEEP_OBJECTIVES: dict[str, Literal["min", "max"]] = {
    "fps": "max",
    "frame_time_s": "min",
    "energy_per_frame_j": "min",
    "avg_power_w": "min",
    "area_mm2": "min",
    "dram_utilization": "max",
    "peak_tflops": "max",
    "frame_cycles": "min",
}

TABLES: dict[str, pl.Schema] = {
    "ops": OPS,
    "edges": EDGES,
    "costs": COSTS,
    "accelerators": ACCELERATORS,
    "modules": MODULES,
    "module_busy": MODULE_BUSY,
    "schedule": SCHEDULE,
    "summary": SUMMARY,
    "roofline": ROOFLINE,
    "measured": MEASURED,
}


def arrow(name: str) -> pa.Schema:
    """The Arrow schema of table `name` (one of `TABLES`)."""
    return pl.DataFrame(schema=TABLES[name]).to_arrow().schema


def empty(name: str) -> pl.DataFrame:
    """An empty DataFrame of table `name`."""
    return pl.DataFrame(schema=TABLES[name])

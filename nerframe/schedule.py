"""Scheduling a graph on an accelerator: per-op schedule and per-frame PPA.

Maps every op to a module, list-schedules one batch with the numba kernel
(`nerframe.kernels.schedule`), and turns the batch into frame figures:
``frame_cycles = makespan + (batches - 1) * interval`` when batches stream
through the modules (``pipelined``), else ``batches * makespan``. For a
training pipeline a "frame" is one training iteration over ``frame_pixels``
rays, so fps reads as iterations per second.

>>> import nerframe
>>> s = nerframe.schedule(nerframe.pipeline("neurex"), "neurex")
>>> s.summary["status"].item(), s.schedule.height
('ok', 5)
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import polars as pl

from nerframe.costs import costs
from nerframe.errors import NerframeError
from nerframe.graph import Graph, topological_order
from nerframe.hardware import Accelerator, accelerator, map_operators
from nerframe.kernels.schedule import csr, schedule_configs
from nerframe.schemas import SCHEDULE, SUMMARY

PARALLELISM = ("split", "instance")


@dataclass(frozen=True)
class Schedule:
    """One graph on one accelerator: `schedule` (one row per op) and `summary` (one row)."""

    schedule: pl.DataFrame
    summary: pl.DataFrame


def schedule(
    graph: Graph,
    accel: Accelerator | str,
    parallelism: str = "split",
    pipelined: bool = True,
) -> Schedule:
    """List-schedule one batch of `graph` on `accel` and derive the frame figures.

    `parallelism` is ``"split"`` (an op takes every instance of its module) or
    ``"instance"`` (an op takes one; batches spread over the instances).
    Raises `NerframeError` when an op cannot be mapped to a module.
    """
    if parallelism not in PARALLELISM:
        raise NerframeError(f"unknown parallelism {parallelism!r}; choose split or instance")
    accel = accelerator(accel) if isinstance(accel, str) else accel
    table = costs(graph.ops)
    module = map_operators(table["op_type"], table["backward"], accel)
    src, dst = graph.data_edges()
    pred_ptr, pred_idx, succ_ptr, succ_idx = csr(graph.ops.height, src, dst)
    modules = accel.modules
    run = schedule_configs(
        pred_ptr,
        pred_idx,
        succ_ptr,
        succ_idx,
        topological_order(graph),
        module,
        table["flops"].to_numpy(),
        table["bytes_total"].to_numpy(),
        module_count=np.array([[m.count for m in modules]], np.int64),
        module_throughput=np.array([[m.throughput_ops_per_cycle for m in modules]]),
        module_latency=np.array([[m.latency_cycles for m in modules]], np.int64),
        module_power_uw=np.array([[m.power_uw for m in modules]]),
        frequency_mhz=np.array([accel.frequency_mhz]),
        dram_bandwidth_gbps=np.array([accel.dram_bandwidth_gbps]),
        dram_pj_per_byte=np.array([accel.dram_pj_per_byte]),
        split=parallelism == "split",
        keep_ops=True,
    )
    names = np.array([m.name for m in modules])
    ops = table.select(*SCHEDULE.names()[:5], "flops", "bytes_total").with_columns(
        accelerator=pl.lit(accel.name),
        module=pl.Series(names[module]),
        instances=run.instances[0],
        first_instance=run.first_instance[0],
        start_cycle=run.start[0],
        end_cycle=run.end[0],
        duration_cycles=run.duration[0],
        compute_cycles=run.compute_cycles[0],
        memory_cycles=run.memory_cycles[0],
        bound=pl.Series(
            np.where(run.compute_cycles[0] >= run.memory_cycles[0], "compute", "memory")
        ),
        energy_j=run.energy_op[0],
    )
    ops = ops.select(SCHEDULE.names()).cast(SCHEDULE)
    makespan, interval = int(run.makespan[0]), int(run.interval[0])
    batches = graph.batches
    frame_cycles = makespan + (batches - 1) * interval if pipelined else batches * makespan
    frame_time = frame_cycles / (accel.frequency_mhz * 1e6)
    energy = batches * float(run.energy_j[0])
    total_bytes = float(table["bytes_total"].sum())
    summary = {
        **_pair(graph, accel, parallelism, pipelined),
        "status": "ok",
        "batches": batches,
        "makespan_cycles": makespan,
        "interval_cycles": interval,
        "frame_cycles": frame_cycles,
        "frame_time_s": frame_time,
        "fps": 1 / frame_time if frame_time > 0 else None,
        "energy_per_frame_j": energy,
        "avg_power_w": energy / frame_time if frame_time > 0 else None,
        "dram_utilization": total_bytes / (makespan * accel.bytes_per_cycle) if makespan else 0.0,
        "bottleneck_module": modules[int(run.bottleneck[0])].name,
        "total_flops": float(table["flops"].sum()),
        "total_bytes": total_bytes,
    }
    return Schedule(ops, pl.DataFrame([summary], schema=SUMMARY))


def unmapped_summary(
    graph: Graph, accel: Accelerator, message: str, parallelism: str, pipelined: bool
) -> pl.DataFrame:
    """The summary row of a pair that cannot run: status ``unmapped``, no numbers."""
    row = {**_pair(graph, accel, parallelism, pipelined), "status": "unmapped", "message": message}
    return pl.DataFrame([row], schema=SUMMARY)


def _pair(graph: Graph, accel: Accelerator, parallelism: str, pipelined: bool) -> dict:
    return {
        "graph": graph.name,
        "accelerator": accel.name,
        "parallelism": parallelism,
        "pipelined": pipelined,
        "rays": graph.rays,
        "frame_pixels": graph.frame_pixels,
        "area_mm2": accel.area_mm2,
    }

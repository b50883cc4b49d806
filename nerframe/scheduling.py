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

from nerframe.costing import costs
from nerframe.errors import NerframeError
from nerframe.graphs import Graph, dag_of
from nerframe.hardware import Accelerator, accelerator, map_operators
from nerframe.kernels.dag import Dag
from nerframe.kernels.schedule import ConfigArrays, OpArrays, ScheduleResult, schedule_configs
from nerframe.schemas import SCHEDULE, SUMMARY

PARALLELISM = ("split", "instance")


@dataclass(frozen=True)
class Schedule:
    """One graph on one accelerator: `schedule` (one row per op) and `summary` (one row)."""

    schedule: pl.DataFrame
    summary: pl.DataFrame


@dataclass(frozen=True)
class Configurations:
    """C variants of one accelerator, as the scheduler kernel takes them.

    Module arrays have shape (C, M) in the accelerator's module order; the
    others shape (C,). `Configurations.of(accel)` is the accelerator itself (C = 1).
    """

    module_count: np.ndarray
    module_throughput: np.ndarray
    module_latency: np.ndarray
    module_power_uw: np.ndarray
    module_area_um2: np.ndarray
    frequency_mhz: np.ndarray
    dram_bandwidth_gbps: np.ndarray
    dram_pj_per_byte: np.ndarray

    @classmethod
    def of(cls, accel: Accelerator) -> Configurations:
        """The accelerator as a batch of one configuration."""
        modules = accel.modules
        return cls(
            module_count=np.array([[m.count for m in modules]], np.int64),
            module_throughput=np.array([[m.throughput_ops_per_cycle for m in modules]]),
            module_latency=np.array([[m.latency_cycles for m in modules]], np.int64),
            module_power_uw=np.array([[m.power_uw for m in modules]]),
            module_area_um2=np.array([[m.area_um2 for m in modules]]),
            frequency_mhz=np.array([accel.frequency_mhz]),
            dram_bandwidth_gbps=np.array([accel.dram_bandwidth_gbps]),
            dram_pj_per_byte=np.array([accel.dram_pj_per_byte]),
        )

    @property
    def bytes_per_cycle(self) -> np.ndarray:
        """DRAM bytes deliverable per clock cycle, per configuration."""
        return self.dram_bandwidth_gbps * 1e9 / (self.frequency_mhz * 1e6)


@dataclass(frozen=True)
class Mapped:
    """A graph mapped onto an accelerator's modules, ready for the kernel."""

    costs: pl.DataFrame
    module: np.ndarray
    dag: Dag

    @classmethod
    def of(cls, graph: Graph, accel: Accelerator) -> Mapped:
        """Costs, module of every op, data-edge CSR and a topological order.

        Raises `nerframe.UnmappedError` when an op has no module.
        """
        table = costs(graph.ops)
        module = map_operators(table["op_type"], table["backward"], accel)
        return cls(table, module, dag_of(graph))

    def run(self, configs: Configurations, parallelism: str, keep_ops: bool) -> ScheduleResult:
        """List-schedule one batch on every configuration."""
        if parallelism not in PARALLELISM:
            raise NerframeError(f"unknown parallelism {parallelism!r}; choose split or instance")
        count = configs.module_count
        return schedule_configs(
            self.dag,
            OpArrays(
                self.module,
                self.costs["flops"].to_numpy(),
                self.costs["bytes_total"].to_numpy(),
            ),
            ConfigArrays(
                count=count,
                instances=count if parallelism == "split" else np.ones_like(count),
                throughput=configs.module_throughput,
                latency=configs.module_latency,
                power_uw=configs.module_power_uw,
                frequency_mhz=configs.frequency_mhz,
                dram_bandwidth_gbps=configs.dram_bandwidth_gbps,
                dram_pj_per_byte=configs.dram_pj_per_byte,
            ),
            keep_ops=keep_ops,
        )


def frame_figures(
    run: ScheduleResult,
    configs: Configurations,
    batches: int,
    pipelined: bool,
    total_bytes: float,
) -> dict[str, np.ndarray]:
    """Per-configuration frame figures from per-batch ones (summary columns).

    Figures that need a non-zero frame time (fps, power) are NaN without one.
    """
    makespan, interval = run.makespan, run.interval
    frame_cycles = makespan + (batches - 1) * interval if pipelined else batches * makespan
    frame_time = frame_cycles / (configs.frequency_mhz * 1e6)
    energy = batches * run.energy_j
    with np.errstate(divide="ignore", invalid="ignore"):
        fps = np.where(frame_time > 0, 1 / frame_time, np.nan)
        power = np.where(frame_time > 0, energy / frame_time, np.nan)
        utilization = np.where(
            makespan > 0, total_bytes / (makespan * configs.bytes_per_cycle), 0.0
        )
    return {
        "batches": np.full(makespan.shape, batches, np.int64),
        "makespan_cycles": makespan,
        "interval_cycles": interval,
        "frame_cycles": frame_cycles,
        "frame_time_s": frame_time,
        "fps": fps,
        "energy_per_frame_j": energy,
        "avg_power_w": power,
        "dram_utilization": utilization,
    }


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
    accel = accelerator(accel) if isinstance(accel, str) else accel
    mapped = Mapped.of(graph, accel)
    configs = Configurations.of(accel)
    run = mapped.run(configs, parallelism, keep_ops=True)
    table = mapped.costs
    names = np.array([m.name for m in accel.modules])
    ops = table.select(*SCHEDULE.names()[:5], "flops", "bytes_total").with_columns(
        accelerator=pl.lit(accel.name),
        module=pl.Series(names[mapped.module]),
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
    total_bytes = float(table["bytes_total"].sum())
    figures = frame_figures(run, configs, graph.batches, pipelined, total_bytes)
    row = {
        **_pair(graph, accel, parallelism, pipelined),
        "status": "ok",
        **{name: values[0].item() for name, values in figures.items()},
        "bottleneck_module": names[run.bottleneck[0]],
        "total_flops": float(table["flops"].sum()),
        "total_bytes": total_bytes,
    }
    summary = pl.DataFrame([row], schema=SUMMARY).fill_nan(None)
    return Schedule(ops.select(SCHEDULE.names()).cast(SCHEDULE), summary)


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
        "message": None,
        "parallelism": parallelism,
        "pipelined": pipelined,
        "rays": graph.rays,
        "frame_pixels": graph.frame_pixels,
        "area_mm2": accel.area_mm2,
    }

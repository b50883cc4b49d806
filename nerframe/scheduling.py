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

from nerframe.builtin_pipelines import pipeline
from nerframe.costing import costs
from nerframe.errors import InvalidInputError, NerframeError
from nerframe.graphs import Graph, dag_of
from nerframe.hardware import Accelerator, accelerator, map_operators
from nerframe.kernels.dag import Dag
from nerframe.kernels.schedule import ConfigArrays, OpArrays, ScheduleResult, schedule_configs
from nerframe.schemas import MODULE_BUSY, SCHEDULE, SUMMARY

PARALLELISM = ("split", "instance")


@dataclass(frozen=True)
class Schedule:
    """One graph on one accelerator: `schedule` (one row per op) and `summary` (one row).

    Its repr is one line: graph, accelerator, op count and fps.
    """

    schedule: pl.DataFrame
    summary: pl.DataFrame

    def __repr__(self) -> str:
        row = self.summary.row(0, named=True)
        return (
            f"Schedule(graph={row['graph']!r}, accelerator={row['accelerator']!r}, "
            f"ops={self.schedule.height}, fps={_fps(row['fps'])})"
        )


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
        for m in modules:
            for field in ("count", "latency_cycles"):
                value = getattr(m, field)
                if not -(2**62) < value < 2**62:
                    raise InvalidInputError(
                        f"{accel.name}: module {m.name}: {field} {value} is out of range",
                        field,
                    )
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
    module_names: tuple[str, ...]

    @classmethod
    def of(cls, graph: Graph, accel: Accelerator) -> Mapped:
        """Costs, module of every op, data-edge CSR and a topological order.

        Raises `nerframe.UnmappedError` when an op has no module.
        """
        table = costs(graph.ops)
        module = map_operators(table["op_type"], table["backward"], accel)
        return cls(table, module, dag_of(graph), tuple(m.name for m in accel.modules))

    def run(self, configs: Configurations, parallelism: str, keep_ops: bool) -> ScheduleResult:
        """List-schedule one batch on every configuration."""
        if parallelism not in PARALLELISM:
            raise NerframeError(f"unknown parallelism {parallelism!r}; choose split or instance")
        count = configs.module_count
        try:
            return self._run(configs, count, parallelism, keep_ops)
        except InvalidInputError as e:
            raise self._named(e, count.shape[0]) from None

    def _named(self, e: InvalidInputError, n_configs: int) -> InvalidInputError:
        # The kernel names ops, modules and configurations by index; say which.
        message = str(e)
        if e.op is not None:
            op_type = self.costs["op_type"][e.op]
            message = message.replace(f"op {e.op} ", f"op {e.op} ({op_type}) ", 1)
        if e.module is not None:
            name = self.module_names[e.module]
            message = message.replace(f"module {e.module} ", f"module {name} ", 1)
        if n_configs == 1:
            message = message.replace(" of configuration 0", "", 1)
        return InvalidInputError(
            message, e.culprit, op=e.op, module=e.module, configuration=e.configuration
        )

    def _run(
        self, configs: Configurations, count: np.ndarray, parallelism: str, keep_ops: bool
    ) -> ScheduleResult:
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


def _fps(value: float | None) -> str:
    return "None" if value is None else f"{value:.3g}"


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
    # Frame cycles are int64; the float estimate is exact enough to see overflow.
    longest = float((makespan + np.maximum(batches - 1, 0) * interval.astype(float)).max(initial=0))
    if max(batches, 1) * float(makespan.max(initial=0)) >= 2**62 or longest >= 2**62:
        raise InvalidInputError(
            f"a frame of {batches} batches would take about {longest:.3g} cycles, "
            "beyond the int64 range; lower frame_pixels",
            "frame_pixels",
        )
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
    graph: Graph | str,
    accel: Accelerator | str,
    parallelism: str = "split",
    pipelined: bool = True,
) -> Schedule:
    """List-schedule one batch of `graph` on `accel` and derive the frame figures.

    `graph` is a `Graph` or the name of a built-in pipeline (default workload);
    `accel` an `Accelerator`, a built-in name or an accelerator file.

    >>> schedule("neurex", "neurex")
    Schedule(graph='neurex', accelerator='neurex', ops=5, fps=0.138)

    `parallelism` is ``"split"`` (an op takes every instance of its module) or
    ``"instance"`` (an op takes one; batches spread over the instances).
    Raises `NerframeError` when an op cannot be mapped to a module.
    """
    if isinstance(graph, str):
        graph = pipeline(graph)
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


def module_busy(result: Schedule, accel: Accelerator) -> pl.DataFrame:
    """Busy cycles per instance of every module of `accel` in one batch (`MODULE_BUSY`).

    An op keeps ``instances`` of its module's ``count`` instances busy for its
    duration; a module's busy cycles per instance are ``ceil(sum(duration *
    instances) / count)``, the figure whose maximum is the summary's interval.

    >>> s = schedule("neurex", "neurex")
    >>> busy = module_busy(s, accelerator("neurex"))
    >>> busy["busy_cycles"].max() == s.summary["interval_cycles"].item()
    True
    """
    counts = pl.DataFrame(
        {"module": [m.name for m in accel.modules], "count": [m.count for m in accel.modules]},
        schema={"module": pl.String(), "count": pl.Int64()},
    )
    used = result.schedule.group_by("module").agg(
        instance_cycles=(pl.col("duration_cycles") * pl.col("instances")).sum()
    )
    return (
        counts.join(used, on="module", how="left", maintain_order="left")
        .select(
            graph=pl.lit(result.summary["graph"].item()),
            accelerator=pl.lit(accel.name),
            module="module",
            count="count",
            busy_cycles=(pl.col("instance_cycles").fill_null(0) + pl.col("count") - 1)
            // pl.col("count"),
        )
        .cast(MODULE_BUSY)
    )


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

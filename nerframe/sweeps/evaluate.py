"""Design-space sweeps: graphs × workload points × accelerator variants, in bulk.

A sweep (a `nerframe.sweeps.spec.SweepSpec`) is evaluated as an outer loop
over graphs and workload points (each one costed and mapped graph) with the
hardware grid batched through the scheduler kernel inside, in chunks of
``chunk_size`` configurations: the grid is never materialised, and no per-op ×
per-configuration table either. Each row holds the graph, the workload axes,
``config`` (the variant's index in the hardware grid), the hardware axes, the
frame figures of `nerframe.schedule`'s summary and ``feasible`` (every
constraint met, checked in a numba kernel).

With `output`, every chunk is a task that writes its own Parquet part of a
result store (`nerframe.sweeps.store`); an interrupted sweep resumes where it
stopped, and ``backend="dask"`` runs the tasks on a Dask cluster
(`nerframe.sweeps.dask`).

>>> import nerframe
>>> grid = {"frequency_mhz": [500, 1000], "systolic_array_32x32.count": [1, 2]}
>>> result = nerframe.sweep(nerframe.pipeline("neurex"), "neurex", grid)
>>> result.select("frequency_mhz", "systolic_array_32x32.count", "bottleneck_module").rows()[:2]
[(500.0, 1, 'systolic_array_32x32'), (500.0, 2, 'systolic_array_32x32')]
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from dataclasses import replace
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from nerframe.accelerator_model import Accelerator
from nerframe.errors import InvalidInputError
from nerframe.graphs import Graph
from nerframe.kernels.dag import Dag, dag
from nerframe.kernels.frames import DRAM
from nerframe.kernels.hardware import Hardware
from nerframe.kernels.schedule_inputs import OpArrays
from nerframe.kernels.sweep_chunk import (
    AREA,
    BANDWIDTH,
    CONSTRAINED,
    COUNT,
    FLOAT_ROWS,
    FREQUENCY,
    INT_ROWS,
    LATENCY,
    PJ_PER_BYTE,
    POWER,
    THROUGHPUT,
    Grid,
    evaluate_chunk,
    result_matrices,
)
from nerframe.progress import Progress
from nerframe.scheduling import DRAM_NAME, Configurations, Mapped, overlaps, reserved
from nerframe.schemas import SWEEP_CYCLES, SWEEP_FIGURES
from nerframe.sweeps.spec import (
    ACCELERATOR_FIELDS,
    SweepSpec,
    hardware_field,
)

Matrices = tuple[np.ndarray, np.ndarray, np.ndarray]
"""The fused kernel's int64 and float64 result rows and feasibility mask of one task."""
Helper = Callable[[Callable[[], None]], None]
"""Runs a function on another thread when that thread is free (see `evaluate_chunk`)."""


class Task(NamedTuple):
    """One chunk of a sweep: rows ``start..stop-1`` of the hardware grid of one
    workload point of one graph; `number` orders the tasks (and names their files)."""

    number: int
    graph: int
    point: int
    start: int
    stop: int


def tasks(spec: SweepSpec) -> Iterator[Task]:
    """The sweep's chunks in row order: graphs, then workload points, then the grid."""
    number = 0
    for g in range(len(spec.graphs)):
        for p in range(spec.workload_points):
            for start in range(0, spec.hardware_points, spec.chunk_size):
                yield Task(number, g, p, start, min(start + spec.chunk_size, spec.hardware_points))
                number += 1


class _Prepared(NamedTuple):
    """A graph at one workload point, ready for the fused kernel."""

    graph: Graph
    mapped: Mapped
    dags: tuple[Dag, Dag, Dag]
    ops: tuple[OpArrays, OpArrays, OpArrays]
    nbytes: np.ndarray  # (2, 3): DRAM and SRAM bytes of each phase
    checked: bool  # every configuration of the grid passes the scheduler's checks
    name: int  # the graph's index in the rows' graph Enum


class Evaluator:
    """Evaluates the tasks of one spec with the fused chunk kernel
    (`nerframe.kernels.sweep_chunk`); keeps the graph of the last workload point,
    so consecutive tasks of one point cost and map it once. Not thread-safe: one
    evaluator per thread."""

    def __init__(self, spec: SweepSpec) -> None:
        self.spec = spec
        self.base = Configurations.of(spec.hardware)
        reserved(spec.hardware)
        self.modules = [m.name for m in spec.hardware.modules]
        # Names as Enums (graphs in lexical order, so they sort as strings do): cheaper
        # to build and to write than strings, and they read back from Parquet as Enums.
        first = next(spec.points())
        names = [spec.graph_at(i, first).name for i in range(len(spec.graphs))]
        self._graphs = pl.Series(sorted(set(names)), dtype=pl.Enum(sorted(set(names))))
        self._accelerator = pl.Series([spec.hardware.name], dtype=pl.Enum([spec.hardware.name]))
        # The modules, then the DRAM (where it sets the batch interval: code DRAM, -1).
        bottlenecks = [*self.modules, DRAM_NAME]
        self._bottlenecks = pl.Series(bottlenecks, dtype=pl.Enum(bottlenecks))
        self._points = list(spec.points())
        # Axes of names (scenes) as Enums of their values in lexical order, as graphs.
        self._kinds = {
            name: pl.Enum(sorted(map(str, values)))
            for name, values in spec.workload.items()
            if any(isinstance(v, str) for v in values)
        }
        self._grid = self._kernel_grid()
        self._split = spec.parallelism == "split"
        counts = self._extreme().module_count[0]
        self._inst_base = np.zeros(counts.size + 1, np.int64)
        if not self._split:
            np.cumsum(counts, out=self._inst_base[1:])
        self._constraint = np.array([CONSTRAINED.index(n) for n in spec.constraints], np.int64)
        bounds = np.array(list(spec.constraints.values()), np.float64).reshape(-1, 2)
        self._low, self._high = np.ascontiguousarray(bounds.T)
        self._key: tuple[int, int] | None = None
        self._prepared: _Prepared | None = None

    def mapped(self, graph: int, point: int) -> tuple[Graph, Mapped]:
        """The graph of task coordinates (graph, point), costed and mapped."""
        prepared = self._prepare(graph, point)
        return prepared.graph, prepared.mapped

    def _prepare(self, graph: int, point: int) -> _Prepared:
        if self._key != (graph, point) or self._prepared is None:
            g = self.spec.graph_at(graph, self._points[point])
            mapped = Mapped.of(g, self.spec.hardware)
            parts = [np.zeros(0, np.int64) if p is None else p.ops for p in mapped.parts]
            dags = [dag(0, [], []) if p is None else p.dag for p in mapped.parts]
            ops = [mapped.op_arrays(o) for o in parts]
            try:  # the grid's worst configuration is schedulable, hence all of them
                mapped.run(self._extreme(), self.spec.parallelism, keep_ops=False)
                checked = True
            except InvalidInputError:
                checked = False
            traffic = (mapped.dram_bytes, mapped.sram_bytes)
            per_phase = [[per_op[o].sum() for o in parts] for per_op in traffic]
            nbytes = np.array(per_phase, np.float64)
            self._prepared = _Prepared(
                g,
                mapped,
                (dags[0], dags[1], dags[2]),
                (ops[0], ops[1], ops[2]),
                nbytes,
                checked,
                self._graphs.to_list().index(g.name),
            )
            self._key = (graph, point)
        return self._prepared

    def __call__(
        self, task: Task, out: Matrices | None = None, helper: Helper | None = None
    ) -> pl.DataFrame:
        """The rows of one task, computed into `out` (fresh `result_matrices` by default),
        with the help of `helper` (see `evaluate_chunk`). The columns share memory with
        `out`: reuse it only once the rows are dropped."""
        spec = self.spec
        prepared = self._prepare(task.graph, task.point)
        ints, floats, feasible = self.kernel(task, out, helper)
        size = task.stop - task.start
        columns: dict[str, Any] = {
            "graph": self._graphs.new_from_index(prepared.name, size),
            "accelerator": self._accelerator.new_from_index(0, size),
        }
        for name, value in self._points[task.point].items():
            kind = self._kinds.get(name) or (pl.Int64 if isinstance(value, int) else pl.Float64)
            columns[name] = pl.Series(name, [value], kind).new_from_index(0, size)
        columns["config"] = ints[INT_ROWS.index("config")]
        for a, (name, values) in enumerate(spec.grid.items()):
            integer = values.dtype == np.int64
            columns[name] = ints[len(INT_ROWS) + a] if integer else floats[len(FLOAT_ROWS) + a]
        batches = pl.Series("batches", [prepared.graph.batches], pl.Int64)
        columns["batches"] = batches.new_from_index(0, size)
        for name in SWEEP_CYCLES:  # the kernel's rows by name, in the schema's order
            columns[name] = ints[INT_ROWS.index(name)]
        for name in SWEEP_FIGURES:
            # NaN is a figure without a value: fps of a zero-time frame, an area
            # that is not published.
            columns[name] = pl.Series(name, floats[FLOAT_ROWS.index(name)], nan_to_null=True)
        bottleneck = ints[INT_ROWS.index("bottleneck")]
        bottleneck[bottleneck == DRAM] = len(self.modules)
        columns["bottleneck_module"] = self._bottlenecks.gather(bottleneck)
        columns["feasible"] = feasible
        return pl.DataFrame(columns)

    def kernel(
        self, task: Task, out: Matrices | None = None, helper: Helper | None = None
    ) -> Matrices:
        """The fused kernel's result matrices for one task (see `evaluate_chunk`)."""
        spec = self.spec
        prepared = self._prepare(task.graph, task.point)
        mapped = prepared.mapped
        inst_base = self._inst_base
        if not prepared.checked:
            # Some configuration fails the scheduler's checks: this task's own arrays
            # go through them, so the error names the configuration as it always has.
            configs = self._configurations(task)
            mapped.run(configs, spec.parallelism, keep_ops=False)
            if not self._split:
                inst_base = np.zeros_like(inst_base)
                np.cumsum(configs.module_count.max(axis=0), out=inst_base[1:])
        if out is None:
            out = result_matrices(task.stop - task.start, len(spec.grid))
        longest = evaluate_chunk(
            task.start,
            self._grid,
            prepared.dags,
            prepared.ops,
            prepared.nbytes,
            prepared.graph.batches,
            overlaps(spec.hardware, spec.pipelined),
            self._split,
            inst_base,
            self._constraint,
            self._low,
            self._high,
            out,
            helper,
        )
        if longest >= 2**62:
            raise InvalidInputError(
                f"a frame of {prepared.graph.batches} batches would take about "
                f"{longest:.3g} cycles, beyond the int64 range; lower frame_pixels",
                "frame_pixels",
            )
        return out

    def _kernel_grid(self) -> Grid:
        hardware = self.spec.hardware
        axes = list(self.spec.grid.items())
        longest = max((len(v) for _, v in axes), default=0)
        ints = np.zeros((len(axes), longest), np.int64)
        floats = np.zeros((len(axes), longest), np.float64)
        field = np.zeros(len(axes), np.int64)
        module = np.zeros(len(axes), np.int64)
        for a, (name, values) in enumerate(axes):
            (ints if values.dtype == np.int64 else floats)[a, : len(values)] = values
            target = name if name in ACCELERATOR_FIELDS else name.rpartition(".")[2]
            field[a] = _FIELD_CODES[target]
            if name not in ACCELERATOR_FIELDS:
                module[a] = self.modules.index(name.rpartition(".")[0])
        return Grid(
            hardware=Hardware(**self.base._asdict()),
            one_kernel=hardware.kind == "gpu",
            size=np.array([len(v) for _, v in axes], np.int64),
            field=field,
            module=module,
            ints=ints,
            floats=floats,
        )

    def _extreme(self) -> Configurations:
        """The grid's worst configuration for the scheduler's checks: most instances,
        longest latency, least throughput, fastest clock, least bandwidth, most power.
        Durations and power grow monotonically towards it, and the grid, a Cartesian
        product, holds it."""
        worst = {"module_throughput": np.min, "dram_bandwidth_gbps": np.min}
        arrays = {name: values.copy() for name, values in self.base._asdict().items()}
        for name, values in self.spec.grid.items():
            field = hardware_field(name, self.spec.hardware)[0]
            value = worst.get(field, np.max)(values)
            if name in ACCELERATOR_FIELDS:
                arrays[field][0] = value
            else:
                arrays[field][0, self.modules.index(name.rpartition(".")[0])] = value
        return Configurations(**arrays)

    def _configurations(self, task: Task) -> Configurations:
        """The configurations of one task as arrays."""
        spec = self.spec
        index = np.arange(task.start, task.stop)
        coords = np.unravel_index(index, spec.shape) if spec.shape else ()
        arrays = {
            name: np.repeat(values, index.size, axis=0)
            for name, values in self.base._asdict().items()
        }
        for (name, values), i in zip(spec.grid.items(), coords, strict=True):
            field = hardware_field(name, spec.hardware)[0]
            if name in ACCELERATOR_FIELDS:
                arrays[field] = values[i].astype(arrays[field].dtype)
            else:
                arrays[field][:, self.modules.index(name.rpartition(".")[0])] = values[i]
        return Configurations(**arrays)


_FIELD_CODES = {
    "frequency_mhz": FREQUENCY,
    "dram_bandwidth_gbps": BANDWIDTH,
    "dram_pj_per_byte": PJ_PER_BYTE,
    "count": COUNT,
    "throughput_ops_per_cycle": THROUGHPUT,
    "latency_cycles": LATENCY,
    "power_uw": POWER,
    "area_um2": AREA,
}


def chunks(
    spec: SweepSpec, progress: Progress | None = None, evaluate: Evaluator | None = None
) -> Iterator[pl.DataFrame]:
    """The sweep's rows chunk by chunk, in row order, computed lazily (memory stays
    bounded by one chunk whatever the grid); `evaluate` reuses an evaluator of `spec`."""
    evaluate = evaluate or Evaluator(spec)
    for task in tasks(spec):
        frame = evaluate(task)
        if progress is not None:
            progress.advance(frame.height)
        yield frame


def variant(accel: Accelerator, changes: Mapping[str, float]) -> Accelerator:
    """`accel` with hardware axes set to the given values: the accelerator that
    one row of a sweep describes.

    >>> from nerframe import accelerator
    >>> variant(accelerator("neurex"), {"systolic_array_32x32.count": 4}).modules[1].count
    4
    """
    modules = list(accel.modules)
    top: dict[str, Any] = {}
    for name, value in changes.items():
        field = hardware_field(name, accel)
        if name in ACCELERATOR_FIELDS:
            top[name] = value
        else:
            module, _, key = name.rpartition(".")
            i = [m.name for m in modules].index(module)
            change: dict[str, Any] = {key: int(value) if field[1] else value}
            modules[i] = replace(modules[i], **change)
    return replace(accel, modules=tuple(modules), **top)

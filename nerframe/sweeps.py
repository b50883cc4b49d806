"""Design-space sweeps: graphs × workload points × accelerator variants, in bulk.

A sweep (a `nerframe.sweep_specs.SweepSpec`) is evaluated as an outer loop
over graphs and workload points (each one costed and mapped graph) with the
hardware grid batched through the scheduler kernel inside, in chunks of
``chunk_size`` configurations: the grid is never materialised, and no per-op ×
per-configuration table either. Each row holds the graph, the workload axes,
``config`` (the variant's index in the hardware grid), the hardware axes, the
frame figures of `nerframe.schedule`'s summary and ``feasible`` (every
constraint met, checked in a numba kernel).

With `output`, every chunk is a task that writes its own Parquet part of a
result store (`nerframe.sweep_store`); an interrupted sweep resumes where it
stopped, and ``backend="dask"`` runs the tasks on a Dask cluster
(`nerframe.dask_backend`).

>>> import nerframe
>>> grid = {"frequency_mhz": [500, 1000], "systolic_array_32x32.count": [1, 2]}
>>> result = nerframe.sweep(nerframe.pipeline("neurex"), "neurex", grid)
>>> result.select("frequency_mhz", "systolic_array_32x32.count", "bottleneck_module").rows()[:2]
[(500.0, 1, 'index_generation_unit'), (500.0, 2, 'index_generation_unit')]
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, NamedTuple

import numpy as np
import polars as pl

from nerframe.accelerator_model import Accelerator
from nerframe.errors import NerframeError
from nerframe.graphs import Graph
from nerframe.kernels.sweep import within
from nerframe.progress import Progress
from nerframe.scheduling import Configurations, Mapped, frame_figures, overlaps
from nerframe.sweep_specs import (
    ACCELERATOR_FIELDS,
    SweepSpec,
    hardware_field,
    is_workload_axis,
    sweep_spec,
)

BACKENDS = ("local", "dask")


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


class Evaluator:
    """Evaluates the tasks of one spec; keeps the mapped graph of the last workload point,
    so consecutive tasks of one point cost and map the graph once. Not thread-safe
    (it reuses one configuration buffer): one evaluator per thread."""

    def __init__(self, spec: SweepSpec) -> None:
        self.spec = spec
        self.base = Configurations.of(spec.hardware)
        self.modules = [m.name for m in spec.hardware.modules]
        # Names as Enums (graphs in lexical order, so they sort as strings do): cheaper
        # to build and to write than strings, and they read back from Parquet as Enums.
        first = next(spec.points())
        names = [spec.graph_at(i, first).name for i in range(len(spec.graphs))]
        self._graphs = pl.Series(sorted(set(names)), dtype=pl.Enum(sorted(set(names))))
        self._accelerator = pl.Series([spec.hardware.name], dtype=pl.Enum([spec.hardware.name]))
        self._bottlenecks = pl.Series(self.modules, dtype=pl.Enum(self.modules))
        self._points = list(spec.points())
        self._key: tuple[int, int] | None = None
        self._mapped: tuple[Graph, Mapped] | None = None
        self._buffer: dict[str, np.ndarray] | None = None

    def mapped(self, graph: int, point: int) -> tuple[Graph, Mapped]:
        """The graph of task coordinates (graph, point), costed and mapped."""
        if self._key != (graph, point) or self._mapped is None:
            g = self.spec.graph_at(graph, self._points[point])
            self._mapped = (g, Mapped.of(g, self.spec.hardware))
            self._key = (graph, point)
        return self._mapped

    def __call__(self, task: Task) -> pl.DataFrame:
        """The rows of one task."""
        spec = self.spec
        g, mapped = self.mapped(task.graph, task.point)
        index = np.arange(task.start, task.stop)
        coords = np.unravel_index(index, spec.shape) if spec.shape else ()
        axes = {
            name: values[i] for (name, values), i in zip(spec.grid.items(), coords, strict=True)
        }
        configs = self._configurations(axes, index.size)
        run = mapped.run(configs, spec.parallelism, keep_ops=False)
        figures = frame_figures(run, configs, g.batches, overlaps(spec.hardware, spec.pipelined))
        bottleneck_index = figures.pop("bottleneck")
        count = configs.module_count.astype(np.float64)
        area = np.einsum("cm,cm->c", configs.module_area_um2, count)
        figures["area_mm2"] = (area + spec.hardware.sram_area_um2) / 1e6
        figures["peak_tflops"] = configs.peak_tflops
        at = self._graphs.to_list().index(g.name)
        columns: dict[str, Any] = {
            "graph": self._graphs.gather(np.full(index.size, at)),
            "accelerator": self._accelerator.gather(np.zeros(index.size, np.int64)),
        }
        for name, value in self._points[task.point].items():
            kind = pl.Int64 if isinstance(value, int) else pl.Float64
            columns[name] = pl.repeat(value, index.size, dtype=kind, eager=True)
        columns["config"] = index
        columns.update(axes)
        for name, values in figures.items():
            columns[name] = pl.Series(name, values, nan_to_null=True)
        columns["bottleneck_module"] = self._bottlenecks.gather(bottleneck_index)
        columns["feasible"] = self._feasible(figures)
        return pl.DataFrame(columns)

    def _configurations(self, axes: dict[str, np.ndarray], size: int) -> Configurations:
        # One buffer of the base configuration per evaluator, reused by every chunk: each
        # chunk overwrites the same axis columns, so the other columns stay the base's.
        if self._buffer is None or len(self._buffer["frequency_mhz"]) < size:
            self._buffer = {}
            for name in Configurations.__dataclass_fields__:
                base = getattr(self.base, name)
                # np.tile copies whole rows: several times faster than np.repeat here.
                self._buffer[name] = np.tile(base, (size, 1) if base.ndim == 2 else size)
        arrays = {name: values[:size] for name, values in self._buffer.items()}
        for name, values in axes.items():
            field = hardware_field(name, self.spec.hardware)[0]
            if name in ACCELERATOR_FIELDS:
                arrays[field] = values.astype(arrays[field].dtype)
            else:
                arrays[field][:, self.modules.index(name.rpartition(".")[0])] = values
        return Configurations(**arrays)

    def _feasible(self, figures: dict[str, np.ndarray]) -> np.ndarray:
        size = len(next(iter(figures.values())))
        if not self.spec.constraints:
            return np.ones(size, np.bool_)
        names = list(self.spec.constraints)
        values = np.column_stack([np.asarray(figures[n], np.float64) for n in names])
        bounds = np.array(list(self.spec.constraints.values()), np.float64)
        return within(values, bounds[:, 0], bounds[:, 1])


def sweep(
    graph: Graph | str | SweepSpec | Mapping[str, Any] | Path,
    accel: Accelerator | str | None = None,
    grid: Mapping[str, Sequence[float]] | None = None,
    *,
    workload: Mapping[str, Sequence[float]] | None = None,
    constraints: Mapping[str, Any] | None = None,
    parallelism: str = "split",
    pipelined: bool = True,
    output: str | Path | None = None,
    chunk_size: int = 500_000,
    backend: str = "local",
    scheduler: str | None = None,
    progress: Progress | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Evaluate `graph` on every variant of `accel` that `grid` describes, at every
    point of `workload` (axes as in `nerframe.sweep_specs`); or run a whole sweep spec
    (a `SweepSpec`, a dict or a YAML/JSON file) given as the first argument.

    Without `output`, returns every row as a DataFrame; with `output`, writes (or
    resumes) a result store there and returns a LazyFrame over its rows, so a
    campaign never has to fit in memory. Row values equal what `nerframe.schedule`
    gives for that variant. `backend` ``"dask"`` runs the chunks on a Dask cluster
    (at `scheduler`, else a local one); it needs `output`.
    """
    if isinstance(graph, Graph) or (isinstance(graph, str) and accel is not None):
        if accel is None:
            raise NerframeError("sweep: name the accelerator to sweep")
        hardware: dict[str, Sequence[float]] = {}
        workload_axes = dict(workload or {})
        for name, values in (grid or {}).items():
            (workload_axes if is_workload_axis(name) else hardware)[name] = values
        spec = sweep_spec(
            {
                "graphs": [graph],
                "hardware": accel,
                "workload": workload_axes,
                "grid": hardware,
                "constraints": dict(constraints or {}),
                "parallelism": parallelism,
                "pipelined": pipelined,
                "chunk_size": chunk_size,
            }
        )
    else:
        spec = sweep_spec(graph)
    return run(spec, output, backend, scheduler, progress)


def run(
    spec: SweepSpec,
    output: str | Path | None = None,
    backend: str = "local",
    scheduler: str | None = None,
    progress: Progress | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Run a validated spec: see `sweep`."""
    if backend not in BACKENDS:
        raise NerframeError(f"unknown backend {backend!r}; choose {' or '.join(BACKENDS)}")
    first = next(spec.points())
    for index in range(len(spec.graphs)):  # an unmappable graph fails before any work
        Mapped.of(spec.graph_at(index, first), spec.hardware)
    if output is None:
        if backend != "local":
            raise NerframeError(f"the {backend} backend writes a store: give an output folder")
        return pl.concat(list(chunks(spec, progress)))
    from nerframe.sweep_store import write_store

    return write_store(spec, Path(output), backend, scheduler, progress)


def chunks(spec: SweepSpec, progress: Progress | None = None) -> Iterator[pl.DataFrame]:
    """The sweep's rows chunk by chunk, in row order, computed lazily (memory stays
    bounded by one chunk whatever the grid)."""
    evaluate = Evaluator(spec)
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

"""Running a sweep: the public `sweep`, its spec validated, evaluated in memory
or written into a result store; and `estimate`, what a sweep would cost.

>>> from nerframe.sweeps.spec import sweep_spec
>>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
...                    "grid": {"frequency_mhz": [500, 1000]}})
>>> run(spec)["config"].to_list()
[0, 1]
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any, get_args

import polars as pl

from nerframe._typing import Backend, Parallelism
from nerframe.accelerator_model import Accelerator
from nerframe.errors import InvalidInputError
from nerframe.graphs import Graph
from nerframe.progress import Progress
from nerframe.sweeps.evaluate import Evaluator, Task, chunks
from nerframe.sweeps.spec import CHUNK_SIZE, SweepSpec, is_workload_axis, sweep_spec

BACKENDS: tuple[Backend, ...] = get_args(Backend)


def sweep(
    graph: Graph | str | SweepSpec | Mapping[str, Any] | Path,
    accel: Accelerator | str | None = None,
    grid: Mapping[str, Sequence[float]] | None = None,
    *,
    workload: Mapping[str, Sequence[float]] | None = None,
    constraints: Mapping[str, Any] | None = None,
    parallelism: Parallelism = "split",
    pipelined: bool = True,
    output: str | Path | None = None,
    chunk_size: int = CHUNK_SIZE,
    backend: Backend = "local",
    scheduler: str | None = None,
    progress: Progress | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Evaluate `graph` on every variant of `accel` that `grid` describes, at every
    point of `workload` (axes as in `nerframe.sweeps.spec`); or run a whole sweep spec
    (a `SweepSpec`, a dict or a YAML/JSON file) given as the first argument.

    Without `output`, returns every row as a DataFrame; with `output`, writes (or
    resumes) a result store there and returns a LazyFrame over its rows, so a
    campaign never has to fit in memory. Row values equal what `nerframe.schedule`
    gives for that variant. `backend` ``"dask"`` runs the chunks on a Dask cluster
    (at `scheduler`, else a local one); it needs `output`. Without `output` a sweep of
    more than `IN_MEMORY_ROWS` rows is refused before any work.

    >>> rows = sweep("neurex", "neurex", {"frequency_mhz": [500, 1000]},
    ...              workload={"rays": [1024, 4096]})
    >>> rows.select("rays", "frequency_mhz", "config").rows()
    [(1024, 500.0, 0), (1024, 1000.0, 1), (4096, 500.0, 0), (4096, 1000.0, 1)]
    """
    if isinstance(graph, Graph) or (isinstance(graph, str) and accel is not None):
        if accel is None:
            raise InvalidInputError("sweep: name the accelerator to sweep")
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


# The most rows an in-memory sweep returns (the command line asks for --yes above
# the same count). A row of one axis is ~20 columns, ~130 bytes measured with
# DataFrame.estimated_size: the largest result is ~3 GB.
IN_MEMORY_ROWS = 20_000_000
_ROW_BYTES = 130


def run(
    spec: SweepSpec,
    output: str | Path | None = None,
    backend: Backend = "local",
    scheduler: str | None = None,
    progress: Progress | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Run a validated spec: see `sweep`."""
    if backend not in BACKENDS:
        raise InvalidInputError(f"unknown backend {backend!r}; choose {' or '.join(BACKENDS)}")
    if output is None and backend != "local":
        raise InvalidInputError(f"the {backend} backend writes a store: give an output folder")
    if output is None and spec.configurations > IN_MEMORY_ROWS:
        raise InvalidInputError(
            f"sweep: {spec.configurations:,} configurations are more rows than one "
            f"DataFrame should hold (at most {IN_MEMORY_ROWS:,}, about "
            f"{IN_MEMORY_ROWS * _ROW_BYTES / 1e9:.0f} GB): give output= to write a store, "
            "whose LazyFrame is read part by part (or shrink the grid)"
        )
    if scheduler is not None and backend != "dask":
        raise InvalidInputError(
            f"a scheduler ({scheduler}) is the address of a Dask scheduler: use it with the "
            "dask backend (--backend dask), or leave it out",
            "scheduler",
        )
    evaluate = Evaluator(spec)
    for index in range(len(spec.graphs)):  # an unmappable graph fails before any work
        evaluate.mapped(index, 0)
    if output is None:
        return pl.concat(list(chunks(spec, progress, evaluate)))
    from nerframe.sweeps.store import write_store

    return write_store(spec, Path(output), backend, scheduler, progress, evaluate)


def estimate(spec: SweepSpec) -> tuple[float, float]:
    """What running `spec` would cost on this machine: (seconds, store bytes), from a
    timed sample chunk and the size of its Parquet part.

    >>> from nerframe.sweeps.spec import sweep_spec
    >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
    ...                    "grid": {"frequency_mhz": list(range(100, 1100, 100))}})
    >>> seconds, size = estimate(spec)
    >>> seconds > 0 and size > 0
    True
    """
    import io
    import time

    from nerframe.sweeps.parts import encode_part

    sample = min(spec.hardware_points, 50_000)
    evaluate = Evaluator(spec)
    evaluate(Task(0, 0, 0, 0, min(sample, 1000)))  # compile and map outside the timing
    start = time.perf_counter()
    frame = evaluate(Task(0, 0, 0, 0, sample))
    seconds = (time.perf_counter() - start) / sample * spec.configurations
    buffer = io.BytesIO()
    encode_part(frame, buffer)
    return seconds, buffer.tell() / sample * spec.configurations

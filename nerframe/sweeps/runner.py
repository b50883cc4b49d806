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

from nerframe._typing import Backend, Compression, Parallelism
from nerframe.accelerator_model import Accelerator
from nerframe.errors import InvalidInputError, StoreError
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
    compression: Compression = "none",
    backend: Backend = "local",
    scheduler: str | None = None,
    progress: Progress | None = None,
) -> pl.DataFrame | pl.LazyFrame:
    """Evaluate `graph` on every variant of `accel` that `grid` describes, at every
    point of `workload` (axes as in `nerframe.sweeps.spec`); or run a whole sweep spec
    (a `SweepSpec`, a dict or a YAML/JSON file) given as the first argument.

    Without `output`, returns every row as a DataFrame; with `output`, writes (or
    resumes) a result store there and returns a LazyFrame over its rows, so a
    campaign never has to fit in memory; `compression` (``lz4``, ``zstd``) compresses
    its parts (a few times smaller, docs/sweeps.md). Row values equal what
    `nerframe.schedule` gives for that variant. `backend` ``"dask"`` runs the chunks
    on a Dask cluster (at `scheduler`, else a local one); it needs `output`. Without
    `output` a sweep of more than `IN_MEMORY_ROWS` rows is refused before any work.

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
                "compression": compression,
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

    check_free_disk(spec, Path(output), evaluate)
    return write_store(spec, Path(output), backend, scheduler, progress, evaluate)


def estimate(spec: SweepSpec) -> tuple[float, float]:
    """What running `spec` would cost on this machine: (seconds, store bytes), from a
    timed sample chunk and `store_bytes`.

    >>> from nerframe.sweeps.spec import sweep_spec
    >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
    ...                    "grid": {"frequency_mhz": list(range(100, 1100, 100))}})
    >>> seconds, size = estimate(spec)
    >>> seconds > 0 and size > 0
    True
    """
    import time

    sample = min(spec.hardware_points, 50_000)
    evaluate = Evaluator(spec)
    evaluate(Task(0, 0, 0, 0, min(sample, 1000)))  # compile and map outside the timing
    start = time.perf_counter()
    evaluate(Task(0, 0, 0, 0, sample))
    seconds = (time.perf_counter() - start) / sample * spec.configurations
    return seconds, store_bytes(spec, evaluate)


# Rows of the sample chunk that `store_bytes` encodes.
_SAMPLE_ROWS = 4096


def store_bytes(spec: SweepSpec, evaluate: Evaluator | None = None) -> float:
    """The bytes of the Parquet parts of a store of `spec`, worked out from its first
    rows, encoded whole and by halves: what a part costs whatever its rows (footer,
    schema, dictionaries) and what each row adds, times the parts and rows of the sweep.
    The cost is one sample chunk, however large the sweep; `evaluate` reuses an
    evaluator of `spec`.

    >>> import tempfile
    >>> from nerframe.sweeps.spec import sweep_spec
    >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex", "chunk_size": 25_000,
    ...                    "grid": {"frequency_mhz": list(range(100, 1100)),
    ...                             "systolic_array_32x32.count": list(range(1, 101))}})
    >>> store = Path(tempfile.mkdtemp()) / "s"
    >>> _ = run(spec, store)
    >>> written = sum(p.stat().st_size for p in store.rglob("*.parquet"))
    >>> round(store_bytes(spec) / written, 2)
    1.0
    """
    import io

    from nerframe.sweeps.parts import encode_part

    evaluate = evaluate or Evaluator(spec)
    sample = min(spec.hardware_points, _SAMPLE_ROWS)
    frame = evaluate(Task(0, 0, 0, 0, sample))
    sizes = []
    for rows in (sample // 2, sample) if sample > 1 else (sample,):
        buffer = io.BytesIO()
        encode_part(frame.head(rows), buffer, spec.compression)
        sizes.append(buffer.tell())
    if len(sizes) == 1:  # one row: all of it counted per row (more than the truth)
        return float(spec.configurations * sizes[0])
    per_row = (sizes[1] - sizes[0]) / (sample - sample // 2)
    per_part = sizes[1] - per_row * sample
    return spec.chunks * per_part + spec.configurations * per_row


# What a row's value takes in a part at most: 8 bytes plain, or a dictionary index
# with its share of the dictionary, with room for the page's levels and headers.
_VALUE_BYTES = 16
# What a part takes at most besides its rows: footer, schema, page headers.
_PART_BYTES = 65_536


def bytes_at_most(spec: SweepSpec) -> float:
    """An upper bound of `store_bytes`, from the sweep's size alone: every column of
    every row at `_VALUE_BYTES`.

    >>> from nerframe.sweeps.spec import sweep_spec
    >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
    ...                    "grid": {"frequency_mhz": list(range(100, 10100))}})
    >>> store_bytes(spec) < bytes_at_most(spec) < 10 * store_bytes(spec)
    True
    """
    from nerframe.schemas import SWEEP_CYCLES, SWEEP_FIGURES

    # graph, accelerator, config, batches, bottleneck_module, feasible, and the axes
    columns = 6 + len(SWEEP_CYCLES) + len(SWEEP_FIGURES) + len(spec.workload) + len(spec.grid)
    return spec.configurations * columns * _VALUE_BYTES + spec.chunks * _PART_BYTES


# How much larger a compressed store may turn out than its sample says: rows further
# into a sweep vary in other axes and compress differently (assumption, from a
# 3 x 10^5-row neurex sweep whose LZ4 parts took 8 % more than its first rows did).
_COMPRESSION_MARGIN = 1.25


def check_free_disk(spec: SweepSpec, store: Path, evaluate: Evaluator | None = None) -> None:
    """Refuse (`StoreError`) a sweep whose missing parts (`store_bytes`, less the
    parts `store` holds already; with `_COMPRESSION_MARGIN` when compressed) would
    not fit in the free space of the disk of `store`, before any part is written."""
    import shutil

    from nerframe.sweeps.parts import TABLE

    parts = store / TABLE
    done = sum(1 for _ in parts.rglob("*.parquet")) if parts.is_dir() else 0
    if done >= spec.chunks:
        return
    left = (spec.chunks - done) / spec.chunks
    folder = next(p for p in [store, *store.absolute().parents] if p.is_dir())
    free = shutil.disk_usage(folder).free
    if bytes_at_most(spec) * left <= free:  # most sweeps: no sample needed
        return
    needed = store_bytes(spec, evaluate) * left
    if spec.compression != "none":
        needed *= _COMPRESSION_MARGIN
    if needed > free:
        raise StoreError(
            f"{store}: this sweep's store would take about {size_text(needed)} and its disk "
            f"has {size_text(free)} free; shrink the grid or write the store to a larger disk",
            str(store),
        )


def size_text(size: float) -> str:
    """A byte count in the largest decimal unit it reaches (GB at least: a store worth
    asking about is large), three significant digits.

    >>> size_text(6.44e12), size_text(2.5e8)
    ('6.44 TB', '0.25 GB')
    """
    units = [(1e15, "PB"), (1e12, "TB")]
    scale, unit = next(((s, u) for s, u in units if size >= s), (1e9, "GB"))
    return f"{size / scale:.3g} {unit}"

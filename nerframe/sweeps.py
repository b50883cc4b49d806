"""Design-space sweeps: one graph on a grid of accelerator variants, in bulk.

A grid maps parameter names to the values to try; the sweep evaluates every
combination (their Cartesian product, the last parameter varying fastest) with
the batched scheduler kernel, in chunks, without ever materialising a per-op ×
per-configuration table. Parameter names are accelerator fields
(``frequency_mhz``, ``dram_bandwidth_gbps``, ``dram_pj_per_byte``) or
``MODULE.FIELD`` with FIELD one of ``count``, ``throughput_ops_per_cycle``,
``latency_cycles``, ``power_uw``, ``area_um2``.

With `output`, each chunk is written to a result store as it completes
(table ``sweep``, one Parquet part per chunk), so `nerframe.query` runs SQL
over it, and a sweep that was interrupted resumes where it stopped.

>>> import nerframe
>>> grid = {"frequency_mhz": [500, 1000], "systolic_array_32x32.count": [1, 2]}
>>> result = nerframe.sweep(nerframe.pipeline("neurex"), "neurex", grid)
>>> result.select("frequency_mhz", "systolic_array_32x32.count", "bottleneck_module").rows()[:2]
[(500.0, 1, 'index_generation_unit'), (500.0, 2, 'index_generation_unit')]
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path

import numpy as np
import polars as pl

from nerframe.errors import NerframeError, did_you_mean
from nerframe.graphs import Graph
from nerframe.hardware import Accelerator, accelerator
from nerframe.scheduling import PARALLELISM, Configurations, Mapped, frame_figures
from nerframe.store import MANIFEST, write_manifest, write_table

# name -> (Configurations field, integer-valued, zero allowed)
_ACCELERATOR_FIELDS = {
    "frequency_mhz": ("frequency_mhz", False, False),
    "dram_bandwidth_gbps": ("dram_bandwidth_gbps", False, False),
    "dram_pj_per_byte": ("dram_pj_per_byte", False, True),
}
_MODULE_FIELDS = {
    "count": ("module_count", True, False),
    "throughput_ops_per_cycle": ("module_throughput", False, False),
    "latency_cycles": ("module_latency", True, True),
    "power_uw": ("module_power_uw", False, True),
    "area_um2": ("module_area_um2", False, True),
}


def sweep(
    graph: Graph,
    accel: Accelerator | str,
    grid: Mapping[str, Sequence[float]],
    parallelism: str = "split",
    pipelined: bool = True,
    output: str | Path | None = None,
    chunk_size: int = 500_000,
) -> pl.DataFrame:
    """Evaluate `graph` on every variant of `accel` that `grid` describes.

    Returns one row per configuration: ``config`` (its index in the grid),
    the grid's parameters, and the frame figures of `nerframe.schedule`'s
    summary (fps, energy, power, area, DRAM utilisation, bottleneck, ...).
    Each row equals what `nerframe.schedule` gives for that variant.
    """
    if parallelism not in PARALLELISM:
        raise NerframeError(f"unknown parallelism {parallelism!r}; choose split or instance")
    if chunk_size < 1:
        raise NerframeError(f"chunk_size must be >= 1, got {chunk_size}")
    accel = accelerator(accel) if isinstance(accel, str) else accel
    axes = {name: _values(name, values, accel) for name, values in grid.items()}
    shape = tuple(len(v) for v in axes.values())
    total = math.prod(shape)
    mapped = Mapped.of(graph, accel)
    base = Configurations.of(accel)
    spec = {
        "sweep": {
            "graph": graph.name,
            "accelerator": accel.name,
            "grid": {name: values.tolist() for name, values in axes.items()},
            "parallelism": parallelism,
            "pipelined": pipelined,
            "chunk_size": chunk_size,
            "configurations": total,
        }
    }
    store = _open(Path(output), spec) if output is not None else None
    where = {"graph": graph.name, "hardware": accel.name}
    written = Path(store or ".", "sweep", *(f"{k}={v}" for k, v in where.items()))
    parts = []
    for number, start in enumerate(range(0, total, chunk_size)):
        if store is not None and (written / f"part-{number}.parquet").exists():
            continue  # done before the sweep was interrupted
        index = np.arange(start, min(start + chunk_size, total))
        coords = np.unravel_index(index, shape) if shape else ()
        columns = {name: values[i] for (name, values), i in zip(axes.items(), coords, strict=True)}
        chunk = _evaluate(graph, accel, mapped, base, columns, index, parallelism, pipelined)
        if store is None:
            parts.append(chunk)
        else:
            write_table(store, "sweep", chunk, part=number, **where)
    if store is None:
        return pl.concat(parts)
    write_manifest(store, spec)
    return pl.read_parquet(written / "*.parquet").sort("config")


def _values(name: str, values: Sequence[float], accel: Accelerator) -> np.ndarray:
    """The grid axis `name` as an array, checked against what the field allows."""
    integer, zero_ok = _field(name, accel)[1:]
    array = np.asarray(values, dtype=np.float64)
    if array.ndim != 1 or array.size == 0:
        raise NerframeError(f"sweep parameter {name!r}: give a non-empty list of values")
    if not np.isfinite(array).all():
        raise NerframeError(f"sweep parameter {name!r}: values must be finite, got {values}")
    if integer and (array != np.round(array)).any():
        raise NerframeError(f"sweep parameter {name!r}: values must be integers, got {values}")
    low_ok = array >= 0 if zero_ok else array > 0
    if not low_ok.all():
        bound = ">= 0" if zero_ok else "> 0"
        raise NerframeError(f"sweep parameter {name!r}: values must be {bound}, got {values}")
    return array.astype(np.int64) if integer else array


def _field(name: str, accel: Accelerator) -> tuple[str, bool, bool]:
    if name in _ACCELERATOR_FIELDS:
        return _ACCELERATOR_FIELDS[name]
    module, _, field = name.rpartition(".")
    names = [m.name for m in accel.modules]
    choices = [*_ACCELERATOR_FIELDS, *(f"{m}.{f}" for m in names for f in _MODULE_FIELDS)]
    if module not in names or field not in _MODULE_FIELDS:
        raise NerframeError(
            f"unknown sweep parameter {name!r}{did_you_mean(name, choices)}; use one of "
            f"{', '.join(_ACCELERATOR_FIELDS)} or MODULE.FIELD with MODULE in "
            f"{', '.join(names)} and FIELD in {', '.join(_MODULE_FIELDS)}"
        )
    return _MODULE_FIELDS[field]


def _evaluate(
    graph: Graph,
    accel: Accelerator,
    mapped: Mapped,
    base: Configurations,
    columns: dict[str, np.ndarray],
    index: np.ndarray,
    parallelism: str,
    pipelined: bool,
) -> pl.DataFrame:
    """Figures of the configurations `index` of the grid, whose axis values are `columns`."""
    size = index.size
    arrays = {
        field: np.repeat(getattr(base, field), size, axis=0)
        for field in Configurations.__dataclass_fields__
    }
    modules = [m.name for m in accel.modules]
    for name, values in columns.items():
        field = _field(name, accel)[0]
        if name in _ACCELERATOR_FIELDS:
            arrays[field] = values.astype(arrays[field].dtype)
        else:
            arrays[field][:, modules.index(name.rpartition(".")[0])] = values
    configs = Configurations(**arrays)
    run = mapped.run(configs, parallelism, keep_ops=False)
    figures = frame_figures(run, configs, graph.batches, pipelined)
    bottleneck = figures.pop("bottleneck")
    area = (configs.module_area_um2 * configs.module_count).sum(axis=1) + accel.sram_area_um2
    peak = (configs.module_throughput * configs.module_count).sum(axis=1) * configs.frequency_mhz
    figures_table = pl.DataFrame(
        {
            "config": index,
            **columns,
            **figures,
            "area_mm2": area / 1e6,
            "peak_tflops": peak * 1e6 / 1e12,
            "bottleneck_module": pl.Series(modules).gather(bottleneck),
        }
    )
    return figures_table.select(
        pl.lit(graph.name).alias("graph"), pl.lit(accel.name).alias("accelerator"), pl.all()
    ).fill_nan(None)


def _open(store: Path, spec: dict[str, object]) -> Path:
    """The store to write a sweep into: new, or the same sweep interrupted earlier."""
    if store.exists() and any(store.iterdir()):
        try:
            previous = json.loads((store / MANIFEST).read_text()).get("run")
        except (OSError, json.JSONDecodeError):
            previous = None
        if previous != json.loads(json.dumps(spec)):
            raise NerframeError(
                f"{store}: holds something other than this sweep; choose an empty folder "
                "(a folder is resumed only by the same sweep)"
            )
    else:
        store.mkdir(parents=True, exist_ok=True)
        write_manifest(store, spec)
    return store


def variant(accel: Accelerator, changes: Mapping[str, float]) -> Accelerator:
    """`accel` with sweep parameters set to the given values: the accelerator that
    one row of a sweep describes.

    >>> variant(accelerator("neurex"), {"systolic_array_32x32.count": 4}).modules[1].count
    4
    """
    modules = list(accel.modules)
    top = {}
    for name, value in changes.items():
        field = _field(name, accel)
        if name in _ACCELERATOR_FIELDS:
            top[name] = value
        else:
            module, _, key = name.rpartition(".")
            i = [m.name for m in modules].index(module)
            modules[i] = replace(modules[i], **{key: int(value) if field[1] else value})
    return replace(accel, modules=tuple(modules), **top)

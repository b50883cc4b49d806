"""Uncertainty bands: the range a headline figure takes when every assumed figure of an
accelerator moves across its range.

An accelerator file lists the figures it assumes (``assumptions``: a grid path,
``low``, ``high``, a reason; `nerframe.accelerator_model.Assumption`). `corners` runs
the sweep engine (`nerframe.sweep`) over the two-level full factorial of those
ranges, every combination of each parameter at its low or its high end (2^k
configurations for k assumptions); `bands` reduces the rows to the lowest and highest
value of each headline figure beside the nominal one (the file's own figures, what
`nerframe.schedule` gives).

Why corners: every frame figure of the model is monotone in each parameter an
assumption may name (a duration falls as a throughput, a count, a clock or the DRAM
bandwidth rises and grows with a latency; energy grows with a power or a DRAM energy
per byte; area with a unit's area or count), so the extremes of a monotone function
over a box lie at its corners, and the full factorial holds every corner. A figure
that is a ratio of two monotone ones (average power = energy / time) is not monotone
in general, so its band is the range over the corners, which can miss an interior
extreme; docs/uncertainty.md says so. The factorial stays small: the built-ins
assume at most six figures each (64 configurations), and a file may assume at most
`MAX_ASSUMPTIONS`.

>>> import nerframe
>>> table = bands("neurex", "neurex")
>>> table["figure"].to_list()
['fps', 'energy_per_frame_j', 'avg_power_w', 'area_mm2']
>>> row = table.row(0, named=True)
>>> row["low"] <= row["nominal"] <= row["high"]
True
"""

from __future__ import annotations

import itertools
import os
from collections.abc import Callable
from dataclasses import replace
from typing import TYPE_CHECKING, Any

import polars as pl

from nerframe._typing import Parallelism
from nerframe.accelerator_model import ACCELERATOR_PARAMETERS, Accelerator
from nerframe.errors import InvalidInputError
from nerframe.graphs import Graph

if TYPE_CHECKING:
    from nerframe.scheduling import Schedule

FIGURES = ("fps", "energy_per_frame_j", "avg_power_w", "area_mm2")
"""The headline figures a band is given for (columns of a schedule's summary)."""

MAX_ASSUMPTIONS = 16
"""Most assumptions a band moves at once: 2^16 = 65,536 corners, a fraction of a
second in the sweep kernel (assumption: no accelerator file needs more)."""

SCHEMA = pl.Schema(
    {
        "graph": pl.String(),
        "accelerator": pl.String(),
        "figure": pl.String(),
        "nominal": pl.Float64(),
        "low": pl.Float64(),
        "high": pl.Float64(),
        "assumptions": pl.Int64(),
        "configurations": pl.Int64(),
    }
)
"""Columns of a bands table: one row per figure of `FIGURES`."""


def grid(accel: Accelerator) -> dict[str, list[float]]:
    """The sweep grid of `accel`'s corners: each assumed parameter at its low and high end.

    >>> import nerframe
    >>> grid(nerframe.accelerator("neurex"))["dram_bandwidth_gbps"]
    [12.8, 25.6]
    """
    if len(accel.assumptions) > MAX_ASSUMPTIONS:
        raise InvalidInputError(
            f"accelerator '{accel.name}' assumes {len(accel.assumptions)} figures; a band "
            f"moves at most {MAX_ASSUMPTIONS} at once (2^{MAX_ASSUMPTIONS} corners)",
            "assumptions",
        )
    return {a.parameter: [a.low, a.high] for a in accel.assumptions}


def variants(accel: Accelerator) -> list[Accelerator]:
    """`accel` at each corner of its assumptions, in the sweep's config order (the last
    assumption varying fastest); `[accel]` when it assumes nothing. For the figures a
    property gives without a schedule (the area).

    >>> import nerframe
    >>> [a.dram_bandwidth_gbps for a in variants(nerframe.accelerator("neurex"))][:4]
    [12.8, 12.8, 25.6, 25.6]
    """
    axes = grid(accel)
    found = []
    for values in itertools.product(*axes.values()):
        changed = accel
        for path, value in zip(axes, values, strict=True):
            changed = _with(changed, path, value)
        found.append(changed)
    return found


def _with(accel: Accelerator, path: str, value: float) -> Accelerator:
    """`accel` with the parameter at grid path `path` set to `value`."""
    if path in ACCELERATOR_PARAMETERS:
        changes: dict[str, Any] = {path: float(value)}
        return replace(accel, **changes)
    module, _, name = path.rpartition(".")
    index = accel.module_index(module)
    number = int(value) if name in ("count", "latency_cycles") else float(value)
    modules = list(accel.modules)
    fields: dict[str, Any] = {name: number}
    modules[index] = replace(modules[index], **fields)
    return replace(accel, modules=tuple(modules))


def corners(
    graph: Graph | str,
    accel: Accelerator | str | os.PathLike[str],
    *,
    parallelism: Parallelism = "split",
    pipelined: bool = True,
) -> pl.DataFrame:
    """The sweep rows of `graph` on every corner of `accel`'s assumptions (one row, the
    accelerator as given, when it assumes nothing), in config order.

    >>> import nerframe
    >>> corners("neurex", "neurex").height  # 3 assumptions: 2^3 corners
    8
    """
    from nerframe.hardware import accelerator
    from nerframe.sweeps.runner import sweep

    hardware = accel if isinstance(accel, Accelerator) else accelerator(accel)
    axes = grid(hardware) or {"frequency_mhz": [hardware.frequency_mhz]}
    rows = sweep(graph, hardware, axes, parallelism=parallelism, pipelined=pipelined)
    assert isinstance(rows, pl.DataFrame)  # no output folder: in memory
    return rows.sort("config")


def bands(
    graph: Graph | str,
    accel: Accelerator | str | os.PathLike[str],
    *,
    parallelism: Parallelism = "split",
    pipelined: bool = True,
    nominal: Schedule | None = None,
) -> pl.DataFrame:
    """Each headline figure of `graph` on `accel` (`FIGURES`): its nominal value and the
    lowest and highest it takes over the corners of the accelerator's assumptions
    (schema `SCHEMA`). A figure without a value (an area that is not published) is null.
    `nominal` is the schedule of `graph` on `accel` as given, when the caller has it.

    >>> import nerframe
    >>> b = bands("neurex", "neurex").filter(figure="area_mm2")  # no assumed area
    >>> b["low"].item() == b["nominal"].item() == b["high"].item()
    True
    """
    from nerframe.hardware import accelerator
    from nerframe.scheduling import schedule

    hardware = accel if isinstance(accel, Accelerator) else accelerator(accel)
    if nominal is None:
        nominal = schedule(graph, hardware, parallelism=parallelism, pipelined=pipelined)
    summary = nominal.summary
    rows = corners(graph, hardware, parallelism=parallelism, pipelined=pipelined)
    found = [
        {
            "graph": summary["graph"].item(),
            "accelerator": hardware.name,
            "figure": figure,
            "nominal": summary[figure].item(),
            # the corners and the nominal point (a ratio such as the average power
            # may peak inside the box; docs/uncertainty.md)
            "low": _extreme(min, rows[figure], summary[figure].item()),
            "high": _extreme(max, rows[figure], summary[figure].item()),
            "assumptions": len(hardware.assumptions),
            "configurations": rows.height if hardware.assumptions else 0,
        }
        for figure in FIGURES
    ]
    return pl.DataFrame(found, schema=SCHEMA)


def _extreme(
    pick: Callable[[list[float]], float], corners: pl.Series, nominal: float | None
) -> float | None:
    """`pick` (min or max) of the corners' values and the nominal one; None when the
    figure has no value (an area that is not published)."""
    values = [v for v in (*corners.to_list(), nominal) if v is not None]
    return pick(values) if values else None


__all__ = ["FIGURES", "MAX_ASSUMPTIONS", "SCHEMA", "bands", "corners", "grid", "variants"]

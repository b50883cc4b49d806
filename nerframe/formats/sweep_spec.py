"""The sweep spec (YAML or JSON, or a dict given to `nerframe.sweep_spec`).

To add a spec key: add a field here (with its default and a docstring), read it in
`nerframe.sweeps.spec._build`, and document it in ``docs/formats.md``; the JSON
Schema and the unknown-key check follow from the field.

>>> from nerframe.formats import convert
>>> s = convert({"graphs": "neurex", "hardware": "neurex",
...              "grid": {"frequency_mhz": {"start": 500, "stop": 1000, "step": 250}}},
...             SweepSpecFile, source="s")
>>> s.grid["frequency_mhz"]
Range(start=500.0, stop=1000.0, step=250.0)
"""

from __future__ import annotations

from typing import Annotated

import msgspec

from nerframe._typing import Compression, Direction, Parallelism, WorkloadModel

Number = int | float


class Range(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``{start, stop, step}``: start, start + step, … up to stop (included when reached)."""

    start: float
    stop: float
    step: Annotated[float, msgspec.Meta(gt=0)]


Axis = Number | list[Number] | Range
"""An axis's values: one number, a list, or a range."""

WorkloadAxis = Number | str | list[Number | str] | Range
"""A workload axis's values: as `Axis`, or names on the ``scene`` axis
(`nerframe.sweeps.spec` refuses text on every other axis)."""


class Bounds(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """``{min, max}`` bounds of a result column (either may be left out)."""

    min: float | None = None
    max: float | None = None


class SweepSpecFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A sweep spec."""

    graphs: str | list[str]
    """Built-in pipelines or graph files (relative to the spec's folder)."""
    hardware: str
    """A built-in accelerator or an accelerator file (relative to the spec's folder)."""
    workload: dict[str, WorkloadAxis] | None = None
    """Workload axes: rays, samples, gaussians, bitwidth or OPTYPE.PARAM."""
    grid: dict[str, Axis] | None = None
    """Hardware axes: accelerator fields or MODULE.FIELD."""
    constraints: dict[str, Number | Bounds] | None = None
    """Result column -> a maximum, or {min, max}."""
    objectives: dict[str, Direction] | None = None
    """Result column -> max or min (default: fps max)."""
    parallelism: Parallelism = "split"
    """How a module's units share an op."""
    pipelined: bool = True
    """Whether batches overlap."""
    fine: bool = False
    """Whether graphs are expanded to their stages."""
    model: WorkloadModel = "realistic"
    """Workload model of built-in pipelines."""
    chunk_size: Annotated[int, msgspec.Meta(ge=1)] = 250_000
    """Configurations per chunk (a store part)."""
    compression: Compression = "none"
    """How a store's parts are compressed: none, lz4 or zstd."""

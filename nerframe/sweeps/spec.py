"""Sweep specs: what a design-space campaign evaluates, as data.

A spec names the graphs (built-in pipelines, graph files or `Graph` objects),
one accelerator, *workload axes* (``rays``, ``samples``, ``gaussians``,
``bitwidth``, any op parameter as ``OPTYPE.PARAM``, e.g. ``MLP.layer_width``, or
``scene``: standard scenes by name, see `nerframe.scenes`),
*hardware axes* (accelerator fields ``frequency_mhz``, ``dram_bandwidth_gbps``,
``dram_pj_per_byte``, or ``MODULE.FIELD`` with FIELD one of ``count``,
``throughput_ops_per_cycle``, ``latency_cycles``, ``power_uw``, ``area_um2``),
*constraints* (bounds on result columns such as ``area_mm2``, ``avg_power_w``,
``energy_per_frame_j`` or ``fps``) and *objectives* (columns to maximise or
minimise). Axis values are a list or a range ``{start, stop, step}`` (stop
included when a step lands on it). A spec is a Python dict or a YAML/JSON file::

    graphs: [neurex]
    hardware: neurex
    workload: {rays: [1024, 4096], MLP.layer_width: [64, 128]}   # or scene: [lego, room]
    grid:
      frequency_mhz: {start: 200, stop: 2000, step: 100}
      systolic_array_32x32.count: [1, 2, 4]
    constraints: {area_mm2: 5, fps: {min: 30}}
    objectives: {fps: max, energy_per_frame_j: min}
    model: realistic        # workload model of built-in pipelines (or spec)

A bare number as a constraint is an upper bound. The grid is the Cartesian
product of the axes, workload axes outermost and the last hardware axis
varying fastest; it is never materialised (`nerframe.sweeps` expands it in chunks).

>>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
...                    "workload": {"rays": [1024, 4096]},
...                    "grid": {"frequency_mhz": {"start": 500, "stop": 1000, "step": 250}}})
>>> spec.configurations, spec.grid["frequency_mhz"].tolist()
(6, [500.0, 750.0, 1000.0])
"""

from __future__ import annotations

import hashlib
import itertools
import json
import math
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

from nerframe._typing import Compression, Direction, Parallelism, WorkloadModel
from nerframe.accelerator_model import Accelerator
from nerframe.builtin_pipelines import PIPELINES, WORKLOAD_FIELDS, workload_graph
from nerframe.errors import InvalidInputError, NerframeError, did_you_mean, name_key
from nerframe.formats.accelerator import FREQUENCY_MHZ
from nerframe.formats.sweep_spec import Axis, Bounds, SweepSpecFile, WorkloadAxis
from nerframe.graphs import Graph
from nerframe.hardware import BUILTIN, accelerator
from nerframe.scene_table import scene
from nerframe.scheduling import DRAM_NAME
from nerframe.schemas import SWEEP_OBJECTIVES
from nerframe.taxonomy import op_types

# name -> (Configurations field, integer-valued, zero allowed)
ACCELERATOR_FIELDS = {
    "frequency_mhz": ("frequency_mhz", False, False),
    "dram_bandwidth_gbps": ("dram_bandwidth_gbps", False, False),
    "dram_pj_per_byte": ("dram_pj_per_byte", False, True),
}
MODULE_FIELDS = {
    "count": ("module_count", True, False),
    "throughput_ops_per_cycle": ("module_throughput", False, False),
    "latency_cycles": ("module_latency", True, True),
    "power_uw": ("module_power_uw", False, True),
    "area_um2": ("module_area_um2", False, True),
}
# Result columns a constraint or an objective may name; short names users type.
FIGURES: dict[str, Direction] = SWEEP_OBJECTIVES
ALIASES = {
    "energy": "energy_per_frame_j",
    "power": "avg_power_w",
    "area": "area_mm2",
    "latency": "frame_time_s",
}
# Configurations per chunk: a store part, a task of the Dask backend. Small enough
# that writing a store's last part (which nothing overlaps) is short and memory
# stays low; large enough that a chunk's fixed costs vanish.
CHUNK_SIZE = 250_000
MAX_AXIS_VALUES = 10_000_000
"""Most values one range axis may expand to (assumption: 80 MB as float64; a grid of
more configurations is built from several axes, never one list)."""


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: graphs × workload points × hardware grid.

    `workload` and `grid` map axis names to their values; `constraints` maps a
    result column to its (low, high) bounds; `objectives` a column to
    ``"max"`` or ``"min"``; `chunk_size` and `compression` lay out a store's parts.

    >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
    ...                    "constraints": {"area_mm2": 5}})
    >>> spec.constraints, spec.objectives
    ({'area_mm2': (-inf, 5.0)}, {'fps': 'max'})
    """

    graphs: tuple[str | Graph, ...]
    hardware: Accelerator
    workload: dict[str, list[float | str]] = field(default_factory=dict)
    grid: dict[str, np.ndarray] = field(default_factory=dict)
    constraints: dict[str, tuple[float, float]] = field(default_factory=dict)
    objectives: dict[str, Direction] = field(default_factory=lambda: {"fps": "max"})
    parallelism: Parallelism = "split"
    pipelined: bool = True
    fine: bool = False
    model: WorkloadModel = "realistic"
    chunk_size: int = CHUNK_SIZE
    compression: Compression = "none"

    def __repr__(self) -> str:
        """One line: graphs, accelerator, the length of each axis and the row count.

        >>> sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
        ...             "workload": {"rays": [1024, 4096]}, "grid": {"frequency_mhz": [500]}})
        SweepSpec(['neurex'] on 'neurex', workload {rays: 2}, grid {frequency_mhz: 1}, 2 rows)
        """
        names = [g if isinstance(g, str) else g.name for g in self.graphs]
        parts = [f"{names} on {self.hardware.name!r}"]
        for label, axes in (("workload", self.workload), ("grid", self.grid)):
            if axes:
                parts.append(f"{label} {{{', '.join(f'{k}: {len(v)}' for k, v in axes.items())}}}")
        rows = self.configurations
        parts.append(f"{rows:,} row{'' if rows == 1 else 's'}")
        return f"SweepSpec({', '.join(parts)})"

    @property
    def shape(self) -> tuple[int, ...]:
        """Lengths of the hardware axes.

        >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
        ...                    "workload": {"rays": [1024, 4096]},
        ...                    "grid": {"frequency_mhz": [500, 1000],
        ...                             "dram_bandwidth_gbps": [64, 128, 256]}})
        >>> spec.shape
        (2, 3)
        """
        return tuple(len(v) for v in self.grid.values())

    @property
    def hardware_points(self) -> int:
        """Accelerator variants per workload point.

        >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
        ...                    "workload": {"rays": [1024, 4096]},
        ...                    "grid": {"frequency_mhz": [500, 1000],
        ...                             "dram_bandwidth_gbps": [64, 128, 256]}})
        >>> spec.hardware_points
        6
        """
        return math.prod(self.shape)

    @property
    def workload_points(self) -> int:
        """Workload points per graph.

        >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
        ...                    "workload": {"rays": [1024, 4096]},
        ...                    "grid": {"frequency_mhz": [500, 1000],
        ...                             "dram_bandwidth_gbps": [64, 128, 256]}})
        >>> spec.workload_points
        2
        """
        return math.prod(len(v) for v in self.workload.values())

    @property
    def configurations(self) -> int:
        """Rows the sweep produces: graphs × workload points × hardware points.

        >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
        ...                    "workload": {"rays": [1024, 4096]},
        ...                    "grid": {"frequency_mhz": [500, 1000],
        ...                             "dram_bandwidth_gbps": [64, 128, 256]}})
        >>> spec.configurations  # 1 graph x 2 workload points x 6 variants
        12
        """
        return len(self.graphs) * self.workload_points * self.hardware_points

    @property
    def chunks(self) -> int:
        """Chunks of the sweep (a store's parts, the Dask backend's tasks): each graph's
        workload points times the chunks of the hardware grid, counted without
        listing them (a campaign may have millions).

        >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
        ...                    "workload": {"rays": [1024, 4096]},
        ...                    "grid": {"frequency_mhz": [500, 1000, 1500]}, "chunk_size": 2})
        >>> spec.chunks  # 2 points x (2 + 1 variants)
        4
        """
        per_point = -(-self.hardware_points // self.chunk_size)
        return len(self.graphs) * self.workload_points * per_point

    def points(self) -> Iterator[dict[str, float | str]]:
        """The workload points in order (the last axis fastest); one empty point without axes.

        >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
        ...                    "workload": {"rays": [1024, 4096]},
        ...                    "grid": {"frequency_mhz": [500, 1000],
        ...                             "dram_bandwidth_gbps": [64, 128, 256]}})
        >>> list(spec.points())
        [{'rays': 1024}, {'rays': 4096}]
        """
        for values in itertools.product(*self.workload.values()):
            yield dict(zip(self.workload, values, strict=True))

    def graph_at(self, index: int, point: Mapping[str, float | str]) -> Graph:
        """Graph number `index` with the workload `point` applied (and expanded when `fine`).

        >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
        ...                    "workload": {"rays": [1024, 4096]},
        ...                    "grid": {"frequency_mhz": [500, 1000],
        ...                             "dram_bandwidth_gbps": [64, 128, 256]}})
        >>> spec.graph_at(0, {"rays": 1024}).rays
        1024
        """
        return workload_graph(self.graphs[index], point, self.fine, self.model)


def sweep_spec(source: SweepSpec | Mapping[str, Any] | str | Path) -> SweepSpec:
    """A validated `SweepSpec` from a dict or a YAML/JSON file (see the module docstring).

    Any problem is an `InvalidInputError` naming the key and the value at fault. The
    graph and accelerator files a spec file names are found from the spec's folder.

    >>> sweep_spec({"graphs": "neurex", "hardware": "neurex",
    ...             "grid": {"frequency_mhz": {"start": 500, "stop": 1000, "step": 250}}})
    SweepSpec(['neurex'] on 'neurex', grid {frequency_mhz: 3}, 3 rows)
    """
    if isinstance(source, SweepSpec):
        return source
    if isinstance(source, str | Path):
        try:
            return _build(read_spec(source), f"{source}: ")
        except NerframeError as e:  # every fault of a spec file names the file
            message = str(e)
            shown = message if message.startswith(str(source)) else f"{source}: {message}"
            raise InvalidInputError(shown, e.culprit or str(source)) from None
    if not isinstance(source, Mapping):
        raise InvalidInputError(
            f"sweep_spec: give a mapping or a spec file, got {type(source).__name__}", "source"
        )
    return _build(dict(source), "")


def read_spec(path: str | Path) -> dict[str, Any]:
    """The mapping a YAML/JSON sweep spec file holds (validated by `sweep_spec`); a key
    given twice in one mapping is refused."""
    from nerframe.formats import parse

    data = parse(path, what="sweep spec", syntax="suffix")  # a .json spec is read as JSON
    if not isinstance(data, dict):
        keys = ", ".join(sorted(SweepSpecFile.__struct_fields__))
        raise InvalidInputError(f"{path}: a sweep spec is a mapping of {keys}", str(path))
    # the files a spec names are found from the spec's folder, wherever it is run from
    graphs = data.get("graphs")
    if isinstance(graphs, str):
        data["graphs"] = _relative_to(graphs, path, pipeline=True)
    elif isinstance(graphs, list):
        data["graphs"] = [_relative_to(g, path, pipeline=True) for g in graphs]
    if "hardware" in data:
        data["hardware"] = _relative_to(data["hardware"], path, pipeline=False)
    return data


def overlay(
    data: Mapping[str, Any],
    *,
    graphs: Sequence[str] = (),
    hardware: str | None = None,
    axes: Iterable[tuple[str, Sequence[float | str]]] = (),
    bounds: Iterable[tuple[str, str, float]] = (),
    options: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """Spec `data` (a spec file's, `read_spec`) with the command line's choices on top:
    `graphs` and `hardware` replace the spec's when given; each of `axes` (name,
    values) is added to the workload or the grid (`is_workload_axis`), an axis given
    twice refused; each of `bounds` (name, ``"max"`` or ``"min"``, value) sets that
    side of the figure's constraint; `options` (parallelism, chunk_size, ...) are set.
    Validated by `sweep_spec`.

    >>> data = overlay({"graphs": ["neurex"], "constraints": {"fps": 60}},
    ...                hardware="neurex", axes=[("rays", [1024]), ("frequency_mhz", [500])],
    ...                bounds=[("fps", "min", 30.0)])
    >>> data["workload"], data["grid"], data["constraints"]
    ({'rays': [1024]}, {'frequency_mhz': [500]}, {'fps': {'max': 60, 'min': 30.0}})
    """
    result = dict(data)
    if graphs:
        result["graphs"] = list(graphs)
    if hardware is not None:
        result["hardware"] = hardware
    # A field that is no mapping (grid: [1]) is kept as it is for `sweep_spec` to
    # refuse with the spec's name, unless the command line adds to it.
    fields = ("workload", "grid", "constraints")
    workload, grid, limits = (
        dict(result.get(key) or {}) if isinstance(result.get(key) or {}, Mapping) else None
        for key in fields
    )
    seen: set[str] = set()
    for name, values in axes:  # consumed in order: a caller may parse them lazily
        if name in seen:
            raise InvalidInputError(
                f"{name} is given twice; list all its values in one --vary", name
            )
        seen.add(name)
        key, axes_of = ("workload", workload) if is_workload_axis(name) else ("grid", grid)
        if axes_of is None:
            raise InvalidInputError(f"sweep spec: field {key!r} must be a mapping of axes", key)
        axes_of[name] = values
    for name, side, number in bounds:
        if limits is None:
            raise InvalidInputError(
                "sweep spec: field 'constraints' must be a mapping of figures", "constraints"
            )
        previous = limits.get(name, {})
        limits[name] = {**(previous if isinstance(previous, dict) else {"max": previous})}
        limits[name][side] = number
    for key, merged in zip(fields, (workload, grid, limits), strict=True):
        if merged is not None:
            result[key] = merged
    result.update(**(options or {}))
    return result


def _relative_to(name: object, spec: str | Path, *, pipeline: bool) -> object:
    """`name` (a built-in pipeline or accelerator, or a file) as found from `spec`'s folder."""
    from nerframe.formats import resolve

    if not isinstance(name, str):
        return name  # the declared model refuses it with its field path
    builtin = (name in PIPELINES or not Path(name).suffix) if pipeline else name.lower() in BUILTIN
    return name if builtin else resolve(name, spec)


def _declared(data: dict[str, Any], where: str) -> tuple[SweepSpecFile, dict[str, Any]]:
    """`data` checked against the declared spec, with the `Graph` and `Accelerator`
    objects a Python caller may give set aside (by placeholder name)."""
    from nerframe.formats import convert

    objects: dict[str, Any] = {}
    plain = dict(data)
    graphs = plain.get("graphs")
    if isinstance(graphs, Graph):
        graphs = [graphs]
    if isinstance(graphs, list | tuple):
        plain["graphs"] = [_placeholder(g, objects) for g in graphs]
    if isinstance(plain.get("hardware"), Accelerator):
        plain["hardware"] = _placeholder(plain["hardware"], objects)
    for key in ("workload", "grid"):
        if isinstance(plain.get(key), Mapping):
            plain[key] = {k: _plain(v) for k, v in plain[key].items()}
    return convert(plain, SweepSpecFile, source=where.removesuffix(": ") or "sweep spec"), objects


def _placeholder(value: object, objects: dict[str, Any]) -> object:
    if not isinstance(value, Graph | Accelerator):
        return value
    name = f"<{type(value).__name__} {len(objects)}>"
    objects[name] = value
    return name


def _plain(values: object) -> object:
    """Axis values a Python caller gave as numpy data or a range, as plain numbers."""
    if isinstance(values, np.ndarray | np.generic):
        return values.tolist()
    if isinstance(values, range | tuple):
        return [v.item() if isinstance(v, np.generic) else v for v in values]
    if isinstance(values, list):
        return [v.item() if isinstance(v, np.generic) else v for v in values]
    return values


def _build(data: dict[str, Any], where: str) -> SweepSpec:
    declared, objects = _declared(data, where)
    graphs = [declared.graphs] if isinstance(declared.graphs, str) else declared.graphs
    if not graphs:
        raise InvalidInputError(f"{where}graphs: give a list of pipelines or graph files")
    sources = tuple(objects.get(g) or g for g in graphs)
    accel = objects.get(declared.hardware) or accelerator(declared.hardware)
    spec = SweepSpec(
        graphs=sources,
        hardware=accel,
        workload={
            name: _workload_values(name, values, where)
            for name, values in (declared.workload or {}).items()
        },
        grid={
            name: hardware_values(name, _axis(values, name, where), accel)
            for name, values in (declared.grid or {}).items()
        },
        constraints={
            _figure(name, where, "constraint"): _bounds(name, bound, where)
            for name, bound in (declared.constraints or {}).items()
        },
        objectives={
            _figure(name, where, "objective"): direction
            for name, direction in (declared.objectives or {"fps": "max"}).items()
        },
        parallelism=declared.parallelism,
        pipelined=declared.pipelined,
        fine=declared.fine,
        model=declared.model,
        chunk_size=declared.chunk_size,
        compression=declared.compression,
    )
    names = [spec.graph_at(i, next(spec.points())).name for i in range(len(sources))]
    keys = [name_key(n) for n in names]  # names that read the same are the same
    twice = [n for n, k in zip(names, keys, strict=True) if keys.count(k) > 1]
    if twice:
        raise InvalidInputError(f"{where}graphs: two graphs are named {twice[0]!r}")
    for axis in spec.workload:
        if axis in spec.grid:
            raise InvalidInputError(f"{where}{axis!r} is both a workload and a hardware axis")
    return spec


def _axis(values: Axis | WorkloadAxis, name: str, where: str) -> list[int | float]:
    """The values of a declared axis: one number, a list, or a ``{start, stop, step}``
    range with stop included when reached."""
    if isinstance(values, int | float):
        return [values]
    if isinstance(values, str | list):
        listed: list[int | float | str] = [values] if isinstance(values, str) else [*values]
        numbers = [v for v in listed if not isinstance(v, str)]
        if len(numbers) < len(listed):
            text = next(v for v in listed if isinstance(v, str))
            raise InvalidInputError(f"{where}axis {name!r}: expected numbers, got {text!r}", name)
        if len(set(numbers)) < len(numbers):  # (two identical configurations, as --vary says)
            twice = next(v for i, v in enumerate(numbers) if v in numbers[:i])
            raise InvalidInputError(
                f"{where}axis {name!r} lists {twice:g} twice; give each value once", name
            )
        return numbers
    # counted before anything is allocated: a tiny step would ask for 134 GiB
    span = (values.stop - values.start) / values.step
    count = math.floor(span + 1e-9) + 1 if math.isfinite(span) else math.inf
    if count < 1:
        raise InvalidInputError(
            f"{where}axis {name!r}: empty range (start {values.start:g}, stop {values.stop:g})"
        )
    if count > MAX_AXIS_VALUES:
        shown = f"{count:,}" if math.isfinite(count) else "infinitely many"
        raise InvalidInputError(
            f"{where}axis {name!r}: the range has {shown} values, more than the "
            f"{MAX_AXIS_VALUES:,} an axis may hold; use a coarser step"
        )
    expanded: list[int | float] = (values.start + values.step * np.arange(count)).tolist()
    return expanded


def hardware_values(name: str, values: Sequence[float], accel: Accelerator) -> np.ndarray:
    """The hardware axis `name` as an array, checked against what the field allows."""
    integer, zero_ok = hardware_field(name, accel)[1:]
    if isinstance(values, str | bytes) or any(
        isinstance(v, bool | str | bytes) for v in np.asarray(values, dtype=object).reshape(-1)
    ):
        # numpy would read true as 1 and "200" as 200: booleans and text are never numbers
        raise InvalidInputError(
            f"sweep parameter {name!r}: values must be numbers, got {_short(values)}", name
        )
    try:
        array = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise InvalidInputError(f"sweep parameter {name!r}: values must be numbers") from None
    if array.ndim != 1 or array.size == 0:
        raise InvalidInputError(f"sweep parameter {name!r}: give a non-empty list of values")
    if not np.isfinite(array).all():
        raise InvalidInputError(f"sweep parameter {name!r}: values must be finite, got {values}")
    if integer and (array != np.round(array)).any():
        raise InvalidInputError(f"sweep parameter {name!r}: values must be integers, got {values}")
    if integer and (np.abs(array) > 2.0**53).any():
        # Beyond 2**53 a float holds no exact integer, and from 2**63 on the cast below
        # would wrap them to -2**63; no field takes anything near either.
        raise InvalidInputError(
            f"sweep parameter {name!r}: values must be integers of at most 2**53, got "
            f"{_short(values)}",
            name,
        )
    if (
        name == "frequency_mhz"
        and not ((array >= FREQUENCY_MHZ[0]) & (array <= FREQUENCY_MHZ[1])).all()
    ):
        raise InvalidInputError(
            f"sweep parameter {name!r}: values must lie in [0.001, 1e7] MHz, got {_short(values)}",
            name,
        )
    low_ok = array >= 0 if zero_ok else array > 0
    if not low_ok.all():
        bound = ">= 0" if zero_ok else "> 0"
        raise InvalidInputError(f"sweep parameter {name!r}: values must be {bound}, got {values}")
    return array.astype(np.int64) if integer else array


def hardware_field(name: str, accel: Accelerator) -> tuple[str, bool, bool]:
    """(Configurations field, integer-valued, zero allowed) of hardware axis `name`."""
    if name in ACCELERATOR_FIELDS:
        return ACCELERATOR_FIELDS[name]
    module, _, key = name.rpartition(".")
    names = [m.name for m in accel.modules]
    choices = [
        *ACCELERATOR_FIELDS,
        *WORKLOAD_FIELDS,
        *(f"{m}.{f}" for m in names for f in MODULE_FIELDS),
    ]
    if module not in names or key not in MODULE_FIELDS:
        raise InvalidInputError(
            f"unknown sweep parameter {name!r}{did_you_mean(name, choices)}; use one of "
            f"{', '.join(ACCELERATOR_FIELDS)} or MODULE.FIELD with MODULE in "
            f"{', '.join(names)} and FIELD in {', '.join(MODULE_FIELDS)} "
            f"(workload: {', '.join(WORKLOAD_FIELDS)}, scene or OPTYPE.PARAM)"
        )
    return MODULE_FIELDS[key]


def _short(values: object) -> str:
    text = repr(list(values) if isinstance(values, tuple | np.ndarray) else values)
    return text if len(text) <= 60 else text[:57] + "..."


def is_workload_axis(name: str) -> bool:
    """Whether `name` is a workload axis (a graph dimension, ``scene`` or ``OPTYPE.PARAM``)."""
    return name in WORKLOAD_FIELDS or name == "scene" or name.partition(".")[0] in op_types()


def _workload_values(name: str, values: Any, where: str) -> list[float | str]:
    if name == "scene":
        return _scenes(values, where)
    values = _axis(values, name, where)
    if not is_workload_axis(name):
        raise InvalidInputError(
            f"{where}unknown workload axis {name!r}"
            f"{did_you_mean(name, [*WORKLOAD_FIELDS, 'scene', *op_types()])}; use "
            f"{', '.join(WORKLOAD_FIELDS)}, scene or OPTYPE.PARAM (e.g. MLP.layer_width)"
        )
    if not isinstance(values, list | tuple) or not values:
        raise InvalidInputError(f"{where}workload axis {name!r}: give a non-empty list of values")
    for v in values:
        if isinstance(v, bool) or not isinstance(v, int | float) or not math.isfinite(v):
            raise InvalidInputError(
                f"{where}workload axis {name!r}: values must be numbers, got {v!r}"
            )
        if name in WORKLOAD_FIELDS and (v != int(v) or v < 1):
            raise InvalidInputError(
                f"{where}workload axis {name!r}: values must be integers >= 1, got {v!r}"
            )
        if abs(v) > 2**53:  # as for the hardware axes (`hardware_values`)
            raise InvalidInputError(
                f"{where}workload axis {name!r}: values must be at most 2**53, got {v!r}", name
            )
    return [int(v) if float(v).is_integer() else float(v) for v in values]


def _scenes(values: Any, where: str) -> list[float | str]:
    """The ``scene`` axis: standard scenes by name, each once."""
    listed = [values] if isinstance(values, str) else values
    if not isinstance(listed, list | tuple) or not listed:
        raise InvalidInputError(f"{where}workload axis 'scene': give a non-empty list of scenes")
    for i, value in enumerate(listed):
        if not isinstance(value, str):
            raise InvalidInputError(
                f"{where}workload axis 'scene': scenes are names, got {value!r}", "scene"
            )
        try:
            scene(value)
        except InvalidInputError as e:
            raise InvalidInputError(f"{where}workload axis 'scene': {e}", "scene") from None
        if value in listed[:i]:
            raise InvalidInputError(
                f"{where}workload axis 'scene': {value!r} is listed twice; give each scene once",
                "scene",
            )
    return list(listed)


def _figure(name: str, where: str, what: str) -> str:
    column = ALIASES.get(name, name)
    if column not in FIGURES:
        raise InvalidInputError(
            f"{where}unknown {what} {name!r}{did_you_mean(name, [*FIGURES, *ALIASES])}; "
            f"use one of {', '.join(FIGURES)} (or {', '.join(ALIASES)})"
        )
    return column


def _bounds(name: str, bound: float | Bounds, where: str) -> tuple[float, float]:
    low, high = (
        (-math.inf, float(bound))
        if isinstance(bound, int | float)
        else (
            -math.inf if bound.min is None else bound.min,
            math.inf if bound.max is None else bound.max,
        )
    )
    given = [float(bound)] if isinstance(bound, int | float) else [bound.min, bound.max]
    if all(v is None for v in given):
        raise InvalidInputError(
            f"{where}constraint {name!r}: give a number (a maximum) or {{min, max}}"
        )
    if not all(v is None or math.isfinite(v) for v in given):
        # an infinite bound constrains nothing, or everything: a typo either way
        raise InvalidInputError(
            f"{where}constraint {name!r}: bounds must be finite numbers, got {given}"
        )
    if low > high:
        raise InvalidInputError(f"{where}constraint {name!r}: min must not exceed max")
    return low, high


def spec_identity(spec: SweepSpec) -> dict[str, Any]:
    """Everything that determines a sweep's rows, as JSON data (a store's manifest holds it)."""
    from nerframe import __version__  # here: the package imports this module

    def digest(data: Any) -> str:
        text = json.dumps(data, sort_keys=True, default=str, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()

    graphs = []
    for source in spec.graphs:
        g = source if isinstance(source, Graph) else workload_graph(source, {}, False, spec.model)
        content = {
            "ops": g.ops.to_dicts(),
            "edges": g.edges.to_dicts(),
            "frame_pixels": g.frame_pixels,
            "kind": g.kind,
        }
        label = source if isinstance(source, str) else f"<Graph {g.name}>"
        graphs.append({"source": label, "name": g.name, "sha256": digest(content)})
    accel = {k: v for k, v in asdict(spec.hardware).items() if k not in ("path", "warnings")}
    return {
        "nerframe_version": __version__,
        "graphs": graphs,
        "accelerator": {"name": spec.hardware.name, "sha256": digest(accel)},
        # The categories of the rows' bottleneck_module Enum: a store written before
        # the DRAM could be named lacks this key, so it is not resumed into parts
        # whose Enum differs (its rows read as before).
        "bottlenecks": [*(m.name for m in spec.hardware.modules), DRAM_NAME],
        "workload": spec.workload,
        "grid": {name: values.tolist() for name, values in spec.grid.items()},
        "constraints": {
            k: [None if math.isinf(x) else x for x in v] for k, v in spec.constraints.items()
        },
        "parallelism": spec.parallelism,
        "pipelined": spec.pipelined,
        "fine": spec.fine,
        "model": spec.model,
        "chunk_size": spec.chunk_size,
        "compression": spec.compression,
    }

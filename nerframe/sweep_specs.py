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
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from nerframe.accelerator_model import Accelerator
from nerframe.builtin_pipelines import MODELS, WORKLOAD_FIELDS, workload_graph
from nerframe.errors import InvalidInputError, did_you_mean
from nerframe.graphs import Graph
from nerframe.hardware import accelerator
from nerframe.scene_table import scene
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
FIGURES = {
    "fps": "max",
    "frame_time_s": "min",
    "energy_per_frame_j": "min",
    "avg_power_w": "min",
    "area_mm2": "min",
    "dram_utilization": "max",
    "peak_tflops": "max",
    "frame_cycles": "min",
}
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
_KEYS = {
    "graphs",
    "hardware",
    "workload",
    "grid",
    "constraints",
    "objectives",
    "parallelism",
    "pipelined",
    "fine",
    "model",
    "chunk_size",
}


@dataclass(frozen=True)
class SweepSpec:
    """A validated sweep: graphs × workload points × hardware grid.

    `workload` and `grid` map axis names to their values; `constraints` maps a
    result column to its (low, high) bounds; `objectives` a column to
    ``"max"`` or ``"min"``.

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
    objectives: dict[str, str] = field(default_factory=lambda: {"fps": "max"})
    parallelism: str = "split"
    pipelined: bool = True
    fine: bool = False
    model: str = "realistic"
    chunk_size: int = CHUNK_SIZE

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

    Any problem is an `InvalidInputError` naming the key and the value at fault.

    >>> sweep_spec({"graphs": "neurex", "hardware": "neurex",
    ...             "grid": {"frequency_mhz": {"start": 500, "stop": 1000, "step": 250}}})
    SweepSpec(['neurex'] on 'neurex', grid {frequency_mhz: 3}, 3 rows)
    """
    if isinstance(source, SweepSpec):
        return source
    if isinstance(source, str | Path):
        return _build(read_spec(source), f"{source}: ")
    return _build(dict(source), "")


def read_spec(path: str | Path) -> dict[str, Any]:
    """The mapping a YAML/JSON sweep spec file holds (validated by `sweep_spec`); a key
    given twice in one mapping is refused."""
    try:
        data = yaml.load(Path(path).read_text(), Loader=_SpecLoader)
    except OSError as e:
        raise InvalidInputError(f"{path}: cannot read sweep spec ({e.strerror})") from None
    except InvalidInputError as e:
        raise InvalidInputError(f"{path}: {e}", e.culprit) from None
    except yaml.YAMLError as e:
        reason = str(e).splitlines()[0]
        raise InvalidInputError(f"{path}: not a YAML/JSON sweep spec ({reason})") from None
    if not isinstance(data, dict):
        keys = ", ".join(sorted(_KEYS))
        raise InvalidInputError(f"{path}: a sweep spec is a mapping of {keys}")
    return data


class _SpecLoader(yaml.SafeLoader):
    """YAML's safe loader, refusing a key given twice in one mapping (which YAML
    would resolve silently to the last value: a second value is a typo)."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool):
                continue  # an unhashable key: the safe loader's own error names it
            if key in seen:
                raise InvalidInputError(
                    f"key {key!r} is given twice in one mapping "
                    f"(line {key_node.start_mark.line + 1}); keep one",
                    str(key),
                )
            seen.add(key)
        return super().construct_mapping(node, deep)


def _build(data: dict[str, Any], where: str) -> SweepSpec:
    unknown = sorted(set(data) - _KEYS)
    if unknown:
        raise InvalidInputError(
            f"{where}unknown sweep spec key {unknown[0]!r}{did_you_mean(unknown[0], _KEYS)}; "
            f"keys: {', '.join(sorted(_KEYS))}"
        )
    graphs = data.get("graphs")
    if isinstance(graphs, str | Graph):
        graphs = [graphs]
    if not graphs or not isinstance(graphs, list | tuple):
        raise InvalidInputError(f"{where}graphs: give a list of pipelines or graph files")
    if data.get("hardware") is None:
        raise InvalidInputError(f"{where}hardware: name an accelerator (built-in or .json file)")
    hardware = data["hardware"]
    accel = hardware if isinstance(hardware, Accelerator) else accelerator(str(hardware))
    parallelism = data.get("parallelism", "split")
    if parallelism not in ("split", "instance"):
        raise InvalidInputError(
            f"{where}parallelism: choose split or instance, got {parallelism!r}"
        )
    model = data.get("model", "realistic")
    if model not in MODELS:
        raise InvalidInputError(f"{where}model: choose {' or '.join(MODELS)}, got {model!r}")
    chunk_size = data.get("chunk_size", CHUNK_SIZE)
    if isinstance(chunk_size, bool) or not isinstance(chunk_size, int) or chunk_size < 1:
        raise InvalidInputError(f"{where}chunk_size must be an integer >= 1, got {chunk_size!r}")
    for flag in ("pipelined", "fine"):
        if not isinstance(data.get(flag, False), bool):
            raise InvalidInputError(f"{where}{flag} must be true or false, got {data[flag]!r}")
    sources = tuple(g if isinstance(g, Graph) else str(g) for g in graphs)
    fine = data.get("fine", False)
    workload = {
        name: _workload_values(name, values, where)
        for name, values in _mapping(data, "workload", where).items()
    }
    spec = SweepSpec(
        graphs=sources,
        hardware=accel,
        workload=workload,
        grid={
            name: hardware_values(name, _axis(values, name, where), accel)
            for name, values in _mapping(data, "grid", where).items()
        },
        constraints={
            _figure(name, where, "constraint"): _bounds(name, bound, where)
            for name, bound in _mapping(data, "constraints", where).items()
        },
        objectives={
            _figure(name, where, "objective"): _direction(name, direction, where)
            for name, direction in (_mapping(data, "objectives", where) or {"fps": "max"}).items()
        },
        parallelism=parallelism,
        pipelined=data.get("pipelined", True),
        fine=fine,
        model=model,
        chunk_size=chunk_size,
    )
    names = [spec.graph_at(i, next(spec.points())).name for i in range(len(sources))]
    twice = [n for n in names if names.count(n) > 1]
    if twice:
        raise InvalidInputError(f"{where}graphs: two graphs are named {twice[0]!r}")
    for axis in spec.workload:
        if axis in spec.grid:
            raise InvalidInputError(f"{where}{axis!r} is both a workload and a hardware axis")
    return spec


def _mapping(data: dict[str, Any], key: str, where: str) -> dict[str, Any]:
    value = data.get(key) or {}
    if not isinstance(value, Mapping):
        raise InvalidInputError(f"{where}{key}: expected a mapping of names to values")
    return {str(k): v for k, v in value.items()}


def _axis(values: Any, name: str, where: str) -> Any:
    """List values, or a ``{start, stop, step}`` range with stop included when reached."""
    if not isinstance(values, Mapping):
        return [values] if isinstance(values, int | float) else values
    if set(values) != {"start", "stop", "step"}:
        raise InvalidInputError(f"{where}axis {name!r}: a range is {{start, stop, step}}")
    start, stop, step = (values[k] for k in ("start", "stop", "step"))
    if not all(isinstance(v, int | float) for v in (start, stop, step)) or step <= 0:
        raise InvalidInputError(f"{where}axis {name!r}: a range needs numbers and a step > 0")
    count = math.floor((stop - start) / step + 1e-9) + 1
    if count < 1:
        raise InvalidInputError(f"{where}axis {name!r}: empty range {dict(values)}")
    return (start + step * np.arange(count)).tolist()


def hardware_values(name: str, values: Sequence[float], accel: Accelerator) -> np.ndarray:
    """The hardware axis `name` as an array, checked against what the field allows."""
    integer, zero_ok = hardware_field(name, accel)[1:]
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


def _bounds(name: str, bound: Any, where: str) -> tuple[float, float]:
    if isinstance(bound, int | float) and not isinstance(bound, bool):
        bound = {"max": bound}
    if not isinstance(bound, Mapping) or not bound or set(bound) - {"min", "max"}:
        raise InvalidInputError(
            f"{where}constraint {name!r}: give a number (a maximum) or {{min, max}}"
        )
    low, high = float(bound.get("min", -math.inf)), float(bound.get("max", math.inf))
    if math.isnan(low) or math.isnan(high) or low > high:
        raise InvalidInputError(f"{where}constraint {name!r}: min must not exceed max")
    return low, high


def _direction(name: str, direction: Any, where: str) -> str:
    if direction not in ("max", "min"):
        raise InvalidInputError(f"{where}objective {name!r}: say max or min, got {direction!r}")
    return str(direction)


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
    }

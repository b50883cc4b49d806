"""nerframe: vectorized performance models of neural-rendering workloads.

Operators are rows of polars tables; numba kernels compute their costs and
list-schedule them onto accelerator modules; DuckDB queries the Parquet result
stores and altair draws the charts.

>>> import nerframe
>>> g = nerframe.pipeline("neurex")                      # 24 samples per ray
>>> int(nerframe.costs(g.ops)["flops"].sum())
2957770752
>>> int(nerframe.costs(nerframe.pipeline("neurex", model="spec").ops)["flops"].sum())
7887388672
>>> nerframe.schedule(g, "neurex").summary["bottleneck_module"].item()
'systolic_array_32x32'
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from nerframe.errors import (
    CycleError,
    InvalidInputError,
    NerframeError,
    NerframeWarning,
    StoreError,
    UnavailableError,
    UnmappedError,
)

if TYPE_CHECKING:
    from nerframe import charts as charts
    from nerframe import trace as trace
    from nerframe.accelerator_model import Accelerator
    from nerframe.analysis import Analysis, analyze
    from nerframe.builtin_pipelines import expand, pipeline, pipelines, read_graph
    from nerframe.costing import costs
    from nerframe.graphs import Graph, graph
    from nerframe.hardware import accelerator, accelerators
    from nerframe.ops import operators
    from nerframe.probing import probe
    from nerframe.rooflines import System, roofline
    from nerframe.scene_table import scenes
    from nerframe.scheduling import Schedule, schedule
    from nerframe.sql import query
    from nerframe.sweeps.charts import pareto_chart, sensitivity_chart
    from nerframe.sweeps.results import pareto
    from nerframe.sweeps.runner import sweep
    from nerframe.sweeps.spec import SweepSpec, sweep_spec
    from nerframe.taxonomy import catalogue
    from nerframe.trace import TracedGraph, trace_graph
    from nerframe.validation import validate

_HOMES = {
    "Accelerator": "accelerator_model",
    "Analysis": "analysis",
    "analyze": "analysis",
    "pipeline": "builtin_pipelines",
    "pipelines": "builtin_pipelines",
    "costs": "costing",
    "Graph": "graphs",
    "expand": "builtin_pipelines",
    "graph": "graphs",
    "read_graph": "builtin_pipelines",
    "accelerator": "hardware",
    "accelerators": "hardware",
    "operators": "ops",
    "probe": "probing",
    "System": "rooflines",
    "roofline": "rooflines",
    "scenes": "scene_table",
    "Schedule": "scheduling",
    "schedule": "scheduling",
    "query": "sql",
    "pareto_chart": "sweeps.charts",
    "sensitivity_chart": "sweeps.charts",
    "pareto": "sweeps.results",
    "SweepSpec": "sweeps.spec",
    "sweep_spec": "sweeps.spec",
    "sweep": "sweeps.runner",
    "catalogue": "taxonomy",
    "TracedGraph": "trace",
    "trace_graph": "trace",
    "validate": "validation",
}
"""Where each public name lives. `import nerframe` loads none of these modules: a
name's module is imported when the name is first used, so a command pays only for
what it runs (altair, DuckDB and the sweep and trace machinery take longer to
import than a small command takes to run)."""

_SUBPACKAGES = ("charts", "trace")

if not TYPE_CHECKING:  # type checkers see the imports above instead

    def __getattr__(name: str) -> Any:
        if name in _HOMES:
            value = getattr(importlib.import_module(f"nerframe.{_HOMES[name]}"), name)
        elif name in _SUBPACKAGES:
            value = importlib.import_module(f"nerframe.{name}")
        else:
            raise AttributeError(f"module 'nerframe' has no attribute {name!r}")
        globals()[name] = value  # later uses are plain attribute look-ups
        return value

    def __dir__() -> list[str]:
        return sorted({*globals(), *_HOMES, *_SUBPACKAGES})


__all__ = [
    "Accelerator",
    "Analysis",
    "CycleError",
    "Graph",
    "InvalidInputError",
    "NerframeError",
    "NerframeWarning",
    "Schedule",
    "StoreError",
    "SweepSpec",
    "System",
    "TracedGraph",
    "UnavailableError",
    "UnmappedError",
    "accelerator",
    "accelerators",
    "analyze",
    "catalogue",
    "costs",
    "expand",
    "graph",
    "operators",
    "pareto",
    "pareto_chart",
    "pipeline",
    "pipelines",
    "probe",
    "query",
    "read_graph",
    "roofline",
    "scenes",
    "schedule",
    "sensitivity_chart",
    "sweep",
    "sweep_spec",
    "trace_graph",
    "validate",
]
__version__ = "0.1.0"  # the one place it is written: pyproject.toml reads it

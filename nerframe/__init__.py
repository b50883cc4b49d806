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
'index_generation_unit'
"""

from nerframe.accelerator_model import Accelerator
from nerframe.analysis import Analysis, analyze
from nerframe.builtin_pipelines import pipeline, pipelines
from nerframe.costing import costs
from nerframe.errors import (
    CycleError,
    InvalidInputError,
    NerframeError,
    NerframeWarning,
    StoreError,
    UnmappedError,
)
from nerframe.graphs import Graph, expand, graph, read_graph
from nerframe.hardware import accelerator, accelerators
from nerframe.ops import operators
from nerframe.probing import probe
from nerframe.rooflines import System, roofline
from nerframe.scheduling import Schedule, schedule
from nerframe.sql import query
from nerframe.sweep_charts import pareto_chart, sensitivity_chart
from nerframe.sweep_results import pareto
from nerframe.sweep_specs import SweepSpec, sweep_spec
from nerframe.sweeps import sweep
from nerframe.taxonomy import catalogue
from nerframe.trace import TracedGraph, trace_graph
from nerframe.validation import validate

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
    "schedule",
    "sensitivity_chart",
    "sweep",
    "sweep_spec",
    "trace_graph",
    "validate",
]
__version__ = "0.1.0"

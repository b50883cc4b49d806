"""nerframe: vectorized performance models of neural-rendering workloads.

Operators are rows of polars tables; numba kernels compute their costs and
list-schedule them onto accelerator modules; DuckDB queries the Parquet result
stores and altair draws the charts.

>>> import nerframe
>>> g = nerframe.pipeline("neurex")
>>> int(nerframe.costs(g.ops)["flops"].sum())
7887388672
>>> nerframe.schedule(g, "neurex").summary["bottleneck_module"].item()
'index_generation_unit'
"""

from nerframe.analyze import Analysis, analyze
from nerframe.catalogue import catalogue
from nerframe.costs import costs
from nerframe.errors import NerframeError, UnmappedError
from nerframe.graph import Graph, expand, graph, read_graph
from nerframe.hardware import Accelerator, accelerator, accelerators
from nerframe.ops import operators
from nerframe.pipelines import pipeline, pipelines
from nerframe.query import query
from nerframe.roofline import System, roofline
from nerframe.schedule import Schedule, schedule
from nerframe.sweep import sweep

__all__ = [
    "Accelerator",
    "Analysis",
    "Graph",
    "NerframeError",
    "Schedule",
    "System",
    "UnmappedError",
    "accelerator",
    "accelerators",
    "analyze",
    "catalogue",
    "costs",
    "expand",
    "graph",
    "operators",
    "pipeline",
    "pipelines",
    "query",
    "read_graph",
    "roofline",
    "schedule",
    "sweep",
]
__version__ = "0.1.0"

"""nerframe: vectorized performance models of neural-rendering workloads.

>>> import nerframe
>>> g = nerframe.pipeline("neurex")
>>> int(nerframe.costs(g.ops)["flops"].sum())
7887388672
"""

from nerframe.catalogue import catalogue
from nerframe.costs import costs
from nerframe.errors import NerframeError
from nerframe.graph import Graph, expand, graph, read_graph
from nerframe.ops import operators
from nerframe.pipelines import pipeline, pipelines

__all__ = [
    "Graph",
    "NerframeError",
    "catalogue",
    "costs",
    "expand",
    "graph",
    "operators",
    "pipeline",
    "pipelines",
    "read_graph",
]
__version__ = "0.1.0"

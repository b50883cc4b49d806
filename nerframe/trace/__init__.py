"""Traces of live PyTorch models: capture, classification, and the operator graph.

- `capture` records a model's module calls (torch needed: ``nerframe[trace]``);
- `write_trace` / `read_trace`: the documented trace file (``*.trace.json``);
- `trace_graph` / `read_traced_graph` classify the calls with class maps
  (packaged ``core`` and ``nerfstudio`` maps, plus the user's) into a `TracedGraph`;
- `compare` sets each traced op's measured time beside its roofline time;
- `read_dag_pickle` imports the original framework's pickled execution DAGs safely.

A trace file is accepted wherever a graph file is (``nerframe.read_graph``).

>>> import nerframe
>>> nerframe.trace.class_map().match(["torch.nn.modules.activation.ReLU"]).ignored
True
"""

from nerframe.trace.capture import capture
from nerframe.trace.classify import class_map
from nerframe.trace.ingest import TracedGraph, graph_document, read_traced_graph, trace_graph
from nerframe.trace.tracefile import Call, Trace, is_trace_file, read_trace, write_trace

__all__ = [
    "Call",
    "Trace",
    "TracedGraph",
    "capture",
    "class_map",
    "graph_document",
    "is_trace_file",
    "read_trace",
    "read_traced_graph",
    "trace_graph",
    "write_trace",
]

"""The option strings nerframe's API accepts, as `typing.Literal` aliases (one home).

A signature that takes one of these says so in its type, so that a type checker
catches ``parallelism="splt"`` before the run does; the tuples the code checks at
run time are derived from the same aliases (``typing.get_args``), so the two never
disagree.

>>> from typing import get_args
>>> get_args(Dataflow)
('os', 'ws', 'is')
"""

from __future__ import annotations

from typing import Literal

Dataflow = Literal["os", "ws", "is"]
"""A systolic array's dataflow: output, weight or input stationary."""

WorkUnit = Literal["flop", "sample", "ray", "pixel", "gaussian", "lookup"]
"""What a module's throughput counts (`nerframe.taxonomy.WORK_UNITS`)."""

AcceleratorKind = Literal["accelerator", "gpu"]
"""What an accelerator file describes: a dedicated accelerator or a GPU."""

SourceFormat = Literal["nerframe", "rendersim"]
"""The format an accelerator was read from: nerframe's own or the original framework's."""

Parallelism = Literal["split", "instance"]
"""How an op uses its module: every instance (``split``) or one (``instance``)."""

WorkloadModel = Literal["realistic", "spec"]
"""The workload model of the built-in pipelines: the papers' implementations or the
spec's reference figures."""

Backend = Literal["local", "dask"]
"""Where a sweep runs: in this process or on a Dask cluster."""

Compression = Literal["none", "lz4", "zstd"]
"""How a sweep store's parts are compressed: not at all, LZ4 (fast) or Zstandard (small)."""

Direction = Literal["max", "min"]
"""Whether an objective (a result column) is better larger or smaller."""

GraphKind = Literal["inference", "training"]
"""What one run of a graph is: a frame's inference or a training iteration."""

EdgeKind = Literal["data", "feedback"]
"""A data edge (a precedence constraint) or a feedback edge (kept, never scheduled)."""

FileFormat = Literal["csv", "json", "parquet"]
"""A table file that DuckDB writes as it reads the rows (`nerframe.sql.Result.write`)."""

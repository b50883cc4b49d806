"""Operator graphs: an ops table, an edges table, and the fine (expanded) graph.

>>> import nerframe
>>> g = nerframe.pipeline("neurex")
>>> fine = nerframe.expand(g)
>>> fine.ops["op_type"].to_list()[1:4]
['IndexGeneration', 'HashLookup', 'Interpolation']
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from functools import cached_property
from pathlib import Path
from typing import Any, cast

import numpy as np
import polars as pl

from nerframe._typing import GraphKind
from nerframe.errors import CycleError, InvalidInputError, NerframeError, lone_surrogate
from nerframe.kernels.dag import Dag, dag
from nerframe.kernels.faults import CyclicEdgesError
from nerframe.ops import operators
from nerframe.schemas import EDGE_KIND, EDGES
from nerframe.taxonomy import op_types


def per_ray_samples(ops: pl.DataFrame) -> int:
    """N per ray (Gaussians per pixel): the largest N of the batch-scope rows whose B
    is the batch's rays, B's largest value. Rows with another B count other things
    (per-tile lists of Sorting or RowGeneration, 834 long in gbu), not samples of a
    ray, and so does an ``OccupancyMarch`` row's N (march steps, most of them
    skipped); 0 without batch-scope rows.

    >>> per_ray_samples(pl.DataFrame({"op_type": ["Sorting", "OccupancyMarch", "MLP"],
    ...     "scope": ["batch"] * 3, "B": [57600, 921600, 921600], "N": [834, 394, 64]}))
    64
    """
    rows = ops.filter(
        (pl.col("scope") == "batch")
        & pl.col("B").is_not_null()
        & (pl.col("op_type").cast(pl.String) != "OccupancyMarch")
    )
    if rows.is_empty():
        return 0
    value = rows.filter(pl.col("B") == pl.col("B").max())["N"].max()
    return 0 if value is None else int(cast(int, value))


@dataclass(frozen=True)
class Graph:
    """A validated operator graph.

    `ops` has op ids ``0..n-1`` in row order; `edges` has ``data`` edges (a DAG,
    the precedence constraints) and ``feedback`` edges (a training iteration's
    update flowing into the next; kept, never scheduled). `frame_pixels` is how
    many pixels one frame holds; `rendered_fraction` the share of them the graph
    renders (the rest are warped from earlier frames, as CICERO does). Ops of
    scope ``batch`` run once per batch of B rays, ops of scope ``frame`` once per
    frame (see `nerframe.schedule`).

    >>> import nerframe
    >>> g = nerframe.pipeline("neurex")
    >>> g.rays, g.batches, g.data_edges()[1].tolist()
    (4096, 157, [1, 2, 3, 4])
    """

    name: str
    ops: pl.DataFrame
    edges: pl.DataFrame
    frame_pixels: int
    kind: GraphKind = "inference"
    rendered_fraction: float = 1.0

    def __repr__(self) -> str:
        """One line: name, kind, op and edge counts, frame size.

        >>> import nerframe
        >>> nerframe.pipeline("neurex")
        Graph('neurex', inference, 5 ops, 4 edges, frame_pixels=640000)
        """
        return (
            f"Graph({self.name!r}, {self.kind}, {self.ops.height} ops, "
            f"{self.edges.height} edges, frame_pixels={self.frame_pixels})"
        )

    @cached_property
    def rays(self) -> int:
        """B: rays (or pixels) in one batch, the largest B of the graph's
        batch-scope rows (0 when every row is frame-scoped).

        >>> import nerframe
        >>> nerframe.pipeline("neurex", rays=1024).rays
        1024
        """
        rays = self.ops.get_column("B").filter(self._batch_scoped).drop_nulls().to_numpy()
        return int(rays.max(initial=0))

    @cached_property
    def samples(self) -> int:
        """N per ray (for Gaussian splatting, Gaussians per pixel): `per_ray_samples`.

        >>> import nerframe
        >>> nerframe.pipeline("neurex").samples, nerframe.pipeline("gbu").samples
        (24, 167)
        """
        return per_ray_samples(self.ops)

    # A Graph is immutable and validated once, so what the scheduler derives from
    # its tables (scopes, CSR, topological order, phases) is computed once per graph,
    # however often and on however many accelerators it is scheduled.
    @cached_property
    def _batch_scoped(self) -> pl.Series:
        return self.ops.get_column("scope") == "batch"

    @cached_property
    def _dag(self) -> Dag:
        return _dag(self)

    @cached_property
    def _phases(self) -> np.ndarray:
        return _phases(self)

    @property
    def rendered_pixels(self) -> int:
        """Pixels of a frame that run the graph: ``ceil(frame_pixels * rendered_fraction)``.

        >>> import nerframe
        >>> g = nerframe.pipeline("cicero")  # renders 12% of an 800x800 frame, warps the rest
        >>> g.frame_pixels, g.rendered_fraction, g.rendered_pixels
        (640000, 0.12, 76800)
        """
        return math.ceil(self.frame_pixels * self.rendered_fraction)

    @property
    def batches(self) -> int:
        """Batches per frame: ``ceil(rendered_pixels / B)`` (0 without batch-scope rows).

        >>> import nerframe
        >>> nerframe.pipeline("neurex").batches  # ceil(640000 / 4096)
        157
        """
        return -(-self.rendered_pixels // self.rays) if self.rays else 0

    def data_edges(self) -> tuple[np.ndarray, np.ndarray]:
        """(src, dst) of the data edges as int64 arrays.

        >>> import nerframe
        >>> src, dst = nerframe.pipeline("neurex").data_edges()
        >>> src.tolist(), dst.tolist()
        ([0, 1, 2, 2], [1, 2, 3, 4])
        """
        data = self.edges.get_column("kind") == "data"
        src, dst = (self.edges.get_column(end).filter(data).to_numpy() for end in ("src", "dst"))
        return src.astype(np.int64), dst.astype(np.int64)


def graph(
    name: str,
    ops: Iterable[Mapping[str, object]] | pl.DataFrame,
    edges: Iterable[tuple[int, int] | tuple[int, int, str]] | pl.DataFrame = (),
    *,
    frame_pixels: int = 800 * 800,
    kind: GraphKind = "inference",
    rendered_fraction: float = 1.0,
) -> Graph:
    """A validated `Graph` from ops records (or an ops DataFrame) and edges.

    Edges are ``(src, dst)`` or ``(src, dst, kind)`` tuples, or a DataFrame
    with ``src``, ``dst`` and optionally ``kind`` columns. Raises `InvalidInputError`
    for an edge to a missing op, a cycle among data edges (naming its ops), a
    frame-scoped op between batch-scoped ones, or a `rendered_fraction` outside (0, 1].

    >>> g = graph("tiny", [{"op_type": "UniformSampler", "B": 64, "N": 8},
    ...                    {"op_type": "RGBRenderer", "B": 64, "N": 8}], [(0, 1)])
    >>> g.edges.rows()
    [('tiny', 0, 1, 'data')]
    """
    if isinstance(name, str) and lone_surrogate(name):
        raise InvalidInputError(f"graph name {name!a}: not UTF-8 text (a lone surrogate)", name)
    _check_frame_pixels(frame_pixels, f"graph {name!r}: frame_pixels")
    table = operators(ops, graph=name).with_columns(graph=pl.lit(name))
    if table.is_empty():
        raise InvalidInputError(f"graph {name!r} has no ops", "ops")
    ids = table["op_id"].to_list()
    if ids != list(range(len(ids))):
        raise InvalidInputError(f"graph {name!r}: op ids must be 0..{len(ids) - 1} in row order")
    if not isinstance(edges, pl.DataFrame):
        rows = [tuple(e) + (("data",) if len(e) == 2 else ()) for e in edges]
        for row in rows:
            # a polars cast would truncate 1.9 and take true as 1: an op id is an integer
            if len(row) != 3 or not all(
                isinstance(v, int | np.integer) and not isinstance(v, bool) for v in row[:2]
            ):
                raise InvalidInputError(
                    f"graph {name!r}: edge {row[:3]!r} must be (src, dst) or (src, dst, kind) "
                    "with integer op ids",
                    "edges",
                )
        edges = pl.DataFrame(rows, schema=["src", "dst", "kind"], orient="row")
    if "kind" not in edges.columns:
        edges = edges.with_columns(kind=pl.lit("data"))
    kinds = edges.get_column("kind").cast(pl.String)
    known = kinds.is_in(EDGE_KIND.categories.to_list()).fill_null(False)
    if not known.all():
        bad = kinds.filter(~known)[0]
        raise InvalidInputError(
            f"graph {name!r}: edge kind must be 'data' or 'feedback', got {bad!r}"
        )
    try:
        edges = edges.select(pl.lit(name).alias("graph"), "src", "dst", "kind").cast(EDGES)
    except (pl.exceptions.PolarsError, TypeError) as e:
        reason = str(e).splitlines()[0]
        raise InvalidInputError(
            f"graph {name!r}: edges must be integer op ids ({reason})"
        ) from None
    bad = edges.filter(~pl.col("src").is_in(ids) | ~pl.col("dst").is_in(ids))
    if bad.height:
        src, dst = bad.row(0)[1:3]
        raise InvalidInputError(
            f"graph {name!r}: edge {src}->{dst} points to a missing op "
            f"(op ids are 0..{len(ids) - 1})"
        )
    if isinstance(rendered_fraction, bool) or not 0 < rendered_fraction <= 1:
        raise InvalidInputError(
            f"graph {name!r}: rendered_fraction must be a number in (0, 1], "
            f"got {rendered_fraction!r}"
        )
    result = Graph(name, table, edges, int(frame_pixels), kind, float(rendered_fraction))
    phases(result)
    return result


def phases(g: Graph) -> np.ndarray:
    """The phase of every op in its frame, checking the data edges: 0 (``pre``,
    frame-scoped work before the batches), 1 (``batch``) or 2 (``post``).

    A frame-scoped op runs before the batches (phase 0) unless a batch-scoped op
    precedes it, then after them (phase 2); batch-scoped ops are phase 1. A
    frame-scoped op with batch-scoped ops both upstream and downstream cannot run
    once per frame: `NerframeError` naming it. A cycle among data edges is a
    `nerframe.CycleError` (see `dag_of`).

    >>> import nerframe
    >>> phases(nerframe.pipeline("gsarch")).tolist()
    [0, 0, 0, 1, 1, 1, 1, 1, 2, 2]
    """
    return g._phases.copy()


def _phases(g: Graph) -> np.ndarray:
    batch = g._batch_scoped.to_numpy()
    d = g._dag
    if batch.all():
        return np.ones(batch.size, np.int64)
    succ = [d.succ_idx[d.succ_ptr[i] : d.succ_ptr[i + 1]].tolist() for i in range(batch.size)]
    after_batch = np.zeros(batch.size, bool)  # a batch-scoped op precedes it
    for op in d.topo.tolist():
        for b in succ[op]:
            after_batch[b] |= after_batch[op] or batch[op]
    before_batch = np.zeros(batch.size, bool)  # a batch-scoped op follows it
    for op in d.topo[::-1].tolist():
        before_batch[op] = any(before_batch[b] or batch[b] for b in succ[op])
    stuck = ~batch & after_batch & before_batch
    if stuck.any():
        op = int(np.argmax(stuck))
        names = g.ops["op_type"].to_list()
        raise InvalidInputError(
            f"graph {g.name!r}: op {op} ({names[op]}) has scope 'frame' but lies between "
            "batch-scoped ops (a batch-scoped op precedes and another follows it); make it "
            "'batch' or move it before or after the batch-scoped part"
        )
    return np.where(batch, 1, np.where(after_batch, 2, 0))


def topological_order(g: Graph) -> np.ndarray:
    """Op ids in a topological order of the data edges; a cycle is a `nerframe.CycleError`.

    >>> import nerframe
    >>> topological_order(nerframe.pipeline("neurex")).tolist()
    [0, 1, 2, 3, 4]
    """
    topo: np.ndarray = dag_of(g).topo
    return topo


def dag_of(g: Graph) -> Dag:
    """The data edges of `g` as CSR arrays and a topological order (`kernels.dag.Dag`).

    A cycle raises `nerframe.CycleError` naming the ops on it with their types.

    >>> import nerframe
    >>> dag_of(nerframe.pipeline("neurex")).succ_idx.tolist()
    [1, 2, 3, 4]
    """
    return g._dag


def _dag(g: Graph) -> Dag:
    src, dst = g.data_edges()
    try:
        return dag(g.ops.height, src, dst)
    except CyclicEdgesError as e:
        names = g.ops["op_type"].to_list()
        shown = " -> ".join(f"{i} ({names[i]})" for i in [*e.cycle, e.cycle[0]])
        raise CycleError(e.cycle, f"graph {g.name!r}: data edges form a cycle: {shown}") from None


def expand_graph(g: Graph) -> Graph:
    """The fine graph: every composite row replaced by a chain of its stage rows
    (`nerframe.expand` takes a built-in pipeline's name too).

    Stage rows keep the composite's parameters (those their op type takes) and
    its backward flag; incoming edges attach to the first stage and outgoing
    edges to the last. Op ids are renumbered in order. FLOPs are conserved:
    the stages of FrustumCullingProjection see the culled Gaussian count.

    >>> import nerframe
    >>> expand_graph(nerframe.pipeline("neurex")).ops.height
    7
    """
    if not isinstance(g, Graph):
        raise InvalidInputError(
            f"expand: give a Graph or a pipeline name, got {type(g).__name__}", "g"
        )
    records: list[dict[str, object]] = []
    first: dict[int, int] = {}
    last: dict[int, int] = {}
    chains: list[tuple[int, int]] = []
    for row in g.ops.iter_rows(named=True):
        stages = op_types()[row["op_type"]].stages or (row["op_type"],)
        first[row["op_id"]] = len(records)
        for position, stage in enumerate(stages):
            if position:
                chains.append((len(records) - 1, len(records)))
            records.append(_stage(row, stage, position))
        last[row["op_id"]] = len(records) - 1
    edges = [(last[src], first[dst], kind) for _, src, dst, kind in g.edges.iter_rows()] + [
        (a, b, "data") for a, b in chains
    ]
    edges.sort(key=lambda e: (e[0], e[1], e[2]))
    return replace(g, ops=graph(g.name, records, edges).ops, edges=_edges(g.name, edges))


def _edges(name: str, edges: list[tuple[int, int, str]]) -> pl.DataFrame:
    return pl.DataFrame(
        [(name, *e) for e in edges], schema=["graph", "src", "dst", "kind"], orient="row"
    ).cast(EDGES)


def _stage(row: Mapping[str, Any], stage: str, position: int) -> dict[str, object]:
    """The record of one stage of a composite row."""
    record = {key: row[key] for key in ("backward", "bitwidth", "scope")} | {"op_type": stage}
    record.update({p: row[p] for p in op_types()[stage].parameters if row.get(p) is not None})
    if row["op_type"] == "FrustumCullingProjection" and position > 0:
        # Stages after culling see only the kept Gaussians: ceil(cull_ratio * G).
        record["G"] = math.ceil(row["cull_ratio"] * row["G"])
    return record


MAX_FRAME_PIXELS = 2**40
"""Largest frame: frame cycles (batches x interval) stay far inside int64."""


def _check_frame_pixels(value: object, what: str) -> None:
    if isinstance(value, bool) or not (
        isinstance(value, int | np.integer) and 1 <= value <= MAX_FRAME_PIXELS
    ):
        raise InvalidInputError(
            f"{what} must be an integer >= 1 and <= 2**40, got {value!r}", "frame_pixels"
        )


def read_graph_file(path: str | Path) -> Graph:
    """A graph from a JSON or YAML graph file holding ``{"name", "ops": [records],
    "edges": [[src, dst] or [src, dst, kind] or {"src", "dst", "kind"}],
    "frame_pixels", "rendered_fraction", "kind"}``.

    Only ``ops`` is required; the name defaults to the file's stem. An op
    record may give its ``scope`` (``frame`` or ``batch``). `nerframe.read_graph`
    reads trace files too.

    >>> import json, pathlib, tempfile
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "tiny.json"
    >>> _ = path.write_text(json.dumps({"ops": [{"op_type": "Sorting", "B": 8, "N": 4}]}))
    >>> read_graph_file(path)
    Graph('tiny', inference, 1 ops, 0 edges, frame_pixels=640000)
    """
    path = Path(path)
    from nerframe.formats import load
    from nerframe.formats.graph import GraphFile, edge_tuple

    document = load(path, GraphFile, what="graph file", syntax="suffix")
    edges = [edge_tuple(e, f"{path}: field 'edges[{i}]'") for i, e in enumerate(document.edges)]
    _check_frame_pixels(document.frame_pixels, f"{path}: frame_pixels")
    try:
        return graph(
            path.stem if document.name is None else document.name,
            document.ops,
            edges,
            frame_pixels=document.frame_pixels,
            kind=document.kind,
            rendered_fraction=document.rendered_fraction,
        )
    except NerframeError as e:
        raise InvalidInputError(f"{path}: {e}", e.culprit) from None

"""The operator DAG of one pipeline drawn in layers, data and feedback edges."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import altair as alt
import polars as pl

from nerframe.charts.tables import MAX_ROWS, fitting, largest, one_value, op_label, plain, require
from nerframe.charts.templates import Parts, filled
from nerframe.charts.theme import Chart, category_color
from nerframe.errors import CycleError, InvalidInputError
from nerframe.graphs import Graph
from nerframe.kernels.dag import dag, depths
from nerframe.kernels.faults import CyclicEdgesError

_MAX_WIDTH = 1100
_MAX_HEIGHT = 900


def _layers(ops: pl.DataFrame, data_edges: pl.DataFrame, graph: str) -> pl.DataFrame:
    """Longest path (in edges) from any source to each op, over one topological order."""
    index = ops.select("op_id").with_row_index("i")
    ends = data_edges.join(index, left_on="src", right_on="op_id").join(
        index, left_on="dst", right_on="op_id", suffix="_dst"
    )
    try:
        order = dag(ops.height, ends["i"].to_numpy(), ends["i_dst"].to_numpy())
    except CyclicEdgesError as e:
        raise CycleError(
            e.cycle, f"graph_chart: the data edges of {graph!r} form a cycle"
        ) from None
    return ops.select("op_id", layer=pl.Series(depths(order)))


def graph_chart(ops: pl.DataFrame | Graph, edges: pl.DataFrame | None = None) -> Chart:
    """The operator DAG of one pipeline (its `ops` and `edges` tables, or a `Graph`), in
    layers (layer = longest path from a source over data edges); nodes labelled by op
    type (``(B)`` for backward), data edges solid, feedback edges dashed.

    >>> import nerframe
    >>> g = nerframe.pipeline("neurex")
    >>> graph_chart(g.ops, g.edges).to_dict()["title"]
    {'text': 'Operator graph of neurex', 'subtitle': '5 ops'}
    >>> graph_chart(g).to_dict() == graph_chart(g.ops, g.edges).to_dict()
    True
    """
    return _draw(*_prepare(ops, edges))


def graph_spec(ops: pl.DataFrame | Graph, edges: pl.DataFrame | None = None) -> dict[str, Any]:
    """The spec of `graph_chart`, drawn from a template (`nerframe.charts.templates`).

    >>> import nerframe
    >>> g = nerframe.pipeline("neurex")
    >>> graph_spec(g.ops, g.edges)["title"]
    {'text': 'Operator graph of neurex', 'subtitle': '5 ops'}
    """
    return filled(_draw, *_prepare(ops, edges))


def _prepare(ops: pl.DataFrame | Graph, edges: pl.DataFrame | None) -> Parts:
    """The chart's datasets (``paths``, ``nodes``) and values."""
    if isinstance(ops, Graph):
        if edges is not None:
            raise InvalidInputError("graph_chart: give a Graph alone, or ops and edges", "edges")
        edges = ops.edges
        ops = ops.ops
    if edges is None:
        raise InvalidInputError("graph_chart: give the edges table with the ops table", "edges")
    require(ops, ("graph", "op_id", "op_type", "category", "backward"), "graph_chart")
    require(edges, ("graph", "src", "dst", "kind"), "graph_chart")
    if ops.is_empty():
        raise InvalidInputError("graph_chart: no ops")
    graph = one_value(ops, "graph", "graph_chart")
    edges = edges.filter(pl.col("graph") == graph).with_columns(pl.col("kind").cast(pl.String))
    known = set(ops["op_id"].to_list())
    dangling = edges.filter(~pl.col("src").is_in(known) | ~pl.col("dst").is_in(known))
    if dangling.height:
        pairs = ", ".join(f"{s}->{d}" for s, d in dangling.select("src", "dst").iter_rows())
        raise InvalidInputError(f"graph_chart: edges of {graph!r} name unknown ops: {pairs}")
    layered = ops.join(
        _layers(ops, edges.filter(kind="data").select("src", "dst"), graph), on="op_id"
    ).with_columns(
        label=pl.format(
            "{}{}",
            pl.col("op_type").cast(pl.String),
            pl.when(pl.col("backward")).then(pl.lit(" (B)")).otherwise(pl.lit("")),
        )
    )

    def exact() -> pl.DataFrame:
        return layered.select(
            "op_id", "layer", "label", "category", op=op_label(), ops=pl.lit(1, pl.UInt32)
        )

    def merged() -> pl.DataFrame:
        # Ops of one type in one layer collapse into a node labelled "MLP ×12".
        return (
            layered.group_by("layer", "label", "category")
            .agg(
                op_id=pl.col("op_id").min(),
                members=pl.col("op_id"),
                ops=pl.len(),
            )
            .with_columns(
                op=pl.format("{} ops", pl.col("ops")),
                label=pl.format("{} ×{}", pl.col("label"), pl.col("ops")),
            )
        )

    def banded(bands: int, by_category: bool) -> Callable[[], pl.DataFrame]:
        # Large graphs: consecutive layers form one band, and each band's ops (of one
        # category, or all of them) one node labelled "1,234 ops".
        size = -(-(int(largest(layered["layer"])) + 1) // bands)
        keys = ["layer", "category"] if by_category else ["layer"]

        def make() -> pl.DataFrame:
            return (
                layered.with_columns(layer=pl.col("layer") // size)
                .group_by(keys)
                .agg(
                    op_id=pl.col("op_id").min(),
                    members=pl.col("op_id"),
                    ops=pl.len(),
                    **({} if by_category else {"category": pl.col("category").mode().min()}),
                )
                .with_columns(
                    op=pl.format("{} ops", pl.col("ops")),
                    label=pl.format("{} ops", pl.col("ops")),
                )
            )

        return make

    nodes = fitting(
        "graph_chart",
        [exact, merged, banded(60, True), banded(24, True), banded(12, False)],
    )
    # Every op maps to the node that stands for it (itself unless merged).
    owner = (
        nodes.select("op_id", member=pl.col("members")).explode("member")
        if "members" in nodes.columns
        else nodes.select("op_id", member="op_id")
    )
    nodes = (
        nodes.drop("members", strict=False)
        .with_columns(
            row=pl.col("op_id").rank("ordinal").over("layer") - 1,
            width=pl.len().over("layer"),
        )
        .with_columns(y=pl.col("row").cast(pl.Float64) - (pl.col("width") - 1) / 2)
    )
    nodes = plain(nodes).sort("layer", "y")
    position = nodes.select("op_id", "layer", "y")
    links = (
        edges.join(owner, left_on="src", right_on="member")
        .join(owner, left_on="dst", right_on="member", suffix="_dst")
        .select(src="op_id", dst="op_id_dst", kind="kind")
        .filter(pl.col("src") != pl.col("dst"))  # inside one merged node
        .unique()
        .sort("src", "dst", "kind")
        .with_row_index("edge")
        .join(position, left_on="src", right_on="op_id")
        .join(position, left_on="dst", right_on="op_id", suffix="_dst")
    )
    if 3 * links.height > MAX_ROWS:
        raise InvalidInputError(f"graph_chart: {links.height} edges are too many to draw")
    # Each edge is a curve through its midpoint; edges that skip layers bow upwards and
    # feedback edges downwards, so neither hides behind the edges between neighbours.
    dx = (pl.col("layer_dst") - pl.col("layer")).abs().cast(pl.Float64)
    bow = (
        pl.when(pl.col("kind") == "feedback")
        .then(-0.4 * dx - 0.3)
        .when(dx > 1)
        .then(0.4 * (dx - 1))
        .otherwise(0.0)
    )
    middle = pl.struct(
        x=(pl.col("layer") + pl.col("layer_dst")) / 2,
        y=(pl.col("y") + pl.col("y_dst")) / 2 + bow,
    )
    paths = (
        links.select(
            "edge",
            "kind",
            points=pl.concat_list(
                pl.struct(x=pl.col("layer").cast(pl.Float64), y="y"),
                middle,
                pl.struct(x=pl.col("layer_dst").cast(pl.Float64), y="y_dst"),
            ),
        )
        .explode("points")
        .with_columns(step=pl.int_range(pl.len()).over("edge"))
        .unnest("points")
        .sort("edge", "step")
    )
    depth = int(largest(nodes["layer"]))
    values = {
        "x_max": depth + 0.5,
        # Bounded so that a long graph fits the page: its nodes move closer instead.
        "width": min(max(150 * (depth + 1), 300), _MAX_WIDTH),
        "height": min(max(60 * int(largest(nodes["width"])), 160), _MAX_HEIGHT),
        "title": f"Operator graph of {graph}",
        "subtitle": f"{ops.height:,} ops" + ("" if nodes.height == ops.height else ", merged"),
    }
    return {"paths": paths, "nodes": nodes}, values


def _draw(data: Mapping[str, Any], v: Mapping[str, Any]) -> Chart:
    def x(field: str) -> alt.X:
        return alt.X(f"{field}:Q", axis=None, scale=alt.Scale(domain=[-0.5, v["x_max"]]))

    def y(field: str) -> alt.Y:
        return alt.Y(f"{field}:Q", axis=None, scale=alt.Scale(zero=False, padding=24))

    edge_layer = (
        alt.Chart(data["paths"])
        .mark_line(color="#888888", strokeWidth=1.5, interpolate="basis")
        .encode(
            x=x("x"),
            y=y("y"),
            detail="edge:N",
            order="step:Q",
            strokeDash=alt.StrokeDash(
                "kind:N",
                scale=alt.Scale(domain=["data", "feedback"], range=[[1, 0], [6, 4]]),
                title="edge",
            ),
        )
    )
    node_layer = alt.Chart(data["nodes"]).encode(
        x=x("layer"),
        y=y("y"),
        tooltip=[
            alt.Tooltip("op:N", title="op"),
            alt.Tooltip("category:N", title="category"),
            alt.Tooltip("layer:Q", title="layer"),
            alt.Tooltip("ops:Q", title="ops in this node"),
        ],
    )
    # Sizes and title as constructor arguments: `properties` would validate them.
    return alt.layer(
        edge_layer,
        node_layer.mark_circle(size=260, opacity=1).encode(color=category_color()),
        # Labels of neighbouring layers alternate above and below their nodes, so
        # long op names in a chain (gbu_train's 11 layers) do not run into each other.
        node_layer.mark_text(dy=-16, fontSize=11)
        .encode(text="label:N")
        .transform_filter("datum.layer % 2 == 0"),
        node_layer.mark_text(dy=18, fontSize=11)
        .encode(text="label:N")
        .transform_filter("datum.layer % 2 == 1"),
        width=v["width"],
        height=v["height"],
        title=alt.Title(v["title"], subtitle=v["subtitle"]),
    )

"""Altair charts of nerframe tables, and their offline export.

Every chart function takes polars tables with the columns of `nerframe.schemas`
and returns an altair chart. Tables are aggregated with polars before they are
embedded, so a chart never carries more than `MAX_ROWS` rows per dataset however
large its input: when the exact rows do not fit, operators are merged into
coarser groups (the tooltip then says how many ops a mark stands for).
`save_chart` writes PNG, SVG or self-contained HTML through vl-convert, without
any network access, using the Liberation Sans font vl-convert ships with.

>>> import polars as pl
>>> summary = pl.DataFrame({"graph": ["nerf"], "accelerator": ["npu"], "status": ["ok"],
...                         "fps": [30.0], "energy_per_frame_j": [0.002]})
>>> spec = matrix_chart(summary).to_dict()
>>> [panel["title"] for panel in spec["hconcat"]]
['frames per second', 'energy per frame (J)']
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

import altair as alt
import polars as pl
import vl_convert as vlc

from nerframe import ppa, schemas
from nerframe.atomic import atomic_path
from nerframe.errors import NerframeError
from nerframe.taxonomy import CATEGORIES

MAX_ROWS = 5000
"""Rows altair's default data transformer accepts in one dataset."""

VL_VERSION = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
"""The Vega-Lite version altair writes, as vl-convert names it (e.g. ``6.4``)."""

CONFIG: dict[str, object] = {"font": "Liberation Sans, Arial, sans-serif"}
"""Chart configuration applied on export and in reports (charts stay composable)."""

Chart = alt.Chart | alt.LayerChart | alt.HConcatChart | alt.VConcatChart | alt.FacetChart

_CATEGORY_COLORS = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#b279a2")
_DIRECTIONS = ("forward", "backward")


def _category_color(**kwargs: object) -> alt.Color:
    # The same colour for a category in every chart of a report.
    return alt.Color(
        "category:N",
        scale=alt.Scale(domain=list(CATEGORIES), range=list(_CATEGORY_COLORS)),
        title="category",
        **kwargs,
    )


def _plain(df: pl.DataFrame) -> pl.DataFrame:
    """Enums as strings and non-finite floats as nulls: what JSON and Vega can hold."""
    return df.with_columns(
        [
            pl.col(name).cast(pl.String)
            if isinstance(dtype, pl.Enum | pl.Categorical)
            else pl.when(pl.col(name).is_finite()).then(pl.col(name))
            for name, dtype in df.schema.items()
            if isinstance(dtype, pl.Enum | pl.Categorical) or dtype.is_float()
        ]
    )


def _fitting(what: str, candidates: Iterable[Callable[[], pl.DataFrame]]) -> pl.DataFrame:
    """The first candidate table (finest first) small enough to embed."""
    height = 0
    for make in candidates:
        table = make()
        if table.height <= MAX_ROWS:
            return table
        height = table.height
    raise NerframeError(
        f"{what}: still {height} marks after merging operators (limit {MAX_ROWS}); "
        "filter the table first"
    )


def _require(df: pl.DataFrame, columns: Iterable[str], what: str) -> None:
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise NerframeError(f"{what}: table lacks column(s) {', '.join(missing)}")


def _one(df: pl.DataFrame, column: str, what: str) -> str:
    values = df[column].unique().sort().to_list()
    if len(values) != 1:
        raise NerframeError(
            f"{what} draws one {column}; got {len(values)} ({', '.join(map(str, values))}): "
            f"filter by {column} first"
        )
    return str(values[0])


def _direction() -> pl.Expr:
    return pl.when(pl.col("backward")).then(pl.lit("backward")).otherwise(pl.lit("forward"))


def _op_label() -> pl.Expr:
    return pl.format(
        "{} #{}{}",
        pl.col("op_type").cast(pl.String),
        pl.col("op_id"),
        pl.when(pl.col("backward")).then(pl.lit(" (B)")).otherwise(pl.lit("")),
    )


def _merged_label() -> pl.Expr:
    return pl.format("{} ops", pl.len())


# --------------------------------------------------------------------------- roofline


def roofline_chart(roofline: pl.DataFrame) -> Chart:
    """Log-log roofline: each system's roof and ridge point, and the ops of `roofline`
    (a `schemas.ROOFLINE` table) at their intensity and attainable FLOP/s, coloured by
    category, forward and backward ops with different shapes.

    Ops with zero FLOPs or zero bytes have no place on log axes and are counted in the
    subtitle instead.
    """
    _require(roofline, schemas.ROOFLINE, "roofline_chart")
    if roofline.is_empty():
        raise NerframeError("roofline_chart: empty roofline table")
    systems = (
        roofline.group_by("system")
        .agg(pl.col("peak_tflops", "bandwidth_gbps", "ridge").first())
        .with_columns(peak=pl.col("peak_tflops") * 1e12, bw=pl.col("bandwidth_gbps") * 1e9)
        .sort("system")
    )
    if 3 * systems.height > MAX_ROWS:
        raise NerframeError(
            f"roofline_chart: {systems.height} systems are too many to draw; filter first"
        )
    drawable = (pl.col("flops") > 0) & (pl.col("bytes_total") > 0)
    points = roofline.filter(drawable).with_columns(direction=_direction())
    hidden = roofline.height - points.height

    def exact() -> pl.DataFrame:
        return points.select(
            "graph",
            "system",
            "category",
            "direction",
            op=_op_label(),
            ops=pl.lit(1, pl.UInt32),
            intensity="intensity",
            attainable="attainable_flops_per_s",
            flops="flops",
            time_s="time_s",
            bound=pl.col("bound").cast(pl.String),
        )

    def merged(decimals: int) -> Callable[[], pl.DataFrame]:
        # Ops of one kind whose intensities round to the same log10 share one point,
        # placed at the group's own intensity (total FLOPs over total bytes).
        def make() -> pl.DataFrame:
            bucket = (pl.col("flops") / pl.col("bytes_total")).log10().round(decimals)
            return (
                points.group_by(
                    "graph", "system", "category", "direction", "op_type", bucket.alias("b")
                )
                .agg(
                    _merged_label().alias("op"),
                    pl.len().alias("ops"),
                    (pl.col("flops").sum() / pl.col("bytes_total").sum()).alias("intensity"),
                    pl.col("flops").sum(),
                    pl.col("time_s").sum(),
                    pl.col("peak_tflops", "bandwidth_gbps").first(),
                    pl.col("bound").cast(pl.String).unique().sort().str.join("/"),
                )
                .with_columns(
                    attainable=ppa.attainable(
                        pl.col("peak_tflops"), pl.col("bandwidth_gbps"), pl.col("intensity")
                    )
                )
                .drop("b", "op_type", "peak_tflops", "bandwidth_gbps")
            )

        return make

    marks = _fitting("roofline_chart", [exact, *(merged(d) for d in (2, 1, 0))])
    marks = _plain(marks).sort("system", "graph", "intensity", "op")

    finite = points.filter(pl.col("intensity").is_finite())["intensity"]
    lo = min(finite.min() or 1.0, systems["ridge"].min()) / 10
    hi = max(finite.max() or 1.0, systems["ridge"].max()) * 10
    roof = (
        pl.concat(
            [
                systems.select(
                    "system", x=pl.lit(lo), y=pl.min_horizontal("peak", lo * pl.col("bw"))
                ),
                systems.select("system", x="ridge", y="peak"),
                systems.select("system", x=pl.lit(hi), y="peak"),
            ]
        )
        .with_columns(pl.col("x").cast(pl.Float64), pl.col("y").cast(pl.Float64))
        .sort("system", "x")
    )
    ridges = systems.select("system", x="ridge", y="peak").with_columns(
        label=pl.Series(
            [
                f"{name} ridge {ridge:.3g} FLOP/B"
                for name, ridge in systems.select("system", "ridge").iter_rows()
            ],
            dtype=pl.String,
        )
    )

    def x_axis(field: str) -> alt.X:
        return alt.X(
            f"{field}:Q",
            scale=alt.Scale(type="log", domain=[lo, hi]),
            title="arithmetic intensity (FLOP/byte)",
            axis=alt.Axis(format="~s"),
        )

    def y_axis(field: str) -> alt.Y:
        return alt.Y(
            f"{field}:Q",
            scale=alt.Scale(type="log"),
            title="attainable FLOP/s",
            axis=alt.Axis(format="~s"),
        )

    system_color = alt.Color("system:N", title="system", scale=alt.Scale(scheme="dark2"))
    roof_layer = (
        alt.Chart(roof)
        .mark_line(strokeWidth=2, clip=True)
        .encode(
            x=x_axis("x"),
            y=y_axis("y"),
            color=system_color,
        )
    )
    ridge_layer = alt.Chart(ridges).encode(x="x:Q", y="y:Q", color=system_color.legend(None))
    ridge_points = ridge_layer.mark_point(shape="diamond", size=90, filled=True).encode(
        tooltip=[alt.Tooltip("label:N", title="ridge")]
    )
    ridge_labels = ridge_layer.mark_text(align="left", dx=6, dy=-8, fontSize=11).encode(
        text="label:N"
    )
    op_points = (
        alt.Chart(marks)
        .mark_point(filled=True, size=70, opacity=0.85)
        .encode(
            x=x_axis("intensity"),
            y=y_axis("attainable"),
            color=_category_color(),
            shape=alt.Shape(
                "direction:N",
                scale=alt.Scale(domain=list(_DIRECTIONS), range=["circle", "triangle-up"]),
                title="direction",
            ),
            tooltip=[
                alt.Tooltip("op:N", title="op"),
                alt.Tooltip("graph:N", title="pipeline"),
                alt.Tooltip("system:N", title="system"),
                alt.Tooltip("category:N", title="category"),
                alt.Tooltip("direction:N", title="direction"),
                alt.Tooltip("intensity:Q", title="intensity (FLOP/B)", format=".3~s"),
                alt.Tooltip("attainable:Q", title="attainable FLOP/s", format=".3~s"),
                alt.Tooltip("flops:Q", title="FLOPs", format=".3~s"),
                alt.Tooltip("time_s:Q", title="time (s)", format=".3~e"),
                alt.Tooltip("bound:N", title="bound"),
                alt.Tooltip("ops:Q", title="ops in this mark"),
            ],
        )
    )
    subtitle = f"{hidden} op row(s) with zero FLOPs or bytes not shown" if hidden else ""
    graphs = roofline["graph"].unique().sort().to_list()
    title = f"Roofline of {graphs[0]}" if len(graphs) == 1 else "Roofline"
    return (
        alt.layer(alt.layer(roof_layer, ridge_points, ridge_labels), op_points)
        .resolve_scale(color="independent")
        .properties(
            width=560,
            height=360,
            title=alt.Title(title, subtitle=subtitle) if subtitle else title,
        )
    )


# --------------------------------------------------------------------------- Gantt

_GANTT_MAX_HEIGHT = 900
_GANTT_COLUMNS = (
    *("graph", "accelerator", "op_id", "op_type", "category", "backward", "module"),
    *("instances", "first_instance", "start_cycle", "end_cycle", "duration_cycles", "bound"),
)


def gantt_chart(schedule: pl.DataFrame) -> Chart:
    """Schedule of one pipeline on one accelerator: one lane per module instance
    (an op spans lanes ``first_instance`` to ``first_instance + instances - 1`` of its
    module), x = cycles, colour = category."""
    _require(schedule, _GANTT_COLUMNS, "gantt_chart")
    if schedule.is_empty():
        raise NerframeError("gantt_chart: empty schedule")
    graph = _one(schedule, "graph", "gantt_chart")
    accel = _one(schedule, "accelerator", "gantt_chart")
    lanes = (
        schedule.group_by("module")
        .agg(
            lanes=(pl.col("first_instance") + pl.col("instances")).max(),
            first=pl.col("start_cycle").min(),
        )
        .sort("first", "module")
        .with_columns(base=pl.col("lanes").cum_sum() - pl.col("lanes"))
    )
    total = int(lanes["lanes"].sum())
    names = [
        module if count == 1 else f"{module} #{i}"
        for module, count in lanes.select("module", "lanes").iter_rows()
        for i in range(count)
    ]
    placed = schedule.join(lanes.select("module", "base"), on="module").with_columns(
        lane_lo=pl.col("base") + pl.col("first_instance"),
        lane_hi=pl.col("base") + pl.col("first_instance") + pl.col("instances"),
    )
    makespan = max(int(placed["end_cycle"].max()), 1)

    def exact() -> pl.DataFrame:
        return placed.select(
            "module",
            "category",
            "lane_lo",
            "lane_hi",
            "start_cycle",
            "end_cycle",
            "duration_cycles",
            op=_op_label(),
            ops=pl.lit(1, pl.UInt32),
            bound=pl.col("bound").cast(pl.String),
        )

    def merged(buckets: int) -> Callable[[], pl.DataFrame]:
        # Ops on the same lanes, of one category, starting in the same slice of the
        # makespan become one bar from the first start to the last end.
        def make() -> pl.DataFrame:
            bucket = pl.col("start_cycle") * buckets // makespan
            return (
                placed.group_by("module", "category", "lane_lo", "lane_hi", bucket.alias("b"))
                .agg(
                    _merged_label().alias("op"),
                    pl.len().alias("ops"),
                    pl.col("start_cycle").min(),
                    pl.col("end_cycle").max(),
                    pl.col("duration_cycles").sum(),
                    pl.col("bound").cast(pl.String).unique().sort().str.join("/"),
                )
                .drop("b")
            )

        return make

    bars = _fitting("gantt_chart", [exact, *(merged(b) for b in (1000, 100, 10, 1))])
    bars = _plain(bars).sort("lane_lo", "start_cycle", "op")
    label_expr = f"{json.dumps(names)}[floor(datum.value)]"
    y = alt.Y(
        "lane_lo:Q",
        scale=alt.Scale(domain=[0, total], reverse=True, nice=False, zero=True),
        axis=alt.Axis(
            values=[i + 0.5 for i in range(total)],
            # Vega thins explicit values down to tickCount, which defaults to height/40.
            tickCount=total,
            labelExpr=label_expr,
            # Lanes are labelled one by one while they are tall enough to read.
            labelOverlap=18 * total > _GANTT_MAX_HEIGHT and "greedy",
            grid=False,
            ticks=False,
            title="module instance",
        ),
    )
    gantt = (
        alt.Chart(bars)
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            x=alt.X("start_cycle:Q", title="cycle", scale=alt.Scale(domain=[0, makespan])),
            x2="end_cycle:Q",
            y=y,
            y2="lane_hi:Q",
            color=_category_color(),
            tooltip=[
                alt.Tooltip("op:N", title="op"),
                alt.Tooltip("category:N", title="category"),
                alt.Tooltip("module:N", title="module"),
                alt.Tooltip("start_cycle:Q", title="start cycle", format=","),
                alt.Tooltip("end_cycle:Q", title="end cycle", format=","),
                alt.Tooltip("duration_cycles:Q", title="busy cycles", format=","),
                alt.Tooltip("bound:N", title="bound"),
                alt.Tooltip("ops:Q", title="ops in this bar"),
            ],
        )
    )
    separators = (
        alt.Chart(
            lanes.select("module", lane=pl.col("base").cast(pl.Float64)).filter(pl.col("lane") > 0)
        )
        .mark_rule(color="#999999", strokeDash=[2, 2])
        .encode(y=alt.Y("lane:Q"))
    )
    return alt.layer(gantt, separators).properties(
        width=640,
        height=min(max(18 * total, 120), _GANTT_MAX_HEIGHT),
        title=alt.Title(f"Schedule of {graph} on {accel}", subtitle=f"{makespan:,} cycles"),
    )


# --------------------------------------------------------------------------- breakdown

_METRICS = (
    ("flops", "FLOPs"),
    ("bytes_total", "bytes"),
    ("duration_cycles", "busy cycles"),
)


def breakdown_chart(costs_or_schedule: pl.DataFrame) -> Chart:
    """FLOPs, bytes and, for a schedule, busy cycles by category (forward and backward
    stacked), summed over every row given."""
    _require(costs_or_schedule, ("category", "backward", "flops", "bytes_total"), "breakdown_chart")
    metrics = [(c, t) for c, t in _METRICS if c in costs_or_schedule.columns]
    sums = (
        costs_or_schedule.group_by("category", _direction().alias("direction"))
        .agg(pl.col(c).cast(pl.Float64).sum() for c, _ in metrics)
        .unpivot(index=["category", "direction"], variable_name="column", value_name="value")
        .with_columns(
            metric=pl.col("column").replace_strict(dict(metrics)),
            share=pl.col("value") / pl.col("value").sum().over("column"),
        )
    )
    sums = _plain(sums.drop("column")).sort("metric", "category", "direction")
    bars = (
        alt.Chart(sums)
        .mark_bar()
        .encode(
            x=alt.X("sum(value):Q", title=None, axis=alt.Axis(format="~s")),
            y=alt.Y("category:N", sort=list(CATEGORIES), title=None),
            color=_category_color(legend=None),
            opacity=alt.Opacity(
                "direction:N",
                sort=list(_DIRECTIONS),
                scale=alt.Scale(domain=list(_DIRECTIONS), range=[1.0, 0.5]),
                title="direction",
            ),
            order=alt.Order("direction:N", sort="descending"),
            tooltip=[
                alt.Tooltip("metric:N", title="metric"),
                alt.Tooltip("category:N", title="category"),
                alt.Tooltip("direction:N", title="direction"),
                alt.Tooltip("value:Q", title="value", format=".4~s"),
                alt.Tooltip("share:Q", title="share of total", format=".1%"),
            ],
        )
        .properties(width=200, height=26 * len(CATEGORIES))
    )
    return (
        bars.facet(
            column=alt.Column(
                "metric:N",
                sort=[t for _, t in metrics],
                title=None,
                header=alt.Header(labelFontSize=13),
            )
        )
        .resolve_scale(x="independent")
        .properties(title="Breakdown by category")
    )


# --------------------------------------------------------------------------- graph


def _layers(ops: pl.DataFrame, data_edges: pl.DataFrame, graph: str) -> pl.DataFrame:
    """Longest path (in edges) from any source to each op, by relaxation over the edges."""
    layer = ops.select("op_id", layer=pl.lit(0, pl.Int64))
    for _ in range(ops.height + 1):
        pushed = (
            data_edges.join(layer, left_on="src", right_on="op_id")
            .group_by("dst")
            .agg(candidate=pl.col("layer").max() + 1)
        )
        relaxed = layer.join(pushed, left_on="op_id", right_on="dst", how="left").select(
            "op_id", layer=pl.max_horizontal("layer", "candidate")
        )
        if relaxed.sort("op_id").equals(layer.sort("op_id")):
            return relaxed
        layer = relaxed
    raise NerframeError(f"graph_chart: the data edges of {graph!r} form a cycle")


def graph_chart(ops: pl.DataFrame, edges: pl.DataFrame) -> Chart:
    """The operator DAG of one pipeline, in layers (layer = longest path from a source
    over data edges); nodes labelled by op type (``(B)`` for backward), data edges
    solid, feedback edges dashed."""
    _require(ops, ("graph", "op_id", "op_type", "category", "backward"), "graph_chart")
    _require(edges, ("graph", "src", "dst", "kind"), "graph_chart")
    if ops.is_empty():
        raise NerframeError("graph_chart: no ops")
    graph = _one(ops, "graph", "graph_chart")
    edges = edges.filter(pl.col("graph") == graph).with_columns(pl.col("kind").cast(pl.String))
    known = set(ops["op_id"].to_list())
    dangling = edges.filter(~pl.col("src").is_in(known) | ~pl.col("dst").is_in(known))
    if dangling.height:
        pairs = ", ".join(f"{s}->{d}" for s, d in dangling.select("src", "dst").iter_rows())
        raise NerframeError(f"graph_chart: edges of {graph!r} name unknown ops: {pairs}")
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
            "op_id", "layer", "label", "category", op=_op_label(), ops=pl.lit(1, pl.UInt32)
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

    nodes = _fitting("graph_chart", [exact, merged])
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
    nodes = _plain(nodes).sort("layer", "y")
    position = nodes.select("op_id", "layer", "y")
    links = (
        edges.join(owner, left_on="src", right_on="member")
        .join(owner, left_on="dst", right_on="member", suffix="_dst")
        .select(src="op_id", dst="op_id_dst", kind="kind")
        .unique()
        .sort("src", "dst", "kind")
        .with_row_index("edge")
        .join(position, left_on="src", right_on="op_id")
        .join(position, left_on="dst", right_on="op_id", suffix="_dst")
    )
    if 3 * links.height > MAX_ROWS:
        raise NerframeError(f"graph_chart: {links.height} edges are too many to draw")
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
    depth = int(nodes["layer"].max())

    def x(field: str) -> alt.X:
        return alt.X(f"{field}:Q", axis=None, scale=alt.Scale(domain=[-0.5, depth + 0.5]))

    def y(field: str) -> alt.Y:
        return alt.Y(f"{field}:Q", axis=None, scale=alt.Scale(zero=False, padding=24))

    edge_layer = (
        alt.Chart(paths)
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
    node_layer = alt.Chart(nodes).encode(
        x=x("layer"),
        y=y("y"),
        tooltip=[
            alt.Tooltip("op:N", title="op"),
            alt.Tooltip("category:N", title="category"),
            alt.Tooltip("layer:Q", title="layer"),
            alt.Tooltip("ops:Q", title="ops in this node"),
        ],
    )
    return alt.layer(
        edge_layer,
        node_layer.mark_circle(size=260, opacity=1).encode(color=_category_color()),
        node_layer.mark_text(dy=-16, fontSize=11).encode(text="label:N"),
    ).properties(
        width=max(150 * (depth + 1), 300),
        height=max(60 * int(nodes["width"].max()), 160),
        title=f"Operator graph of {graph}",
    )


# --------------------------------------------------------------------------- matrix

_PANELS = (
    ("fps", "frames per second", "lightgreyteal"),
    ("energy_per_frame_j", "energy per frame (J)", "lightorange"),
)


def matrix_chart(summary: pl.DataFrame) -> Chart:
    """Pipeline × accelerator heat maps of fps and energy per frame; unmapped pairs
    are grey cells labelled ``unmapped``."""
    _require(
        summary, ("graph", "accelerator", "status", *(c for c, _, _ in _PANELS)), "matrix_chart"
    )
    if summary.height > MAX_ROWS:
        raise NerframeError(f"matrix_chart: {summary.height} pairs are too many to draw")
    cells = _plain(
        summary.select("graph", "accelerator", "status", *(c for c, _, _ in _PANELS))
    ).sort("graph", "accelerator")
    graphs = cells["graph"].unique().sort().to_list()
    accels = cells["accelerator"].unique().sort().to_list()
    panels = []
    for column, title, scheme in _PANELS:
        base = alt.Chart(cells).encode(
            x=alt.X("accelerator:N", sort=accels, title="accelerator"),
            y=alt.Y("graph:N", sort=graphs, title="pipeline"),
            tooltip=[
                alt.Tooltip("graph:N", title="pipeline"),
                alt.Tooltip("accelerator:N", title="accelerator"),
                alt.Tooltip("status:N", title="status"),
                alt.Tooltip("fps:Q", title="fps", format=".4~s"),
                alt.Tooltip("energy_per_frame_j:Q", title="energy per frame (J)", format=".4~s"),
            ],
        )
        ok = alt.datum.status == "ok"
        panels.append(
            alt.layer(
                base.mark_rect(color="#dddddd"),
                base.mark_rect()
                .encode(
                    color=alt.Color(
                        f"{column}:Q",
                        scale=alt.Scale(type="log", scheme=scheme),
                        legend=alt.Legend(format=".3~s", title=None),
                    )
                )
                .transform_filter(ok),
                base.mark_text(fontSize=11)
                .encode(text=alt.Text(f"{column}:Q", format=".3~s"))
                .transform_filter(ok),
                base.mark_text(fontSize=10, color="#666666", text="unmapped").transform_filter(
                    alt.datum.status != "ok"
                ),
            ).properties(
                width=max(70 * len(accels), 140), height=max(28 * len(graphs), 60), title=title
            )
        )
    return (
        alt.hconcat(*panels)
        .resolve_scale(color="independent")
        .properties(title="Pipeline × accelerator")
    )


# --------------------------------------------------------------------------- export


_SVG_ID = re.compile(r'(?<=id=")(clip|gradient_)(\d+)(?=")|(?<=url\(#)(clip|gradient_)(\d+)(?=\))')


def _stable_ids(svg: str) -> str:
    """Number the clip-path and gradient ids of `svg` from 0 in order of appearance.

    Vega numbers them with counters that run on across every conversion of the
    process, so the same chart would otherwise differ from one export to the next.
    """
    renamed: dict[str, str] = {}
    counts: dict[str, int] = {}

    def rename(match: re.Match[str]) -> str:
        prefix = match[1] or match[3]
        old = match[0]
        if old not in renamed:
            renamed[old] = f"{prefix}{counts.get(prefix, 0)}"
            counts[prefix] = counts.get(prefix, 0) + 1
        return renamed[old]

    return _SVG_ID.sub(rename, svg)


def save_chart(chart: Chart | dict[str, Any], *paths: str | Path) -> Path:
    """Write `chart` (or its Vega-Lite spec, ``chart.to_dict()``) to each path as
    PNG, SVG or self-contained HTML by its suffix, offline, atomically; returns the
    first path. The chart is rendered once: a PNG is rasterised from its SVG."""
    if not paths:
        raise NerframeError("save_chart: give at least one output path")
    targets = [Path(p) for p in paths]
    for path in targets:
        if path.suffix.lower() not in (".png", ".svg", ".html"):
            raise NerframeError(
                f"{path}: unknown chart format {path.suffix!r} (use .png, .svg or .html)"
            )
    spec = chart if isinstance(chart, dict) else chart.to_dict()
    # An empty allow-list: vl-convert may not fetch anything, data is inline.
    offline: dict[str, object] = {"vl_version": VL_VERSION, "config": CONFIG}
    rendered: dict[str, bytes | str] = {}
    try:
        suffixes = {p.suffix.lower() for p in targets}
        if suffixes & {".png", ".svg"}:
            rendered[".svg"] = _stable_ids(
                vlc.vegalite_to_svg(spec, allowed_base_urls=[], **offline)
            )
        if ".png" in suffixes:
            rendered[".png"] = vlc.svg_to_png(rendered[".svg"], scale=2)
        if ".html" in suffixes:
            rendered[".html"] = vlc.vegalite_to_html(spec, bundle=True, renderer="svg", **offline)
    except ValueError as e:
        # vl-convert puts the reason on the line after its headline, then a JS stack.
        reason = " ".join(str(e).strip().splitlines()[:2])
        raise NerframeError(f"{targets[0]}: chart export failed ({reason})") from None
    for path in targets:
        data = rendered[path.suffix.lower()]
        with atomic_path(path) as tmp:
            if isinstance(data, bytes):
                tmp.write_bytes(data)
            else:
                tmp.write_text(data, encoding="utf-8")
    return targets[0]

"""The roofline chart: systems' roofs and ridge points with the ops placed on them."""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any

import altair as alt
import polars as pl

from nerframe import ppa, schemas
from nerframe.charts.tables import (
    CHART,
    MAX_ROWS,
    by_chart,
    direction,
    fitting_by,
    largest,
    merged_label,
    op_label,
    plain,
    require,
)
from nerframe.charts.templates import Parts, filled
from nerframe.charts.theme import (
    DIRECTIONS,
    LOG_PLAIN_LABEL,
    LOG_SI_LABEL,
    Chart,
    category_color,
)
from nerframe.errors import InvalidInputError


def roofline_chart(roofline: pl.DataFrame) -> Chart:
    """Log-log roofline: each system's roof and ridge point, and the ops of `roofline`
    (a `schemas.ROOFLINE` table) at their intensity and attainable FLOP/s, coloured by
    category, one shape per pipeline, backward ops hollow.

    Ops with zero FLOPs or zero bytes have no place on log axes and are counted in the
    subtitle instead.

    >>> import nerframe
    >>> roofline_chart(nerframe.roofline(nerframe.pipeline("neurex"), "A100")).to_dict()["title"]
    {'text': 'Roofline of neurex'}
    """
    require(roofline, schemas.ROOFLINE, "roofline_chart")
    if roofline.is_empty():
        raise InvalidInputError("roofline_chart: empty roofline table")
    ((data, values),) = _prepare(roofline.with_columns(pl.lit(0).alias(CHART))).values()
    return _draw(data, values)


def roofline_specs(roofline: pl.DataFrame) -> dict[object, dict[str, Any]]:
    """The spec of `roofline_chart` for each value of the ``chart`` column of
    `roofline`, prepared in one pass and drawn from one template
    (`nerframe.charts.templates`).

    >>> import nerframe, polars as pl
    >>> rows = nerframe.roofline(nerframe.pipeline("neurex"), ["A100", "H100"])
    >>> specs = roofline_specs(rows.with_columns(chart=pl.col("system")))
    >>> sorted(specs), specs["H100"]["title"]
    (['A100', 'H100'], {'text': 'Roofline of neurex'})
    """
    require(roofline, (*schemas.ROOFLINE, CHART), "roofline_specs")
    return {
        chart: filled(_draw, data, values) for chart, (data, values) in _prepare(roofline).items()
    }


def _prepare(roofline: pl.DataFrame) -> dict[object, Parts]:
    """Per chart: its datasets (``roof``, ``ridges``, ``marks``) and values."""
    systems = (
        roofline.group_by(CHART, "system")
        .agg(pl.col("peak_tflops", "bandwidth_gbps", "ridge").first())
        .with_columns(peak=pl.col("peak_tflops") * 1e12, bw=pl.col("bandwidth_gbps") * 1e9)
        .sort(CHART, "system")
    )
    most = int(largest(systems.group_by(CHART).len()["len"]))
    if 3 * most > MAX_ROWS:
        raise InvalidInputError(
            f"roofline_chart: {most} systems are too many to draw; filter first"
        )
    drawable = (pl.col("flops") > 0) & (pl.col("bytes_total") > 0)
    points = roofline.filter(drawable).with_columns(direction=direction())

    def exact(rows: pl.DataFrame) -> pl.DataFrame:
        return rows.select(
            CHART,
            "graph",
            "system",
            "category",
            "direction",
            op=op_label(),
            ops=pl.lit(1, pl.UInt32),
            intensity="intensity",
            attainable="attainable_flops_per_s",
            flops="flops",
            time_s="time_s",
            bound=pl.col("bound").cast(pl.String),
        )

    def merged(decimals: int) -> Callable[[pl.DataFrame], pl.DataFrame]:
        # Ops of one kind whose intensities round to the same log10 share one point,
        # placed at the group's own intensity (total FLOPs over total bytes).
        def make(rows: pl.DataFrame) -> pl.DataFrame:
            bucket = (pl.col("flops") / pl.col("bytes_total")).log10().round(decimals)
            return (
                rows.group_by(
                    CHART, "graph", "system", "category", "direction", "op_type", bucket.alias("b")
                )
                .agg(
                    merged_label().alias("op"),
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

    marks = fitting_by(
        "roofline_chart",
        points,
        [exact, *(merged(d) for d in (2, 1, 0))],
        lambda table: plain(table).sort(CHART, "system", "graph", "intensity", "op"),
    )
    finite = pl.col("intensity").filter(drawable & pl.col("intensity").is_finite())
    extents = (
        roofline.group_by(CHART)
        .agg(
            low=finite.min().fill_null(1.0),
            high=finite.max().fill_null(1.0),
            hidden=pl.len() - drawable.sum(),
            graphs=pl.col("graph").unique().sort(),
        )
        .join(
            systems.group_by(CHART).agg(
                low_ridge=pl.col("ridge").min(), high_ridge=pl.col("ridge").max()
            ),
            on=CHART,
        )
        .select(
            CHART,
            "hidden",
            "graphs",
            low=pl.min_horizontal("low", "low_ridge"),
            high=pl.max_horizontal("high", "high_ridge"),
        )
        .rows(named=True)
    )
    # The x range: a decade beyond the ops and the ridges (1 FLOP/B without ops);
    # divided in Python, as polars would multiply by 0.1 and round differently.
    ranges = pl.DataFrame(
        {
            CHART: [e[CHART] for e in extents],
            "lo": [e["low"] / 10 for e in extents],
            "hi": [e["high"] * 10 for e in extents],
        },
        schema={CHART: roofline.schema[CHART], "lo": pl.Float64, "hi": pl.Float64},
    )
    ends = systems.join(ranges, on=CHART)
    roof = by_chart(
        pl.concat(
            [
                ends.select(
                    CHART,
                    "system",
                    x="lo",
                    y=pl.min_horizontal("peak", pl.col("lo") * pl.col("bw")),
                ),
                ends.select(CHART, "system", x="ridge", y="peak"),
                ends.select(CHART, "system", x="hi", y="peak"),
            ]
        )
        .with_columns(pl.col("x").cast(pl.Float64), pl.col("y").cast(pl.Float64))
        .sort(CHART, "system", "x")
    )
    ridges = by_chart(
        systems.select(
            CHART,
            "system",
            x="ridge",
            y="peak",
            label=pl.Series(
                [
                    f"{name} ridge {ridge:.3g} FLOP/B"
                    for name, ridge in systems.select("system", "ridge").iter_rows()
                ],
                dtype=pl.String,
            ),
        )
    )
    no_marks = exact(points.clear()).drop(CHART)
    parts = {}
    for extent, (lo, hi) in zip(extents, ranges.select("lo", "hi").iter_rows(), strict=True):
        graphs, hidden, chart = extent["graphs"], extent["hidden"], extent[CHART]
        values = {
            "lo": lo,
            "hi": hi,
            "title": f"Roofline of {graphs[0]}" if len(graphs) == 1 else "Roofline",
            "subtitle": f"{hidden} op row(s) with zero FLOPs or bytes not shown"
            if hidden
            else alt.Undefined,
        }
        data = {"roof": roof[chart], "ridges": ridges[chart], "marks": marks.get(chart, no_marks)}
        parts[chart] = (data, values)
    return parts


def _draw(data: Mapping[str, Any], v: Mapping[str, Any]) -> Chart:
    def x_axis(field: str) -> alt.X:
        return alt.X(
            f"{field}:Q",
            scale=alt.Scale(type="log", domain=[v["lo"], v["hi"]]),
            title="arithmetic intensity (FLOP/byte)",
            # plain numbers: "100m" FLOP/byte reads as metres
            axis=alt.Axis(labelExpr=LOG_PLAIN_LABEL),
        )

    def y_axis(field: str) -> alt.Y:
        return alt.Y(
            f"{field}:Q",
            scale=alt.Scale(type="log"),
            title="attainable FLOP/s",
            axis=alt.Axis(labelExpr=LOG_SI_LABEL),
        )

    system_color = alt.Color("system:N", title="system", scale=alt.Scale(scheme="dark2"))
    roof_layer = (
        alt.Chart(data["roof"])
        .mark_line(strokeWidth=2, clip=True)
        .encode(
            x=x_axis("x"),
            y=y_axis("y"),
            color=system_color,
        )
    )
    ridge_layer = alt.Chart(data["ridges"]).encode(
        x="x:Q", y="y:Q", color=system_color.legend(None)
    )
    ridge_points = ridge_layer.mark_point(shape="diamond", size=90, filled=True).encode(
        tooltip=[alt.Tooltip("label:N", title="ridge")]
    )
    ridge_labels = ridge_layer.mark_text(align="left", dx=6, dy=-8, fontSize=11).encode(
        text="label:N"
    )
    # Colour says the category, shape the pipeline (several share a chart when one
    # roofline compares them), fill the direction: a backward op is an outline.
    op_points = (
        alt.Chart(data["marks"])
        .mark_point(filled=True, size=80, strokeWidth=1.5)
        .encode(
            x=x_axis("intensity"),
            y=y_axis("attainable"),
            color=category_color(),
            stroke=category_color(legend=None),
            shape=alt.Shape("graph:N", title="pipeline"),
            fillOpacity=alt.FillOpacity(
                "direction:O",  # ordinal: Vega-Lite warns of opacity over a nominal field
                scale=alt.Scale(domain=list(DIRECTIONS), range=[0.85, 0.0]),
                title="direction",
            ),
            tooltip=[
                alt.Tooltip("op:N", title="op"),
                alt.Tooltip("graph:N", title="pipeline"),
                alt.Tooltip("system:N", title="system"),
                alt.Tooltip("category:N", title="category"),
                alt.Tooltip("direction:N", title="direction"),
                alt.Tooltip("intensity:Q", title="intensity (FLOP/B)", format=".3~r"),
                alt.Tooltip("attainable:Q", title="attainable FLOP/s", format=".3~s"),
                alt.Tooltip("flops:Q", title="FLOPs", format=".3~s"),
                alt.Tooltip("time_s:Q", title="time (s)", format=".3~e"),
                alt.Tooltip("bound:N", title="bound"),
                alt.Tooltip("ops:Q", title="ops in this mark"),
            ],
        )
    )
    # One constructor call: each later method call would deep-copy the layers (and
    # `properties` would validate the values, which are placeholders in a template).
    return alt.layer(
        alt.layer(roof_layer, ridge_points, ridge_labels),
        op_points,
        resolve=alt.Resolve(scale=alt.ScaleResolveMap(color="independent")),
        width=560,
        height=360,
        title=alt.Title(v["title"], subtitle=v["subtitle"]),
    )

"""The roofline chart: systems' roofs and ridge points with the ops placed on them."""

from __future__ import annotations

from collections.abc import Callable

import altair as alt
import polars as pl

from nerframe import ppa, schemas
from nerframe.charts.tables import (
    MAX_ROWS,
    direction,
    fitting,
    largest,
    merged_label,
    op_label,
    plain,
    require,
    smallest,
)
from nerframe.charts.theme import DIRECTIONS, Chart, category_color
from nerframe.errors import NerframeError


def roofline_chart(roofline: pl.DataFrame) -> Chart:
    """Log-log roofline: each system's roof and ridge point, and the ops of `roofline`
    (a `schemas.ROOFLINE` table) at their intensity and attainable FLOP/s, coloured by
    category, forward and backward ops with different shapes.

    Ops with zero FLOPs or zero bytes have no place on log axes and are counted in the
    subtitle instead.
    """
    require(roofline, schemas.ROOFLINE, "roofline_chart")
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
    points = roofline.filter(drawable).with_columns(direction=direction())
    hidden = roofline.height - points.height

    def exact() -> pl.DataFrame:
        return points.select(
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

    marks = fitting("roofline_chart", [exact, *(merged(d) for d in (2, 1, 0))])
    marks = plain(marks).sort("system", "graph", "intensity", "op")

    finite = points.filter(pl.col("intensity").is_finite())["intensity"]
    lo = min(smallest(finite) or 1.0, smallest(systems["ridge"])) / 10
    hi = max(largest(finite) or 1.0, largest(systems["ridge"])) * 10
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
            color=category_color(),
            shape=alt.Shape(
                "direction:N",
                scale=alt.Scale(domain=list(DIRECTIONS), range=["circle", "triangle-up"]),
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
    # One constructor call: each later method call would deep-copy the layers.
    return alt.layer(
        alt.layer(roof_layer, ridge_points, ridge_labels),
        op_points,
        resolve=alt.Resolve(scale=alt.ScaleResolveMap(color="independent")),
        width=560,
        height=360,
        title=alt.Title(title, subtitle=subtitle) if subtitle else title,
    )

"""The breakdown chart: FLOPs, bytes and busy cycles by category and direction."""

from __future__ import annotations

import altair as alt
import polars as pl

from nerframe.charts.tables import direction, plain, require
from nerframe.charts.theme import DIRECTIONS, Chart, category_color
from nerframe.taxonomy import CATEGORIES

_METRICS = (
    ("flops", "FLOPs"),
    ("bytes_total", "bytes"),
    ("duration_cycles", "busy cycles"),
)


def breakdown_chart(costs_or_schedule: pl.DataFrame) -> Chart:
    """FLOPs, bytes and, for a schedule, busy cycles by category (forward and backward
    stacked), summed over every row given."""
    require(costs_or_schedule, ("category", "backward", "flops", "bytes_total"), "breakdown_chart")
    metrics = [(c, t) for c, t in _METRICS if c in costs_or_schedule.columns]
    sums = (
        costs_or_schedule.group_by("category", direction().alias("direction"))
        .agg(pl.col(c).cast(pl.Float64).sum() for c, _ in metrics)
        .unpivot(index=["category", "direction"], variable_name="column", value_name="value")
        .with_columns(
            metric=pl.col("column").replace_strict(dict(metrics)),
            share=pl.col("value") / pl.col("value").sum().over("column"),
        )
    )
    sums = plain(sums.drop("column")).sort("metric", "category", "direction")
    bars = (
        alt.Chart(sums)
        .mark_bar()
        .encode(
            x=alt.X("sum(value):Q", title=None, axis=alt.Axis(format="~s")),
            y=alt.Y("category:N", sort=list(CATEGORIES), title=None),
            color=category_color(legend=None),
            opacity=alt.Opacity(
                "direction:N",
                sort=list(DIRECTIONS),
                scale=alt.Scale(domain=list(DIRECTIONS), range=[1.0, 0.5]),
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

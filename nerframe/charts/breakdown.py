"""The breakdown chart: FLOPs, bytes and busy cycles by category and direction."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import altair as alt
import polars as pl

from nerframe.charts.tables import CHART, by_chart, direction, plain, require
from nerframe.charts.templates import Parts, filled
from nerframe.charts.theme import DIRECTIONS, SI_LABEL, Chart, category_color
from nerframe.errors import InvalidInputError
from nerframe.taxonomy import CATEGORIES

_METRICS = (
    ("flops", "FLOPs"),
    ("bytes_total", "bytes"),
    ("duration_cycles", "busy cycles"),
)
_NEEDED = ("category", "backward", "flops", "bytes_total")


def breakdown_chart(costs_or_schedule: pl.DataFrame) -> Chart:
    """FLOPs, bytes and, for a schedule, busy cycles by category (forward and backward
    stacked), summed over every row given.

    >>> import nerframe
    >>> run = nerframe.schedule("neurex", "neurex")
    >>> breakdown_chart(run.schedule).to_dict()["facet"]["column"]["sort"]
    ['FLOPs', 'bytes', 'busy cycles']
    """
    require(costs_or_schedule, _NEEDED, "breakdown_chart")
    if costs_or_schedule.is_empty():
        raise InvalidInputError("breakdown_chart: empty table")
    table = costs_or_schedule.with_columns(pl.lit(0).alias(CHART))
    ((data, values),) = _prepare(table).values()
    return _draw(data, values)


def breakdown_specs(costs_or_schedule: pl.DataFrame) -> dict[object, dict[str, Any]]:
    """The spec of `breakdown_chart` for each value of the ``chart`` column of
    `costs_or_schedule`, prepared in one pass and drawn from one template
    (`nerframe.charts.templates`).

    >>> import nerframe, polars as pl
    >>> costs = nerframe.costs(nerframe.pipeline("neurex").ops)
    >>> spec = breakdown_specs(costs.with_columns(chart=pl.lit(1)))[1]
    >>> spec["spec"]["encoding"]["y"]["field"], spec["facet"]["column"]["sort"]
    ('category', ['FLOPs', 'bytes'])
    """
    require(costs_or_schedule, (*_NEEDED, CHART), "breakdown_specs")
    return {
        chart: filled(_draw, data, values)
        for chart, (data, values) in _prepare(costs_or_schedule).items()
    }


def _prepare(table: pl.DataFrame) -> dict[object, Parts]:
    """Per chart: its dataset (``sums``) and values."""
    metrics = [(c, t) for c, t in _METRICS if c in table.columns]
    sums = (
        table.group_by(CHART, "category", direction().alias("direction"))
        .agg(pl.col(c).cast(pl.Float64).sum() for c, _ in metrics)
        .unpivot(index=[CHART, "category", "direction"], variable_name="column", value_name="value")
        .with_columns(
            metric=pl.col("column").replace_strict(dict(metrics)),
            share=pl.col("value") / pl.col("value").sum().over(CHART, "column"),
        )
    )
    charts = plain(sums.drop("column")).sort(CHART, "metric", "category", "direction")
    order = [t for _, t in metrics]
    return {chart: ({"sums": rows}, {"metrics": order}) for chart, rows in by_chart(charts).items()}


def _draw(data: Mapping[str, Any], v: Mapping[str, Any]) -> Chart:
    bars = (
        alt.Chart(data["sums"])
        .mark_bar()
        .encode(
            # Each label formatted alone: a "~s" axis format takes its prefix from the
            # tick step and labels 0 as "0M".
            x=alt.X("sum(value):Q", title=None, axis=alt.Axis(labelExpr=SI_LABEL)),
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
                sort=v["metrics"],
                title=None,
                header=alt.Header(labelFontSize=13),
            )
        )
        .resolve_scale(x="independent")
        .properties(title="Breakdown by category")
    )

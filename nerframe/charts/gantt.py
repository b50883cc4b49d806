"""The Gantt chart of one schedule: one lane per module instance, x = cycles."""

from __future__ import annotations

import json
from collections.abc import Callable

import altair as alt
import polars as pl

from nerframe.charts.tables import (
    fitting,
    largest,
    merged_label,
    one_value,
    op_label,
    plain,
    require,
)
from nerframe.charts.theme import Chart, category_color
from nerframe.errors import NerframeError

_GANTT_MAX_HEIGHT = 900
_LANE_PX = 18
_LABEL_CHARS = 24
"""Longest lane label on the axis; longer module names are shortened (the bar's
tooltip names its lanes in full)."""
_LABEL_PX = 7 * _LABEL_CHARS
_GANTT_COLUMNS = (
    *("graph", "accelerator", "op_id", "op_type", "category", "backward", "module"),
    *("instances", "first_instance", "start_cycle", "end_cycle", "duration_cycles", "bound"),
)


def gantt_chart(schedule: pl.DataFrame) -> Chart:
    """Schedule of one pipeline on one accelerator: one lane per module instance
    (an op spans lanes ``first_instance`` to ``first_instance + instances - 1`` of its
    module), x = cycles, colour = category."""
    require(schedule, _GANTT_COLUMNS, "gantt_chart")
    if schedule.is_empty():
        raise NerframeError("gantt_chart: empty schedule")
    graph = one_value(schedule, "graph", "gantt_chart")
    accel = one_value(schedule, "accelerator", "gantt_chart")
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
        (module, None if count == 1 else i)
        for module, count in lanes.select("module", "lanes").iter_rows()
        for i in range(count)
    ]
    placed = schedule.join(lanes.select("module", "base"), on="module").with_columns(
        lane_lo=pl.col("base") + pl.col("first_instance"),
        lane_hi=pl.col("base") + pl.col("first_instance") + pl.col("instances"),
    )
    placed = placed.with_columns(lanes=_lane_span(names))
    makespan = max(int(largest(placed["end_cycle"])), 1)

    def exact() -> pl.DataFrame:
        return placed.select(
            "module",
            "category",
            "lane_lo",
            "lane_hi",
            "start_cycle",
            "end_cycle",
            "duration_cycles",
            "lanes",
            op=op_label(),
            ops=pl.lit(1, pl.UInt32),
            bound=pl.col("bound").cast(pl.String),
        )

    def merged(buckets: int) -> Callable[[], pl.DataFrame]:
        # Ops on the same lanes, of one category, starting in the same slice of the
        # makespan become one bar from the first start to the last end.
        def make() -> pl.DataFrame:
            bucket = pl.col("start_cycle") * buckets // makespan
            return (
                placed.group_by(
                    "module", "category", "lane_lo", "lane_hi", "lanes", bucket.alias("b")
                )
                .agg(
                    merged_label().alias("op"),
                    pl.len().alias("ops"),
                    pl.col("start_cycle").min(),
                    pl.col("end_cycle").max(),
                    pl.col("duration_cycles").sum(),
                    pl.col("bound").cast(pl.String).unique().sort().str.join("/"),
                )
                .drop("b")
            )

        return make

    bars = fitting("gantt_chart", [exact, *(merged(b) for b in (1000, 100, 10, 1))])
    bars = plain(bars).sort("lane_lo", "start_cycle", "op")
    labels = [_lane_label(module, i, _LABEL_CHARS) for module, i in names]
    label_expr = f"{json.dumps(labels)}[floor(datum.value)]"
    y = alt.Y(
        "lane_lo:Q",
        scale=alt.Scale(domain=[0, total], reverse=True, nice=False, zero=True),
        axis=alt.Axis(
            values=[i + 0.5 for i in range(total)],
            # Vega thins explicit values down to tickCount, which defaults to height/40.
            tickCount=total,
            labelExpr=label_expr,
            # Lanes are labelled one by one while they are tall enough to read.
            labelOverlap=_LANE_PX * total > _GANTT_MAX_HEIGHT and "greedy",
            labelLimit=_LABEL_PX,
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
            color=category_color(),
            tooltip=[
                alt.Tooltip("op:N", title="op"),
                alt.Tooltip("category:N", title="category"),
                alt.Tooltip("lanes:N", title="lanes"),
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
        height=min(max(_LANE_PX * total, 120), _GANTT_MAX_HEIGHT),
        title=alt.Title(f"Schedule of {graph} on {accel}", subtitle=f"{makespan:,} cycles"),
    )


def _lane_label(module: str, instance: int | None, limit: int | None = None) -> str:
    """A lane's name, ``module #i`` for one of several instances; given a `limit` of
    characters, a longer module name is cut with an ellipsis, the instance kept.

    >>> _lane_label("row_processing_element", 3, 14)
    'row_proces… #3'
    >>> _lane_label("sampler", None, 14)
    'sampler'
    """
    suffix = "" if instance is None else f" #{instance}"
    if limit is not None and len(module) + len(suffix) > limit:
        module = module[: limit - len(suffix) - 1] + "…"
    return module + suffix


def _lane_span(names: list[tuple[str, int | None]]) -> pl.Expr:
    """The full names of the lanes ``lane_lo`` to ``lane_hi - 1`` (one module's)."""
    full = pl.Series([_lane_label(m, i) for m, i in names], dtype=pl.String)
    lo = pl.col("lane_lo").cast(pl.Int64)
    last = pl.col("lane_hi").cast(pl.Int64) - 1
    first_name = pl.lit(full).gather(lo)
    last_name = pl.lit(full).gather(last)
    return (
        pl.when(lo == last).then(first_name).otherwise(pl.format("{} to {}", first_name, last_name))
    )

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
        module if count == 1 else f"{module} #{i}"
        for module, count in lanes.select("module", "lanes").iter_rows()
        for i in range(count)
    ]
    placed = schedule.join(lanes.select("module", "base"), on="module").with_columns(
        lane_lo=pl.col("base") + pl.col("first_instance"),
        lane_hi=pl.col("base") + pl.col("first_instance") + pl.col("instances"),
    )
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
                placed.group_by("module", "category", "lane_lo", "lane_hi", bucket.alias("b"))
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
            color=category_color(),
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

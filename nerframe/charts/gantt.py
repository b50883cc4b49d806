"""The Gantt chart of one schedule: one lane per module instance, x = cycles."""

from __future__ import annotations

import json
from collections.abc import Callable, Mapping
from typing import Any

import altair as alt
import polars as pl

from nerframe.charts.tables import (
    CHART,
    by_chart,
    fitting_by,
    merged_label,
    one_value,
    op_label,
    plain,
    require,
)
from nerframe.charts.templates import Parts, filled
from nerframe.charts.theme import SI_LABEL, Chart, category_color
from nerframe.errors import InvalidInputError

_GANTT_MAX_HEIGHT = 900
_LANE_PX = 18
_LABEL_CHARS = 48
"""Longest lane label on the axis: every built-in module name fits whole; a longer
name from a user's file is shortened (the bar's tooltip names its lanes in full)."""
_CHAR_PX = 7
"""Width of one label character at the axis font's size, a little over its mean."""
_GANTT_COLUMNS = (
    *("graph", "accelerator", "op_id", "op_type", "category", "backward", "module"),
    *("instances", "first_instance", "start_cycle", "end_cycle", "duration_cycles", "bound"),
)


def gantt_chart(schedule: pl.DataFrame) -> Chart:
    """Schedule of one pipeline on one accelerator: one lane per module instance
    (an op spans lanes ``first_instance`` to ``first_instance + instances - 1`` of its
    module), x = cycles, colour = category.

    >>> import nerframe
    >>> run = nerframe.schedule("neurex", "neurex")
    >>> gantt_chart(run.schedule).to_dict()["title"]
    {'text': 'Schedule of neurex on neurex', 'subtitle': '1,826,807 cycles'}
    """
    require(schedule, _GANTT_COLUMNS, "gantt_chart")
    if schedule.is_empty():
        raise InvalidInputError("gantt_chart: empty schedule")
    one_value(schedule, "graph", "gantt_chart")
    one_value(schedule, "accelerator", "gantt_chart")
    ((data, values),) = _prepare(schedule.with_columns(pl.lit(0).alias(CHART))).values()
    return _draw(data, values)


def gantt_specs(schedule: pl.DataFrame) -> dict[object, dict[str, Any]]:
    """The spec of `gantt_chart` for each value of the ``chart`` column of `schedule`
    (one pipeline on one accelerator each), prepared in one pass and drawn from one
    template (`nerframe.charts.templates`): a report's hundreds of charts in a blink.

    >>> import nerframe, polars as pl
    >>> run = nerframe.schedule(nerframe.pipeline("neurex"), "neurex")
    >>> specs = gantt_specs(run.schedule.with_columns(chart=pl.lit("neurex")))
    >>> specs["neurex"]["title"]["text"]
    'Schedule of neurex on neurex'
    """
    require(schedule, (*_GANTT_COLUMNS, CHART), "gantt_specs")
    return {
        chart: filled(_draw, data, values) for chart, (data, values) in _prepare(schedule).items()
    }


def _prepare(schedule: pl.DataFrame) -> dict[object, Parts]:
    """Per chart: its datasets (``bars``, ``separators``) and values."""
    lanes = (
        schedule.group_by(CHART, "module")
        .agg(
            lanes=(pl.col("first_instance") + pl.col("instances")).max(),
            first=pl.col("start_cycle").min(),
        )
        .sort(CHART, "first", "module")
        .with_columns(base=(pl.col("lanes").cum_sum() - pl.col("lanes")).over(CHART))
    )
    # Each chart's lanes in order: (module, instance or None when it has one).
    names: dict[object, list[tuple[str, int | None]]] = {}
    for chart, module, count in lanes.select(CHART, "module", "lanes").iter_rows():
        names.setdefault(chart, []).extend(
            (module, None if count == 1 else i) for i in range(count)
        )
    full = pl.DataFrame(
        {
            CHART: [c for c, lane_names in names.items() for _ in lane_names],
            "lane": [i for lane_names in names.values() for i in range(len(lane_names))],
            "name": [_lane_label(m, i) for lane_names in names.values() for m, i in lane_names],
        },
        schema={CHART: schedule.schema[CHART], "lane": pl.Int64, "name": pl.String},
    )
    placed = (
        schedule.join(lanes.select(CHART, "module", "base"), on=[CHART, "module"])
        .with_columns(
            lane_lo=pl.col("base") + pl.col("first_instance"),
            lane_hi=pl.col("base") + pl.col("first_instance") + pl.col("instances"),
            makespan=pl.max_horizontal(pl.col("end_cycle").max().over(CHART), 1),
        )
        .join(_lane_names(full, "lane_lo", 0), on=[CHART, "lane_lo"])
        .join(_lane_names(full, "lane_hi", 1), on=[CHART, "lane_hi"], suffix="_last")
        .with_columns(
            lanes=pl.when(pl.col("lane_hi") - pl.col("lane_lo") == 1)
            .then("name")
            .otherwise(pl.format("{} to {}", "name", "name_last"))
        )
    )

    def exact(rows: pl.DataFrame) -> pl.DataFrame:
        return rows.select(
            CHART,
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

    def merged(buckets: int) -> Callable[[pl.DataFrame], pl.DataFrame]:
        # Ops on the same lanes, of one category, starting in the same slice of the
        # makespan become one bar from the first start to the last end.
        def make(rows: pl.DataFrame) -> pl.DataFrame:
            bucket = pl.col("start_cycle") * buckets // pl.col("makespan")
            return (
                rows.group_by(
                    CHART, "module", "category", "lane_lo", "lane_hi", "lanes", bucket.alias("b")
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

    bars = fitting_by(
        "gantt_chart",
        placed,
        [exact, *(merged(b) for b in (1000, 100, 10, 1))],
        lambda table: plain(table).sort(CHART, "lane_lo", "start_cycle", "op"),
    )
    separators = by_chart(
        lanes.filter(pl.col("base") > 0).select(
            CHART, "module", lane=pl.col("base").cast(pl.Float64)
        )
    )
    no_separators = pl.DataFrame(schema={"module": pl.String, "lane": pl.Float64})
    makespans = dict(placed.group_by(CHART).agg(pl.col("makespan").first()).iter_rows())
    titles = dict(
        schedule.group_by(CHART)
        .agg(pl.format("Schedule of {} on {}", "graph", "accelerator").first())
        .iter_rows()
    )
    # With frame ops the chart spans the whole frame (they run before and after the
    # batches), not one batch's makespan: the subtitle says so.
    framed = set(schedule.filter(pl.col("scope") == "frame")[CHART].unique().to_list())
    parts = {}
    for chart, lane_names in names.items():
        total = len(lane_names)
        labels = [_lane_label(module, i, _LABEL_CHARS) for module, i in lane_names]
        values = {
            # the axis makes room for its longest label, so no label is cut
            "label_px": _CHAR_PX * max(map(len, labels), default=1),
            "lanes": total,
            "ticks": [i + 0.5 for i in range(total)],
            "label_expr": f"{json.dumps(labels)}[floor(datum.value)]",
            # Lanes are labelled one by one while they are tall enough to read.
            "label_overlap": _LANE_PX * total > _GANTT_MAX_HEIGHT and "greedy",
            "makespan": makespans[chart],
            "height": min(max(_LANE_PX * total, 120), _GANTT_MAX_HEIGHT),
            "title": titles[chart],
            "subtitle": f"{makespans[chart]:,} cycles"
            + (": the frame ops and the first batch" if chart in framed else ""),
        }
        data = {"bars": bars[chart], "separators": separators.get(chart, no_separators)}
        parts[chart] = (data, values)
    return parts


def _draw(data: Mapping[str, Any], v: Mapping[str, Any]) -> Chart:
    y = alt.Y(
        "lane_lo:Q",
        scale=alt.Scale(domain=[0, v["lanes"]], reverse=True, nice=False, zero=True),
        axis=alt.Axis(
            values=v["ticks"],
            # Vega thins explicit values down to tickCount, which defaults to height/40.
            tickCount=v["lanes"],
            labelExpr=v["label_expr"],
            labelOverlap=v["label_overlap"],
            labelLimit=v["label_px"],
            grid=False,
            ticks=False,
            title="module instance",
        ),
    )
    gantt = (
        alt.Chart(data["bars"])
        .mark_rect(stroke="white", strokeWidth=0.5)
        .encode(
            # "12M", not "12,000,000": long labels run into each other
            x=alt.X(
                "start_cycle:Q",
                title="cycle",
                scale=alt.Scale(domain=[0, v["makespan"]]),
                axis=alt.Axis(labelExpr=SI_LABEL),
            ),
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
        alt.Chart(data["separators"])
        .mark_rule(color="#999999", strokeDash=[2, 2])
        .encode(y=alt.Y("lane:Q"))
    )
    # Sizes and title as constructor arguments: `properties` would validate them.
    return alt.layer(
        gantt,
        separators,
        width=640,
        height=v["height"],
        title=alt.Title(v["title"], subtitle=v["subtitle"]),
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


def _lane_names(full: pl.DataFrame, column: str, offset: int) -> pl.DataFrame:
    """Lane names keyed by chart and `column`, the lane's index plus `offset`."""
    return full.select(CHART, (pl.col("lane") + offset).alias(column), "name")

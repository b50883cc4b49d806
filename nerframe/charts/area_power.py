"""Each accelerator's area and power, part by part, on log axes; GPUs apart."""

from __future__ import annotations

import math
from collections.abc import Collection

import altair as alt
import polars as pl

from nerframe.charts.tables import plain
from nerframe.charts.theme import LOG_PLAIN_LABEL, Chart

_PARTS = alt.Scale(domain=["module", "sram"], range=["#4c78a8", "#f58518"])


def area_power_chart(breakdown: pl.DataFrame, *, gpus: Collection[str] = ()) -> Chart:
    """Area and power per accelerator (`nerframe.area_power.breakdown` rows): a grey
    bar for the whole design and a point for each module and SRAM block, on log axes so
    that a 0.1 mm² block and a 600 mm² die are both readable.

    The accelerators named in `gpus` are drawn apart, at their own node: a GPU scaled to
    28 nm is no design anyone builds. The others are compared at 28 nm (the node table,
    `nerframe.technology`), their power with every unit busy (module dynamic power plus
    leakage). Parts without a published area, or of zero area or power, have no place
    on a log axis and are left out.

    >>> import nerframe
    >>> from nerframe.area_power import breakdown
    >>> table = pl.concat([breakdown(nerframe.accelerator(n)) for n in ("neurex", "a100")])
    >>> spec = area_power_chart(table, gpus=["a100"]).to_dict()
    >>> for row in spec["vconcat"]:
    ...     print([panel["title"] for panel in row["hconcat"]])
    ['accelerators: area at 28 nm (mm²)', 'accelerators: power at 28 nm, every unit busy (W)']
    ['GPUs: area at their own node (mm²)', 'GPUs: power per unit at their own node (W)']
    """
    rows = []
    designs = breakdown.filter(~pl.col("accelerator").is_in(list(gpus)))
    if not designs.is_empty():
        rows.append(
            alt.hconcat(
                _panel(designs, "area_mm2_28nm", "accelerators: area at 28 nm (mm²)"),
                _panel(
                    designs, "power_w_28nm", "accelerators: power at 28 nm, every unit busy (W)"
                ),
            )
        )
    chips = breakdown.filter(pl.col("accelerator").is_in(list(gpus)))
    if not chips.is_empty():
        # A GPU runs one op at a time, so its modules' powers are alternatives, not a sum:
        # no total bar for its power.
        rows.append(
            alt.hconcat(
                _panel(chips, "area_mm2", "GPUs: area at their own node (mm²)"),
                _panel(chips, "power_w", "GPUs: power per unit at their own node (W)", total=False),
            )
        )
    return alt.vconcat(*rows)


def _panel(table: pl.DataFrame, column: str, title: str, *, total: bool = True) -> alt.LayerChart:
    """One log-axis panel of `column`: the total as a bar, the parts as points."""
    drawable = table.filter(pl.col(column).is_not_null() & (pl.col(column) > 0))
    parts = plain(drawable.filter(pl.col("part") != "total")).select(
        "accelerator", "part", "name", value=column
    )
    totals = plain(drawable.filter(pl.col("part") == "total")).select(
        "accelerator", "name", value=column
    )
    values = parts["value"].to_list() + (totals["value"].to_list() if total else [])
    low, high = min(values, default=1.0) / 2, max(values, default=1.0) * 1.5
    # Whole decades, so that every axis has labelled powers of ten, even one whose
    # figures all lie within a decade (GPU dies of 300-900 mm²).
    domain = [10 ** math.floor(math.log10(low)), 10 ** math.ceil(math.log10(high))]
    x = alt.X(
        "value:Q",
        title=None,
        scale=alt.Scale(type="log", domain=domain),
        # eight decades of power in one panel: overlapping labels are dropped
        axis=alt.Axis(labelExpr=LOG_PLAIN_LABEL, labelOverlap=True),
    )
    y = alt.Y("accelerator:N", title=None, sort=sorted(set(table["accelerator"].to_list())))
    points = (
        alt.Chart(alt.Data(values=parts.to_dicts()))
        .mark_point(filled=True, size=60, opacity=0.9)
        .encode(
            x=x,
            y=y,
            color=alt.Color("part:N", title="part", scale=_PARTS),
            shape=alt.Shape("part:N", title="part", scale=alt.Scale(domain=["module", "sram"])),
            tooltip=["accelerator:N", "part:N", "name:N", alt.Tooltip("value:Q", format=".4~g")],
        )
    )
    layers: list[alt.Chart] = []
    if total and not totals.is_empty():
        layers.append(
            alt.Chart(alt.Data(values=totals.to_dicts()))
            .mark_bar(color="#dddddd", height=14)
            .encode(
                x=x,
                x2=alt.datum(domain[0]),
                y=y,
                tooltip=["accelerator:N", alt.Tooltip("value:Q", title="total", format=".4~g")],
            )
        )
    layers.append(points)
    return alt.LayerChart(layer=layers, title=title, width=420)

"""Stacked bars of each accelerator's area and power at 28 nm, part by part."""

from __future__ import annotations

import altair as alt
import polars as pl

from nerframe.charts.tables import plain
from nerframe.charts.theme import Chart


def area_power_chart(breakdown: pl.DataFrame) -> Chart:
    """Area and power (module dynamic plus leakage) at 28 nm per accelerator, one
    stacked segment per module or SRAM block (`nerframe.area_power.breakdown` rows;
    ``total`` rows and parts without a published area are left out of the area panel).

    >>> import nerframe
    >>> from nerframe.area_power import breakdown
    >>> spec = area_power_chart(breakdown(nerframe.accelerator("neurex"))).to_dict()
    >>> [panel["title"] for panel in spec["hconcat"]]
    ['area at 28 nm (mm²)', 'power at 28 nm, every unit busy (W)']
    """
    parts = breakdown.filter(pl.col("part") != "total").select(
        "accelerator", "part", "name", "area_mm2_28nm", "power_w_28nm"
    )
    data = alt.Data(values=plain(parts).to_dicts())
    tooltip = ["accelerator:N", "part:N", "name:N", "area_mm2_28nm:Q", "power_w_28nm:Q"]

    def panel(column: str, title: str) -> alt.Chart:
        return (
            alt.Chart(data, title=title)
            .mark_bar()
            .encode(
                x=alt.X(f"sum({column}):Q", title=None),
                y=alt.Y("accelerator:N", title=None),
                color=alt.Color("part:N", title="part"),
                detail="name:N",
                tooltip=tooltip,
            )
            .transform_filter(f"isValid(datum.{column})")
        )

    return alt.hconcat(
        panel("area_mm2_28nm", "area at 28 nm (mm²)"),
        panel("power_w_28nm", "power at 28 nm, every unit busy (W)"),
    )

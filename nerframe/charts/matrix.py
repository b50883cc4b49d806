"""The pipeline x accelerator heat maps of fps and energy per frame."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import altair as alt
import polars as pl

from nerframe.charts.tables import MAX_ROWS, plain, require
from nerframe.charts.templates import Parts, filled
from nerframe.charts.theme import Chart
from nerframe.errors import InvalidInputError

# (column, title, Vega colour scheme)
_PANELS: tuple[tuple[str, str, Any], ...] = (
    ("fps", "frames per second", "lightgreyteal"),
    ("energy_per_frame_j", "energy per frame (J)", "lightorange"),
)


def matrix_chart(summary: pl.DataFrame) -> Chart:
    """Pipeline × accelerator heat maps of fps and energy per frame, one above the
    other (side by side, 14 accelerators overflow a page); unmapped pairs are grey
    cells labelled ``unmapped``. Values are plain numbers (``0.531`` fps, never
    ``531m``, which reads as millions).

    >>> summary = pl.DataFrame({"graph": ["nerf"], "accelerator": ["npu"], "status": ["ok"],
    ...                         "fps": [30.0], "energy_per_frame_j": [0.002]})
    >>> [panel["title"] for panel in matrix_chart(summary).to_dict()["vconcat"]]
    ['frames per second', 'energy per frame (J)']
    """
    return _draw(*_prepare(summary))


def matrix_spec(summary: pl.DataFrame) -> dict[str, Any]:
    """The spec of `matrix_chart`, drawn from a template (`nerframe.charts.templates`).

    >>> summary = pl.DataFrame({"graph": ["nerf"], "accelerator": ["npu"], "status": ["ok"],
    ...                         "fps": [30.0], "energy_per_frame_j": [0.002]})
    >>> matrix_spec(summary)["datasets"]["cells"][0]["fps"]
    30.0
    """
    return filled(_draw, *_prepare(summary))


def _prepare(summary: pl.DataFrame) -> Parts:
    """The chart's dataset (``cells``) and values."""
    require(
        summary, ("graph", "accelerator", "status", *(c for c, _, _ in _PANELS)), "matrix_chart"
    )
    if summary.height > MAX_ROWS:
        raise InvalidInputError(f"matrix_chart: {summary.height} pairs are too many to draw")
    cells = plain(
        summary.select("graph", "accelerator", "status", *(c for c, _, _ in _PANELS))
    ).sort("graph", "accelerator")
    graphs = cells["graph"].unique().sort().to_list()
    accels = cells["accelerator"].unique().sort().to_list()
    values = {
        "graphs": graphs,
        "accelerators": accels,
        # 60 pixels a column hold "unmapped" and fit 18 systems in a 1400-pixel page
        "width": max(60 * len(accels), 140),
        "height": max(28 * len(graphs), 60),
    }
    return {"cells": cells}, values


def _draw(data: Mapping[str, Any], v: Mapping[str, Any]) -> Chart:
    panels = []
    for column, title, scheme in _PANELS:
        base = alt.Chart(data["cells"]).encode(
            x=alt.X("accelerator:N", sort=v["accelerators"], title="accelerator"),
            y=alt.Y("graph:N", sort=v["graphs"], title="pipeline"),
            tooltip=[
                alt.Tooltip("graph:N", title="pipeline"),
                alt.Tooltip("accelerator:N", title="accelerator"),
                alt.Tooltip("status:N", title="status"),
                alt.Tooltip("fps:Q", title="fps", format=".4~r"),
                alt.Tooltip("energy_per_frame_j:Q", title="energy per frame (J)", format=".4~r"),
            ],
        )
        ok = alt.datum.status == "ok"
        # Sizes and title as constructor arguments: `properties` would validate them.
        panels.append(
            alt.layer(
                base.mark_rect(color="#dddddd"),
                base.mark_rect()
                .encode(
                    color=alt.Color(
                        f"{column}:Q",
                        scale=alt.Scale(type="log", scheme=scheme),
                        legend=alt.Legend(format=".3~r", title=None),
                    )
                )
                .transform_filter(ok),
                base.mark_text(fontSize=11)
                .encode(text=alt.Text(f"{column}:Q", format=".3~r"))
                .transform_filter(ok),
                base.mark_text(fontSize=10, color="#666666", text="unmapped").transform_filter(
                    alt.datum.status != "ok"
                ),
                width=v["width"],
                height=v["height"],
                title=title,
            )
        )
    return (
        alt.vconcat(*panels)
        .resolve_scale(color="independent")
        .properties(title="Pipeline × accelerator")
    )

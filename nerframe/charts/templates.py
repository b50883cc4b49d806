"""Vega-Lite specs of many charts of one kind, drawn by altair once.

Building an altair chart and converting it to a spec takes tens of milliseconds
(encoding inference, deep copies, schema validation), far longer than preparing
its data; a report draws hundreds of charts of a few kinds that differ only in
their data and a handful of values (titles, scale domains, sizes). So each kind
has a `Draw` function that lays the chart out from named datasets and values;
altair runs it once per kind with placeholders (`template`), and each chart's
spec is that template with its own rows and values put in (`filled`), equal to
what ``draw(data, values).to_dict()`` gives with the datasets named as in `data`.

>>> import altair as alt
>>> def draw(data, values):
...     return alt.Chart(data["points"]).mark_point().encode(x="x:Q").properties(
...         title=values["title"])
>>> spec = filled(draw, {"points": [{"x": 1}]}, {"title": "one point"})
>>> spec["title"], spec["data"], spec["datasets"]
('one point', {'name': 'points'}, {'points': [{'x': 1}]})
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from functools import cache
from typing import Any

import altair as alt
import polars as pl
from altair.utils.schemapi import debug_mode

from nerframe.charts.theme import Chart

Draw = Callable[[Mapping[str, Any], Mapping[str, Any]], Chart]
"""Lays out a kind of chart: (datasets by name, values by name) -> altair chart.
A value may be ``alt.Undefined`` to leave its property out."""

Parts = tuple[dict[str, Any], dict[str, Any]]
"""One chart's datasets and values, as a `Draw` function takes them."""

_SLOT = "\x00nerframe-slot:"


@cache
def template(draw: Draw, datasets: tuple[str, ...], values: tuple[str, ...]) -> dict[str, Any]:
    """The spec of `draw` over named datasets, each value a placeholder string."""
    # The placeholders are not valid values; altair checks them only in debug mode.
    with debug_mode(False):
        chart = draw(
            {name: alt.NamedData(name) for name in datasets},
            {name: f"{_SLOT}{name}" for name in values},
        )
        return chart.to_dict(validate=False)


def filled(
    draw: Draw,
    data: Mapping[str, pl.DataFrame | list[dict[str, Any]]],
    values: Mapping[str, Any],
) -> dict[str, Any]:
    """The spec of ``draw(data, values)``: its kind's `template` with `values` put in
    and `data` (tables or JSON rows) as the spec's named datasets."""
    spec = _put(template(draw, tuple(data), tuple(values)), values)
    spec["datasets"] = {
        name: rows.to_dicts() if isinstance(rows, pl.DataFrame) else rows
        for name, rows in data.items()
    }
    return spec


def _put(node: Any, values: Mapping[str, Any]) -> Any:
    """A copy of `node` with each placeholder replaced by its value; a property whose
    value is ``alt.Undefined`` is left out."""
    if isinstance(node, dict):
        out = {key: _put(child, values) for key, child in node.items()}
        return {key: child for key, child in out.items() if child is not alt.Undefined}
    if isinstance(node, list):
        return [_put(child, values) for child in node]
    if isinstance(node, str) and node.startswith(_SLOT):
        return values[node.removeprefix(_SLOT)]
    return node

"""The look shared by every nerframe chart: font, category colours, Vega-Lite version.

>>> category_color().to_dict()["scale"]["range"][0]
'#4c78a8'
"""

from __future__ import annotations

from typing import Any

import altair as alt

from nerframe.taxonomy import CATEGORIES

VL_VERSION = ".".join(alt.SCHEMA_VERSION.lstrip("v").split(".")[:2])
"""The Vega-Lite version altair writes, as vl-convert names it (e.g. ``6.4``)."""

CONFIG: dict[str, Any] = {"font": "Liberation Sans, Arial, sans-serif"}
"""Chart configuration applied on export and in reports (charts stay composable)."""

Chart = alt.Chart | alt.LayerChart | alt.HConcatChart | alt.VConcatChart | alt.FacetChart

SI_LABEL = "format(datum.value, '~s')"
"""An axis label expression: each tick value with its own SI prefix (``0``, ``200M``).
An axis ``format`` of ``~s`` takes one prefix from the tick step instead, which
labels 0 as ``0M``."""

# A log axis has ticks at 2, 3, ... 9 times each power of ten too: only the powers
# are labelled, as Vega's own log-axis labels are.
_DECADE = "abs(log(datum.value) / LN10 - round(log(datum.value) / LN10)) < 1e-6"

LOG_SI_LABEL = f"{_DECADE} ? format(datum.value, '~s') : ''"
"""`SI_LABEL` for a log axis: powers of ten only (``1G``, ``10G``)."""

LOG_PLAIN_LABEL = f"{_DECADE} ? format(datum.value, '~r') : ''"
"""A log-axis label expression for figures whose SI prefixes would read as units
(``100m`` FLOP/byte, ``694m`` fps): plain powers of ten (``0.1``, ``1000``)."""

CATEGORY_COLORS = ("#4c78a8", "#f58518", "#54a24b", "#e45756", "#b279a2")
DIRECTIONS = ("forward", "backward")


def category_color(**kwargs: Any) -> alt.Color:
    """Colour by ``category``: the same colour for a category in every chart.

    >>> category_color(legend=None).to_dict()["field"]
    'category'
    """
    return alt.Color(
        "category:N",
        scale=alt.Scale(domain=list(CATEGORIES), range=list(CATEGORY_COLORS)),
        title="category",
        **kwargs,
    )

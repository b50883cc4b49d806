"""Charts of sweep results: the Pareto front and per-axis sensitivity.

Both take small tables (a front from `nerframe.sweeps.results.pareto`, the
``sensitivity`` named query's rows), never a whole sweep; save them with
`nerframe.charts.save_chart`.

>>> import polars as pl
>>> front = pl.DataFrame({"graph": ["g", "g"], "config": [3, 1], "fps": [60.0, 30.0],
...                       "energy_per_frame_j": [2.0, 1.0]})
>>> pareto_chart(front, {"fps": "max", "energy_per_frame_j": "min"}).to_dict()["title"]
'Pareto front: fps (higher is better) vs energy_per_frame_j (lower is better)'
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING

import polars as pl

if TYPE_CHECKING:
    import altair as alt

    from nerframe._typing import Direction

_BETTER = {"max": "higher is better", "min": "lower is better"}


def _tooltip(rows: pl.DataFrame) -> list[alt.Tooltip]:
    import altair as alt  # altair takes a third of a second to import: only charts need it

    # A dot in a field name means a nested field to Vega-Lite: escape the axis names'.
    return [
        alt.Tooltip(
            name.replace(".", "\\."),
            type="quantitative" if dtype.is_numeric() else "nominal",
            title=name,
        )
        for name, dtype in rows.schema.items()
    ]


def pareto_chart(
    front: pl.DataFrame, objectives: Mapping[str, Direction]
) -> alt.LayerChart | alt.FacetChart:
    """The front on its first two objectives: one line and points per graph, stepping
    from the best of the first objective; the tooltip shows every column of a row.

    >>> import nerframe
    >>> rows = nerframe.sweep("neurex", "neurex", {"systolic_array_32x32.count": [1, 2, 4]})
    >>> objectives = {"fps": "max", "energy_per_frame_j": "min"}
    >>> pareto_chart(nerframe.pareto([rows], objectives), objectives).to_dict()["title"]
    'Pareto front: fps (higher is better) vs energy_per_frame_j (lower is better)'
    """
    from nerframe.charts.tables import require
    from nerframe.sweeps.results import check_objectives

    require(front, ("graph",), "pareto_chart")
    names = list(check_objectives(objectives, front.columns, "pareto_chart", least=2))
    import altair as alt

    x, y = names[1], names[0]
    rows = front.with_columns(pl.col(pl.Enum, pl.Categorical).cast(pl.String))
    tooltip = _tooltip(rows)
    base = alt.Chart(rows).encode(
        x=alt.X(f"{x}:Q", title=f"{x} ({_BETTER[objectives[x]]})", scale=alt.Scale(zero=False)),
        y=alt.Y(f"{y}:Q", title=f"{y} ({_BETTER[objectives[y]]})", scale=alt.Scale(zero=False)),
        color=alt.Color("graph:N", title="graph"),
    )
    title = f"Pareto front: {y} ({_BETTER[objectives[y]]}) vs {x} ({_BETTER[objectives[x]]})"
    return alt.layer(
        base.mark_line(interpolate="step-after", opacity=0.5).encode(order=f"{x}:Q"),
        base.mark_point(filled=True, size=50).encode(tooltip=tooltip),
    ).properties(title=title, width=420, height=300)


def sensitivity_chart(sensitivity: pl.DataFrame) -> alt.Chart:
    """Bars of each axis's fps swing (the ``sensitivity`` query), most sensitive on top,
    one panel row per graph.

    >>> table = pl.DataFrame({"graph": ["g", "g"], "axis": ["rays", "frequency_mhz"],
    ...                       "swing": [0.8, 0.1]})
    >>> sensitivity_chart(table).to_dict()["encoding"]["y"]["sort"]
    '-x'
    """
    from nerframe.charts.tables import require

    require(sensitivity, ("graph", "axis", "swing"), "sensitivity_chart")
    import altair as alt

    return (
        alt.Chart(sensitivity)
        .mark_bar()
        .encode(
            x=alt.X("swing:Q", title="fps swing across the axis's values (share of mean)"),
            y=alt.Y("axis:N", sort="-x", title=None),
            row=alt.Row("graph:N", title=None),
            tooltip=_tooltip(sensitivity),
        )
        .properties(title="Sensitivity of fps to each swept axis", width=360)
    )

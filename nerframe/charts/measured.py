"""The measured-vs-predicted scatter of a traced run's ops (see `nerframe.trace.compare`).

>>> import polars as pl
>>> table = pl.DataFrame({"graph": ["g"], "op_id": [0], "op_type": ["MLP"], "path": ["mlp"],
...                       "measured_s": [2e-3], "predicted_s": [1e-3], "ratio": [2.0]})
>>> measured_chart(table).to_dict()["layer"][0]["mark"]["type"]
'line'
"""

from __future__ import annotations

import altair as alt
import polars as pl

from nerframe.charts.tables import MAX_ROWS, require
from nerframe.charts.theme import Chart
from nerframe.errors import InvalidInputError


def measured_chart(comparison: pl.DataFrame) -> Chart:
    """Log-log scatter of each op's measured time (y) against its predicted time (x),
    coloured by op type, over the ``measured = predicted`` diagonal; ops without a
    ratio (nothing predicted or measured) are left out.

    >>> from nerframe.rooflines import System
    >>> from nerframe.trace import Call, Trace, trace_graph
    >>> from nerframe.trace.compare import compare
    >>> fc = Call(0, None, "fc", ["torch.nn.modules.linear.Linear"],
    ...           {"in_features": 4, "out_features": 4}, {}, [[500, 4]], [[500, 4]], [], [[]], 2e-4)
    >>> rows = compare(trace_graph(Trace("fc", [fc])).measured, System("cpu", 1e-3, 10.0))
    >>> measured_chart(rows).to_dict()["title"]
    'measured vs predicted time per traced op'
    """
    need = ("graph", "op_id", "op_type", "path", "measured_s", "predicted_s", "ratio")
    require(comparison, need, "measured_chart")
    if comparison.height > MAX_ROWS:
        raise InvalidInputError(f"measured_chart: {comparison.height} ops are too many to draw")
    points = (
        comparison.filter(pl.col("ratio").is_not_null())
        .select(*need)
        .with_columns(pl.col("op_type").cast(pl.String))
        .sort("graph", "op_id")
    )
    if points.is_empty():
        raise InvalidInputError("measured_chart: no op has both a measured and a predicted time")
    times = pl.concat([points["measured_s"], points["predicted_s"]])
    lo, hi = float(times.min()) / 2, float(times.max()) * 2  # type: ignore[arg-type]
    axis = alt.Scale(type="log", domain=[lo, hi])
    diagonal = (
        alt.Chart(alt.Data(values=[{"t": lo}, {"t": hi}]))
        .mark_line(color="#888", strokeDash=[4, 4])
        .encode(x=alt.X("t:Q", scale=axis), y=alt.Y("t:Q", scale=axis))
    )
    dots = (
        alt.Chart(alt.Data(values=points.to_dicts()))
        .mark_point(filled=True, size=70)
        .encode(
            x=alt.X("predicted_s:Q", scale=axis, title="predicted on host (s)"),
            y=alt.Y("measured_s:Q", scale=axis, title="measured (s)"),
            color=alt.Color("op_type:N", title="op type"),
            shape=alt.Shape("graph:N", title="graph"),
            tooltip=[
                "graph:N",
                "op_id:Q",
                "op_type:N",
                "path:N",
                "measured_s:Q",
                "predicted_s:Q",
                "ratio:Q",
            ],
        )
    )
    return alt.layer(diagonal, dots).properties(
        title="measured vs predicted time per traced op", width=420, height=320
    )

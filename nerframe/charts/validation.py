"""The validation chart: each scored validation row's prediction over its published
figure, with the band of the assumed figures as an error bar (see `nerframe.validate`).

>>> import polars as pl
>>> table = pl.DataFrame({"id": ["a", "b"], "tag": ["validation"] * 2,
...                       "metric": ["fps", "area_mm2"], "value": [10.0, 2.0],
...                       "predicted": [12.0, 1.0], "score": [0.2, -0.5],
...                       "low": [8.0, None], "high": [15.0, None], "inside": [True, None]})
>>> [layer["mark"]["type"] for layer in validation_chart(table).to_dict()["layer"]]
['rect', 'rule', 'rule', 'point']
"""

from __future__ import annotations

import altair as alt
import polars as pl

from nerframe.charts.tables import MAX_ROWS, require
from nerframe.charts.theme import Chart
from nerframe.errors import InvalidInputError

_WITHIN = 2.0
"""The shaded region: within this factor of the published figure (the target's 2x)."""


def validation_chart(table: pl.DataFrame) -> Chart:
    """Each scored validation row of `table` (a `nerframe.validate` result) as its
    prediction over the published figure on a log axis, in order of that ratio, over
    the shaded 0.5-2x region and the line of a perfect prediction. With the bands
    (``validate(bands=True)``: columns ``low``, ``high``, ``inside``), a row's band
    over its assumed figures is an error bar, and the colour says whether the
    published figure lies inside it; rows without a band (op-level metrics) have none.

    >>> from nerframe.validation import validate
    >>> spec = validation_chart(validate(bands=True)).to_dict()
    >>> spec["title"]
    'predicted / published, with the band of the assumed figures'
    """
    require(table, ("id", "tag", "metric", "value", "predicted", "score"), "validation_chart")
    banded = {"low", "high", "inside"} <= set(table.columns)
    rows = table.filter(pl.col("tag") == "validation", pl.col("score").is_not_null())
    if rows.height > MAX_ROWS:
        raise InvalidInputError(f"validation_chart: {rows.height} rows are too many to draw")
    if rows.is_empty():
        raise InvalidInputError("validation_chart: no validation row has a prediction")
    value = pl.col("value")
    points = rows.select(
        "id",
        "metric",
        "value",
        "predicted",
        (pl.col("predicted") / value).alias("ratio"),
        *(
            [
                (pl.col("low") / value).alias("low_ratio"),
                (pl.col("high") / value).alias("high_ratio"),
                pl.when(pl.col("inside").is_null())
                .then(pl.lit("no band"))
                .when(pl.col("inside"))
                .then(pl.lit("inside its band"))
                .otherwise(pl.lit("outside its band"))
                .alias("band"),
            ]
            if banded
            else [pl.lit("no band").alias("band")]
        ),
    ).sort("ratio", "id")
    ratios = [r for r in points["ratio"].to_list() if r and r > 0]
    if banded:
        ratios += [r for c in ("low_ratio", "high_ratio") for r in points[c].to_list() if r]
    lo = min([*ratios, 1 / _WITHIN]) / 1.5
    hi = max([*ratios, _WITHIN]) * 1.5
    scale = alt.Scale(type="log", domain=[lo, hi])
    order = points["id"].to_list()
    y = alt.Y("id:N", sort=order, title=None)
    region = (
        alt.Chart(alt.Data(values=[{"a": 1 / _WITHIN, "b": _WITHIN}]))
        .mark_rect(color="#2a9d8f", opacity=0.12)
        .encode(x=alt.X("a:Q", scale=scale), x2="b:Q")
    )
    exact = (
        alt.Chart(alt.Data(values=[{"x": 1.0}]))
        .mark_rule(color="#888", strokeDash=[4, 4])
        .encode(x=alt.X("x:Q", scale=scale))
    )
    data = alt.Data(values=points.to_dicts())
    colour = alt.Color(
        "band:N",
        title="published figure",
        scale=alt.Scale(
            domain=["inside its band", "outside its band", "no band"],
            range=["#2a9d8f", "#e76f51", "#6c757d"],
        ),
    )
    bars = (
        alt.Chart(data)
        .transform_filter("isValid(datum.low_ratio)")
        .mark_rule(strokeWidth=2)
        .encode(x=alt.X("low_ratio:Q", scale=scale), x2="high_ratio:Q", y=y, color=colour)
    )
    dots = (
        alt.Chart(data)
        .mark_point(filled=True, size=60)
        .encode(
            x=alt.X("ratio:Q", scale=scale, title="predicted / published (log)"),
            y=y,
            color=colour,
            tooltip=["id:N", "metric:N", "value:Q", "predicted:Q", "ratio:Q", "band:N"],
        )
    )
    return alt.layer(region, exact, bars, dots).properties(
        title="predicted / published, with the band of the assumed figures",
        width=420,
        height=max(160, 14 * points.height),
    )

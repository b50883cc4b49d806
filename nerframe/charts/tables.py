"""Preparing polars tables for charts: checks, JSON-safe values, labels, row limits.

>>> import polars as pl
>>> plain(pl.DataFrame({"x": [1.0, float("inf")]}))["x"].to_list()
[1.0, None]
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import cast

import polars as pl

from nerframe.errors import InvalidInputError

MAX_ROWS = 5000
"""Rows altair's default data transformer accepts in one dataset."""

CHART = "chart"
"""The column naming the chart a row belongs to, when many charts of a kind are
prepared in one pass (`fitting_by`)."""


def plain(df: pl.DataFrame) -> pl.DataFrame:
    """Enums as strings and non-finite floats as nulls: what JSON and Vega can hold.

    >>> plain(pl.DataFrame({"x": [float("nan")]}))["x"].to_list()
    [None]
    """
    return df.with_columns(
        [
            pl.col(name).cast(pl.String)
            if isinstance(dtype, pl.Enum | pl.Categorical)
            else pl.when(pl.col(name).is_finite()).then(pl.col(name))
            for name, dtype in df.schema.items()
            if isinstance(dtype, pl.Enum | pl.Categorical) or dtype.is_float()
        ]
    )


def fitting(what: str, candidates: Iterable[Callable[[], pl.DataFrame]]) -> pl.DataFrame:
    """The first candidate table (finest first) small enough to embed.

    >>> fitting("chart", [lambda: pl.DataFrame({"x": [1]})]).height
    1
    """
    height = 0
    for make in candidates:
        table = make()
        if table.height <= MAX_ROWS:
            return table
        height = table.height
    raise InvalidInputError(
        f"{what}: still {height} marks after merging operators (limit {MAX_ROWS}); "
        "filter the table first"
    )


def fitting_by(
    what: str,
    rows: pl.DataFrame,
    candidates: Iterable[Callable[[pl.DataFrame], pl.DataFrame]],
    finish: Callable[[pl.DataFrame], pl.DataFrame],
) -> dict[object, pl.DataFrame]:
    """Per value of the `CHART` column of `rows`: the first candidate table made from
    its rows (finest first) small enough to embed, `finish`ed, without the column.

    Each candidate makes the tables of every chart still too large at once.

    >>> rows = pl.DataFrame({"chart": [1, 1, 2], "x": [1, 2, 3]})
    >>> fitting_by("chart", rows, [lambda r: r], lambda t: t.sort("x"))[1]["x"].to_list()
    [1, 2]
    """
    found: dict[object, pl.DataFrame] = {}
    height = 0
    for make in candidates:
        table = make(rows)
        sizes = table.group_by(CHART).len()
        large = sizes.filter(pl.col("len") > MAX_ROWS)
        found |= by_chart(finish(table.filter(~pl.col(CHART).is_in(large[CHART].implode()))))
        if large.is_empty():
            return found
        height = int(large["len"].max())  # type: ignore[arg-type]
        rows = rows.filter(pl.col(CHART).is_in(large[CHART].implode()))
    raise InvalidInputError(
        f"{what}: still {height} marks after merging operators (limit {MAX_ROWS}); "
        "filter the table first"
    )


def by_chart(df: pl.DataFrame) -> dict[object, pl.DataFrame]:
    """The rows of `df` split by their `CHART` value, without the column.

    >>> by_chart(pl.DataFrame({"chart": ["a", "b", "a"], "x": [1, 2, 3]}))["a"]["x"].to_list()
    [1, 3]
    """
    parts = df.partition_by(CHART, as_dict=True, include_key=False, maintain_order=True)
    return {key[0]: part for key, part in parts.items()}


def require(df: pl.DataFrame, columns: Iterable[str], what: str) -> None:
    """Raise naming `what` and the missing ones unless `df` has every column.

    Anything but a DataFrame is an `InvalidInputError` that names the table attribute
    of the object holding the columns, if it has one (a `Schedule`'s ``schedule``).

    >>> require(pl.DataFrame({"a": [1]}), ["a"], "chart")
    >>> class Run:
    ...     table = pl.DataFrame({"a": [1]})
    >>> try:
    ...     require(Run(), ["a"], "chart")
    ... except InvalidInputError as e:
    ...     print(e)
    chart takes a table (a polars DataFrame), got Run: pass its .table
    """
    columns = list(columns)
    if not isinstance(df, pl.DataFrame):
        holders = [
            name
            for name in dir(df)
            if not name.startswith("_")
            and isinstance(table := getattr(df, name, None), pl.DataFrame)
            and all(c in table.columns for c in columns)
        ]
        hint = f": pass its .{holders[0]}" if holders else ""
        raise InvalidInputError(
            f"{what} takes a table (a polars DataFrame), got {type(df).__name__}{hint}", what
        )
    missing = [c for c in columns if c not in df.columns]
    if missing:
        raise InvalidInputError(f"{what}: table lacks column(s) {', '.join(missing)}")


def one_value(df: pl.DataFrame, column: str, what: str) -> str:
    """The single value of `column` in `df`; several values raise naming `what`.

    >>> one_value(pl.DataFrame({"graph": ["nerf", "nerf"]}), "graph", "chart")
    'nerf'
    """
    values = df[column].unique().sort().to_list()
    if len(values) != 1:
        raise InvalidInputError(
            f"{what} draws one {column}; got {len(values)} ({', '.join(map(str, values))}): "
            f"filter by {column} first"
        )
    return str(values[0])


def direction() -> pl.Expr:
    """``"backward"`` or ``"forward"`` from the ``backward`` flag.

    >>> pl.DataFrame({"backward": [True]}).select(direction()).item()
    'backward'
    """
    return pl.when(pl.col("backward")).then(pl.lit("backward")).otherwise(pl.lit("forward"))


def op_label() -> pl.Expr:
    """One op's label: type, id and ``(B)`` when backward.

    >>> df = pl.DataFrame({"op_type": ["MLP"], "op_id": [3], "backward": [True]})
    >>> df.select(op_label()).item()
    'MLP #3 (B)'
    """
    return pl.format(
        "{} #{}{}",
        pl.col("op_type").cast(pl.String),
        pl.col("op_id"),
        pl.when(pl.col("backward")).then(pl.lit(" (B)")).otherwise(pl.lit("")),
    )


def merged_label() -> pl.Expr:
    """A merged mark's label in an aggregation: how many ops it stands for.

    >>> pl.DataFrame({"a": [1, 1]}).group_by("a").agg(merged_label()).item(0, 1)
    '2 ops'
    """
    return pl.format("{} ops", pl.len())


def largest(series: pl.Series, default: float = 0.0) -> float:
    """The largest value of a numeric column as a float; `default` when it has none.

    >>> largest(pl.Series([3, 7])), largest(pl.Series([], dtype=pl.Int64), 1.0)
    (7.0, 1.0)
    """
    value = series.max()
    return default if value is None else float(cast(float, value))


def smallest(series: pl.Series, default: float = 0.0) -> float:
    """The smallest value of a numeric column as a float; `default` when it has none.

    >>> smallest(pl.Series([3.5, 7.0]))
    3.5
    """
    value = series.min()
    return default if value is None else float(cast(float, value))

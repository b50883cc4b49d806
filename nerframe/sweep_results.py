"""Reading sweep results without holding them: best rows and Pareto fronts, folded chunk by chunk.

Both take the rows as an iterable of DataFrames (a sweep's chunks as they are
computed, or a store's parts read one at a time), keep only feasible rows
(every constraint met) and fold, so memory holds one chunk plus the answer.
Ties are broken by row identity (graph, workload axes, config), so the answer
is the same however the rows were chunked.

>>> import polars as pl
>>> rows = pl.DataFrame({"graph": ["g"] * 4, "config": [0, 1, 2, 3],
...                      "fps": [10.0, 8.0, 9.0, 10.0], "energy_per_frame_j": [1.0, 0.5, 2.0, 1.0],
...                      "feasible": [True, True, True, False]})
>>> pareto([rows], {"fps": "max", "energy_per_frame_j": "min"})["config"].to_list()
[0, 1]
>>> best([rows[:2], rows[2:]], 2, "fps", "max")["config"].to_list()
[0, 2]
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from pathlib import Path

import numpy as np
import polars as pl

from nerframe.errors import InvalidInputError, NerframeError
from nerframe.kernels.sweep import pareto_mask
from nerframe.store import tables
from nerframe.sweep_store import TABLE

# Columns that are neither a figure nor an axis: the rest of a row's identity.
_IDENTITY = ("graph", "accelerator", "config")


def _order(frame: pl.DataFrame, column: str, direction: str) -> pl.DataFrame:
    """Best first by `column`, ties by row identity; rows without a value last."""
    keys = [c for c in frame.columns if c in ("graph", "config") or c in _workload(frame)]
    return frame.sort(
        [column, *keys],
        descending=[direction == "max", *([False] * len(keys))],
        nulls_last=True,
    )


def _workload(frame: pl.DataFrame) -> list[str]:
    """Workload axis columns: those between ``accelerator`` and ``config``."""
    names = frame.columns
    if "accelerator" not in names or "config" not in names:
        return []
    return names[names.index("accelerator") + 1 : names.index("config")]


def best(rows: Iterable[pl.DataFrame], n: int, column: str, direction: str) -> pl.DataFrame:
    """The `n` best feasible rows by `column` (``"max"`` or ``"min"``); all of them when n is 0."""
    kept: pl.DataFrame | None = None
    for frame in rows:
        feasible = _contenders(frame.filter("feasible"), n, column, direction)
        merged = feasible if kept is None else pl.concat([kept, feasible])
        kept = _order(merged, column, direction)
        if n:
            kept = kept.head(n)
    if kept is None:
        raise NerframeError("best: the sweep has no rows")
    return kept


def _contenders(frame: pl.DataFrame, n: int, column: str, direction: str) -> pl.DataFrame:
    """The rows of `frame` that can be among the `n` best: at least as good as its
    n-th best value (found in linear time, so a chunk is never sorted whole)."""
    if not n or frame.height <= n:
        return frame
    values = frame[column].cast(pl.Float64).to_numpy()
    score = np.nan_to_num(values if direction == "max" else -values, nan=-np.inf)
    return frame.filter(pl.Series(score >= np.partition(score, -n)[-n]))


def pareto(
    rows: Iterable[pl.DataFrame] | pl.DataFrame | pl.LazyFrame, objectives: Mapping[str, str]
) -> pl.DataFrame:
    """Per graph, the feasible rows no other feasible row of that graph dominates on
    `objectives` (column -> ``"max"``/``"min"``), best first by the first objective.
    `rows` is a sweep's result (a DataFrame or LazyFrame) or an iterable of its chunks.

    >>> rows = pl.DataFrame({"graph": ["g"] * 3, "config": [0, 1, 2],
    ...                      "fps": [30.0, 60.0, 45.0], "area_mm2": [1.0, 3.0, 4.0],
    ...                      "feasible": [True, True, True]})
    >>> pareto(rows, {"fps": "max", "area_mm2": "min"})["config"].to_list()
    [1, 0]
    """
    if isinstance(rows, pl.LazyFrame):
        rows = rows.collect()
    names = list(objectives)
    maximize = np.array([objectives[n] == "max" for n in names])
    front: pl.DataFrame | None = None
    for frame in [rows] if isinstance(rows, pl.DataFrame) else rows:
        if not isinstance(frame, pl.DataFrame):
            raise InvalidInputError(
                "pareto: rows must be a DataFrame, a LazyFrame or DataFrames, "
                f"got {type(frame).__name__}",
                "rows",
            )
        feasible = frame.filter("feasible").drop_nulls(names)
        merged = feasible if front is None else pl.concat([front, feasible])
        front = pl.concat(
            [
                part.filter(pl.Series(pareto_mask(_matrix(part, names), maximize)))
                for part in merged.partition_by("graph", maintain_order=True)
            ]
            or [merged]
        )
    if front is None:
        raise NerframeError("pareto: the sweep has no rows")
    return _order(front, names[0], objectives[names[0]])


def _matrix(frame: pl.DataFrame, names: list[str]) -> np.ndarray:
    return frame.select(pl.col(names).cast(pl.Float64)).to_numpy()


def best_in_store(
    store: str | Path,
    n: int,
    column: str,
    direction: str,
    workload: Iterable[str] = (),
    columns: Iterable[str] | None = None,
) -> pl.DataFrame:
    """`best` over a sweep store, by DuckDB over its Parquet parts: a streaming top-n
    that never loads the store and reads only `columns` (default all) and the ones it
    ranks by (`workload`: the workload axis columns, for tie order)."""
    from nerframe.sql import connect

    keys = ", ".join(f'"{c}"' for c in ["graph", *workload, "config"])
    shown = "*" if columns is None else ", ".join(f'"{c}"' for c in columns)
    order = "DESC" if direction == "max" else "ASC"
    limit = f"LIMIT {int(n)}" if n else ""
    con = connect(store)
    try:
        return con.sql(
            f'SELECT {shown} FROM sweep WHERE feasible ORDER BY "{column}" {order} NULLS LAST, '
            f"{keys} {limit}"
        ).pl()
    finally:
        con.close()


def store_parts(store: str | Path) -> Iterable[pl.DataFrame]:
    """The rows of a sweep store, one Parquet part at a time."""
    for part in tables(store).get(TABLE, []):
        yield pl.read_parquet(part, glob=False)

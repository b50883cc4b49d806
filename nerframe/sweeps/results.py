"""Reading sweep results without holding them: best rows and Pareto fronts, folded chunk by chunk.

Both take the rows as an iterable of DataFrames (a sweep's chunks as they are
computed, or a store's parts read one at a time), keep only feasible rows
(every constraint met) and fold, so memory holds one chunk plus the answer.
Ties are broken by row identity (graph, workload axes, config), so the answer
is the same however the rows were chunked. Rows come grouped by graph (in name
order), best first within each graph. When no row is feasible both warn
(`NerframeWarning`), naming the constraint that most rows break when the
sweep's `constraints` are given.

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

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

import numpy as np
import polars as pl

from nerframe._typing import Direction
from nerframe.errors import InvalidInputError, NerframeWarning
from nerframe.kernels.sweep import pareto_mask
from nerframe.store import tables
from nerframe.sweeps.feasibility import Constraints, no_feasible_row, warn_infeasible_store
from nerframe.sweeps.parts import TABLE

# Columns that are neither a figure nor an axis: the rest of a row's identity.
_IDENTITY = ("graph", "accelerator", "config")


def _order(frame: pl.DataFrame, column: str, direction: str) -> pl.DataFrame:
    """Per graph, best first by `column`, ties by row identity; rows without a value last."""
    keys = [c for c in frame.columns if c in ("graph", "config") or c in _workload(frame)]
    groups = ["graph"] if "graph" in frame.columns else []
    return frame.sort(
        [*groups, column, *keys],
        descending=[False] * len(groups) + [direction == "max", *([False] * len(keys))],
        nulls_last=True,
    )


def check_objectives(
    objectives: object, columns: Sequence[str], where: str, *, least: int = 1
) -> dict[str, str]:
    """`objectives` (column -> ``"max"``/``"min"``) checked against a table's `columns`:
    a mapping of at least `least` columns the table has, each with an exact direction.

    >>> check_objectives({"fps": "MAX"}, ["fps"], "pareto")
    Traceback (most recent call last):
    ...
    nerframe.errors.InvalidInputError: pareto: objective 'fps': say max or min, got 'MAX'
    """
    if not isinstance(objectives, Mapping):
        raise InvalidInputError(
            f"{where}: objectives must map columns to 'max' or 'min', "
            f"got {type(objectives).__name__}",
            "objectives",
        )
    if len(objectives) < least:
        raise InvalidInputError(
            f"{where}: give {'an objective' if least == 1 else f'{least} or more objectives'}"
            " (column -> 'max' or 'min')",
            "objectives",
        )
    from nerframe.errors import did_you_mean

    for name, direction in objectives.items():
        if name not in columns:
            raise InvalidInputError(
                f"{where}: objective {name!r} is not a column of the rows"
                f"{did_you_mean(str(name), columns)}",
                str(name),
            )
        # Exactly "max" or "min", as a sweep spec takes them: "MAX" or "up" must not
        # silently mean minimise.
        if direction not in ("max", "min"):
            raise InvalidInputError(
                f"{where}: objective {name!r}: say max or min, got {direction!r}", str(name)
            )
    return dict(objectives)


class _Feasibility:
    """Counts, over a fold, the rows seen, the feasible ones and, per constraint, the
    rows that break it: what the warning for a sweep without a feasible row says."""

    def __init__(self, constraints: Constraints | None) -> None:
        self.constraints = {
            name: (-math.inf if low is None else low, math.inf if high is None else high)
            for name, (low, high) in (constraints or {}).items()
        }
        self.rows = 0
        self.feasible = 0
        self.broken = dict.fromkeys(self.constraints, 0)

    def add(self, frame: pl.DataFrame) -> None:
        self.rows += frame.height
        self.feasible += int(frame["feasible"].sum())
        if self.constraints and frame.height:
            counts = frame.select(
                (~pl.col(name).is_between(low, high).fill_null(False)).sum().alias(name)
                for name, (low, high) in self.constraints.items()
                if name in frame.columns
            ).row(0, named=True)
            for name, count in counts.items():
                self.broken[name] += int(count)

    def warn(self, what: str) -> None:
        if self.rows and not self.feasible:
            warnings.warn(no_feasible_row(what, self.rows, self.broken), NerframeWarning, 3)


def _workload(frame: pl.DataFrame) -> list[str]:
    """Workload axis columns: those between ``accelerator`` and ``config``."""
    names = frame.columns
    if "accelerator" not in names or "config" not in names:
        return []
    return names[names.index("accelerator") + 1 : names.index("config")]


def best(
    rows: Iterable[pl.DataFrame],
    n: int,
    column: str,
    direction: str,
    *,
    constraints: Constraints | None = None,
) -> pl.DataFrame:
    """Per graph, the `n` best feasible rows by `column` (``"max"`` or ``"min"``); all
    of them when n is 0. `constraints` (the sweep's, column -> (low, high)) only
    serve the warning given when no row is feasible."""
    kept: pl.DataFrame | None = None
    seen = _Feasibility(constraints)
    for frame in rows:
        if kept is None:
            check_objectives({column: direction}, frame.columns, "best")
        seen.add(frame)
        feasible = pl.concat(
            [
                _contenders(part, n, column, direction)
                for part in frame.filter("feasible").partition_by("graph", maintain_order=True)
            ]
            or [frame.clear()]
        )
        merged = feasible if kept is None else pl.concat([kept, feasible])
        kept = _order(merged, column, direction)
        if n:
            kept = kept.group_by("graph", maintain_order=True).head(n)
    if kept is None:
        raise InvalidInputError("best: the sweep has no rows")
    seen.warn("best")
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
    rows: Iterable[pl.DataFrame] | pl.DataFrame | pl.LazyFrame,
    objectives: Mapping[str, Direction],
    *,
    constraints: Constraints | None = None,
) -> pl.DataFrame:
    """Per graph, the feasible rows no other feasible row of that graph dominates on
    `objectives` (column -> exactly ``"max"`` or ``"min"``; anything else, or a column
    the rows lack, is an `InvalidInputError`), best first by the first objective.
    `rows` is a sweep's result (a DataFrame or LazyFrame) or an iterable of its chunks;
    `constraints` (the sweep's) only serve the warning given when no row is feasible.

    >>> rows = pl.DataFrame({"graph": ["g"] * 3, "config": [0, 1, 2],
    ...                      "fps": [30.0, 60.0, 45.0], "area_mm2": [1.0, 3.0, 4.0],
    ...                      "feasible": [True, True, True]})
    >>> pareto(rows, {"fps": "max", "area_mm2": "min"})["config"].to_list()
    [1, 0]
    """
    if isinstance(rows, pl.LazyFrame):
        rows = rows.collect()
    names = list(objectives) if isinstance(objectives, Mapping) else []
    maximize = np.array([objectives[n] == "max" for n in names])
    front: pl.DataFrame | None = None
    seen = _Feasibility(constraints)
    for frame in [rows] if isinstance(rows, pl.DataFrame) else rows:
        if not isinstance(frame, pl.DataFrame):
            raise InvalidInputError(
                "pareto: rows must be a DataFrame, a LazyFrame or DataFrames, "
                f"got {type(frame).__name__}",
                "rows",
            )
        if front is None:
            check_objectives(objectives, frame.columns, "pareto")
        seen.add(frame)
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
        raise InvalidInputError("pareto: the sweep has no rows")
    seen.warn("pareto")
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
    *,
    constraints: Constraints | None = None,
) -> pl.DataFrame:
    """`best` over a sweep store, by DuckDB over its Parquet parts: per graph a
    streaming top-n that never loads the store and reads only `columns` (default all)
    and the ones it ranks by (`workload`: the workload axis columns, for tie order)."""
    from nerframe.sql import connect

    ranked = ["graph", *workload, "config"]
    keys = ", ".join(f'"{c}"' for c in ranked)
    # The rows carry the columns they are ordered by, and only `columns` come back.
    read = None if columns is None else list(dict.fromkeys([*columns, column, *ranked]))
    shown = "*" if read is None else ", ".join(f'"{c}"' for c in read)
    order = "DESC" if direction == "max" else "ASC"
    limit = f"LIMIT {int(n)}" if n else ""
    con = connect(store)
    try:
        names = con.sql("SELECT DISTINCT graph FROM sweep ORDER BY graph").fetchall()
        graphs = [g for (g,) in names]
        # One ORDER BY ... LIMIT per graph: DuckDB streams each as a top-n, where a
        # window over the partitions would sort every feasible row.
        parts = " UNION ALL ".join(
            f"(SELECT {i} AS _graph_rank, {shown} FROM sweep WHERE feasible AND graph = "
            f"""'{g.replace("'", "''")}' ORDER BY "{column}" {order} NULLS LAST, {keys} {limit})"""
            for i, g in enumerate(graphs)
        )
        if not parts:
            empty: pl.DataFrame = con.sql(f"SELECT {shown} FROM sweep LIMIT 0").pl()
            return empty if columns is None else empty.select(columns)
        found: pl.DataFrame = (
            con.sql(
                f'SELECT * FROM ({parts}) ORDER BY _graph_rank, "{column}" {order} NULLS LAST, '
                f"{keys}"
            )
            .pl()
            .drop("_graph_rank")
        )
        if columns is not None:
            found = found.select(columns)
        if found.is_empty():
            warn_infeasible_store(con, "best", constraints)
        return found
    finally:
        con.close()


def store_parts(store: str | Path) -> Iterable[pl.DataFrame]:
    """The rows of a sweep store, one Parquet part at a time."""
    for part in tables(store).get(TABLE, []):
        yield pl.read_parquet(part, glob=False)

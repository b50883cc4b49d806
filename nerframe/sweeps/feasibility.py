"""Why a sweep has no feasible row: the warning's message, and the same check over
a store open in DuckDB (used by both `nerframe.sweeps.results` and `nerframe.query`).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence

from nerframe.errors import NerframeWarning

Constraints = Mapping[str, Sequence[float | None]]
"""Bounds by figure name: (low, high), None where open."""


def no_feasible_row(what: str, rows: int, broken: Mapping[str, int]) -> str:
    """The message for a sweep of `rows` rows none of which meets every constraint;
    `broken` counts, per constraint, the rows that break it.

    >>> message = no_feasible_row("pareto", 12, {"fps": 12, "area_mm2": 3})
    >>> print(message)  # doctest: +NORMALIZE_WHITESPACE
    pareto: none of the 12 rows meets every constraint (fps breaks most: 12 of 12 rows); the
    result is empty
    """
    binding = ""
    if broken:
        name = max(broken, key=lambda n: (broken[n], n))
        binding = f" ({name} breaks most: {broken[name]:,} of {rows:,} rows)"
    return f"{what}: none of the {rows:,} rows meets every constraint{binding}; the result is empty"


def _sql(value: float) -> str:
    """A float as a DuckDB literal (infinities have no bare spelling)."""
    return f"'{value}'::DOUBLE" if math.isinf(value) else repr(float(value))


def warn_infeasible_store(con: object, what: str, constraints: Constraints | None) -> None:
    """A `NerframeWarning` (by `what`) when the sweep store open on the DuckDB
    connection `con` has rows but no feasible one, naming the constraint most rows
    break (of `constraints`, a store manifest's or the sweep's)."""
    bounds = {
        name: (-math.inf if low is None else low, math.inf if high is None else high)
        for name, (low, high) in (constraints or {}).items()
    }
    broke = "".join(
        f', count(*) FILTER (WHERE NOT coalesce("{name}" BETWEEN {_sql(low)} AND {_sql(high)}, '
        "false))"
        for name, (low, high) in bounds.items()
    )
    counts = con.sql(  # type: ignore[attr-defined]
        f"SELECT count(*), count(*) FILTER (WHERE feasible){broke} FROM sweep"
    ).fetchall()[0]
    rows, feasible = int(counts[0]), int(counts[1])
    if rows and not feasible:
        broken = dict(zip(bounds, map(int, counts[2:]), strict=True))
        warnings.warn(no_feasible_row(what, rows, broken), NerframeWarning, 3)

"""Sweep kernels: constraint masks and Pareto fronts over result columns.

Both take a (R, K) float64 matrix, one row per configuration and one column
per result figure, and return a boolean mask; NaN (a figure without a value,
such as the fps of a zero-time frame) never satisfies a bound and never lies
on a front.

>>> import numpy as np
>>> values = np.array([[10.0, 1.0], [8.0, 0.5], [9.0, 2.0], [10.0, 1.0]])
>>> pareto_mask(values, np.array([True, False])).tolist()
[True, True, False, True]
>>> within(values, np.array([9.0, 0.0]), np.array([np.inf, 1.5])).tolist()
[True, False, False, True]
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange


@njit(cache=True, inline="always")
def meets(value: float, low: float, high: float) -> bool:
    """Whether `value` lies in [low, high]; NaN fails both comparisons, so never."""
    return value >= low and value <= high


@njit(cache=True, parallel=True)
def within(values: np.ndarray, low: np.ndarray, high: np.ndarray) -> np.ndarray:
    """Rows whose every column k lies in [low[k], high[k]]."""
    rows, columns = values.shape
    ok = np.ones(rows, np.bool_)
    for r in prange(rows):
        for k in range(columns):
            if not meets(values[r, k], low[k], high[k]):
                ok[r] = False
                break
    return ok


@njit(cache=True)
def _front(cost: np.ndarray, order: np.ndarray) -> np.ndarray:
    """Non-dominated rows of `cost` (all minimised), visiting rows in lexicographic `order`.

    In that order a row can be dominated only by a row before it, so each row
    is compared with the front found so far.
    """
    rows, columns = cost.shape
    keep = np.zeros(rows, np.bool_)
    front = np.empty(rows, np.int64)
    size = 0
    for i in order:
        dominated = False
        for f in range(size):
            j = front[f]
            no_worse = True
            better = False
            for k in range(columns):
                if cost[j, k] > cost[i, k]:
                    no_worse = False
                    break
                if cost[j, k] < cost[i, k]:
                    better = True
            if no_worse and better:
                dominated = True
                break
        if not dominated:
            keep[i] = True
            front[size] = i
            size += 1
    return keep


def pareto_mask(values: np.ndarray, maximize: np.ndarray) -> np.ndarray:
    """Rows no other row dominates (at least as good in every column, better in one).

    `maximize[k]` says whether column k is better larger. Equal rows are all kept.
    """
    values = np.asarray(values, np.float64)
    if values.ndim != 2 or values.shape[1] != len(maximize):
        raise ValueError(f"values must have shape (R, {len(maximize)}), got {values.shape}")
    cost = np.where(np.asarray(maximize, np.bool_), -values, values)
    valid = ~np.isnan(cost).any(axis=1)
    rows = np.flatnonzero(valid)
    # np.lexsort sorts by its last key first.
    order = rows[np.lexsort(cost[rows].T[::-1])]
    return _front(cost, order.astype(np.int64))

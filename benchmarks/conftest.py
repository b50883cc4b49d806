"""Benchmark fixtures: a timer for figures measured inside one benchmark run."""

from __future__ import annotations

import time
from collections.abc import Callable

import pytest

Timer = Callable[..., float]


def _best_of(fn: Callable[[], object], repeat: int = 3) -> float:
    """The fastest of `repeat` wall-clock runs of `fn`, in seconds."""
    times = []
    for _ in range(repeat):
        start = time.perf_counter()
        fn()
        times.append(time.perf_counter() - start)
    return min(times)


@pytest.fixture(scope="session")
def best_of() -> Timer:
    """``best_of(fn, repeat=3)``: the fastest wall-clock run of `fn`, in seconds."""
    return _best_of

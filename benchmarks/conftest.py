"""Benchmark fixtures: a timer for figures measured inside one benchmark run."""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator

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


@pytest.fixture(autouse=True)
def _record_load(request: pytest.FixtureRequest) -> Iterator[None]:
    """Every benchmark's ``extra_info`` records the 1-minute load average before and
    after it: this machine's speed follows its load (docs/performance.md)."""
    # Looked up before the test: at teardown the benchmark fixture may be gone already.
    bench = request.getfixturevalue("benchmark") if "benchmark" in request.fixturenames else None
    before = os.getloadavg()[0]
    yield
    if bench is not None:
        bench.extra_info.setdefault("load_before", round(before, 2))
        bench.extra_info.setdefault("load_after", round(os.getloadavg()[0], 2))


def pytest_benchmark_update_machine_info(
    config: pytest.Config, machine_info: dict[str, object]
) -> None:
    """The run's machine: core count and load average at its start (docs/performance.md)."""
    machine_info["cpu_count"] = os.cpu_count()
    machine_info["load_average"] = [round(x, 2) for x in os.getloadavg()]

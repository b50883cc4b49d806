"""Benchmark fixtures: timers for figures measured inside one benchmark run, and the
timing targets asserted only where something was timed.

``pytest benchmarks --benchmark-only`` measures and asserts every target. CI runs
the quick benchmarks with ``--benchmark-disable`` instead (.ci/run): each body runs
once, untimed, so that its code and its checks of the results cannot rot, while a
single round on a loaded CI machine is no measurement to hold a target to.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

Timer = Callable[..., float]
Measure = Callable[..., tuple[Any, float]]
Target = Callable[[bool, str], None]


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


@pytest.fixture
def measure(benchmark: BenchmarkFixture) -> Measure:
    """``measure(fn, *args, rounds=1, **kwargs)``: `benchmark.pedantic` of `fn` (one
    iteration a round), returning its result and the fastest round's wall-clock seconds.

    The rounds are timed here rather than read from ``benchmark.stats``, which
    ``--benchmark-disable`` leaves unset after its single untimed call: the figures
    derived from the time must still compute there (the CI smoke run)."""

    def run(
        fn: Callable[..., Any], *args: Any, rounds: int = 1, **kwargs: Any
    ) -> tuple[Any, float]:
        times: list[float] = []

        def timed(*a: Any, **kw: Any) -> Any:
            start = time.perf_counter()
            result = fn(*a, **kw)
            times.append(time.perf_counter() - start)
            return result

        result = benchmark.pedantic(timed, args=args, kwargs=kwargs, rounds=rounds, iterations=1)
        return result, min(times)

    return run


@pytest.fixture
def target(benchmark: BenchmarkFixture) -> Target:
    """``target(met, message)``: a performance target, asserted when the benchmark is
    timed and skipped under ``--benchmark-disable`` (see the module docstring). Checks
    of what a benchmark computed are plain asserts and hold in both modes."""

    def check(met: bool, message: str) -> None:
        if benchmark.enabled:
            assert met, message

    return check


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


_START_LOAD = pytest.StashKey[list[float]]()


def pytest_sessionstart(session: pytest.Session) -> None:
    session.config.stash[_START_LOAD] = [round(x, 2) for x in os.getloadavg()]


def pytest_benchmark_update_machine_info(
    config: pytest.Config, machine_info: dict[str, object]
) -> None:
    """The run's machine: core count and load average at its start (docs/performance.md).
    pytest-benchmark asks for it when it saves, at the end of the run, so the load is
    taken when the session starts."""
    machine_info["cpu_count"] = os.cpu_count()
    machine_info["load_average"] = config.stash[_START_LOAD]


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers",
        "quick: a benchmark whose body runs in seconds, not minutes; CI runs these once "
        "each with --benchmark-disable (.ci/run)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Under ``--benchmark-only``, deselect the items of benchmarks/ that are not
    benchmarks (the doctests of its helper modules). pytest-benchmark would skip them
    with a reason the run-wide skip policy (the root conftest.py) reports as a failure;
    they run in a plain or ``--benchmark-disable`` run."""
    if not config.getoption("benchmark_only"):
        return
    here = Path(__file__).parent
    kept, dropped = [], []
    for item in items:
        own = item.path.is_relative_to(here)
        is_benchmark = "benchmark" in getattr(item, "fixturenames", ())
        (dropped if own and not is_benchmark else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept

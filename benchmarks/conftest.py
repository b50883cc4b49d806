"""Benchmark fixtures: timers for figures measured inside one benchmark run, and the
timing targets asserted only where something was timed.

``pytest benchmarks --benchmark-only`` measures and asserts every target. CI runs
the quick benchmarks with ``--benchmark-disable`` instead (.ci/run): each body runs
once, untimed, so that its code and its checks of the results cannot rot, while a
single round on a loaded CI machine is no measurement to hold a target to.

What CI holds that run to instead is ratios: ``--times FILE`` writes each test's
body time over the time of a fixed reference workload measured in the same run
(`reference_seconds`), and ``benchmarks/baseline.py check FILE`` compares them with
the committed ``benchmarks/baseline.json``. A machine twice as fast, or as loaded,
moves both and leaves the ratio.

Benchmarks other than the quick ones may take minutes each (their fixtures build
10 M-row stores): they get `SLOW_TIMEOUT_S` instead of the project's per-test
``timeout`` (pyproject.toml).
"""

from __future__ import annotations

import json
import os
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import numpy as np
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


# The per-test time limit of the benchmarks that are not quick (pytest-timeout).
SLOW_TIMEOUT_S = 3600


def pytest_addoption(parser: pytest.Parser) -> None:
    parser.addoption(
        "--times",
        metavar="FILE",
        help="write each test's body seconds over the in-run reference's (JSON) to FILE",
    )


def reference_work() -> None:
    """The fixed workload every ratio is over: a NumPy sort, a polars group-by and a
    Python loop (the three kinds of work the benchmarks' bodies mix)."""
    import polars as pl

    values = np.random.default_rng(0).random(1_000_000)
    np.sort(values)
    frame = pl.DataFrame({"key": (values * 1000).astype(np.int64), "value": values})
    frame.group_by("key").agg(pl.col("value").sum())
    total = 0
    for i in range(300_000):
        total += i * i


def reference_seconds() -> float:
    """The reference workload's fastest of five runs, in seconds."""
    return _best_of(reference_work, repeat=5)


class _Times:
    """The ``--times`` plugin: each passing test's body seconds over the reference's,
    written as JSON at the end of the session."""

    def __init__(self, target: Path) -> None:
        self.target = target
        self.reference = reference_seconds()
        self.seconds: dict[str, float] = {}

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.when == "call" and report.passed:
            self.seconds[report.nodeid] = report.duration

    def pytest_sessionfinish(self, session: pytest.Session) -> None:
        # Measured at the end as well as the start: the faster of the two.
        reference = min(self.reference, reference_seconds())
        ratios = {name: round(t / reference, 3) for name, t in sorted(self.seconds.items())}
        run = {"reference_s": round(reference, 4), "ratios": ratios}
        self.target.write_text(json.dumps(run, indent=1) + "\n")


def pytest_configure(config: pytest.Config) -> None:
    if target := config.getoption("times", None):
        config.pluginmanager.register(_Times(Path(target)), "nerframe-times")
    config.addinivalue_line(
        "markers",
        "quick: a benchmark whose body runs in seconds, not minutes; CI runs these once "
        "each with --benchmark-disable (.ci/run)",
    )


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """Give the benchmarks that are not quick `SLOW_TIMEOUT_S`. Under
    ``--benchmark-only``, deselect the items of benchmarks/ that are not benchmarks
    (the doctests of its helper modules): pytest-benchmark would skip them with a
    reason the run-wide skip policy (the root conftest.py) reports as a failure; they
    run in a plain or ``--benchmark-disable`` run."""
    here = Path(__file__).parent
    for item in items:
        if item.path.is_relative_to(here) and item.get_closest_marker("quick") is None:
            item.add_marker(pytest.mark.timeout(SLOW_TIMEOUT_S))
    if not config.getoption("benchmark_only"):
        return
    kept, dropped = [], []
    for item in items:
        own = item.path.is_relative_to(here)
        is_benchmark = "benchmark" in getattr(item, "fixturenames", ())
        (dropped if own and not is_benchmark else kept).append(item)
    if dropped:
        config.hook.pytest_deselected(items=dropped)
        items[:] = kept

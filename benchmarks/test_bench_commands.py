"""Whole commands: cold and warm start of ``nerframe costs``, and every built-in pipeline
on every built-in target (``analyze all --hardware all``).

Cold start compiles every kernel it touches: it runs with an empty numba cache
(``NUMBA_CACHE_DIR`` pointing at a fresh folder). Warm start reuses that cache.
Each command also records its CPU time (user + system of the child), which a busy
machine inflates far less than the wall time, and a same-run reference: the bare
interpreter importing the libraries every command needs, and the matrix without
its report.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

import nerframe
from nerframe.hardware import accelerators


def _run(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Wall and CPU seconds (user + system) of one run of `args`."""
    before = os.times()
    start = time.perf_counter()
    subprocess.run(args, env=env, check=True, capture_output=True)
    wall = time.perf_counter() - start
    after = os.times()
    cpu = (after.children_user - before.children_user) + (
        after.children_system - before.children_system
    )
    return wall, cpu


def _wall(args: list[str], env: dict[str, str]) -> float:
    return _run(args, env)[0]


def _best(args: list[str], env: dict[str, str], rounds: int = 3) -> tuple[float, float]:
    runs = [_run(args, env) for _ in range(rounds)]
    return min(w for w, _ in runs), min(c for _, c in runs)


def test_costs_command_start(benchmark, measure, target, tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    command = [sys.executable, "-m", "nerframe.cli", "costs", "neurex"]
    cold = _wall(command, env)
    _, warm = measure(_wall, command, env, rounds=3)
    _, cpu = _best(command, env)
    # The floor: an interpreter that only imports what `costs` cannot do without.
    libraries = [sys.executable, "-c", "import numba, numpy, polars, pyarrow"]
    floor, floor_cpu = _best(libraries, env)
    benchmark.extra_info.update(
        cold_s=round(cold, 2),
        warm_s=round(warm, 2),
        warm_cpu_s=round(cpu, 2),
        libraries_import_s=round(floor, 2),
        libraries_import_cpu_s=round(floor_cpu, 2),
        warm_over_libraries_import=round(warm / floor, 2),
        load_average=round(os.getloadavg()[0], 1),
    )
    target(warm < 1.5, f"nerframe costs took {warm:.2f} s warm (target < 1.5 s)")


@pytest.mark.quick
def test_analyze_all_pairs(benchmark, measure, target, tmp_path: Path) -> None:
    nerframe.analyze(["neurex"], output=tmp_path / "warmup", report=False)
    result, seconds = measure(
        nerframe.analyze, ["all"], "all", output=tmp_path / "store", report=False, rounds=3
    )
    # Every built-in pipeline on every built-in target (12 x 18 when written).
    pairs = nerframe.pipelines().height * accelerators().height
    assert result.summary.height == pairs
    benchmark.extra_info.update(pairs=pairs, seconds=round(seconds, 2))
    target(seconds < 5, f"analyze of the {pairs} pairs took {seconds:.2f} s (target < 5 s)")


def test_analyze_all_pairs_with_report(benchmark, measure, target, tmp_path: Path) -> None:
    # The main job from the shell, report included (images only on request), warm.
    command = [sys.executable, "-m", "nerframe.cli", "analyze", "all", "--hardware", "all"]
    env = dict(os.environ)
    _wall([*command, "-o", str(tmp_path / "warmup")], env)
    with_images = _wall([*command, "-o", str(tmp_path / "images"), "--images"], env)
    _, seconds = measure(_wall, [*command, "-o", str(tmp_path / "store")], env, rounds=3)
    _, cpu = _best([*command, "-o", str(tmp_path / "store")], env)
    without, without_cpu = _best([*command, "-o", str(tmp_path / "bare"), "--no-report"], env)
    benchmark.extra_info.update(
        seconds=round(seconds, 2),
        cpu_s=round(cpu, 2),
        no_report_s=round(without, 2),
        no_report_cpu_s=round(without_cpu, 2),
        report_share_of_cpu=round(1 - without_cpu / cpu, 2),
        with_images_s=round(with_images, 2),
        load_average=round(os.getloadavg()[0], 1),
    )
    assert (tmp_path / "store" / "report.html").exists()
    assert not (tmp_path / "store" / "charts").exists()
    target(seconds < 5, f"analyze all with the report took {seconds:.2f} s (target < 5 s)")

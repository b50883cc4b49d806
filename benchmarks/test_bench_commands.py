"""Whole commands: cold and warm start of ``nerframe costs``, and the 9 x 8 matrix.

Cold start compiles every kernel it touches: it runs with an empty numba cache
(``NUMBA_CACHE_DIR`` pointing at a fresh folder). Warm start reuses that cache.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import nerframe


def _wall(args: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    subprocess.run(args, env=env, check=True, capture_output=True)
    return time.perf_counter() - start


def test_costs_command_start(benchmark, tmp_path: Path) -> None:
    env = {**os.environ, "NUMBA_CACHE_DIR": str(tmp_path / "numba")}
    command = [sys.executable, "-m", "nerframe.cli", "costs", "neurex"]
    cold = _wall(command, env)
    benchmark.pedantic(_wall, args=(command, env), rounds=3, iterations=1)
    warm = benchmark.stats.stats.min
    benchmark.extra_info.update(cold_s=round(cold, 2), warm_s=round(warm, 2))
    assert warm < 1.5


def test_analyze_all_pairs(benchmark, tmp_path: Path) -> None:
    nerframe.analyze(["neurex"], output=tmp_path / "warmup", report=False)
    result = benchmark.pedantic(
        nerframe.analyze,
        args=(["all"], "all"),
        kwargs={"output": tmp_path / "store", "report": False},
        rounds=3,
        iterations=1,
    )
    assert result.summary.height == 140  # 10 pipelines x (9 accelerators + 5 GPUs)
    benchmark.extra_info.update(pairs=140, seconds=round(benchmark.stats.stats.min, 2))
    assert benchmark.stats.stats.min < 5


def test_analyze_all_pairs_with_report(benchmark, tmp_path: Path) -> None:
    # The main job from the shell, report included (images only on request), warm.
    command = [sys.executable, "-m", "nerframe.cli", "analyze", "all", "--hardware", "all"]
    env = dict(os.environ)
    _wall([*command, "-o", str(tmp_path / "warmup")], env)
    with_images = _wall([*command, "-o", str(tmp_path / "images"), "--images"], env)
    benchmark.pedantic(
        _wall, args=([*command, "-o", str(tmp_path / "store")], env), rounds=3, iterations=1
    )
    seconds = benchmark.stats.stats.min
    benchmark.extra_info.update(seconds=round(seconds, 2), with_images_s=round(with_images, 2))
    assert (tmp_path / "store" / "report.html").exists()
    assert not (tmp_path / "store" / "charts").exists()
    assert seconds < 5

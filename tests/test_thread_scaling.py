"""The thread-scaling benchmark script runs and prints one row per work and thread count."""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

SCRIPT = Path(__file__).resolve().parents[1] / "benchmarks" / "thread_scaling.py"


def test_thread_scaling_prints_its_table(capsys: pytest.CaptureFixture[str]) -> None:
    spec = importlib.util.spec_from_file_location("thread_scaling", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    module.main(["--threads", "1", "--points", "3000", "--rows", "2000", "--repeats", "2"])
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split()[:3] == ["work", "threads", "best"]
    rows = [line.split() for line in lines[1:]]
    assert [r[0] for r in rows] == ["sweep", "sweep", "costs"]  # kernel, end to end, costs
    assert all(r[-1] == "1.00" and r[-3] == "1.00x" for r in rows)  # 1 thread against itself


def test_thread_counts_beyond_the_pool_are_refused() -> None:
    spec = importlib.util.spec_from_file_location("thread_scaling", SCRIPT)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    with pytest.raises(SystemExit):
        module.main(["--threads", "1,100000"])

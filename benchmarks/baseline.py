"""The committed benchmark baseline (``benchmarks/baseline.json``) and CI's check of
a run against it.

A run's figures are ratios: each quick benchmark's body time over the time of a
fixed reference workload measured in the same run (``pytest benchmarks -m quick
--benchmark-disable --times RUN.json``, see benchmarks/conftest.py), so that a
faster or busier machine moves both. A benchmark regresses when its ratio exceeds
the baseline's by more than ``LIMIT`` (the run fails, naming it); one in the
baseline that the run lacks fails too (nothing is dropped silently); a new one is
named, to be added with ``write``::

    python benchmarks/baseline.py write RUN.json   # RUN.json becomes the baseline
    python benchmarks/baseline.py check RUN.json   # exit 1 on a regression

>>> check({"a": 1.0, "b": 2.0}, {"a": 2.6, "b": 2.0, "c": 1.0})
(['a: 2.6 times the reference, baseline 1 (limit 2.5x)'], ['c'])
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

BASELINE = Path(__file__).with_name("baseline.json")
# The most a ratio may grow over the baseline's: single untimed rounds on a loaded
# 2-core CI machine vary by up to about 2x (assumption, from runs beside other work);
# a body that slows by more than that regressed.
LIMIT = 2.5


def check(baseline: dict[str, float], run: dict[str, float]) -> tuple[list[str], list[str]]:
    """The failures of `run` against `baseline` (ratios by test), and the tests the
    baseline does not have yet."""
    failures = [
        f"{name}: {run[name]:.3g} times the reference, baseline {ratio:.3g} (limit {LIMIT}x)"
        for name, ratio in baseline.items()
        if name in run and run[name] > ratio * LIMIT
    ]
    failures += [f"{name}: in the baseline, not run" for name in baseline if name not in run]
    return failures, [name for name in run if name not in baseline]


def main(argv: list[str]) -> int:
    if len(argv) != 2 or argv[0] not in ("write", "check"):
        sys.stderr.write("usage: baseline.py write|check RUN.json\n")
        return 2
    run = json.loads(Path(argv[1]).read_text())
    if argv[0] == "write":
        BASELINE.write_text(json.dumps(run, indent=1) + "\n")
        print(f"wrote {BASELINE} ({len(run['ratios'])} benchmarks)")
        return 0
    baseline = json.loads(BASELINE.read_text())
    failures, new = check(baseline["ratios"], run["ratios"])
    for name in new:
        print(f"not in the baseline yet (baseline.py write): {name}")
    for line in failures:
        print(f"regression: {line}")
    print(
        f"{len(run['ratios'])} benchmarks against {BASELINE.name}: "
        f"{len(failures)} failed (reference {run['reference_s']} s, "
        f"baseline's {baseline['reference_s']} s)"
    )
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))

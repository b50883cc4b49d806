"""Write the benchmark tables of ``docs/performance.md`` from pytest-benchmark's JSON.

One table per benchmark function (one row per parametrisation): the best and median
wall-clock time of its rounds and every figure the benchmark put in ``extra_info``
(rates, ratios measured in the same run), under a line naming the run's date,
commit, Python and cores. The load averages a benchmark records are left out: they
describe the machine at one moment, not the code. Figures are never typed in by
hand; the tables replace the text between ``<!-- generated: benchmarks -->`` and
``<!-- end generated -->``::

    pytest benchmarks --benchmark-only --benchmark-json=/tmp/bench.json
    python benchmarks/performance_doc.py /tmp/bench.json --write docs/performance.md

Without ``--write`` the tables go to standard output. Several JSON files (runs of
separate benchmark files) may be given; each keeps its own header, so figures are
compared only within one run.
"""

from __future__ import annotations

import argparse
import json
import re
from collections import defaultdict
from pathlib import Path
from typing import Any

_MOMENTARY = frozenset({"load_before", "load_after", "load_average", "uptime"})
"""extra_info keys that record the machine's state at one moment, not a figure of the code."""

_REGION = re.compile(r"(<!-- generated: benchmarks -->\n).*?(<!-- end generated -->)", re.S)


def _number(value: Any) -> str:
    """A figure as a short string: integers with thousands separators, floats to four
    significant digits; anything else as JSON."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return json.dumps(value)
    if isinstance(value, int) or (abs(value) >= 1e4 and float(value).is_integer()):
        return f"{int(value):,}"
    return f"{value:.4g}"


def _seconds(value: float) -> str:
    """A duration in the unit that keeps it between 1 and 1000."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if value >= scale:
            return f"{value / scale:.3g} {unit}"
    return f"{value / 1e-9:.3g} ns"


def render(run: dict[str, Any]) -> str:
    """The markdown of one pytest-benchmark run: a header, then one table per
    benchmark function.

    >>> run = {"datetime": "2026-12-01T00:00:00", "machine_info": {"cpu_count": 2,
    ...     "load_average": [1.0, 0.5, 0.2], "python_version": "3.11.2"},
    ...     "commit_info": {"id": "abc1234def", "dirty": False},
    ...     "benchmarks": [{"fullname": "benchmarks/test_x.py::test_y[a]",
    ...         "name": "test_y[a]", "param": "a", "group": None,
    ...         "stats": {"min": 0.002, "median": 0.0025, "rounds": 5},
    ...         "extra_info": {"rows_per_s": 1234567.0, "load_before": 1.0}}]}
    >>> print(render(run))  # doctest: +NORMALIZE_WHITESPACE
    ### Run of 2026-12-01
    <BLANKLINE>
    Commit abc1234 (clean), Python 3.11.2, 2 cores.
    <BLANKLINE>
    #### `test_x.py::test_y`
    <BLANKLINE>
    | case | best | median | rounds | rows_per_s |
    |---|---:|---:|---:|---:|
    | a | 2 ms | 2.5 ms | 5 | 1,234,567 |
    <BLANKLINE>
    """
    machine, commit = run.get("machine_info", {}), run.get("commit_info", {})
    state = "dirty" if commit.get("dirty") else "clean"
    lines = [
        f"### Run of {str(run.get('datetime', '?'))[:10]}",
        "",
        f"Commit {str(commit.get('id', '?'))[:7]} ({state}), Python "
        f"{machine.get('python_version', '?')}, {machine.get('cpu_count', '?')} cores.",
        "",
    ]
    functions: dict[str, list[dict[str, Any]]] = defaultdict(list)
    for bench in run["benchmarks"]:
        functions[bench["fullname"].split("[")[0]].append(bench)
    for name, cases in functions.items():
        keys = sorted({k for case in cases for k in case.get("extra_info", {})} - _MOMENTARY)
        lines += [
            f"#### `{name.removeprefix('benchmarks/')}`",
            "",
            "| " + " | ".join(["case", "best", "median", "rounds", *keys]) + " |",
            "|---|" + "---:|" * (3 + len(keys)),
        ]
        for case in cases:
            stats, info = case["stats"], case.get("extra_info", {})
            cells = [
                case.get("param") or "—",
                _seconds(stats["min"]),
                _seconds(stats["median"]),
                str(stats["rounds"]),
                *(_number(info[k]) if k in info else "" for k in keys),
            ]
            lines.append("| " + " | ".join(cells) + " |")
        lines.append("")
    return "\n".join(lines)


def main(paths: list[str]) -> str:
    """The benchmark tables for the JSON files at `paths`, one section per run."""
    return "\n".join(render(json.loads(Path(p).read_text(encoding="utf-8"))) for p in paths)


def write(document: Path, tables: str) -> None:
    """Put `tables` between the generated-region markers of `document`."""
    text = document.read_text(encoding="utf-8")
    if not _REGION.search(text):
        raise SystemExit(f"error: {document}: no <!-- generated: benchmarks --> region")
    new = _REGION.sub(lambda m: m[1] + tables + m[2], text, count=1)
    document.write_text(new, encoding="utf-8")


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="docs/performance.md's benchmark tables")
    parser.add_argument("json", nargs="+", help="pytest-benchmark JSON files")
    parser.add_argument("--write", type=Path, help="the document whose region to rewrite")
    args = parser.parse_args()
    tables = main(args.json)
    if args.write:
        write(args.write, tables)
    else:
        print(tables, end="")

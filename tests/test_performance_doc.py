"""docs/performance.md is generated from pytest-benchmark's JSON (benchmarks/performance_doc.py)."""

from __future__ import annotations

import doctest
import importlib.util
import json
from pathlib import Path
from types import ModuleType

SCRIPT = Path(__file__).parents[1] / "benchmarks" / "performance_doc.py"


def _module() -> ModuleType:
    spec = importlib.util.spec_from_file_location("performance_doc", SCRIPT)
    assert spec and spec.loader
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_its_docstring_examples_hold() -> None:
    assert doctest.testmod(_module()).failed == 0


def test_one_table_per_benchmark_function_with_every_figure(tmp_path: Path) -> None:
    def bench(name: str, param: str | None, best: float, **info: object) -> dict[str, object]:
        full = f"benchmarks/test_bench_sweep.py::{name}" + (f"[{param}]" if param else "")
        stats = {"min": best, "median": best * 2, "rounds": 3}
        return {"fullname": full, "param": param, "stats": stats, "extra_info": info}

    run = {
        "datetime": "2026-12-01T12:00:00",
        "machine_info": {"cpu_count": 2, "load_average": [0.5, 0.4, 0.3]},
        "commit_info": {"id": "0123456789", "dirty": True},
        "benchmarks": [
            bench(
                "test_sweep_rates",
                "neurex",
                0.1,
                in_memory_per_s=7.6e6,
                store_share=0.65,
                load_before=1.5,
            ),
            bench("test_sweep_rates", "traced", 0.3, in_memory_per_s=2.9e6),
            bench("test_peak_rss", None, 20.7, peak_mb=311),
        ],
    }
    path = tmp_path / "bench.json"
    path.write_text(json.dumps(run))
    text = _module().main([str(path)])
    assert "### Run of 2026-12-01\n\nCommit 0123456 (dirty), Python ?, 2 cores.\n" in text
    rows = [line for line in text.splitlines() if line.startswith("| ")]
    assert rows == [
        "| case | best | median | rounds | in_memory_per_s | store_share |",
        "| neurex | 100 ms | 200 ms | 3 | 7,600,000 | 0.65 |",
        "| traced | 300 ms | 600 ms | 3 | 2,900,000 |  |",
        "| case | best | median | rounds | peak_mb |",
        "| — | 20.7 s | 41.4 s | 3 | 311 |",
    ]
    assert text.count("#### `test_bench_sweep.py::") == 2
    assert "load_" not in text and "12:00" not in text  # a moment's state is no figure


def test_write_replaces_only_the_generated_region(tmp_path: Path) -> None:
    doc = tmp_path / "performance.md"
    doc.write_text("# P\n\ntargets\n<!-- generated: benchmarks -->\nold\n<!-- end generated -->\n")
    _module().write(doc, "new\n")
    assert doc.read_text() == (
        "# P\n\ntargets\n<!-- generated: benchmarks -->\nnew\n<!-- end generated -->\n"
    )


def test_the_document_has_its_region_and_no_load_figures() -> None:
    text = (SCRIPT.parents[1] / "docs" / "performance.md").read_text(encoding="utf-8")
    assert text.count("<!-- generated: benchmarks -->") == 1
    region = text.split("<!-- generated: benchmarks -->")[1].split("<!-- end generated -->")[0]
    assert "load_" not in region and "uptime" not in region

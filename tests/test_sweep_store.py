"""Sweep stores: manifest identity, refusals, incomplete marking, SIGKILL and resume, memory."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import polars as pl
import pytest

import nerframe
from nerframe.schemas import SWEEP_FIGURES
from nerframe.sweeps.store import incomplete

SPEC = {
    "graphs": ["neurex"],
    "hardware": "neurex",
    "workload": {"rays": [1024, 4096]},
    "grid": {"frequency_mhz": [500, 1000], "systolic_array_32x32.count": [1, 2, 4]},
    "chunk_size": 4,
}


def test_manifest_records_what_determines_the_rows(tmp_path: Path) -> None:
    store = tmp_path / "s"
    nerframe.sweep(SPEC, output=store)
    manifest = json.loads((store / "store.json").read_text())
    sweep = manifest["run"]["sweep"]
    assert manifest["run"]["complete"] is True
    assert manifest["rows"] == {"sweep": 12}
    assert sweep["nerframe_version"] == nerframe.__version__
    assert sweep["workload"] == {"rays": [1024, 4096]}
    assert sweep["grid"] == {
        "frequency_mhz": [500.0, 1000.0],
        "systolic_array_32x32.count": [1, 2, 4],
    }
    assert [g["name"] for g in sweep["graphs"]] == ["neurex"]
    assert len(sweep["graphs"][0]["sha256"]) == 64
    assert len(sweep["accelerator"]["sha256"]) == 64
    assert incomplete(store) is None


@pytest.mark.parametrize(
    ("change", "differs"),
    [
        ({"workload": {"rays": [1024]}}, "workload"),
        ({"grid": {"frequency_mhz": [500]}}, "grid"),
        ({"constraints": {"area_mm2": 1}}, "constraints"),
        ({"parallelism": "instance"}, "parallelism"),
        ({"model": "spec"}, "graphs and model"),
        ({"compression": "lz4"}, "compression"),
    ],
)
def test_a_different_sweep_is_refused(tmp_path: Path, change: dict, differs: str) -> None:
    store = tmp_path / "s"
    nerframe.sweep(SPEC, output=store)
    before = sorted(p.stat().st_mtime_ns for p in store.rglob("*.parquet"))
    with pytest.raises(nerframe.NerframeError, match=f"its {differs} differ"):
        nerframe.sweep({**SPEC, **change}, output=store)
    assert sorted(p.stat().st_mtime_ns for p in store.rglob("*.parquet")) == before


def test_changed_graph_or_accelerator_content_is_refused(tmp_path: Path, graph_file: Path) -> None:
    accel_file = tmp_path / "accel.json"
    accel = json.loads(Path(nerframe.accelerator("neurex").path).read_text())
    accel_file.write_text(json.dumps(accel))
    spec = {
        "graphs": [str(graph_file)],
        "hardware": str(accel_file),
        "grid": {"frequency_mhz": [1]},
    }
    store = tmp_path / "s"
    nerframe.sweep(spec, output=store)
    graph = json.loads(graph_file.read_text())
    graph["ops"][0]["layer_width"] = 32
    graph_file.write_text(json.dumps(graph))
    with pytest.raises(nerframe.NerframeError, match="its graphs differs"):
        nerframe.sweep(spec, output=store)
    other = tmp_path / "other"
    nerframe.sweep(spec, output=other)
    accel["dram_pj_per_byte"] = accel.get("dram_pj_per_byte", 0) + 1
    accel_file.write_text(json.dumps(accel))
    with pytest.raises(nerframe.NerframeError, match="its accelerator differs"):
        nerframe.sweep(spec, output=other)


def test_a_store_of_something_else_is_refused(tmp_path: Path) -> None:
    (tmp_path / "s").mkdir()
    (tmp_path / "s" / "notes.txt").write_text("mine")
    with pytest.raises(nerframe.NerframeError, match="not a sweep store"):
        nerframe.sweep(SPEC, output=tmp_path / "s")


def test_incomplete_store_is_marked_and_query_warns(tmp_path: Path) -> None:
    store = tmp_path / "s"
    nerframe.sweep(SPEC, output=store)
    manifest = json.loads((store / "store.json").read_text())
    manifest["run"]["complete"] = False  # as left by a sweep killed before its end
    (store / "store.json").write_text(json.dumps(manifest))
    with pytest.warns(nerframe.NerframeWarning, match="the sweep is incomplete"):
        nerframe.query("SELECT count(*) FROM sweep", store)
    nerframe.sweep(SPEC, output=store)  # resuming finishes it
    assert incomplete(store) is None
    next(store.rglob("part-000001.parquet")).unlink()  # a part lost since
    assert "(3 of 4 chunks written)" in (incomplete(store) or "")
    nerframe.sweep(SPEC, output=store)
    assert incomplete(store) is None


_KILLED = """
import sys, nerframe
spec = {"graphs": ["neurex"], "hardware": "neurex", "workload": {"rays": [1024, 2048, 4096]},
        "grid": {"frequency_mhz": list(range(100, 2100, 10)),
                 "systolic_array_32x32.count": list(range(1, 301))},
        "chunk_size": 6000}
nerframe.sweep(spec, output=sys.argv[1])
"""


@pytest.mark.slow
def test_sigkill_at_any_moment_then_resume_gives_the_identical_rows(tmp_path: Path) -> None:
    store = tmp_path / "s"
    script = tmp_path / "sweep.py"
    script.write_text(_KILLED)
    parts = store / "sweep"
    for wait_for in (3, 17):  # kill twice, at different points of the sweep
        process = subprocess.Popen([sys.executable, str(script), str(store)])
        deadline = time.monotonic() + 120
        while time.monotonic() < deadline and len(list(parts.rglob("part-*.parquet"))) < wait_for:
            time.sleep(0.01)
        os.kill(process.pid, signal.SIGKILL)
        process.wait()
    written = len(list(parts.rglob("part-*.parquet")))
    assert 0 < written < 30  # 3 workload points x 10 chunks
    assert incomplete(store) is not None
    namespace: dict = {}
    exec(_KILLED.split("nerframe.sweep(")[0], namespace)
    resumed = nerframe.sweep(namespace["spec"], output=store).collect()
    assert resumed.equals(nerframe.sweep(namespace["spec"]))
    assert resumed.height == 3 * 200 * 300
    assert incomplete(store) is None
    assert not list(store.rglob("*.tmp"))


@pytest.mark.slow
def test_memory_stays_bounded_whatever_the_grid(tmp_path: Path) -> None:
    """Peak RSS of a 4 M-configuration sweep (printing its best rows) stays near that of a
    small one: the grid and the rows are never all in memory."""
    code = (
        "import resource, sys, numpy as np\n"
        "from nerframe.cli import main\n"
        "n = int(sys.argv[1])\n"
        "main(['sweep', 'neurex', '--hardware', 'neurex', '--top', '3', '--chunk-size', "
        "'200000', '--vary', 'frequency_mhz=' + ','.join(str(100 + i) for i in range(n)), "
        "'--vary', 'systolic_array_32x32.count=' + ','.join(str(i) for i in range(1, 2001))])\n"
        "print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss // 1024, file=sys.stderr)\n"
    )

    def peak_mb(n: int) -> int:
        done = subprocess.run(
            [sys.executable, "-c", code, str(n)], capture_output=True, text=True, check=True
        )
        return int(done.stderr.strip().splitlines()[-1])

    small, large = peak_mb(10), peak_mb(2000)  # 20 k and 4 M configurations
    assert large < small + 200, (small, large)


def test_top_from_a_store_equals_top_in_memory(tmp_path: Path, capsys) -> None:
    from nerframe.cli import main

    args = ["sweep", "neurex", "--hardware", "neurex", "--format", "csv", "--top", "4"]
    args += ["--vary", "rays=1024,4096", "--vary", "systolic_array_32x32.count=1,2,3"]
    args += ["--vary", "frequency_mhz=500,1000", "--max", "area=5"]
    assert main(args) == 0
    in_memory = capsys.readouterr().out
    assert main([*args, "-o", str(tmp_path / "s")]) == 0
    from_store = capsys.readouterr().out
    assert from_store == in_memory
    shown = pl.read_csv(in_memory.encode())
    rows = nerframe.sweep(
        {
            "graphs": ["neurex"],
            "hardware": "neurex",
            "workload": {"rays": [1024, 4096]},
            "grid": {"systolic_array_32x32.count": [1, 2, 3], "frequency_mhz": [500, 1000]},
        }
    )
    fastest = rows.filter(pl.col("area_mm2") <= 5).sort(
        "fps", "rays", "config", descending=[True, False, False]
    )
    assert shown["config"].to_list() == fastest["config"].head(4).to_list()
    assert shown.height == 4


def test_parts_hold_row_groups_required_columns_and_nulls(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A part of 7 rows with row groups of at most 3 holds groups of 2, 2 and 3 (the
    sweep's last part is computed and written a group at a time, the others whole,
    with the same bytes); only the figures that may have no value are optional, and
    their nulls read back."""
    import pyarrow.parquet as pq

    from nerframe.sweeps import parts
    from nerframe.sweeps.evaluate import Evaluator, tasks
    from nerframe.sweeps.spec import sweep_spec

    monkeypatch.setattr(parts, "ROW_GROUP", 3)
    spec = {
        "graphs": ["neurex"],
        "hardware": "xavier_nx",  # publishes no area for some modules: area_mm2 is null
        "grid": {"frequency_mhz": [300, 700, 900], "dram_bandwidth_gbps": [10, 20, 40]},
        "chunk_size": 7,
    }
    rows = nerframe.sweep(spec, output=tmp_path / "s").collect()
    expected = nerframe.sweep(spec)
    assert expected["area_mm2"].null_count() == 9
    assert rows.equals(expected)
    first, second = sorted((tmp_path / "s").rglob("*.parquet"))
    for part, sizes in ((first, [2, 2, 3]), (second, [2])):
        meta = pq.ParquetFile(part).metadata
        assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == sizes
    evaluate = Evaluator(sweep_spec(spec))
    for task, part in zip(tasks(sweep_spec(spec)), (first, second), strict=True):
        parts.write_part(tmp_path / "fresh.parquet", evaluate(task))
        assert part.read_bytes() == (tmp_path / "fresh.parquet").read_bytes()
    optional = {f.name for f in pq.read_schema(first) if f.nullable}
    assert optional == set(SWEEP_FIGURES)


def test_an_error_in_the_middle_of_a_part_leaves_no_part_and_resume_finishes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The last part is written a row group at a time: an error between its groups
    leaves the parts before it, nothing of it, and a store that resumes."""
    from nerframe.sweeps import parts
    from nerframe.sweeps.evaluate import Evaluator

    monkeypatch.setattr(parts, "ROW_GROUP", 3)
    calls = []
    evaluate = Evaluator.__call__

    def failing(self, task, out=None, helper=None):
        calls.append((task.start, task.stop))
        if len(calls) == 3:  # the last part's second group
            raise nerframe.NerframeError("disk on fire")
        return evaluate(self, task, out, helper)

    monkeypatch.setattr(Evaluator, "__call__", failing)
    spec = {
        "graphs": ["neurex"],
        "hardware": "neurex",
        "grid": {
            "frequency_mhz": [300, 700, 900, 1100, 1300, 1500, 1700],
            "dram_pj_per_byte": [1, 2],
        },
        "chunk_size": 7,
    }
    store = tmp_path / "s"
    with pytest.raises(nerframe.NerframeError, match="disk on fire"):
        nerframe.sweep(spec, output=store)
    assert calls == [(0, 7), (7, 9), (9, 11)]
    assert [p.name for p in store.rglob("*.parquet")] == ["part-000000.parquet"]
    assert not [p for p in store.rglob("*") if p.name.endswith(".tmp")]
    monkeypatch.setattr(Evaluator, "__call__", evaluate)
    assert nerframe.sweep(spec, output=store).collect().equals(nerframe.sweep(spec))
    assert incomplete(store) is None

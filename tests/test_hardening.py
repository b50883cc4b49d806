"""Regression tests of issue 10: bad input is one clear error, nothing is overwritten
silently, concurrent runs are refused, and the API accepts what a user would pass.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import polars as pl
import pytest
from cli_process import run_cli

import nerframe
from nerframe import cli
from nerframe.store import TableWriter, locked

NEUREX = Path(nerframe.__file__).parent / "accelerators" / "neurex.json"


def one_error_line(result: subprocess.CompletedProcess[str]) -> str:
    assert result.returncode == 1, result.stderr
    lines = result.stderr.splitlines()
    assert len(lines) == 1 and lines[0].startswith("error: "), result.stderr
    assert "Traceback" not in result.stderr
    return lines[0]


def graph_doc(name: str, pixels: object = 64) -> dict[str, object]:
    return {
        "name": name,
        "ops": [{"op_type": "UniformSampler", "B": 8, "N": 2}],
        "frame_pixels": pixels,
    }


def write_json(path: Path, document: object) -> Path:
    path.write_text(json.dumps(document))
    return path


def variant(tmp_path: Path, module: int, field: str, value: float) -> Path:
    """The neurex accelerator file with one module field changed."""
    document = json.loads(NEUREX.read_text())
    document["name"] = "bad_neurex"
    document["modules"][module][field] = value
    return write_json(tmp_path / "bad.json", document)


# ------------------------------------------------------------------ store names


@pytest.mark.parametrize("name", ["../../x", "a/b", "", ".hidden", "k=v", "a\\b"])
def test_graph_names_that_cannot_name_a_folder_are_refused(tmp_path: Path, name: str) -> None:
    graph = write_json(tmp_path / "g.json", graph_doc(name))
    with pytest.raises(nerframe.InvalidInputError, match="cannot name a store folder") as err:
        nerframe.analyze([str(graph)], "neurex", output=tmp_path / "out", report=False)
    assert err.value.culprit == name
    # Nothing was written anywhere: not outside the store, not a partial store.
    assert sorted(p.name for p in tmp_path.iterdir()) == ["g.json"]


def test_store_tables_refuse_unsafe_partition_values(tmp_path: Path) -> None:
    import polars as pl

    with (
        pytest.raises(nerframe.InvalidInputError, match=r"'\.\.'"),
        TableWriter(tmp_path / "s") as writer,
    ):
        writer.write("ops", pl.DataFrame({"a": [1]}), pipeline="..")
    assert not (tmp_path / "s").exists()


def test_two_graphs_with_one_name_are_refused(tmp_path: Path) -> None:
    first = write_json(tmp_path / "a.json", graph_doc("same"))
    second = write_json(tmp_path / "b.json", graph_doc("same"))
    with pytest.raises(nerframe.InvalidInputError, match="two graphs are named 'same'"):
        nerframe.analyze([str(first), str(second)], "neurex", output=tmp_path / "out")
    assert not (tmp_path / "out").exists()


# ------------------------------------------------------------------ frame_pixels


@pytest.mark.parametrize("pixels", [0, -1, 2**40 + 1, 10**18, 10**30, 1.5, True])
def test_frame_pixels_out_of_range_api(pixels: object) -> None:
    with pytest.raises(nerframe.InvalidInputError, match="frame_pixels must be an integer >= 1"):
        nerframe.pipeline("neurex", frame_pixels=pixels)  # type: ignore[arg-type]


@pytest.mark.slow
@pytest.mark.parametrize("pixels", [0, 10**18, 10**30])
def test_frame_pixels_out_of_range_file(tmp_path: Path, pixels: int) -> None:
    graph = write_json(tmp_path / "g.json", graph_doc("g", pixels))
    line = one_error_line(run_cli("schedule", str(graph), "--hardware", "neurex"))
    assert "frame_pixels must be an integer >= 1 and <= 2**40" in line


def test_largest_frame_is_scheduled_with_a_positive_frame_time() -> None:
    s = nerframe.schedule(nerframe.pipeline("neurex", frame_pixels=2**40), "neurex")
    row = s.summary.row(0, named=True)
    # 2**40 pixels in batches of 4096 rays.
    assert row["batches"] == 2**40 // 4096 and row["frame_time_s"] > 0
    assert row["status"] == "ok"


# ------------------------------------------------------- one line, not a traceback


@pytest.mark.parametrize(
    ("module", "field", "value", "expected"),
    [
        (
            1,
            "latency_cycles",
            10**30,
            # beyond 2**53 an integer field is refused by the accelerator format
            "field 'modules[1].latency_cycles': expected int <= 9007199254740992, "
            "got 1000000000000000000000000000000",
        ),
        # a fraction where an integer belongs is refused by the accelerator format
        (1, "latency_cycles", 1e30, "field 'modules[1].latency_cycles': expected int, got 1e+30"),
        (1, "count", 10**12, "count of module systolic_array_32x32 must be <= 1048576"),
        (
            1,
            "throughput_ops_per_cycle",
            1e-300,
            # an array module's rate is its shape's: a tiny one is refused as such
            "field 'modules[1].throughput_ops_per_cycle' must be 2 * rows * cols",
        ),
        (
            1,
            "latency_cycles",
            2**52,
            "op 2 (MLP) on module systolic_array_32x32 may take up to 4.5e+15 cycles",
        ),
    ],
)
@pytest.mark.slow
def test_out_of_range_accelerator_values_are_one_line(
    tmp_path: Path, module: int, field: str, value: float, expected: str
) -> None:
    accel = variant(tmp_path, module, field, value)
    line = one_error_line(run_cli("schedule", "neurex", "--hardware", str(accel)))
    assert expected in line


def test_out_of_range_sweep_value_names_module_and_configuration() -> None:
    with pytest.raises(nerframe.InvalidInputError) as err:
        nerframe.sweep(
            nerframe.pipeline("neurex"), "neurex", {"systolic_array_32x32.count": [1, 2**21]}
        )
    assert str(err.value).startswith(
        "count of module systolic_array_32x32 of configuration 1 must be <= 1048576"
    )
    assert (err.value.module, err.value.configuration) == (1, 1)


def test_ctrl_c_exits_130_with_one_line(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def interrupted(args: object) -> None:
        raise KeyboardInterrupt

    monkeypatch.setattr(cli, "cmd_pipelines", interrupted)
    assert cli.main(["pipelines"]) == 130
    assert capsys.readouterr().err == "error: interrupted\n"


def test_an_interrupt_python_cannot_propagate_is_not_printed() -> None:
    # A Ctrl-C that lands in a finaliser (or a C extension's callback) cannot propagate,
    # and Python would print "Exception ignored in: ..."; the watcher ends the command.
    interrupts = cli._Interrupts()
    seen: list[type[BaseException]] = []
    interrupts._unraisable_hook = lambda info: seen.append(info.exc_type)

    class Finaliser:
        def __init__(self, error: BaseException) -> None:
            self.error = error

        def __del__(self) -> None:
            raise self.error

    previous = sys.unraisablehook
    sys.unraisablehook = interrupts._unraisable
    try:
        Finaliser(KeyboardInterrupt())  # before any Ctrl-C: Python's report stands
        interrupts.interrupted = True
        Finaliser(KeyboardInterrupt())
        Finaliser(ValueError("not an interrupt"))
    finally:
        sys.unraisablehook = previous
        interrupts._read.close()
        interrupts._write.close()
    assert seen == [KeyboardInterrupt, ValueError]


@pytest.mark.parametrize(
    "module", ["polars.callback", "torch.distributed.autograd", "importlib._bootstrap"]
)
def test_an_interrupt_in_a_library_callback_is_raised_in_the_caller(module: str) -> None:
    # A Ctrl-C that lands in Python code a library's native code called back is raised
    # once control is back in the caller outside the library (seen in CI: polars' Rust
    # building a dtype in Python panicked and printed its backtrace; torch's C++
    # importing its Python modules during `import torch` aborted the process through
    # pybind11, the import machinery's frames between them): the callback completes,
    # the caller's next line does not run, tracing is as it was
    interrupts = cli._Interrupts()
    library: dict[str, object] = {"__name__": module}
    exec(
        "import sys\n"
        "def callback(handler, done):\n"
        "    handler(2, sys._getframe())\n"
        "    done.append('callback')\n",
        library,
    )
    done: list[str] = []

    def caller() -> None:
        library["callback"](interrupts._raise, done)  # type: ignore[operator]
        done.append("caller")

    tracing = sys.gettrace()
    try:
        with pytest.raises(KeyboardInterrupt):
            caller()
    finally:
        interrupts._read.close()
        interrupts._write.close()
    assert done == ["callback"] and interrupts.interrupted
    assert sys.gettrace() is tracing
    # anywhere else it is raised where it lands
    direct = cli._Interrupts()
    try:
        with pytest.raises(KeyboardInterrupt):
            direct._raise(2, sys._getframe())
    finally:
        direct._read.close()
        direct._write.close()


def test_sigint_during_analyze_leaves_no_traceback_and_no_store(tmp_path: Path) -> None:
    import signal
    import time

    # On a busy machine the run may finish before the signal lands; then try again
    # (the interrupted run is the case under test).
    for attempt in range(3):
        cwd = tmp_path / str(attempt)
        cwd.mkdir()
        process = subprocess.Popen(
            [sys.executable, "-m", "nerframe.cli", "analyze", "all", "--hardware", "all"],
            cwd=cwd,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        # Wait until the run has started building its store, then press Ctrl-C.
        deadline = time.monotonic() + 60
        while not any(p.name.endswith(".tmp") for p in cwd.iterdir()):
            assert process.poll() is None and time.monotonic() < deadline
            time.sleep(0.01)
        process.send_signal(signal.SIGINT)
        _, stderr = process.communicate(timeout=60)
        if (cwd / "nerframe-out" / "store.json").exists():
            continue  # finished before the signal arrived
        assert process.returncode == 130, stderr
        assert stderr == "error: interrupted\n"
        # the lock file stays, empty and held by nobody (nerframe.store.locked)
        assert sorted(p.name for p in cwd.iterdir()) == [".nerframe-out.lock"]
        return
    pytest.fail("every run finished before Ctrl-C reached it")


def test_version(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out == f"nerframe {nerframe.__version__}\n"


# ------------------------------------------------------------ silently accepted


def test_bitwidth_beyond_64_is_refused() -> None:
    with pytest.raises(nerframe.NerframeError, match=r"bitwidth must be an integer in 1\.\.64"):
        nerframe.operators([{"op_type": "Sorting", "B": 1, "N": 1, "bitwidth": 10**6}])


def test_empty_graph_is_refused() -> None:
    with pytest.raises(nerframe.InvalidInputError, match="graph 'e' has no ops"):
        nerframe.graph("e", [])


def test_gaussians_on_a_nerf_pipeline_is_refused() -> None:
    line = one_error_line(run_cli("costs", "neurex", "--gaussians", "5"))
    assert line == "error: pipeline 'neurex' has no op that takes G; gaussians does not apply to it"


def test_table_output_to_an_unknown_suffix_is_refused(tmp_path: Path) -> None:
    line = one_error_line(run_cli("costs", "neurex", "-o", str(tmp_path / "x.foo")))
    assert "unknown table format '.foo'" in line
    assert list(tmp_path.iterdir()) == []


def test_query_on_a_missing_store_folder(tmp_path: Path) -> None:
    line = one_error_line(run_cli("query", "matrix", "--store", str(tmp_path / "nowhere")))
    assert line.endswith("nowhere: not a nerframe result store (no such folder)")


# ------------------------------------------------------------- stores and locks


def test_analyze_refuses_to_replace_a_sweep_store(tmp_path: Path) -> None:
    store = tmp_path / "sweep"
    nerframe.sweep(nerframe.pipeline("neurex"), "neurex", {"frequency_mhz": [500]}, output=store)
    before = sorted(p.relative_to(store) for p in store.rglob("*"))
    with pytest.raises(nerframe.StoreError, match="not a nerframe result store of analyze"):
        nerframe.analyze(["neurex"], output=store, report=False)
    assert sorted(p.relative_to(store) for p in store.rglob("*")) == before


@pytest.mark.slow
def test_a_second_run_into_a_locked_store_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "out"
    with locked(store):
        with pytest.raises(nerframe.StoreError, match="another nerframe run is writing") as err:
            nerframe.analyze(["neurex"], output=store, report=False)
        assert err.value.path == str(store)
        line = one_error_line(run_cli("analyze", "neurex", "-o", str(store), "--no-report"))
        assert "another nerframe run is writing this store" in line
    assert not store.exists()
    nerframe.analyze(["neurex"], output=store, report=False)  # free again
    assert (store / "store.json").exists()


@pytest.mark.slow
def test_a_second_sweep_into_a_locked_store_is_refused(tmp_path: Path) -> None:
    store = tmp_path / "s"
    grid = {"frequency_mhz": [500, 1000]}
    with locked(store):
        with pytest.raises(nerframe.StoreError, match="another nerframe run is writing") as err:
            nerframe.sweep("neurex", "neurex", grid, output=store)
        assert err.value.path == str(store)
        args = ["sweep", "neurex", "--hardware", "neurex", "--vary", "frequency_mhz=500,1000"]
        line = one_error_line(run_cli(*args, "-o", str(store)))
        assert "another nerframe run is writing this store" in line
    assert not store.exists()
    written = nerframe.sweep("neurex", "neurex", grid, output=store)  # free again
    assert isinstance(written, pl.LazyFrame)
    rows = written.collect()
    assert rows.height == 2


def test_stale_lock_and_temporary_stores_of_a_killed_run_are_cleaned_up(tmp_path: Path) -> None:
    dead = subprocess.Popen([sys.executable, "-c", "pass"])
    dead.wait()
    (tmp_path / ".out.lock").write_text(str(dead.pid))
    leftover = tmp_path / ".out.0123456789ab.tmp"
    (leftover / "summary").mkdir(parents=True)
    (tmp_path / ".other.0123456789ab.tmp").mkdir()  # another store's: not ours to remove
    nerframe.analyze(["neurex"], output=tmp_path / "out", report=False)
    # the lock file stays (empty, held by nobody): see nerframe.store.locked
    names = sorted(p.name for p in tmp_path.iterdir())
    assert names == [".other.0123456789ab.tmp", ".out.lock", "out"]


def test_errors_name_the_store_not_its_temporary_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    from nerframe import analysis

    def failing(store: Path, *_: object) -> None:
        raise nerframe.NerframeError(f"{store / 'store.json'}: disk full")

    monkeypatch.setattr(analysis, "write_manifest", failing)
    with pytest.raises(nerframe.NerframeError) as err:
        nerframe.analyze(["neurex"], output=tmp_path / "out", report=False)
    assert str(err.value) == f"{tmp_path / 'out' / 'store.json'}: disk full"
    assert list(tmp_path.iterdir()) == [tmp_path / ".out.lock"]  # kept, held by nobody


# ---------------------------------------------------------------------------- API


def test_api_accepts_names_and_single_values(tmp_path: Path) -> None:
    by_name = nerframe.schedule("neurex", "neurex")
    by_object = nerframe.schedule(nerframe.pipeline("neurex"), nerframe.accelerator("neurex"))
    assert by_name.summary.equals(by_object.summary)
    result = nerframe.analyze("neurex", output=tmp_path / "out", report=False)
    assert result.summary["graph"].unique().to_list() == ["neurex"]
    g = nerframe.pipeline("neurex")
    assert nerframe.roofline(g, "A100").equals(nerframe.roofline(nerframe.costs(g.ops), ["A100"]))
    assert nerframe.costs(g).equals(nerframe.costs(g.ops))
    with pytest.raises(nerframe.InvalidInputError, match="got int"):
        nerframe.costs(5)  # type: ignore[arg-type]


def test_short_reprs() -> None:
    g = nerframe.pipeline("neurex")
    assert repr(g) == "Graph('neurex', inference, 5 ops, 4 edges, frame_pixels=640000)"
    s = nerframe.schedule(g, "neurex")
    fps = s.summary["fps"].item()
    assert repr(s) == f"Schedule(graph='neurex', accelerator='neurex', ops=5, fps={fps:.3g})"
    a = nerframe.accelerator("neurex")
    assert repr(a) == "Accelerator('neurex', accelerator, 3 modules, 1000 MHz, DRAM 25.6 GB/s)"
    spec = nerframe.sweep_spec(
        {
            "graphs": ["neurex", nerframe.graph("mine", graph_doc("mine")["ops"])],  # type: ignore[arg-type]
            "hardware": a,
            "workload": {"rays": [1024, 2048, 4096]},
            "grid": {"frequency_mhz": [500, 1000], "dram_bandwidth_gbps": [64, 128]},
        }
    )
    assert repr(spec) == (
        "SweepSpec(['neurex', 'mine'] on 'neurex', workload {rays: 3}, "
        "grid {frequency_mhz: 2, dram_bandwidth_gbps: 2}, 24 rows)"
    )


def test_error_hierarchy_carries_the_culprit() -> None:
    with pytest.raises(nerframe.UnmappedError) as err:
        nerframe.schedule("gscore", "neurex")
    assert err.value.accelerator == "neurex" and err.value.op_types
    assert isinstance(err.value, nerframe.NerframeError)
    with pytest.raises(nerframe.CycleError) as cycle:
        nerframe.graph("c", graph_doc("c")["ops"] * 2, [(0, 1), (1, 0)])  # type: ignore[arg-type, operator]
    assert cycle.value.cycle == [0, 1] and isinstance(cycle.value, nerframe.InvalidInputError)


# ------------------------------------------------------------------------- report


def store_files(store: Path) -> dict[str, bytes]:
    return {str(p.relative_to(store)): p.read_bytes() for p in store.rglob("*") if p.is_file()}


def test_report_when_every_pair_is_unmapped(tmp_path: Path) -> None:
    result = nerframe.analyze(["gscore"], "neurex", output=tmp_path / "out", images=True)
    assert result.summary["status"].to_list() == ["unmapped"]
    page = (tmp_path / "out" / "report.html").read_text()
    assert "Unmapped pairs" in page and "gscore on neurex" in page
    assert sorted(p.name for p in (tmp_path / "out" / "charts").glob("*.svg")) == [
        "area-power.svg",
        "graph--gscore.svg",
        "matrix.svg",
        "validation.svg",
    ]


@pytest.mark.slow
def test_report_elsewhere_leaves_the_store_alone(tmp_path: Path) -> None:
    store = nerframe.analyze(["neurex"], output=tmp_path / "out", images=True).store
    before = store_files(store)
    elsewhere = tmp_path / "elsewhere" / "r.html"
    result = run_cli("report", str(store), "-o", str(elsewhere), "--images")
    assert result.returncode == 0, result.stderr
    assert store_files(store) == before
    assert elsewhere.read_text() == (store / "report.html").read_text()
    assert {p.name for p in (elsewhere.parent / "charts").iterdir()} == {
        p.name for p in (store / "charts").iterdir()
    }


def test_images_only_on_request(tmp_path: Path) -> None:
    store = nerframe.analyze(["neurex"], output=tmp_path / "out").store
    assert (store / "report.html").exists() and not (store / "charts").exists()


def test_report_page_names_pairs_states_workload_and_plain_fps(tmp_path: Path) -> None:
    result = nerframe.analyze(["neurex"], "neurex", output=tmp_path / "out")
    page = (result.store / "report.html").read_text()
    fps = result.summary["fps"].item()
    # the rebuilt NeuRex (index units rated in lookups per cycle) renders about 4 fps
    assert 1 < fps < 10
    # plain significant digits: an SI "m" on fps reads as millions
    assert f'<td class="num">{fps:.4g}</td>' in page
    # 800x800 pixels in batches of 4096 rays: 157 batches; the realistic workload
    # model gives hash-grid pipelines 24 samples per ray.
    assert (
        "Workload: 5 ops; rays per batch 4,096, samples per ray 24, "
        "640,000 pixels per frame, 157 batches per frame." in page
    )
    specs = json.loads(page.split('id="nerframe-charts">')[1].split("</script>")[0])["charts"]
    titles = [s["title"]["text"] if isinstance(s["title"], dict) else s["title"] for s in specs]
    assert titles == [
        "Pipeline × accelerator",
        "Area and power at 28 nm",
        "predicted / published, with the band of the assumed figures",
        "Operator graph of neurex",
        "Schedule of neurex on neurex",
        "Roofline of neurex on neurex and A100",
        "Breakdown of neurex on neurex",
    ]


def test_graph_chart_of_a_100k_op_graph_is_aggregated() -> None:
    import numpy as np
    import polars as pl

    from nerframe.charts import MAX_ROWS, graph_chart

    n = 100_000
    dst = np.repeat(np.arange(1, n), 2)
    src = np.maximum(dst - np.tile([1, 7], n - 1), 0)  # a chain plus skips of 7
    ops = pl.DataFrame(
        {
            "graph": "big",
            "op_id": np.arange(n),
            "op_type": "MLP",
            "category": "COMPUTATION",
            "backward": False,
        }
    )
    edges = pl.DataFrame({"graph": "big", "src": src, "dst": dst, "kind": "data"})
    spec = graph_chart(ops, edges).to_dict()
    nodes = [layer["data"] for layer in spec["layer"] if layer["mark"]["type"] == "circle"]
    assert spec["title"]["subtitle"] == "100,000 ops, merged"
    assert spec["width"] <= 1100 and spec["height"] <= 900
    datasets = spec["datasets"]
    rows = [datasets[d["name"]] for d in nodes]
    assert all(len(r) <= MAX_ROWS for r in rows)
    # The chain is 99,999 layers deep: every op is counted in exactly one node.
    assert sum(node["ops"] for node in rows[0]) == n


def test_write_errors_name_the_target_not_the_temporary_file(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    def full(src: object, dst: object) -> None:
        raise OSError(28, "No space left on device", str(src))

    monkeypatch.setattr(os, "replace", full)
    target = tmp_path / "costs.csv"
    assert cli.main(["costs", "neurex", "-o", str(target)]) == 1
    assert capsys.readouterr().err == f"error: {target}: No space left on device\n"
    assert list(tmp_path.iterdir()) == []


# --------------------------------------------------- API arguments of other kinds


@pytest.mark.slow
def test_huge_gaussian_counts_schedule_or_fail_in_one_line() -> None:
    def pre_cycles(gaussians: int) -> int:
        result = run_cli(
            "schedule", "gscore", "--hardware", "gscore", "--gaussians", str(gaussians),
            "--summary", "--format", "csv",
        )  # fmt: skip
        assert result.returncode == 0, result.stderr
        row = result.stdout.splitlines()[1].split(",")
        assert row[2] == "ok"
        return int(row[9])

    # 10**11 Gaussians (a traceback once): the per-Gaussian frame work is 100 times
    # that of 10**9, less the fixed pipeline latencies.
    assert pre_cycles(10**11) / pre_cycles(10**9) == pytest.approx(100, rel=1e-4)
    line = one_error_line(run_cli("costs", "gscore", "--gaussians", str(10**15)))
    assert "element count reaches 2**53" in line


def test_analyze_takes_graph_and_accelerator_objects(tmp_path: Path) -> None:
    g = nerframe.pipeline("neurex", rays=1024)
    result = nerframe.analyze(
        g, nerframe.accelerator("neurex"), output=tmp_path / "a", report=False
    )
    assert result.summary.select("graph", "accelerator", "rays").rows() == [
        ("neurex", "neurex", 1024)
    ]
    by_name = nerframe.analyze("neurex", "neurex", tmp_path / "b", rays=1024, report=False)
    assert result.summary.equals(by_name.summary)
    with pytest.raises(nerframe.InvalidInputError, match="rays applies to named pipelines"):
        nerframe.analyze(g, output=tmp_path / "c", rays=4096)
    # Paths, as well as names, of graph and accelerator files.
    graph = write_json(tmp_path / "g.json", graph_doc("g"))
    by_path = nerframe.analyze(graph, NEUREX, tmp_path / "d", report=False)
    assert by_path.summary.select("graph", "accelerator").rows() == [("g", "neurex")]


@pytest.mark.parametrize(
    ("pipelines", "hardware", "message"),
    [
        (5, "neurex", "pipelines must be names, paths or Graph objects, got int"),
        (["neurex", None], "neurex", "pipelines must be names, paths or Graph objects, got None"),
        ("neurex", 5, "hardware must be names, paths or Accelerator objects, got int"),
        ("neurex", ["neurex", 2.0], "hardware must be names, paths or Accelerator objects, got f"),
    ],
)
def test_analyze_arguments_of_other_kinds_are_refused(
    tmp_path: Path, pipelines: object, hardware: object, message: str
) -> None:
    with pytest.raises(nerframe.InvalidInputError, match=message):
        nerframe.analyze(pipelines, hardware, output=tmp_path / "out")  # type: ignore[arg-type]
    assert list(tmp_path.iterdir()) == []


@pytest.mark.parametrize(
    ("call", "message"),
    [
        (lambda: nerframe.schedule(5, "neurex"), "schedule: graph must be .* got int"),  # type: ignore[arg-type]
        (lambda: nerframe.schedule("neurex", ["neurex"]), "schedule: accel must be .* got list"),  # type: ignore[arg-type]
        (lambda: nerframe.pipeline(5), "pipeline: name must be .* got int"),  # type: ignore[arg-type]
        (lambda: nerframe.accelerator(5), "accelerator: give .* got int"),  # type: ignore[arg-type]
        (lambda: nerframe.expand(5), "expand: give a Graph or a pipeline name, got int"),  # type: ignore[arg-type]
        (lambda: nerframe.pareto([5], {"fps": "max"}), "pareto: rows must be .* got int"),  # type: ignore[list-item]
    ],
)
def test_public_functions_refuse_arguments_of_other_kinds(
    call: Callable[[], object], message: str
) -> None:
    with pytest.raises(nerframe.InvalidInputError, match=message):
        call()


def test_expand_and_pareto_take_what_a_user_has_at_hand() -> None:
    g = nerframe.pipeline("neurex")
    assert nerframe.expand("neurex").ops.equals(nerframe.expand(g).ops)
    rows = nerframe.sweep("neurex", "neurex", {"frequency_mhz": [500, 1000]})
    assert isinstance(rows, pl.DataFrame)
    objectives = {"fps": "max", "energy_per_frame_j": "min"}
    front = nerframe.pareto([rows[:1], rows[1:]], objectives)
    assert nerframe.pareto(rows, objectives).equals(front)
    assert nerframe.pareto(rows.lazy(), objectives).equals(front)


def test_two_accelerators_with_one_name_are_refused(tmp_path: Path) -> None:
    # The built-in neurex and a copy of its file: both are named 'neurex', and their
    # rows would overwrite each other's store partitions.
    copy = write_json(tmp_path / "copy.json", json.loads(NEUREX.read_text()))
    with pytest.raises(nerframe.InvalidInputError, match="two accelerators are named 'neurex'"):
        nerframe.analyze("neurex", ["neurex", str(copy)], output=tmp_path / "out")
    assert not (tmp_path / "out").exists()


@pytest.mark.parametrize("systems", [5, [5], None, ["A100", object()]])
def test_roofline_systems_of_other_kinds_are_refused(systems: object) -> None:
    g = nerframe.pipeline("neurex")
    with pytest.raises(nerframe.InvalidInputError, match="not a roofline system or accelerator"):
        nerframe.roofline(g, systems)  # type: ignore[arg-type]
    with pytest.raises(nerframe.InvalidInputError, match="got str"):
        nerframe.roofline("neurex", "A100")  # type: ignore[arg-type]
    # An accelerator object is one system, like its name.
    accel = nerframe.accelerator("neurex")
    assert nerframe.roofline(g, accel).equals(nerframe.roofline(g, ["neurex"]))


def test_analysis_repr_is_one_line(tmp_path: Path) -> None:
    result = nerframe.analyze(
        ["neurex", "gscore"], ["neurex", "gscore"], tmp_path / "o", report=False
    )
    assert repr(result) == f"Analysis({str(tmp_path / 'o')!r}, 4 pairs: 2 ok, 2 unmapped)"


def test_graph_names_of_one_readable_form_get_distinct_charts(tmp_path: Path) -> None:
    # "a b" and "a_b" both read as a_b in a file name, and a graph named "overview"
    # would take the overview section's anchor.
    graphs = [
        write_json(tmp_path / f"{i}.json", graph_doc(n))
        for i, n in enumerate(["a_b", "a b", "overview"])
    ]
    store = nerframe.analyze(
        [str(g) for g in graphs], "neurex", tmp_path / "out", images=True
    ).store
    charts = {p.name for p in (store / "charts").glob("graph--*.svg")}
    assert charts == {"graph--a_b.svg", "graph--a_b_2.svg", "graph--overview_2.svg"}
    page = (store / "report.html").read_text()
    assert '<section id="a_b"><h2>a_b</h2>' in page
    ids = [part.split('"')[0] for part in page.split(' id="')[1:]]
    assert len(ids) == len(set(ids))
    assert '<section id="a_b_2"><h2>a b</h2>' in page
    assert '<section id="overview_2"><h2>overview</h2>' in page


# ------------------------------------------------------------------------- sweeps


def test_top_from_a_store_reads_only_the_printed_columns(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    from nerframe import sql

    args = ["sweep", "neurex", "--hardware", "neurex", "--format", "csv", "--top", "2"]
    args += ["--vary", "rays=1024,4096", "--vary", "frequency_mhz=500,1000"]
    args += ["-o", str(tmp_path / "s")]
    assert cli.main(args) == 0  # write the store
    plans: list[dict[str, Any]] = []
    connect = sql.connect

    class Explained:
        """A connection that records the plan of every query it runs."""

        def __init__(self, store: Path) -> None:
            self.con = connect(store)

        def sql(self, query: str) -> object:
            plans.extend(
                json.loads(self.con.sql("EXPLAIN (FORMAT JSON) " + query).fetchall()[0][1])
            )
            return self.con.sql(query)

        def close(self) -> None:
            self.con.close()

    monkeypatch.setattr(sql, "connect", Explained)
    capsys.readouterr()
    assert cli.main(args) == 0  # resume: nothing to compute, the top rows read back
    printed = capsys.readouterr().out.splitlines()
    assert len(printed) == 3  # the header and the two rows asked for

    def nodes(node: dict[str, Any]) -> Iterator[dict[str, Any]]:
        yield node
        for child in node["children"]:
            yield from nodes(child)

    every = [n for plan in plans for n in nodes(plan)]
    read: set[str] = set()
    for scan in (n for n in every if "Projections" in n["extra_info"] and not n["children"]):
        columns = scan["extra_info"]["Projections"]
        read |= {columns} if isinstance(columns, str) else set(columns)
    # The printed columns and the graph column that breaks ties (`feasible` is only
    # a pushed-down filter); the rows are ranked by a streaming top-n, not a full sort.
    assert read == {*printed[0].split(","), "graph"}
    assert any(n["name"] == "TOP_N" and n["extra_info"]["Top"] == "2" for n in every)


# ------------------------------------------------------------------ docstrings


def test_every_public_function_and_class_has_a_runnable_example() -> None:
    import inspect

    from nerframe import charts, trace

    def documented(obj: object) -> bool:
        return ">>>" in (inspect.getdoc(obj) or "")

    missing = set()
    for module in (nerframe, charts, trace):
        for name in module.__all__:
            obj = getattr(module, name)
            if (inspect.isfunction(obj) or inspect.isclass(obj)) and not documented(obj):
                missing.add(name)
            if inspect.isclass(obj) and not issubclass(obj, BaseException):
                for member, value in vars(obj).items():
                    method = value.fget if isinstance(value, property) else value
                    if member[0] != "_" and inspect.isfunction(method) and not documented(method):
                        missing.add(f"{name}.{member}")
    # --doctest-modules runs every example, so they are runnable as well as present.
    assert not missing, sorted(missing)


# ---------------------------------------------------------------------------- CI


@pytest.mark.slow
def test_a_skip_that_is_not_optional_fails_the_run(tmp_path: Path) -> None:
    root = Path(__file__).resolve().parents[1]
    (tmp_path / "conftest.py").write_text((root / "conftest.py").read_text())
    (tmp_path / "pytest.ini").write_text("[pytest]\n")
    (tmp_path / "test_skips.py").write_text(
        "import pytest\n\n"
        "def test_optional():\n    pytest.skip('optional: no GPU here')\n\n"
        "def test_broken():\n    pytest.skip('fixture missing')\n"
    )
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-p", "no:randomly", "-p", "no:cacheprovider"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
    )
    assert done.returncode == 1, done.stdout
    assert "1 failed, 1 skipped" in done.stdout
    assert "unexpected skip (reason must start with 'optional: '): fixture missing" in done.stdout


@pytest.mark.slow
def test_stores_of_the_other_kind_are_named_as_such(tmp_path: Path) -> None:
    sweep = tmp_path / "sweep"
    nerframe.sweep(nerframe.pipeline("neurex"), "neurex", {"frequency_mhz": [500]}, output=sweep)
    analysis = nerframe.analyze("neurex", "neurex", tmp_path / "analysis", report=False).store
    line = one_error_line(run_cli("query", "matrix", "--store", str(sweep)))
    assert line.endswith(
        "(a sweep store; its named queries: best_under_budget, pareto, sensitivity)"
    )
    line = one_error_line(run_cli("query", "pareto", "--store", str(analysis)))
    assert line.endswith(
        "(a store of analyze; its named queries: bottlenecks, breakdown, matrix, roofline, "
        "speedup, top_ops)"
    )
    line = one_error_line(run_cli("report", str(sweep)))
    assert line.startswith(f"error: {sweep}: a sweep store; a report is built from a store of ")
    assert not (sweep / "report.html").exists()
    line = one_error_line(run_cli("query", "matrix", "--store", str(analysis / "store.json")))
    assert line.endswith("store.json: not a nerframe result store (not a folder)")


@pytest.mark.slow
def test_a_value_given_twice_in_one_vary_is_refused() -> None:
    args = ["sweep", "neurex", "--hardware", "neurex", "--vary", "frequency_mhz=500,1000,500.0"]
    line = one_error_line(run_cli(*args))
    assert line == "error: --vary frequency_mhz lists 500 twice; give each value once"


def test_charts_queries_and_stores_refuse_other_kinds_by_name(tmp_path: Path) -> None:
    from nerframe import charts

    g = nerframe.pipeline("neurex")
    run = nerframe.schedule(g, "neurex")
    assert charts.graph_chart(g).to_dict() == charts.graph_chart(g.ops, g.edges).to_dict()
    cases: list[tuple[Callable[[], object], str]] = [
        (lambda: charts.gantt_chart(run), "gantt_chart takes a table (a polars DataFrame), "  # type: ignore[arg-type]
         "got Schedule: pass its .schedule"),
        (lambda: charts.breakdown_chart(g), "breakdown_chart takes a table (a polars "  # type: ignore[arg-type]
         "DataFrame), got Graph"),
        (lambda: charts.graph_chart(g.ops), "graph_chart: give the edges table with the ops"),
        (lambda: charts.save_chart(5, tmp_path / "x.svg"), "save_chart takes an altair chart "  # type: ignore[arg-type]
         "or its Vega-Lite spec (a dict), got int"),
        (lambda: nerframe.pareto_chart([], {"fps": "max", "area_mm2": "min"}), "pareto_chart "  # type: ignore[arg-type]
         "takes a table (a polars DataFrame), got list"),
        (lambda: nerframe.query(5, tmp_path), "query takes a query name or SQL text, got int"),  # type: ignore[arg-type]
        (lambda: nerframe.query("matrix", 5), "a result store is a folder path, got int"),  # type: ignore[arg-type]
    ]  # fmt: skip
    for call, message in cases:
        with pytest.raises(nerframe.InvalidInputError) as err:
            call()
        assert str(err.value).startswith(message)
    assert list(tmp_path.iterdir()) == []


def test_ctrl_c_during_a_sweep_exits_130_and_leaves_whole_parts(tmp_path: Path) -> None:
    import signal
    import time

    from nerframe.sweeps.store import incomplete

    store = tmp_path / "s"
    counts = ",".join(map(str, range(1, 257)))
    frequencies = ",".join(map(str, range(100, 901)))
    args = ["sweep", "neurex", "--hardware", "neurex", "--chunk-size", "20000"]
    args += ["--vary", f"systolic_array_32x32.count={counts}"]
    args += ["--vary", f"frequency_mhz={frequencies}"]
    args += ["--vary", "rays=256,512,1024,2048,4096,8192,16384,32768", "-o", str(store)]
    process = subprocess.Popen(
        [sys.executable, "-m", "nerframe.cli", *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    # 1.6 M configurations in 88 chunks: interrupt once the first parts are written.
    deadline = time.monotonic() + 120
    while len(list(store.rglob("part-*.parquet"))) < 2:
        assert process.poll() is None and time.monotonic() < deadline
        time.sleep(0.01)
    process.send_signal(signal.SIGINT)
    _, stderr = process.communicate(timeout=120)
    assert (process.returncode, stderr) == (130, "error: interrupted\n")
    assert incomplete(store) is not None
    assert not list(tmp_path.rglob("*.tmp"))


# ------------------------------------------------------- workload of graph files


def mlp_file(folder: Path, rays: int, samples: int) -> Path:
    """A one-MLP graph file named ``mine`` with the given B and N."""
    folder.mkdir(exist_ok=True)
    mlp = {"op_type": "MLP", "B": rays, "N": samples, "in_dim": 3, "num_layers": 2}
    return write_json(folder / "mine.json", {"ops": [{**mlp, "layer_width": 16}]})


@pytest.mark.parametrize("command", ["costs", "schedule"])
def test_workload_options_apply_to_graph_files(
    tmp_path: Path, command: str, capsys: pytest.CaptureFixture[str]
) -> None:
    given = mlp_file(tmp_path / "given", 64, 8)
    by_hand = mlp_file(tmp_path / "by_hand", 128, 16)
    hardware = [] if command == "costs" else ["--hardware", "neurex"]
    outputs = []
    for args in ([str(given), "--rays", "128", "--samples", "16"], [str(by_hand)]):
        assert cli.main([command, *args, *hardware, "--format", "csv"]) == 0
        outputs.append(capsys.readouterr().out)
    assert outputs[0] == outputs[1]
    assert cli.main([command, str(given), *hardware, "--format", "csv"]) == 0
    assert capsys.readouterr().out != outputs[1]  # the options changed something


def test_analyze_applies_workload_options_to_graph_files(tmp_path: Path) -> None:
    given = mlp_file(tmp_path / "given", 64, 8)
    by_hand = mlp_file(tmp_path / "by_hand", 128, 16)
    options: dict[str, Any] = {"report": False}
    a = nerframe.analyze(str(given), "neurex", tmp_path / "a", rays=128, samples=16, **options)
    b = nerframe.analyze(str(by_hand), "neurex", tmp_path / "b", **options)
    assert a.summary.equals(b.summary)


def test_a_workload_keeps_the_rendered_fraction_of_a_graph_file(tmp_path: Path) -> None:
    from nerframe.builtin_pipelines import load_graph, workload_graph

    path = mlp_file(tmp_path, 64, 8)
    write_json(path, {**json.loads(path.read_text()), "rendered_fraction": 0.25})
    g = load_graph(str(path), rays=100)
    assert (g.rendered_fraction, g.ops["B"].item()) == (0.25, 100)
    # CICERO renders 12% of a frame (builtin_pipelines.CICERO_RENDERED); a sweep's
    # bitwidth axis rebuilt it as a whole-frame graph before.
    assert workload_graph("cicero", {"bitwidth": 8}).rendered_fraction == 0.12


@pytest.mark.slow
@pytest.mark.parametrize("command", ["costs", "schedule", "analyze"])
def test_a_workload_option_no_op_of_a_graph_file_takes_is_refused(
    tmp_path: Path, command: str
) -> None:
    given = mlp_file(tmp_path, 64, 8)
    args = [command, str(given), "--gaussians", "1000"]
    args += [] if command == "costs" else ["--hardware", "neurex"]
    args += ["-o", str(tmp_path / "out")] if command == "analyze" else []
    line = one_error_line(run_cli(*args))
    assert "graph 'mine' has no op that takes G; gaussians does not apply to it" in line
    assert not (tmp_path / "out").exists()


def test_a_sweep_over_a_dimension_no_op_of_the_graph_takes_is_refused(tmp_path: Path) -> None:
    given = mlp_file(tmp_path, 64, 8)
    with pytest.raises(nerframe.InvalidInputError, match="has no op that takes G"):
        nerframe.sweep(str(given), "neurex", {"gaussians": [10, 20]})


# ------------------------------------------------------------------- sweep specs


@pytest.mark.parametrize(
    ("text", "key", "line"),
    [
        ("graphs: [neurex]\nhardware: neurex\nhardware: gscore\n", "hardware", 3),
        (
            "graphs: [neurex]\nhardware: neurex\ngrid:\n  frequency_mhz: [500]\n"
            "  frequency_mhz: [900]\n",
            "frequency_mhz",
            5,
        ),
        ('{"graphs": ["neurex"], "hardware": "neurex",\n "graphs": ["gscore"]}', "graphs", 2),
    ],
)
@pytest.mark.slow
def test_a_key_given_twice_in_a_spec_file_is_refused(
    tmp_path: Path, text: str, key: str, line: int
) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(text)
    message = f"{spec}: key '{key}' is given twice in one mapping (line {line}); keep one"
    with pytest.raises(nerframe.InvalidInputError) as err:
        nerframe.sweep_spec(spec)
    assert str(err.value) == message and err.value.culprit == key
    assert one_error_line(run_cli("sweep", "--spec", str(spec))) == f"error: {message}"

"""Regression tests of the new-user defects D9, D14-D16, D18, D19, D22, D27-D32 and D34
(../shared/research/newuser_defects.md): each reproduces the report's case and checks
the expected behaviour against a hand derivation or the report's own figures."""

from __future__ import annotations

import inspect
import json
import math
import pickle
import statistics
import sys
import types
import warnings
from pathlib import Path

import polars as pl
import pytest
from cli_process import run_cli

import nerframe
from nerframe.cli import main
from nerframe.errors import InvalidInputError, NerframeError, NerframeWarning
from nerframe.output import render

# The report's D9 rows: fps up, area down.
ROWS = pl.DataFrame(
    {
        "graph": ["g"] * 3,
        "config": [0, 1, 2],
        "fps": [30.0, 60.0, 45.0],
        "area_mm2": [1.0, 3.0, 4.0],
        "feasible": [True] * 3,
    }
)


# --------------------------------------------------------------------------- D9


def test_d9_pareto_takes_exactly_max_or_min() -> None:
    # By hand: config 1 is the fastest, config 0 the smallest, config 2 is dominated
    # by config 1 (slower and larger).
    assert nerframe.pareto(ROWS, {"fps": "max", "area_mm2": "min"})["config"].to_list() == [1, 0]
    for objectives, message in (
        ({"fps": "up", "area_mm2": "min"}, "objective 'fps': say max or min, got 'up'"),
        ({"fps": "MAX", "area_mm2": "min"}, "objective 'fps': say max or min, got 'MAX'"),
        ({"fps": "min", "area_mm2": "down"}, "objective 'area_mm2': say max or min"),
        ({}, "give an objective"),
        ({"colour": "max"}, "objective 'colour' is not a column of the rows"),
    ):
        with pytest.raises(InvalidInputError, match=message):
            nerframe.pareto(ROWS, objectives)
    with pytest.raises(InvalidInputError, match="say max or min, got 'MAX'"):
        nerframe.pareto_chart(ROWS, {"fps": "MAX", "area_mm2": "min"})
    with pytest.raises(InvalidInputError, match="give 2 or more objectives"):
        nerframe.pareto_chart(ROWS, {"fps": "max"})


# --------------------------------------------------------------------------- D14


def test_d14_the_fine_graph_figures_docs_model_md_states() -> None:
    """docs/model.md explains why --fine differs on neurex: its table's figures."""
    composite = nerframe.schedule("neurex", "neurex")
    fine = nerframe.schedule(nerframe.expand(nerframe.pipeline("neurex")), "neurex")
    one, two = composite.summary.row(0, named=True), fine.summary.row(0, named=True)
    assert (one["total_bytes"], two["total_bytes"]) == (27_202_048, 262_083_072)
    assert one["total_flops"] == two["total_flops"]
    # the composite's batch is bound by the systolic array's MLP, the fine graph's by
    # its stages' DRAM traffic: 243,179,520 DRAM bytes a batch at 25.6 bytes/cycle
    # (its busiest module, the index unit, takes 6,248,972 cycles)
    mlp = composite.schedule.filter(op_type="MLP")["duration_cycles"].item()
    assert one["interval_cycles"] == mlp == 1_502_629
    assert two["interval_cycles"] == 9_499_200 == 243_179_520 / 25.6
    assert two["bottleneck_module"] == "dram"
    busy = nerframe.scheduling.module_busy(fine, nerframe.accelerator("neurex"))
    assert busy["busy_cycles"].max() == 6_248_972
    assert (round(one["fps"], 2), round(two["fps"], 3)) == (4.23, 0.670)
    # the energy gap is the extra bytes' DRAM and SRAM energy (20 + 1.27 pJ per byte),
    # plus leakage over the longer frame
    extra = (two["frame_bytes"] - one["frame_bytes"]) * 1e-12
    gap = two["energy_per_frame_j"] - one["energy_per_frame_j"]
    assert extra * 21.27 < gap < extra * 30
    text = (Path(__file__).resolve().parents[1] / "docs" / "model.md").read_text()
    assert "27,202,048 | 262,083,072" in text and "nerframe validate" in text
    assert "| 4.23 | 0.670 |" in text


# --------------------------------------------------------------------------- D15


def _infeasible() -> pl.DataFrame:
    return nerframe.sweep(
        "neurex", "neurex", {"frequency_mhz": [400, 800]}, constraints={"area_mm2": 0.01}
    )


def test_d15_no_feasible_row_warns_with_the_binding_constraint() -> None:
    rows = _infeasible()
    with pytest.warns(NerframeWarning, match="none of the 2 rows meets every constraint"):
        assert nerframe.pareto(rows, {"fps": "max", "energy_per_frame_j": "min"}).is_empty()
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        nerframe.pareto(rows, {"fps": "max"}, constraints={"area_mm2": (None, 0.01)})
    # both configurations have neurex's 0.607 mm2, so both break the area budget
    assert [str(w.message) for w in caught] == [
        "pareto: none of the 2 rows meets every constraint (area_mm2 breaks most: 2 of 2 "
        "rows); the result is empty"
    ]


def test_d15_named_queries_of_feasible_rows_say_why_they_are_empty(tmp_path: Path) -> None:
    store = tmp_path / "s"
    grid = {"frequency_mhz": [400, 800]}
    nerframe.sweep("neurex", "neurex", grid, constraints={"area_mm2": 0.01}, output=store)
    for name in ("pareto", "best_under_budget"):
        with pytest.warns(NerframeWarning) as caught:
            assert nerframe.query(name, store).is_empty()
        assert [str(w.message) for w in caught] == [
            f"query {name!r}: none of the 2 rows meets every constraint (area_mm2 breaks "
            "most: 2 of 2 rows); the result is empty"
        ]


@pytest.mark.slow
@pytest.mark.parametrize("store", [False, True])
def test_d15_the_sweep_command_says_why_it_prints_no_row(tmp_path: Path, store: bool) -> None:
    args = ["sweep", "neurex", "--hardware", "neurex", "--vary", "frequency_mhz=400,800"]
    args += ["--max", "area=1", "--min", "fps=30"] + (["-o", str(tmp_path / "s")] if store else [])
    result = run_cli(*args)
    assert result.returncode == 0, result.stderr
    # neurex is 0.607 mm2 (within the budget) and below 30 fps at any of these clocks
    assert (
        "warning: best: none of the 2 rows meets every constraint (fps breaks most: 2 of 2 "
        "rows); the result is empty" in result.stderr
    )


# --------------------------------------------------------------------------- D16


def test_d16_a_multi_graph_sweep_prints_the_best_of_each_graph(capsys) -> None:
    frequencies = [400, 600, 800, 1000]
    args = ["sweep", "neurex", "srender", "--hardware", "neurex", "--top", "2"]
    args += ["--vary", "frequency_mhz=" + ",".join(map(str, frequencies)), "--format", "csv"]
    assert main(args) == 0
    shown = pl.read_csv(capsys.readouterr().out.encode())
    # fps grows with the clock on both graphs: each graph's two fastest clocks
    assert shown.select("graph", "frequency_mhz").rows() == [
        ("neurex", 1000.0),
        ("neurex", 800.0),
        ("srender", 1000.0),
        ("srender", 800.0),
    ]


def test_d16_a_spec_with_two_objectives_prints_their_front(tmp_path: Path, capsys) -> None:
    spec = tmp_path / "spec.yaml"
    spec.write_text(
        "graphs: [neurex, srender]\nhardware: neurex\n"
        "grid: {systolic_array_32x32.count: [1, 2, 4], frequency_mhz: [500, 1000]}\n"
        "objectives: {fps: max, area_mm2: min}\n"
    )
    assert main(["sweep", "--spec", str(spec), "--format", "csv", "--top", "0"]) == 0
    shown = pl.read_csv(capsys.readouterr().out.encode())
    rows = nerframe.sweep(spec)
    for graph in ("neurex", "srender"):
        # brute force: a row is on the front unless another is at least as fast and
        # as small, and better in one
        mine = rows.filter(graph=graph).select("config", "fps", "area_mm2").rows()
        front = {
            c
            for c, f, a in mine
            if not any(f2 >= f and a2 <= a and (f2, a2) != (f, a) for _, f2, a2 in mine)
        }
        assert set(shown.filter(graph=graph)["config"]) == front
        assert len(front) == 3  # the 1000 MHz rows: 500 MHz is as large and slower


# --------------------------------------------------------------------------- D18


def test_d18_frame_flops_count_batch_ops_once_per_batch(tmp_path: Path) -> None:
    mixed = tmp_path / "mixed.yaml"
    mixed.write_text(
        "name: mixed\nframe_pixels: 921600\nops:\n"
        "  - {op_type: FrustumCullingProjection, G: 100000, scope: frame}\n"
        "  - {op_type: Sorting, B: 3600, N: 556, scope: frame}\n"
        "  - {op_type: GaussianAlphaBlend, B: 921600, N: 64}\n"
        "edges: [[0, 1], [1, 2]]\n"
    )
    from nerframe.builtin_pipelines import load_graph

    g = load_graph(str(mixed), rays=4096)  # as `nerframe schedule mixed.yaml --rays 4096`
    summary = nerframe.schedule(g, "gscore").summary.row(0, named=True)
    flops = nerframe.costs(g.ops)["flops"].to_list()
    assert summary["batches"] == 225  # ceil(921600 / 4096)
    # the report's hand sum: the frame ops once, the blend once per batch
    assert summary["frame_flops"] == flops[0] + flops[1] + 225 * flops[2]
    assert summary["total_flops"] == sum(flops)  # every op once, as documented
    assert summary["frame_flops"] == pytest.approx(2.90e9, rel=0.01)


# --------------------------------------------------------------------------- D19


@pytest.mark.slow
def test_d19_dram_utilization_stays_within_1_and_needs_no_warning(tmp_path: Path) -> None:
    # GSCore's overlapping frame ops moved 1.195 times what DRAM can: they now share it
    # (the frame-sized graph, docs/workloads.md, is bound by its blending units: 0.39).
    result = run_cli("analyze", "gscore", "--hardware", "gscore", "-o", str(tmp_path / "s"))
    assert result.returncode == 0, result.stderr
    assert not [line for line in result.stderr.splitlines() if line.startswith("warning:")]
    summary = pl.read_parquet(tmp_path / "s" / "summary" / "**" / "*.parquet")
    assert 0 < summary["dram_utilization"].item() <= 1


# --------------------------------------------------------------------------- D22, D29


@pytest.fixture(scope="module")
def gaussian_report(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, pl.DataFrame]:
    out = tmp_path_factory.mktemp("report") / "s"
    result = nerframe.analyze(["gaurast", "gbu_train"], ["gaurast", "a100"], output=out)
    return (result.store / "report.html").read_text(), result.summary


def test_d22_gaussian_workload_sentence(gaussian_report: tuple[str, pl.DataFrame]) -> None:
    page, _ = gaussian_report
    # gbu_train blends 167 Gaussians per pixel (the frame model's contributing Gaussians)
    # over a 1280x720 frame in one batch; 1,389 is the per-tile list, not a per-pixel figure
    assert (
        "Workload: 11 ops; pixels per batch 921,600, Gaussians per pixel 167, Gaussians in "
        "the scene 1,000,000, 921,600 pixels per training iteration, 1 batch per training "
        "iteration." in page
    )
    assert nerframe.pipelines().filter(pipeline="gbu")["samples"].item() == 167


def _specs(page: str) -> list[dict]:
    return json.loads(page.split('id="nerframe-charts">')[1].split("</script>")[0])["charts"]


def test_d29_report_tables_and_charts(gaussian_report: tuple[str, pl.DataFrame]) -> None:
    page, summary = gaussian_report
    validation = page.split('id="validation"')[1].split("</section>")[0]
    assert ">None<" not in validation and ">–<" in validation
    specs = _specs(page)
    matrix = specs[0]
    assert "vconcat" in matrix and "hconcat" not in matrix  # one heat map above the other
    assert "~s" not in json.dumps(matrix)  # fps 0.531, not "531m" (read as millions)
    for row in summary.filter(status="ok").iter_rows(named=True):
        frame = row["pre_cycles"] + row["makespan_cycles"] + row["post_cycles"]  # 1 batch
        assert row["frame_cycles"] == frame
        # the sentence beside the Gantt chart gives the frame its chart spans
        assert f"frame (cycles): {frame:,}" in page
        title = f"Schedule of {row['graph']} on {row['accelerator']}"
        gantt = next(
            s for s in specs if isinstance(s["title"], dict) and s["title"]["text"] == title
        )
        assert gantt["title"]["subtitle"] == f"{frame:,} cycles: the frame ops and the first batch"


def test_d29_axis_labels_are_per_value() -> None:
    from nerframe import charts

    g = nerframe.pipeline("gaurast")
    run = nerframe.schedule(g, "gaurast")
    breakdown = json.dumps(charts.breakdown_chart(run.schedule).to_dict())
    assert "format(datum.value, '~s')" in breakdown  # 0 is "0", not "0M"
    roof = json.dumps(charts.roofline_chart(nerframe.roofline(g, ["A100"])).to_dict())
    assert "format(datum.value, '~r')" in roof  # intensity 0.1, not "100m"


# --------------------------------------------------------------------------- D27


class _FakeDiGraph:
    """Pickles as networkx's DiGraph (the one class a DAG pickle may name)."""

    def __init__(self, state: dict) -> None:
        self.state = state

    def __getstate__(self) -> dict:
        return self.state


def _dag(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, nodes: dict, succ: dict) -> Path:
    module = types.ModuleType("networkx.classes.digraph")
    _FakeDiGraph.__module__, _FakeDiGraph.__qualname__ = module.__name__, "DiGraph"
    module.DiGraph = _FakeDiGraph  # type: ignore[attr-defined]
    monkeypatch.setitem(sys.modules, module.__name__, module)
    # pickle imports the module by its dotted name: without networkx installed (torch
    # brings it; the lowest-versions run has no torch) its parents must exist too
    for parent in ("networkx", "networkx.classes"):
        if parent not in sys.modules:
            monkeypatch.setitem(sys.modules, parent, types.ModuleType(parent))
    path = tmp_path / "dag.pkl"
    path.write_bytes(pickle.dumps(_FakeDiGraph({"_node": nodes, "_succ": succ}), protocol=4))
    return path


GOOD = {
    "op_type": "SAMPLING",
    "input_shape": [1024, 3],
    "output_shape": [1024, 64, 3],
    "flops": 10.0,
    "memory_bytes": 20.0,
    "arithmetic_intensity": 0.5,
}


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"flops": math.nan}, "flops must be a finite number >= 0, got nan"),
        ({"memory_bytes": -5}, "memory_bytes must be a finite number >= 0, got -5"),
        ({"arithmetic_intensity": math.inf}, "arithmetic_intensity must be a finite number"),
        ({"op_type": 12}, "op_type must be a non-empty printable string, got 12"),
        ({"input_shape": "hello"}, "input_shape must be a list of integers >= 0"),
        ({"flops": True}, "flops must be a finite number >= 0, got True"),
    ],
)
def test_d27_dag_node_attributes_are_checked(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, change: dict, message: str
) -> None:
    path = _dag(tmp_path, monkeypatch, {"a": {**GOOD, **change}}, {"a": {}})
    with pytest.raises(NerframeError, match="node 'a': " + message.replace("(", r"\(")):
        _read(path)


def _read(path: Path) -> object:
    from nerframe.trace.dag_pickle import read_dag_pickle

    return read_dag_pickle(path)


def test_d27_dag_cycles_and_escape_names_are_refused(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys
) -> None:
    path = _dag(tmp_path, monkeypatch, {"a": GOOD, "b": GOOD}, {"a": {"b": {}}, "b": {"a": {}}})
    with pytest.raises(NerframeError, match=r"the edges form a cycle \('a' -> 'b' -> 'a'\)"):
        _read(path)
    path = _dag(tmp_path, monkeypatch, {"\x1b[31mred": GOOD}, {"\x1b[31mred": {}})
    assert main(["trace", "dag", str(path)]) == 1
    err = capsys.readouterr().err
    assert "\x1b" not in err and err.count("\n") == 1
    assert "node must be a non-empty printable string, got '\\x1b[31mred'" in err


def test_d27_tables_and_lines_escape_control_characters(capsys) -> None:
    table = render(pl.DataFrame({"path": ["\x1b[31mred", "tab\there"]}))
    assert "\x1b" not in table and "\\x1b[31mred" in table and "tab\\there" in table
    from nerframe.cli import _warn

    _warn(["module \x1b[2Jcleared"])
    assert capsys.readouterr().err == "warning: module \\x1b[2Jcleared\n"


# --------------------------------------------------------------------------- D28


def test_d28_one_number_format_per_column(capsys) -> None:
    assert main(["pipelines"]) == 0
    lines = capsys.readouterr().out.splitlines()
    header = lines[0].split()
    rows = {line.split()[0]: line for line in lines[2:]}
    # total_flops of icarus and cicero in one format: separators, no exponent
    assert "825,444,532,224" in rows["icarus"] and "2,961,326,400" in rows["cicero"]
    assert "e+" not in "".join(lines)
    # rendered_fraction: 1.0000 beside 0.1200, not 1 beside 0.1200
    assert "1.0000" in rows["neurex"] and "0.1200" in rows["cicero"]
    assert "frame_flops" in header


def test_d28_costs_totals_intensity_and_sizes(capsys) -> None:
    assert main(["costs", "neurex"]) == 0
    total = next(line for line in capsys.readouterr().out.splitlines() if line.startswith("total"))
    # intensity of the totals: 2,957,770,752 FLOPs / 27,202,048 bytes
    assert total.split()[-1] == f"{2_957_770_752 / 27_202_048:.4f}" == "108.7334"
    from nerframe.sweeps.runner import size_text

    assert size_text(6.44e12) == "6.44 TB"  # the report's "6.44e+03 GB"


def test_d28_sensitivity_of_an_axis_without_effect_is_zero(tmp_path: Path) -> None:
    store = tmp_path / "s"
    # A module's power sets energy, never time (docs/model.md: a frame's time is its
    # cycles over the clock), so it is an axis without effect on fps. Bitwidth was
    # the report's example, but NeuRex rebuilt from its paper moves bytes per bit.
    grid = {
        "systolic_array_32x32.power_uw": [100_000, 190_000, 400_000],
        "bitwidth": [8, 16],
        "frequency_mhz": [300, 1100],
        "systolic_array_32x32.count": [1, 2, 8],
    }
    lazy = nerframe.sweep("neurex", "neurex", grid, workload={"rays": [1024, 4096]}, output=store)
    assert isinstance(lazy, pl.LazyFrame)
    rows = lazy.collect()
    swings = dict(nerframe.query("sensitivity", store).select("axis", "swing").rows())
    # scalar oracle: per power value, the same fps values, averaged (in any order)
    means = [
        statistics.fmean(rows.filter(pl.col("systolic_array_32x32.power_uw") == p)["fps"])
        for p in grid["systolic_array_32x32.power_uw"]
    ]
    assert max(means) - min(means) <= 1e-12 * statistics.fmean(means)
    assert swings["systolic_array_32x32.power_uw"] == 0.0
    assert swings["bitwidth"] > 1e-3 and swings["systolic_array_32x32.count"] > 1e-3


# --------------------------------------------------------------------------- D30


def test_d30_long_cells_are_cut_unless_wide(capsys) -> None:
    assert main(["validate"]) == 0
    narrow = capsys.readouterr().out.splitlines()
    assert main(["validate", "--wide"]) == 0
    wide = capsys.readouterr().out.splitlines()
    source = nerframe.validate()["source"]
    longest = max(len(s) for s in source.to_list())
    assert longest > 200  # the report's ~400-character sources
    # the source cut to 60 characters (and any other long column, such as parts)
    assert max(map(len, narrow)) <= max(map(len, wide)) - (longest - 60)
    assert any("…" in line for line in narrow) and not any("…" in line for line in wide)


# --------------------------------------------------------------------------- D31


def test_d31_a_gpu_peak_is_its_fastest_unit_and_a100_is_listed_once(tmp_path: Path) -> None:
    # A100: 108 SMs x 2048 tensor FLOP/cycle x 1410 MHz (data sheet 312 TFLOP/s); the
    # CUDA cores' 19.5 are not added: a GPU runs one kernel at a time
    expected = 108 * 2048 * 1410e6 / 1e12
    assert nerframe.accelerator("a100").peak_tflops == pytest.approx(expected)
    rows = nerframe.sweep("cicero", "a100", {"frequency_mhz": [1410]})
    assert rows["peak_tflops"].item() == pytest.approx(expected)
    table = nerframe.accelerators()
    assert table.filter(accelerator="gscore")["peak_tflops"].item() is None
    store = nerframe.analyze("cicero", ["cicero", "a100"], output=tmp_path / "s", report=False)
    systems = set(nerframe.query("roofline", store.store)["system"])
    assert systems == {"A100", "H100", "cicero"}  # not A100 and a100 for one chip


def test_d31_hardware_shows_no_peak_of_zero(capsys) -> None:
    assert main(["hardware", "gscore"]) == 0
    assert "peak – (no FLOP unit)" in capsys.readouterr().out


# --------------------------------------------------------------------------- D32


def test_d32_speedup_is_of_accelerators_over_gpus(tmp_path: Path) -> None:
    store = nerframe.analyze(
        "cicero", ["cicero", "a100", "h100"], output=tmp_path / "s", report=False
    ).store
    pairs = nerframe.query("speedup", store).select("accelerator", "gpu").rows()
    assert pairs == [("cicero", "a100"), ("cicero", "h100")]


# --------------------------------------------------------------------------- D34


def test_d34_flags_must_be_booleans(tmp_path: Path) -> None:
    with pytest.raises(InvalidInputError, match="pipelined must be True or False, got 'no'"):
        nerframe.schedule("neurex", "neurex", pipelined="no")  # type: ignore[arg-type]
    with pytest.raises(InvalidInputError, match="fine must be True or False, got 1"):
        nerframe.analyze("neurex", "neurex", output=tmp_path / "s", fine=1)  # type: ignore[arg-type]
    assert not (tmp_path / "s").exists()


def test_d34_validate_signature_and_in_memory_sweep_guard() -> None:
    assert inspect.signature(nerframe.validate).parameters["hardware"].default is None
    values = list(range(1, 5001))
    grid = {"frequency_mhz": values, "systolic_array_32x32.count": values}  # 25 M rows
    with pytest.raises(NerframeError, match="25,000,000 configurations are more rows than"):
        nerframe.sweep("neurex", "neurex", grid)

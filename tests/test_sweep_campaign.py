"""Sweeps at campaign scale: specs, workload axes, constraints, Pareto fronts, queries."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import numpy as np
import polars as pl
import pytest

import nerframe
from nerframe.builtin_pipelines import workload_graph
from nerframe.kernels.sweep import pareto_mask, within
from nerframe.sweeps.spec import sweep_spec

GRID = {"frequency_mhz": [500, 1000], "systolic_array_32x32.count": [1, 2, 4]}
SPEC = {
    "graphs": ["neurex"],
    "hardware": "neurex",
    "workload": {"rays": [1024, 4096]},
    "grid": GRID,
    "constraints": {"area_mm2": 4.0, "avg_power_w": {"max": 1.0}},
}


def _key(frame: pl.DataFrame) -> list[tuple]:
    return sorted(frame.rows())


def test_spec_file_and_dict_give_the_same_rows(tmp_path: Path) -> None:
    path = tmp_path / "spec.yaml"
    path.write_text(
        "graphs: [neurex]\nhardware: neurex\nworkload: {rays: [1024, 4096]}\n"
        "grid:\n  frequency_mhz: {start: 500, stop: 1000, step: 500}\n"
        "  systolic_array_32x32.count: [1, 2, 4]\n"
        "constraints: {area_mm2: 4.0, avg_power_w: {max: 1.0}}\n"
    )
    assert nerframe.sweep(path).equals(nerframe.sweep(SPEC))
    as_json = tmp_path / "spec.json"
    as_json.write_text(json.dumps(SPEC))
    assert nerframe.sweep(as_json).equals(nerframe.sweep(SPEC))


def test_workload_axes_equal_separately_built_graphs() -> None:
    result = nerframe.sweep(
        {**SPEC, "workload": {"rays": [1024, 4096], "MLP.layer_width": [64, 128]}}
    )
    assert result.height == 2 * 2 * 6
    assert result.columns[:5] == ["graph", "accelerator", "rays", "MLP.layer_width", "config"]
    for (rays, width), rows in result.group_by("rays", "MLP.layer_width", maintain_order=True):
        base = nerframe.pipeline("neurex", rays=rays)
        ops = base.ops.with_columns(
            layer_width=pl.when(pl.col("op_type") == "MLP")
            .then(width)
            .otherwise(pl.col("layer_width"))
        )
        by_hand = nerframe.graph("neurex", ops.drop("graph", "category"), base.edges)
        alone = nerframe.sweep(by_hand, "neurex", GRID)
        assert rows.drop("rays", "MLP.layer_width", "feasible").equals(alone.drop("feasible"))
    # Wider MLP layers cost more FLOPs, so no configuration gets faster.
    narrow = result.filter(pl.col("MLP.layer_width") == 64)["fps"]
    wide = result.filter(pl.col("MLP.layer_width") == 128)["fps"]
    assert (wide <= narrow).all()


def test_bitwidth_axis_sets_every_op() -> None:
    g = workload_graph("neurex", {"bitwidth": 8})
    assert set(g.ops["bitwidth"].to_list()) == {8}
    full = nerframe.costs(nerframe.pipeline("neurex").ops)["bytes_total"].sum()
    assert nerframe.costs(g.ops)["bytes_total"].sum() < full


def test_workload_model_of_built_in_pipelines() -> None:
    spec = workload_graph("gscore", {"gaussians": 10**6}, model="spec")
    assert spec.ops.equals(nerframe.pipeline("gscore", gaussians=10**6, model="spec").ops)
    realistic = workload_graph("gscore", {"gaussians": 10**6})
    assert realistic.ops.equals(nerframe.pipeline("gscore", gaussians=10**6).ops)
    assert not realistic.ops.equals(spec.ops)


def test_workload_axes_of_a_graph_file(graph_file: Path) -> None:
    g = workload_graph(str(graph_file), {"rays": 128, "samples": 4})
    assert g.ops.select("B", "N").row(0) == (128, 4)


def test_constraints_match_the_figures() -> None:
    result = nerframe.sweep(SPEC)
    by_hand = (result["area_mm2"] <= 4.0) & (result["avg_power_w"] <= 1.0)
    assert result["feasible"].to_list() == by_hand.to_list()
    assert 0 < result["feasible"].sum() < result.height


def test_kernels_against_brute_force() -> None:
    rng = np.random.default_rng(7)
    values = rng.integers(0, 6, size=(300, 3)).astype(np.float64)
    values[5, 1] = np.nan
    maximize = np.array([True, False, False])
    cost = np.where(maximize, -values, values)
    expected = [
        not np.isnan(cost[i]).any()
        and not any(
            (cost[j] <= cost[i]).all() and (cost[j] < cost[i]).any()
            for j in range(len(cost))
            if not np.isnan(cost[j]).any()
        )
        for i in range(len(cost))
    ]
    assert pareto_mask(values, maximize).tolist() == expected
    low, high = np.array([1.0, -np.inf, 2.0]), np.array([4.0, 3.0, np.inf])
    inside = [
        bool(np.all((row >= low) & (row <= high))) and not np.isnan(row).any() for row in values
    ]
    assert within(values, low, high).tolist() == inside


def test_pareto_front_folded_over_chunks_equals_brute_force() -> None:
    spec = {**SPEC, "constraints": {}, "chunk_size": 5}
    rows = nerframe.sweep(spec)
    objectives = {"fps": "max", "energy_per_frame_j": "min", "area_mm2": "min"}
    front = nerframe.pareto([rows[i : i + 5] for i in range(0, rows.height, 5)], objectives)
    points = rows.select(*objectives).rows()

    def dominated(p: tuple) -> bool:
        return any(q[0] >= p[0] and q[1] <= p[1] and q[2] <= p[2] and q != p for q in points)

    expected = [
        r for r in rows.iter_rows(named=True) if not dominated(tuple(r[k] for k in objectives))
    ]
    assert _key(front.select("rays", "config")) == sorted(
        (r["rays"], r["config"]) for r in expected
    )
    assert 1 < front.height < rows.height
    assert front["fps"].to_list() == sorted(front["fps"].to_list(), reverse=True)


def test_named_queries_over_a_sweep_store(tmp_path: Path) -> None:
    store = tmp_path / "sweep"
    spec = {**SPEC, "grid": {**GRID, "interpolation_compute_unit.latency_cycles": [0, 40]}}
    rows = nerframe.sweep(spec, output=store).collect()
    front = nerframe.query("pareto", store)
    expected = nerframe.pareto([rows], {"fps": "max", "energy_per_frame_j": "min"})
    assert _key(front.select("rays", "config")) == _key(expected.select("rays", "config"))

    best = nerframe.query("best_under_budget", store)
    feasible = rows.filter("feasible")
    assert best["fps"].to_list() == [feasible["fps"].max()]

    sensitivity = nerframe.query("sensitivity", store)
    axes = ["rays", *GRID, "interpolation_compute_unit.latency_cycles"]
    assert sorted(sensitivity["axis"].to_list()) == sorted(axes)
    means = rows.group_by("frequency_mhz").agg(pl.col("fps").mean())["fps"]
    swing = (means.max() - means.min()) / means.mean()
    got = sensitivity.filter(axis="frequency_mhz")
    assert got["swing"].item() == pytest.approx(swing, rel=1e-12)
    assert got["fastest_value"].item() == 1000.0


def test_pareto_query_with_ties_and_flat_graphs_equals_brute_force() -> None:
    """The `pareto` query sorts only rows that no faster band of fps beats on energy:
    the front is still exactly the rows nothing dominates, equal rows both kept, for
    graphs of many fps ties, fps a hair apart (in one band), one fps, and rows
    without figures or infeasible. Two equal rows that a slightly faster row matches
    on energy are both off the front (the query kept the second until 0.1.0)."""
    import duckdb

    from nerframe.sql import named_queries

    rng = np.random.default_rng(11)
    n = 4000
    graph = rng.choice(["a", "b", "near", "flat"], n)
    fps = rng.integers(1, 60, n) * 0.25
    fps = np.where(graph == "near", 1 + rng.integers(0, 3, n) * 1e-9 + (fps > 14) * 50, fps)
    fps = np.where(graph == "flat", 30.0, fps)
    rows = pl.DataFrame(
        {
            "graph": [*graph, "tie", "tie", "tie", "tie"],
            "config": np.arange(n + 4),
            "fps": pl.Series(
                np.append(np.where(rng.random(n) < 0.02, np.nan, fps), [1.0001, 1, 1, 100]),
                nan_to_null=True,
            ),
            "energy_per_frame_j": np.append(rng.integers(1, 40, n) * 0.125, [1.0, 1, 1, 5]),
            "feasible": np.append(rng.random(n) < 0.9, [True] * 4),
        }
    )
    con = duckdb.connect()
    con.register("sweep", rows)
    front = con.sql(named_queries()["pareto"]).pl()
    expected = []
    for (name,), part in rows.filter("feasible").drop_nulls().group_by("graph"):
        f, e = part["fps"].to_numpy(), part["energy_per_frame_j"].to_numpy()
        beaten = [
            ((f >= a) & (e <= b) & ((f > a) | (e < b))).any() for a, b in zip(f, e, strict=True)
        ]
        expected += [(name, c) for c, lost in zip(part["config"], beaten, strict=True) if not lost]
    assert _key(front.select("graph", "config")) == sorted(expected)
    assert front.filter(graph="flat").height > 1  # equal best rows are all on the front
    assert front.filter(graph="tie")["config"].to_list() == [n + 3, n]
    for part in front.partition_by("graph"):
        assert part["fps"].to_list() == sorted(part["fps"].to_list(), reverse=True)


def test_sweep_charts_draw(tmp_path: Path) -> None:
    from nerframe.charts import save_chart

    store = tmp_path / "sweep"
    nerframe.sweep(SPEC, output=store)
    front = nerframe.query("pareto", store)
    chart = nerframe.pareto_chart(front, {"fps": "max", "energy_per_frame_j": "min"})
    assert save_chart(chart, tmp_path / "pareto.svg").read_text().startswith("<svg")
    chart = nerframe.sensitivity_chart(nerframe.query("sensitivity", store))
    assert save_chart(chart, tmp_path / "sensitivity.svg").read_text().startswith("<svg")


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"graphs": ["neurex", "neurex"]}, "two graphs are named 'neurex'"),
        ({"grids": {}}, r"unknown field 'grids' \(did you mean 'grid'"),
        ({"workload": {"rayz": [1]}}, r"unknown workload axis 'rayz' \(did you mean 'rays'"),
        ({"workload": {"rays": [0]}}, "integers >= 1"),
        ({"workload": {"MLP.width": [8]}}, "MLP has no parameter 'width'"),
        ({"workload": {"Sorting.tile": [8]}}, "graph 'neurex' has no Sorting op"),
        ({"constraints": {"areaa": 1}}, r"unknown constraint 'areaa' \(did you mean 'area'"),
        ({"constraints": {"fps": {"min": 5, "max": 1}}}, "min must not exceed max"),
        ({"objectives": {"fps": "up"}}, '\'objectives.fps\': expected one of "max", "min"'),
        (
            {"grid": {"frequency_mhz": {"start": 1, "stop": 5}}},
            "missing field 'grid.frequency_mhz.step'",
        ),
        ({"chunk_size": 0}, "'chunk_size': expected int >= 1, got 0"),
        ({"model": "real"}, '\'model\': expected one of "realistic", "spec"'),
        ({"hardware": None}, "'hardware': expected str, got null"),
    ],
)
def test_bad_specs(change: dict, message: str) -> None:
    with pytest.raises(nerframe.NerframeError, match=message):
        sweep_spec({**SPEC, **change})


def test_grid_is_expanded_lazily_in_row_order() -> None:
    spec = sweep_spec({**SPEC, "chunk_size": 4})
    from nerframe.sweeps.evaluate import chunks, tasks

    assert [t.stop - t.start for t in tasks(spec)] == [4, 2, 4, 2]
    frames = list(chunks(spec))
    expected = list(itertools.product([1024, 4096], range(6)))
    assert [r for f in frames for r in f.select("rays", "config").rows()] == expected


@pytest.mark.parametrize("n", [1, 5, 40, 0])
@pytest.mark.parametrize("direction", ["max", "min"])
def test_best_folded_over_chunks_equals_one_sort(n: int, direction: str) -> None:
    from nerframe.sweeps.results import best

    rng = np.random.default_rng(1)
    rows = pl.DataFrame(
        {
            "graph": ["g"] * 1000,
            "accelerator": ["a"] * 1000,
            "config": np.arange(1000),
            "fps": rng.integers(0, 50, 1000).astype(float),  # many ties
            "feasible": rng.random(1000) > 0.3,
        }
    ).with_columns(fps=pl.when(pl.col("config") % 7 == 0).then(None).otherwise(pl.col("fps")))
    got = best([rows[i : i + 97] for i in range(0, 1000, 97)], n, "fps", direction)
    expected = rows.filter("feasible").sort(
        "fps", "config", descending=[direction == "max", False], nulls_last=True
    )
    assert got.equals(expected.head(n) if n else expected)

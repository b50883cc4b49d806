"""Charts: valid Vega-Lite with the expected marks and encodings, bounded data, export."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from typing import Any

import altair as alt
import numpy as np
import polars as pl
import pytest
import store_fixture
from store_fixture import write_store

import nerframe
from nerframe import charts, schemas
from nerframe.errors import NerframeError
from nerframe.store import tables

Spec = dict[str, Any]


@pytest.fixture(scope="module")
def frames(tmp_path_factory: pytest.TempPathFactory) -> dict[str, pl.DataFrame]:
    store = write_store(tmp_path_factory.mktemp("store"))
    return {name: pl.read_parquet(files) for name, files in tables(store).items()}


def _units(spec: Spec) -> Iterator[Spec]:
    """Every unit (single-mark) spec inside a layered, concatenated or faceted spec."""
    if "mark" in spec:
        yield spec
    for key in ("layer", "hconcat", "vconcat", "concat"):
        for child in spec.get(key, []):
            yield from _units(child)
    if isinstance(spec.get("spec"), dict):
        yield from _units(spec["spec"])


def _mark(unit: Spec) -> str:
    mark = unit["mark"]
    return mark if isinstance(mark, str) else mark["type"]


def _unit(spec: Spec, mark: str, **encoding_fields: str) -> Spec:
    """The one unit with `mark` whose encodings use the given fields."""
    found = [
        u
        for u in _units(spec)
        if _mark(u) == mark
        and all(u["encoding"].get(ch, {}).get("field") == f for ch, f in encoding_fields.items())
    ]
    assert len(found) == 1, (mark, encoding_fields, [_mark(u) for u in _units(spec)])
    return found[0]


def _data(spec: Spec, unit: Spec) -> list[dict[str, Any]]:
    name = (unit.get("data") or spec["data"])["name"]
    return spec["datasets"][name]


def _check(chart: charts.Chart) -> Spec:
    spec = chart.to_dict()  # validates against the Vega-Lite schema
    assert spec["$schema"].endswith(f"v{alt.SCHEMA_VERSION.lstrip('v')}.json")
    for rows in spec.get("datasets", {}).values():
        assert len(rows) <= charts.MAX_ROWS
    return spec


# --------------------------------------------------------------------------- roofline


def test_roofline_chart_marks_and_encodings(frames: dict[str, pl.DataFrame]) -> None:
    table = frames["roofline"].filter(pl.col("graph") == "hashnerf_train")
    spec = _check(charts.roofline_chart(table))
    points = _unit(spec, "point", color="category")
    enc = points["encoding"]
    assert enc["x"]["field"] == "intensity" and enc["x"]["scale"]["type"] == "log"
    assert enc["y"]["field"] == "attainable" and enc["y"]["scale"]["type"] == "log"
    # pipelines apart by shape, directions by fill (a backward op is an outline)
    assert enc["shape"]["field"] == "graph" and enc["shape"]["title"] == "pipeline"
    assert enc["fillOpacity"]["field"] == "direction"
    assert enc["fillOpacity"]["scale"] == {"domain": ["forward", "backward"], "range": [0.85, 0.0]}
    assert enc["stroke"]["field"] == "category"
    assert {t["title"] for t in enc["tooltip"]} >= {"op", "system", "bound", "intensity (FLOP/B)"}
    rows = _data(spec, points)
    # One point per (op, system): the presets and both accelerators.
    systems = table["system"].unique().to_list()
    assert sorted(systems) == ["A100", "H100", "edge_npu", "server_npu"]
    assert len(rows) == 7 * len(systems)
    assert {r["direction"] for r in rows} == {"forward", "backward"}
    assert any(r["op"] == "MLP #5 (B)" for r in rows)
    roof = _unit(spec, "line", color="system")
    lines = _data(spec, roof)
    assert {r["system"] for r in lines} == set(systems)
    ridges = _data(spec, _unit(spec, "text"))
    a100 = next(r for r in ridges if r["system"] == "A100")
    # 311.86944 TFLOP/s over 1935 GB/s (the a100 GPU file's tensor cores)
    assert a100["label"] == "A100 ridge 161 FLOP/B"
    assert a100["y"] == pytest.approx(311.86944e12)
    assert spec["resolve"]["scale"]["color"] == "independent"


def _big_roofline(n: int) -> pl.DataFrame:
    rng = np.random.default_rng(1)
    flops = rng.uniform(1e6, 1e10, n)
    nbytes = rng.uniform(1e5, 1e9, n)
    return pl.DataFrame(
        {
            "graph": ["big"] * n,
            "op_id": np.arange(n, dtype=np.int32),
            "op_type": rng.choice(["MLP", "HashEncoding", "Sorting"], n),
            "category": ["COMPUTATION"] * n,
            "backward": rng.random(n) < 0.3,
            "system": ["A100"] * n,
            "peak_tflops": [314.0] * n,
            "bandwidth_gbps": [1935.0] * n,
            "flops": flops,
            "bytes_total": nbytes,
            "intensity": flops / nbytes,
            "t_compute_s": flops / 314e12,
            "t_memory_s": nbytes / 1935e9,
            "time_s": np.maximum(flops / 314e12, nbytes / 1935e9),
            "attainable_flops_per_s": np.minimum(314e12, flops / nbytes * 1935e9),
            "bound": np.where(flops / 314e12 >= nbytes / 1935e9, "compute", "memory"),
            "ridge": [314e12 / 1935e9] * n,
        }
    ).cast(dict(schemas.ROOFLINE))


def test_roofline_chart_merges_ops_beyond_max_rows() -> None:
    table = _big_roofline(20_000)
    spec = _check(charts.roofline_chart(table))
    rows = _data(spec, _unit(spec, "point", color="category"))
    assert len(rows) <= charts.MAX_ROWS
    assert sum(r["ops"] for r in rows) == 20_000
    assert sum(r["flops"] for r in rows) == pytest.approx(table["flops"].sum())


def test_roofline_chart_counts_ops_it_cannot_place(frames: dict[str, pl.DataFrame]) -> None:
    table = frames["roofline"].filter(pl.col("graph") == "gsplat")
    table = table.with_columns(
        bytes_total=pl.when(pl.col("op_id") == 0).then(0.0).otherwise(pl.col("bytes_total"))
    )
    spec = _check(charts.roofline_chart(table))
    assert "with zero FLOPs or bytes not shown" in spec["title"]["subtitle"]


def test_roofline_chart_rejects_bad_tables() -> None:
    with pytest.raises(NerframeError, match="empty"):
        charts.roofline_chart(schemas.empty("roofline"))
    with pytest.raises(NerframeError, match="ridge"):
        charts.roofline_chart(schemas.empty("roofline").drop("ridge"))


# --------------------------------------------------------------------------- Gantt


def test_gantt_chart_lanes(frames: dict[str, pl.DataFrame]) -> None:
    schedule = frames["schedule"].filter(graph="hashnerf_train", accelerator="server_npu")
    spec = _check(charts.gantt_chart(schedule))
    bars = _unit(spec, "rect", color="category")
    enc = bars["encoding"]
    assert (enc["x"]["field"], enc["x2"]["field"]) == ("start_cycle", "end_cycle")
    assert (enc["y"]["field"], enc["y2"]["field"]) == ("lane_lo", "lane_hi")
    rows = _data(spec, bars)
    assert len(rows) == schedule.height
    # Lanes: sampler 2, encoder 4, mlp_array 8, blender 2 (in order of first use).
    axis = enc["y"]["axis"]
    assert axis["values"] == [i + 0.5 for i in range(16)]
    assert axis["labelExpr"].startswith('["sampler #0", "sampler #1", "encoder #0"')
    spans = {r["op"]: (r["lane_lo"], r["lane_hi"]) for r in rows}
    # The store is scheduled with split parallelism: an op takes every instance.
    assert spans["MLP #2"] == spans["MLP #3"] == spans["MLP #5 (B)"] == (6, 14)
    assert spans["HashEncoding #6 (B)"] == (2, 6)
    separators = _data(spec, _unit(spec, "rule"))
    assert sorted(r["lane"] for r in separators) == [2.0, 6.0, 14.0]


def test_gantt_chart_lanes_of_single_instance_ops(frames: dict[str, pl.DataFrame]) -> None:
    # The same pair with instance parallelism: each op takes the instance of its module
    # that is free earliest (lowest index on ties), and only used instances get a lane.
    path = frames["accelerators"].filter(accelerator="server_npu")["path"].item()
    result = nerframe.schedule(
        store_fixture.graph("hashnerf_train"), nerframe.accelerator(path), parallelism="instance"
    )
    spec = _check(charts.gantt_chart(result.schedule))
    bars = _unit(spec, "rect", color="category")
    axis = bars["encoding"]["y"]["axis"]
    # sampler 1, encoder 2, mlp_array 3, blender 1 (in order of first use)
    assert axis["values"] == [i + 0.5 for i in range(7)]
    assert axis["labelExpr"].startswith('["sampler", "encoder #0", "encoder #1", "mlp_array #0"')
    rows = _data(spec, bars)
    assert len(rows) == result.schedule.height
    spans = {r["op"]: (r["lane_lo"], r["lane_hi"]) for r in rows}
    assert all(hi - lo == 1 for lo, hi in spans.values())  # one instance each
    assert (spans["MLP #2"], spans["MLP #3"], spans["MLP #5 (B)"]) == ((3, 4), (4, 5), (5, 6))
    assert (spans["HashEncoding #1"], spans["HashEncoding #6 (B)"]) == ((1, 2), (2, 3))
    separators = _data(spec, _unit(spec, "rule"))
    assert sorted(r["lane"] for r in separators) == [1.0, 3.0, 6.0]


def test_gantt_chart_merges_ops_beyond_max_rows() -> None:
    n = 12_000
    rng = np.random.default_rng(3)
    start = np.sort(rng.integers(0, 10_000_000, n))
    duration = rng.integers(1, 5_000, n)
    schedule = pl.DataFrame(
        {
            "graph": ["big"] * n,
            "op_id": np.arange(n, dtype=np.int32),
            "op_type": ["MLP"] * n,
            "category": rng.choice(["COMPUTATION", "BLENDING"], n),
            "backward": [False] * n,
            "scope": ["batch"] * n,
            "accelerator": ["npu"] * n,
            "module": rng.choice(["a", "b", "c"], n),
            "instances": [1] * n,
            "first_instance": rng.integers(0, 4, n),
            "start_cycle": start,
            "end_cycle": start + duration,
            "duration_cycles": duration,
            "compute_cycles": duration,
            "memory_cycles": duration,
            "bound": ["compute"] * n,
            "flops": [1.0] * n,
            "bytes_total": [1.0] * n,
            "energy_j": [1.0] * n,
            "array_utilization": [None] * n,
        }
    ).cast(dict(schemas.SCHEDULE))
    spec = _check(charts.gantt_chart(schedule))
    rows = _data(spec, _unit(spec, "rect", color="category"))
    assert sum(r["ops"] for r in rows) == n
    assert sum(r["duration_cycles"] for r in rows) == int(duration.sum())


def test_gantt_chart_shows_module_names_whole_and_shortens_absurd_ones() -> None:
    long = "row_processing_element_with_a_very_long_name_indeed"  # 51 characters
    schedule = pl.DataFrame(
        {
            "graph": ["g"] * 3,
            "op_id": [0, 1, 2],
            "op_type": ["MLP"] * 3,
            "category": ["COMPUTATION"] * 3,
            "backward": [False] * 3,
            "scope": ["batch"] * 3,
            "accelerator": ["npu"] * 3,
            "module": [long, long, "b"],
            "instances": [3, 1, 1],
            "first_instance": [0, 2, 0],
            "start_cycle": [0, 10, 0],
            "end_cycle": [10, 20, 5],
            "duration_cycles": [10, 10, 5],
            "compute_cycles": [10, 10, 5],
            "memory_cycles": [10, 10, 5],
            "bound": ["compute"] * 3,
            "flops": [1.0] * 3,
            "bytes_total": [1.0] * 3,
            "energy_j": [1.0] * 3,
            "array_utilization": [None] * 3,
        }
    ).cast(dict(schemas.SCHEDULE))
    spec = _check(charts.gantt_chart(schedule))
    bars = _unit(spec, "rect", color="category")
    axis = bars["encoding"]["y"]["axis"]
    # 48 characters at most: the name is cut to 44 + "…", the instance number kept.
    cut = long[:44] + "\\u2026"
    # Lanes in order of first use, then by name: b, then the three long ones.
    assert axis["labelExpr"] == f'["b", "{cut} #0", "{cut} #1", "{cut} #2"][floor(datum.value)]'
    assert axis["labelLimit"] == 7 * 48  # room for the longest label: none is cut again
    # The tooltip names the bar's lanes in full.
    assert {t["field"] for t in bars["encoding"]["tooltip"]} >= {"op", "lanes"}
    lanes = {r["op"]: r["lanes"] for r in _data(spec, bars)}
    assert lanes == {"MLP #0": f"{long} #0 to {long} #2", "MLP #1": f"{long} #2", "MLP #2": "b"}
    assert spec["height"] == 120  # four 18-pixel lanes, at least 120 pixels


def test_gantt_chart_labels_every_built_in_module_whole() -> None:
    import json
    from pathlib import Path

    import nerframe

    names = set()
    for path in (Path(nerframe.__file__).parent / "accelerators").glob("*.json"):
        names |= {m["name"] for m in json.loads(path.read_text())["modules"]}
    run = nerframe.schedule("instant3d", "instant3d")
    axis = _unit(_check(charts.gantt_chart(run.schedule)), "rect", color="category")
    labels = json.loads(axis["encoding"]["y"]["axis"]["labelExpr"].split("[floor")[0])
    assert "feed_forward_read_mapper #1" in labels and not any("\u2026" in x for x in labels)
    assert axis["encoding"]["y"]["axis"]["labelLimit"] >= 7 * max(map(len, labels))
    assert max(map(len, names)) + len(" #63") <= 48


def test_gantt_chart_draws_one_pair(frames: dict[str, pl.DataFrame]) -> None:
    with pytest.raises(NerframeError, match="one accelerator; got 2"):
        charts.gantt_chart(frames["schedule"].filter(graph="hashnerf_train"))
    with pytest.raises(NerframeError, match="empty schedule"):
        charts.gantt_chart(schemas.empty("schedule"))


# --------------------------------------------------------------------------- breakdown


def test_breakdown_of_a_schedule(frames: dict[str, pl.DataFrame]) -> None:
    schedule = frames["schedule"].filter(graph="hashnerf_train", accelerator="edge_npu")
    spec = _check(charts.breakdown_chart(schedule))
    assert spec["facet"]["column"]["field"] == "metric"
    assert spec["facet"]["column"]["sort"] == ["FLOPs", "bytes", "busy cycles"]
    assert spec["resolve"]["scale"]["x"] == "independent"
    bars = _unit(spec, "bar")
    assert bars["encoding"]["y"]["field"] == "category"
    assert bars["encoding"]["opacity"]["field"] == "direction"
    rows = spec["datasets"][spec["data"]["name"]]
    totals: dict[str, float] = {}
    for r in rows:
        totals[r["metric"]] = totals.get(r["metric"], 0.0) + r["value"]
    assert totals["FLOPs"] == pytest.approx(schedule["flops"].sum())
    assert totals["bytes"] == pytest.approx(schedule["bytes_total"].sum())
    assert totals["busy cycles"] == schedule["duration_cycles"].sum()
    backward_mlp = next(
        r
        for r in rows
        if (r["metric"], r["category"], r["direction"]) == ("FLOPs", "COMPUTATION", "backward")
    )
    expected = schedule.filter(category="COMPUTATION", backward=True)["flops"].sum()
    assert backward_mlp["value"] == pytest.approx(expected)


def test_breakdown_of_costs_has_no_time(frames: dict[str, pl.DataFrame]) -> None:
    spec = _check(charts.breakdown_chart(frames["costs"]))
    assert spec["facet"]["column"]["sort"] == ["FLOPs", "bytes"]


# --------------------------------------------------------------------------- graph


def test_graph_chart_layers_and_edges(frames: dict[str, pl.DataFrame]) -> None:
    ops = frames["ops"].filter(graph="hashnerf_train")
    spec = _check(charts.graph_chart(ops, frames["edges"]))
    nodes = _data(spec, _unit(spec, "circle"))
    layers = {r["op_id"]: r["layer"] for r in nodes}
    # 0→1→2→3→4 with a skip 0→4, then 4→5→6; the feedback edge 6→1 does not count.
    assert layers == {0: 0, 1: 1, 2: 2, 3: 3, 4: 4, 5: 5, 6: 6}
    texts = [u for u in _units(spec) if _mark(u) == "text"]
    labels = _data(spec, texts[0])
    assert {r["label"] for r in labels} >= {"MLP", "MLP (B)", "HashEncoding (B)"}
    # D29: labels of neighbouring layers alternate above and below the nodes
    assert [(u["mark"]["dy"], u["transform"]) for u in texts] == [
        (-16, [{"filter": "datum.layer % 2 == 0"}]),
        (18, [{"filter": "datum.layer % 2 == 1"}]),
    ]
    edges = _unit(spec, "line")
    dash = edges["encoding"]["strokeDash"]
    assert dash["field"] == "kind"
    assert dash["scale"]["domain"] == ["data", "feedback"]
    solid, dashed = dash["scale"]["range"]
    assert solid == [1, 0] and dashed != solid
    paths = _data(spec, edges)
    assert len(paths) == 3 * 8  # three points per edge
    assert {r["kind"] for r in paths} == {"data", "feedback"}


def test_graph_chart_branches(frames: dict[str, pl.DataFrame]) -> None:
    spec = _check(charts.graph_chart(frames["ops"].filter(graph="gsplat"), frames["edges"]))
    nodes = {r["op_id"]: r for r in _data(spec, _unit(spec, "circle"))}
    assert [nodes[i]["layer"] for i in range(5)] == [0, 1, 1, 1, 2]
    assert sorted(nodes[i]["y"] for i in (1, 2, 3)) == [-1.0, 0.0, 1.0]


def test_graph_chart_rejects_cycles_and_several_graphs(frames: dict[str, pl.DataFrame]) -> None:
    ops = frames["ops"].filter(graph="gsplat")
    cyclic = pl.DataFrame(
        {"graph": ["gsplat"] * 2, "src": [1, 4], "dst": [4, 1], "kind": ["data"] * 2},
        schema=schemas.EDGES,
    )
    with pytest.raises(NerframeError, match="cycle"):
        charts.graph_chart(ops, cyclic)
    with pytest.raises(NerframeError, match="one graph; got 2"):
        charts.graph_chart(frames["ops"], frames["edges"])
    dangling = cyclic.with_columns(dst=pl.lit(99, pl.Int32))
    with pytest.raises(NerframeError, match="unknown ops: 1->99"):
        charts.graph_chart(ops, dangling)


# --------------------------------------------------------------------------- matrix


def test_matrix_chart_shows_unmapped_pairs(frames: dict[str, pl.DataFrame]) -> None:
    summary = frames["summary"]
    spec = _check(charts.matrix_chart(summary))
    assert len(spec["vconcat"]) == 2  # one above the other: side by side they overflow
    fps = _unit(spec, "rect", color="fps")
    assert fps["encoding"]["color"]["scale"]["type"] == "log"
    energy = _unit(spec, "text", text="energy_per_frame_j")
    assert energy["encoding"]["x"]["field"] == "accelerator"
    assert energy["encoding"]["y"]["field"] == "graph"
    unmapped = [
        u for u in _units(spec) if _mark(u) == "text" and u["mark"].get("text") == "unmapped"
    ]
    assert len(unmapped) == 2
    rows = _data(spec, fps)
    assert len(rows) == summary.height
    assert {(r["graph"], r["accelerator"]) for r in rows if r["status"] == "unmapped"} == {
        ("gsplat", "edge_npu")
    }


# --------------------------------------------------------------------------- specs from templates


def _inlined(spec: Spec) -> Spec:
    """`spec` with each named dataset written where it is used: specs that name their
    datasets differently compare equal when they draw the same rows."""
    datasets = spec.get("datasets", {})

    def put(node: Any) -> Any:
        if isinstance(node, dict):
            if set(node) == {"name"} and node["name"] in datasets:
                return {"values": datasets[node["name"]]}
            return {k: put(v) for k, v in node.items() if k != "datasets"}
        if isinstance(node, list):
            return [put(v) for v in node]
        return node

    return put(spec)


def _keyed(table: pl.DataFrame, *by: str) -> pl.DataFrame:
    return table.with_columns(pl.concat_str(*by, separator="|").alias(charts.CHART))


def test_spec_functions_give_the_charts_specs(frames: dict[str, pl.DataFrame]) -> None:
    # The report's specs come from one template per kind with the data put in; each
    # must equal what altair gives for the same chart (which `_check` validates).
    schedule = _keyed(frames["schedule"], "graph", "accelerator")
    pairs = schedule.select("graph", "accelerator").unique().rows()
    assert len(pairs) == 3
    for make, chart in (
        (charts.gantt_specs, charts.gantt_chart),
        (charts.breakdown_specs, charts.breakdown_chart),
    ):
        specs = make(schedule)
        assert sorted(specs) == sorted(f"{g}|{a}" for g, a in pairs)
        for g, a in pairs:
            expected = _check(chart(frames["schedule"].filter(graph=g, accelerator=a)))
            assert _inlined(specs[f"{g}|{a}"]) == _inlined(expected)
    costs = frames["costs"].with_columns(pl.lit("all").alias(charts.CHART))
    (spec,) = charts.breakdown_specs(costs).values()
    assert _inlined(spec) == _inlined(_check(charts.breakdown_chart(frames["costs"])))
    for graph in ("gsplat", "hashnerf_train"):
        ops = frames["ops"].filter(graph=graph)
        expected = _check(charts.graph_chart(ops, frames["edges"]))
        assert _inlined(charts.graph_spec(ops, frames["edges"])) == _inlined(expected)
    expected = _check(charts.matrix_chart(frames["summary"]))
    assert _inlined(charts.matrix_spec(frames["summary"])) == _inlined(expected)


def test_roofline_specs_merge_only_the_charts_that_need_it(
    frames: dict[str, pl.DataFrame],
) -> None:
    # One chart of 20,000 ops must be merged, the others not; one chart's only op has
    # no bytes (no point, and a subtitle counting its row on each of the 4 systems).
    small = frames["roofline"].filter(graph="gsplat")
    hidden = small.filter(op_id=0).with_columns(bytes_total=pl.lit(0.0), graph=pl.lit("none"))
    big = _big_roofline(20_000)
    table = pl.concat([_keyed(t, "graph") for t in (small, hidden, big)])
    specs = charts.roofline_specs(table)
    assert sorted(specs) == ["big", "gsplat", "none"]
    for name, rows in (("gsplat", small), ("none", hidden), ("big", big)):
        assert _inlined(specs[name]) == _inlined(_check(charts.roofline_chart(rows)))
    marks = _inlined(specs["big"])["layer"][1]["data"]["values"]
    assert len(marks) <= charts.MAX_ROWS and sum(m["ops"] for m in marks) == 20_000
    assert len(_inlined(specs["gsplat"])["layer"][1]["data"]["values"]) == small.height
    assert specs["none"]["title"]["subtitle"] == "4 op row(s) with zero FLOPs or bytes not shown"
    assert _inlined(specs["none"])["layer"][1]["data"]["values"] == []
    assert "subtitle" not in specs["gsplat"]["title"]


def test_templates_are_drawn_once_per_kind(frames: dict[str, pl.DataFrame]) -> None:
    from nerframe.charts import templates

    templates.template.cache_clear()
    charts.gantt_specs(_keyed(frames["schedule"], "graph", "accelerator"))
    charts.gantt_specs(_keyed(frames["schedule"], "accelerator"))
    assert templates.template.cache_info().misses == 1


# --------------------------------------------------------------------------- export


@pytest.mark.parametrize("suffix", [".png", ".svg", ".html"])
def test_save_chart_formats(frames: dict[str, pl.DataFrame], tmp_path: Path, suffix: str) -> None:
    chart = charts.matrix_chart(frames["summary"])
    path = charts.save_chart(chart, tmp_path / f"matrix{suffix}")
    data = path.read_bytes()
    if suffix == ".png":
        assert data.startswith(b"\x89PNG\r\n\x1a\n")
    elif suffix == ".svg":
        assert b"<svg" in data[:200] and b"unmapped" in data
    else:
        assert b"<script src" not in data and b"vegaEmbed" in data
    assert [p.name for p in tmp_path.iterdir()] == [f"matrix{suffix}"]  # no temporary left


@pytest.mark.parametrize("suffix", [".png", ".svg"])
def test_save_chart_is_deterministic(
    frames: dict[str, pl.DataFrame], tmp_path: Path, suffix: str
) -> None:
    # The roof lines are clipped: their SVG carries clip-path ids.
    chart = charts.roofline_chart(frames["roofline"].filter(graph="gsplat"))
    a = charts.save_chart(chart, tmp_path / f"a{suffix}").read_bytes()
    # Vega's clip-path and gradient counters run on across conversions in between.
    charts.save_chart(charts.matrix_chart(frames["summary"]), tmp_path / f"m{suffix}")
    b = charts.save_chart(chart, tmp_path / f"b{suffix}").read_bytes()
    assert a == b


def test_save_chart_fetches_nothing(tmp_path: Path) -> None:
    remote = alt.Chart(alt.Data(url="https://example.invalid/data.csv")).mark_point()
    with pytest.raises(
        NerframeError, match=r"remote\.png: chart export failed.*External data url not allowed"
    ):
        charts.save_chart(remote.encode(x="a:Q"), tmp_path / "remote.png")
    assert not list(tmp_path.iterdir())


def test_save_chart_rejects_unknown_format(frames: dict[str, pl.DataFrame], tmp_path: Path) -> None:
    with pytest.raises(NerframeError, match=r"unknown chart format '\.pdf'"):
        charts.save_chart(charts.matrix_chart(frames["summary"]), tmp_path / "m.pdf")


# --------------------------------------------------------------------------- area and power


def test_area_power_chart_log_axes_gpus_apart_at_their_own_node() -> None:
    import nerframe
    from nerframe.area_power import breakdown

    table = pl.concat([breakdown(nerframe.accelerator(n)) for n in ("neurex", "a100")])
    spec = _check(charts.area_power_chart(table, gpus=["a100"]))
    designs, chips = spec["vconcat"]
    units = {
        (row, panel["title"], _mark(u)): u
        for row, block in (("designs", designs), ("gpus", chips))
        for panel in block["hconcat"]
        for u in _units(panel)
    }
    for unit in units.values():
        assert unit["encoding"]["x"]["scale"]["type"] == "log"

    def values(row: str, title: str, mark: str) -> dict[str, float]:
        rows = units[(row, title, mark)]["data"]["values"]
        return {f"{r['accelerator']} {r['name']}": r["value"] for r in rows}

    area = values("designs", "accelerators: area at 28 nm (mm²)", "point")
    # neurex is a 28 nm design: its 28 nm figures are its own, SRAM blocks included
    # (NeuRex-Edge Table 4: systolic array 0.48 mm², 1.95 mm² of SRAM in all)
    assert not any(key.startswith("a100") for key in area)
    assert area["neurex systolic_array_32x32"] == pytest.approx(0.48)
    rows = units[("designs", "accelerators: area at 28 nm (mm²)", "point")]["data"]["values"]
    sram = sum(r["value"] for r in rows if r["part"] == "sram")
    assert sram == pytest.approx(1.95, abs=0.01)
    totals = values("designs", "accelerators: area at 28 nm (mm²)", "bar")
    assert totals == {"neurex neurex": pytest.approx(3.14)}
    # the A100 at its own 7 nm: the data sheet's 826 mm² die, not a 28 nm figure
    gpu_area = values("gpus", "GPUs: area at their own node (mm²)", "bar")
    assert gpu_area == {"a100 a100": pytest.approx(826)}
    # a GPU runs one unit at a time: its units' powers are shown, never summed
    assert ("gpus", "GPUs: power per unit at their own node (W)", "bar") not in units
    # zero-area units (the A100's tensor cores share the SMs' area) have no log position
    points = values("gpus", "GPUs: area at their own node (mm²)", "point")
    assert "a100 tensor_cores" not in points and "a100 cuda_cores" in points

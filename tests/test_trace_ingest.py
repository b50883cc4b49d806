"""Trace files → operator graphs, with hand-written traces (no torch needed)."""

from __future__ import annotations

import json
from pathlib import Path

import polars as pl
import pytest

import nerframe
from nerframe.cli import main
from nerframe.errors import NerframeError
from nerframe.trace import Call, Trace, class_map, read_trace, trace_graph, write_trace
from nerframe.trace.classify import evaluate

MODULE = "torch.nn.modules.module.Module"
LINEAR = ["torch.nn.modules.linear.Linear", MODULE]
RELU = ["torch.nn.modules.activation.ReLU", MODULE]

USER_MAP = """
classes:
  m.Sampler:
    op_type: UniformSampler
    params: {B: "out[0][0]", N: "out[0][1]"}
  m.Grid:
    op_type: HashEncoding
    params:
      input_dim: "in[0][-1]"
      num_levels: attr.levels
      features_per_level: attr.features
      log2_hashmap_size: log2(attr.table)
  m.Field.MLP:
    op_type: MLP
    rule: linear_layers
  Renderer:
    op_type: RGBRenderer
    params: {B: "in[0][0]", N: "in[0][1]"}
"""


def call(i, parent, path, classes, inputs, outputs, sources, output_sources, time_s, **kw):
    return Call(
        i,
        parent,
        path,
        classes,
        kw.get("attributes", {}),
        kw.get("params", {}),
        inputs,
        outputs,
        sources,
        output_sources,
        time_s,
        # a half-precision model: rows are costed at 16 bits, as before dtypes were recorded
        kw.get("input_dtypes", [kw.get("dtype", "float16")] * len(inputs)),
        kw.get("output_dtypes", [kw.get("dtype", "float16")] * len(outputs)),
    )


def handmade() -> Trace:
    """A NeRF-like run: 16 rays x 4 samples, a noise module no map knows, a field
    container holding a hash grid and a skip MLP (8 -> 16, skip at layer 1, -> 4)."""
    return Trace(
        "net",
        [
            call(0, None, "", ["m.Net", MODULE], [[16, 3]], [[16, 3]], [], [[(11, 0)]], 0.020),
            call(
                1,
                0,
                "sampler",
                ["m.Sampler", MODULE],
                [[16, 3]],
                [[16, 4, 3], [16, 4, 1]],
                [],
                [[], []],
                0.001,
            ),
            call(
                2,
                0,
                "noise",
                ["m.Noise", MODULE],
                [[16, 4, 3]],
                [[16, 4, 3]],
                [(1, 0)],
                [[(1, 0)]],
                0.002,
            ),
            call(
                3,
                0,
                "field",
                ["m.Field", MODULE],
                [[64, 3]],
                [[64, 4]],
                [(2, 0)],
                [[(5, 0)]],
                0.012,
            ),
            call(
                4,
                3,
                "field.grid",
                ["m.Grid", MODULE],
                [[64, 3]],
                [[64, 8]],
                [(2, 0)],
                [[(2, 0)]],
                0.003,
                attributes={"levels": 4, "features": 2, "table": 256},
            ),
            call(
                5,
                3,
                "field.mlp",
                ["m.Field.MLP", MODULE],
                [[64, 8]],
                [[64, 4]],
                [(4, 0)],
                [[(10, 0)]],
                0.008,
            ),
            call(
                6,
                5,
                "field.mlp.0",
                LINEAR,
                [[64, 8]],
                [[64, 16]],
                [(4, 0)],
                [[(4, 0)]],
                0.002,
                attributes={"in_features": 8, "out_features": 16},
                params={"weight": [16, 8], "bias": [16]},
            ),
            call(7, 5, "field.mlp.act", RELU, [[64, 16]], [[64, 16]], [(6, 0)], [[(6, 0)]], 0.0005),
            call(
                8,
                5,
                "field.mlp.1",
                LINEAR,
                [[64, 24]],
                [[64, 16]],
                [(4, 0), (7, 0)],
                [[(4, 0), (7, 0)]],
                0.002,
                attributes={"in_features": 24, "out_features": 16},
                params={"weight": [16, 24], "bias": [16]},
            ),
            call(9, 5, "field.mlp.act", RELU, [[64, 16]], [[64, 16]], [(8, 0)], [[(8, 0)]], 0.0005),
            call(
                10,
                5,
                "field.mlp.2",
                LINEAR,
                [[64, 16]],
                [[64, 4]],
                [(9, 0)],
                [[(9, 0)]],
                0.002,
                attributes={"in_features": 16, "out_features": 4},
                params={"weight": [4, 16], "bias": [4]},
            ),
            call(
                11,
                0,
                "renderer",
                ["m.Renderer", MODULE],
                [[16, 4, 3], [16, 4, 1]],
                [[16, 3]],
                [(1, 1), (3, 0)],
                [[(1, 1), (3, 0)]],
                0.004,
            ),
        ],
        total_s=0.020,
        repeats=3,
        warmup=1,
    )


@pytest.fixture
def user_map(tmp_path: Path) -> Path:
    path = tmp_path / "m.yaml"
    path.write_text(USER_MAP)
    return path


def test_calls_become_rows_with_exact_parameters(user_map: Path) -> None:
    g = trace_graph(handmade(), [user_map])
    assert g.ops["op_type"].to_list() == ["UniformSampler", "HashEncoding", "MLP", "RGBRenderer"]
    assert g.ops.select("B", "N").rows() == [(16, 4)] * 4
    grid = g.ops.row(1, named=True)
    assert (grid["input_dim"], grid["num_levels"], grid["features_per_level"]) == (3, 4, 2)
    assert grid["log2_hashmap_size"] == 8
    mlp = g.ops.row(2, named=True)
    assert (mlp["in_dim"], mlp["num_layers"], mlp["layer_width"], mlp["out_dim"]) == (8, 3, 16, 4)
    assert mlp["skip_connections"] == [1] and mlp["use_bias"] is True


def test_mlp_flops_are_those_of_its_linear_calls(user_map: Path) -> None:
    costs = nerframe.costs(trace_graph(handmade(), [user_map]).ops)
    # 2 x rows x sum(in x out) over the three Linear calls: 2 * 64 * (8*16 + 24*16 + 16*4).
    assert costs["flops"][2] == 2 * 64 * (128 + 384 + 64) == 73728


def test_edges_follow_provenance_through_unknown_and_container_calls(user_map: Path) -> None:
    g = trace_graph(handmade(), [user_map])
    # noise (unknown) and field (container) are looked through; no caller->callee edges.
    assert sorted(g.edges.select("src", "dst").rows()) == [(0, 1), (0, 3), (1, 2), (2, 3)]


def test_container_outputs_are_looked_through_one_by_one(tmp_path: Path) -> None:
    """A container returning two children's outputs: each consumer depends on its own."""
    ones = ["m.One", MODULE]
    calls = [
        call(
            0,
            None,
            "pair",
            ["m.Pair", MODULE],
            [[8, 3]],
            [[8, 3], [8, 3]],
            [],
            [[(1, 0)], [(2, 0)]],
            1e-3,
        ),
        call(1, 0, "pair.a", ones, [[8, 3]], [[8, 3]], [], [[]], 1e-4),
        call(2, 0, "pair.b", ones, [[8, 3]], [[8, 3]], [], [[]], 1e-4),
        call(3, None, "use_a", ones, [[8, 3]], [[8, 3]], [(0, 0)], [[(0, 0)]], 1e-4),
        call(4, None, "use_b", ones, [[8, 3]], [[8, 3]], [(0, 1)], [[(0, 1)]], 1e-4),
    ]
    path = tmp_path / "one.yaml"
    path.write_text("classes:\n  m.One: {op_type: UniformSampler, params: {B: 8, N: 1}}\n")
    g = trace_graph(Trace("pair", calls), [path])
    assert sorted(g.edges.select("src", "dst").rows()) == [(0, 2), (1, 3)]


def test_calls_table_statuses_and_unknown_share(user_map: Path) -> None:
    g = trace_graph(handmade(), [user_map])
    status = dict(zip(g.calls["path"], g.calls["status"], strict=True))
    assert status["noise"] == "unknown" and status["field"] == "container"
    assert status["field.mlp.0"] == "inside" and status["sampler"] == "op"
    assert g.unknown.select("path", "class", "time_s", "share").rows() == [
        ("noise", "m.Noise", 0.002, 0.1)
    ]
    assert g.measured["measured_s"].to_list() == [0.001, 0.003, 0.008, 0.004]
    assert g.measured["approximate"].to_list() == [None] * 4


def test_strict_refuses_unknown_leaf_modules(user_map: Path) -> None:
    with pytest.raises(NerframeError, match=r"unknown leaf module\(s\) noise \(m.Noise\)"):
        trace_graph(handmade(), [user_map], strict=True)


def test_without_the_user_map_only_linear_calls_are_rows() -> None:
    g = trace_graph(handmade())
    # Each Linear is a one-layer MLP; 64 rows match no sampler, so B = 64, N = 1 (flagged).
    assert g.ops.select("op_type", "in_dim", "out_dim", "B", "N").rows() == [
        ("MLP", 8, 16, 64, 1),
        ("MLP", 24, 16, 64, 1),
        ("MLP", 16, 4, 64, 1),
    ]
    assert "match no upstream sampler" in g.measured["approximate"][0]
    assert sorted(g.edges.select("src", "dst").rows()) == [(0, 1), (1, 2)]
    assert set(g.unknown["path"]) == {"sampler", "noise", "field.grid", "renderer"}


def test_irregular_linear_layers_are_flagged_approximate(tmp_path: Path) -> None:
    widths = [(3, 32), (32, 16), (16, 2)]  # hidden widths differ: not a catalogue MLP
    calls = [call(0, None, "mlp", ["m.MLP", MODULE], [[10, 3]], [[10, 2]], [], [[(3, 0)]], 1e-3)]
    for i, (fan_in, fan_out) in enumerate(widths, start=1):
        source = [(i - 1, 0)] if i > 1 else []
        calls.append(
            call(
                i,
                0,
                f"mlp.{i}",
                LINEAR,
                [[10, fan_in]],
                [[10, fan_out]],
                source,
                [source],
                1e-4,
                attributes={"in_features": fan_in, "out_features": fan_out},
                params={"weight": [fan_out, fan_in]},
            )
        )
    path = tmp_path / "mlp.yaml"
    path.write_text("classes:\n  m.MLP: {op_type: MLP, rule: linear_layers}\n")
    g = trace_graph(Trace("irregular", calls), [path])
    row = g.ops.row(0, named=True)
    assert (row["num_layers"], row["layer_width"], row["use_bias"]) == (3, 32, False)
    assert "are not a catalogue MLP" in g.measured["approximate"][0]


def test_user_map_wins_over_packaged_and_bases_are_matched(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text("classes:\n  Linear: {ignore: true}\n")
    assert class_map([path]).match(LINEAR).ignored
    assert class_map().match(["m.MyLinear", *LINEAR]).op_type == "MLP"
    assert class_map().match(["m.Unknown", MODULE]) is None


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("classes:\n  X: {op_type: MPL}\n", r"unknown op type 'MPL' \(did you mean 'MLP'\?\)"),
        ("classes:\n  X: {op_type: MLP, params: {depth: 3}}\n", "MLP has no parameter 'depth'"),
        (
            "classes:\n  X: {op_type: MLP, rule: eval}\n",
            'field \'classes.X.rule\': expected one of "linear_layers", got "eval"',
        ),
        (
            "classes:\n  X: {op_type: UniformSampler, params: {B: \"__import__('os')\"}}\n",
            "cannot read expression",
        ),
        (
            'classes:\n  X: {op_type: UniformSampler, params: {B: "attr.x.__class__()"}}\n',
            "cannot read expression|unexpected",
        ),
        ("classes:\n  X: {op_type: UniformSampler, params: {B: os.system}}\n", "unknown name 'os'"),
        (
            "classes:\n  X: {op_type: MLP, colour: red}\n",
            r"unknown field 'classes\.X\.colour' \(allowed: approximate, ignore, op_type",
        ),
        ("other: 1\n", "not a class map"),
    ],
)
def test_bad_maps_are_refused_naming_the_culprit(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text(text)
    with pytest.raises(NerframeError, match=message):
        class_map([path])


def test_path_language() -> None:
    scope = {"attr": {"levels": 4, "sizes": [4, 8]}, "param": {"t": [16, 2]}, "in": [[8, 5, 3]]}
    assert evaluate("attr.levels - 1", scope) == 3
    assert evaluate("rows(in[0]) * 2 + 1", scope) == 81
    assert evaluate("len(attr.sizes)", scope) == 2
    assert evaluate("log2(param.t[0])", scope) == 4
    assert evaluate("exists(param.bias)", scope) is False
    assert evaluate(7, scope) == 7
    with pytest.raises(NerframeError, match="no 'missing' in the recorded attr"):
        evaluate("attr.missing", scope)
    with pytest.raises(NerframeError, match="not a power of two"):
        evaluate("log2(attr.levels - 1)", scope)


def test_packaged_maps_load() -> None:
    m = class_map()
    key = "nerfstudio.field_components.encodings.HashEncoding"
    assert m.match([key]).op_type == "HashEncoding"
    spaced = [
        "nerfstudio.model_components.ray_samplers.UniformLinDispPiecewiseSampler",
        "nerfstudio.model_components.ray_samplers.SpacedSampler",
    ]
    assert m.match(spaced).approximate


def test_trace_file_round_trip_and_byte_identity(tmp_path: Path) -> None:
    a, b = tmp_path / "a.trace.json", tmp_path / "b.trace.json"
    write_trace(handmade(), a)
    write_trace(read_trace(a), b)
    assert a.read_bytes() == b.read_bytes()
    assert read_trace(a) == handmade()


@pytest.mark.parametrize(
    ("change", "message"),
    [
        (lambda d: d.update(format="other"), "not a trace file"),
        (lambda d: d.update(version=4), "version 4 is not one of 1, 2, 3"),
        (lambda d: d["calls"][2].update(sources=[[5, 0]]), "call 2: sources refers to call 5"),
        (lambda d: d["calls"][2].update(sources=[[1, 2]]), "output 2 of call 1, which has 2"),
        (
            lambda d: d["calls"][2].update(sources=[3]),
            r"field 'calls\[2\]\.sources\[0\]': expected array, got 3",
        ),
        (lambda d: d["calls"][2].update(output_sources=[]), "one list per output"),
        (
            lambda d: d["calls"][1].update(inputs=[[16, -3]]),
            r"field 'calls\[1\]\.inputs\[0\]\[1\]': expected int >= 0, got -3",
        ),
        (lambda d: d["calls"][1].update(time_s=-1), r"'calls\[1\]\.time_s': expected float >= 0"),
        (lambda d: d["calls"][1].update(id=7), "id must be 1"),
        (lambda d: d["calls"][1].update(colour=1), r"unknown field 'calls\[1\]\.colour'"),
    ],
)
def test_malformed_trace_files_name_the_culprit(tmp_path: Path, change, message: str) -> None:
    path = tmp_path / "bad.trace.json"
    write_trace(handmade(), path)
    document = json.loads(path.read_text())
    change(document)
    path.write_text(json.dumps(document))
    with pytest.raises(NerframeError, match=message):
        read_trace(path)


def test_a_trace_file_is_a_graph_file(tmp_path: Path) -> None:
    path = tmp_path / "run.trace.json"
    write_trace(handmade(), path)
    g = nerframe.read_graph(path)
    assert g.name == "run" and g.ops["op_type"].to_list() == ["MLP"] * 3
    assert nerframe.schedule(g, "neurex").summary["status"].item() == "ok"


def test_cli_trace_ops_writes_a_graph_file(tmp_path: Path, user_map: Path, capsys) -> None:
    trace = tmp_path / "run.trace.json"
    write_trace(handmade(), trace)
    out = tmp_path / "graph.json"
    assert main(["trace", "ops", str(trace), "--map", str(user_map), "-o", str(out)]) == 0
    assert "unknown module noise (m.Noise, 10.0% of the measured time)" in capsys.readouterr().err
    g = nerframe.read_graph(out)
    expected = trace_graph(handmade(), [user_map])
    assert g.ops.drop("graph").equals(expected.ops.drop("graph"))
    assert g.edges.drop("graph").equals(expected.edges.drop("graph"))
    notes = json.loads(out.read_text())["notes"]
    assert [o["path"] for o in notes["ops"]] == ["sampler", "field.grid", "field.mlp", "renderer"]


def test_cli_trace_file_accepted_by_costs(tmp_path: Path, capsys) -> None:
    trace = tmp_path / "run.trace.json"
    write_trace(handmade(), trace)
    assert main(["costs", str(trace), "--format", "csv"]) == 0
    table = pl.read_csv(capsys.readouterr().out.encode())
    assert table["flops"].to_list() == [2 * 64 * 8 * 16, 2 * 64 * 24 * 16, 2 * 64 * 16 * 4]


def test_cli_strict_is_one_error_line(tmp_path: Path, capsys) -> None:
    trace = tmp_path / "run.trace.json"
    write_trace(handmade(), trace)
    assert main(["trace", "ops", str(trace), "--strict"]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: ") and err.count("\n") == 1 and "noise (m.Noise)" in err


def test_cli_trace_file_accepted_by_schedule_roofline_and_sweep(tmp_path: Path, capsys) -> None:
    trace = tmp_path / "run.trace.json"
    write_trace(handmade(), trace)
    assert main(["schedule", str(trace), "--hardware", "neurex", "--format", "csv"]) == 0
    assert capsys.readouterr().out.count("\n") == 4  # header and the three Linear rows
    out = tmp_path / "roofline.csv"
    assert main(["roofline", str(trace), "--system", "A100", "-o", str(out)]) == 0
    assert pl.read_csv(out).height == 3
    args = ["sweep", str(trace), "--hardware", "neurex", "--vary", "frequency_mhz=500,1000"]
    assert main([*args, "--format", "csv"]) == 0
    assert capsys.readouterr().out.count("\n") == 3


def test_maps_from_the_environment_apply_to_trace_graph_files(
    tmp_path: Path, user_map: Path, monkeypatch
) -> None:
    trace = tmp_path / "run.trace.json"
    write_trace(handmade(), trace)
    assert nerframe.read_graph(trace).ops.height == 3
    monkeypatch.setenv("NERFRAME_MAPS", str(user_map))
    g = nerframe.read_graph(trace)
    assert g.ops["op_type"].to_list() == ["UniformSampler", "HashEncoding", "MLP", "RGBRenderer"]

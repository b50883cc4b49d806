"""Built-in pipelines, graphs, edges and the fine graph."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

import nerframe
from nerframe.builtin_pipelines import PIPELINES
from nerframe.graphs import topological_order

FEEDBACK = {"gsarch": [(9, 2)], "instant3d": [(7, 2)]}
NATIVE_OPS = {
    "icarus": 4,
    "neurex": 5,
    "instant_ngp": 7,  # its occupancy-grid march first (realistic model)
    "cicero": 5,
    "gscore": 5,
    "gaurast": 5,
    "srender": 10,
    "gsarch": 10,
    "gbu": 8,
    "gbu_train": 11,
    "instant3d": 8,
    "3dgs": 5,
}


@pytest.mark.parametrize("name", PIPELINES)
def test_pipeline_shape(name: str) -> None:
    g = nerframe.pipeline(name)
    assert g.ops.height == NATIVE_OPS[name]
    assert g.ops["op_id"].to_list() == list(range(g.ops.height))
    feedback = g.edges.filter(kind="feedback").select("src", "dst").rows()
    assert feedback == FEEDBACK.get(name, [])
    position = {op: i for i, op in enumerate(topological_order(g).tolist())}
    assert sorted(position) == list(range(g.ops.height))
    for src, dst in g.edges.filter(kind="data").select("src", "dst").rows():
        assert position[src] < position[dst]


def test_workload_parameters() -> None:
    g = nerframe.pipeline("gsarch", rays=1024, samples=16, gaussians=3_000_000)
    assert g.ops["G"].drop_nulls().to_list() == [3_000_000]
    assert set(g.ops.filter(scope="batch")["B"]) == {1024}
    assert set(g.ops.filter(scope="batch")["N"]) == {16}
    assert g.batches == -(-1280 * 720 // 1024)
    assert nerframe.pipeline("icarus").ops["N"].to_list() == [192] * 4
    assert set(nerframe.pipeline("gscore").ops["G"].drop_nulls()) == {1_000_000, 500_000}


def test_spec_model_workload_parameters() -> None:
    g = nerframe.pipeline("gsarch", rays=1024, samples=16, gaussians=3_000_000, model="spec")
    assert set(g.ops["G"].drop_nulls()) == {3_000_000}
    assert set(g.ops["B"].drop_nulls()) == {1024}
    assert set(g.ops["scope"]) == {"batch"}
    assert g.batches == -(-1280 * 720 // 1024)
    assert set(nerframe.pipeline("gscore", model="spec").ops["G"].drop_nulls()) == {4096 * 64}


def test_bitwidths() -> None:
    assert nerframe.pipeline("cicero").ops["bitwidth"].to_list() == [4, 16, 4, 4, 4]


@pytest.mark.parametrize("name", PIPELINES)
def test_expand_conserves_flops_and_links_stages(name: str) -> None:
    g = nerframe.pipeline(name)
    fine = nerframe.expand(g)
    assert nerframe.costs(fine.ops)["flops"].sum() == nerframe.costs(g.ops)["flops"].sum()
    assert not fine.ops["op_type"].is_in(["HashEncoding", "FrustumCullingProjection"]).any()
    assert fine.edges.filter(kind="feedback").height == g.edges.filter(kind="feedback").height


def test_expand_reattaches_edges() -> None:
    fine = nerframe.expand(nerframe.pipeline("neurex"))
    assert fine.ops["op_type"].to_list() == [
        "UniformSampler",
        "IndexGeneration",
        "HashLookup",
        "Interpolation",
        "MLP",
        "RGBRenderer",
        "DensityRenderer",
    ]
    assert fine.edges.select("src", "dst").rows() == [
        (0, 1),
        (1, 2),
        (2, 3),
        (3, 4),
        (4, 5),
        (4, 6),
    ]
    training = nerframe.expand(nerframe.pipeline("instant3d"))
    assert training.edges.filter(kind="feedback").select("src", "dst").rows() == [(9, 2)]


def test_unknown_pipeline() -> None:
    with pytest.raises(
        nerframe.NerframeError, match=r"unknown pipeline 'nerex' \(did you mean 'neurex'"
    ):
        nerframe.pipeline("nerex")


def test_edge_to_missing_op() -> None:
    with pytest.raises(nerframe.NerframeError, match="edge 0->5 points to a missing op"):
        nerframe.graph("g", [{"op_type": "Sorting", "B": 1, "N": 1}], [(0, 5)])


def test_cycle_names_its_ops() -> None:
    ops = [{"op_type": "Sorting", "B": 1, "N": 1}] * 4
    with pytest.raises(nerframe.NerframeError, match=r"cycle: 1 \(Sorting\) -> 2 \(Sorting\) -> 1"):
        nerframe.graph("g", ops, [(0, 1), (1, 2), (2, 1), (2, 3)])


def test_feedback_edges_may_close_a_loop() -> None:
    ops = [{"op_type": "Sorting", "B": 1, "N": 1}] * 2
    g = nerframe.graph("g", ops, [(0, 1), (1, 0, "feedback")])
    assert g.edges["kind"].to_list() == ["data", "feedback"]


def test_read_graph(tmp_path: Path) -> None:
    path = tmp_path / "mine.json"
    path.write_text(
        json.dumps(
            {
                "ops": [
                    {"op_type": "UniformSampler", "B": 8, "N": 2},
                    {"op_type": "RGBRenderer", "B": 8, "N": 2},
                ],
                "edges": [[0, 1], {"src": 1, "dst": 0, "kind": "feedback"}],
                "frame_pixels": 64,
            }
        )
    )
    g = nerframe.read_graph(path)
    assert (g.name, g.batches, g.edges.height) == ("mine", 8, 2)
    path.write_text('{"ops": [\n  {"op_type": "Sorting",}\n]}')
    with pytest.raises(nerframe.NerframeError, match="malformed JSON at line 2 column"):
        nerframe.read_graph(path)
    path.write_text('{"ops": [], "edgs": []}')
    with pytest.raises(nerframe.NerframeError, match="unknown field 'edgs'"):
        nerframe.read_graph(path)


def test_read_graph_yaml(tmp_path: Path) -> None:
    path = tmp_path / "mine.yaml"
    path.write_text(
        "name: mine\n"
        "ops:\n"
        "  - {op_type: UniformSampler, B: 8, N: 2}\n"
        "  - {op_type: RGBRenderer, B: 8, N: 2}\n"
        "edges:\n"
        "  - [0, 1]\n"
        "  - {src: 1, dst: 0, kind: feedback}\n"
        "frame_pixels: 64\n"
    )
    g = nerframe.read_graph(path)
    assert (g.name, g.batches) == ("mine", 8)
    assert g.edges.select("src", "dst", "kind").rows() == [(0, 1, "data"), (1, 0, "feedback")]
    path.write_text("ops:\n  - {op_type: Sorting\n")
    with pytest.raises(
        nerframe.NerframeError, match=r"malformed YAML at line 3 column 1: did not find expected"
    ):
        nerframe.read_graph(path)


@pytest.mark.parametrize(
    ("edges", "message"),
    [
        ([[0]], r"field 'edges\[0\]': expected array of length >= 2, got \[0\]"),
        ([[0, 1, "loop"]], r"field 'edges\[0\]\[2\]': expected 'data' or 'feedback', got \"loop\""),
        ([[0, 1, None]], r"field 'edges\[0\]\[2\]': expected int \| str, got null"),
        ([["a", 1]], r"field 'edges\[0\]\[0\]': expected an op id \(int\), got \"a\""),
        ([{"src": 0, "to": 1}], r"unknown field 'edges\[0\]\.to' \(allowed: dst, kind, src\)"),
        # D10: endpoints are never coerced (1.9 was read as 1, true as 1, "0" as 0)
        ([[0, 1.9]], r"field 'edges\[0\]\[1\]': expected int \| str, got 1\.9"),
        ([[0, True]], r"field 'edges\[0\]\[1\]': expected int \| str, got true"),
        ([["0", "1"]], r"field 'edges\[0\]\[0\]': expected an op id \(int\), got \"0\""),
        ([{"src": 0.0, "dst": 1}], r"field 'edges\[0\]\.src': expected int, got 0\.0"),
    ],
)
def test_read_graph_bad_edges(tmp_path: Path, edges: list, message: str) -> None:
    path = tmp_path / "g.json"
    ops = [{"op_type": "Sorting", "B": 1, "N": 1}] * 2
    path.write_text(json.dumps({"ops": ops, "edges": edges}))
    with pytest.raises(nerframe.NerframeError, match=message):
        nerframe.read_graph(path)


def test_read_graph_bad_frame_pixels(tmp_path: Path) -> None:
    path = tmp_path / "g.json"
    path.write_text(
        json.dumps({"ops": [{"op_type": "Sorting", "B": 1, "N": 1}], "frame_pixels": 0})
    )
    with pytest.raises(nerframe.NerframeError, match="frame_pixels must be an integer >= 1"):
        nerframe.read_graph(path)

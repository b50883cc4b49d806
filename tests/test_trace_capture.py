"""Capturing a live model: the tiny pure-torch NeRF of tests/tiny_nerf.py."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

import nerframe
from nerframe.cli import main
from nerframe.errors import NerframeError
from nerframe.trace import capture, read_trace, trace_graph, write_trace

HAVE_TORCH = importlib.util.find_spec("torch") is not None
needs_torch = pytest.mark.skipif(not HAVE_TORCH, reason="optional: torch not installed")

HERE = Path(__file__).parent


@pytest.fixture(scope="module")
def tiny():
    import tiny_nerf

    model, inputs = tiny_nerf.build()
    return tiny_nerf, capture(model, *inputs, repeats=2, warmup=1)


@pytest.fixture
def tiny_map(tmp_path: Path) -> Path:
    import tiny_nerf

    path = tmp_path / "tiny.yaml"
    path.write_text(tiny_nerf.MAP)
    return path


@needs_torch
def test_capture_records_calls_attributes_shapes_and_times(tiny) -> None:
    tn, trace = tiny
    paths = [c.path for c in trace.calls]
    assert paths[:5] == ["", "sampler", "jitter", "grid", "mlp"]
    assert paths[-1] == "renderer"
    grid = trace.calls[3]
    assert grid.classes[:2] == ["tiny_nerf.HashGrid", "torch.nn.modules.module.Module"]
    assert grid.attributes["num_levels"] == tn.LEVELS
    assert grid.attributes["resolutions"] == [4, 8, 16, 32]
    assert grid.params == {"table": [tn.LEVELS, 2**tn.LOG2_TABLE, tn.FEATURES], "primes": [3]}
    assert grid.inputs == [[tn.RAYS * tn.SAMPLES, 3]]
    assert grid.outputs == [[tn.RAYS * tn.SAMPLES, tn.LEVELS * tn.FEATURES]]
    assert trace.calls[1].attributes["num_samples"] == tn.SAMPLES
    assert trace.calls[5].attributes["in_features"] == tn.LEVELS * tn.FEATURES
    assert all(c.time_s > 0 for c in trace.calls) and trace.total_s > 0
    # Inclusive times: the MLP's time covers its four Linear calls.
    linear = [c.time_s for c in trace.calls if c.parent == 4 and "Linear" in c.name]
    assert len(linear) == 4 and trace.calls[4].time_s >= sum(linear) * 0.5


@needs_torch
def test_edges_are_tensor_provenance_not_calls(tiny) -> None:
    _, trace = tiny
    by_path = {c.path: c for c in trace.calls}
    assert by_path["jitter"].sources == [(1, 0)]  # sampler's points
    assert by_path["grid"].sources == [(2, 0)]  # the jittered points, through a reshape
    assert by_path["mlp.layers.0"].sources == [(3, 0)]
    # The skip: the MLP's input and the previous ReLU's output.
    assert by_path["mlp.layers.2"].sources == [(3, 0), (8, 0)]
    # Through slicing, sigmoid and reshape in the model's own forward: the sampler's
    # deltas (its second output) and the MLP's output; never the model (the caller).
    assert by_path["renderer"].sources == [(1, 1), (4, 0)]
    assert by_path["mlp"].output_sources == [[(11, 0)]]
    assert by_path["sampler"].output_sources == [[], []]


@needs_torch
def test_tiny_nerf_graph_exact(tiny, tiny_map: Path) -> None:
    tn, trace = tiny
    g = trace_graph(trace, [tiny_map])
    assert g.ops["op_type"].to_list() == ["UniformSampler", "HashEncoding", "MLP", "RGBRenderer"]
    assert g.ops.select("B", "N").rows() == [(tn.RAYS, tn.SAMPLES)] * 4
    grid = g.ops.row(1, named=True)
    assert (grid["input_dim"], grid["num_levels"], grid["features_per_level"]) == (3, 4, 2)
    assert grid["log2_hashmap_size"] == tn.LOG2_TABLE
    mlp = g.ops.row(2, named=True)
    assert (mlp["in_dim"], mlp["num_layers"], mlp["layer_width"], mlp["out_dim"]) == (8, 4, 16, 4)
    assert mlp["skip_connections"] == [2] and mlp["use_bias"] is True
    assert sorted(g.edges.select("src", "dst").rows()) == [(0, 1), (0, 3), (1, 2), (2, 3)]
    assert g.unknown["path"].to_list() == ["jitter"]
    flops = nerframe.costs(g.ops)["flops"][2]
    rows = tn.RAYS * tn.SAMPLES
    layers = [(8, 16), (16, 16), (24, 16), (16, 4)]
    assert flops == 2 * rows * sum(i * o for i, o in layers) == 53248


@needs_torch
def test_capture_is_deterministic_apart_from_times(tiny, tmp_path: Path) -> None:
    import tiny_nerf

    _, first = tiny
    model, inputs = tiny_nerf.build()
    second = capture(model, *inputs, repeats=1, warmup=0)
    strip = [c.__class__(**{**c.__dict__, "time_s": 0.0}) for c in first.calls]
    assert [c.__class__(**{**c.__dict__, "time_s": 0.0}) for c in second.calls] == strip
    path = write_trace(first, tmp_path / "t.trace.json")
    assert read_trace(path) == first


@needs_torch
def test_cli_capture_then_analyze_with_report(tmp_path: Path, tiny_map: Path, monkeypatch) -> None:
    monkeypatch.setenv("NERFRAME_PROBE", str(tmp_path / "probe.json"))
    nerframe.probe(quick=True, force=True)
    trace = tmp_path / "tiny.trace.json"
    target = f"{HERE / 'tiny_nerf.py'}:build"
    assert main(["trace", "capture", target, "-o", str(trace), "--repeats", "1"]) == 0
    graph = tmp_path / "tiny.json"
    assert main(["trace", "ops", str(trace), "--map", str(tiny_map), "-o", str(graph)]) == 0
    assert nerframe.read_graph(graph).ops.height == 4
    store = tmp_path / "store"
    nerframe.analyze([str(trace)], ["neurex"], store, report=False)
    measured = nerframe.query("SELECT * FROM measured ORDER BY op_id", store)
    assert measured["op_type"].to_list() == ["MLP"] * 4  # no user map: Linear calls only
    assert measured["predicted_s"].is_not_null().all()


def test_without_torch_capture_says_how_to_install(monkeypatch, capsys, tmp_path: Path) -> None:
    monkeypatch.setitem(sys.modules, "torch", None)  # import torch now raises ImportError
    with pytest.raises(NerframeError, match=r"needs PyTorch: pip install 'nerframe\[trace\]'"):
        capture(object())
    out = tmp_path / "x.trace.json"
    assert main(["trace", "capture", f"{HERE / 'tiny_nerf.py'}:build", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith("error: capturing a trace needs PyTorch") and err.count("\n") == 1
    assert not out.exists()


@needs_torch
def test_cli_capture_errors_are_one_line(tmp_path: Path, capsys) -> None:
    module = tmp_path / "broken.py"
    module.write_text(
        "import torch\ndef build():\n    return torch.nn.Linear(3, 4), (torch.ones(2, 5),)\n"
    )
    out = tmp_path / "b.trace.json"
    assert main(["trace", "capture", f"{module}:build", "-o", str(out)]) == 1
    err = capsys.readouterr().err
    assert err.startswith(f"error: {module}:build: RuntimeError: ") and err.count("\n") == 1
    assert main(["trace", "capture", f"{module}:nothing", "-o", str(out)]) == 1
    assert "has no function 'nothing'" in capsys.readouterr().err
    assert main(["trace", "capture", f"{module}:build", "-o", str(tmp_path / "b.json")]) == 1
    assert "must end in .trace.json" in capsys.readouterr().err
    assert not out.exists()

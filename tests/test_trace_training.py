"""Training traces (``trace capture --train``): one iteration recorded per module.

Oracles: a fake clock whose every mark is one tick (so each time is a count of marks,
derived by hand from the hooks' order), the model's own parameter count, and the
functions autograd must run for a Linear layer and a hash-table gather.
"""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest

needs_torch = pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="optional: torch is not installed"
)
sys.path.insert(0, str(Path(__file__).parent))


class Ticks:
    """Marks are ticks of 1 ms."""

    def __init__(self) -> None:
        self.ticks = 0

    def mark(self) -> int:
        self.ticks += 1
        return self.ticks

    def synchronize(self) -> None:
        pass

    def seconds(self, start: int, end: int) -> float:
        return (end - start) * 1e-3


@pytest.fixture(scope="module")
def trained():
    import tiny_nerf

    from nerframe.trace import capture

    model, inputs = tiny_nerf.build()
    params = sum(p.numel() for p in model.parameters())
    return capture(model, *inputs, repeats=2, warmup=1, timer=Ticks(), train=True), params


@needs_torch
def test_a_training_trace_times_every_autograd_node_once(trained) -> None:
    trace, params = trained
    train = trace.train
    assert train is not None and train.parameters == params
    root = trace.calls[0]
    # each hooked node is one window of 1 tick inside the backward's marks, which hold
    # 2 marks per node and end 1 tick after the last: backward = 2 x nodes + 1 ticks
    assert train.backward_s == pytest.approx(2 * root.backward_s + 1e-3)
    # inclusive: a parent's backward is its own nodes' plus its children's
    for call in trace.calls:
        children = [c for c in trace.calls if c.parent == call.id]
        assert call.backward_s >= sum(c.backward_s for c in children) - 1e-12
    # the forward's times are a forward capture's: the loss is one tick, the step one
    assert train.loss_s == pytest.approx(1e-3) and train.optimizer_s == pytest.approx(1e-3)
    assert train.iteration_s == pytest.approx(
        trace.total_s + train.loss_s + train.backward_s + train.optimizer_s
    )


@needs_torch
def test_backward_kernels_are_the_autograd_functions(trained) -> None:
    trace, _ = trained
    by_path = {c.path: c for c in trace.calls}
    linear = [k.name for k in by_path["mlp.layers.1"].backward_kernels]
    assert linear.count("mm") == 2  # the input's gradient and the weight's
    grid = [k.name for k in by_path["grid"].backward_kernels]
    assert any(name.lstrip("_").startswith("index_put") for name in grid)  # the table's
    assert by_path["sampler"].backward_kernels == []  # its inputs need no gradient
    optimizer = {k.name for k in trace.train.optimizer_kernels}
    assert optimizer & {"addcdiv_", "_foreach_addcdiv_"}  # Adam's update


@needs_torch
def test_a_scatter_add_records_the_most_lookups_into_one_row(trained) -> None:
    # Oracle: the grid's indices recomputed from the model's inputs and counted per
    # level; the gradient of table[level, index] adds each lookup into its row
    import tiny_nerf
    import torch

    model, (origins, directions) = tiny_nerf.build()
    grid = model.grid
    with torch.no_grad():
        points, _ = model.sampler(origins, directions)
        x = model.jitter(points).reshape(-1, 3)
    expected = []
    for resolution in grid.resolutions:
        index = (torch.floor(x * resolution).long() * grid.primes).sum(-1) % grid.table.shape[1]
        expected.append(int(torch.bincount(index).max()))
    trace, _ = trained
    recorded = [
        k.max_row_lookups
        for k in next(c for c in trace.calls if c.path == "grid").backward_kernels
        if k.name.lstrip("_").startswith("index_put")
    ]
    assert sorted(recorded) == sorted(expected) and max(expected) > 1
    # nothing else adds into rows: every other kernel records none
    others = [k for c in trace.calls for k in (*c.kernels, *c.backward_kernels)]
    assert sum(k.max_row_lookups > 0 for k in others) == len(expected)


def test_each_scatter_add_counts_lookups_into_its_destination_rows() -> None:
    # Oracle: hand counts. Two indexed dimensions name a row together; an index_add's
    # index runs along its dim; an embedding's padding row is never added; a mask or a
    # non-accumulating put adds nothing up
    import numpy as np

    from nerframe.trace.recording import max_row_lookups

    table = np.zeros((16, 4, 2))
    pairs = [np.array([1, 1, 2, 1]), np.array([3, 3, 3, 0])]  # rows (1, 3) twice
    assert max_row_lookups("index_put_", (table, pairs, None), {"accumulate": True}) == 2
    columns = [None, np.array([3, 3, 3, 0])]  # every first-dimension slice: column 3
    assert max_row_lookups("_index_put_impl_", (table, columns, None, True, True), {}) == 3
    assert max_row_lookups("index_put", (table, [np.array([-1, 15])], None, True), {}) == 2
    assert max_row_lookups("index_add_", (table, 1, np.array([0, 2, 2, 2]), None), {}) == 3
    # a scatter_add indexes each element: along dim 1, (row 0, column 1) takes three;
    # along dim 0, column j's two elements go to rows index[:, j]: both to row 1 at j = 1
    index = np.array([[1, 1, 0, 1], [0, 1, 2, 3]])
    assert max_row_lookups("scatter_add_", (table[:, :, 0], 1, index, None), {}) == 3
    assert max_row_lookups("scatter_add", (table[:, :, 0], 0, index, None), {}) == 2
    assert max_row_lookups("scatter_add", (table[:, :, 0], 0, index[:, 2:], None), {}) == 1
    embedding = (None, np.array([0, 0, 0, 2, 2]), 5, 0, False)  # padding_idx 0
    assert max_row_lookups("embedding_dense_backward", embedding, {}) == 2
    mask = [np.ones(16, bool)]
    assert max_row_lookups("index_put_", (table, mask, None), {"accumulate": True}) == 0
    assert max_row_lookups("index_put_", (table, pairs, None), {}) == 0
    assert max_row_lookups("mul", (table, table), {}) == 0


@needs_torch
def test_backward_kernels_are_those_an_unrecorded_backward_runs(trained) -> None:
    # Oracle: torch/csrc/autograd/FunctionsManual.cpp, cumprod_backward. Unrecorded, an
    # input without zeros takes its fast path: one reversed cumsum of output * grad,
    # divided by the input. The composite path a dispatch mode forces masks the zeros
    # (masked_fill, where) or loops over positions (prod, stack).
    trace, _ = trained
    renderer = next(c for c in trace.calls if c.path == "renderer")
    names = [k.name for k in renderer.backward_kernels]
    assert names.count("cumsum") == 1 and "div" in names
    assert not {"masked_fill", "where", "prod", "stack"} & set(names)


@needs_torch
def test_the_engine_s_gradient_sums_are_recorded_as_it_runs_them(trained) -> None:
    # Oracle: torch's profiler on an unrecorded backward of the same model. The sums the
    # autograd engine runs between nodes (parent: the engine's evaluate_function, not a
    # node) are in place (add_) unless the buffered gradient is a strided view; the
    # recording mode would make every one of them out of place.
    import collections

    import tiny_nerf
    import torch

    trace, _ = trained
    model, inputs = tiny_nerf.build()
    output = model(*inputs)
    loss = (output[0] if isinstance(output, tuple) else output).square().mean()
    with torch.profiler.profile(record_shapes=True) as profile:
        loss.backward()
    engine = collections.Counter(
        (e.name.removeprefix("aten::"), tuple(e.input_shapes[0]))
        for e in profile.events()
        if e.name in ("aten::add", "aten::add_")
        and e.cpu_parent is not None
        and e.cpu_parent.name.startswith("autograd::engine::evaluate_function")
    )
    recorded = collections.Counter(
        (k.name, tuple(k.inputs[0])) for k in trace.train.loss_kernels if k.name in ("add", "add_")
    )
    assert recorded == engine and engine["add_", (4, 256, 2)] == 3  # the grid's 4 levels
    assert all(
        k.memory == ("reused" if k.name == "add_" else "fresh")
        for k in trace.train.loss_kernels
        if k.name in ("add", "add_")
    )


@needs_torch
def test_a_training_trace_round_trips_and_a_forward_trace_is_unchanged(
    trained, tmp_path: Path
) -> None:
    import json

    import tiny_nerf

    from nerframe.trace import capture
    from nerframe.trace.tracefile import read_trace, write_trace

    trace, _ = trained
    written = write_trace(trace, tmp_path / "t.trace.json")
    assert read_trace(written) == trace
    # written only where recorded: the grid's scatters into its table
    assert written.read_text().count('"max_row_lookups": ') == tiny_nerf.LEVELS

    model, inputs = tiny_nerf.build()
    forward = capture(model, *inputs, repeats=1)
    document = json.loads(write_trace(forward, tmp_path / "f.trace.json").read_text())
    assert "train" not in document and "backward_s" not in document["calls"][0]


@needs_torch
@pytest.mark.filterwarnings("ignore")
def test_the_graph_of_a_training_trace_holds_backward_ops(trained, tmp_path: Path) -> None:
    import tiny_nerf

    from nerframe.trace import trace_graph

    trace, params = trained
    maps = tmp_path / "tiny.yaml"
    maps.write_text(tiny_nerf.MAP)
    g = trace_graph(trace, [maps])
    n = (g.ops.height - 1) // 2
    assert g.kind == "training"
    assert g.ops["backward"].to_list() == [False] * n + [True] * n + [False]
    assert g.ops["op_type"].to_list()[:n] == g.ops["op_type"].to_list()[n : 2 * n]
    measured = g.measured
    by_path = {c.path: c for c in trace.calls}
    for row in measured.head(2 * n).iter_rows(named=True):
        call = by_path[row["path"]]
        assert row["measured_s"] == (call.backward_s if row["backward"] else call.time_s)
    edges = set(g.edges.select("src", "dst").rows())
    forward = {(a, b) for a, b in edges if a < n and b < n}
    assert forward and {(b + n, a + n) for a, b in forward} <= edges  # gradients flow back
    assert {(i, i + n) for i in range(n)} <= edges  # a backward op after its forward
    # the Adam step: one update over the model's own parameter count, after every
    # gradient, measured at the step's time with the step's kernels
    step = g.ops.row(2 * n, named=True)
    assert (step["op_type"], step["B"], step["N"]) == ("AdamUpdate", params, 1)
    assert step["bitwidth"] == 32 and step["scope"] == "frame"
    assert {(i, 2 * n) for i in range(n, 2 * n)} <= edges
    row = measured.row(2 * n, named=True)
    assert (row["path"], row["class"]) == ("(optimizer)", "torch.optim.Adam")
    assert row["measured_s"] == trace.train.optimizer_s
    assert [k["name"] for k in row["kernels"]] == [k.name for k in trace.train.optimizer_kernels]
    assert row["modules"] == 0


def test_the_training_profile_splits_an_iteration_s_kernels_by_phase(monkeypatch) -> None:
    # benchmarks/train_profile.py, the GPU check's kernel profile of a training
    # iteration, on the CPU: every kernel falls in the forward, the backward or the
    # optimizer step, and the backward holds the hash grid's scatter into its table
    pytest.importorskip("torch", reason="optional: the profile needs torch (nerframe[trace])")
    sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
    try:
        import train_profile
    finally:
        sys.path.pop(0)
    monkeypatch.setattr(train_profile, "WARMUP", 1)
    monkeypatch.setattr(train_profile, "TIMED", 1)
    record = train_profile.profile("hashgrid", "cpu")
    assert record["device"] == "cpu" and set(record["phase_s"]) == set(train_profile.PHASES)
    phases = {r["name"]: r["phase"] for r in record["kernels"]}
    assert {r["phase"] for r in record["kernels"]} <= {*train_profile.PHASES, "other"}
    assert phases["aten::_index_put_impl_"] == "backward"
    assert phases["aten::addmm"] == "forward"
    seconds = [r["seconds"] for r in record["kernels"]]
    assert seconds == sorted(seconds, reverse=True) and seconds[0] > 0

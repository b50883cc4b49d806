"""Trace ingestion and capture overhead.

- reading a synthetic trace of 16,000 module calls (a model of 2,000 fields, each
  a hash grid and a 3-layer MLP with its ReLUs) into its graph: checking the file,
  classifying, resolving provenance, validating the graph and its costs must stay
  within 8× of merely parsing the file's JSON (``json.loads``), and linear in size.
- capture of the tiny NeRF of the tests (torch): the recorded structure run
  (hooks + provenance mode) against a plain forward pass, as a ratio.

Run with ``pytest benchmarks/test_bench_trace.py``.
"""

from __future__ import annotations

import importlib.util
import json
import sys
from pathlib import Path

import pytest
from pytest_benchmark.fixture import BenchmarkFixture

from nerframe.trace import Call, Trace, trace_graph, write_trace
from nerframe.trace.tracefile import parse_trace

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))

FIELDS = 2_000
MODULE = "torch.nn.modules.module.Module"
LINEAR = ["torch.nn.modules.linear.Linear", MODULE]
RELU = ["torch.nn.modules.activation.ReLU", MODULE]
MAP = """
classes:
  bench.Grid:
    op_type: HashEncoding
    params: {B: 64, N: 32, input_dim: "in[0][-1]", num_levels: attr.levels}
  bench.MLP: {op_type: MLP, rule: linear_layers}
"""


def _trace() -> Trace:
    calls: list[Call] = []

    def add(parent, path, classes, inputs, outputs, sources, output_sources, **attrs):
        calls.append(
            Call(
                len(calls),
                parent,
                path,
                classes,
                attrs,
                {},
                inputs,
                outputs,
                sources,
                output_sources,
                1e-5,
            )
        )
        return len(calls) - 1

    rows = 64 * 32
    previous: list[tuple[int, int]] = []
    for f in range(FIELDS):
        field = add(
            None, f"f{f}", ["bench.Field", MODULE], [[rows, 3]], [[rows, 4]], previous, [[]]
        )
        grid = add(
            field,
            f"f{f}.grid",
            ["bench.Grid", MODULE],
            [[rows, 3]],
            [[rows, 32]],
            previous,
            [previous],
            levels=16,
        )
        mlp = add(
            field, f"f{f}.mlp", ["bench.MLP", MODULE], [[rows, 32]], [[rows, 4]], [(grid, 0)], [[]]
        )
        source = (grid, 0)
        for i, (fan_in, fan_out) in enumerate([(32, 64), (64, 64), (64, 4)]):
            lin = add(
                mlp,
                f"f{f}.mlp.{i}",
                LINEAR,
                [[rows, fan_in]],
                [[rows, fan_out]],
                [source],
                [[source]],
                in_features=fan_in,
                out_features=fan_out,
            )
            source = (lin, 0)
            if i < 2:
                relu = add(
                    mlp,
                    f"f{f}.mlp.act",
                    RELU,
                    [[rows, fan_out]],
                    [[rows, fan_out]],
                    [source],
                    [[source]],
                )
                source = (relu, 0)
        calls[mlp].output_sources[0].append(source)
        calls[field].output_sources[0].append((mlp, 0))
        previous = [(field, 0)]
    return Trace("bench", calls, total_s=1.0)


@pytest.fixture(scope="module")
def trace_file(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    folder = tmp_path_factory.mktemp("trace")
    maps = folder / "bench.yaml"
    maps.write_text(MAP)
    return write_trace(_trace(), folder / "bench.trace.json"), maps


@pytest.mark.quick
def test_bench_trace_graph(
    benchmark: BenchmarkFixture, measure, target, best_of, trace_file
) -> None:
    path, maps = trace_file
    text = path.read_text()
    g, best = measure(lambda: trace_graph(parse_trace(json.loads(text)), [maps]), rounds=3)
    assert g.ops.height == 2 * FIELDS and g.edges.height == 2 * FIELDS - 1
    parse = best_of(lambda: json.loads(text))
    calls = len(json.loads(text)["calls"])
    ratio = best / parse
    benchmark.extra_info.update(calls=calls, calls_per_s=calls / best, vs_json=ratio)
    target(ratio < 8, f"reading the trace into a graph took {ratio:.1f}x parsing its JSON")


@pytest.mark.quick
@pytest.mark.skipif(
    importlib.util.find_spec("torch") is None, reason="optional: torch not installed"
)
def test_bench_capture_overhead(benchmark: BenchmarkFixture, measure, best_of) -> None:
    import tiny_nerf
    import torch

    from nerframe.trace.capture import capture

    model, inputs = tiny_nerf.build()
    with torch.no_grad():
        plain = best_of(lambda: model(*inputs), repeat=20)
    _, best = measure(capture, model, *inputs, repeats=1, warmup=0, rounds=5)
    benchmark.extra_info.update(plain_forward_s=plain, capture_vs_forward=best / plain)

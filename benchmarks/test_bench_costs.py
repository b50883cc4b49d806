"""Cost kernel throughput on a 10-million-row table mixing all 32 op types.

Figures (in ``benchmark.extra_info``): kernel rows/s (outputs preallocated),
``nerframe.costs`` end-to-end rows/s (allocation included), the scalar
reference's rows/s, and the ratios kernel/reference and kernel time over the
time of copying its input columns once (the floor for a bandwidth-bound kernel). Run with
``pytest benchmarks/test_bench_costs.py --benchmark-only``.
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pytest

import nerframe
from nerframe.costing import _view
from nerframe.kernels.costs import ARGUMENTS, cost_columns, cost_kernel, kernel_arguments
from nerframe.kernels.reference_costs import reference_cost
from nerframe.taxonomy import op_types

ROWS = 10_000_000


def prototype() -> pl.DataFrame:
    """One valid row of every op type."""
    records = []
    for t in op_types().values():
        record = {"op_type": t.name, "B": 4096, "N": 64, "G": 262_144}
        record = {k: v for k, v in record.items() if k in t.parameters or k == "op_type"}
        if t.name == "MLP":
            record |= {"in_dim": 32, "num_layers": 4, "layer_width": 64, "skip_connections": [2]}
        records.append(record | {"backward": len(records) % 3 == 0})
    return nerframe.operators(records)


@pytest.fixture(scope="module")
def big() -> pl.DataFrame:
    picks = np.random.default_rng(7).integers(0, 32, ROWS)
    ops = prototype()[picks].with_columns(op_id=pl.int_range(ROWS, dtype=pl.Int32))
    return ops.rechunk()


@pytest.fixture(scope="module")
def reference_rate(best_of) -> float:
    rows = list(prototype()[np.arange(20_000) % 32].iter_rows(named=True))
    seconds = best_of(lambda: [reference_cost(r) for r in rows], repeat=1)
    return len(rows) / seconds


def test_cost_kernel(benchmark, best_of, big: pl.DataFrame, reference_rate: float) -> None:
    views = {name: _view(big.get_column(name)) for name in ARGUMENTS}
    inputs = kernel_arguments(views)
    # Outputs are allocated (and their pages touched) once, outside the timing.
    outputs = (np.ones(ROWS), np.ones((3, ROWS), np.int64), np.ones((4, ROWS)), np.ones(ROWS))
    benchmark.pedantic(cost_kernel, args=(*inputs, *outputs), rounds=5, iterations=1)
    kernel_rate = ROWS / benchmark.stats.stats.min
    plain = [v for v in inputs if isinstance(v, np.ndarray) and v.size >= ROWS]
    copies = [np.ones_like(v) for v in plain]
    copy_seconds = best_of(lambda: [np.copyto(c, v) for c, v in zip(copies, plain, strict=True)])
    benchmark.extra_info.update(
        rows=ROWS,
        kernel_rows_per_s=round(kernel_rate),
        reference_rows_per_s=round(reference_rate),
        speedup_vs_reference=round(kernel_rate / reference_rate),
        kernel_over_input_copy=round(benchmark.stats.stats.min / copy_seconds, 2),
    )
    assert kernel_rate >= 100 * reference_rate


def test_costs_end_to_end(benchmark, best_of, big: pl.DataFrame, reference_rate: float) -> None:
    views = {name: _view(big.get_column(name)) for name in ARGUMENTS}
    kernel_seconds = best_of(lambda: cost_columns(views))
    result = benchmark.pedantic(nerframe.costs, args=(big,), rounds=3, iterations=1)
    rate = ROWS / benchmark.stats.stats.min
    benchmark.extra_info.update(
        rows=ROWS,
        end_to_end_rows_per_s=round(rate),
        speedup_vs_reference=round(rate / reference_rate),
        share_of_kernel_rate=round(kernel_seconds / benchmark.stats.stats.min, 2),
    )
    assert result.height == ROWS
    # Validation and conversion may cost at most 1.5x the kernel's own time.
    assert kernel_seconds / benchmark.stats.stats.min >= 0.4

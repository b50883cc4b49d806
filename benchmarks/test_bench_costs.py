"""Cost kernel throughput on a 10-million-row table mixing all 32 op types.

Figures (in ``benchmark.extra_info``): kernel rows/s (outputs preallocated),
``nerframe.costs`` end-to-end rows/s (validation and allocation included), the
scalar reference's rows/s, and same-run ratios: kernel/reference, and kernel
and end-to-end time over the time of copying the kernel's input columns once
(the floor for a bandwidth-bound pass). Run with
``pytest benchmarks/test_bench_costs.py --benchmark-only``.
"""

from __future__ import annotations

import os

import numpy as np
import polars as pl
import pytest

import nerframe
from nerframe.costing import _arrow, _view
from nerframe.kernels.cost_inputs import cost_inputs, cost_outputs
from nerframe.kernels.costs import COLUMNS, cost_kernel
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


@pytest.fixture(scope="module")
def copy_seconds(best_of, big: pl.DataFrame) -> float:
    """Time to copy every full-length input column of the kernel once."""
    plain = [big.get_column(name).to_numpy() for name in COLUMNS]
    plain = [v for v in plain if v.dtype != object]
    copies = [np.ones_like(v) for v in plain]
    return best_of(lambda: [np.copyto(c, v) for c, v in zip(copies, plain, strict=True)])


def test_cost_kernel(
    benchmark, big: pl.DataFrame, reference_rate: float, copy_seconds: float
) -> None:
    inputs = cost_inputs({name: _view(_arrow(big.get_column(name))) for name in COLUMNS})
    outputs = cost_outputs(ROWS)
    for array in outputs:
        array.fill(1)  # touch the pages once, outside the timing
    benchmark.pedantic(cost_kernel, args=(inputs, outputs), rounds=5, iterations=1)
    kernel_rate = ROWS / benchmark.stats.stats.min
    benchmark.extra_info.update(
        rows=ROWS,
        kernel_rows_per_s=round(kernel_rate),
        reference_rows_per_s=round(reference_rate),
        speedup_vs_reference=round(kernel_rate / reference_rate),
        kernel_over_input_copy=round(benchmark.stats.stats.min / copy_seconds, 2),
    )
    assert kernel_rate >= 100 * reference_rate


def test_costs_end_to_end(
    benchmark, big: pl.DataFrame, reference_rate: float, copy_seconds: float
) -> None:
    result = benchmark.pedantic(nerframe.costs, args=(big,), rounds=3, iterations=1)
    seconds = benchmark.stats.stats.min
    rate = ROWS / seconds
    benchmark.extra_info.update(
        rows=ROWS,
        end_to_end_rows_per_s=round(rate),
        speedup_vs_reference=round(rate / reference_rate),
        end_to_end_over_input_copy=round(seconds / copy_seconds, 2),
        load_average_1min=round(os.getloadavg()[0], 2),
    )
    assert result.height == ROWS
    # Issue 10's target; on a machine shared with other jobs, read it together
    # with the load average and the copy ratio recorded above.
    assert rate >= 60e6

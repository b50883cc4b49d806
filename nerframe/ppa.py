"""The PPA formulas shared by scheduling, rooflines, sweeps and charts.

Each formula is written once, over plain arithmetic, so it applies equally to
Python floats, NumPy arrays (one value per configuration) and polars expressions.
Units are in the names: MHz clocks, GB/s bandwidths (decimal, 1 GB = 1e9 B),
TFLOP/s peaks.

>>> peak_tflops(2048, 1000.0), bytes_per_cycle(512.0, 1000.0), ridge(2.048, 512.0)
(2.048, 512.0, 4.0)
"""

from __future__ import annotations

from typing import Any

import polars as pl

Value = Any
"""A float, a NumPy array (one value per configuration) or a polars expression."""


def peak_tflops(ops_per_cycle: Value, frequency_mhz: Value) -> Value:
    """Peak rate in TFLOP/s of units doing `ops_per_cycle` FLOPs per cycle in total."""
    return ops_per_cycle * frequency_mhz * 1e6 / 1e12


def bytes_per_cycle(bandwidth_gbps: Value, frequency_mhz: Value) -> Value:
    """DRAM bytes deliverable per clock cycle."""
    return bandwidth_gbps * 1e9 / (frequency_mhz * 1e6)


def ridge(peak: Value, bandwidth_gbps: Value) -> Value:
    """Arithmetic intensity (FLOP/byte) where the compute roof (TFLOP/s) meets the memory roof."""
    return peak * 1e12 / (bandwidth_gbps * 1e9)


def attainable(peak: pl.Expr, bandwidth_gbps: pl.Expr, intensity: pl.Expr) -> pl.Expr:
    """Attainable FLOP/s at `intensity` FLOP/byte: ``min(peak, intensity * bandwidth)``.

    >>> pl.select(attainable(pl.lit(2.0), pl.lit(100.0), pl.lit(4.0))).item()
    400000000000.0
    """
    return pl.min_horizontal(peak * 1e12, intensity * bandwidth_gbps * 1e9)

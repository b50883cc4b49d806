"""The sweep table's schema (`nerframe.schemas.SWEEP_*`) is the one declaration of
its columns: a sweep's rows, the kernel's result rows, the spec's figures and the
sensitivity query's list of non-axis columns all agree with it."""

from __future__ import annotations

import re
from pathlib import Path

import polars as pl

import nerframe
from nerframe.kernels.sweep_chunk import CONSTRAINED, FLOAT_ROWS, INT_ROWS
from nerframe.schemas import SWEEP_CYCLES, SWEEP_FIGURES, SWEEP_LABELS, SWEEP_OBJECTIVES
from nerframe.sweeps.spec import FIGURES

ROOT = Path(__file__).resolve().parents[1]


def test_a_sweep_s_columns_are_the_schema_s_around_its_axes() -> None:
    rows = nerframe.sweep(
        "neurex", "neurex", {"frequency_mhz": [500, 1000]}, workload={"rays": [1024]}
    )
    assert rows.columns == [
        "graph",
        "accelerator",
        "rays",
        "config",
        "frequency_mhz",
        "batches",
        *SWEEP_CYCLES,
        *SWEEP_FIGURES,
        "bottleneck_module",
        "feasible",
    ]
    assert set(SWEEP_LABELS) | {"rays", "frequency_mhz"} | {*SWEEP_CYCLES, *SWEEP_FIGURES} == set(
        rows.columns
    )
    for name, dtype in {**SWEEP_CYCLES, **SWEEP_FIGURES}.items():
        assert rows.schema[name] == dtype, name
    assert rows.schema["feasible"] == pl.Boolean


def test_the_kernel_s_result_rows_name_the_schema_s_columns() -> None:
    """The kernel keeps its own row layout (kernels import nothing from the API
    layer); its names must be the schema's."""
    assert set(INT_ROWS) == {"config", *SWEEP_CYCLES, "bottleneck"}
    assert set(FLOAT_ROWS) == set(SWEEP_FIGURES)
    assert set(CONSTRAINED) == set(SWEEP_OBJECTIVES)
    assert FIGURES == SWEEP_OBJECTIVES
    assert set(SWEEP_OBJECTIVES) <= {*SWEEP_CYCLES, *SWEEP_FIGURES}


def test_the_sensitivity_query_excludes_exactly_the_non_axis_columns() -> None:
    """sensitivity.sql lists the columns that are not axes (cycle counts go by their
    suffix): the schema's labels and figures."""
    sql = (ROOT / "queries" / "sensitivity.sql").read_text()
    listed = re.search(r"c NOT IN \((.*?)\)", sql, re.S)
    assert listed is not None
    names = set(re.findall(r"'([^']+)'", listed.group(1)))
    assert names == {*SWEEP_LABELS, *SWEEP_FIGURES}
    assert all(name.endswith("_cycles") for name in SWEEP_CYCLES)

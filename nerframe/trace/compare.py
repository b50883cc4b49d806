"""Measured vs predicted: each traced op's measured time beside its predicted time.

The prediction is the host model's (`nerframe.trace.host`: fixed costs plus each
kernel's time at the rates ``nerframe probe`` measured on this machine) when given
a `HostModel`, the GPU kernel model's (`nerframe.gpu`: each kernel's launch cost and
work on that GPU) when given a `GpuModel`, else the op's roofline time on a system:
the larger of its FLOPs over the peak and its bytes over the bandwidth. ``ratio`` is measured over
predicted; ``log_error`` is ``|log10(ratio)|`` (1.0: off by 10×), and
`median_log_error` summarises a comparison in one number.

>>> import polars as pl
>>> median_log_error(pl.DataFrame({"log_error": [0.5, 1.0, None, 2.0]}))
1.0
"""

from __future__ import annotations

import polars as pl

from nerframe import schemas
from nerframe.errors import InvalidInputError, NerframeError
from nerframe.gpu import GpuModel, foreach
from nerframe.rooflines import System, roofline
from nerframe.trace.host import HostModel, predict_kernels
from nerframe.trace.ingest import OPTIMIZER_PATH
from nerframe.trace.tracefile import Kernel


def _typed(table: pl.DataFrame) -> pl.DataFrame:
    """`table` with the columns of `schemas.MEASURED`, in order and typed."""
    return table.select(pl.col(name).cast(dtype) for name, dtype in schemas.MEASURED.items())


def compare(
    measured: pl.DataFrame, system: System | str | HostModel | GpuModel = "host"
) -> pl.DataFrame:
    """One row per traced op (a `TracedGraph`'s ``measured`` table): measured and
    predicted seconds on `system` (a roofline system, or the host model), their
    ratio and its |log10|. An op predicted to take no time (no FLOPs, no bytes) or
    measured at 0 has no ratio.

    >>> from nerframe.trace import Call, Trace, trace_graph
    >>> linear = ["torch.nn.modules.linear.Linear"]
    >>> calls = [Call(0, None, "fc", linear, {"in_features": 4, "out_features": 4}, {},
    ...               [[500, 4]], [[500, 4]], [], [[]], 2e-4)]
    >>> g = trace_graph(Trace("fc", calls))
    >>> row = compare(g.measured, System("slow", 1e-6, 1.0)).row(0, named=True)
    >>> row["predicted_s"], row["ratio"], row["bound"]  # 16,000 FLOPs at 1 MFLOP/s
    (0.016, 0.0125, 'compute')
    """
    missing = [c for c in ("measured_s", "path", "approximate") if c not in measured.columns]
    if missing:
        raise InvalidInputError(f"compare: not a traced graph's measured table (no {missing[0]})")
    if isinstance(system, HostModel | GpuModel):
        predicted = _host_predictions(measured, system)
    else:
        predicted = roofline(measured, [system]).select(
            "op_id", "system", pl.col("time_s").alias("predicted_s"), "bound"
        )
    valid = (pl.col("predicted_s") > 0) & (pl.col("measured_s") > 0)
    return _typed(
        measured.join(predicted, on="op_id", how="left", maintain_order="left")
        .with_columns(
            ratio=pl.when(valid).then(pl.col("measured_s") / pl.col("predicted_s")),
        )
        .with_columns(log_error=pl.col("ratio").log10().abs())
    )


def _host_predictions(measured: pl.DataFrame, model: HostModel | GpuModel) -> pl.DataFrame:
    """Each row's host-model (or GPU-model) time: from its kernels, else (no kernels
    recorded) its costs."""
    has_kernels = "kernels" in measured.columns
    seconds: list[float] = []
    bounds: list[str] = []
    name = model.name if isinstance(model, GpuModel) else "host"
    for row in measured.iter_rows(named=True):
        records = row["kernels"] if has_kernels else None
        if records:
            # module calls whose fixed cost the op pays (none for an optimizer step;
            # a measured table without the column counts one)
            modules = 1 if row.get("modules") is None else row["modules"]
            kernels = [Kernel(**k) for k in records]
            if isinstance(model, GpuModel):
                if row["path"] == OPTIMIZER_PATH:
                    kernels = foreach(kernels)
                p = model.predict(kernels, modules)
            else:
                p = predict_kernels(model, kernels, modules)
            seconds.append(p.total_s)
            bounds.append(p.bound)
        elif isinstance(model, GpuModel):
            seconds.append(model.costs_seconds(row["flops"], row["bytes_total"]))
            bounds.append("memory")
        else:
            seconds.append(model.costs_seconds(row["flops"], row["bytes_total"]))
            best = max(g[4] for g in model.gemm)
            memory = row["bytes_total"] / model.bandwidth(max(row["bytes_total"], 1.0))
            bounds.append("compute" if row["flops"] / best >= memory else "memory")
    return pl.DataFrame(
        {
            "op_id": measured["op_id"],
            "system": pl.Series([name] * measured.height, dtype=pl.String),
            "predicted_s": pl.Series(seconds, dtype=pl.Float64),
            "bound": pl.Series(bounds, dtype=pl.String),
        }
    )


def median_log_error(comparison: pl.DataFrame) -> float | None:
    """The median ``log_error`` of a comparison (ops without a ratio left out), or None."""
    value = comparison["log_error"].drop_nulls().median()
    return None if value is None else float(value)  # type: ignore[arg-type]


def compare_on_host(measured: pl.DataFrame) -> pl.DataFrame:
    """`compare` on this machine: with the host model of a stored probe result (a
    version-1 result: its roofline, as before); without one the predicted columns
    are null (the report then says to run ``nerframe probe``)."""
    from nerframe.probing import host_predictor

    try:
        host = host_predictor()
    except NerframeError:
        return _typed(
            measured.with_columns(
                system=pl.lit("host"),
                predicted_s=pl.lit(None, pl.Float64),
                ratio=pl.lit(None, pl.Float64),
                log_error=pl.lit(None, pl.Float64),
                bound=pl.lit(None, pl.String),
            )
        )
    return compare(measured, host)

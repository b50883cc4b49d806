"""Validation against published figures, and the calibration that precedes it.

A packaged table (``nerframe/published.csv``) lists figures the papers publish:
accelerator, pipeline, metric, value, unit, source and a tag. Rows tagged
``calibration`` fix model parameters the papers do not give directly
(`calibrate`); rows tagged ``validation`` are never used to set anything and
measure the model (`validate`): each gets the model's prediction and its error,
``predicted / published - 1``.

A row may name the workload its paper evaluated (column ``workload``,
``key=value`` pairs separated by ``;``, passed to `nerframe.pipeline`; the
baseline of a speed-up runs the same workload), and a published figure that is
an upper bound ("up to", a budget met) is marked ``bound`` = ``upper``: its
*score* is 0 when the prediction stays within the bound, else the excess over
it. Point figures score their error. The summary is over the scores.

Metrics: ``fps``, ``samples_per_s``, ``avg_power_w``, ``energy_per_sample_uj``,
``area_mm2``, ``speedup`` (fps over the fps of ``baseline`` running
``baseline_pipeline``, default the same pipeline), and for one op type
``op_speedup`` and ``op_energy_ratio`` (its time and energy on ``baseline`` over
those on the accelerator).
"""

from __future__ import annotations

import math
import statistics
from collections.abc import Callable
from dataclasses import replace
from functools import cache
from pathlib import Path
from typing import Any

import polars as pl

from nerframe.accelerator_model import Accelerator
from nerframe.builtin_pipelines import pipeline
from nerframe.errors import NerframeError
from nerframe.hardware import GPUS, accelerator
from nerframe.scheduling import Schedule, schedule

PUBLISHED = Path(__file__).with_name("published.csv")
"""The packaged table of published figures."""

TARGET_MEDIAN = 0.25
"""Target median |error| over the validation rows."""

_SCHEMA = {
    "id": pl.String(),
    "accelerator": pl.String(),
    "pipeline": pl.String(),
    "metric": pl.String(),
    "op_type": pl.String(),
    "baseline": pl.String(),
    "baseline_pipeline": pl.String(),
    "workload": pl.String(),
    "value": pl.Float64(),
    "unit": pl.String(),
    "bound": pl.String(),
    "tag": pl.String(),
    "source": pl.String(),
}


def published() -> pl.DataFrame:
    """The packaged table of published figures, one row per figure.

    >>> published().filter(id="icarus-area")["value"].item()
    16.5
    """
    table = pl.read_csv(PUBLISHED, schema=_SCHEMA)
    for row in table.iter_rows(named=True):
        if row["bound"] not in (None, "upper"):
            raise NerframeError(
                f"{PUBLISHED}: row {row['id']}: bound {row['bound']!r} is not empty or 'upper'"
            )
        _workload(row)
    return table


Accelerators = Callable[[str], Accelerator]


def validate(hardware: Accelerators | None = None) -> pl.DataFrame:
    """Every published figure with the model's prediction and the error.

    Columns: those of `published` plus ``predicted``, ``error``
    (``predicted / value - 1``) and ``score`` (the error; for an upper bound,
    0 when ``predicted <= value``, else the error). `hardware` loads an
    accelerator by name (None: `nerframe.accelerator`, the built-ins; pass another
    to validate modified figures).

    >>> table = validate()
    >>> sorted(set(table["tag"]))
    ['calibration', 'validation']
    >>> table.filter(id="icarus-area").select("value", "predicted").row(0)  # mm²
    (16.5, 9.980348)
    """
    predict = _Predictor(hardware or accelerator)
    table = published()
    predicted = [predict(row) for row in table.iter_rows(named=True)]
    error = pl.col("predicted") / pl.col("value") - 1
    upper = pl.col("bound") == "upper"
    return table.with_columns(predicted=pl.Series(predicted, dtype=pl.Float64)).with_columns(
        error=error,
        score=pl.when(upper.fill_null(False)).then(pl.max_horizontal(error, 0.0)).otherwise(error),
    )


def summary(table: pl.DataFrame) -> str:
    """One line: median and max |score| over the validation rows, the worst row, how
    many are within 2x of the published figure, how many upper bounds are met, and
    the median over the point figures alone (a met bound scores 0, which would
    otherwise flatter the median).

    >>> import polars as pl
    >>> t = pl.DataFrame({"id": ["a", "b", "c", "d"], "tag": ["validation"] * 4,
    ...                   "bound": [None, None, None, "upper"],
    ...                   "score": [0.1, -0.5, 0.2, 0.0]})
    >>> summary(t)  # doctest: +NORMALIZE_WHITESPACE
    'validation: 4 rows, median |error| 15.0 %, max |error| 50.0 % (b), within 2x: 4 of 4;
     upper bounds ("up to", budgets) score 0 when met, else their excess: 1 of 1 met;
     median over the 3 point figures alone 20.0 %; target median <= 25 %: met'
    """
    rows = table.filter(tag="validation")
    scores = list(rows["score"])
    errors = [abs(e) for e in scores]
    if not errors:
        return "validation: no validation rows"
    worst = rows["id"][max(range(len(errors)), key=errors.__getitem__)]
    median = statistics.median(errors)
    verdict = "met" if median <= TARGET_MEDIAN else "NOT met"
    within = sum(0.5 <= 1 + e <= 2 for e in scores)
    bounds = [e for e, b in zip(scores, rows["bound"], strict=True) if b == "upper"]
    points = [abs(e) for e, b in zip(scores, rows["bound"], strict=True) if b != "upper"]
    alone = f"{100 * statistics.median(points):.1f} %" if points else "n/a"
    return (
        f"validation: {len(errors)} rows, median |error| {100 * median:.1f} %, "
        f"max |error| {100 * max(errors):.1f} % ({worst}), within 2x: {within} of {len(errors)}; "
        'upper bounds ("up to", budgets) score 0 when met, else their excess: '
        f"{sum(e == 0 for e in bounds)} of {len(bounds)} met; "
        f"median over the {len(points)} point figures alone {alone}; "
        f"target median <= {100 * TARGET_MEDIAN:.0f} %: {verdict}"
    )


def calibrate(hardware: Accelerators | None = None) -> pl.DataFrame:
    """The parameters the calibration rows fix, computed from those rows only.

    One row per (accelerator, parameter): the calibrated value, rounded to four
    significant digits, and the published row it comes from. The built-in files
    hold these values (a test checks it).

    - ``icarus`` ``mlp_engine.throughput_ops_per_cycle`` from ``icarus-throughput``;
      its module powers, scaled together, from ``icarus-power``;
    - ``xavier_nx`` efficiency from ``xavier-nerf``; ``orin_nx`` efficiency from
      ``orin-3dgs`` (also used, as an assumption, by rtx3090, a100 and h100);
    - ``gaurast`` ``gaussian_rasterizer`` throughput and power from the two
      ``gaurast-raster-*`` rows.
    """
    rows = {r["id"]: r for r in published().filter(tag="calibration").iter_rows(named=True)}
    found: list[dict[str, object]] = []
    loaded: dict[str, Accelerator] = {}

    load = hardware or accelerator

    def current(name: str) -> Accelerator:
        return loaded.get(name) or load(name)

    def fit(
        row_id: str,
        name: str,
        parameter: str,
        change: Callable[[Accelerator, float], Accelerator],
        start: float,
        power: float,
    ) -> None:
        row = rows[row_id]
        value = start
        for _ in range(8):  # fixed point: each step rescales by (target / predicted)^power
            predicted = _Predictor(_swap(current, name, change(current(name), value)))(row)
            value *= (row["value"] / predicted) ** power
        value = float(f"{value:.4g}")
        if parameter == "efficiency":
            value = min(value, 1.0)  # a GPU cannot beat its peak: the row stays unmet
        loaded[name] = change(current(name), value)
        found.append({"accelerator": name, "parameter": parameter, "value": value, "row": row_id})

    icarus = current("icarus")
    mlp = icarus.module_index("mlp_engine")
    fit(
        "icarus-throughput",
        "icarus",
        "mlp_engine.throughput_ops_per_cycle",
        lambda a, v: _set_module(a, mlp, "throughput_ops_per_cycle", v),
        icarus.modules[mlp].throughput_ops_per_cycle,
        1.0,
    )
    fit(
        "icarus-power",
        "icarus",
        "power_scale (of every module's power_uw; 1 once applied)",
        _scale_power,
        1.0,
        1.0,
    )
    for gpu, row_id in (("xavier_nx", "xavier-nerf"), ("orin_nx", "orin-3dgs")):
        fit(row_id, gpu, "efficiency", _set_efficiency, current(gpu).memory_efficiency, 1.0)
    rast = current("gaurast").module_index("gaussian_rasterizer")
    fit(
        "gaurast-raster-speed",
        "gaurast",
        "gaussian_rasterizer.throughput_ops_per_cycle",
        lambda a, v: _set_module(a, rast, "throughput_ops_per_cycle", v),
        current("gaurast").modules[rast].throughput_ops_per_cycle,
        1.0,
    )
    fit(
        "gaurast-raster-energy",
        "gaurast",
        "gaussian_rasterizer.power_uw",
        lambda a, v: _set_module(a, rast, "power_uw", v),
        current("gaurast").modules[rast].power_uw,
        -1.0,
    )
    return pl.DataFrame(found)


def _swap(hardware: Accelerators, name: str, accel: Accelerator) -> Accelerators:
    """`hardware` with `name` replaced by `accel`."""
    return lambda n: accel if n == name else hardware(n)


def _set_module(accel: Accelerator, index: int, field: str, value: float) -> Accelerator:
    modules = list(accel.modules)
    modules[index] = replace(modules[index], **{field: value})  # type: ignore[arg-type]
    return replace(accel, modules=tuple(modules))


def _scale_power(accel: Accelerator, scale: float) -> Accelerator:
    return replace(
        accel, modules=tuple(replace(m, power_uw=m.power_uw * scale) for m in accel.modules)
    )


def _set_efficiency(accel: Accelerator, efficiency: float) -> Accelerator:
    # a GPU's own modules and its DRAM share one calibrated efficiency
    modules = tuple(replace(m, efficiency=min(efficiency, 1.0)) for m in accel.modules)
    return replace(accel, modules=modules, memory_efficiency=min(efficiency, 1.0))


class _Predictor:
    """The model's value of a published row, scheduling each pair once."""

    def __init__(self, hardware: Accelerators) -> None:
        self.hardware = cache(hardware)
        self.runs: dict[tuple[str, str, str], Schedule] = {}

    def run(self, pipeline_name: str, accel: str, workload: str = "") -> Schedule:
        key = (pipeline_name, accel, workload)
        if key not in self.runs:
            graph = pipeline(pipeline_name, **_parse_workload(workload))
            self.runs[key] = schedule(graph, self.hardware(accel))
        return self.runs[key]

    def __call__(self, row: dict[str, object]) -> float:
        metric, accel, name = str(row["metric"]), str(row["accelerator"]), row["pipeline"]
        if metric == "area_mm2":
            area = self.hardware(accel).area_mm2
            if math.isnan(area):
                raise NerframeError(
                    f"published row {row['id']}: the area of {accel} is not published"
                )
            return area
        if not isinstance(name, str):
            raise NerframeError(f"published row {row['id']}: metric {metric} needs a pipeline")
        workload = _workload(row)
        summary = self.run(name, accel, workload).summary.row(0, named=True)
        samples = _samples_per_frame(name, workload)
        if metric == "fps":
            return summary["fps"]
        if metric == "samples_per_s":
            return summary["fps"] * samples
        if metric == "avg_power_w":
            return summary["avg_power_w"]
        if metric == "energy_per_sample_uj":
            return summary["energy_per_frame_j"] / samples * 1e6
        base = str(row["baseline"])
        if metric == "speedup":
            base_pipeline = row["baseline_pipeline"] or name
            baseline = self.run(str(base_pipeline), base, workload)
            return summary["fps"] / baseline.summary["fps"].item()
        if metric in ("op_speedup", "op_energy_ratio"):
            column = "duration_cycles" if metric == "op_speedup" else "energy_j"
            mine, theirs = (
                float(
                    self.run(name, a, workload)
                    .schedule.filter(op_type=row["op_type"])[column]
                    .sum()
                )
                for a in (accel, base)
            )
            if metric == "op_speedup":  # cycles at each design's own clock
                mine /= self.hardware(accel).frequency_mhz
                theirs /= self.hardware(base).frequency_mhz
            return theirs / mine
        raise NerframeError(f"published row {row['id']}: unknown metric {metric!r}")


_WORKLOAD = {
    "rays": int,
    "samples": int,
    "gaussians": int,
    "frame_pixels": int,
    "tiles_per_gaussian": int,
    "rendered_fraction": float,
}
"""The `nerframe.pipeline` parameters a published row's workload may set."""


def _workload(row: dict[str, object]) -> str:
    """A row's workload column ('' for the defaults), checked."""
    text = row.get("workload") or ""
    try:
        _parse_workload(str(text))
    except ValueError as e:
        raise NerframeError(f"{PUBLISHED}: row {row['id']}: workload {text!r}: {e}") from None
    return str(text)


def _parse_workload(text: str) -> dict[str, Any]:
    """``"frame_pixels=8334;samples=24"`` as `nerframe.pipeline` keyword arguments.

    >>> _parse_workload("frame_pixels=8334;rendered_fraction=0.5")
    {'frame_pixels': 8334, 'rendered_fraction': 0.5}
    """
    found: dict[str, Any] = {}
    for item in filter(None, (part.strip() for part in text.split(";"))):
        key, _, value = item.partition("=")
        kind = _WORKLOAD.get(key.strip())
        if kind is None:
            raise ValueError(f"unknown parameter {key.strip()!r}; known: {', '.join(_WORKLOAD)}")
        found[key.strip()] = kind(value.strip())
    return found


def _samples_per_frame(name: str, workload: str = "") -> float:
    g = pipeline(name, **_parse_workload(workload))
    first = g.ops.row(0, named=True)
    return float(first["B"] or 0) * float(first["N"] or 0) * g.batches


__all__ = ["GPUS", "calibrate", "published", "summary", "validate"]

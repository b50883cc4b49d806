"""Validation against published figures, and the calibration that precedes it.

A packaged table (``nerframe/published.csv``) lists figures the papers publish:
accelerator, pipeline, metric, value, unit, source and a tag. Rows tagged
``calibration`` fix model parameters the papers do not give directly
(`calibrate`), each naming the one parameter it fixes (column ``fixes``,
``accelerator.field``); rows tagged ``validation`` are never used to set anything
and measure the model (`validate`): each gets the model's prediction and its
error, ``predicted / published - 1``. Rows tagged ``circular`` are predicted too
but restate the model's own inputs (a total that is the sum of the figures the
model was built from, a figure that follows from calibration rows): shown, never
scored.

A row may name the workload its paper evaluated (column ``workload``,
``key=value`` pairs separated by ``;``, passed to `nerframe.pipeline`; the
baseline of a speed-up runs the same workload). ``a|b|c`` lists several values
of a key (a paper's mean over several scenes): the prediction is the mean of the
metric over them, except for ``fps``, whose mean is one over the mean frame time
(`FRAME_TIME_MEAN`). A published figure that is an upper bound ("up to", a budget
met) is marked ``bound`` = ``upper``: its *score* is 0 when the prediction stays
within the bound, else the excess over it. Point figures score their error. The
summary is over the scores.

Metrics: ``fps``, ``samples_per_s``, ``avg_power_w``, ``energy_per_sample_uj``,
``area_mm2`` (of the whole accelerator, or of the modules and SRAM blocks whose
names match the ``;``-separated patterns of column ``parts``), ``sram_area_mm2``
(the SRAM blocks matching ``parts``, all without it, as their capacity times the
node's SRAM density: what the model says of a design that publishes only
capacities, whatever areas its file gives), ``speedup`` (fps
over the fps of ``baseline`` running ``baseline_pipeline``, default the same
pipeline), ``energy_ratio`` (the baseline's energy per frame over the
accelerator's), and for the ``;``-separated op types of column ``op_type``:
``op_speedup`` and ``op_energy_ratio`` (their time and energy on ``baseline`` over
those on the accelerator), ``stage_share`` (their share of the frame's op time)
and ``stage_time_ms`` (their time per frame).

With ``bands``, `validate` also gives each row the range its prediction takes when
the assumed figures of its accelerators move across their ranges
(docs/uncertainty.md).

A row that needs a part of the model that is not built in yet (an accelerator
that is not built in, a workload key `nerframe.pipeline` does not take, a part
name that matches nothing) is *pending*: its prediction is null, column
``pending`` says what it waits for, and the summary counts it apart.
"""

from __future__ import annotations

import itertools
import math
import re
import statistics
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from fnmatch import fnmatchcase
from functools import cache
from pathlib import Path
from typing import Any, get_args, get_type_hints

import numpy as np
import polars as pl

from nerframe import technology
from nerframe.accelerator_model import Accelerator
from nerframe.builtin_pipelines import pipeline, reusing_pipelines
from nerframe.errors import InvalidInputError, NerframeError, check_flag
from nerframe.hardware import BUILTIN, GPUS, accelerator
from nerframe.scheduling import Schedule, schedule

PUBLISHED = Path(__file__).with_name("published.csv")
"""The packaged table of published figures."""

TARGET_MEDIAN = 0.15
"""Target median |score| over the validation rows."""

TARGET_WITHIN = 1.5
"""Target: every validation row within this factor of its published figure."""

WITHIN_BROADLY = 2.0
"""The wider factor `summary` also counts rows within (the measure of figures kept
outside the project: how many lie outside 2x)."""

FRAME_TIME_MEAN = "fps"
"""The metric whose mean over several workloads is one over the mean frame time
(the harmonic mean), not the mean of the per-workload values: the 3DGS authors
average frame times, not frame rates ("we iterated over the input views and
collected 100 frame times per view [...] which we then averaged", B. Kerbl in
graphdeco-inria/gaussian-splatting issue #351, on the FPS of the paper's tables),
and so do later 3DGS papers (Speedy-Splat, arXiv 2412.00578: "we actually measure
the rendering time of a scene [...] compute averages on those times, then convert
to FPS", j-alex-hanson/speedy-splat issue #18). Pooling the scenes of a dataset
with equal weight is an assumption (the papers do not give views per scene)."""

NERARCH_SIM = {"fps": 0.034, "area": 0.065}
"""The reference framework's own mean |error| per metric: NeRArch-Sim (ISCA 2026)
reports 3.4 % average FPS error and 6.5 % average area error against the published
figures of six designs on Lego (``published_bodies.md``, "The reference framework's
own accuracy")."""

TAGS = ("calibration", "validation", "circular")
"""Row tags: fixes a parameter, measures the model, restates the model's inputs."""

_SCHEMA = {
    "id": pl.String(),
    "accelerator": pl.String(),
    "pipeline": pl.String(),
    "metric": pl.String(),
    "op_type": pl.String(),
    "parts": pl.String(),
    "baseline": pl.String(),
    "baseline_pipeline": pl.String(),
    "workload": pl.String(),
    "value": pl.Float64(),
    "unit": pl.String(),
    "bound": pl.String(),
    "tag": pl.String(),
    "fixes": pl.String(),
    "source": pl.String(),
}

_FIXES = re.compile(r"[a-z0-9_]+(\.[A-Za-z0-9_]+)+")
"""One parameter: ``accelerator.field`` or ``accelerator.module.field``."""


def published() -> pl.DataFrame:
    """The packaged table of published figures, one row per figure, checked: unique
    ids, a known tag, ``fixes`` given on (and only on) calibration rows, naming one
    parameter of the row's accelerator, a well-formed workload.

    >>> published().filter(id="icarus-area")["value"].item()
    16.5
    >>> published().filter(id="icarus-power")["fixes"].item()
    'icarus.power_scale'
    """
    table = pl.read_csv(PUBLISHED, schema=_SCHEMA)
    seen: set[str] = set()
    for row in table.iter_rows(named=True):
        where = f"{PUBLISHED}: row {row['id']}"
        if row["id"] in seen:
            raise InvalidInputError(f"{where}: the id is used twice")
        seen.add(row["id"])
        if row["bound"] not in (None, "upper"):
            raise InvalidInputError(f"{where}: bound {row['bound']!r} is not empty or 'upper'")
        if row["tag"] not in TAGS:
            raise InvalidInputError(f"{where}: tag {row['tag']!r} is not one of {', '.join(TAGS)}")
        fixes = row["fixes"]
        if row["tag"] == "calibration":
            if fixes is None or not _FIXES.fullmatch(fixes):
                raise InvalidInputError(
                    f"{where}: a calibration row names the one parameter it fixes "
                    f"(fixes = accelerator.field), got {fixes!r}"
                )
            if fixes.split(".")[0] != row["accelerator"]:
                raise InvalidInputError(
                    f"{where}: fixes {fixes!r} is not a parameter of {row['accelerator']}"
                )
        elif fixes is not None:
            raise InvalidInputError(f"{where}: a {row['tag']} row fixes nothing, got {fixes!r}")
        _workloads(row)
    return table


Accelerators = Callable[[str], Accelerator]


def validate(*, hardware: Accelerators | None = None, bands: bool = False) -> pl.DataFrame:
    """Every published figure with the model's prediction and the error.

    Columns: those of `published` plus ``predicted``, ``error``
    (``predicted / value - 1``), ``score`` (the error; for an upper bound, 0 when
    ``predicted <= value``, else the error) and ``pending`` (what a row whose
    prediction is null waits for, else null). `hardware` loads an accelerator by
    name (None: `nerframe.accelerator`, the built-ins; pass another to validate
    modified figures).

    With `bands`, three more columns: ``low`` and ``high``, the range the prediction
    takes over the corners of the assumed figures of the accelerators the row runs
    on (`nerframe.bands`; the nominal prediction included), and ``inside``, whether
    the published figure lies in it (for an upper bound: whether the band reaches
    down to it). Rows on op-level metrics (``op_*``, ``stage_*``), part areas and
    pending rows have no band (null): the sweep engine gives frame figures.

    >>> table = validate()
    >>> sorted(set(table["tag"]))
    ['calibration', 'circular', 'validation']
    >>> row = table.filter(id="icarus-area").row(0, named=True)
    >>> row["error"] == row["predicted"] / row["value"] - 1
    True
    """
    predict = _Predictor(hardware or accelerator)
    table = published()
    predicted: list[float | None] = []
    pending: list[str | None] = []
    ranges: list[tuple[float, float] | None] = []
    band = _Bands(predict) if check_flag("bands", bands) else None
    # Rows share pipelines at one workload (a figure and its baseline, several metrics
    # of one run): each graph is built once, and within a run (analyze and its report)
    # the run's own graphs are reused.
    with reusing_pipelines():
        for row in table.iter_rows(named=True):
            try:
                predicted.append(predict(row))
                pending.append(None)
            except _Pending as waiting:
                predicted.append(None)
                pending.append(str(waiting))
                ranges.append(None)
                continue
            if band is not None:
                ranges.append(band(row, float(predicted[-1] or 0.0)))
    error = pl.col("predicted") / pl.col("value") - 1
    upper = pl.col("bound") == "upper"
    result = table.with_columns(
        predicted=pl.Series(predicted, dtype=pl.Float64),
        pending=pl.Series(pending, dtype=pl.String),
    ).select(
        *_SCHEMA,
        "predicted",
        error.alias("error"),
        pl.when(upper.fill_null(False))
        .then(pl.max_horizontal(error, 0.0))
        .otherwise(error)
        .alias("score"),
        "pending",
    )
    if band is None:
        return result
    low = pl.Series("low", [r and r[0] for r in ranges], pl.Float64)
    high = pl.Series("high", [r and r[1] for r in ranges], pl.Float64)
    value = pl.col("value")
    inside = (
        pl.when(upper.fill_null(False))
        .then(pl.col("low") <= value)
        .otherwise((pl.col("low") <= value) & (value <= pl.col("high")))
    )
    return result.with_columns(low, high).with_columns(inside.alias("inside"))


def summary(table: pl.DataFrame) -> str:
    """One line on the validation rows of `table` (a `validate` result).

    Over the rows that have a prediction: the median and max |score| and the
    worst row, how many scores are within 2x (``0.5 <= 1 + score <= 2``) and within
    1.5x, how many upper bounds hold, the median |error| over the point figures alone (a
    held bound scores 0, which would otherwise flatter the median), the mean
    |error| over the fps and area rows beside NeRArch-Sim's own 3.4 % and 6.5 %,
    and whether the target (median |score| <= 15 % and every row within 1.5x) is
    met. Then the rows still pending and the circular rows, which are not scored.

    >>> import polars as pl
    >>> t = pl.DataFrame({"id": ["a", "b", "c", "d", "e"], "tag": ["validation"] * 5,
    ...                   "metric": ["fps", "area_mm2", "fps", "avg_power_w", "fps"],
    ...                   "bound": [None, None, None, "upper", None],
    ...                   "error": [0.1, -0.5, 0.2, -0.3, None],
    ...                   "score": [0.1, -0.5, 0.2, 0.0, None],
    ...                   "pending": [None, None, None, None, "accelerator 'x' is not built in"]})
    >>> print(summary(t))  # doctest: +NORMALIZE_WHITESPACE
    validation: 4 of 5 rows scored, median |score| 15.0 %, max |score| 50.0 % (b),
    within 2x: 4 of 4, within 1.5x: 3 of 4; upper bounds ("up to", budgets) score 0
    when met, else their excess: 1 of 1 met; median |error| over the 3 point figures
    alone 20.0 %; mean |error| over fps rows 15.0 % (n = 2), area rows 50.0 % (n = 1),
    beside NeRArch-Sim's own 3.4 % (fps) and 6.5 % (area); target median |score| <=
    15 % and every row within 1.5x: NOT met; pending: 1 (rows awaiting a part of the
    model not built in yet, see column pending)
    """
    rows = table.filter(tag="validation")
    scored = rows.filter(pl.col("score").is_not_null())
    if scored.is_empty():
        return f"validation: none of {rows.height} rows scored"
    scores = list(scored["score"])
    magnitudes = [abs(e) for e in scores]
    worst = scored["id"][max(range(len(magnitudes)), key=magnitudes.__getitem__)]
    median = statistics.median(magnitudes)
    broadly = sum(1 / WITHIN_BROADLY <= 1 + e <= WITHIN_BROADLY for e in scores)
    within = sum(1 / TARGET_WITHIN <= 1 + e <= TARGET_WITHIN for e in scores)
    met = median <= TARGET_MEDIAN and within == len(scores)
    bounds = scored.filter(bound="upper")
    points = scored.filter(pl.col("bound").is_null())
    point_errors = [abs(e) for e in points["error"]]
    alone = f"{100 * statistics.median(point_errors):.1f} %" if point_errors else "n/a"
    beside = []
    for row in accuracy(table).filter(pl.col("nerarch_sim").is_not_null()).iter_rows(named=True):
        mean = "n/a" if row["nerframe"] is None else f"{100 * row['nerframe']:.1f} %"
        beside.append(f"{row['metric']} rows {mean} (n = {row['rows']})")
    line = (
        f"validation: {scored.height} of {rows.height} rows scored, "
        f"median |score| {100 * median:.1f} %, max |score| {100 * max(magnitudes):.1f} % "
        f"({worst}), within {WITHIN_BROADLY:g}x: {broadly} of {scored.height}, "
        f"within {TARGET_WITHIN:g}x: {within} of {scored.height}; "
        'upper bounds ("up to", budgets) score 0 when met, else their excess: '
        f"{bounds.filter(score=0.0).height} of {bounds.height} met; "
        f"median |error| over the {points.height} point figures alone {alone}; "
        f"mean |error| over {', '.join(beside)}, beside NeRArch-Sim's own "
        f"{100 * NERARCH_SIM['fps']:.1f} % (fps) and {100 * NERARCH_SIM['area']:.1f} % "
        f"(area); target median |score| <= {100 * TARGET_MEDIAN:.0f} % and every row "
        f"within {TARGET_WITHIN:g}x: {'met' if met else 'NOT met'}"
    )
    waiting = rows.height - scored.height
    if waiting:
        line += (
            f"; pending: {waiting} (rows awaiting a part of the model not built in yet, "
            "see column pending)"
        )
    circular = table.filter(tag="circular").height
    if circular:
        line += f"; circular: {circular} (shown, not scored)"
    if "inside" in table.columns:
        banded = scored.filter(pl.col("inside").is_not_null())
        line += (
            f"; published figure inside the band of the assumed figures: "
            f"{banded.filter('inside').height} of {banded.height} rows with a band"
        )
    return line


TRANSFERRED: tuple[str, ...] = tuple(g for g in GPUS if g not in ("xavier_nx", "orin_nx"))
"""GPUs without a calibration row: they take the Orin NX's calibrated efficiency (which
divides every op's modelled time, `nerframe.gpu.op_seconds`: launches, syncs and class
rates measured on an H200, scaled by data-sheet ratios)."""


def calibrate(hardware: Accelerators | None = None) -> pl.DataFrame:
    """The parameters the calibration rows fix, computed from those rows only.

    One row per (accelerator, parameter): the calibrated value, rounded to four
    significant digits, and the published row it comes from (whose ``fixes``
    column names ``accelerator.parameter``). The built-in files hold these
    values (a test checks it).

    - ``icarus`` ``mlp_engine.throughput_ops_per_cycle`` from ``icarus-throughput``;
      ``power_scale``, one scale of every module's power, from ``icarus-power``
      (1 once the built-in file holds the scaled powers);
    - ``xavier_nx`` efficiency from ``xavier-nerf``; ``orin_nx`` efficiency from
      ``orin-3dgs`` (the share of the peak its CUDA kernels reach; the other GPUs
      hold the same value, as an assumption: `TRANSFERRED`);
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
    ) -> float:
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
        return value

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
        "power_scale",
        _scale_power,
        1.0,
        1.0,
    )
    xavier, orin_nx = current("xavier_nx"), current("orin_nx")
    fit("xavier-nerf", "xavier_nx", "efficiency", _set_efficiency, xavier.memory_efficiency, 1)
    orin = fit("orin-3dgs", "orin_nx", "efficiency", _set_efficiency, orin_nx.memory_efficiency, 1)
    for gpu in TRANSFERRED:
        loaded[gpu] = _set_efficiency(current(gpu), orin)
        found.append(
            {"accelerator": gpu, "parameter": "efficiency", "value": orin, "row": "orin-3dgs"}
        )
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
    # a GPU's calibrated efficiency divides its ops' modelled times (nerframe.gpu
    # .op_seconds); its DRAM's share is measured (W over the peak bandwidth, the H200's)
    modules = tuple(replace(m, efficiency=min(efficiency, 1.0)) for m in accel.modules)
    return replace(accel, modules=modules)


def accuracy(table: pl.DataFrame) -> pl.DataFrame:
    """The validation rows' accuracy beside the reference framework's own: one row per
    measure (``median |score|`` and ``max |score|`` over the scored validation rows,
    the mean |error| over the point figures of metric fps and area, which
    NeRArch-Sim reports as 3.4 % and 6.5 %), with the number of rows behind it.

    >>> t = validate()
    >>> accuracy(t).filter(measure="mean |error|", metric="area")["rows"].item() >= 1
    True
    """
    rows = table.filter(tag="validation").filter(pl.col("score").is_not_null())
    points = rows.filter(pl.col("bound").is_null())
    found: list[dict[str, Any]] = []
    scores = [abs(e) for e in rows["score"]]
    for measure, value in (
        ("median |score|", statistics.median(scores) if scores else None),
        ("max |score|", max(scores, default=None)),
    ):
        found.append({"measure": measure, "metric": "all", "rows": len(scores), "nerframe": value})
    for metric, label in (("fps", "fps"), ("area_mm2", "area")):
        errors = [abs(e) for e in points.filter(metric=metric)["error"]]
        found.append(
            {
                "measure": "mean |error|",
                "metric": label,
                "rows": len(errors),
                "nerframe": statistics.fmean(errors) if errors else None,
                "nerarch_sim": NERARCH_SIM[label],
            }
        )
    schema = {
        "measure": pl.String(),
        "metric": pl.String(),
        "rows": pl.Int64(),
        "nerframe": pl.Float64(),
        "nerarch_sim": pl.Float64(),
    }
    return pl.DataFrame(found, schema=schema)


class _Pending(Exception):
    """A row needs a part of the model that is not built in yet."""


class _Predictor:
    """The model's value of a published row, scheduling each pair and workload once."""

    def __init__(self, hardware: Accelerators) -> None:
        self.hardware = cache(hardware)
        self.runs: dict[tuple[str, str, tuple[tuple[str, Any], ...]], Schedule] = {}

    def accel(self, name: str) -> Accelerator:
        if name.lower() not in BUILTIN:
            raise _Pending(f"accelerator {name!r} is not built in")
        return self.hardware(name)

    def run(self, pipeline_name: str, accel: str, workload: dict[str, Any]) -> Schedule:
        key = (pipeline_name, accel, tuple(sorted(workload.items())))
        if key not in self.runs:
            hardware = self.accel(accel)
            self.runs[key] = schedule(pipeline(pipeline_name, **workload), hardware)
        return self.runs[key]

    def __call__(self, row: dict[str, Any]) -> float:
        """The prediction: the mean of the metric over the row's workloads (for
        `FRAME_TIME_MEAN`, one over the mean of their frame times)."""
        try:
            values = [self.one(row, w) for w in _workloads(row)]
            if row["metric"] == FRAME_TIME_MEAN:
                return statistics.harmonic_mean(values)
            return statistics.fmean(values)
        except NerframeError as e:
            raise InvalidInputError(f"published row {row['id']}: {e}") from None

    def one(self, row: dict[str, Any], workload: dict[str, Any]) -> float:
        metric, accel, name = str(row["metric"]), str(row["accelerator"]), row["pipeline"]
        if metric == "area_mm2":
            return _area_mm2(self.accel(accel), _split(row["parts"]))
        if metric == "sram_area_mm2":
            return _sram_area_mm2(self.accel(accel), _split(row["parts"]))
        if not isinstance(name, str):
            raise InvalidInputError(f"metric {metric} needs a pipeline")
        waiting = [
            f"accelerator {a!r} is not built in"
            for a in dict.fromkeys((accel, row["baseline"]))
            if a is not None and a.lower() not in BUILTIN
        ] + [f"nerframe.pipeline takes no {k!r}" for k in workload if k not in _PIPELINE_KINDS]
        if waiting:
            raise _Pending("; ".join(waiting))
        run = self.run(name, accel, workload)
        summary: dict[str, float] = run.summary.row(0, named=True)
        if metric == "fps":
            return summary["fps"]
        if metric == "samples_per_s":
            return summary["fps"] * _samples_per_frame(name, workload)
        if metric == "avg_power_w":
            return summary["avg_power_w"]
        if metric == "energy_per_sample_uj":
            return summary["energy_per_frame_j"] / _samples_per_frame(name, workload) * 1e6
        if metric in ("stage_share", "stage_time_ms"):
            cycles = _per_frame(run, "duration_cycles")
            mine = float(cycles.filter(_of_types(run, row)).sum())
            if metric == "stage_share":
                return mine / float(cycles.sum())
            return mine / summary["frame_cycles"] * summary["frame_time_s"] * 1e3
        base = str(row["baseline"])
        other = self.run(str(row["baseline_pipeline"] or name), base, workload)
        if metric == "speedup":
            return summary["fps"] / float(other.summary["fps"].item())
        if metric == "energy_ratio":
            return float(other.summary["energy_per_frame_j"].item()) / summary["energy_per_frame_j"]
        if metric in ("op_speedup", "op_energy_ratio"):
            column = "duration_cycles" if metric == "op_speedup" else "energy_j"
            mine, theirs = (
                float(_per_frame(r, column).filter(_of_types(r, row)).sum()) for r in (run, other)
            )
            if metric == "op_speedup":  # cycles at each design's own clock
                mine /= self.accel(accel).frequency_mhz
                theirs /= self.accel(base).frequency_mhz
            return theirs / mine
        raise InvalidInputError(f"unknown metric {metric!r}")


_FRAME_METRICS = frozenset({"fps", "samples_per_s", "avg_power_w", "energy_per_sample_uj"})
"""Metrics a band gives from one run's frame figures."""
_RATIO_METRICS = frozenset({"speedup", "energy_ratio"})
"""Metrics a band gives from the frame figures of a run and its baseline."""


class _Bands:
    """The band of a row's prediction: its metric over the corners of the assumed
    figures (`nerframe.bands.corners`, one sweep per pipeline, accelerator and
    workload), combined over the row's workloads as the prediction is."""

    def __init__(self, predict: _Predictor) -> None:
        self.predict = predict
        self.runs: dict[tuple[str, str, tuple[tuple[str, Any], ...]], pl.DataFrame] = {}

    def corners(self, name: str, accel: str, workload: dict[str, Any]) -> pl.DataFrame:
        from nerframe.bands import corners

        key = (name, accel, tuple(sorted(workload.items())))
        if key not in self.runs:
            hardware = self.predict.accel(accel)
            self.runs[key] = corners(pipeline(name, **workload), hardware)
        return self.runs[key]

    def __call__(self, row: dict[str, Any], predicted: float) -> tuple[float, float] | None:
        metric = str(row["metric"])
        if metric == "area_mm2" and not _split(row["parts"]):
            values = self.areas(str(row["accelerator"]))
        elif metric in _FRAME_METRICS | _RATIO_METRICS:
            per = [self.one(row, w) for w in _workloads(row)]
            stacked = np.vstack(per)
            if metric == FRAME_TIME_MEAN:
                values = stacked.shape[0] / (1.0 / stacked).sum(axis=0)
            else:
                values = stacked.mean(axis=0)
        else:
            return None
        return min(float(values.min()), predicted), max(float(values.max()), predicted)

    def areas(self, name: str) -> np.ndarray:
        from nerframe.bands import variants

        return np.array([a.area_mm2 for a in variants(self.predict.accel(name))])

    def one(self, row: dict[str, Any], workload: dict[str, Any]) -> np.ndarray:
        metric, accel, name = str(row["metric"]), str(row["accelerator"]), str(row["pipeline"])
        run = self.corners(name, accel, workload)
        if metric in _FRAME_METRICS:
            samples = 1.0
            if metric in ("samples_per_s", "energy_per_sample_uj"):
                samples = _samples_per_frame(name, workload)
            column = {
                "fps": "fps",
                "samples_per_s": "fps",
                "avg_power_w": "avg_power_w",
                "energy_per_sample_uj": "energy_per_frame_j",
            }[metric]
            values = run[column].to_numpy()
            if metric == "samples_per_s":
                return values * samples
            if metric == "energy_per_sample_uj":
                return values / samples * 1e6
            return values
        base = str(row["baseline"])
        other = self.corners(str(row["baseline_pipeline"] or name), base, workload)
        column = "fps" if metric == "speedup" else "energy_per_frame_j"
        mine, theirs = run[column].to_numpy(), other[column].to_numpy()
        if base == accel:  # one accelerator: the same corner on both sides
            pairs = (mine, theirs)
        else:  # independent assumptions: every corner of one against every other's
            pairs = (np.repeat(mine, theirs.size), np.tile(theirs, mine.size))
        ratio: np.ndarray = pairs[0] / pairs[1] if metric == "speedup" else pairs[1] / pairs[0]
        return ratio


def _split(text: str | None) -> list[str]:
    return [part.strip() for part in (text or "").split(";") if part.strip()]


def _area_mm2(accel: Accelerator, patterns: Sequence[str]) -> float:
    """The area of `accel`, or of its modules (count x unit area) and SRAM blocks whose
    names match one of `patterns` (``fnmatch`` patterns), in mm².

    >>> icarus = accelerator("icarus")
    >>> round(_area_mm2(icarus, ["*"]), 9) == round(_area_mm2(icarus, []), 9)
    True
    >>> mlp = icarus.modules[icarus.module_index("mlp_engine")]
    >>> _area_mm2(icarus, ["mlp_engine"]) == mlp.count * mlp.area_um2 / 1e6
    True
    """
    if not patterns:
        area = accel.area_mm2
    else:
        density = accel.sram_um2_per_kb
        parts = {m.name: m.area_um2 * m.count for m in accel.modules} | {
            s.name: s.area_um2 if s.area_um2 is not None else s.size_kb * density
            for s in accel.sram
        }
        chosen = _matching(parts, patterns, f"{accel.name} has no module or SRAM block")
        area = sum(a for n, a in parts.items() if n in chosen) / 1e6  # in file order
    if math.isnan(area):
        raise InvalidInputError(f"the area of {accel.name} is not published")
    return area


def _matching(names: Iterable[str], patterns: Sequence[str], missing: str) -> set[str]:
    """The `names` that match one of `patterns` (``fnmatch``); a pattern that matches
    none makes the row pending (``missing``, then ``matching 'pattern'``).

    >>> sorted(_matching(["input_buffer0", "input_buffer1", "grid_cache"], ["input*"], ""))
    ['input_buffer0', 'input_buffer1']
    """
    chosen: set[str] = set()
    for pattern in patterns:
        hits = {n for n in names if fnmatchcase(n, pattern)}
        if not hits:
            raise _Pending(f"{missing} matching {pattern!r}")
        chosen |= hits
    return chosen


def _sram_area_mm2(accel: Accelerator, patterns: Sequence[str]) -> float:
    """The area of the SRAM blocks of `accel` whose names match one of `patterns` (every
    block without patterns) from their capacities alone, in mm²: capacity x the file's
    ``sram_um2_per_kb``, else the node table's density at the design's node
    (`nerframe.technology`), ignoring the areas the file gives its blocks.

    >>> neurex = accelerator("neurex")
    >>> round(_sram_area_mm2(neurex, ["grid_cache"]), 4)  # 64 KB x 1758 um2/KB
    0.1125
    """
    names = [s.name for s in accel.sram]
    chosen = _matching(names, patterns or ["*"], f"{accel.name} has no SRAM block")
    kb = sum(s.size_kb for s in accel.sram if s.name in chosen)
    density = accel.sram_um2_per_kb
    if math.isnan(density):  # every block has its own area: the file needed no density
        if not technology.covers(accel.technology_nm):
            raise InvalidInputError(f"the node of {accel.name} is not in the node table")
        density = technology.sram_um2_per_kb(accel.technology_nm)
    return kb * density / 1e6


def _per_frame(run: Schedule, column: str) -> pl.Series:
    """Each op's `column` over one frame: a batch-scoped op runs once per batch."""
    batches = run.summary["batches"].item()
    ops = run.schedule
    times = pl.when(pl.col("scope") == "batch").then(batches).otherwise(1)
    return ops.select((pl.col(column) * times).cast(pl.Float64)).to_series()


def _of_types(run: Schedule, row: dict[str, Any]) -> pl.Series:
    """Which ops of `run` are of the row's op types; each must occur."""
    wanted = _split(row["op_type"])
    if not wanted:
        raise InvalidInputError(f"metric {row['metric']} needs op_type")
    types = run.schedule["op_type"].cast(pl.String)
    missing = [t for t in wanted if t not in set(types)]
    if missing:
        graph = run.summary["graph"].item()
        raise InvalidInputError(f"pipeline {graph} has no op type {', '.join(map(repr, missing))}")
    return types.is_in(wanted)


def _kind(hint: object) -> Callable[[str], Any]:
    """How a workload value is read for a parameter of `nerframe.pipeline` typed `hint`."""
    options = get_args(hint) or (hint,)
    return next((k for k in (int, float) if k in options), str)


_PIPELINE_KINDS: dict[str, Callable[[str], Any]] = {
    key: _kind(hint)
    for key, hint in get_type_hints(pipeline).items()
    if key not in ("name", "return")
}
"""The keys a workload may set (`nerframe.pipeline`'s parameters) and how each is read."""


def _workloads(row: dict[str, Any]) -> list[dict[str, Any]]:
    """A row's workloads, checked: one keyword dict per combination of listed values.

    >>> _workloads({"id": "x", "workload": "rays=1024;frame_pixels=8334|16668"})
    [{'rays': 1024, 'frame_pixels': 8334}, {'rays': 1024, 'frame_pixels': 16668}]
    >>> _workloads({"id": "x", "workload": None})
    [{}]
    """
    text = row.get("workload") or ""
    try:
        return _parse_workload(str(text))
    except ValueError as e:
        raise InvalidInputError(f"{PUBLISHED}: row {row['id']}: workload {text!r}: {e}") from None


def _parse_workload(text: str) -> list[dict[str, Any]]:
    """``"rays=1024;scene=a|b"`` as `nerframe.pipeline` keyword arguments, one dict per
    combination; a key `nerframe.pipeline` does not take is kept as text (the row
    is then pending). Keys joined by commas take their values together, one
    comma-separated group per choice (a figure per scene: ``scene,gaussians=a,1|b,2``).

    >>> _parse_workload("frame_pixels=8334;rendered_fraction=0.5")
    [{'frame_pixels': 8334, 'rendered_fraction': 0.5}]
    >>> for w in _parse_workload("rays=64;scene,gaussians=lego,350000|garden,5710000"):
    ...     print(w)
    {'rays': 64, 'scene': 'lego', 'gaussians': 350000}
    {'rays': 64, 'scene': 'garden', 'gaussians': 5710000}
    """
    choices: list[list[list[tuple[str, Any]]]] = []
    keys: set[str] = set()
    for item in filter(None, (part.strip() for part in text.split(";"))):
        key, equals, values = (part.strip() for part in item.partition("="))
        names = [name.strip() for name in key.split(",")]
        if not equals or not all(names) or not values:
            raise ValueError(f"{item!r} is not key=value")
        for name in names:
            if name in keys:
                raise ValueError(f"{name!r} is given twice")
            keys.add(name)
        options = []
        for value in values.split("|"):
            group = [v.strip() for v in value.split(",")]
            if len(group) != len(names):
                raise ValueError(
                    f"{value.strip()!r} holds {len(group)} of the {len(names)} values of {key!r}"
                )
            options.append(
                [
                    (name, _PIPELINE_KINDS.get(name, str)(v))
                    for name, v in zip(names, group, strict=True)
                ]
            )
        choices.append(options)
    return [
        {name: v for group in combination for name, v in group}
        for combination in itertools.product(*choices)
    ]


def _samples_per_frame(name: str, workload: dict[str, Any]) -> float:
    g = pipeline(name, **workload)
    first = g.ops.row(0, named=True)
    return float(first["B"] or 0) * float(first["N"] or 0) * g.batches


__all__ = ["GPUS", "accuracy", "calibrate", "published", "summary", "validate"]

"""Roofline figures of every operator on one or more roofline systems.

A roofline system is a peak compute rate and a memory bandwidth (optionally
derated by efficiencies). For each (op, system) the op takes
``t_compute = flops / (peak * 1e12 * compute_efficiency)`` and
``t_memory = bytes_total / (bandwidth * 1e9 * memory_efficiency)`` seconds, its
time is the larger of the two (``compute`` on a tie), and it can attain
``min(peak * 1e12, intensity * bandwidth * 1e9)`` FLOP/s. Bandwidth is decimal
(1 GB = 1e9 B). Everything is computed with polars expressions over whole tables.

>>> import polars as pl
>>> from nerframe import schemas
>>> costs = pl.DataFrame(
...     {"graph": ["g"], "op_id": [0], "op_type": ["MLP"], "category": ["COMPUTATION"],
...      "backward": [False], "flops": [3.14e12], "bytes_total": [1.935e9], "intensity": [1622.8]},
... )
>>> row = roofline(costs, [System("X", 314.0, 1935.0)]).row(0, named=True)
>>> row["time_s"], row["bound"], round(row["ridge"], 1)
(0.01, 'compute', 162.3)
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Protocol

import polars as pl

from nerframe import ppa, schemas
from nerframe.costing import costs as compute_costs
from nerframe.errors import InvalidInputError, NerframeError
from nerframe.graphs import Graph
from nerframe.hardware import accelerator
from nerframe.roofline_system import System as System  # re-exported: nerframe.System


def gpu_roofline(name: str, module: str = "tensor_cores") -> System:
    """The roofline of one module of a built-in GPU: its peak and the GPU's DRAM bandwidth.

    The GPU files are the one place their figures are stated; the presets read them.

    >>> round(gpu_roofline("h100").peak_tflops, 1)
    989.4
    """
    gpu = accelerator(name)
    unit = gpu.modules[gpu.module_index(module)]
    peak = ppa.peak_tflops(unit.throughput_ops_per_cycle * unit.count, gpu.frequency_mhz)
    return System(
        gpu.name.upper(),
        peak,
        gpu.dram_bandwidth_gbps,
        source=f"{module} of the built-in GPU '{gpu.name}': " + "; ".join(gpu.sources[:2]),
    )


PRESETS: dict[str, System] = {"A100": gpu_roofline("a100"), "H100": gpu_roofline("h100")}
"""Built-in roofline systems, by name."""


def is_preset(candidate: System) -> bool:
    """Whether `candidate` is a preset under another spelling of its name: the same
    peak and bandwidth as the preset of that name (the built-in GPU ``a100`` is
    ``A100``), so that a table of systems lists it once.

    >>> is_preset(system(accelerator("a100"))), is_preset(system("neurex"))
    (True, False)
    """
    preset = PRESETS.get(candidate.name.upper())
    return preset is not None and (preset.peak_tflops, preset.bandwidth_gbps) == (
        candidate.peak_tflops,
        candidate.bandwidth_gbps,
    )


class _AcceleratorLike(Protocol):
    @property
    def name(self) -> str: ...

    @property
    def peak_tflops(self) -> float: ...

    @property
    def dram_bandwidth_gbps(self) -> float: ...


SYSTEM_FILES: tuple[str, ...] = ("h200",)
"""Roofline system files (``nerframe/systems/<name>.json``): a device's data-sheet peaks
per precision and its memory bandwidth, for devices that are not built-in accelerators."""


def system_file(name: str) -> System:
    """The roofline system of a system file: ``NAME`` (its default precision) or
    ``NAME:PRECISION`` (``h200:fp32``); the source names the data sheet.

    >>> s = system_file("h200:fp32"); s.name, s.peak_tflops, s.bandwidth_gbps
    ('H200:FP32', 67.0, 4800)
    >>> system_file("h200").peak_tflops  # dense FP16 tensor cores
    989.5
    """
    import json
    from pathlib import Path

    base, _, precision = name.lower().partition(":")
    if base not in SYSTEM_FILES:
        raise InvalidInputError(
            f"no roofline system file {base!r} (files: {', '.join(SYSTEM_FILES)})"
        )
    document = json.loads(
        (Path(__file__).with_name("systems") / f"{base}.json").read_text(encoding="utf-8")
    )
    peaks: dict[str, float] = document["peak_tflops"]
    precision = precision or document["default"]
    if precision not in peaks:
        raise InvalidInputError(
            f"roofline system {base!r} has no precision {precision!r} (one of {', '.join(peaks)})"
        )
    return System(
        name.upper() if ":" in name else base.upper(),
        peaks[precision],
        document["bandwidth_gbps"],
        source=f"{document['description']}, {precision}: " + "; ".join(document["sources"]),
    )


def system(name_or_accelerator: str | System | _AcceleratorLike) -> System:
    """The roofline system of a preset name (case-insensitive), ``host`` (this machine,
    from the stored result of `nerframe.probe`), a system file (`system_file`: ``h200``,
    ``h200:fp32``), an accelerator name, or an accelerator object (anything with
    ``name``, ``peak_tflops`` and ``dram_bandwidth_gbps``).

    >>> system("h100").ridge
    295.3521671641791
    """
    if isinstance(name_or_accelerator, System):
        return name_or_accelerator
    if not isinstance(name_or_accelerator, str):
        return _from_accelerator(name_or_accelerator)
    if name_or_accelerator.lower() == "host":
        # This machine, as measured by `nerframe probe` (nerframe.probing).
        from nerframe.probing import host_system

        return host_system()
    for preset, found in PRESETS.items():
        if preset.lower() == name_or_accelerator.lower():
            return found
    if name_or_accelerator.lower().partition(":")[0] in SYSTEM_FILES:
        return system_file(name_or_accelerator)
    try:
        return _from_accelerator(accelerator(name_or_accelerator))
    except NerframeError as e:
        raise InvalidInputError(
            f"unknown roofline system {name_or_accelerator!r}: not a preset "
            f"({', '.join(PRESETS)}) and not an accelerator ({e})"
        ) from None


def _from_accelerator(accel: _AcceleratorLike) -> System:
    try:
        name, peak, bandwidth = accel.name, accel.peak_tflops, accel.dram_bandwidth_gbps
    except AttributeError as e:
        raise InvalidInputError(
            f"not a roofline system or accelerator: {accel!r} ({e.name} missing); give a "
            "System, an accelerator or a name such as 'A100'",
            repr(accel),
        ) from None
    if peak == 0:
        raise InvalidInputError(
            f"accelerator {name!r} has no module rated in FLOPs (its units count samples, "
            "Gaussians…), so it has no FLOP roofline"
        )
    return System(
        name,
        peak,
        bandwidth,
        source=f"accelerator {name}: peak = Σ throughput × count × frequency",
    )


_COST_INPUT = ("graph", "op_id", "op_type", "category", "backward", "flops", "bytes_total")


def roofline(
    costs: pl.DataFrame | Graph,
    systems: Sequence[System | str | _AcceleratorLike] | System | str | _AcceleratorLike,
) -> pl.DataFrame:
    """One row per (op of `costs`, system), with the columns of `schemas.ROOFLINE`.

    `costs` is a costs table, an ops table or a `Graph` (whose costs are computed
    first); `systems` one system (a name or a `System`) or several. Rows are in
    `costs` order, each op followed by its systems in the given order (a system is a
    `System`, a name as `system` takes, or an accelerator object). An op
    that moves no bytes attains the peak whatever its recorded intensity.

    >>> import nerframe
    >>> roofline(nerframe.pipeline("neurex"), "A100").select("system", "bound").row(0)
    ('A100', 'memory')
    """
    if isinstance(costs, Graph):
        costs = costs.ops
    if not isinstance(costs, pl.DataFrame):
        raise InvalidInputError(
            f"roofline takes a costs table, an ops table or a Graph, got {type(costs).__name__}",
            "costs",
        )
    if isinstance(systems, str | System) or not isinstance(systems, Sequence):
        systems = [systems]  # one system; anything else fails by name in `system`
    if "flops" not in costs.columns and "op_type" in costs.columns:
        costs = compute_costs(costs)
    missing = [c for c in (*_COST_INPUT, "intensity") if c not in costs.columns]
    if missing:
        raise InvalidInputError(f"roofline: costs table lacks column(s) {', '.join(missing)}")
    resolved = [system(s) for s in systems]
    if not resolved:
        raise InvalidInputError("roofline: no system given")
    names = [s.name for s in resolved]
    if len(set(names)) != len(names):
        raise InvalidInputError(f"roofline: systems named twice in {names}")
    table = pl.DataFrame(
        {
            "system": names,
            "peak_tflops": [float(s.peak_tflops) for s in resolved],
            "bandwidth_gbps": [float(s.bandwidth_gbps) for s in resolved],
            "_ce": [float(s.compute_efficiency) for s in resolved],
            "_me": [float(s.memory_efficiency) for s in resolved],
        }
    )
    peak = pl.col("peak_tflops") * 1e12
    bandwidth = pl.col("bandwidth_gbps") * 1e9
    t_compute = pl.col("flops") / (peak * pl.col("_ce"))
    t_memory = pl.col("bytes_total") / (bandwidth * pl.col("_me"))
    return (
        costs.select(*_COST_INPUT, pl.col("intensity").cast(pl.Float64))
        .join(table, how="cross", maintain_order="left_right")
        .with_columns(t_compute_s=t_compute, t_memory_s=t_memory)
        .with_columns(
            time_s=pl.max_horizontal("t_compute_s", "t_memory_s"),
            # No bytes, no memory roof: nerframe.costs gives such ops intensity 0, but
            # they are limited by compute alone.
            attainable_flops_per_s=pl.when(pl.col("bytes_total") > 0)
            .then(
                ppa.attainable(pl.col("peak_tflops"), pl.col("bandwidth_gbps"), pl.col("intensity"))
            )
            .otherwise(peak),
            bound=pl.when(pl.col("t_compute_s") >= pl.col("t_memory_s"))
            .then(pl.lit("compute"))
            .otherwise(pl.lit("memory")),
            ridge=ppa.ridge(pl.col("peak_tflops"), pl.col("bandwidth_gbps")),
        )
        .select(pl.col(name).cast(dtype) for name, dtype in schemas.ROOFLINE.items())
    )

"""Plain-Python scalar reference of the fused sweep kernel, one configuration at a time.

The test oracle of `kernels/sweep_chunk.py`. It is written from spec/hardware.md
("Frames, throughput and PPA") and docs/model.md ("Energy and power", "Area and
power model"; a sweep varies accelerator and module fields over a Cartesian grid,
``docs/formats.md``, sweep spec), with Python lists and loops, and calls none of the
kernel's helpers: the grid is expanded with `itertools.product` (row-major, the last axis
fastest), each configuration is built field by field from the base accelerator,
each phase is scheduled by the scalar list scheduler `reference_schedule.schedule_one`
(the oracle of the scheduler kernel, so a change to the per-op timing lands in both
oracles at once), and the frame, area, power and constraint figures are computed
here. `reference_schedule.frame_energy` sums a frame's energy.

>>> base = Base(counts=[2], throughput=[10.0], latency=[2], power_uw=[1000.0],
...             area_um2=[500.0], power_reference_mhz=[math.nan], efficiency=[1.0],
...             counts_flops=[True], one_kernel=False, frequency_mhz=1000.0,
...             dram_bandwidth_gbps=100.0, dram_pj_per_byte=0.0, memory_efficiency=1.0,
...             sram_area_um2=0.0)
>>> chain = Graph(preds=[[], [0]], succs=[[1], []], topo=[0, 1], op_module=[0, 0],
...               work=[100.0, 40.0], bytes_total=[0.0, 0.0])
>>> empty = Graph(preds=[], succs=[], topo=[], op_module=[], work=[], bytes_total=[])
>>> rows = sweep_rows(base, [Axis("count", 0, [1, 2])], (empty, chain, empty),
...                   batches=1, pipelined=True, split=True)
>>> [r["makespan_cycles"] for r in rows]  # 2+10+2+4 cycles, then 2+5+2+2
[18, 11]
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass, field

from nerframe.kernels.reference_schedule import Config, Graph, frame_energy, schedule_one

__all__ = ["DRAM", "FIELDS", "Axis", "Base", "feasible", "pareto_front", "sweep_rows"]

DRAM = -1
"""The bottleneck code of the DRAM, where it sets the batch interval (modules are 0 on)."""

FIELDS = (
    "frequency_mhz",
    "dram_bandwidth_gbps",
    "dram_pj_per_byte",
    "count",
    "throughput_ops_per_cycle",
    "latency_cycles",
    "power_uw",
    "area_um2",
)
"""Fields an axis may set: three of the accelerator, five of one module."""


@dataclass(frozen=True)
class Base:
    """The base accelerator of a sweep; per-module lists are indexed by module."""

    counts: list[int]
    throughput: list[float]  # peak work units per cycle per instance
    latency: list[int]
    power_uw: list[float]  # at power_reference_mhz
    area_um2: list[float]  # NaN: not published
    power_reference_mhz: list[float]  # NaN: the power does not scale with the clock
    efficiency: list[float]
    counts_flops: list[bool]
    one_kernel: bool  # a GPU: its peak is its fastest FLOP module's
    frequency_mhz: float
    dram_bandwidth_gbps: float
    dram_pj_per_byte: float
    memory_efficiency: float
    sram_area_um2: float
    sram_pj_per_byte: float = 0.0
    leakage_uw_per_mm2: float = 0.0


@dataclass(frozen=True)
class Axis:
    """One axis: the field it sets (one of `FIELDS`), of module `module` for module
    fields, and its values."""

    name: str
    module: int
    values: list[float] = field(default_factory=list)


def sweep_rows(
    base: Base,
    axes: list[Axis],
    phases: tuple[Graph, Graph, Graph],
    *,
    batches: int,
    pipelined: bool,
    split: bool,
    phase_bytes: tuple[float, float, float] = (0.0, 0.0, 0.0),
    phase_sram_bytes: tuple[float, float, float] = (0.0, 0.0, 0.0),
) -> list[dict[str, float]]:
    """One dict of figures per grid row, in row order (the kernel's columns by name:
    config, pre_cycles … bottleneck, frame_time_s … peak_tflops)."""
    rows = []
    grid = itertools.product(*(axis.values for axis in axes))
    for row, values in enumerate(grid):
        rows.append(
            _one(
                row,
                base,
                dict(zip(((a.name, a.module) for a in axes), values, strict=True)),
                phases,
                batches,
                pipelined,
                split,
                phase_bytes,
                phase_sram_bytes,
            )
        )
    return rows


def _one(
    row: int,
    base: Base,
    setting: dict[tuple[str, int], float],
    phases: tuple[Graph, Graph, Graph],
    batches: int,
    pipelined: bool,
    split: bool,
    phase_bytes: tuple[float, float, float],
    phase_sram_bytes: tuple[float, float, float],
) -> dict[str, float]:
    def value(name: str, module: int, default: float) -> float:
        return setting.get((name, module), default)

    n_modules = len(base.counts)
    bandwidth = _accelerator_field(setting, "dram_bandwidth_gbps", base.dram_bandwidth_gbps)
    pj = _accelerator_field(setting, "dram_pj_per_byte", base.dram_pj_per_byte)
    f = _accelerator_field(setting, "frequency_mhz", base.frequency_mhz)
    count, throughput, latency, power, area = [], [], [], [], []
    for m in range(n_modules):
        count.append(int(value("count", m, base.counts[m])))
        throughput.append(value("throughput_ops_per_cycle", m, base.throughput[m]))
        latency.append(int(value("latency_cycles", m, base.latency[m])))
        watts = value("power_uw", m, base.power_uw[m])
        reference = base.power_reference_mhz[m]
        # dynamic power measured at a reference clock scales linearly with the clock
        power.append(watts if math.isnan(reference) else watts * (f / reference))
        area.append(value("area_um2", m, base.area_um2[m]))
    config = Config(
        count=count,
        instances=count if split else [1] * n_modules,
        throughput=[throughput[m] * base.efficiency[m] for m in range(n_modules)],
        latency=latency,
        power_uw=power,
        frequency_mhz=f,
        dram_bandwidth_gbps=bandwidth * base.memory_efficiency,
        dram_pj_per_byte=pj,
    )
    makespan, interval, busiest, energy = [0, 0, 0], [0, 0, 0], [0, 0, 0], [0.0, 0.0, 0.0]
    for p, graph in enumerate(phases):
        if graph.op_module:  # a phase without ops takes no time
            s = schedule_one(graph, config)
            makespan[p], interval[p], busiest[p], energy[p] = (
                s.makespan,
                s.interval,
                s.bottleneck,
                s.energy_j,
            )
    pre, batch, post = makespan
    # A batch starts no more often than the DRAM moves one batch's bytes at the
    # derated bandwidth (docs/model.md, "Shared DRAM bandwidth"); the DRAM is then
    # the batches' bottleneck (code DRAM, -1).
    dram_cycles = phase_bytes[1] / (config.dram_bandwidth_gbps * 1e9 / (f * 1e6))
    stream_interval, stream_busiest = interval[1], busiest[1]
    if dram_cycles > stream_interval:
        stream_interval, stream_busiest = math.ceil(dram_cycles), DRAM
    stream = batch + (batches - 1) * stream_interval if pipelined else batches * batch
    frame_cycles = pre + stream + post
    frame_time = frame_cycles / (f * 1e6)

    # Leakage over the published area (a GPU's SMs have none), module by module.
    known = 0.0
    for m in range(n_modules):
        if not math.isnan(area[m] * count[m]):
            known += area[m] * count[m]
    leakage_w = (known + base.sram_area_um2) / 1e6 * base.leakage_uw_per_mm2 * 1e-6
    frame_j = frame_energy(
        (energy[0], energy[1], energy[2]),
        phase_sram_bytes,
        batches,
        frame_time,
        base.sram_pj_per_byte,
        leakage_w,
    )
    # the bottleneck: the busiest module of the phase taking the most cycles (the
    # batches on a tie, then the pre phase)
    busiest[1] = stream_busiest
    phase = 1
    if pre > stream:
        phase = 0
    if post > max(stream, pre):
        phase = 2
    per_cycle = bandwidth * 1e9 / (f * 1e6)  # the peak, not the derated bandwidth
    # each phase's bytes over its makespan, and the stream's: all its batches' bytes
    # over its cycles
    shares = [phase_bytes[p] / (makespan[p] * per_cycle) for p in range(3) if makespan[p] > 0]
    if stream > 0:
        shares.append(batches * phase_bytes[1] / (stream * per_cycle))
    utilization = max([0.0, *shares])
    total_area = 0.0
    for m in range(n_modules):
        total_area += area[m] * count[m]
    rates = [throughput[m] * count[m] for m in range(n_modules) if base.counts_flops[m]]
    per_cycle_flops = max(rates, default=0.0) if base.one_kernel else sum(rates, 0.0)
    return {
        "config": row,
        "pre_cycles": pre,
        "makespan_cycles": batch,
        "interval_cycles": stream_interval,
        "post_cycles": post,
        "frame_cycles": frame_cycles,
        "bottleneck": busiest[phase],
        "frame_time_s": frame_time,
        "fps": 1 / frame_time if frame_time > 0 else math.nan,
        "energy_per_frame_j": frame_j,
        "avg_power_w": frame_j / frame_time if frame_time > 0 else math.nan,
        "dram_utilization": utilization,
        "area_mm2": (total_area + base.sram_area_um2) / 1e6,
        "peak_tflops": per_cycle_flops * f * 1e6 / 1e12 if per_cycle_flops > 0 else math.nan,
    }


def _accelerator_field(setting: dict[tuple[str, int], float], name: str, default: float) -> float:
    """An accelerator field's value in a configuration (an axis's, else the base's);
    accelerator axes carry any module index."""
    for (field_name, _), value in setting.items():
        if field_name == name:
            return value
    return default


def feasible(row: dict[str, float], bounds: dict[str, tuple[float, float]]) -> bool:
    """Whether every bounded figure of `row` lies in its [low, high] (NaN never does).

    >>> feasible({"fps": 60.0, "area_mm2": math.nan}, {"fps": (30.0, math.inf)})
    True
    >>> feasible({"fps": 60.0, "area_mm2": math.nan}, {"area_mm2": (0.0, 5.0)})
    False
    """
    return all(low <= row[name] <= high for name, (low, high) in bounds.items())


def pareto_front(values: list[list[float]], maximize: list[bool]) -> list[bool]:
    """Rows no other row dominates, by comparing every pair (rows with a NaN are on
    no front, and dominate none).

    >>> pareto_front([[10.0, 1.0], [8.0, 0.5], [9.0, 2.0], [10.0, 1.0]], [True, False])
    [True, True, False, True]
    """

    def at_least_as_good(a: list[float], b: list[float]) -> bool:
        return all(x >= y if up else x <= y for x, y, up in zip(a, b, maximize, strict=True))

    valid = [not any(math.isnan(v) for v in row) for row in values]
    return [
        valid[i]
        and not any(
            valid[j] and at_least_as_good(values[j], values[i]) and values[j] != values[i]
            for j in range(len(values))
        )
        for i in range(len(values))
    ]

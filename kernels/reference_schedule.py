"""Plain-Python scalar reference of the list scheduler, one configuration at a time.

The test oracle and benchmark baseline of `kernels/schedule.py`. It follows
spec/hardware.md ("Duration of an operator on its module", "List scheduling (one
batch)", "Frames, throughput and PPA") as literally as possible, with Python lists
and `heapq`, and shares no code with the kernel. Ops share the DRAM bandwidth
(docs/model.md, "Shared DRAM bandwidth"): an op starts at the first candidate time
(its ready time or a running op's end) at which its byte rate fits beside the
rates of the ops already placed (`earliest_dram_start`). Every float expression is written
in the same order as in the kernel, so both give bit-identical results.

>>> g = Graph(preds=[[], [0]], succs=[[1], []], topo=[0, 1], op_module=[0, 0],
...           work=[100.0, 50.0], bytes_total=[0.0, 0.0])
>>> cfg = Config(count=[1], instances=[1], throughput=[10.0], latency=[2],
...              power_uw=[1000.0], frequency_mhz=1000.0, dram_bandwidth_gbps=100.0,
...              dram_pj_per_byte=10.0)
>>> s = schedule_one(g, cfg)
>>> s.makespan, s.interval, [op.start for op in s.ops], [op.duration for op in s.ops]
(19, 19, [0, 12], [12, 7])
"""

from __future__ import annotations

import heapq
import math
from dataclasses import dataclass
from typing import Any

import numpy as np

from nerframe.kernels.dag import Dag
from nerframe.kernels.schedule import ScheduleResult
from nerframe.kernels.schedule_inputs import ConfigArrays, OpArrays

__all__ = [
    "Config",
    "Graph",
    "OneSchedule",
    "Placement",
    "frame_energy",
    "schedule_configs",
    "schedule_one",
]


@dataclass(frozen=True)
class Graph:
    """An operator graph: data-edge predecessors and successors of each op."""

    preds: list[list[int]]
    succs: list[list[int]]
    topo: list[int]  # a topological order
    op_module: list[int]
    work: list[float]  # in the module's unit: FLOPs or items
    bytes_total: list[float]
    # GEMMs (M, K, N) of each op, timing it on a systolic array; None: none at all
    gemms: list[list[tuple[int, int, int]]] | None = None
    # samples per tile of each of those GEMMs (0: M whole); None: all whole
    gemm_tiles: list[list[int]] | None = None
    # floor on each op's memory cycles from a GPU's L2 bandwidth; None: no floor
    l2_cycles: list[int] | None = None


@dataclass(frozen=True)
class Config:
    """One hardware configuration; per-module lists are indexed by module."""

    count: list[int]
    instances: list[int]  # k: instances an op takes on each module
    throughput: list[float]
    latency: list[int]
    power_uw: list[float]
    frequency_mhz: float
    dram_bandwidth_gbps: float
    dram_pj_per_byte: float
    # per module: systolic array shape and dataflow ("os", "ws", "is" or None)
    array_rows: list[int] | None = None
    array_cols: list[int] | None = None
    dataflow: list[str | None] | None = None


def fold_cycles(rows: int, cols: int, dataflow: str, streamed: int) -> int:
    """Cycles of one fold of a rows x cols array, from the dataflow's events.

    The streamed operand's element t enters array row i at cycle i + t (skewed
    inputs) and reaches column j at i + j + t. os: PE (i, j) does its MAC of step
    t then and keeps the sum (drained during the next fold), so the fold ends
    after the far corner's last MAC. ws and is: a preload of ``rows`` cycles
    shifts the stationary operand in first; a partial sum then moves down one row
    per cycle, so column j's sum of element t leaves the bottom at
    preload + (rows - 1) + j + t, the fold's last event for j = cols - 1,
    t = streamed - 1.
    """
    preload = 0 if dataflow == "os" else rows
    last_event = preload + (rows - 1) + (cols - 1) + (streamed - 1)
    return last_event + 1


def gemm_cycles_by_folds(m: int, k: int, n: int, rows: int, cols: int, dataflow: str) -> int:
    """Cycles of an M x K x N GEMM: its folds, one after another, enumerated."""
    spatial, streamed = {
        "os": ((m, n), k),
        "ws": ((k, n), m),
        "is": ((k, m), n),
    }[dataflow]
    total = 0
    for _row_start in range(0, spatial[0], rows):
        for _col_start in range(0, spatial[1], cols):
            total += fold_cycles(rows, cols, dataflow, streamed)
    return total


def array_cycles(
    gemms: list[tuple[int, int, int]],
    rows: int,
    cols: int,
    dataflow: str,
    arrays: int,
    tiles: list[int] | None = None,
) -> int:
    """An op's GEMMs on `arrays` identical arrays, each taking its share of M rows;
    a GEMM with a sample tile runs tile after tile, the arrays sharing each."""
    total = 0
    for g, (m, k, n) in enumerate(gemms):
        tile = tiles[g] if tiles and tiles[g] > 0 else m
        for start in range(0, m, tile):
            share = -(-min(tile, m - start) // arrays)
            total += gemm_cycles_by_folds(share, k, n, rows, cols, dataflow)
    return total


def byte_rate(nbytes: float, duration: int, bytes_per_cycle: float) -> float:
    """DRAM bytes per cycle of an op that spreads its bytes evenly over its duration,
    capped at the bandwidth (which its duration already respects, up to rounding).

    >>> byte_rate(300.0, 4, 100.0), byte_rate(0.0, 4, 100.0), byte_rate(5.0, 0, 1.0)
    (75.0, 0.0, 0.0)
    """
    if nbytes <= 0 or duration <= 0:
        return 0.0
    return min(nbytes / duration, bytes_per_cycle)


def dram_load(reserved: list[tuple[int, int, float]], time: int) -> float:
    """Bytes per cycle of the reservations (start, end, rate) running at `time`,
    summed in their order (the kernel's order, so both round alike)."""
    load = 0.0
    for begin, finish, rate in reserved:
        if begin <= time < finish:
            load += rate
    return load


def earliest_dram_start(
    reserved: list[tuple[int, int, float]],
    ready: int,
    duration: int,
    rate: float,
    bytes_per_cycle: float,
) -> int:
    """The earliest start from `ready` on at which `rate` more bytes per cycle fit
    under `bytes_per_cycle` throughout ``[start, start + duration)``.

    Candidates are `ready` and every reservation end after it (only an end lowers
    the load); a window fits when the load at its start and at every reservation
    start inside it leaves room (the load rises only at starts).

    >>> earliest_dram_start([(0, 10, 60.0), (4, 6, 30.0)], 0, 3, 50.0, 100.0)
    10
    >>> earliest_dram_start([(0, 10, 60.0), (4, 6, 30.0)], 0, 3, 40.0, 100.0)
    0
    >>> earliest_dram_start([(0, 10, 60.0), (4, 6, 30.0)], 0, 5, 40.0, 100.0)
    6
    """

    def fits(begin: int) -> bool:
        points = [begin] + [s for s, _, _ in reserved if begin < s < begin + duration]
        return all(dram_load(reserved, p) + rate <= bytes_per_cycle for p in points)

    # The last candidate always fits: no reservation runs after it and rate <= bandwidth.
    candidates = sorted({ready} | {finish for _, finish, _ in reserved if finish > ready})
    return next(begin for begin in candidates if fits(begin))


@dataclass(frozen=True)
class Placement:
    """Where and when one op runs, and what it costs."""

    start: int
    end: int
    compute_cycles: int
    memory_cycles: int
    duration: int
    instances: int
    first_instance: int
    energy_j: float


@dataclass(frozen=True)
class OneSchedule:
    """The schedule of one batch on one configuration."""

    makespan: int
    interval: int
    bottleneck: int
    energy_j: float
    ops: list[Placement]


def schedule_one(graph: Graph, config: Config) -> OneSchedule:
    """List-schedule one batch of `graph` on one configuration."""
    n = len(graph.op_module)
    f = config.frequency_mhz
    bytes_per_cycle = config.dram_bandwidth_gbps * 1e9 / (f * 1e6)

    compute, memory, duration = [], [], []
    for op in range(n):
        m = graph.op_module[op]
        k = config.instances[m]
        gemms = graph.gemms[op] if graph.gemms else []
        flow = config.dataflow[m] if config.dataflow else None
        if flow is not None and gemms:
            rows = config.array_rows[m] if config.array_rows else 1
            cols = config.array_cols[m] if config.array_cols else 1
            tiles = graph.gemm_tiles[op] if graph.gemm_tiles else None
            cycles = array_cycles(gemms, rows, cols, flow, k, tiles)
            compute.append(math.ceil(cycles * (2.0 * rows * cols / config.throughput[m])))
        else:
            compute.append(math.ceil(graph.work[op] / (config.throughput[m] * k)))
        # the DRAM's cycles or the L2's, whichever is longer
        l2 = graph.l2_cycles[op] if graph.l2_cycles else 0
        memory.append(max(math.ceil(graph.bytes_total[op] / bytes_per_cycle), l2))
        duration.append(config.latency[m] + max(compute[op], memory[op]))
    rates = [byte_rate(graph.bytes_total[op], duration[op], bytes_per_cycle) for op in range(n)]

    # Upward rank: the op's duration plus the longest chain of durations to a sink.
    rank = [0] * n
    for op in reversed(graph.topo):
        rank[op] = duration[op] + max((rank[s] for s in graph.succs[op]), default=0)

    # free[m][i]: when instance i of module m becomes free.
    free = [[0] * count for count in config.count]
    # (start, end, bytes per cycle) of the placed ops that move bytes, in placement order
    dram: list[tuple[int, int, float]] = []
    start, end, first = [0] * n, [0] * n, [0] * n
    waiting = [len(p) for p in graph.preds]
    ready = [(-rank[op], op) for op in range(n) if waiting[op] == 0]
    heapq.heapify(ready)
    while ready:
        _, op = heapq.heappop(ready)
        m = graph.op_module[op]
        k = config.instances[m]
        ready_at = max((end[p] for p in graph.preds[op]), default=0)
        lanes = free[m]
        by_free = sorted(range(config.count[m]), key=lambda i: (lanes[i], i))
        chosen = by_free[:k]
        start[op] = max(ready_at, max(free[m][i] for i in chosen))
        if rates[op] > 0:
            start[op] = earliest_dram_start(
                dram, start[op], duration[op], rates[op], bytes_per_cycle
            )
            dram.append((start[op], start[op] + duration[op], rates[op]))
        end[op] = start[op] + duration[op]
        for i in chosen:
            free[m][i] = end[op]
        first[op] = min(chosen)
        for s in graph.succs[op]:
            waiting[s] -= 1
            if waiting[s] == 0:
                heapq.heappush(ready, (-rank[s], s))

    n_modules = len(config.count)
    busy = [0] * n_modules
    for op in range(n):
        m = graph.op_module[op]
        busy[m] += duration[op] * config.instances[m]
    per_instance = [-(-busy[m] // config.count[m]) for m in range(n_modules)]
    interval = max(per_instance)

    placements = []
    total = 0.0
    for op in range(n):
        m = graph.op_module[op]
        k = config.instances[m]
        energy = (
            config.power_uw[m] * k * 1e-6 * duration[op] / (f * 1e6)
            + graph.bytes_total[op] * config.dram_pj_per_byte * 1e-12
        )
        # A plain running sum in op order, as the kernel does (not math.fsum/sum).
        total += energy
        placements.append(
            Placement(
                start[op], end[op], compute[op], memory[op], duration[op], k, first[op], energy
            )
        )
    return OneSchedule(
        makespan=max(end, default=0),
        interval=interval,
        bottleneck=per_instance.index(interval),
        energy_j=total,
        ops=placements,
    )


def schedule_configs(
    graph: Dag, ops: OpArrays, configs: ConfigArrays, keep_ops: bool = False
) -> ScheduleResult:
    """Same arguments and result as the kernel's `schedule_configs`, one config at a time."""
    n = len(ops.module)
    pred_ptr, succ_ptr = list(graph.pred_ptr), list(graph.succ_ptr)
    gemm_ptr = [0] * (n + 1) if ops.gemm_ptr is None else np.asarray(ops.gemm_ptr).tolist()
    gemm_rows = [] if ops.gemms is None else np.asarray(ops.gemms).reshape(-1, 3).tolist()
    tile_rows = None if ops.gemm_tiles is None else np.asarray(ops.gemm_tiles).tolist()
    flows = (None, "os", "ws", "is")

    def per_module(values: np.ndarray | None, c: int) -> list[Any] | None:
        return None if values is None else np.asarray(values[c]).tolist()

    one_graph = Graph(
        preds=[
            [int(p) for p in graph.pred_idx[pred_ptr[op] : pred_ptr[op + 1]]] for op in range(n)
        ],
        succs=[
            [int(s) for s in graph.succ_idx[succ_ptr[op] : succ_ptr[op + 1]]] for op in range(n)
        ],
        topo=np.asarray(graph.topo).tolist(),
        op_module=np.asarray(ops.module).tolist(),
        work=np.asarray(ops.work, np.float64).tolist(),
        bytes_total=np.asarray(ops.bytes_total, np.float64).tolist(),
        gemms=[
            [(m, k, n) for m, k, n in gemm_rows[gemm_ptr[op] : gemm_ptr[op + 1]]] for op in range(n)
        ],
        gemm_tiles=None
        if tile_rows is None
        else [tile_rows[gemm_ptr[op] : gemm_ptr[op + 1]] for op in range(n)],
        l2_cycles=None if ops.l2_cycles is None else np.asarray(ops.l2_cycles).tolist(),
    )
    schedules = [
        schedule_one(
            one_graph,
            Config(
                count=np.asarray(configs.count[c]).tolist(),
                instances=np.asarray(configs.instances[c]).tolist(),
                throughput=np.asarray(configs.throughput[c], np.float64).tolist(),
                latency=np.asarray(configs.latency[c]).tolist(),
                power_uw=np.asarray(configs.power_uw[c], np.float64).tolist(),
                frequency_mhz=float(configs.frequency_mhz[c]),
                dram_bandwidth_gbps=float(configs.dram_bandwidth_gbps[c]),
                dram_pj_per_byte=float(configs.dram_pj_per_byte[c]),
                array_rows=per_module(configs.array_rows, c),
                array_cols=per_module(configs.array_cols, c),
                dataflow=None
                if configs.dataflow is None
                else [flows[code] for code in np.asarray(configs.dataflow[c]).tolist()],
            ),
        )
        for c in range(len(configs.frequency_mhz))
    ]
    kept = schedules if keep_ops else []

    def per_op(field: str, dtype: type) -> np.ndarray:
        rows = [[getattr(op, field) for op in s.ops] for s in kept]
        return np.array(rows, dtype=dtype).reshape(len(kept), n)

    return ScheduleResult(
        makespan=np.array([s.makespan for s in schedules], np.int64),
        interval=np.array([s.interval for s in schedules], np.int64),
        bottleneck=np.array([s.bottleneck for s in schedules], np.int64),
        energy_j=np.array([s.energy_j for s in schedules], np.float64),
        start=per_op("start", np.int64),
        end=per_op("end", np.int64),
        compute_cycles=per_op("compute_cycles", np.int64),
        memory_cycles=per_op("memory_cycles", np.int64),
        duration=per_op("duration", np.int64),
        instances=per_op("instances", np.int64),
        first_instance=per_op("first_instance", np.int64),
        energy_op=per_op("energy_j", np.float64),
    )


def frame_energy(
    phase_energy: tuple[float, float, float],
    phase_sram_bytes: tuple[float, float, float],
    batches: int,
    frame_time_s: float,
    sram_pj_per_byte: float,
    leakage_w: float,
) -> float:
    """Energy of one frame (spec/hardware.md "Frames, throughput and PPA" with the
    area and power model's two extra terms), in the order `nerframe.kernels.frames`
    sums it: the phases' schedule energies (pre, one batch, post), their SRAM bytes
    times the access energy, and leakage over the frame time.

    >>> round(frame_energy((0.0, 1e-6, 0.0), (0.0, 1e3, 0.0), 10, 4.6e-7, 2.0, 0.5), 12)
    1.025e-05
    """
    pre, batch, post = phase_energy
    energy = 0.0 + pre
    energy = energy + batches * batch
    energy = energy + post
    sram_pre, sram_batch, sram_post = phase_sram_bytes
    sram_bytes = sram_pre + batches * sram_batch + sram_post
    energy = energy + sram_bytes * sram_pj_per_byte * 1e-12
    return energy + leakage_w * frame_time_s

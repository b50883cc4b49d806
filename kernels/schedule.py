"""Batched list scheduling of one operator graph across many hardware configurations.

Implements spec/hardware.md, "Duration of an operator on its module", "List
scheduling (one batch)" and the per-batch figures of "Frames, throughput and PPA"
(makespan, interval, bottleneck, energy), with the DRAM bandwidth shared by the
ops that run at the same time (docs/model.md, "Shared DRAM bandwidth"). One
graph (a `Dag`) is scheduled on a batch of C configurations (`ConfigArrays`) in
parallel; a single analysis is a batch of one. `kernels/reference_schedule.py`
implements the same rules one configuration at a time in plain Python: it is the
test oracle and the benchmark baseline, and every float expression below is
evaluated in the same order there, so both give bit-identical results.

Example: a chain 0 -> 1 -> 2 on one module, with one and with two instances,
each op taking every instance of the module:

>>> import numpy as np
>>> count = np.array([[1], [2]])
>>> r = schedule_configs(
...     dag(3, [0, 1], [1, 2]),
...     OpArrays(module=np.zeros(3, np.int64), work=np.array([100.0, 200.0, 50.0]),
...              bytes_total=np.zeros(3)),
...     ConfigArrays(count=count, instances=count, throughput=np.full((2, 1), 10.0),
...                  latency=np.full((2, 1), 2), power_uw=np.full((2, 1), 1000.0),
...                  frequency_mhz=np.full(2, 1000.0), dram_bandwidth_gbps=np.full(2, 100.0),
...                  dram_pj_per_byte=np.full(2, 10.0)),
...     keep_ops=True)
>>> r.makespan.tolist(), r.start.tolist(), r.duration.tolist()
([41, 24], [[0, 12, 34], [0, 7, 19]], [[12, 22, 7], [7, 12, 5]])
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit, prange

from nerframe.kernels.dag import Dag, check_dag, dag
from nerframe.kernels.schedule_inputs import ConfigArrays, OpArrays, checked_inputs
from nerframe.kernels.systolic import NONE, op_cycles

__all__ = ["ConfigArrays", "Dag", "OpArrays", "ScheduleResult", "dag", "schedule_configs"]

# Chunks per worker thread: enough to even out uneven chunks, few enough that the
# per-chunk scratch allocation is negligible.
_CHUNKS_PER_THREAD = 8
# Below this many placements (configurations x ops) the batch runs on the calling
# thread: waking the thread pool costs more than scheduling a few thousand ops. A
# single configuration always does: the kernel is parallel over configurations only.
SERIAL_BELOW = 20_000
# Shared DRAM reservations a schedule holds before it first drops the ones no op
# still to place can overlap: small graphs (a sweep's) never pay for the check.
_PRUNE_AT = 256


class ScheduleResult(NamedTuple):
    """Schedules of one graph on C configurations.

    Per-configuration arrays have shape (C,). Per-op arrays have shape (C, n) when
    asked for with ``keep_ops=True`` and shape (0, n) otherwise.
    """

    makespan: np.ndarray  # int64[C]: latest end of one batch
    interval: np.ndarray  # int64[C]: busiest module's busy cycles per instance
    bottleneck: np.ndarray  # int64[C]: module index of the busiest module
    energy_j: np.ndarray  # float64[C]: energy of one batch
    start: np.ndarray  # int64[C|0, n]
    end: np.ndarray  # int64[C|0, n]
    compute_cycles: np.ndarray  # int64[C|0, n]
    memory_cycles: np.ndarray  # int64[C|0, n]
    duration: np.ndarray  # int64[C|0, n]
    instances: np.ndarray  # int64[C|0, n]: k, instances the op occupies
    first_instance: np.ndarray  # int64[C|0, n]: lowest instance index the op occupied
    energy_op: np.ndarray  # float64[C|0, n]


# --------------------------------------------------------------------------- heaps
# The ready set and each module's instances are binary heaps over preallocated
# arrays, sifted in place inside the kernels. They are not factored into helper
# functions taking arrays: numba wraps every such call in atomic reference-count
# updates of its array arguments, which cost more than the whole placement of an op
# in a small graph. The comparisons take scalars only, so they inline for free.


@njit(cache=True)
def _op_before(rank_a: int, a: int, rank_b: int, b: int) -> bool:
    # Ready-set priority: higher upward rank first, then lower op id.
    return rank_a > rank_b or (rank_a == rank_b and a < b)


@njit(cache=True)
def _inst_before(free_a: int, a: int, free_b: int, b: int) -> bool:
    # Instance choice: earliest free first, then lower instance index.
    return free_a < free_b or (free_a == free_b and a < b)


@njit(cache=True)
def _byte_rate(nbytes: float, duration: int, bytes_per_cycle: float) -> float:
    # An op's bytes spread evenly over its duration (> 0), never above the bandwidth:
    # duration >= its memory cycles, so the min only absorbs rounding.
    return min(nbytes / duration, bytes_per_cycle)


@njit(cache=True)
def _l2_floors(l2_cycles: np.ndarray | None, n: int) -> np.ndarray:
    # Ops built without L2 floors (None, a type numba resolves when compiling) have none.
    if l2_cycles is None:
        return np.zeros(n, np.int64)
    return l2_cycles


# ----------------------------------------------------------------------- scheduler


@njit(cache=True)
def _schedule_chunk(
    c_begin: int,
    c_end: int,
    graph: Dag,
    ops: OpArrays,
    cfg: ConfigArrays,
    inst_base: np.ndarray,
    keep_ops: bool,
    out: ScheduleResult,
) -> None:
    # Schedules configurations c_begin..c_end-1 with one set of scratch arrays. The
    # whole configuration loop lives in this one function: a call per configuration
    # would pay atomic reference counting on every array argument.
    pred_ptr, succ_ptr, succ_idx, topo = graph.pred_ptr, graph.succ_ptr, graph.succ_idx, graph.topo
    op_module, work, bytes_total = ops.module, ops.work, ops.bytes_total
    l2_cycles = _l2_floors(ops.l2_cycles, op_module.shape[0])
    module_count, module_k = cfg.count, cfg.instances
    module_throughput, module_latency = cfg.throughput, cfg.latency
    module_power_uw, frequency_mhz = cfg.power_uw, cfg.frequency_mhz
    dram_bandwidth_gbps, dram_pj_per_byte = cfg.dram_bandwidth_gbps, cfg.dram_pj_per_byte
    makespan, interval, bottleneck, energy_j = (
        out.makespan,
        out.interval,
        out.bottleneck,
        out.energy_j,
    )
    start, end, duration, energy_op = out.start, out.end, out.duration, out.energy_op
    compute_cycles, memory_cycles = out.compute_cycles, out.memory_cycles
    instances, first_instance = out.instances, out.first_instance
    n = op_module.shape[0]
    n_modules = module_count.shape[1]
    max_count = 1
    for m in range(n_modules):
        max_count = max(max_count, inst_base[m + 1] - inst_base[m])
    dur = np.empty(n, np.int64)
    rank = np.empty(n, np.int64)
    waiting = np.empty(n, np.int64)  # unplaced predecessors
    ready_at = np.empty(n, np.int64)  # latest end among placed predecessors
    heap = np.empty(n, np.int64)  # ready set, best first
    # Ops that just became ready; pushing them in one place keeps one sift-up.
    released = np.empty(n, np.int64)
    # Instance state of module m: instances touched[m]..count-1 have all been free
    # since untouched_free[m]; instances below touched[m] sit in a heap, keyed by
    # (free time, index), in free_t/free_i[inst_base[m]:]. k is fixed per module,
    # so when ops take every instance (split parallelism) all instances are always
    # free at once: such a module never touches its heap, and a configuration never
    # pays for initialising one.
    free_t = np.empty(inst_base[n_modules], np.int64)
    free_i = np.empty(inst_base[n_modules], np.int64)
    heap_size = np.empty(n_modules, np.int64)
    touched = np.empty(n_modules, np.int64)
    untouched_free = np.empty(n_modules, np.int64)
    chosen = np.empty(max_count, np.int64)
    # Busy cycles of each module: per instance where ops take every instance (their
    # duration), else instance-cycles (duration * k) to divide by the count at the end.
    busy = np.empty(n_modules, np.int64)
    # Array cycles of each op and the (k, rows, cols, dataflow) they were computed
    # for: consecutive configurations of a sweep mostly share them.
    gemm_ptr, gemms, gemm_tiles = ops.gemm_ptr, ops.gemms, ops.gemm_tiles
    array_rows, array_cols, dataflow = cfg.array_rows, cfg.array_cols, cfg.dataflow
    array_cycles = np.zeros(n, np.int64)
    array_key = np.full((n, 4), -1, np.int64)
    # Shared DRAM: each placed op that moves bytes reserves its byte rate over
    # [start, end); res_* hold the reservations (op, start, end) in placement
    # order, near the ones that overlap the window being tried.
    res_op = np.empty(n, np.int64)
    res_start = np.empty(n, np.int64)
    res_end = np.empty(n, np.int64)
    near = np.empty(n, np.int64)
    late = np.empty(n, np.int64)

    for c in range(c_begin, c_end):
        freq_hz = frequency_mhz[c] * 1e6
        bytes_per_cycle = dram_bandwidth_gbps[c] * 1e9 / freq_hz
        for op in range(n):
            m = op_module[op]
            df = dataflow[c, m]
            if df != NONE and gemm_ptr[op + 1] > gemm_ptr[op]:
                k = module_k[c, m]
                rows, cols = array_rows[c, m], array_cols[c, m]
                if (
                    array_key[op, 0] != k
                    or array_key[op, 1] != rows
                    or array_key[op, 2] != cols
                    or array_key[op, 3] != df
                ):
                    array_key[op, 0], array_key[op, 1] = k, rows
                    array_key[op, 2], array_key[op, 3] = cols, df
                    lo, hi = gemm_ptr[op], gemm_ptr[op + 1]
                    array_cycles[op] = op_cycles(gemms, lo, hi, rows, cols, df, k, gemm_tiles)
                # Throughput below the array's 2·rows·cols peak (an efficiency, a
                # throughput axis) stretches its cycles in proportion.
                peak = 2.0 * rows * cols
                compute = math.ceil(array_cycles[op] * (peak / module_throughput[c, m]))
            else:
                compute = math.ceil(work[op] / (module_throughput[c, m] * module_k[c, m]))
            # An op's bytes cross the DRAM and the L2 at once (docs/model.md, "The
            # L2's bandwidth"), so the slower of the two sets its memory cycles.
            memory = max(math.ceil(bytes_total[op] / bytes_per_cycle), l2_cycles[op])
            dur[op] = module_latency[c, m] + max(compute, memory)
            if keep_ops:
                compute_cycles[c, op] = compute
                memory_cycles[c, op] = memory

        # Upward rank, sinks first.
        for j in range(n - 1, -1, -1):
            op = topo[j]
            longest = 0
            for e in range(succ_ptr[op], succ_ptr[op + 1]):
                longest = max(longest, rank[succ_idx[e]])
            rank[op] = dur[op] + longest

        for m in range(n_modules):
            heap_size[m] = 0
            touched[m] = 0
            untouched_free[m] = 0
            busy[m] = 0
        n_released = 0
        for op in range(n):
            waiting[op] = pred_ptr[op + 1] - pred_ptr[op]
            ready_at[op] = 0
            if waiting[op] == 0:
                released[n_released] = op
                n_released += 1

        size = 0
        last_end = 0
        n_res = 0
        res_last = 0  # latest end of a reservation
        res_limit = _PRUNE_AT
        while True:
            # Push the ops that just became ready (sift up) ...
            for r in range(n_released):
                op = released[r]
                i = size
                size += 1
                while i > 0:
                    above = heap[(i - 1) >> 1]
                    if not _op_before(rank[op], op, rank[above], above):
                        break
                    heap[i] = above
                    i = (i - 1) >> 1
                heap[i] = op
            if size == 0:
                break
            # Drop the reservations that end before any op still to place can start,
            # so that the overlap scans below stay proportional to the reservations
            # around the schedule's front rather than to every op placed so far (a
            # graph of 100,000 ops took minutes). A ready op starts no earlier than
            # its ready time and its module's earliest free instance, both final or
            # rising from now on; an op not ready yet starts after a ready one, which
            # it waits for through a chain of unplaced ops. The kept reservations stay
            # in placement order, so every load is summed in the same order as
            # before. Rebuilding only once the list has grown by its kept length
            # plus _PRUNE_AT keeps the copying constant per op, and reads the ready
            # set at most once per _PRUNE_AT placements.
            if n_res >= res_limit:
                floor = res_last
                for h in range(size):
                    r = heap[h]
                    m = op_module[r]
                    if touched[m] < module_count[c, m]:
                        free = untouched_free[m]
                    else:
                        free = free_t[inst_base[m]]
                    floor = min(floor, max(ready_at[r], free))
                kept = 0
                for j in range(n_res):
                    if res_end[j] > floor:
                        res_op[kept] = res_op[j]
                        res_start[kept] = res_start[j]
                        res_end[kept] = res_end[j]
                        kept += 1
                n_res = kept
                res_limit = 2 * kept + _PRUNE_AT
            # ... and pop the best one (sift down).
            op = heap[0]
            size -= 1
            last = heap[size]
            i = 0
            while 2 * i + 1 < size:
                child = 2 * i + 1
                if child + 1 < size and _op_before(
                    rank[heap[child + 1]], heap[child + 1], rank[heap[child]], heap[child]
                ):
                    child += 1
                if not _op_before(rank[heap[child]], heap[child], rank[last], last):
                    break
                heap[i] = heap[child]
                i = child
            heap[i] = last

            # Place it on the k instances of its module that are free earliest.
            m = op_module[op]
            count = module_count[c, m]
            k = module_k[c, m]
            base = inst_base[m]
            hs = heap_size[m]
            nt = touched[m]
            first = 0
            if k == count:
                t_start = max(ready_at[op], untouched_free[m])
            else:
                latest = 0
                first = count
                for j in range(k):
                    # The lowest untouched instance beats the heap top only when it
                    # is free strictly earlier: touched instances have lower indices.
                    if nt < count and (hs == 0 or untouched_free[m] < free_t[base]):
                        t = untouched_free[m]
                        inst = nt
                        nt += 1
                    else:  # pop the heap top
                        t = free_t[base]
                        inst = free_i[base]
                        hs -= 1
                        last_t = free_t[base + hs]
                        last_i = free_i[base + hs]
                        i = 0
                        while 2 * i + 1 < hs:
                            child = 2 * i + 1
                            if child + 1 < hs and _inst_before(
                                free_t[base + child + 1],
                                free_i[base + child + 1],
                                free_t[base + child],
                                free_i[base + child],
                            ):
                                child += 1
                            if not _inst_before(
                                free_t[base + child], free_i[base + child], last_t, last_i
                            ):
                                break
                            free_t[base + i] = free_t[base + child]
                            free_i[base + i] = free_i[base + child]
                            i = child
                        free_t[base + i] = last_t
                        free_i[base + i] = last_i
                    chosen[j] = inst
                    latest = max(latest, t)
                    first = min(first, inst)
                t_start = max(ready_at[op], latest)

            # Shared DRAM: start at the earliest time from t_start on at which the
            # reserved rates plus this op's stay within the bandwidth over its
            # whole window (see docs/model.md, "Shared DRAM bandwidth").
            d = dur[op]
            if bytes_total[op] > 0 and d > 0:
                n_near = 0
                # Nothing reserved runs at or after t_start (a chain): no overlap.
                for j in range(n_res if t_start < res_last else 0):
                    if res_start[j] < t_start + d and t_start < res_end[j]:
                        near[n_near] = j
                        n_near += 1
                # Rates are computed only where ops overlap: a division per op and
                # configuration is dear beside the rest of a small graph's placement.
                own = _byte_rate(bytes_total[op], d, bytes_per_cycle) if n_near > 0 else 0.0
                total = 0.0
                for b in range(n_near):
                    j = res_op[near[b]]
                    total += _byte_rate(bytes_total[j], dur[j], bytes_per_cycle)
                # Fast path: every overlapping reservation at once still leaves room.
                # The exact test below sums subsets of these in the same order, so
                # it would accept t_start too (float sums are monotone).
                if total + own > bytes_per_cycle:
                    t = t_start
                    n_late = -1  # the reservations running at t or later, once needed
                    while True:
                        # The load is a step function rising only at starts: check
                        # t and every reservation start inside (t, t + d). next_t
                        # becomes the earliest end among the reservations running at
                        # the first point found full.
                        next_t = -1
                        for a in range(-1, n_near):
                            p = t if a < 0 else res_start[near[a]]
                            if a >= 0 and (p <= t or p >= t + d):
                                continue
                            load = 0.0
                            ends = -1
                            for b in range(n_near):
                                j = near[b]
                                if res_start[j] <= p and p < res_end[j]:
                                    o = res_op[j]
                                    load += _byte_rate(bytes_total[o], dur[o], bytes_per_cycle)
                                    if ends < 0 or res_end[j] < ends:
                                        ends = res_end[j]
                            if load + own > bytes_per_cycle:
                                next_t = ends
                                break
                        if next_t < 0:
                            break
                        # Only a reservation's end can make room, and every window
                        # that starts before the first end among those running at
                        # the full point p still holds p with all of them (a load
                        # over more of the same rates rounds no lower): skip those.
                        t = next_t
                        # Later windows reach further: take in reservations that
                        # start before the new window ends. Only those still
                        # running at t can be among them, and t only grows: keep
                        # them (in placement order) and look no further back.
                        if n_late < 0:
                            n_late = 0
                            for j in range(n_res):
                                if t < res_end[j]:
                                    late[n_late] = j
                                    n_late += 1
                        n_near = 0
                        kept = 0
                        for b in range(n_late):
                            j = late[b]
                            if t < res_end[j]:
                                late[kept] = j
                                kept += 1
                                if res_start[j] < t + d:
                                    near[n_near] = j
                                    n_near += 1
                        n_late = kept
                    t_start = t
                res_op[n_res] = op
                res_start[n_res] = t_start
                res_end[n_res] = t_start + d
                res_last = max(res_last, t_start + d)
                n_res += 1

            t_end = t_start + dur[op]
            if k == count:
                untouched_free[m] = t_end
                busy[m] += dur[op]
            else:
                for j in range(k):  # push the chosen instances back, busy until t_end
                    inst = chosen[j]
                    i = hs
                    hs += 1
                    while i > 0:
                        parent = (i - 1) >> 1
                        if not _inst_before(
                            t_end, inst, free_t[base + parent], free_i[base + parent]
                        ):
                            break
                        free_t[base + i] = free_t[base + parent]
                        free_i[base + i] = free_i[base + parent]
                        i = parent
                    free_t[base + i] = t_end
                    free_i[base + i] = inst
                heap_size[m] = hs
                touched[m] = nt
                busy[m] += dur[op] * k
            last_end = max(last_end, t_end)
            if keep_ops:
                start[c, op] = t_start
                end[c, op] = t_end
                duration[c, op] = dur[op]
                instances[c, op] = k
                first_instance[c, op] = first
            # Release the successors whose predecessors are now all placed.
            n_released = 0
            for e in range(succ_ptr[op], succ_ptr[op + 1]):
                s = succ_idx[e]
                ready_at[s] = max(ready_at[s], t_end)
                waiting[s] -= 1
                if waiting[s] == 0:
                    released[n_released] = s
                    n_released += 1
        makespan[c] = last_end

        worst = -1
        worst_m = 0
        for m in range(n_modules):
            per_instance = busy[m]
            count = module_count[c, m]
            if module_k[c, m] < count:
                per_instance = (per_instance + count - 1) // count
            if per_instance > worst:
                worst = per_instance
                worst_m = m
        interval[c] = worst
        bottleneck[c] = worst_m

        pj = dram_pj_per_byte[c]
        total = 0.0
        for op in range(n):
            m = op_module[op]
            e_op = (
                module_power_uw[c, m] * module_k[c, m] * 1e-6 * dur[op] / freq_hz
                + bytes_total[op] * pj * 1e-12
            )
            total += e_op
            if keep_ops:
                energy_op[c, op] = e_op
        energy_j[c] = total


@njit(cache=True, parallel=True)
def _schedule_parallel(
    graph: Dag,
    ops: OpArrays,
    cfg: ConfigArrays,
    inst_base: np.ndarray,
    keep_ops: bool,
    n_chunks: int,
    out: ScheduleResult,
) -> None:
    n_configs = cfg.count.shape[0]
    for chunk in prange(n_chunks):
        begin = chunk * n_configs // n_chunks
        end = (chunk + 1) * n_configs // n_chunks
        _schedule_chunk(begin, end, graph, ops, cfg, inst_base, keep_ops, out)


def schedule_configs(
    graph: Dag, ops: OpArrays, configs: ConfigArrays, keep_ops: bool = False
) -> ScheduleResult:
    """List-schedule one graph (data edges only) on a batch of C configurations.

    Every op on module m of configuration c occupies k = ``configs.instances[c, m]``
    of the module's ``configs.count[c, m]`` instances: k = count is ``split``
    parallelism, k = 1 ``instance``. Its duration is the module latency plus the
    larger of ``ceil(work / (throughput * k))`` and its DRAM cycles. Ops share
    the DRAM: an op moves its bytes at ``bytes / duration`` per cycle, and starts
    at the earliest time, from when its predecessors and instances allow, at
    which that rate fits beside the placed ops' rates throughout its run (a
    cumulative resource of the bandwidth's capacity; docs/model.md, "Shared DRAM
    bandwidth"). On a module
    with a dataflow (a systolic array) an op with GEMMs takes their folded cycles
    instead (`nerframe.kernels.systolic.op_cycles` over k arrays), times
    ``2 * rows * cols / throughput``. Per-op arrays
    are filled only with ``keep_ops``. Arguments are validated in O(n + e + C * M);
    a violation raises `nerframe.kernels.faults.KernelInputError` naming the field, the
    configuration and, for a duration beyond the exact range, the op and module.
    Small batches and a single configuration run on the calling thread. See the
    module docstring for an example.
    """
    n = np.asarray(ops.module).size
    graph = check_dag(graph, n)
    n_configs = np.asarray(configs.count).shape[0]
    parallel = n_configs > 1 and n_configs * max(n, 1) >= SERIAL_BELOW and get_num_threads() > 1
    n_chunks = min(n_configs, _CHUNKS_PER_THREAD * get_num_threads()) if parallel else 1
    ops, cfg, count_max = checked_inputs(ops, configs, n_chunks)
    inst_base = np.zeros(count_max.size + 1, np.int64)
    np.cumsum(count_max, out=inst_base[1:])
    rows = n_configs if keep_ops else 0
    out = ScheduleResult._make(
        [np.zeros(n_configs, np.int64) for _ in range(3)]
        + [np.zeros(n_configs, np.float64)]
        + [np.zeros((rows, n), np.int64) for _ in range(7)]
        + [np.zeros((rows, n), np.float64)]
    )
    if parallel:
        _schedule_parallel(graph, ops, cfg, inst_base, keep_ops, n_chunks, out)
    else:
        _schedule_chunk(0, n_configs, graph, ops, cfg, inst_base, keep_ops, out)
    return out

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
from nerframe.kernels.systolic import NONE, tiled_gemm_cycles

__all__ = ["ConfigArrays", "Dag", "OpArrays", "ScheduleResult", "dag", "schedule_configs"]

# Chunks per worker thread: enough to even out uneven chunks, few enough that the
# per-chunk scratch allocation is negligible.
_CHUNKS_PER_THREAD = 8
# Below this many placements (configurations x ops) the batch runs on the calling
# thread: waking the thread pool costs more than scheduling a few thousand ops. A
# single configuration always does: the kernel is parallel over configurations only.
SERIAL_BELOW = 20_000


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


@njit(cache=True)
def _whole_gemms(gemm_tiles: np.ndarray | None, n: int) -> np.ndarray:
    # GEMMs built without tiles (None) run whole: tile 0.
    if gemm_tiles is None:
        return np.zeros(n, np.int64)
    return gemm_tiles


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
    # Per op: the latest end among its placed predecessors, and a step of the DRAM
    # load at or before it (below); side by side, as both are updated together.
    ready = np.empty((n, 2), np.int64)
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
    gemm_ptr, gemms = ops.gemm_ptr, ops.gemms
    gemm_tiles = _whole_gemms(ops.gemm_tiles, gemms.shape[0])
    array_rows, array_cols, dataflow = cfg.array_rows, cfg.array_cols, cfg.dataflow
    array_cycles = np.zeros(n, np.int64)
    array_key = np.full((n, 4), -1, np.int64)
    # Shared DRAM: the load (bytes per cycle reserved by the placed ops) as a step
    # function, a list of steps linked in time order from step 0 (time 0): step i
    # holds step_v[i] from step_t[i] to the next step's time, and the last one (`tail`)
    # holds 0 from its time on (every reservation has ended). Each placement adds its
    # rate to the steps its window covers and is the latest reservation, so a step
    # holds exactly the sum, in placement order, of the rates of the ops running
    # there: the float the reference sums at every point, so the decisions are the
    # same bit for bit. A linked list rather than a sorted array: inserting into an
    # array shifts every later step (the reservations ahead of the schedule's front,
    # dozens per op in the 1 M-op benchmark), which cost more than the search.
    # Steps are never removed or moved, so a step at or before an op's end stays
    # one: ready[:, 1], free_step and module_step keep one for each time an op's
    # start is the max of, the search starts there (rather than at step 0 or with
    # a search through the list), and it is the exact step when the op that ended
    # there reserved the DRAM. Each reservation adds at most two steps.
    step_t = np.empty(2 * n + 1, np.int64)
    step_v = np.empty(2 * n + 1, np.float64)
    step_next = np.empty(2 * n + 1, np.int64)
    free_step = np.empty(inst_base[n_modules], np.int64)  # per instance, by index
    module_step = np.empty(n_modules, np.int64)  # for untouched_free

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
                    # op_cycles, with the loop here: a call taking `gemms` would
                    # update its reference count (an atomic add on a cache line
                    # every thread of a sweep shares) once per configuration.
                    cycles = 0
                    for g in range(gemm_ptr[op], gemm_ptr[op + 1]):
                        m_all, inner, outer = gemms[g, 0], gemms[g, 1], gemms[g, 2]
                        tile = gemm_tiles[g]
                        cycles += tiled_gemm_cycles(m_all, inner, outer, tile, rows, cols, df, k)
                    array_cycles[op] = cycles
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
            module_step[m] = 0
        n_released = 0
        for op in range(n):
            waiting[op] = pred_ptr[op + 1] - pred_ptr[op]
            ready[op, 0] = 0
            ready[op, 1] = 0
            if waiting[op] == 0:
                released[n_released] = op
                n_released += 1

        size = 0
        last_end = 0
        step_t[0] = 0
        step_v[0] = 0.0
        tail = 0
        n_steps = 1
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
                t_start = max(ready[op, 0], untouched_free[m])
                from_step = ready[op, 1] if ready[op, 0] >= untouched_free[m] else module_step[m]
            else:
                latest = 0
                latest_step = 0
                first = count
                for j in range(k):
                    # The lowest untouched instance beats the heap top only when it
                    # is free strictly earlier: touched instances have lower indices.
                    if nt < count and (hs == 0 or untouched_free[m] < free_t[base]):
                        t = untouched_free[m]
                        inst = nt
                        nt += 1
                        t_step = module_step[m]
                    else:  # pop the heap top
                        t = free_t[base]
                        inst = free_i[base]
                        t_step = free_step[base + inst]
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
                    if t >= latest:
                        latest = t
                        latest_step = t_step
                    first = min(first, inst)
                t_start = max(ready[op, 0], latest)
                from_step = ready[op, 1] if ready[op, 0] >= latest else latest_step

            # Shared DRAM: start at the earliest time from t_start on at which the
            # reserved rates plus this op's stay within the bandwidth over its
            # whole window (see docs/model.md, "Shared DRAM bandwidth").
            d = dur[op]
            op_step = from_step  # a step at or before this op's end, for its successors
            if bytes_total[op] > 0 and d > 0:
                own = _byte_rate(bytes_total[op], d, bytes_per_cycle)
                if t_start >= step_t[tail]:
                    # Nothing reserved runs at or after t_start (a chain): no overlap.
                    if t_start > step_t[tail]:
                        step_next[tail] = n_steps
                        tail = n_steps
                        n_steps += 1
                        step_t[tail] = t_start
                    step_v[tail] = own  # 0.0 + own
                    step_next[tail] = n_steps
                    tail = n_steps
                    n_steps += 1
                    step_t[tail] = t_start + d
                    step_v[tail] = 0.0
                    op_step = tail
                else:
                    # The step holding t_start, from one at or before it: the step of
                    # the end that set t_start, unless that op reserved nothing.
                    a = from_step
                    while a != tail and step_t[step_next[a]] <= t_start:
                        a = step_next[a]
                    # A step is full when its load plus this op's rate exceeds the
                    # bandwidth (the reference's float test). No window that overlaps
                    # a full step fits, so the earliest window that fits starts at
                    # t_start or at the end of a full step: walking the steps once,
                    # moving t past each full one the window meets, finds it. It is
                    # the reference's first fitting candidate too: a window that fits
                    # and starts after the last candidate before it (t_start or an
                    # end) has no end in between, so the window at that candidate
                    # sees subsets of the same loads, which sum no higher. The tail
                    # (load 0) is never full.
                    t = t_start
                    j = a
                    while j != tail and step_t[j] < t + d:
                        after = step_next[j]
                        if step_v[j] + own > bytes_per_cycle:
                            t = step_t[after]
                            a = after
                        j = after
                    t_start = t
                    # Add own over [t, t + d): split the step holding t + d where
                    # no step begins there (while its load is still the old one),
                    # then add to the steps from the one holding t on, splitting
                    # that one where it begins before t.
                    e = t + d
                    z = a  # the last step that begins before e
                    while z != tail and step_t[step_next[z]] < e:
                        z = step_next[z]
                    if z == tail or step_t[step_next[z]] > e:
                        step_t[n_steps] = e
                        step_v[n_steps] = step_v[z]
                        if z == tail:
                            tail = n_steps
                        else:
                            step_next[n_steps] = step_next[z]
                        step_next[z] = n_steps
                        n_steps += 1
                    op_step = step_next[z]
                    j = a
                    while j != z:
                        j = step_next[j]
                        step_v[j] += own
                    if step_t[a] < t:
                        step_t[n_steps] = t
                        step_v[n_steps] = step_v[a] + own
                        step_next[n_steps] = step_next[a]
                        step_next[a] = n_steps
                        n_steps += 1
                    else:
                        step_v[a] += own

            t_end = t_start + dur[op]
            if k == count:
                untouched_free[m] = t_end
                module_step[m] = op_step
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
                    free_step[base + inst] = op_step
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
                if t_end >= ready[s, 0]:
                    ready[s, 0] = t_end
                    ready[s, 1] = op_step
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

"""Batched list scheduling of one operator graph across many hardware configurations.

Implements spec/hardware.md, "Duration of an operator on its module", "List
scheduling (one batch)" and the per-batch figures of "Frames, throughput and PPA"
(makespan, interval, bottleneck, energy). One graph (CSR arrays) is scheduled on a
batch of C configurations in parallel; a single analysis is a batch of one.
`kernels/reference_schedule.py` implements the same rules one configuration at a
time in plain Python: it is the test oracle and the benchmark baseline, and every
float expression below is evaluated in the same order there, so both give
bit-identical results.

Example: a chain 0 -> 1 -> 2 on one module, with one and with two instances:

>>> import numpy as np
>>> src, dst = np.array([0, 1]), np.array([1, 2])
>>> pred_ptr, pred_idx, succ_ptr, succ_idx = csr(3, src, dst)
>>> r = schedule_configs(
...     pred_ptr, pred_idx, succ_ptr, succ_idx, topological_order(3, src, dst),
...     op_module=np.zeros(3, np.int64), flops=np.array([100.0, 200.0, 50.0]),
...     bytes_total=np.zeros(3), module_count=np.array([[1], [2]]),
...     module_throughput=np.full((2, 1), 10.0), module_latency=np.full((2, 1), 2),
...     module_power_uw=np.full((2, 1), 1000.0), frequency_mhz=np.full(2, 1000.0),
...     dram_bandwidth_gbps=np.full(2, 100.0), dram_pj_per_byte=np.full(2, 10.0),
...     split=True, keep_ops=True)
>>> r.makespan.tolist(), r.start.tolist(), r.duration.tolist()
([41, 24], [[0, 12, 34], [0, 7, 19]], [[12, 22, 7], [7, 12, 5]])
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import get_num_threads, njit, prange

__all__ = [
    "CycleError",
    "ScheduleResult",
    "csr",
    "schedule_configs",
    "schedule_configs_k",
    "topological_order",
]

# Chunks per worker thread: enough to even out uneven chunks, few enough that the
# per-chunk scratch allocation is negligible.
_CHUNKS_PER_THREAD = 8
# Durations are computed in float64 and then made integers; beyond 2**53 cycles the
# ceil is no longer exact and sums of durations could overflow int64.
_MAX_CYCLES = float(2**53)


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


class CycleError(ValueError):
    """The data edges are cyclic; ``cycle`` lists the ops on one cycle, in edge order."""

    def __init__(self, cycle: list[int]) -> None:
        self.cycle = cycle
        path = " -> ".join(str(op) for op in [*cycle, cycle[0]])
        super().__init__(f"data edges form a cycle: {path}")


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


# ------------------------------------------------------------------- graph helpers


def csr(
    n: int, src: np.ndarray, dst: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Predecessor and successor CSR arrays of n ops and the edges src[i] -> dst[i].

    Each op's predecessors (successors) are listed in increasing op id, so the
    result depends only on the edge set. Returns (pred_ptr, pred_idx, succ_ptr,
    succ_idx), all int64.

    >>> [a.tolist() for a in csr(3, [0, 0], [2, 1])]
    [[0, 0, 1, 2], [0, 0], [0, 2, 2, 2], [1, 2]]
    """
    src = _int_vector("src", src)
    dst = _int_vector("dst", dst)
    if n < 0:
        raise ValueError(f"op count must be >= 0, got {n}")
    if src.shape != dst.shape:
        raise ValueError(f"src has {src.size} edges but dst has {dst.size}")
    for name, ends in (("src", src), ("dst", dst)):
        if ends.size and (ends.min() < 0 or ends.max() >= n):
            bad = ends[(ends < 0) | (ends >= n)][0]
            raise ValueError(f"{name} names op {bad}, outside 0..{n - 1}")
    # Radix sort in O(n + e): by src, then stably by dst gives (dst, src) order for
    # the predecessors; stably by src again gives (src, dst) order for successors.
    _, by_src = _bucket(n, src, np.arange(src.size))
    pred_ptr, by_dst_src = _bucket(n, dst, by_src)
    succ_ptr, by_src_dst = _bucket(n, src, by_dst_src)
    return pred_ptr, src[by_dst_src], succ_ptr, dst[by_src_dst]


@njit(cache=True)
def _bucket(n: int, key: np.ndarray, order: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # Stable counting sort of the edge indices `order` by key (an op id): returns
    # the CSR offsets of each key and the sorted indices.
    ptr = np.zeros(n + 1, np.int64)
    for e in order:
        ptr[key[e] + 1] += 1
    for op in range(n):
        ptr[op + 1] += ptr[op]
    fill = ptr[:-1].copy()
    out = np.empty_like(order)
    for e in order:
        out[fill[key[e]]] = e
        fill[key[e]] += 1
    return ptr, out


@njit(cache=True)
def _kahn(
    pred_ptr: np.ndarray, succ_ptr: np.ndarray, succ_idx: np.ndarray
) -> tuple[np.ndarray, int]:
    # Returns the order and how many ops it holds (fewer than n on a cycle).
    n = pred_ptr.shape[0] - 1
    waiting = np.empty(n, np.int64)
    heap = np.empty(n, np.int64)  # min-heap of ready op ids
    order = np.empty(n, np.int64)
    # Ops that just became ready; pushing them in one place keeps one sift-up.
    released = np.empty(n, np.int64)
    n_released = 0
    for op in range(n):
        waiting[op] = pred_ptr[op + 1] - pred_ptr[op]
        if waiting[op] == 0:
            released[n_released] = op
            n_released += 1
    size = 0
    placed = 0
    while True:
        for r in range(n_released):
            op = released[r]
            i = size
            size += 1
            while i > 0 and op < heap[(i - 1) >> 1]:
                heap[i] = heap[(i - 1) >> 1]
                i = (i - 1) >> 1
            heap[i] = op
        if size == 0:
            return order, placed
        op = heap[0]
        size -= 1
        last = heap[size]
        i = 0
        while 2 * i + 1 < size:
            child = 2 * i + 1
            if child + 1 < size and heap[child + 1] < heap[child]:
                child += 1
            if last < heap[child]:
                break
            heap[i] = heap[child]
            i = child
        heap[i] = last
        order[placed] = op
        placed += 1
        n_released = 0
        for j in range(succ_ptr[op], succ_ptr[op + 1]):
            s = succ_idx[j]
            waiting[s] -= 1
            if waiting[s] == 0:
                released[n_released] = s
                n_released += 1


@njit(cache=True)
def _cycle(
    pred_ptr: np.ndarray, pred_idx: np.ndarray, order: np.ndarray, placed: int
) -> np.ndarray:
    # Every op Kahn could not place has an unplaced predecessor, so walking back
    # from one along unplaced predecessors must revisit an op: that closes a cycle.
    n = pred_ptr.shape[0] - 1
    done = np.zeros(n, np.bool_)
    for j in range(placed):
        done[order[j]] = True
    step = np.full(n, -1, np.int64)  # position of each op on the walk
    walk = np.empty(n, np.int64)
    op = 0
    while done[op]:
        op += 1
    length = 0
    while step[op] < 0:
        step[op] = length
        walk[length] = op
        length += 1
        for j in range(pred_ptr[op], pred_ptr[op + 1]):
            if not done[pred_idx[j]]:
                op = pred_idx[j]
                break
    # The walk goes against the edges; reverse it into edge order.
    return walk[step[op] : length][::-1].copy()


def topological_order(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Kahn's topological order of n ops and edges src -> dst (int64[n]).

    Among ready ops the smallest id comes first, so the order is deterministic.
    Raises CycleError (a ValueError) naming the ops on one cycle, starting from
    its smallest op id, when the edges are cyclic.

    >>> topological_order(4, [3, 1, 0], [1, 2, 2]).tolist()
    [0, 3, 1, 2]
    >>> try:
    ...     topological_order(4, [0, 1, 2, 3], [1, 2, 1, 1])
    ... except CycleError as err:
    ...     print(err.cycle, err)
    [1, 2] data edges form a cycle: 1 -> 2 -> 1
    """
    pred_ptr, pred_idx, succ_ptr, succ_idx = csr(n, src, dst)
    order, placed = _kahn(pred_ptr, succ_ptr, succ_idx)
    if placed < n:
        cycle = _cycle(pred_ptr, pred_idx, order, placed).tolist()
        first = cycle.index(min(cycle))
        raise CycleError(cycle[first:] + cycle[:first])
    return order


# ----------------------------------------------------------------------- scheduler


@njit(cache=True)
def _schedule_chunk(
    c_begin: int,
    c_end: int,
    pred_ptr: np.ndarray,
    succ_ptr: np.ndarray,
    succ_idx: np.ndarray,
    topo: np.ndarray,
    op_module: np.ndarray,
    flops: np.ndarray,
    bytes_total: np.ndarray,
    module_count: np.ndarray,
    module_k: np.ndarray,
    module_throughput: np.ndarray,
    module_latency: np.ndarray,
    module_power_uw: np.ndarray,
    frequency_mhz: np.ndarray,
    dram_bandwidth_gbps: np.ndarray,
    dram_pj_per_byte: np.ndarray,
    inst_base: np.ndarray,
    keep_ops: bool,
    makespan: np.ndarray,
    interval: np.ndarray,
    bottleneck: np.ndarray,
    energy_j: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    compute_cycles: np.ndarray,
    memory_cycles: np.ndarray,
    duration: np.ndarray,
    instances: np.ndarray,
    first_instance: np.ndarray,
    energy_op: np.ndarray,
) -> None:
    # Schedules configurations c_begin..c_end-1 with one set of scratch arrays. The
    # whole configuration loop lives in this one function: a call per configuration
    # would pay atomic reference counting on every array argument.
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

    for c in range(c_begin, c_end):
        freq_hz = frequency_mhz[c] * 1e6
        bytes_per_cycle = dram_bandwidth_gbps[c] * 1e9 / freq_hz
        for op in range(n):
            m = op_module[op]
            compute = math.ceil(flops[op] / (module_throughput[c, m] * module_k[c, m]))
            memory = math.ceil(bytes_total[op] / bytes_per_cycle)
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
            if k == count:
                t_start = max(ready_at[op], untouched_free[m])
                t_end = t_start + dur[op]
                first = 0
                untouched_free[m] = t_end
                busy[m] += dur[op]
            else:
                base = inst_base[m]
                hs = heap_size[m]
                nt = touched[m]
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
                t_end = t_start + dur[op]
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
def _schedule_batch(
    pred_ptr: np.ndarray,
    succ_ptr: np.ndarray,
    succ_idx: np.ndarray,
    topo: np.ndarray,
    op_module: np.ndarray,
    flops: np.ndarray,
    bytes_total: np.ndarray,
    module_count: np.ndarray,
    module_k: np.ndarray,
    module_throughput: np.ndarray,
    module_latency: np.ndarray,
    module_power_uw: np.ndarray,
    frequency_mhz: np.ndarray,
    dram_bandwidth_gbps: np.ndarray,
    dram_pj_per_byte: np.ndarray,
    inst_base: np.ndarray,
    keep_ops: bool,
    n_chunks: int,
    makespan: np.ndarray,
    interval: np.ndarray,
    bottleneck: np.ndarray,
    energy_j: np.ndarray,
    start: np.ndarray,
    end: np.ndarray,
    compute_cycles: np.ndarray,
    memory_cycles: np.ndarray,
    duration: np.ndarray,
    instances: np.ndarray,
    first_instance: np.ndarray,
    energy_op: np.ndarray,
) -> None:
    n_configs = module_count.shape[0]
    for chunk in prange(n_chunks):
        _schedule_chunk(
            chunk * n_configs // n_chunks,
            (chunk + 1) * n_configs // n_chunks,
            pred_ptr,
            succ_ptr,
            succ_idx,
            topo,
            op_module,
            flops,
            bytes_total,
            module_count,
            module_k,
            module_throughput,
            module_latency,
            module_power_uw,
            frequency_mhz,
            dram_bandwidth_gbps,
            dram_pj_per_byte,
            inst_base,
            keep_ops,
            makespan,
            interval,
            bottleneck,
            energy_j,
            start,
            end,
            compute_cycles,
            memory_cycles,
            duration,
            instances,
            first_instance,
            energy_op,
        )


# ------------------------------------------------------------------ Python wrapper


def _int_vector(name: str, values: object) -> np.ndarray:
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise ValueError(f"{name} must be one-dimensional, got shape {arr.shape}")
    if arr.size and arr.dtype.kind not in "iu":
        raise ValueError(f"{name} must hold integers, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.int64)


# Per-configuration arguments of the kernel, in order: (name, integer, lowest
# allowed value, whether that value itself is excluded). module_* are (C, M).
_PER_CONFIG = (
    ("module_count", True, 1, False),
    ("module_instances", True, 1, False),
    ("module_throughput", False, 0, True),
    ("module_latency", True, 0, False),
    ("module_power_uw", False, 0, False),
    ("frequency_mhz", False, 0, True),
    ("dram_bandwidth_gbps", False, 0, True),
    ("dram_pj_per_byte", False, 0, False),
)


def _array(name: str, values: object, shape: tuple[int, ...], integer: bool) -> np.ndarray:
    """`values` as a contiguous int64 (integer) or float64 array of `shape`."""
    arr = np.asarray(values)
    if arr.shape != shape:
        raise ValueError(f"{name} must have shape {shape}, got {arr.shape}")
    if arr.size and arr.dtype.kind not in ("iu" if integer else "iuf"):
        kind = "integers" if integer else "numbers"
        raise ValueError(f"{name} must hold {kind}, got dtype {arr.dtype}")
    return np.ascontiguousarray(arr, dtype=np.int64 if integer else np.float64)


def _check_range(name: str, arr: np.ndarray, low: float, strict: bool = False) -> None:
    """Raise unless every value is finite and >= low (> low when strict)."""
    if arr.size == 0:
        return
    lo, hi = arr.min(), arr.max()
    if not (np.isfinite(lo) and np.isfinite(hi)):
        raise ValueError(f"{name} must be finite, got {hi if np.isfinite(lo) else lo}")
    if lo < low or (strict and lo == low):
        raise ValueError(f"{name} must be {'>' if strict else '>='} {low}, got {lo}")


@njit(cache=True, parallel=True)
def _scan_configs(
    module_count: np.ndarray,
    module_k: np.ndarray,
    module_throughput: np.ndarray,
    module_latency: np.ndarray,
    module_power_uw: np.ndarray,
    frequency_mhz: np.ndarray,
    dram_bandwidth_gbps: np.ndarray,
    dram_pj_per_byte: np.ndarray,
    flops_max: float,
    bytes_max: float,
    n_chunks: int,
) -> tuple[int, np.ndarray, float]:
    # One parallel pass instead of a dozen NumPy reductions over millions of rows.
    # Returns the first configuration holding an invalid value (C if none), each
    # module's largest count, and an upper bound on any op's duration.
    n_configs, n_modules = module_count.shape
    first_bad = np.full(n_chunks, n_configs, np.int64)
    chunk_count = np.zeros((n_chunks, n_modules), np.int64)
    chunk_worst = np.zeros(n_chunks)
    for chunk in prange(n_chunks):
        # Accumulate in locals: chunks writing to adjacent shared slots would make
        # the threads fight over cache lines.
        count_seen = np.zeros(n_modules, np.int64)
        worst = 0.0
        for c in range(chunk * n_configs // n_chunks, (chunk + 1) * n_configs // n_chunks):
            f = frequency_mhz[c]
            bw = dram_bandwidth_gbps[c]
            pj = dram_pj_per_byte[c]
            # Every test is false for NaN.
            ok = f > 0 and f < math.inf and bw > 0 and bw < math.inf
            ok = ok and pj >= 0 and pj < math.inf
            memory = bytes_max * f * 1e6 / (bw * 1e9) if ok else 0.0
            for m in range(n_modules):
                count = module_count[c, m]
                k = module_k[c, m]
                thr = module_throughput[c, m]
                power = module_power_uw[c, m]
                ok = ok and count >= 1 and k >= 1 and k <= count and module_latency[c, m] >= 0
                ok = ok and thr > 0 and thr < math.inf and power >= 0 and power < math.inf
                if not ok:
                    break
                count_seen[m] = max(count_seen[m], count)
                worst = max(worst, module_latency[c, m] + flops_max / thr + memory)
            if not ok:
                first_bad[chunk] = c
                break
        chunk_count[chunk] = count_seen
        chunk_worst[chunk] = worst
    count_max = np.zeros(n_modules, np.int64)
    for chunk in range(n_chunks):
        for m in range(n_modules):
            count_max[m] = max(count_max[m], chunk_count[chunk, m])
    return (
        first_bad.min() if n_chunks else n_configs,
        count_max,
        chunk_worst.max() if n_chunks else 0.0,
    )


def _check_csr(name: str, ptr: np.ndarray, idx: np.ndarray, n: int) -> None:
    if ptr.shape != (n + 1,):
        raise ValueError(f"{name}_ptr must have shape ({n + 1},), got {ptr.shape}")
    if ptr[0] != 0 or ptr[-1] != idx.size or (np.diff(ptr) < 0).any():
        raise ValueError(f"{name}_ptr is not a valid CSR offset array for {idx.size} edges")
    if idx.size and (idx.min() < 0 or idx.max() >= n):
        raise ValueError(f"{name}_idx names an op outside 0..{n - 1}")


def schedule_configs_k(
    pred_ptr: np.ndarray,
    pred_idx: np.ndarray,
    succ_ptr: np.ndarray,
    succ_idx: np.ndarray,
    topo: np.ndarray,
    op_module: np.ndarray,
    flops: np.ndarray,
    bytes_total: np.ndarray,
    module_count: np.ndarray,
    module_instances: np.ndarray,
    module_throughput: np.ndarray,
    module_latency: np.ndarray,
    module_power_uw: np.ndarray,
    frequency_mhz: np.ndarray,
    dram_bandwidth_gbps: np.ndarray,
    dram_pj_per_byte: np.ndarray,
    keep_ops: bool,
) -> ScheduleResult:
    """List-schedule one graph on C configurations, each op taking k instances.

    The general form of `schedule_configs`: every op on module m of configuration c
    occupies k = module_instances[c, m] of its module's module_count[c, m]
    instances (1 <= k <= count). Arguments are validated cheaply (shapes, ranges,
    CSR structure, pred/succ agreement, `topo` being a topological order); a
    violation raises ValueError.
    """
    op_module = _int_vector("op_module", op_module)
    n = op_module.size
    pred_ptr, pred_idx = _int_vector("pred_ptr", pred_ptr), _int_vector("pred_idx", pred_idx)
    succ_ptr, succ_idx = _int_vector("succ_ptr", succ_ptr), _int_vector("succ_idx", succ_idx)
    _check_csr("pred", pred_ptr, pred_idx, n)
    _check_csr("succ", succ_ptr, succ_idx, n)
    if pred_idx.size != succ_idx.size:
        raise ValueError(f"pred has {pred_idx.size} edges but succ has {succ_idx.size}")
    # Both CSRs must describe the same edges: compare the sorted edge keys.
    pred_dst = np.repeat(np.arange(n, dtype=np.int64), np.diff(pred_ptr))
    succ_src = np.repeat(np.arange(n, dtype=np.int64), np.diff(succ_ptr))
    if not np.array_equal(np.sort(pred_idx * n + pred_dst), np.sort(succ_src * n + succ_idx)):
        raise ValueError("pred and succ CSR arrays describe different edges")
    topo = _int_vector("topo", topo)
    position = np.full(n, -1, np.int64)
    if topo.size == n and (n == 0 or (topo.min() >= 0 and topo.max() < n)):
        position[topo] = np.arange(n)
    if topo.size != n or (position < 0).any():
        raise ValueError(f"topo must be a permutation of 0..{n - 1}")
    if (position[succ_src] >= position[succ_idx]).any():
        raise ValueError("topo is not a topological order of the edges")

    flops = _array("flops", flops, (n,), integer=False)
    bytes_total = _array("bytes_total", bytes_total, (n,), integer=False)
    _check_range("flops", flops, 0)
    _check_range("bytes_total", bytes_total, 0)
    module_count = np.asarray(module_count)
    if module_count.ndim != 2 or module_count.shape[1] < 1:
        raise ValueError(
            f"module_count must have shape (C, M) with M >= 1, got {module_count.shape}"
        )
    shape_cm = module_count.shape
    n_configs, n_modules = shape_cm
    if n and (op_module.min() < 0 or op_module.max() >= n_modules):
        raise ValueError(f"op_module names a module outside 0..{n_modules - 1}")
    values = (
        module_count,
        module_instances,
        module_throughput,
        module_latency,
        module_power_uw,
        frequency_mhz,
        dram_bandwidth_gbps,
        dram_pj_per_byte,
    )
    arrays = [
        _array(name, v, shape_cm if name.startswith("module_") else (n_configs,), integer)
        for (name, integer, _, _), v in zip(_PER_CONFIG, values, strict=True)
    ]
    n_chunks = min(n_configs, _CHUNKS_PER_THREAD * get_num_threads())
    bad, count_max, worst = _scan_configs(
        *arrays, flops.max(initial=0.0), bytes_total.max(initial=0.0), n_chunks
    )
    if bad < n_configs:
        # Name the culprit: re-check that one configuration field by field.
        for (name, _, low, strict), arr in zip(_PER_CONFIG, arrays, strict=True):
            _check_range(f"{name} of configuration {bad}", arr[bad], low, strict)
        raise ValueError(f"module_instances of configuration {bad} exceed module_count")
    if worst * n >= _MAX_CYCLES:
        raise ValueError(f"durations of up to {worst:.3g} cycles exceed the exact range")

    inst_base = np.zeros(n_modules + 1, np.int64)
    np.cumsum(count_max, out=inst_base[1:])
    rows = n_configs if keep_ops else 0
    makespan = np.zeros(n_configs, np.int64)
    interval = np.zeros(n_configs, np.int64)
    bottleneck = np.zeros(n_configs, np.int64)
    energy_j = np.zeros(n_configs, np.float64)
    per_op = [np.zeros((rows, n), np.int64) for _ in range(7)]
    energy_op = np.zeros((rows, n), np.float64)
    _schedule_batch(
        pred_ptr,
        succ_ptr,
        succ_idx,
        topo,
        op_module,
        flops,
        bytes_total,
        *arrays,
        inst_base,
        keep_ops,
        n_chunks,
        makespan,
        interval,
        bottleneck,
        energy_j,
        *per_op,
        energy_op,
    )
    return ScheduleResult(makespan, interval, bottleneck, energy_j, *per_op, energy_op)


def schedule_configs(
    pred_ptr: np.ndarray,
    pred_idx: np.ndarray,
    succ_ptr: np.ndarray,
    succ_idx: np.ndarray,
    topo: np.ndarray,
    op_module: np.ndarray,
    flops: np.ndarray,
    bytes_total: np.ndarray,
    module_count: np.ndarray,
    module_throughput: np.ndarray,
    module_latency: np.ndarray,
    module_power_uw: np.ndarray,
    frequency_mhz: np.ndarray,
    dram_bandwidth_gbps: np.ndarray,
    dram_pj_per_byte: np.ndarray,
    split: bool,
    keep_ops: bool,
) -> ScheduleResult:
    """List-schedule one graph (data edges only) on a batch of C configurations.

    Under ``split`` parallelism an op takes all ``count`` instances of its module,
    otherwise ("instance") it takes one. Per-op arrays are filled only with
    ``keep_ops``. Arguments are validated cheaply; a violation raises ValueError.
    See the module docstring for an example.
    """
    module_count = np.asarray(module_count)
    module_instances = module_count if split else np.ones_like(module_count)
    return schedule_configs_k(
        pred_ptr,
        pred_idx,
        succ_ptr,
        succ_idx,
        topo,
        op_module,
        flops,
        bytes_total,
        module_count,
        module_instances,
        module_throughput,
        module_latency,
        module_power_uw,
        frequency_mhz,
        dram_bandwidth_gbps,
        dram_pj_per_byte,
        keep_ops,
    )

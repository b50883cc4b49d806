"""Operator graphs as arrays: CSR adjacency and a deterministic topological order.

The scheduler walks a graph through its predecessor and successor lists in CSR
form (offsets `*_ptr` into neighbour arrays `*_idx`) and a topological order.
`dag` computes all of them once from an edge list; `check_dag` verifies a `Dag`
built elsewhere in O(n + e).

>>> d = dag(3, [0, 1], [1, 2])
>>> d.pred_ptr.tolist(), d.pred_idx.tolist(), d.topo.tolist()
([0, 0, 1, 2], [0, 1], [0, 1, 2])
"""

from __future__ import annotations

import weakref
from typing import NamedTuple

import numpy as np
from numba import njit

from nerframe.kernels.faults import CyclicEdgesError, KernelInputError

__all__ = ["CyclicEdgesError", "Dag", "check_dag", "csr", "dag", "depths", "topological_order"]


class Dag(NamedTuple):
    """A graph of n ops: predecessor and successor CSR arrays and a topological order."""

    pred_ptr: (
        np.ndarray
    )  # int64[n + 1]: predecessors of op i are pred_idx[pred_ptr[i]:pred_ptr[i + 1]]
    pred_idx: np.ndarray  # int64[e]
    succ_ptr: np.ndarray  # int64[n + 1]
    succ_idx: np.ndarray  # int64[e]
    topo: np.ndarray  # int64[n]: every edge goes forward in this order


def int_vector(name: str, values: object) -> np.ndarray:
    """`values` as a contiguous one-dimensional int64 array, or KernelInputError.

    >>> int_vector("src", [1, 2]).dtype
    dtype('int64')
    """
    arr = np.asarray(values)
    if arr.ndim != 1:
        raise KernelInputError(f"{name} must be one-dimensional, got shape {arr.shape}", name)
    if arr.size and arr.dtype.kind not in "iu":
        raise KernelInputError(f"{name} must hold integers, got dtype {arr.dtype}", name)
    return np.ascontiguousarray(arr, dtype=np.int64)


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
    src = int_vector("src", src)
    dst = int_vector("dst", dst)
    if n < 0:
        raise KernelInputError(f"op count must be >= 0, got {n}", "n")
    if src.shape != dst.shape:
        raise KernelInputError(f"src has {src.size} edges but dst has {dst.size}", "dst")
    for name, ends in (("src", src), ("dst", dst)):
        if ends.size and (ends.min() < 0 or ends.max() >= n):
            bad = ends[(ends < 0) | (ends >= n)][0]
            raise KernelInputError(f"{name} names op {bad}, outside 0..{n - 1}", name)
    # Counting sorts in O(n + e): group the edges' targets by source (in edge
    # order), transpose into per-target lists, which come out sorted by source
    # because sources are visited in increasing id; transposing again gives
    # per-source lists sorted by target.
    by_src_ptr, by_src = _group(n, src, dst)
    pred_ptr, pred_idx = _transpose(n, by_src_ptr, by_src)
    succ_ptr, succ_idx = _transpose(n, pred_ptr, pred_idx)
    return pred_ptr, pred_idx, succ_ptr, succ_idx


@njit(cache=True)
def _offsets(n: int, key: np.ndarray) -> np.ndarray:
    # CSR offsets of n lists whose entries name their list in `key`.
    ptr = np.zeros(n + 1, np.int64)
    for k in key:
        ptr[k + 1] += 1
    for op in range(n):
        ptr[op + 1] += ptr[op]
    return ptr


@njit(cache=True)
def _group(n: int, key: np.ndarray, value: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # value[e] in list key[e], in the order of e.
    ptr = _offsets(n, key)
    fill = ptr[:-1].copy()
    out = np.empty_like(value)
    for e in range(key.shape[0]):
        out[fill[key[e]]] = value[e]
        fill[key[e]] += 1
    return ptr, out


@njit(cache=True)
def _transpose(n: int, ptr: np.ndarray, idx: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    # The reverse of the lists idx[ptr[op]:ptr[op + 1]]: per op, the ops whose
    # list names it, in increasing id.
    out_ptr = _offsets(n, idx)
    fill = out_ptr[:-1].copy()
    out = np.empty_like(idx)
    for op in range(n):
        for j in range(ptr[op], ptr[op + 1]):
            out[fill[idx[j]]] = op
            fill[idx[j]] += 1
    return out_ptr, out


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


def _order(
    pred_ptr: np.ndarray, pred_idx: np.ndarray, succ_ptr: np.ndarray, succ_idx: np.ndarray
) -> np.ndarray:
    n = pred_ptr.size - 1
    order, placed = _kahn(pred_ptr, succ_ptr, succ_idx)
    if placed < n:
        cycle = _cycle(pred_ptr, pred_idx, order, placed).tolist()
        first = cycle.index(min(cycle))
        raise CyclicEdgesError(cycle[first:] + cycle[:first])
    return order


def topological_order(n: int, src: np.ndarray, dst: np.ndarray) -> np.ndarray:
    """Kahn's topological order of n ops and edges src -> dst (int64[n]).

    Among ready ops the smallest id comes first, so the order is deterministic.
    Raises `CyclicEdgesError` naming the ops on one cycle, starting from its
    smallest op id, when the edges are cyclic.

    >>> topological_order(4, [3, 1, 0], [1, 2, 2]).tolist()
    [0, 3, 1, 2]
    >>> try:
    ...     topological_order(4, [0, 1, 2, 3], [1, 2, 1, 1])
    ... except CyclicEdgesError as err:
    ...     print(err.cycle, err)
    [1, 2] data edges form a cycle: 1 -> 2 -> 1
    """
    return dag(n, src, dst).topo


def dag(n: int, src: np.ndarray, dst: np.ndarray) -> Dag:
    """The `Dag` of n ops and edges src -> dst: CSR arrays and order, computed once.

    Its arrays are read-only, so `check_dag` (run by the scheduler) trusts them
    without checking them again.

    >>> dag(2, [1], [0]).topo.tolist()
    [1, 0]
    """
    pred_ptr, pred_idx, succ_ptr, succ_idx = csr(n, src, dst)
    built = Dag(
        pred_ptr, pred_idx, succ_ptr, succ_idx, _order(pred_ptr, pred_idx, succ_ptr, succ_idx)
    )
    for array in built:
        array.flags.writeable = False
    _BUILT[id(built.topo)] = tuple(weakref.ref(a) for a in built)
    weakref.finalize(built.topo, _BUILT.pop, id(built.topo), None)
    return built


# The arrays of every Dag that `dag` built and that is still alive, by id of its
# topo array. They are read-only and valid by construction, so `check_dag`
# accepts them in O(1) instead of walking every edge again: a big graph is
# checked once, however often it is scheduled.
_BUILT: dict[int, tuple[weakref.ref[np.ndarray], ...]] = {}


def _built_here(d: Dag) -> bool:
    refs = _BUILT.get(id(d.topo))
    return (
        refs is not None
        and all(r() is a for r, a in zip(refs, d, strict=True))
        and not any(a.flags.writeable for a in d)
    )


@njit(cache=True)
def _dag_fault(
    pred_ptr: np.ndarray,
    pred_idx: np.ndarray,
    succ_ptr: np.ndarray,
    succ_idx: np.ndarray,
    topo: np.ndarray,
) -> int:
    # 0 when the arrays describe one DAG; else the number of the first failed check.
    n = topo.shape[0]
    position = np.full(n, -1, np.int64)
    for j in range(n):
        op = topo[j]
        if op < 0 or op >= n or position[op] >= 0:
            return 1
        position[op] = j
    for op in range(n):
        if pred_ptr[op + 1] < pred_ptr[op] or succ_ptr[op + 1] < succ_ptr[op]:
            return 2
    for idx in (pred_idx, succ_idx):
        for j in range(idx.shape[0]):
            if idx[j] < 0 or idx[j] >= n:
                return 3
    # Each op's predecessor list holds the same ops as the successor lists that
    # name it (transpose succ into per-target lists, then compare the multisets of
    # each target with a tally array), and every edge goes forward in topo.
    into = np.zeros(n + 1, np.int64)
    for op in range(n):
        for e in range(succ_ptr[op], succ_ptr[op + 1]):
            into[succ_idx[e] + 1] += 1
    for op in range(n):
        into[op + 1] += into[op]
        if into[op + 1] != pred_ptr[op + 1]:
            return 5
    sources = np.empty(succ_idx.shape[0], np.int64)
    fill = into[:-1].copy()
    for op in range(n):
        for e in range(succ_ptr[op], succ_ptr[op + 1]):
            sources[fill[succ_idx[e]]] = op
            fill[succ_idx[e]] += 1
    tally = np.zeros(n, np.int64)
    for op in range(n):
        for f in range(pred_ptr[op], pred_ptr[op + 1]):
            tally[pred_idx[f]] += 1
        for f in range(into[op], into[op + 1]):
            tally[sources[f]] -= 1
            if tally[sources[f]] < 0:
                return 5
    for op in range(n):
        for e in range(succ_ptr[op], succ_ptr[op + 1]):
            if position[op] >= position[succ_idx[e]]:
                return 4
    return 0


_DAG_FAULTS = {
    1: ("topo", "topo must be a permutation of 0..{last}"),
    2: ("pred_ptr", "pred_ptr or succ_ptr is not a valid CSR offset array"),
    3: ("pred_idx", "pred_idx or succ_idx names an op outside 0..{last}"),
    4: ("topo", "topo is not a topological order of the edges"),
    5: ("pred_idx", "pred and succ CSR arrays describe different edges"),
}


def check_dag(d: Dag, n: int) -> Dag:
    """`d` with int64 contiguous arrays, checked to describe one DAG of n ops.

    Raises `KernelInputError` naming the faulty array.

    A Dag that `dag` built is accepted as it is (its arrays are read-only).

    >>> check_dag(dag(2, [0], [1]), 2).succ_idx.tolist()
    [1]
    """
    if _built_here(d) and d.topo.size == n:
        return d
    arrays = Dag(*(int_vector(name, a) for name, a in zip(Dag._fields, d, strict=True)))
    for name in ("pred_ptr", "succ_ptr"):
        ptr = getattr(arrays, name)
        if ptr.shape != (n + 1,):
            raise KernelInputError(f"{name} must have shape ({n + 1},), got {ptr.shape}", name)
    for kind in ("pred", "succ"):
        ptr, idx = getattr(arrays, f"{kind}_ptr"), getattr(arrays, f"{kind}_idx")
        if ptr[0] != 0 or ptr[-1] != idx.size:
            raise KernelInputError(
                f"{kind}_ptr is not a valid CSR offset array for {idx.size} edges", f"{kind}_ptr"
            )
    if arrays.pred_idx.size != arrays.succ_idx.size:
        raise KernelInputError(
            f"pred has {arrays.pred_idx.size} edges but succ has {arrays.succ_idx.size}", "succ_idx"
        )
    if arrays.topo.size != n:
        raise KernelInputError(f"topo must be a permutation of 0..{n - 1}", "topo")
    fault = _dag_fault(*arrays)
    if fault:
        name, message = _DAG_FAULTS[fault]
        raise KernelInputError(message.format(last=n - 1), name)
    return arrays


@njit(cache=True)
def _depths(pred_ptr: np.ndarray, pred_idx: np.ndarray, topo: np.ndarray) -> np.ndarray:
    depth = np.zeros(topo.shape[0], np.int64)
    for op in topo:
        for j in range(pred_ptr[op], pred_ptr[op + 1]):
            depth[op] = max(depth[op], depth[pred_idx[j]] + 1)
    return depth


def depths(d: Dag) -> np.ndarray:
    """Longest path, in edges, from any source to each op (int64[n]), in O(n + e).

    >>> depths(dag(4, [0, 1, 0], [1, 2, 2])).tolist()
    [0, 1, 2, 0]
    """
    return _depths(d.pred_ptr, d.pred_idx, d.topo)

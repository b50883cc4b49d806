"""The GPU kernel model: a traced torch call's time on a GPU, kernel by kernel.

PyTorch runs a module as many small kernels; on a GPU each costs a fixed launch
time however little work it does, and a narrow GEMM reaches a few per cent of the
peak. The model therefore classes every recorded torch call (a *kernel*,
`nerframe.trace.tracefile.Kernel`) and gives it a **work** time from its class's
rate:

- **view** (``memory == "view"``: reshape, slicing, ``expand``) and any call that
  moves no tensor data: free, no launch;
- **gemm** (``linear``, ``matmul``, ``addmm``…; ``M×K`` by ``K×N``, ``M`` the
  output's rows): ``max(2·M·K·N / R, bytes / W)`` with ``R = P · K/(K+k0) ·
  N/(N+n0) · M/(M+m0)`` fitted per dtype (``P``, ``k0``, ``n0``, ``m0``); float32
  runs at the FP32 fit unless the trace recorded TF32 on; float16/bfloat16 have
  an *aligned* fit (K and N multiples of 8, the tensor-core path) and an unaligned
  one;
- **gather** (``__getitem__``, ``index_select``… with an integer index tensor):
  ``max(lookups / G(table bytes), bytes / W)``, ``G`` interpolated in log-log by the
  table's bytes (a table that fits the L2 cache is read faster); a scatter-add (a
  gather's backward: ``index_put``, ``embedding_dense_backward``…, `SCATTERS`; its
  table is its output) at the scatter rate a CUDA probe measured, interpolated the
  same way, else as torch runs it: a radix sort of its lookups by row (``keys × passes
  / 4 × 16 / 12 / S``, a pass per 8 bits of the table's largest row) and the adds at
  the gather rate; and at least ``max_row_lookups × t_serial`` when the trace recorded
  the most lookups adding into one row (``max_row_lookups``) and a CUDA probe measured
  the time one more lookup of a row adds (``t_serial``): torch's kernel adds a row's
  lookups in one thread, one after another (an embedding's backward sums them in
  partials of `EMBEDDING_PARTIAL_ROWS` first); an atomic scatter-add (``index_add``,
  ``scatter_add``, `ATOMICS`: no sort) at the atomic rate a CUDA probe measured, else
  at the gather rate, and at least ``max_row_lookups × t_atomic`` (same-address
  atomics resolve one after another) where a probe measured ``t_atomic``;
- **sort** (``sort``, ``argsort``, ``topk``, ``unique``): ``keys / S``;
- **scan** (``cumsum``, ``cumprod``…): bytes at the scan bandwidth ``W_scan`` (a
  cumulative product along a short last dimension is far below DRAM bandwidth),
  or at ``W`` when the input's last dimension is 1 (the scan then runs along an
  outer dimension, which torch does with a different, element-wise-speed kernel);
- **reduce** (``sum``, ``prod``, ``mean``… with fewer outputs than inputs): bytes at
  ``W_reduce``;
- **elementwise** (everything else: arithmetic, special functions, ``cat``,
  ``where``, casts, copies, factories): bytes (inputs and outputs at their dtypes)
  at ``W``; a ``cat`` along the last dimension at ``W_cat`` when a CUDA probe
  measured it (rows of a few floats from several pieces copy slower).

A timed region (one module call, measured with CUDA events) of kernels ``k`` takes
``(alone_s - back_to_back_s) + Σ max(back_to_back_s, work_k)``: the host launches
a kernel every ``back_to_back_s`` at best, so a kernel shorter than that leaves the
GPU waiting, a longer one hides the next launches; a region pays once the extra
cost of a kernel timed alone (``alone_s``: the event and the first launch). No two
torch calls are fused (eager PyTorch launches each), and a call is one kernel (the
H200 profiles count 275 kernels for the hash-grid NeRF's 275 non-view calls).

The figures of one GPU are fitted by `fit` from micro-benchmarks (``nerframe probe
--device cuda``, or the H200 reference measurements stored in
``nerframe/systems/h200.json``); other GPUs are scaled from the H200's by data-sheet
ratios (`scaled`, ``docs/gpus.md``). The ops of the built-in pipelines on a GPU
accelerator run as kernels too (`op_seconds`: the kernels each op type launches,
`OP_KERNELS`, and the class its work runs at), which is how ``nerframe schedule``,
``analyze`` and ``validate`` time a GPU.

>>> m = gpu_model("h200")
>>> from nerframe.trace.tracefile import Kernel, Trace, dtype_bits
>>> relu = Kernel("relu", [[256]], ["float32"], [[256]], ["float32"])
>>> round(m.predict([relu, relu]).total_s * 1e6, 1)  # launch-bound: alone + one back-to-back
33.2
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from functools import cache
from pathlib import Path
from typing import Any, Literal, NamedTuple

import numpy as np
import polars as pl

from nerframe.accelerator_model import Accelerator
from nerframe.errors import InvalidInputError
from nerframe.trace.host import (
    GATHERS,
    GEMMS,
    REDUCTIONS,
    SCANS,
    Prediction,
    _loglog,
    _nbytes,
)
from nerframe.trace.tracefile import Kernel, Trace

SCATTERS = frozenset({"index_put", "index_put_", "_index_put_impl_", "embedding_dense_backward"})
"""Kernels that add rows into a table at indices (a gather's backward): torch sorts the
lookups by row (`SCATTER_SORT`), then adds the rows at the gather rate of a table of the
output's size (an assumption: adding to a random row costs as much as reading it)."""

ATOMICS = frozenset({"index_add", "index_add_", "scatter_add", "scatter_add_"})
"""Scatter-adds torch runs with atomic adds and no sort (aten/src/ATen/native/cuda/
Indexing.cu ``index_add_cuda_impl``: ``indexFuncLargeIndex`` with an atomic add, or,
with CUDA 12.8 or later, ``scatter_add_``'s atomic kernel; deterministic mode takes
``index_put_``'s sorted path instead, which the trace does not record). Without a
probe's atomic rate, an atomic add of a random row costs what reading it does: the
gather rate (assumption: both are one L2 access per row; plausible range 0.5-2x)."""

EMBEDDING_PARTIAL_ROWS = 10
"""Lookups of one row an embedding's backward sums in parallel before one thread adds
the partial sums of the row one after another (``NROWS_PER_THREAD``, pytorch
aten/src/ATen/native/cuda/EmbeddingBackwardKernel.cu): its serial run is
``ceil(max_row_lookups / 10)`` adds, each assumed to cost one lookup's ``t_serial``."""

SCATTER_SORT = (8, 4, 16 / 12)
"""How a scatter-add's row sort compares with the sort class's rate ``S``: torch sorts
(int64 row, int64 position) pairs with a radix sort over only the bits of the table's
largest row (pytorch aten/src/ATen/native/cuda/Indexing.cu, ``index_put_with_sort_kernel``:
``get_num_bits(largestIndex(self) / sliceSize)``), one pass per 8 bits (CUB's onesweep
radix sort); ``S`` is torch.sort's of float32 keys with int64 positions, 4 passes of
12-byte pairs. So ``keys × ceil(bits / 8) / 4 × 16 / 12 / S``: (bits a pass, the passes
``S`` ran, the pair bytes' ratio)."""

SORTS = frozenset({"sort", "argsort", "topk", "unique", "msort"})
"""Kernels that sort (a radix sort on a GPU): limited by the sort rate (keys/s)."""

HALF = ("float16", "bfloat16")
"""Dtypes with a tensor-core GEMM path (aligned K and N)."""

REFERENCE = "h200"
"""The GPU whose figures are measured (``nerframe/systems/h200.json``); others are scaled."""

ELEMENTWISE_OPS = ("add", "mul_scalar", "sin", "exp", "relu", "sigmoid", "softplus", "clone")
"""Micro-benchmark ops whose largest size gives the element-wise bandwidth ``W``."""


@dataclass(frozen=True)
class GemmFit:
    """A GEMM rate ``P · K/(K+k0) · N/(N+n0) · M/(M+m0)`` (FLOP/s).

    >>> GemmFit(1e12, 0.0, 0.0, 0.0).rate(64, 64, 64)
    1000000000000.0
    """

    peak: float
    k0: float
    n0: float
    m0: float

    def rate(self, m: float, k: float, n: float) -> float:
        """FLOP/s of an ``m × k`` by ``k × n`` product."""
        return self.peak * (k / (k + self.k0)) * (n / (n + self.n0)) * (m / (m + self.m0))


@dataclass(frozen=True)
class GpuModel:
    """One GPU's kernel figures (see the module docstring): fixed costs (s), bandwidths
    (bytes/s), GEMM fits by key (``float32``, ``tf32``, ``bfloat16``,
    ``bfloat16-unaligned``…), gathers (and probed scatters) as (table bytes, lookups/s),
    sort in keys/s.

    >>> m = gpu_model("h200")
    >>> m.alone_s > m.back_to_back_s > 0
    True
    """

    name: str
    alone_s: float
    back_to_back_s: float
    bandwidth: float
    reduce_bandwidth: float
    scan_bandwidth: float
    gather: tuple[tuple[float, float], ...]
    sort_rate: float
    gemm: Mapping[str, GemmFit]
    cat_last_bandwidth: float = math.inf
    """A ``cat`` along a narrow last dimension (measured by a CUDA probe; else ``W``)."""
    scatter: tuple[tuple[float, float], ...] = ()
    """Scatter-adds (`SCATTERS`) as (table bytes, lookups/s), measured by a CUDA probe;
    without them, a scatter-add is its index sort and its adds at the gather rate."""
    serial_lookup_s: float = 0.0
    """Seconds one more lookup of the same row adds to a scatter-add (``t_serial``, the
    slope a CUDA probe measured, ``scatter_runs``); 0: not measured, no such term."""
    atomic: tuple[tuple[float, float], ...] = ()
    """Atomic scatter-adds (`ATOMICS`) as (table bytes, lookups/s), measured by a CUDA
    probe; without them, at the gather rate."""
    serial_atomic_s: float = 0.0
    """Seconds one more lookup of the same row adds to an atomic scatter-add
    (``t_atomic``, ``atomic_runs``); 0: not measured, no such term."""
    tf32: bool = False
    source: str = ""

    def __post_init__(self) -> None:
        for name in ("alone_s", "back_to_back_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise InvalidInputError(f"GPU model {self.name}: {name} must be >= 0")
        for name in ("bandwidth", "reduce_bandwidth", "scan_bandwidth", "sort_rate"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value > 0):
                raise InvalidInputError(f"GPU model {self.name}: {name} must be > 0")
        if not self.gather or "float32" not in self.gemm:
            raise InvalidInputError(f"GPU model {self.name}: needs gathers and a float32 GEMM")

    def gemm_fit(self, dtype: str, k: int, n: int) -> GemmFit:
        """The fit a GEMM of `dtype` runs at: TF32 for float32 only when recorded on;
        a half dtype's unaligned fit when K or N is not a multiple of 8.

        >>> m = gpu_model("h200")
        >>> m.gemm_fit("float32", 64, 64) is m.gemm["float32"]
        True
        >>> m.gemm_fit("bfloat16", 63, 256) is m.gemm["bfloat16-unaligned"]
        True
        """
        if dtype == "float32" and self.tf32:
            if "tf32" in self.gemm:
                return self.gemm["tf32"]
            if "bfloat16" in self.gemm:  # TF32's dense tensor peak is half FP16/BF16's
                half = self.gemm["bfloat16"]
                return replace(half, peak=half.peak / 2)
        if dtype in HALF:
            key = dtype if k % 8 == 0 and n % 8 == 0 else f"{dtype}-unaligned"
            return self.gemm.get(key) or self.gemm.get(dtype) or self.gemm["float32"]
        return self.gemm.get(dtype) or self.gemm["float32"]

    def gather_rate(self, table_bytes: float) -> float:
        """Lookups/s from a table of `table_bytes` (log-log between the measured tables)."""
        return _loglog(self.gather, table_bytes)

    def work_seconds(self, kernel: Kernel) -> tuple[float, str]:
        """(work seconds, class) of one kernel, without its launch cost; class is
        ``view`` (free), ``gemm``, ``gather``, ``sort``, ``scan``, ``reduce`` or
        ``elementwise``.

        >>> m = gpu_model("h200")
        >>> k = Kernel("linear", [[4194304, 256], [256, 256], [256]], ["float32"] * 3,
        ...            [[4194304, 256]], ["float32"])
        >>> s, kind = m.work_seconds(k); kind, round(s * 1e3, 1)  # measured 11.8 ms
        ('gemm', 11.4)
        """
        if kernel.memory == "view":
            return 0.0, "view"
        moved = sum(
            _nbytes(s, d) for s, d in zip(kernel.inputs, kernel.input_dtypes, strict=True)
        ) + sum(_nbytes(s, d) for s, d in zip(kernel.outputs, kernel.output_dtypes, strict=True))
        if moved == 0:
            return 0.0, "view"
        memory = moved / self.bandwidth
        out = kernel.outputs[0] if kernel.outputs else []
        if kernel.name in GEMMS and out:
            contracted = GEMMS[kernel.name]
            if len(kernel.inputs) > contracted and kernel.inputs[contracted]:
                k = kernel.inputs[contracted][-1]
                m, n = math.prod(out[:-1]), out[-1]
                dtype = kernel.output_dtypes[0] if kernel.output_dtypes else "float32"
                # a small output with a long contraction (a weight's gradient) is split
                # along K by the GEMM library: its parallelism is the longer of M and K
                rate = self.gemm_fit(dtype, k, n).rate(max(m, k), k, n)
                return max(2.0 * m * k * n / rate, memory), "gemm"
        if kernel.name in GATHERS:
            pairs = list(zip(kernel.inputs, kernel.input_dtypes, strict=True))
            lookups = [math.prod(s) for s, d in pairs if d.startswith(("int", "uint"))]
            tables = [_nbytes(s, d) for s, d in pairs if not d.startswith(("int", "uint", "bool"))]
            if lookups and max(lookups) > 1 and tables:
                return max(max(lookups) / self.gather_rate(max(tables)), memory), "gather"
        if (kernel.name in ATOMICS or kernel.name in SCATTERS) and out:
            scatter = self._scatter_seconds(kernel, out)
            if scatter is not None:
                return max(scatter, memory), "gather"
        largest = max((math.prod(s) for s in kernel.inputs), default=0)
        if kernel.name in SORTS:
            return max(largest / self.sort_rate, memory), "sort"
        if kernel.name in SCANS:
            # torch scans the innermost dimension with one kernel (the slow one the
            # micro-benchmark measured) and an outer one with another, as fast as an
            # element-wise kernel; a last dimension of 1 cannot be the scanned one
            inner = bool(kernel.inputs) and bool(kernel.inputs[0]) and kernel.inputs[0][-1] > 1
            return moved / (self.scan_bandwidth if inner else self.bandwidth), "scan"
        if kernel.name in REDUCTIONS and out is not None and largest > math.prod(out):
            return moved / self.reduce_bandwidth, "reduce"
        if kernel.name == "cat" and _along_last(kernel.inputs, out):
            return moved / self.cat_last_bandwidth, "elementwise"
        return memory, "elementwise"

    def _scatter_seconds(self, kernel: Kernel, out: Sequence[int]) -> float | None:
        """The lookups' time of a scatter-add (`ATOMICS`, `SCATTERS`) into `out`, at least
        its longest row's serial adds (None: it has no integer index)."""
        pairs = list(zip(kernel.inputs, kernel.input_dtypes, strict=True))
        lookups = [math.prod(s) for s, d in pairs if d.startswith(("int", "uint"))]
        if not lookups:
            return None
        keys = max(lookups)
        table = _nbytes(out, kernel.output_dtypes[0] if kernel.output_dtypes else "float32")
        if kernel.name in ATOMICS:
            rate = _loglog(self.atomic, table) if self.atomic else self.gather_rate(table)
            return max(keys / rate, kernel.max_row_lookups * self.serial_atomic_s)
        run = kernel.max_row_lookups
        if kernel.name == "embedding_dense_backward":
            run = -(-run // EMBEDDING_PARTIAL_ROWS)
        serial = run * self.serial_lookup_s
        if self.scatter:
            return max(keys / _loglog(self.scatter, table), serial)
        # torch adds into rows at repeated indices by sorting the lookups by row first
        # (SCATTER_SORT), then adds them at the gather rate
        values = [math.prod(s) for s, d in pairs if not d.startswith(("int", "uint"))]
        row = max(values[-1] // keys, 1) if values else 1  # the elements a lookup adds
        rows = max(math.prod(out) // row, 2)
        bits, passes, pair = SCATTER_SORT
        sort = keys * math.ceil((rows - 1).bit_length() / bits) / passes * pair
        return max(sort / self.sort_rate + keys / self.gather_rate(table), serial)

    def predict(self, kernels: Sequence[Kernel], modules: int = 1) -> Prediction:
        """The time of one timed region that ran `kernels` (the module docstring's sum);
        `modules` is accepted for the host model's signature (hooks cost no GPU time).

        >>> m = gpu_model("h200")
        >>> m.predict([]).total_s  # nothing launched
        0.0
        """
        del modules
        fixed, terms = 0.0, {"gemm": 0.0, "gather": 0.0, "data": 0.0}
        launched = False
        for kernel in kernels:
            work, kind = self.work_seconds(kernel)
            if kind == "view":
                continue
            launched = True
            fixed += self.back_to_back_s
            term = kind if kind in ("gemm", "gather") else "data"
            terms[term] += max(0.0, work - self.back_to_back_s)
        if launched:
            fixed += self.alone_s - self.back_to_back_s
        return Prediction(fixed, terms["gemm"], terms["gather"], terms["data"])

    def costs_seconds(self, flops: float, nbytes: float) -> float:
        """A call without kernel records: one kernel, FLOPs at the float32 fit's peak or
        bytes at ``W``, whichever is longer.

        >>> round(gpu_model("h200").costs_seconds(0, 0) * 1e6, 1)
        23.2
        """
        work = max(flops / self.gemm["float32"].peak, nbytes / self.bandwidth)
        return self.alone_s - self.back_to_back_s + max(self.back_to_back_s, work)


def _best_median(
    rows: Sequence[Mapping[str, Any]], overhead: float, floor: float, bandwidth: float
) -> tuple[float, GemmFit]:
    """The GEMM fit (grid search) with the least median |log10| error over `rows`."""

    mm = np.array([r["M"] for r in rows], float)
    kk = np.array([r["K"] for r in rows], float)
    nn = np.array([r["N"] for r in rows], float)
    flops = np.array([r["flops"] for r in rows], float)
    seconds = np.array([r["seconds"] for r in rows], float)
    memory = np.array([r["bytes"] for r in rows], float) / bandwidth
    shapes = np.geomspace(1.0, 1024.0, 21)  # k0, n0: half-octaves from 1 to 1024
    rows_m = np.concatenate([[0.0], np.geomspace(1e2, 1e6, 9)])
    peaks = np.geomspace(1e12, 4e15, 73)  # 1 TFLOP/s to 4 PFLOP/s, 8 steps per decade
    best: tuple[float, GemmFit] = (math.inf, GemmFit(1.0, 0.0, 0.0, 0.0))
    for k0 in shapes:
        for n0 in shapes:
            for m0 in rows_m:
                share = kk / (kk + k0) * nn / (nn + n0) * mm / (mm + m0)
                work = np.maximum(flops[None, :] / (peaks[:, None] * share[None, :]), memory)
                predicted = overhead + np.maximum(floor, work)
                error = np.median(np.abs(np.log10(seconds / predicted)), axis=1)
                i = int(np.argmin(error))
                if error[i] < best[0] - 1e-12:
                    best = (float(error[i]), GemmFit(float(peaks[i]), k0, n0, m0))
    return best


def fit(micro: Mapping[str, Any]) -> dict[str, Any]:
    """The kernel figures of one GPU from its micro-benchmarks (``micro.json``'s layout,
    which ``nerframe probe --device cuda`` writes): the fixed costs as measured; each
    bandwidth, gather, scatter and atomic rate at the largest size measured, net of the
    fixed cost (``bytes / (seconds - (alone_s - back_to_back_s))``, the median over the
    element-wise ops); each GEMM dtype's (P, k0, n0, m0) by grid search for the least median
    |log10(measured / predicted)|; the sort rate when measured (the slope between its
    two largest sizes: a sort's own fixed cost is several launches); the time one more
    lookup of a row adds to a scatter-add when measured (the slope between its two
    longest runs, ``scatter_runs``; an atomic one's from ``atomic_runs``).

    >>> micro = {"launch": {"single_add_1elem_event_s": 2e-5, "back_to_back_add_1elem_s": 1e-5},
    ...          "elementwise": [{"op": "add", "elements": 1, "bytes": 4e9, "seconds": 1.01e-3}],
    ...          "gemm": [], "gather": []}
    >>> fit(micro)["bandwidth_gbps"]  # 4 GB in 1 ms beyond the 10 us overhead
    4000.0
    """
    launch = micro["launch"]
    alone, floor = (
        float(launch["single_add_1elem_event_s"]),
        float(launch["back_to_back_add_1elem_s"]),
    )
    overhead = alone - floor

    def rate(rows: list[Mapping[str, Any]], amount: str) -> float:
        largest = max(r["elements"] for r in rows)
        values = sorted(
            float(r[amount]) / _net(float(r["seconds"]), overhead)
            for r in rows
            if r["elements"] == largest
        )
        return values[len(values) // 2]

    elementwise = list(micro.get("elementwise", []))
    simple = [r for r in elementwise if r["op"] in ELEMENTWISE_OPS]
    if not simple:
        raise InvalidInputError("GPU fit: no element-wise measurement")
    bandwidth = rate(simple, "bytes")
    figures: dict[str, Any] = {
        "alone_s": alone,
        "back_to_back_s": floor,
        "bandwidth_gbps": _figure(bandwidth / 1e9),
    }
    for key, op in (
        ("reduce_gbps", "sum_last64"),
        ("scan_gbps", "cumprod_last64"),
        ("cat_last_gbps", "cat_last_narrow"),
    ):
        rows = [r for r in elementwise if r["op"] == op]
        if rows:
            figures[key] = _figure(rate(rows, "bytes") / 1e9)
    for section in ("gather", "scatter", "atomic"):
        measured = list(micro.get(section, []))
        if measured:
            points = []
            for table in sorted({r["table_rows"] for r in measured}):
                rows = [r for r in measured if r["table_rows"] == table]
                top = max(rows, key=lambda r: r["lookups"])
                width = 4 * int(top.get("features", 2))
                lookups = top["lookups"] / _net(top["seconds"], overhead)
                points.append([table * width, _figure(lookups)])
            figures[section] = points
    for key, section in (("serial_lookup_s", "scatter_runs"), ("serial_atomic_s", "atomic_runs")):
        runs = sorted(micro.get(section, []), key=lambda r: r["row_lookups"])
        if len(runs) > 1 and runs[-1]["seconds"] > runs[-2]["seconds"]:
            # the same lookups into fewer rows: what a run's length adds, the slope
            # between the two longest runs (where the serial adds outlast the rest)
            below, top = runs[-2], runs[-1]
            rise = top["seconds"] - below["seconds"]
            figures[key] = _figure(rise / (top["row_lookups"] - below["row_lookups"]))
    sorts = sorted(micro.get("sort", []), key=lambda r: r["keys"])
    if len(sorts) > 1 and sorts[-1]["seconds"] > sorts[-2]["seconds"]:
        # torch.sort launches several kernels (indices, histogram, a kernel per pass),
        # a fixed cost of its own: its rate is the slope between the two largest sizes
        below, top = sorts[-2], sorts[-1]
        slope = (top["keys"] - below["keys"]) / (top["seconds"] - below["seconds"])
        figures["sort_keys_per_s"] = _figure(slope)
    elif sorts:
        top = sorts[-1]
        figures["sort_keys_per_s"] = _figure(top["keys"] / _net(top["seconds"], overhead))
    gemm: dict[str, dict[str, float]] = {}
    for dtype in sorted({r["dtype"] for r in micro.get("gemm", [])}):
        rows = [r for r in micro["gemm"] if r["dtype"] == dtype]
        groups: dict[str, list[Mapping[str, Any]]] = {dtype: rows}
        if dtype in HALF:
            groups = {
                dtype: [r for r in rows if r["K"] % 8 == 0 and r["N"] % 8 == 0],
                f"{dtype}-unaligned": [r for r in rows if r["K"] % 8 or r["N"] % 8],
            }
        for key, group in groups.items():
            if group:
                error, found = _best_median(group, overhead, floor, bandwidth)
                gemm[key] = {
                    "peak_tflops": _figure(found.peak / 1e12),
                    "k0": _figure(found.k0),
                    "n0": _figure(found.n0),
                    "m0": _figure(found.m0),
                    "median_log_error": round(error, 3),
                }
    figures["gemm"] = gemm
    return figures


def _net(seconds: float, overhead: float) -> float:
    """`seconds` net of the launch `overhead`, at least half of them (a measurement
    within the overhead's noise must not give a negative or infinite rate).

    >>> _net(4.0, 1.0), _net(1.5, 1.0)
    (3.0, 0.75)
    """
    return max(seconds - overhead, seconds / 2)


def _along_last(inputs: Sequence[Sequence[int]], out: Sequence[int]) -> bool:
    """Whether a ``cat`` of `inputs` into `out` joins them along a last dimension of
    more than one element (rows of several pieces), not along the first.

    >>> _along_last([[8, 3], [8, 30]], [8, 33]), _along_last([[8, 3], [8, 3]], [16, 3])
    (True, False)
    """
    return (
        len(inputs) > 1
        and len(out) > 1
        and all(len(s) == len(out) and list(s[:-1]) == list(out[:-1]) for s in inputs)
        and sum(s[-1] for s in inputs) == out[-1]
    )


def _figure(value: float) -> float:
    """`value` to 4 significant figures (a stored figure; deterministic)."""
    return float(f"{value:.4g}")


def from_figures(name: str, figures: Mapping[str, Any], *, tf32: bool = False) -> GpuModel:
    """A `GpuModel` from a ``kernels`` block (`fit`'s output, as stored in a system file).

    Missing sort or scan figures fall back to `DEFAULTS` (documented assumptions).
    """
    try:
        bandwidth = float(figures["bandwidth_gbps"]) * 1e9
        gemm = {
            key: GemmFit(
                float(v["peak_tflops"]) * 1e12, float(v["k0"]), float(v["n0"]), float(v["m0"])
            )
            for key, v in figures["gemm"].items()
        }
        return GpuModel(
            name=name,
            alone_s=float(figures["alone_s"]),
            back_to_back_s=float(figures["back_to_back_s"]),
            bandwidth=bandwidth,
            reduce_bandwidth=float(figures.get("reduce_gbps", figures["bandwidth_gbps"])) * 1e9,
            scan_bandwidth=float(figures.get("scan_gbps", figures["bandwidth_gbps"])) * 1e9,
            gather=tuple((float(a), float(b)) for a, b in figures["gather"]),
            sort_rate=float(
                figures.get("sort_keys_per_s") or bandwidth / DEFAULTS["sort_bytes_per_key"]
            ),
            gemm=gemm,
            cat_last_bandwidth=float(figures.get("cat_last_gbps", figures["bandwidth_gbps"])) * 1e9,
            scatter=tuple((float(a), float(b)) for a, b in figures.get("scatter", ())),
            serial_lookup_s=float(figures.get("serial_lookup_s", 0.0)),
            atomic=tuple((float(a), float(b)) for a, b in figures.get("atomic", ())),
            serial_atomic_s=float(figures.get("serial_atomic_s", 0.0)),
            tf32=tf32,
            source=str(figures.get("source", "")),
        )
    except (KeyError, TypeError, ValueError) as e:
        raise InvalidInputError(
            f"GPU model {name}: bad kernel figures ({type(e).__name__}: {e})"
        ) from None


DEFAULTS: dict[str, float] = {"sort_bytes_per_key": 96.0}
"""Assumptions where no micro-benchmark measured a class: a sort of 32-bit keys with
int64 indices as a radix sort of 4 passes of 8-bit digits, each reading and writing
keys and values (4 × 2 × 12 = 96 bytes per key at ``W``; plausible range 50-200)."""


@cache
def _system_document(name: str) -> dict[str, Any]:
    path = Path(__file__).with_name("systems") / f"{name}.json"
    document: dict[str, Any] = json.loads(path.read_text(encoding="utf-8"))
    return document


def _accelerator_figures(name: str) -> dict[str, float]:
    """Data-sheet figures of a built-in GPU accelerator (`datasheet`)."""
    from nerframe.hardware import accelerator

    return datasheet(accelerator(name))


def datasheet(accel: Accelerator) -> dict[str, float]:
    """Data-sheet figures of a GPU accelerator (its ``cuda_cores`` and ``tensor_cores``
    modules, the GPU files' convention): FP32 and dense FP16 tensor peaks (TFLOP/s,
    SMs × FLOP/cycle × clock), DRAM bandwidth (GB/s), SM count, L2 (bytes).

    >>> from nerframe.hardware import accelerator
    >>> round(datasheet(accelerator("a6000"))["fp32"], 2)
    38.71
    """
    modules = {m.name: m for m in accel.modules}
    mhz = float(accel.frequency_mhz)

    def peak(module: str) -> float:
        m = modules[module]
        return float(m.count * m.throughput_ops_per_cycle) * mhz * 1e6 / 1e12

    l2_kb = accel.l2_cache_kb or JETSON_L2_KB[accel.name]
    return {
        "fp32": peak("cuda_cores"),
        "tensor": peak("tensor_cores"),
        "bandwidth_gbps": float(accel.dram_bandwidth_gbps),
        "sms": float(modules["cuda_cores"].count),
        "l2_bytes": float(l2_kb) * 1024,
    }


JETSON_L2_KB: dict[str, int] = {"orin_nx": 4096, "xavier_nx": 512, "gaurast": 4096, "gbu": 4096}
"""L2 of the Jetson GPUs (the accelerator files give none): Orin's Ampere GPU 4 MB
(NVIDIA Jetson Orin Series Technical Brief, v1.2, 'GPU'); Xavier's Volta GPU 512 KB
(NVIDIA Jetson AGX Xavier Technical Brief / Volta GV10B: 512 KB L2). GauRast and GBU
extend the Orin NX (their files add units beside its GPU)."""

GPUS: tuple[str, ...] = (
    "h200",
    "h100",
    "a100",
    "a6000",
    "rtx3090",
    "rtx3070",
    "titan_rtx",
    "orin_nx",
    "xavier_nx",
)
"""GPUs with a kernel model: the H200 measured, the others scaled (`scaled`)."""


def scaled(name: str) -> dict[str, Any]:
    """The kernel figures of `name`, scaled from the H200's (``docs/gpus.md``):

    - fixed costs: the H200's (launch costs are host-side: an assumption, 0.5-3x);
    - float32 GEMM peak × FP32 peak ratio; half-precision and TF32 peaks × dense FP16
      tensor peak ratio; ``k0``, ``n0`` as the H200's (the same library tile shapes);
      ``m0`` × SM count ratio (the rows needed to fill every SM);
    - bandwidths and gather rates × DRAM bandwidth ratio; gather table sizes × L2 ratio
      (a table that fits the L2 is read at the in-cache rate);
    - the time one more lookup of a row adds to a scatter-add (``serial_lookup_s``, where
      measured): the H200's, a chain of dependent cache reads in one thread
      (assumption: 0.5-2x across these GPUs' clocks and caches); the same for an atomic
      scatter-add's same-row atomics (``serial_atomic_s``).

    >>> s = scaled("a100"); round(s["bandwidth_gbps"] / scaled("h200")["bandwidth_gbps"], 4)
    0.4031
    """
    if name == REFERENCE:
        return _scale(name, None)
    return _scale(name, _accelerator_figures(name))


def _scale(name: str, target: Mapping[str, float] | None) -> dict[str, Any]:
    """The H200's kernel figures scaled to the data-sheet figures `target` (None: the
    H200's own)."""
    reference = _system_document(REFERENCE)
    figures: dict[str, Any] = json.loads(json.dumps(reference["kernels"]))
    # classes micro.json does not measure, from a CUDA probe of the same H200
    for key, value in reference.get("probe", {}).get("figures", {}).items():
        figures.setdefault(key, value)
    if target is None:
        return figures
    ref = reference["datasheet"]
    memory = target["bandwidth_gbps"] / ref["bandwidth_gbps"]
    for key in ("bandwidth_gbps", "reduce_gbps", "scan_gbps", "cat_last_gbps"):
        if key in figures:
            figures[key] = figures[key] * memory
    if "sort_keys_per_s" in figures:
        figures["sort_keys_per_s"] *= memory
    cache_ratio = target["l2_bytes"] / ref["l2_bytes"]
    for section in ("gather", "scatter", "atomic"):
        if section in figures:
            figures[section] = [[t * cache_ratio, r * memory] for t, r in figures[section]]
    for key, fit_ in figures["gemm"].items():
        ratio = (
            target["fp32"] / ref["fp32"] if key == "float32" else target["tensor"] / ref["tensor"]
        )
        fit_["peak_tflops"] *= ratio
        fit_["m0"] *= target["sms"] / ref["sms"]
    figures["source"] = (
        f"scaled from the H200's measured figures by data-sheet ratios "
        f"(nerframe/accelerators/{name}.json; docs/gpus.md)"
    )
    return figures


def gpu_model(name: str, *, tf32: bool = False) -> GpuModel:
    """The kernel model of a GPU by name (``h200``, ``a100``…, case-insensitive; a
    ``:PRECISION`` suffix is ignored: the dtype comes from each kernel).

    >>> gpu_model("H200:fp32").name
    'h200'
    """
    base = name.lower().partition(":")[0]
    if base not in GPUS:
        raise InvalidInputError(f"no GPU kernel model {name!r} (GPUs: {', '.join(GPUS)})")
    return from_figures(base, scaled(base), tf32=tf32)


def is_gpu(name: str) -> bool:
    """Whether `name` (``h200``, ``h200:fp32``, ``A100``…) has a GPU kernel model.

    >>> is_gpu("h200:fp32"), is_gpu("host"), is_gpu("neurex")
    (True, False, False)
    """
    return name.lower().partition(":")[0] in GPUS


def predict_forward(model: GpuModel, trace: Trace) -> float | None:
    """The predicted time of one whole forward on the GPU: all the trace's kernels as
    one timed region (None when the trace records no kernels, versions 1 and 2); of a
    training trace, the whole iteration (forward, loss, backward, optimizer step).

    >>> from nerframe.trace.tracefile import Call
    >>> k = Kernel("relu", [[4]], ["float32"], [[4]], ["float32"])
    >>> t = Trace("m", [Call(0, None, "", ["M"], {}, {}, [], [], [], [], 0.0, kernels=[k])])
    >>> round(predict_forward(gpu_model("h200"), t) * 1e6, 1)
    23.2
    """
    if not any(c.kernels for c in trace.calls):
        return None
    kernels = [k for c in trace.calls for k in c.kernels]
    if trace.train is not None:  # the whole iteration: forward, loss, backward, step
        kernels += [k for c in trace.calls for k in c.backward_kernels]
        kernels += [*trace.train.loss_kernels, *foreach(trace.train.optimizer_kernels)]
    return model.predict(kernels).total_s


def foreach(kernels: Sequence[Kernel]) -> list[Kernel]:
    """An optimizer step's kernels as torch runs the step on a GPU. Recorded where torch
    steps one parameter at a time (a CPU: ``torch.optim.Adam``'s ``_single_tensor_adam``),
    the step repeats one sequence of functions per parameter; on CUDA tensors torch
    defaults to the foreach implementation (torch/optim/optimizer.py,
    ``_default_to_fused_or_foreach``), which runs each function of the sequence once over
    every parameter (one launch, ``multi_tensor_apply``). So the sequence's k-th
    functions merge into one ``_foreach_`` kernel over all their tensors. Kernels that
    already are foreach ones, or that repeat no sequence, stay as they are.

    >>> def k(name, n):
    ...     return Kernel(name, [[n]], ["float32"], [[n]], ["float32"], "reused")
    >>> step = [k("lerp_", 4), k("sqrt", 4), k("lerp_", 2), k("sqrt", 2)]  # 2 parameters
    >>> [(m.name, m.inputs) for m in foreach(step)]
    [('_foreach_lerp_', [[4], [2]]), ('_foreach_sqrt', [[4], [2]])]
    """
    names = [k.name for k in kernels]
    if any(n.startswith("_foreach_") for n in names):
        return list(kernels)
    period = next(
        (
            p
            for p in range(1, len(names) // 2 + 1)
            if len(names) % p == 0 and all(n == names[i % p] for i, n in enumerate(names))
        ),
        len(names),
    )
    if period == len(names):
        return list(kernels)
    return [
        Kernel(
            f"_foreach_{names[j]}",
            [s for k in kernels[j::period] for s in k.inputs],
            [d for k in kernels[j::period] for d in k.input_dtypes],
            [s for k in kernels[j::period] for s in k.outputs],
            [d for k in kernels[j::period] for d in k.output_dtypes],
            kernels[j].memory,
        )
        for j in range(period)
    ]


def trace_model(name: str, trace: Trace) -> GpuModel:
    """`gpu_model` for a trace: TF32 on for float32 GEMMs only when the trace recorded it
    (``extra["tf32_matmul"]``, written by a CUDA capture)."""
    return gpu_model(name, tf32=bool(trace.extra.get("tf32_matmul", False)))


def is_gpu_probe(path: str | Path) -> bool:
    """Whether `path` is a probe file written by ``nerframe probe --device cuda``."""
    try:
        document = json.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(document, dict) and document.get("device_kind") == "cuda"


def probe_model(path: str | Path, trace: Trace | None = None) -> GpuModel:
    """The kernel model of a CUDA probe file: `fit` of its micro-benchmarks (TF32 on for
    float32 GEMMs when `trace` recorded it)."""
    from nerframe.formats import collector_paused, parse

    with collector_paused():
        document = parse(path, what="probe file")
    if not isinstance(document, dict) or document.get("device_kind") != "cuda":
        raise InvalidInputError(f"{path}: not a CUDA probe file (nerframe probe --device cuda)")
    try:
        figures = fit(document)
    except (KeyError, TypeError, ValueError, ZeroDivisionError) as e:
        raise InvalidInputError(f"{path}: bad CUDA probe ({type(e).__name__}: {e})") from None
    tf32 = bool(trace.extra.get("tf32_matmul", False)) if trace is not None else False
    name = str(document.get("device", "cuda"))
    return from_figures(name, {**figures, "source": f"probe {path}"}, tf32=tf32)


# --- Ops of the built-in pipelines on a GPU (schedule, analyze, validate) ------------

OpClass = Literal["data", "gemm", "sort"]


class OpKernels(NamedTuple):
    """How a GPU runs one op of a built-in pipeline: the kernels it launches, the host
    synchronisations it waits for (each pays ``alone_s - back_to_back_s`` once more:
    the GPU drains, the host launches anew), and the class its work runs at."""

    launches: int
    syncs: int
    kind: OpClass
    source: str
    traffic: float = 1.0
    """The bytes its kernels move over the op's own (the cost model's) bytes through
    DRAM (`dram`): more than 1 where the implementation writes and reads back
    intermediates, less where it reads one copy for several of the op's uses."""
    dram: Literal["all", "inputs", "outputs", "none"] = "all"
    """Which of its own bytes pass through DRAM: all, only its inputs (and weights), only
    its outputs, or none (a stage inside a fused kernel, whose intermediates stay in
    registers and shared memory)."""
    lanes: float = 1.0
    """The share of a warp's lanes doing its work (SIMT utilisation): its FLOPs run at
    the FP32 peak × ``lanes``."""


OP_KERNELS: dict[str, OpKernels] = {
    # 3DGS: the official CUDA rasteriser (graphdeco-inria/diff-gaussian-rasterization,
    # CudaRasterizer::Rasterizer::forward and RasterizeGaussiansCUDA)
    "FrustumCulling": OpKernels(
        3,
        1,
        "data",
        "preprocessCUDA (its culling test is its first step) and the two torch::full of "
        "the outputs (colour, radii); the frame starts after the host's last sync",
    ),
    "GaussianPreprocess": OpKernels(
        2,
        0,
        "data",
        "projection and SH run inside preprocessCUDA; cub::DeviceScan::InclusiveSum of "
        "the tiles touched (2 kernels)",
    ),
    "TileDuplicate": OpKernels(
        1,
        1,
        "data",
        "duplicateWithKeys; the host reads the pair count back (cudaMemcpy) first",
    ),
    "RadixSort": OpKernels(
        8,
        0,
        "sort",
        "cub::DeviceRadixSort::SortPairs, onesweep (CUB >= 1.15): a histogram kernel, "
        "a scan kernel and one kernel per 8-bit pass, six passes (docs/workloads.md); "
        "assumption, range 8-18 (older CUB: three kernels per pass)",
    ),
    "TileBlend": OpKernels(
        3, 0, "data", "cudaMemset of the tile ranges, identifyTileRanges, renderCUDA"
    ),
    "Sorting": OpKernels(8, 0, "sort", "a radix sort as RadixSort (assumption)"),
    # Training: the optimizer's step
    "AdamUpdate": OpKernels(
        8,
        0,
        "data",
        "torch.optim.Adam's default step on CUDA (foreach, torch/optim/adam.py "
        "_multi_tensor_adam): _foreach_add_ of the step counts, _foreach_lerp_ (m), "
        "_foreach_mul_ and _foreach_addcmul_ (v), _foreach_sqrt, _foreach_div_ and "
        "_foreach_add_ (the denominator, a new tensor) and _foreach_addcdiv_ (the "
        "parameter), each one launch over every tensor (multi_tensor_apply); they move "
        "12 + 8 + 12 + 8 + 8 + 8 + 16 = 72 bytes a float32 parameter against the fused "
        "update's 28. A fused step (Adam(fused=True), tiny-cuda-nn's Adam in "
        "Instant-NGP) is one launch at traffic 1",
        traffic=72 / 28,
    ),
    # NeRFs: tiny-cuda-nn / nerfacc-style kernels, one per stage (assumption)
    "HashEncoding": OpKernels(
        1,
        0,
        "data",
        "tiny-cuda-nn's grid encoding: one kernel over every level; its table reads "
        "are the hash grid's sectors (nerframe.mapping.gathered_bytes: a voxel's corners "
        "share sectors, a level's table stays in the L2), not the micro-benchmark's "
        "uniformly random rows",
    ),
    "HashLookup": OpKernels(1, 0, "data", "as HashEncoding"),
    "MLP": OpKernels(
        0,
        0,
        "gemm",
        "one GEMM kernel per layer (two per layer backward: input and weight gradients), "
        "the activation fused into it; assumption: tiny-cuda-nn fuses a whole network "
        "into one kernel, PyTorch runs two per layer",
    ),
}
"""Kernels per op type on a GPU (per run of the op: per frame for frame ops, per batch
for batch ops); op types not listed launch one kernel of the ``data`` class
(`DEFAULT_OP`). Classes: ``data``: ``max(bytes / W, FLOPs / FP32 peak)``, a
custom kernel limited by DRAM or by its arithmetic (bytes:
the op's own and its hash-table reads, `op_seconds`'s ``gathered``); ``gemm``: each
layer's GEMM at the GEMM fit of its shape and dtype; ``sort``: the sort's bytes (the graph
counts its passes) at the sort rate's bandwidth (keys/s × `SORT_BYTES_PER_KEY`)."""

DEFAULT_OP = OpKernels(1, 0, "data", "one custom kernel (assumption)")

IRSS_LANES = 0.189
"""The share of the GPU's lanes GBU's IRSS kernel keeps busy: "only 18.9 % utilization of
GPU threads/lanes on the real-world static scene dataset", its rows' workloads being
imbalanced once non-contributing fragments are skipped (Ye et al., GBU, HPCA 2025,
p.7, via ../shared/research/published_bodies.md, BGS-N). Measured on the Orin NX's
static scenes; other GPUs and scenes take it as it is (assumption, plausible 0.1-0.5)."""

IRSS_KERNELS: dict[str, OpKernels] = {
    "RowGeneration": OpKernels(
        3,
        0,
        "data",
        "GBU's IRSS on a GPU is one CUDA kernel in place of renderCUDA (Ye et al., GBU, "
        "HPCA 2025, p.7: 'IRSS deployed as a plain CUDA kernel'), after cudaMemset and "
        "identifyTileRanges as TileBlend; the row generation reads each Gaussian of a "
        "tile's list once for the tile's 16 rows (into shared memory, as renderCUDA "
        "loads a tile's Gaussians), not once a row: 1/16 of its inputs from DRAM, its "
        "rows stay on chip",
        traffic=1 / 16,
        dram="inputs",
        lanes=IRSS_LANES,
    ),
    "RowProcessing": OpKernels(
        0,
        0,
        "data",
        "inside the IRSS kernel: a row's shading reads and writes registers only",
        dram="none",
        lanes=IRSS_LANES,
    ),
    "GaussianAlphaBlend": OpKernels(
        0,
        0,
        "data",
        "inside the IRSS kernel: blending along the row in registers, the pixels written",
        dram="outputs",
        lanes=IRSS_LANES,
    ),
}
"""How a GPU runs the ops of GBU's intra-row sequential shading (IRSS) dataflow, in a
graph that holds its row ops (``RowGeneration`` and ``RowProcessing``): the three
stages of one kernel (GBU, HPCA 2025), which replace `OP_KERNELS`' entries there. The
backward rows of a training graph are assumed fused the same way."""

FUSED_MLP_WIDTH = 128
"""The widest half-precision MLP a GPU runs as tiny-cuda-nn's fully fused network
(Müller et al., "Real-time Neural Radiance Caching for Path Tracing", SIGGRAPH 2021;
tiny-cuda-nn's ``FullyFusedMLP`` takes widths 16 to 128): the Instant-NGP networks of
the built-in pipelines (64 wide, 16-bit). Such a network is one kernel whose layers stay
in the SM's registers and shared memory, so it pays one launch and runs every layer at
`FUSED_MLP_RATE_AT`'s rate instead of a GEMM per layer at its narrow shape's fit."""

FUSED_MLP_RATE_AT = 256
"""The layer shape (K = N) whose half-precision GEMM fit gives a fused network's rate:
a wide layer's, since the fused kernel keeps its narrow layers on chip. Assumption,
plausible between the 64-wide layers' fit (the same work as separate GEMMs, about 3x
slower) and the 1024-wide (about 1.3x faster); docs/gpus.md."""

SORT_BYTES_PER_KEY = DEFAULTS["sort_bytes_per_key"]
"""Bytes a key of the sort rate moves (its 4 passes over 32-bit keys and int64 indices):
turns the measured keys/s into the bandwidth a graph's sort moves its bytes at."""


def sm_modules(accel: Accelerator) -> np.ndarray:
    """Whether each module of `accel` is a GPU's SMs (``cuda_cores`` or ``tensor_cores``
    of a GPU file, or of a file that extends one): ops there run as GPU kernels.

    >>> from nerframe.hardware import accelerator
    >>> sm_modules(accelerator("gaurast")).tolist()
    [True, True, False]
    """
    names = ("cuda_cores", "tensor_cores")
    if not all(any(m.name == n for m in accel.modules) for n in names):
        return np.zeros(len(accel.modules), bool)
    return np.array([m.name in names for m in accel.modules], bool)


def accelerator_model(accel: Accelerator) -> GpuModel:
    """The kernel model of a GPU accelerator (or one that extends a GPU): the H200's
    figures scaled to its data sheet (`datasheet`, `scaled`'s rules); the built-in
    ``h200`` file's data sheet is the measured H200's, so it runs at them as measured.

    >>> from nerframe.hardware import accelerator
    >>> m = accelerator_model(accelerator("a6000"))
    >>> round(m.bandwidth / 1e9, 1)  # 4,106 GB/s x 768 / 4,800
    657.0
    >>> accelerator_model(accelerator("h200")).bandwidth / 1e9  # measured
    4106.0
    """
    return from_figures(accel.name, _scale(accel.name, datasheet(accel)))


def reference(accel: Accelerator) -> Accelerator:
    """The accelerator whose data sheet sets an op's time on `accel`'s GPU: its file as
    written (`accel.path`), else `accel` itself. A variant of a file (a sweep point, a
    band's corner, a calibration step) keeps its file's op times and scales them as the
    scheduler scales any op's work (by the module's rate and the clock), so a sweep row
    and a schedule of the same variant agree."""
    if not accel.path:
        return accel
    try:
        stat = Path(accel.path).stat()
    except OSError:  # the file is gone: its loaded figures are all there is
        return accel
    return _file_accelerator(accel.path, stat.st_mtime_ns, stat.st_size)


@cache
def _file_accelerator(path: str, mtime_ns: int, size: int) -> Accelerator:
    """The accelerator file at `path` (cached while its time stamp and size hold)."""
    from nerframe.hardware import accelerator

    del mtime_ns, size
    return accelerator(path)


def op_seconds(
    costs: pl.DataFrame,
    module: np.ndarray,
    accel: Accelerator,
    gathered: np.ndarray,
    *,
    batches: int = 1,
) -> np.ndarray:
    """Seconds (float64) of each row of a costs table on the GPU module it maps to, at
    the data sheet of `reference` (`module`: the rows' module indices; rows on other
    modules get NaN; `gathered`: the rows' hash-table read bytes,
    `nerframe.mapping.gathered_bytes`), before the GPU's efficiency: its
    synchronisations at ``alone_s - back_to_back_s`` each, plus its kernels
    (`OP_KERNELS`) each at least ``back_to_back_s`` (the host launches no faster),
    its work spread evenly over them; a GEMM per MLP layer at its own fit.

    A batch-scoped op runs as kernels over the whole frame's rays, whatever the graph's
    batch: a GPU renderer holds a frame's intermediates in DRAM, not in a batch-sized
    buffer (Instant-NGP's testbed marches every ray of the frame together,
    ``NerfTracer`` in ``testbed_nerf.cu``). Its launches and syncs are paid once per
    frame, its GEMMs have the frame's rows (`batches` × the batch's), and each of the
    frame's `batches` batches carries an equal share.

    >>> import nerframe
    >>> c = nerframe.costs(nerframe.pipeline("3dgs", gaussians=1000).ops)
    >>> a = nerframe.accelerator("a6000")
    >>> s = op_seconds(c, np.zeros(c.height, np.int64), a, np.zeros(c.height))
    >>> round(float(s[0]) * 1e6, 1)  # a sync (13.2 us) + 3 launch-bound kernels (29.9 us)
    43.1
    """
    from nerframe.kernels.systolic import mlp_gemms

    sheet = reference(accel)
    model = accelerator_model(sheet)
    on_sm = sm_modules(accel)[module]
    fp32 = datasheet(sheet)["fp32"] * 1e12
    floor, sync = model.back_to_back_s, model.alone_s - model.back_to_back_s
    op_types = costs.get_column("op_type").cast(pl.String).to_list()
    flops = costs.get_column("flops").to_numpy()
    table = kernel_table(set(op_types))
    moved = kernel_bytes(costs, on_sm) + gathered
    result = np.full(costs.height, np.nan)
    for i in np.flatnonzero(on_sm).tolist():
        op = table.get(op_types[i], DEFAULT_OP)
        row = costs.row(i, named=True)
        runs = max(batches, 1) if row["scope"] == "batch" else 1
        memory = moved[i] / model.bandwidth
        if op.kind == "gemm":
            dtype = "float32" if row["bitwidth"] > 16 else _half(model)
            if dtype != "float32" and row["layer_width"] <= FUSED_MLP_WIDTH:
                # tiny-cuda-nn's fully fused network: one kernel, every layer at the
                # rate of a wide layer (its narrow layers never leave the SM)
                rows = row["B"] * row["N"] * runs
                wide = model.gemm_fit(dtype, FUSED_MLP_RATE_AT, FUSED_MLP_RATE_AT)
                rate = wide.rate(rows, FUSED_MLP_RATE_AT, FUSED_MLP_RATE_AT)
                work = float(flops[i]) / rate
                result[i] = (op.syncs * sync + max(floor, work * runs, float(memory) * runs)) / runs
                continue
            gemms = mlp_gemms(
                row["B"] * row["N"] * runs,
                row["in_dim"],
                row["num_layers"],
                row["layer_width"],
                row["out_dim"],
                row["skip_connections"] or [],
                backward=bool(row["backward"]),
            )
            layers = [
                2.0 * m * k * n / model.gemm_fit(dtype, k, n).rate(max(m, k), k, n)
                for m, k, n in gemms
            ]
            kernels = sum(max(floor, w) for w in layers)
            result[i] = (op.syncs * sync + max(kernels, memory * runs)) / runs
            continue
        if op.kind == "sort":
            work = float(moved[i]) / (model.sort_rate * SORT_BYTES_PER_KEY)
        else:
            work = max(float(memory), float(flops[i]) / (fp32 * op.lanes))
        result[i] = (op.syncs * sync + max(op.launches * floor, work * runs)) / runs
    return result


def kernel_table(op_types: set[str]) -> dict[str, OpKernels]:
    """How a GPU runs the op types of one graph: `OP_KERNELS` (a type not there runs as
    `DEFAULT_OP`), with `IRSS_KERNELS` first in a graph with IRSS's row ops.

    >>> kernel_table({"RowGeneration", "RowProcessing"})["GaussianAlphaBlend"].dram
    'outputs'
    >>> "GaussianAlphaBlend" in kernel_table({"GaussianAlphaBlend"})  # a blend kernel alone
    False
    """
    if {"RowGeneration", "RowProcessing"} <= op_types:
        return {**OP_KERNELS, **IRSS_KERNELS}
    return OP_KERNELS


def kernel_bytes(costs: pl.DataFrame, on_sm: np.ndarray) -> np.ndarray:
    """Each row's own bytes as the DRAM sees them (float64): on a GPU's SMs (`on_sm`),
    the part its kernels move through DRAM (`OpKernels.dram`) × their ``traffic``;
    elsewhere its bytes (``bytes_total``). Hash-table reads are counted apart.

    >>> import nerframe
    >>> c = nerframe.costs(nerframe.pipeline("gbu").ops)
    >>> on_gpu = kernel_bytes(c, np.ones(c.height, bool))
    >>> float(on_gpu[-2]), float(on_gpu[-1] / c["bytes_out"][-1])  # on chip; pixels out
    (0.0, 1.0)
    """
    own = costs.get_column("bytes_total").to_numpy().astype(np.float64)
    if not on_sm.any():
        return own
    out = costs.get_column("bytes_out").to_numpy().astype(np.float64)
    parts = {"all": own, "inputs": own - out, "outputs": out, "none": np.zeros_like(own)}
    types = np.asarray(costs.get_column("op_type").cast(pl.String).to_list())
    table = kernel_table(set(types.tolist()))
    result = own.copy()
    for op_type in np.unique(types[on_sm]).tolist():
        op = table.get(op_type, DEFAULT_OP)
        rows = on_sm & (types == op_type)
        result[rows] = op.traffic * parts[op.dram][rows]
    return result


def _half(model: GpuModel) -> str:
    """The half-precision GEMM fit a 16-bit (or narrower) MLP runs at: float16's where
    measured, else bfloat16's (the same dense tensor peak on every data sheet)."""
    return "float16" if "float16" in model.gemm else "bfloat16"

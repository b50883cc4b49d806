"""The host model: a traced call's time on this machine, from its kernels and the probe.

A call's predicted time is the sum, over every module call in it (itself and its
descendants), of the fixed cost of a module call, plus, over every torch function
those calls ran (their *kernels*, recorded by `nerframe.trace.capture`), that
kernel's time:

- a **view** (its output shares an input's memory: ``reshape``, slicing) moves no
  data: ``view_s``;
- a **GEMM** (``linear``, ``matmul``, ``mm``, ``addmm``, ``bmm``…; ``M×K`` by
  ``K×N``, ``M`` the output's rows: every dimension but the last): ``kernel_s +
  2·M·K·N / R(M, K, N)``, where ``R`` is the GEMM throughput the probe measured on a
  grid of ``K × N`` shapes for each of a few ``M``, interpolated bilinearly in
  ``(log2 K, log2 N)`` on ``log R`` on each ``M``, then linearly in ``log2 M``, and
  clamped to the grid (a version-2 probe has one ``M``: the rate does not depend on
  it);
- a **gather** (``__getitem__``, ``index_select``, ``gather``, ``embedding``… with an
  integer index tensor): ``kernel_s + rows / G(table)``, where ``rows`` is the index
  tensor's size and ``G`` the probe's gather rate (rows per second, random rows of a
  two-float table not in the cache, as a hash grid's level is in a forward pass)
  interpolated in log-log by the table's bytes;
- any other kernel (element-wise, reductions, ``cat``, factories): ``kernel_s +
  max(bytes / W(bytes), elements / E…)``, the bytes being every input and output
  tensor's size at its recorded dtype, ``W`` the probe's bandwidth into fresh
  memory (a new output) or into reused memory (``out=``, in place), interpolated in
  log-log by the bytes, and ``elements / E`` taken for every element rate that
  limits the kernel (the slowest counts): ``simple`` (every kernel), ``special`` for
  transcendental functions (`SPECIAL`), ``divide`` for a remainder or floor
  division (`DIVIDES`), ``integer`` when an input or output is an integer tensor,
  ``broadcast`` when an input of more than one element is expanded to the output's
  shape (NumPy's rule; a reduction's or a ``cat``'s inputs are not), each on the
  output's elements, and ``reduce`` for a reduction or scan (`REDUCTIONS`: fewer
  output elements than input, or a cumulative one) on its largest input's elements.
  A rate the probe did not measure (an older probe) does not limit.

Every term is a probe measurement (`nerframe.probing`): ``call_s`` a tiny
element-wise op timed over many calls, ``view_s`` a tiny ``view``, ``module_s`` a
module that does nothing called with the capture's own timing hooks, and
``kernel_s``, the fixed cost of a kernel inside a model, ``cold_s``: a tiny op in a
chain of different tiny ops run after a sweep of memory larger than the last-level
cache (in a forward pass each op runs once, its code and the allocator's state
evicted by everything that ran since its last call; in the probe's loop of one op
they stay cached). A probe without ``cold_s`` (version 3 or older) has ``kernel_s``
= ``call_s``. The probe's rates are net of ``call_s`` (a loop's time per call minus
the fixed cost of that loop), so that a kernel's time is ``kernel_s`` plus its work.
Assumptions: the GEMM rate is smooth in ``log M`` between the probed ``M`` and
constant beyond them, and a gather's rate does not depend on the row width (the
probe's rows are two float32, a hash grid's).

A call recorded without kernels (trace versions 1 and 2) is predicted from its
costs: ``kernel_s`` plus the larger of its FLOPs at the best GEMM rate and its bytes
at the fresh bandwidth.

>>> from nerframe.trace.tracefile import Kernel
>>> m = HostModel(1e-6, 1e-7, 2e-6, ((4096, 4, 4, "float32", 1e9),), ((1e3, 1e9),),
...               ((1e3, 2e9),), ((1e3, 1e7),))
>>> seconds, kind = m.kernel_seconds(Kernel("relu", [[250]], ["float32"], [[250]], ["float32"]))
>>> round(seconds * 1e6, 9), kind  # 1 us fixed + 2 kB at 1 GB/s
(3.0, 'data')
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass

from nerframe.errors import InvalidInputError
from nerframe.trace.tracefile import Kernel, Trace, dtype_bits

GEMMS: dict[str, int] = {
    "linear": 0,
    "matmul": 0,
    "mm": 0,
    "bmm": 0,
    "__matmul__": 0,
    "addmm": 1,
    "baddbmm": 1,
    "addbmm": 1,
}
"""GEMM kernels, and which input's last dimension is the contracted ``K``."""

GATHERS = frozenset(
    {"__getitem__", "index_select", "gather", "take", "take_along_dim", "embedding", "index"}
)
"""Kernels that read rows of a table at indices (a gather when an index is an integer tensor)."""

SPECIAL = frozenset(
    {
        *("sin", "cos", "tan", "sinh", "cosh", "tanh", "atan2", "erf", "sigmoid", "softplus"),
        *("exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "pow", "__pow__", "__rpow__"),
    }
)
"""Special-function kernels: limited by the probe's ``special`` element rate."""

DIVIDES = frozenset(
    {"remainder", "fmod", "floor_divide", "__mod__", "__rmod__", "__floordiv__", "__rfloordiv__"}
)
"""Kernels that divide per element (a hash modulo the table size): limited by the probe's
``divide`` rate (an int64 ``remainder``)."""

SCANS = frozenset({"cumsum", "cumprod", "cummax", "cummin", "logcumsumexp"})
"""Cumulative reductions: as many outputs as inputs, each a reduction of a prefix."""

REDUCTIONS = SCANS | frozenset(
    {
        *("sum", "nansum", "prod", "mean", "nanmean", "amax", "amin", "max", "min"),
        *("argmax", "argmin", "norm", "logsumexp", "std", "var", "any", "all"),
    }
)
"""Reductions along dimensions: limited by the probe's ``reduce`` rate (a ``sum`` over a
short dimension, per input element) when they have fewer outputs than inputs (``max``
of two tensors is element-wise) or are scans."""

Point = tuple[float, float]
"""(size, rate): a probe measurement of a rate at a size (bytes)."""


@dataclass(frozen=True)
class HostModel:
    """The probe's measurements (see the module docstring): fixed costs in seconds,
    ``gemm`` as (M, K, N, dtype, FLOP/s), ``fresh`` and ``reused`` as (bytes moved,
    bytes/s), ``gather`` as (table bytes, rows/s).

    >>> m = HostModel(1e-6, 1e-7, 2e-6, ((4096, 4, 4, "float32", 1e9),), ((1e3, 1e9),),
    ...               ((1e3, 2e9),), ((1e3, 1e7),))
    >>> round(m.gemm_rate(64, 64, "float32"))  # one point: clamped to it
    1000000000
    """

    call_s: float
    view_s: float
    module_s: float
    gemm: tuple[tuple[int, int, int, str, float], ...]
    fresh: tuple[Point, ...]
    reused: tuple[Point, ...]
    gather: tuple[Point, ...]
    elements: tuple[tuple[str, float], ...] = ()
    source: str = ""
    threads: int = 0
    """torch's intra-op threads the probe ran on (0: unknown)."""
    cold_s: float = 0.0
    """The fixed cost of a kernel call on cold caches (0: not measured; see `kernel_s`)."""

    def __post_init__(self) -> None:
        for name in ("call_s", "view_s", "module_s", "cold_s"):
            value = getattr(self, name)
            if not (math.isfinite(value) and value >= 0):
                raise InvalidInputError(f"host model: {name} must be a number >= 0, got {value!r}")
        for name in ("gemm", "fresh", "reused", "gather"):
            points = getattr(self, name)
            if not points:
                raise InvalidInputError(f"host model: no {name} measurement")
            if not all(math.isfinite(p[-1]) and p[-1] > 0 for p in points):
                raise InvalidInputError(f"host model: every {name} rate must be positive")

    @property
    def kernel_s(self) -> float:
        """The fixed cost of one kernel call inside a model: ``cold_s``, else ``call_s``.

        >>> m = HostModel(1e-6, 0, 0, ((1, 1, 1, "float32", 1.0),), ((1, 1),), ((1, 1),),
        ...               ((1, 1),))
        >>> from dataclasses import replace
        >>> m.kernel_s, replace(m, cold_s=5e-6).kernel_s  # a version-3 probe; a version-4 one
        (1e-06, 5e-06)
        """
        return self.cold_s or self.call_s

    def gemm_rate(self, k: int, n: int, dtype: str, *, m: float | None = None) -> float:
        """FLOP/s of a GEMM of `m` rows, inner size `k` and `n` outputs: on each probed
        ``M``, bilinear in (log2 k, log2 n) on the log rate over that ``M``'s grid; then
        linear in log2 m on the log rate between the two probed ``M`` around `m`; clamped
        to the grid on every axis. Points of `dtype` are used (float32 when the probe has
        none of that dtype); `m` None takes the largest ``M`` probed.

        >>> m = HostModel(0, 0, 0, ((9, 1, 1, "float32", 1e9), (9, 1, 4, "float32", 1e9),
        ...               (9, 4, 1, "float32", 4e9), (9, 4, 4, "float32", 4e9)),
        ...               ((1, 1),), ((1, 1),), ((1, 1),))
        >>> round(m.gemm_rate(2, 3, "float32") / 1e9, 6)  # halfway in log2 k: sqrt(1 * 4)
        2.0
        >>> two = HostModel(0, 0, 0, ((4, 8, 8, "float32", 1e9), (64, 8, 8, "float32", 16e9)),
        ...                 ((1, 1),), ((1, 1),), ((1, 1),))
        >>> round(two.gemm_rate(8, 8, "float32", m=16) / 1e9, 6)  # halfway in log2 m
        4.0
        """
        points = [p for p in self.gemm if p[3] == dtype] or [
            p for p in self.gemm if p[3] == "float32"
        ]
        points = points or list(self.gemm)
        rows = sorted({math.log2(p[0]) for p in points})
        z = rows[-1] if m is None else math.log2(max(m, 1))
        m0, m1, tm = _bracket(rows, z)
        x, y = math.log2(max(k, 1)), math.log2(max(n, 1))
        low = _plane([p for p in points if math.log2(p[0]) == m0], x, y)
        high = low if m1 == m0 else _plane([p for p in points if math.log2(p[0]) == m1], x, y)
        return math.exp(low * (1 - tm) + high * tm)

    def bandwidth(self, nbytes: float, *, reused: bool = False) -> float:
        """Bytes/s moving `nbytes` into fresh (or, `reused`, existing) memory, log-log
        interpolated between the probe's sizes and clamped to them.

        >>> m = HostModel(0, 0, 0, ((9, 1, 1, "float32", 1.0),), ((1e3, 1e9), (1e5, 1e11)),
        ...               ((1e3, 1.0),), ((1, 1),))
        >>> round(m.bandwidth(1e4) / 1e10, 9), round(m.bandwidth(1e7) / 1e11, 9)
        (1.0, 1.0)
        """
        return _loglog(self.reused if reused else self.fresh, nbytes)

    def gather_rate(self, table_bytes: float) -> float:
        """Rows/s gathered at random from a table of `table_bytes` (log-log interpolated)."""
        return _loglog(self.gather, table_bytes)

    def kernel_seconds(self, kernel: Kernel) -> tuple[float, str]:
        """(seconds, kind) of one kernel; kind is ``view``, ``gemm``, ``gather`` or ``data``.

        >>> m = HostModel(1e-6, 1e-7, 0, ((4096, 4, 4, "float32", 1e9),), ((1, 1e9),),
        ...               ((1, 1e9),), ((1, 1e6),))
        >>> k = Kernel("linear", [[100, 4], [4, 4]], ["float32"] * 2, [[100, 4]], ["float32"])
        >>> seconds, kind = m.kernel_seconds(k)  # 1 us + 3,200 FLOPs at 1 GFLOP/s
        >>> round(seconds * 1e6, 9), kind
        (4.2, 'gemm')
        """
        if kernel.memory == "view":
            return self.view_s, "view"
        if kernel.name in GEMMS and kernel.outputs and kernel.outputs[0]:
            contracted = GEMMS[kernel.name]
            if len(kernel.inputs) > contracted and kernel.inputs[contracted]:
                k = kernel.inputs[contracted][-1]
                out = kernel.outputs[0]
                flops = 2.0 * math.prod(out) * k
                dtype = kernel.output_dtypes[0] if kernel.output_dtypes else "float32"
                rate = self.gemm_rate(k, out[-1], dtype, m=math.prod(out[:-1]))
                return self.kernel_s + flops / rate, "gemm"
        if kernel.name in GATHERS:
            indices = [
                math.prod(s)
                for s, d in zip(kernel.inputs, kernel.input_dtypes, strict=True)
                if d.startswith(("int", "uint"))
            ]
            tables = [
                _nbytes(s, d)
                for s, d in zip(kernel.inputs, kernel.input_dtypes, strict=True)
                if not d.startswith(("int", "uint", "bool"))
            ]
            if indices and max(indices) > 1 and tables:
                return self.kernel_s + max(indices) / self.gather_rate(max(tables)), "gather"
        moved = sum(
            _nbytes(s, d) for s, d in zip(kernel.inputs, kernel.input_dtypes, strict=True)
        ) + sum(_nbytes(s, d) for s, d in zip(kernel.outputs, kernel.output_dtypes, strict=True))
        if moved == 0:
            return self.kernel_s, "data"
        seconds = moved / self.bandwidth(moved, reused=kernel.memory == "reused")
        rates = dict(self.elements)
        for kind, elements in _element_limits(kernel).items():
            if kind in rates:
                seconds = max(seconds, elements / rates[kind])
        return self.kernel_s + seconds, "data"

    def costs_seconds(self, flops: float, nbytes: float) -> float:
        """A call without kernel records: ``kernel_s`` + the larger of `flops` at the best
        GEMM rate and `nbytes` at the fresh bandwidth.

        >>> HostModel(1e-6, 0, 0, ((1, 1, 1, "float32", 1e9),), ((1, 1e9),), ((1, 1),),
        ...           ((1, 1),)).costs_seconds(2e3, 1e3) * 1e6
        3.0
        """
        best = max(p[4] for p in self.gemm)
        memory = nbytes / self.bandwidth(nbytes) if nbytes > 0 else 0.0
        return self.kernel_s + max(flops / best, memory)


def _element_limits(kernel: Kernel) -> dict[str, int]:
    """The element rates that limit a data kernel, each with the elements it counts:
    the output's, and a reduction's largest input's (see the module docstring).

    >>> k = Kernel("sum", [[8192, 8, 3]], ["int64"], [[8192, 8]], ["int64"])
    >>> _element_limits(k)
    {'simple': 65536, 'integer': 65536, 'reduce': 196608}
    """
    if not kernel.outputs:
        return {}
    out = kernel.outputs[0]
    size = math.prod(out)
    limits = {"simple": size}
    if kernel.name in SPECIAL:
        limits["special"] = size
    if kernel.name in DIVIDES:
        limits["divide"] = size
    if any(d.startswith(("int", "uint")) for d in [*kernel.input_dtypes, *kernel.output_dtypes]):
        limits["integer"] = size
    if any(_expanded(shape, out) for shape in kernel.inputs):
        limits["broadcast"] = size
    largest = max((math.prod(s) for s in kernel.inputs), default=0)
    if kernel.name in REDUCTIONS and (largest > size or kernel.name in SCANS):
        limits["reduce"] = largest
    return limits


def _expanded(shape: Sequence[int], out: Sequence[int]) -> bool:
    """Whether an input of `shape` is broadcast to `out`: more than one element, fewer
    than `out`, and every trailing dimension equal to `out`'s or 1 (NumPy's rule). An
    input larger than the output (a reduction) or of another layout (``cat``) is not.

    >>> _expanded([128, 1, 3], [128, 64, 3]), _expanded([8192, 3], [8192, 27])
    (True, False)
    >>> _expanded([8192, 8, 3], [8192, 8]), _expanded([1], [4, 4])
    (False, False)
    """
    if not 1 < math.prod(shape) < math.prod(out) or len(shape) > len(out):
        return False
    return all(a in (b, 1) for a, b in zip(reversed(shape), reversed(out), strict=False))


def _nbytes(shape: Sequence[int], dtype: str) -> float:
    bits = dtype_bits(dtype) or 32  # assumption: an unknown dtype is 4 bytes
    return math.prod(shape) * bits / 8


def _bracket(grid: list[float], x: float) -> tuple[float, float, float]:
    """The grid values around `x` and `x`'s position between them (0..1), clamped."""
    if x <= grid[0]:
        return grid[0], grid[0], 0.0
    if x >= grid[-1]:
        return grid[-1], grid[-1], 0.0
    i = bisect.bisect_right(grid, x)
    lo, hi = grid[i - 1], grid[i]
    return lo, hi, (x - lo) / (hi - lo)


def _plane(points: Sequence[tuple[int, int, int, str, float]], x: float, y: float) -> float:
    """The log GEMM rate at (log2 K, log2 N) = (`x`, `y`), bilinear over `points` (one
    ``M``'s full K × N grid), clamped to it."""
    table = {(math.log2(p[1]), math.log2(p[2])): math.log(p[4]) for p in points}
    ks = sorted({key[0] for key in table})
    ns = sorted({key[1] for key in table})
    (k0, k1, tk), (n0, n1, tn) = _bracket(ks, x), _bracket(ns, y)
    if not all(c in table for c in ((k0, n0), (k0, n1), (k1, n0), (k1, n1))):
        raise InvalidInputError("host model: the GEMM measurements are not a full K × N grid")
    low = table[(k0, n0)] * (1 - tn) + table[(k0, n1)] * tn
    high = table[(k1, n0)] * (1 - tn) + table[(k1, n1)] * tn
    return low * (1 - tk) + high * tk


def _loglog(points: Sequence[Point], x: float) -> float:
    ordered = sorted(points)
    sizes = [math.log(p[0]) for p in ordered]
    lo, hi, t = _bracket(sizes, math.log(max(x, 1e-30)))
    rates = {math.log(p[0]): math.log(p[1]) for p in ordered}
    return math.exp(rates[lo] * (1 - t) + rates[hi] * t)


@dataclass(frozen=True)
class Prediction:
    """A call's predicted seconds, split by term (fixed costs, GEMMs, gathers, data)."""

    fixed_s: float = 0.0
    gemm_s: float = 0.0
    gather_s: float = 0.0
    data_s: float = 0.0

    @property
    def total_s(self) -> float:
        """The predicted time: the sum of the terms."""
        return self.fixed_s + self.gemm_s + self.gather_s + self.data_s

    @property
    def bound(self) -> str:
        """``compute`` when the GEMMs take longer than the data and gathers, else ``memory``."""
        return "compute" if self.gemm_s >= self.gather_s + self.data_s else "memory"


def predict_kernels(model: HostModel, kernels: Sequence[Kernel], modules: int) -> Prediction:
    """The prediction of `modules` module calls that ran `kernels` (see the module docstring).

    >>> m = HostModel(1e-6, 1e-7, 2e-6, ((4096, 4, 4, "float32", 1e9),), ((1, 1e9),),
    ...               ((1, 1e9),), ((1, 1e6),))
    >>> relu = Kernel("relu", [[250]], ["float32"], [[250]], ["float32"])
    >>> p = predict_kernels(m, [relu, relu], 1)  # 2 us module, 2 x (1 us + 2 us)
    >>> round(p.total_s, 12), p.bound
    (8e-06, 'memory')
    """
    fixed, terms = modules * model.module_s, {"gemm": 0.0, "gather": 0.0, "data": 0.0}
    for kernel in kernels:
        seconds, kind = model.kernel_seconds(kernel)
        if kind == "view":
            fixed += seconds
            continue
        fixed += model.kernel_s
        terms[kind] += seconds - model.kernel_s
    return Prediction(fixed, terms["gemm"], terms["gather"], terms["data"])


def inclusive(trace: Trace, *, backward: bool = False) -> dict[int, tuple[list[Kernel], int]]:
    """Per call: the kernels it and its descendants ran, in order, and their module count
    (`backward`: their backward kernels, in a training trace).

    >>> from nerframe.trace.tracefile import Call
    >>> k = Kernel("relu", [[4]], ["float32"], [[4]], ["float32"])
    >>> calls = [Call(0, None, "", ["M"], {}, {}, [], [], [], [], 0.0, kernels=[k]),
    ...          Call(1, 0, "a", ["A"], {}, {}, [], [], [], [], 0.0, kernels=[k, k])]
    >>> {c: (len(ks), n) for c, (ks, n) in inclusive(Trace("m", calls)).items()}
    {0: (3, 2), 1: (2, 1)}
    """
    found: dict[int, tuple[list[Kernel], int]] = {
        c.id: (list(c.backward_kernels if backward else c.kernels), 1) for c in trace.calls
    }
    for c in reversed(trace.calls):  # children come after their parents
        if c.parent is not None:
            kernels, count = found[c.parent]
            child_kernels, child_count = found[c.id]
            found[c.parent] = (kernels + child_kernels, count + child_count)
    return found


def predict_forward(model: HostModel, trace: Trace) -> float | None:
    """The predicted time of one whole forward: every call at the top of the trace,
    inclusive (None when the trace records no kernels, versions 1 and 2); of a training
    trace, the whole iteration: the forward, the loss, the backward and the step."""
    if not any(c.kernels for c in trace.calls):
        return None
    work = inclusive(trace)
    total = sum(
        predict_kernels(model, *work[c.id]).total_s for c in trace.calls if c.parent is None
    )
    if trace.train is not None:
        back = inclusive(trace, backward=True)
        total += sum(
            predict_kernels(model, back[c.id][0], 0).total_s
            for c in trace.calls
            if c.parent is None
        )
        extra = [*trace.train.loss_kernels, *trace.train.optimizer_kernels]
        total += predict_kernels(model, extra, 0).total_s
    return total

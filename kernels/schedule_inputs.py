"""The scheduler kernel's inputs: per-op and per-configuration arrays, and their checks.

`OpArrays` holds what the kernel needs of each op (its module, its work in the
module's unit, its DRAM bytes); `ConfigArrays` holds a batch of C hardware
configurations of M modules each. `checked_inputs` converts both to contiguous
arrays of the kernel's dtypes and validates every value in one parallel pass,
raising `nerframe.kernels.faults.KernelInputError` naming the field, the configuration and,
for durations beyond the exact range, the op and module.

>>> ops = OpArrays(module=[0], work=[10.0], bytes_total=[0.0])
>>> cfg = ConfigArrays(count=[[2]], instances=[[2]], throughput=[[5.0]], latency=[[0]],
...                    power_uw=[[1.0]], frequency_mhz=[1e3], dram_bandwidth_gbps=[1.0],
...                    dram_pj_per_byte=[0.0])
>>> checked_inputs(ops, cfg)[1].count.dtype
dtype('int64')
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np
from numba import njit, prange

from nerframe.kernels.dag import int_vector
from nerframe.kernels.faults import KernelInputError
from nerframe.kernels.systolic import IS, NONE, op_cycles

__all__ = ["MAX_COUNT", "MAX_CYCLES", "ConfigArrays", "OpArrays", "checked_inputs"]

# Durations are computed in float64 and then made integers; beyond 2**53 cycles the
# ceil is no longer exact and sums of durations could overflow int64.
MAX_CYCLES = float(2**53)
# Instances of one module: the kernel keeps a free time per instance, so the bound
# keeps its scratch memory small; real accelerators have a few thousand at most.
MAX_COUNT = 2**20


class OpArrays(NamedTuple):
    """Per-op inputs of n ops."""

    module: np.ndarray  # int64[n]: module index of each op, 0..M-1
    work: np.ndarray  # float64[n]: work in the module's unit (FLOPs or items)
    bytes_total: np.ndarray  # float64[n]: DRAM bytes moved
    # The GEMMs of op i (rows M, K, N) are gemms[gemm_ptr[i]:gemm_ptr[i + 1]]; on a
    # systolic-array module they time the op (`nerframe.kernels.systolic`). None:
    # no op has any (checked_inputs makes the empty arrays).
    gemm_ptr: np.ndarray = None  # type: ignore[assignment]  # int64[n + 1]
    gemms: np.ndarray = None  # type: ignore[assignment]  # int64[L, 3]
    # Samples per tile of each GEMM (0: M whole; `nerframe.kernels.systolic.op_cycles`).
    # None: every GEMM whole.
    gemm_tiles: np.ndarray = None  # type: ignore[assignment]  # int64[L]
    # Floor on each op's memory cycles from a GPU's L2 bandwidth (core cycles, the
    # same on every configuration; `nerframe.scheduling.Mapped`). None: no floor.
    l2_cycles: np.ndarray = None  # type: ignore[assignment]  # int64[n]


class ConfigArrays(NamedTuple):
    """C hardware configurations of M modules: module fields (C, M), the rest (C,)."""

    # Shadows tuple.count, deliberately: the field is what a module's count means.
    count: np.ndarray  # type: ignore[assignment]  # int64: instances of the module
    instances: np.ndarray  # int64: k, instances one op takes (1..count)
    throughput: np.ndarray  # float64: work units per cycle per instance (> 0)
    latency: np.ndarray  # int64: fixed cycles added to every op (>= 0)
    power_uw: np.ndarray  # float64: power per busy instance, microwatts (>= 0)
    frequency_mhz: np.ndarray  # float64 (> 0)
    dram_bandwidth_gbps: np.ndarray  # float64 (> 0)
    dram_pj_per_byte: np.ndarray  # float64 (>= 0)
    # A module with a dataflow (`nerframe.kernels.systolic` codes, 0 = none) is an
    # array_rows x array_cols systolic array. None: no module is (checked_inputs
    # makes 1 x 1 arrays of dataflow 0).
    array_rows: np.ndarray = None  # type: ignore[assignment]  # int64 (>= 1)
    array_cols: np.ndarray = None  # type: ignore[assignment]  # int64 (>= 1)
    dataflow: np.ndarray = None  # type: ignore[assignment]  # int64 (0..3)


# Per field: integer-valued, lowest allowed value, whether that value is excluded.
_RANGES = {
    "count": (True, 1, False),
    "instances": (True, 1, False),
    "throughput": (False, 0, True),
    "latency": (True, 0, False),
    "power_uw": (False, 0, False),
    "frequency_mhz": (False, 0, True),
    "dram_bandwidth_gbps": (False, 0, True),
    "dram_pj_per_byte": (False, 0, False),
    "array_rows": (True, 1, False),
    "array_cols": (True, 1, False),
    "dataflow": (True, 0, False),
}
# Per-module fields among ConfigArrays' (the others are per configuration).
_TWO_D = (True,) * 5 + (False,) * 3 + (True,) * 3


def _array(name: str, values: object, shape: tuple[int, ...], integer: bool) -> np.ndarray:
    """`values` as a contiguous int64 (integer) or float64 array of `shape`."""
    arr = np.asarray(values)
    if arr.shape != shape:
        raise KernelInputError(f"{name} must have shape {shape}, got {arr.shape}", name)
    if arr.size and arr.dtype.kind not in ("iu" if integer else "iuf"):
        kind = "integers" if integer else "numbers"
        raise KernelInputError(f"{name} must hold {kind}, got dtype {arr.dtype}", name)
    return np.ascontiguousarray(arr, dtype=np.int64 if integer else np.float64)


def _check_range(name: str, arr: np.ndarray, low: float, strict: bool = False) -> None:
    """Raise unless every value is finite and >= low (> low when strict)."""
    if arr.size == 0:
        return
    lo, hi = arr.min(), arr.max()
    if not (np.isfinite(lo) and np.isfinite(hi)):
        bad = hi if np.isfinite(lo) else lo
        raise KernelInputError(f"{name} must be finite, got {bad}", name.split()[0])
    if lo < low or (strict and lo == low):
        sign = ">" if strict else ">="
        raise KernelInputError(f"{name} must be {sign} {low}, got {lo}", name.split()[0])


@njit(cache=True)
def _largest_per_module(module: np.ndarray, work: np.ndarray, n_modules: int) -> np.ndarray:
    # Index of the op with the most work on each module (-1 for a module without ops).
    best = np.full(n_modules, -1, np.int64)
    for op in range(module.shape[0]):
        m = module[op]
        if best[m] < 0 or work[op] > work[best[m]]:
            best[m] = op
    return best


@njit(cache=True)
def _scan_chunk(
    cfg: ConfigArrays,
    work_max: np.ndarray,
    bytes_max: np.ndarray,
    limit: float,
    c_begin: int,
    c_end: int,
    count_seen: np.ndarray,
) -> tuple[int, int, int]:
    # Checks configurations c_begin..c_end-1, raising count_seen to each module's
    # largest count. Returns the first configuration holding an invalid value
    # (c_end if none) and the first configuration and module where an op's duration
    # may reach `limit` cycles (c_end, -1 if none).
    n_modules = cfg.count.shape[1]
    long_c, long_m = c_end, -1
    for c in range(c_begin, c_end):
        f = cfg.frequency_mhz[c]
        bw = cfg.dram_bandwidth_gbps[c]
        pj = cfg.dram_pj_per_byte[c]
        # Every test is false for NaN.
        ok = f > 0 and f < math.inf and bw > 0 and bw < math.inf
        ok = ok and pj >= 0 and pj < math.inf
        cycles_per_byte = f * 1e6 / (bw * 1e9) if ok else 0.0
        for m in range(n_modules):
            count = cfg.count[c, m]
            k = cfg.instances[c, m]
            thr = cfg.throughput[c, m]
            power = cfg.power_uw[c, m]
            ok = ok and count >= 1 and count <= MAX_COUNT and k >= 1 and k <= count
            ok = ok and cfg.latency[c, m] >= 0
            ok = ok and thr > 0 and thr < math.inf and power >= 0 and power < math.inf
            rows, cols = cfg.array_rows[c, m], cfg.array_cols[c, m]
            ok = ok and rows >= 1 and rows <= MAX_COUNT and cols >= 1 and cols <= MAX_COUNT
            ok = ok and cfg.dataflow[c, m] >= 0 and cfg.dataflow[c, m] <= IS
            if not ok:
                return c, long_c, long_m
            count_seen[m] = max(count_seen[m], count)
            worst = cfg.latency[c, m] + work_max[m] / thr + bytes_max[m] * cycles_per_byte
            # A module without ops (work_max -1) cannot be the culprit.
            if work_max[m] >= 0 and not worst < limit and long_m < 0:
                long_c, long_m = c, m
    return c_end, long_c, long_m


@njit(cache=True, parallel=True)
def _scan_parallel(
    cfg: ConfigArrays,
    work_max: np.ndarray,
    bytes_max: np.ndarray,
    limit: float,
    n_chunks: int,
) -> tuple[int, int, int, np.ndarray]:
    # One parallel pass instead of a dozen NumPy reductions over millions of rows.
    n_configs, n_modules = cfg.count.shape
    first_bad = np.full(n_chunks, n_configs, np.int64)
    first_long = np.full(n_chunks, n_configs, np.int64)
    long_module = np.full(n_chunks, -1, np.int64)
    # Per-chunk rows: chunks writing to adjacent shared slots in the inner loop
    # would make the threads fight over cache lines, so each fills a local first.
    chunk_count = np.zeros((n_chunks, n_modules), np.int64)
    for chunk in prange(n_chunks):
        begin = chunk * n_configs // n_chunks
        end = (chunk + 1) * n_configs // n_chunks
        seen = np.zeros(n_modules, np.int64)
        bad, long_c, long_m = _scan_chunk(cfg, work_max, bytes_max, limit, begin, end, seen)
        if bad < end:
            first_bad[chunk] = bad
        if long_m >= 0:
            first_long[chunk] = long_c
            long_module[chunk] = long_m
        chunk_count[chunk] = seen
    count_max = np.zeros(n_modules, np.int64)
    bad, long_c, long_m = n_configs, n_configs, -1
    for chunk in range(n_chunks):
        for m in range(n_modules):
            count_max[m] = max(count_max[m], chunk_count[chunk, m])
        bad = min(bad, first_bad[chunk])
        if first_long[chunk] < long_c:
            long_c, long_m = first_long[chunk], long_module[chunk]
    return bad, long_c, long_m, count_max


def _name_bad_value(cfg: ConfigArrays, c: int) -> None:
    """Raise naming the first invalid value of configuration `c` (known to hold one)."""
    for name, arr in zip(ConfigArrays._fields, cfg, strict=True):
        _, low, strict = _RANGES[name]
        for m, value in enumerate(arr[c].reshape(-1).tolist()):
            two_d = arr.ndim == 2
            where = f"module {m} of configuration {c}" if two_d else f"configuration {c}"
            problem = None
            if not math.isfinite(value):
                problem = f"must be finite, got {value}"
            elif value < low or (strict and value == low):
                problem = f"must be {'>' if strict else '>='} {low}, got {value}"
            elif name in ("count", "array_rows", "array_cols") and value > MAX_COUNT:
                problem = f"must be <= {MAX_COUNT}, got {value}"
            elif name == "instances" and value > cfg.count[c, m]:
                problem = f"must be <= count ({cfg.count[c, m]}), got {value}"
            elif name == "dataflow" and value > IS:
                problem = f"must be <= {IS}, got {value}"
            if problem:
                raise KernelInputError(
                    f"{name} of {where} {problem}",
                    name,
                    module=m if two_d else None,
                    configuration=c,
                )
    raise AssertionError(f"configuration {c} was reported invalid but every value is valid")


def checked_inputs(
    ops: OpArrays, configs: ConfigArrays, n_chunks: int = 1
) -> tuple[OpArrays, ConfigArrays, np.ndarray]:
    """Validated kernel arrays and each module's largest instance count.

    With `n_chunks` > 1 the configurations are checked in that many parallel chunks.

    Raises `KernelInputError` naming the field and configuration, or
    the op and module whose duration could leave the exact range of 2**53 cycles.

    >>> ops = OpArrays(module=[0], work=[1e300], bytes_total=[0.0])
    >>> cfg = ConfigArrays([[1]], [[1]], [[1.0]], [[0]], [[0.0]], [1.0], [1.0], [0.0])
    >>> try:
    ...     checked_inputs(ops, cfg)
    ... except KernelInputError as e:
    ...     print(e.culprit, "|", str(e).split(",")[0])
    op 0 | op 0 on module 0 of configuration 0 may take up to 1e+300 cycles
    """
    module = int_vector("module", ops.module)
    n = module.size
    work = _array("work", ops.work, (n,), integer=False)
    bytes_total = _array("bytes_total", ops.bytes_total, (n,), integer=False)
    _check_range("work", work, 0)
    _check_range("bytes_total", bytes_total, 0)
    count = np.asarray(configs.count)
    if count.ndim != 2 or count.shape[1] < 1:
        raise KernelInputError(
            f"count must have shape (C, M) with M >= 1, got {count.shape}", "count"
        )
    n_configs, n_modules = count.shape
    if n and (module.min() < 0 or module.max() >= n_modules):
        raise KernelInputError(f"module names a module outside 0..{n_modules - 1}", "module")
    no_array = {
        name: np.full(count.shape, 0 if name == "dataflow" else 1, np.int64)
        for name in ("array_rows", "array_cols", "dataflow")
        if getattr(configs, name) is None
    }
    cfg = ConfigArrays(
        *(
            _array(name, values, count.shape if values_2d else (n_configs,), _RANGES[name][0])
            for name, values, values_2d in zip(
                ConfigArrays._fields, configs._replace(**no_array), _TWO_D, strict=True
            )
        )
    )
    gemm_ptr, gemms = _checked_gemms(ops, n)
    tiles = _checked_tiles(ops.gemm_tiles, gemms.shape[0])
    work_op = _largest_per_module(module, work, n_modules)
    bytes_op = _largest_per_module(module, bytes_total, n_modules)
    # -1 marks a module without ops; indexing with -1 is harmless as it is masked.
    work_max = np.where(work_op >= 0, work[work_op] if n else 0.0, -1.0)
    bytes_max = np.where(bytes_op >= 0, bytes_total[bytes_op] if n else 0.0, 0.0)
    # A sum of n durations must stay exact, so each may use 1/n of the range.
    limit = MAX_CYCLES / max(n, 1)
    if n_chunks > 1:
        bad, long_c, long_m, count_max = _scan_parallel(cfg, work_max, bytes_max, limit, n_chunks)
    else:
        count_max = np.zeros(n_modules, np.int64)
        bad, long_c, long_m = _scan_chunk(cfg, work_max, bytes_max, limit, 0, n_configs, count_max)
    if bad < n_configs:
        _name_bad_value(cfg, bad)
    if long_m >= 0:
        c, m = long_c, long_m
        bytes_per_cycle = cfg.dram_bandwidth_gbps[c] * 1e9 / (cfg.frequency_mhz[c] * 1e6)
        with np.errstate(over="ignore"):
            compute = work_max[m] / cfg.throughput[c, m]
            memory = bytes_max[m] / bytes_per_cycle
        op = int(work_op[m] if compute >= memory else bytes_op[m])
        worst = cfg.latency[c, m] + compute + memory
        raise KernelInputError(
            f"op {op} on module {m} of configuration {c} may take up to {worst:.3g} cycles, "
            f"beyond the exact range ({MAX_CYCLES:.3g} cycles over {max(n, 1)} ops)",
            f"op {op}",
            op=op,
            module=int(m),
            configuration=int(c),
        )
    _check_array_durations(cfg, module, bytes_total, gemm_ptr, gemms, tiles, limit)
    l2_cycles = _checked_l2_cycles(ops.l2_cycles, n, limit)
    return OpArrays(module, work, bytes_total, gemm_ptr, gemms, tiles, l2_cycles), cfg, count_max


def _checked_l2_cycles(values: np.ndarray | None, n: int, limit: float) -> np.ndarray:
    """The ops' L2 floors as a contiguous int64 array (zeros if None), validated: an op
    held to `limit` cycles or more could leave the exact range like a long duration."""
    if values is None:
        return np.zeros(n, np.int64)
    arr = _array("l2_cycles", values, (n,), integer=True)
    _check_range("l2_cycles", arr, 0)
    if n and not arr.max() < limit:
        op = int(arr.argmax())
        raise KernelInputError(
            f"op {op} has l2_cycles {int(arr[op])}, beyond the exact range "
            f"({MAX_CYCLES:.3g} cycles over {n} ops)",
            f"op {op}",
            op=op,
        )
    return arr


def _checked_gemms(ops: OpArrays, n: int) -> tuple[np.ndarray, np.ndarray]:
    """The ops' GEMM lists as contiguous int64 arrays (empty lists if None), validated."""
    if ops.gemm_ptr is None and ops.gemms is None:
        return np.zeros(n + 1, np.int64), np.zeros((0, 3), np.int64)
    if ops.gemm_ptr is None or ops.gemms is None:
        raise KernelInputError("gemm_ptr and gemms must be given together", "gemm_ptr")
    ptr = _array("gemm_ptr", ops.gemm_ptr, (n + 1,), integer=True)
    shape = np.shape(ops.gemms)
    gemms = _array("gemms", ops.gemms, (shape[0] if shape else -1, 3), integer=True)
    if ptr[0] != 0 or ptr[-1] != gemms.shape[0] or (np.diff(ptr) < 0).any():
        raise KernelInputError(
            f"gemm_ptr must rise from 0 to the {gemms.shape[0]} GEMMs, got {ptr.tolist()[:8]}",
            "gemm_ptr",
        )
    _check_range("gemms", gemms, 1)
    # Exact MAC counts keep the cycle arithmetic inside int64.
    macs = gemms.astype(np.float64).prod(axis=1)
    if macs.size and not macs.max() < MAX_CYCLES:
        g = int(macs.argmax())
        raise KernelInputError(
            f"gemms[{g}] = {gemms[g].tolist()} has {macs[g]:.3g} MACs, beyond the exact "
            f"range ({MAX_CYCLES:.3g})",
            "gemms",
        )
    return ptr, gemms


def _checked_tiles(tiles: object, n_gemms: int) -> np.ndarray:
    """The GEMMs' sample tiles as a contiguous int64 array (zeros if None), validated."""
    if tiles is None:
        return np.zeros(n_gemms, np.int64)
    arr = _array("gemm_tiles", tiles, (n_gemms,), integer=True)
    _check_range("gemm_tiles", arr, 0)
    return arr


@njit(cache=True)
def _first_long_array_op(
    cfg: ConfigArrays,
    module: np.ndarray,
    bytes_total: np.ndarray,
    gemm_ptr: np.ndarray,
    gemms: np.ndarray,
    tiles: np.ndarray,
    limit: float,
) -> tuple[int, int, float]:
    # The first (configuration, op) whose array-timed duration may reach `limit`
    # cycles, and that bound ((-1, -1, 0) if none): on one array (k = 1), the most.
    for c in range(cfg.count.shape[0]):
        cycles_per_byte = cfg.frequency_mhz[c] * 1e6 / (cfg.dram_bandwidth_gbps[c] * 1e9)
        for op in range(module.shape[0]):
            m = module[op]
            df = cfg.dataflow[c, m]
            if df == NONE or gemm_ptr[op + 1] == gemm_ptr[op]:
                continue
            rows, cols = cfg.array_rows[c, m], cfg.array_cols[c, m]
            # int(1), not 1: a literal argument would compile a second op_cycles.
            k = int(1)  # noqa: RUF046, UP018  (typed int64, not Literal[int](1))
            cycles = op_cycles(gemms, gemm_ptr[op], gemm_ptr[op + 1], rows, cols, df, k, tiles)
            worst = (
                cfg.latency[c, m]
                + cycles * (2.0 * rows * cols / cfg.throughput[c, m])
                + bytes_total[op] * cycles_per_byte
            )
            if not worst < limit:
                return c, op, worst
    return -1, -1, 0.0


def _check_array_durations(
    cfg: ConfigArrays,
    module: np.ndarray,
    bytes_total: np.ndarray,
    gemm_ptr: np.ndarray,
    gemms: np.ndarray,
    tiles: np.ndarray,
    limit: float,
) -> None:
    """Raise naming the first op whose array-timed duration may leave the exact range."""
    if gemms.shape[0] == 0 or not (cfg.dataflow != NONE).any():
        return
    c, op, worst = _first_long_array_op(cfg, module, bytes_total, gemm_ptr, gemms, tiles, limit)
    if op < 0:
        return
    m = int(module[op])
    raise KernelInputError(
        f"op {op} on module {m} of configuration {c} may take up to {worst:.3g} cycles, "
        f"beyond the exact range ({MAX_CYCLES:.3g} cycles over {module.size} ops)",
        f"op {op}",
        op=op,
        module=m,
        configuration=int(c),
    )

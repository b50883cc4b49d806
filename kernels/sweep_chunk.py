"""One chunk of a hardware grid, evaluated in a single parallel pass.

A sweep varies fields of one accelerator over a Cartesian grid (`Grid`: the
base accelerator and the axes). `evaluate_chunk` takes grid rows
``start..start+size-1`` (row-major, last axis fastest) and, per configuration:
decodes its axis values from the row number, applies them to the base
accelerator (with the clock scaling of module power and the module and memory
efficiencies of `nerframe.scheduling.Configurations`), list-schedules the
frame's three phases with the scheduler kernel (`nerframe.kernels.schedule`),
derives the frame figures (`nerframe.kernels.frames.frame`), area and peak
FLOP rate, and checks the constraints; every result goes straight into
preallocated columns. No per-configuration array is ever built for the whole
chunk, so the pass costs little more than the scheduling itself.

Inputs are validated by the caller (`nerframe.sweeps`): the kernel assumes
every configuration of the grid is schedulable.

>>> import numpy as np
>>> from nerframe.kernels.dag import dag
>>> from nerframe.kernels.schedule_inputs import OpArrays
>>> from nerframe.kernels.hardware import DTYPES, Hardware
>>> base = {"module_count": 1, "module_throughput": 10.0, "module_latency": 2,
...         "module_power_uw": 1000.0, "module_area_um2": 1.0, "frequency_mhz": 1000.0,
...         "dram_bandwidth_gbps": 100.0, "module_power_reference_mhz": np.nan,
...         "module_efficiency": 1.0, "memory_efficiency": 1.0, "module_counts_flops": True,
...         "module_array_rows": 1, "module_array_cols": 1}  # the other fields 0
>>> hardware = Hardware(**{name: np.full((1, 1) if name.startswith("module_") else 1,
...                                      base.get(name, 0), dtype)
...                        for name, dtype in DTYPES.items()})
>>> grid = Grid(hardware=hardware, one_kernel=False, size=np.array([2]),
...             field=np.array([COUNT]), module=np.array([0]), ints=np.array([[1, 2]]),
...             floats=np.zeros((1, 2)))
>>> chain = (dag(0, [], []), dag(2, [0], [1]), dag(0, [], []))
>>> no_gemms = np.zeros((0, 3), np.int64)
>>> ops = (OpArrays(np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(1, np.int64),
...                 no_gemms),
...        OpArrays(np.zeros(2, np.int64), np.array([100.0, 40.0]), np.zeros(2),
...                 np.zeros(3, np.int64), no_gemms),
...        OpArrays(np.zeros(0, np.int64), np.zeros(0), np.zeros(0), np.zeros(1, np.int64),
...                 no_gemms))
>>> ints, floats, ok = out = result_matrices(2, 1)
>>> longest = evaluate_chunk(0, grid, chain, ops, np.zeros((2, 3)), 1, True, True,
...     np.zeros(2, np.int64), np.zeros(0, np.int64), np.zeros(0), np.zeros(0), out)
>>> ints[INT_ROWS.index("makespan_cycles")].tolist()  # 2+10+2+4 cycles, then 2+5+2+2
[18, 11]
"""

from __future__ import annotations

import math
import threading
from collections.abc import Callable
from typing import Any, NamedTuple

import numpy as np
from numba import get_num_threads, njit, prange, set_num_threads, types
from numba.core.imputils import impl_ret_borrowed
from numba.core.typing.templates import Signature
from numba.extending import intrinsic, overload

from nerframe.kernels.dag import Dag
from nerframe.kernels.frames import frame
from nerframe.kernels.hardware import Hardware
from nerframe.kernels.schedule import ScheduleResult, _schedule_chunk
from nerframe.kernels.schedule_inputs import ConfigArrays, OpArrays
from nerframe.kernels.sweep import meets

# Fields an axis may set: codes of `Grid.field`.
FREQUENCY, BANDWIDTH, PJ_PER_BYTE, COUNT, THROUGHPUT, LATENCY, POWER, AREA = range(8)
# Rows of the int64 and float64 result matrices; axis k goes to row len(...) + k
# of the matrix of its kind.
INT_ROWS = (
    "config",
    "pre_cycles",
    "makespan_cycles",
    "interval_cycles",
    "post_cycles",
    "frame_cycles",
    "bottleneck",
)
FLOAT_ROWS = (
    "frame_time_s",
    "fps",
    "energy_per_frame_j",
    "avg_power_w",
    "dram_utilization",
    "area_mm2",
    "peak_tflops",
)
# Figures a constraint may bound, by code.
CONSTRAINED = (
    "fps",
    "frame_time_s",
    "energy_per_frame_j",
    "avg_power_w",
    "area_mm2",
    "dram_utilization",
    "peak_tflops",
    "frame_cycles",
)
# Configurations per block: a block's scratch stays in cache, and a chunk has
# enough blocks to keep every thread busy.
BLOCK = 1024


class Grid(NamedTuple):
    """A base accelerator of M modules and A axes over its fields.

    Axis a has ``size[a]`` values, in ``ints[a]`` (integer fields) or
    ``floats[a]`` (the others), and sets field ``field[a]`` (a code above) of
    module ``module[a]`` (ignored for accelerator fields).
    """

    hardware: Hardware  # the base accelerator (C = 1)
    one_kernel: bool  # a GPU: its peak is its fastest FLOP module's, not the sum
    size: np.ndarray  # int64[A]
    field: np.ndarray  # int64[A]
    module: np.ndarray  # int64[A]
    ints: np.ndarray  # int64[A, max size]
    floats: np.ndarray  # float64[A, max size]


@intrinsic
def claim(typingctx: Any, counter: types.Type) -> tuple[Signature, Callable[..., Any]] | None:
    """In numba code: atomically add 1 to ``counter[0]`` (an int64 array) and return
    the value before, so threads sharing the counter each get a distinct number.

    >>> from numba import njit
    >>> twice = njit(lambda counter: (claim(counter), claim(counter)))
    >>> counter = np.zeros(1, np.int64)
    >>> twice(counter), counter.tolist()
    ((0, 1), [2])
    """
    if not (isinstance(counter, types.Array) and counter.dtype == types.int64):
        return None

    def codegen(context: Any, builder: Any, signature: Signature, args: Any) -> Any:
        array = context.make_array(signature.args[0])(context, builder, args[0])
        one = context.get_constant(types.int64, 1)
        return builder.atomic_rmw("add", array.data, one, "monotonic")

    return types.int64(counter), codegen


def private(value: Any) -> Any:
    """In numba code: `value` with every array in it copied, tuples and named tuples
    field by field (scalars and None as they are), for one thread's own use.

    A numba function updates the reference count of each array it is passed, an
    atomic add on the array's one shared cache line; threads that pass the same
    arrays block by block wait on that line in turn, and the more threads, the
    longer. On private copies each thread counts on its own lines.

    >>> from numba import njit
    >>> copy = njit(lambda a: private((a, None, 2)))
    >>> a = np.arange(3)
    >>> b, none, two = copy(a)
    >>> b.tolist(), b is a, np.shares_memory(a, b), none, two
    ([0, 1, 2], False, False, None, 2)
    >>> a.setflags(write=False)  # a read-only array's copy is read-only too
    >>> copy(a)[0].flags.writeable
    False
    """
    raise NotImplementedError("private runs in numba code only")


@intrinsic
def _read_only(typingctx: Any, array: types.Type) -> tuple[Signature, Callable[..., Any]] | None:
    # The same array typed read-only (numba's copy() is writable): a copy keeps the
    # type of what it copies, so the kernels it is passed to compile once.
    if not isinstance(array, types.Array):
        return None

    def codegen(context: Any, builder: Any, signature: Signature, args: Any) -> Any:
        return impl_ret_borrowed(context, builder, signature.return_type, args[0])  # type: ignore[no-untyped-call]

    return array.copy(readonly=True)(array), codegen


@overload(private, strict=False)  # the implementations are lambdas, unannotated
def _private(value: types.Type) -> Callable[..., Any]:
    if isinstance(value, types.Array):
        if not value.mutable:
            return lambda value: _read_only(value.copy())  # type: ignore[call-arg]
        return lambda value: value.copy()
    if isinstance(value, types.BaseTuple):
        # One call per field, rebuilt as the same (named) tuple type.
        n = len(value)
        fields = "".join(f"private(value[{i}]), " for i in range(n))
        built = f"cls({fields})" if isinstance(value, types.BaseNamedTuple) else f"({fields})"
        scope: dict[str, Any] = {"private": private, "cls": getattr(value, "instance_class", None)}
        exec(f"def copy(value):\n    return {built}", scope)
        copy: Callable[..., Any] = scope["copy"]
        return copy
    return lambda value: value


@njit(cache=True)
def _block(
    begin: int,
    end: int,
    start: int,
    grid: Grid,
    pre_dag: Dag,
    batch_dag: Dag,
    post_dag: Dag,
    pre_ops: OpArrays,
    batch_ops: OpArrays,
    post_ops: OpArrays,
    nbytes: np.ndarray,
    batches: int,
    pipelined: bool,
    split: bool,
    inst_base: np.ndarray,
    constraint: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    ok: np.ndarray,
) -> float:
    # Evaluates chunk rows begin..end-1; returns the largest frame estimate. The
    # phases come one argument each: a tuple of arrays cannot enter a parallel loop.
    dags = (pre_dag, batch_dag, post_dag)
    ops = (pre_ops, batch_ops, post_ops)
    n = end - begin
    hw = grid.hardware  # the base configuration: row 0
    n_modules = hw.module_count.shape[1]
    n_axes = grid.size.shape[0]
    count = np.empty((n, n_modules), np.int64)
    instances = np.empty((n, n_modules), np.int64)
    throughput = np.empty((n, n_modules), np.float64)
    latency = np.empty((n, n_modules), np.int64)
    power = np.empty((n, n_modules), np.float64)
    frequency = np.empty(n, np.float64)
    bandwidth = np.empty(n, np.float64)
    raw_bandwidth = np.empty(n, np.float64)
    pj = np.empty(n, np.float64)
    array_rows = np.empty((n, n_modules), np.int64)
    array_cols = np.empty((n, n_modules), np.int64)
    dataflow = np.empty((n, n_modules), np.int64)
    leakage = np.empty(n, np.float64)
    area = np.empty(n_modules, np.float64)
    raw_throughput = np.empty(n_modules, np.float64)
    coord = np.empty(n_axes, np.int64)
    rest = start + begin
    for a in range(n_axes - 1, -1, -1):
        coord[a] = rest % grid.size[a]
        rest //= grid.size[a]
    n_int = len(INT_ROWS)
    n_float = len(FLOAT_ROWS)
    for i in range(n):
        c = begin + i
        for m in range(n_modules):
            count[i, m] = hw.module_count[0, m]
            latency[i, m] = hw.module_latency[0, m]
            raw_throughput[m] = hw.module_throughput[0, m]
            power[i, m] = hw.module_power_uw[0, m]
            area[m] = hw.module_area_um2[0, m]
            array_rows[i, m] = hw.module_array_rows[0, m]
            array_cols[i, m] = hw.module_array_cols[0, m]
            dataflow[i, m] = hw.module_dataflow[0, m]
        f, bw, e = hw.frequency_mhz[0], hw.dram_bandwidth_gbps[0], hw.dram_pj_per_byte[0]
        for a in range(n_axes):
            code, m, j = grid.field[a], grid.module[a], coord[a]
            if code == FREQUENCY:
                f = grid.floats[a, j]
            elif code == BANDWIDTH:
                bw = grid.floats[a, j]
            elif code == PJ_PER_BYTE:
                e = grid.floats[a, j]
            elif code == COUNT:
                count[i, m] = grid.ints[a, j]
            elif code == THROUGHPUT:
                raw_throughput[m] = grid.floats[a, j]
            elif code == LATENCY:
                latency[i, m] = grid.ints[a, j]
            elif code == POWER:
                power[i, m] = grid.floats[a, j]
            else:
                area[m] = grid.floats[a, j]
            if code in (COUNT, LATENCY):
                ints[n_int + a, c] = grid.ints[a, j]
            else:
                floats[n_float + a, c] = grid.floats[a, j]
        # The next row's coordinates: the last axis fastest.
        for a in range(n_axes - 1, -1, -1):
            coord[a] += 1
            if coord[a] < grid.size[a]:
                break
            coord[a] = 0
        module_area = 0.0
        # Leakage counts the areas that are published, in module order, as
        # nerframe.accelerator_model.leakage_w does: a GPU's SMs have none.
        known_area = 0.0
        flops_per_cycle = 0.0
        for m in range(n_modules):
            instances[i, m] = count[i, m] if split else 1
            throughput[i, m] = raw_throughput[m] * hw.module_efficiency[0, m]
            # Power scales with the clock where it was measured at one (a NaN
            # reference, whose ratio is NaN, means it does not).
            reference = hw.module_power_reference_mhz[0, m]
            if not math.isnan(reference):
                scale = f / reference
                power[i, m] = power[i, m] * (1.0 if math.isnan(scale) else scale)
            module_area += area[m] * count[i, m]
            part = area[m] * count[i, m]
            if not math.isnan(part):
                known_area += part
            if hw.module_counts_flops[0, m]:
                rate = raw_throughput[m] * count[i, m]
                flops_per_cycle = (
                    max(flops_per_cycle, rate) if grid.one_kernel else flops_per_cycle + rate
                )
        frequency[i] = f
        raw_bandwidth[i] = bw
        bandwidth[i] = bw * hw.memory_efficiency[0]
        pj[i] = e
        sram_area = hw.sram_area_um2[0]
        leakage[i] = (known_area + sram_area) / 1e6 * hw.leakage_uw_per_mm2[0] * 1e-6
        floats[5, c] = (module_area + sram_area) / 1e6
        # no FLOP-rated module: no FLOP peak (null, as the accelerators table has it)
        floats[6, c] = flops_per_cycle * f * 1e6 / 1e12 if flops_per_cycle > 0 else math.nan
    cfg = ConfigArrays(
        count,
        instances,
        throughput,
        latency,
        power,
        frequency,
        bandwidth,
        pj,
        array_rows,
        array_cols,
        dataflow,
    )
    makespan = np.zeros((3, n), np.int64)
    interval = np.zeros((3, n), np.int64)
    busiest = np.zeros((3, n), np.int64)
    energy = np.zeros((3, n), np.float64)
    per_op = np.zeros((0, 0), np.int64)
    for p in range(3):
        if ops[p].module.shape[0] == 0:
            continue  # a phase without ops: zeros, as the scheduler would give
        result = ScheduleResult(
            makespan[p],
            interval[p],
            busiest[p],
            energy[p],
            per_op,
            per_op,
            per_op,
            per_op,
            per_op,
            per_op,
            per_op,
            np.zeros((0, 0), np.float64),
        )
        # int(0) and bool(False), not literals: numba compiles a call with literal
        # arguments as a specialisation of its own, a second copy of the scheduler.
        zero, no = int(0), bool(False)  # noqa: RUF046, UP018  (typed int64 and bool)
        _schedule_chunk(zero, n, dags[p], ops[p], cfg, inst_base, no, result)
    longest = 0.0
    figures = np.empty(len(CONSTRAINED), np.float64)
    for i in range(n):
        c = begin + i
        r = frame(
            makespan=(makespan[0, i], makespan[1, i], makespan[2, i]),
            interval=interval[1, i],
            energy=(energy[0, i], energy[1, i], energy[2, i]),
            busiest=(busiest[0, i], busiest[1, i], busiest[2, i]),
            dram_bytes=(nbytes[0, 0], nbytes[0, 1], nbytes[0, 2]),
            sram_bytes=(nbytes[1, 0], nbytes[1, 1], nbytes[1, 2]),
            batches=batches,
            pipelined=pipelined,
            frequency_mhz=frequency[i],
            dram_bandwidth_gbps=raw_bandwidth[i],
            derated_gbps=bandwidth[i],
            sram_pj_per_byte=hw.sram_pj_per_byte[0],
            leakage_w=leakage[i],
        )
        ints[0, c] = start + c
        ints[1, c], ints[2, c] = r.pre_cycles, r.makespan_cycles
        ints[3, c], ints[4, c] = r.interval_cycles, r.post_cycles
        ints[5, c], ints[6, c] = r.frame_cycles, r.bottleneck
        floats[0, c], floats[1, c] = r.frame_time_s, r.fps
        floats[2, c], floats[3, c] = r.energy_per_frame_j, r.avg_power_w
        floats[4, c] = r.dram_utilization
        longest = max(longest, r.longest)
        feasible = True
        if constraint.shape[0]:  # in the order of CONSTRAINED
            figures[0], figures[1] = r.fps, r.frame_time_s
            figures[2], figures[3] = r.energy_per_frame_j, r.avg_power_w
            figures[4], figures[5], figures[6] = floats[5, c], r.dram_utilization, floats[6, c]
            figures[7] = float(r.frame_cycles)
            for k in range(constraint.shape[0]):
                if not meets(figures[constraint[k]], low[k], high[k]):
                    feasible = False
                    break
        ok[c] = feasible
    return longest


@njit(cache=True, nogil=True)
def _claim_blocks(
    start: int,
    grid: Grid,
    pre_dag: Dag,
    batch_dag: Dag,
    post_dag: Dag,
    pre_ops: OpArrays,
    batch_ops: OpArrays,
    post_ops: OpArrays,
    nbytes: np.ndarray,
    batches: int,
    pipelined: bool,
    split: bool,
    inst_base: np.ndarray,
    constraint: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    ok: np.ndarray,
    longest: np.ndarray,
    claimed: np.ndarray,
) -> None:
    # Claims the next unclaimed block (``claimed`` counts them) until none is left,
    # rather than taking a fixed share: a thread that shares its core (with another
    # process) then computes fewer blocks instead of keeping the others waiting at
    # the end, and threads can join late (a store's writer thread, done writing).
    size = ok.shape[0]
    while True:
        b: int = claim(claimed)  # type: ignore[call-arg]  # typed by numba
        if b >= longest.shape[0]:
            break
        longest[b] = _block(
            b * BLOCK,
            min(size, (b + 1) * BLOCK),
            start,
            grid,
            pre_dag,
            batch_dag,
            post_dag,
            pre_ops,
            batch_ops,
            post_ops,
            nbytes,
            batches,
            pipelined,
            split,
            inst_base,
            constraint,
            low,
            high,
            ints,
            floats,
            ok,
        )


@njit(cache=True, parallel=True)
def _blocks(
    start: int,
    hardware: Hardware,
    one_kernel: bool,
    size: np.ndarray,
    field: np.ndarray,
    module: np.ndarray,
    axis_ints: np.ndarray,
    axis_floats: np.ndarray,
    pre_dag: Dag,
    batch_dag: Dag,
    post_dag: Dag,
    pre_ops: OpArrays,
    batch_ops: OpArrays,
    post_ops: OpArrays,
    nbytes: np.ndarray,
    batches: int,
    pipelined: bool,
    split: bool,
    inst_base: np.ndarray,
    constraint: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    ok: np.ndarray,
    longest: np.ndarray,
    claimed: np.ndarray,
    threads: int,
) -> None:
    # The grid comes field by field (`_own_blocks`' arguments): a record inside a
    # record cannot enter a parallel loop.
    for _ in prange(threads):
        _own_blocks(start, hardware, one_kernel, size, field, module, axis_ints, axis_floats,
                    pre_dag, batch_dag, post_dag, pre_ops, batch_ops, post_ops, nbytes,
                    batches, pipelined, split, inst_base, constraint, low, high, ints, floats,
                    ok, longest, claimed)  # fmt: skip


@njit(cache=True, nogil=True)
def _own_blocks(
    start: int,
    hardware: Hardware,
    one_kernel: bool,
    size: np.ndarray,
    field: np.ndarray,
    module: np.ndarray,
    axis_ints: np.ndarray,
    axis_floats: np.ndarray,
    pre_dag: Dag,
    batch_dag: Dag,
    post_dag: Dag,
    pre_ops: OpArrays,
    batch_ops: OpArrays,
    post_ops: OpArrays,
    nbytes: np.ndarray,
    batches: int,
    pipelined: bool,
    split: bool,
    inst_base: np.ndarray,
    constraint: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    ints: np.ndarray,
    floats: np.ndarray,
    ok: np.ndarray,
    longest: np.ndarray,
    claimed: np.ndarray,
) -> None:
    # One thread's blocks, on its own copies of the inputs (see `private`); the
    # outputs are shared, and each block writes its own columns of them.
    own = private((hardware, size, field, module, axis_ints, axis_floats))
    grid = Grid(hardware=own[0], one_kernel=one_kernel, size=own[1], field=own[2],
                module=own[3], ints=own[4], floats=own[5])  # fmt: skip
    dags = private((pre_dag, batch_dag, post_dag))
    ops = private((pre_ops, batch_ops, post_ops))
    inputs = private((nbytes, inst_base, constraint, low, high))
    _claim_blocks(start, grid, dags[0], dags[1], dags[2], ops[0], ops[1], ops[2], inputs[0],
                  batches, pipelined, split, inputs[1], inputs[2], inputs[3], inputs[4], ints,
                  floats, ok, longest, claimed)  # fmt: skip


def result_matrices(size: int, n_axes: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Empty result matrices of `evaluate_chunk` for `size` rows and `n_axes` axes."""
    return (
        np.empty((len(INT_ROWS) + n_axes, size), np.int64),
        np.empty((len(FLOAT_ROWS) + n_axes, size), np.float64),
        np.empty(size, np.bool_),
    )


def evaluate_chunk(
    start: int,
    grid: Grid,
    dags: tuple[Dag, Dag, Dag],
    ops: tuple[OpArrays, OpArrays, OpArrays],
    nbytes: np.ndarray,
    batches: int,
    pipelined: bool,
    split: bool,
    inst_base: np.ndarray,
    constraint: np.ndarray,
    low: np.ndarray,
    high: np.ndarray,
    out: tuple[np.ndarray, np.ndarray, np.ndarray],
    helper: Callable[[Callable[[], None]], None] | None = None,
) -> float:
    """Evaluate grid rows ``start..start+size-1`` into `out` (`result_matrices` of
    `size` rows) on the graph whose phases (pre, batch, post) are `dags` and `ops`,
    with `nbytes` DRAM (row 0) and SRAM (row 1) bytes per phase.

    Every op takes all instances of its module when `split`, else one
    (`inst_base`: offsets of each module's instances, as the scheduler kernel
    takes them; zeros suffice when `split`). A row is feasible when figure
    ``CONSTRAINED[constraint[k]]`` lies in [low[k], high[k]] for every k.

    `out` receives int64 rows (`INT_ROWS`, then the integer axes' values), float64
    rows (`FLOAT_ROWS`, then the other axes' values; an axis's row in the other
    matrix is left unset) and the feasibility mask. Returns the largest float
    estimate of a frame's cycles (at least 2**62 means an int64 overflow: the
    caller raises).

    `helper`, if given, is handed a function that computes blocks of the chunk
    too, to run on another thread when that thread is free (one fewer of numba's
    threads computes them then): a store's writer thread, done writing a part,
    computes blocks instead of competing with the kernel for the cores.
    """
    ints, floats, ok = out
    size = ok.shape[0]
    longest = np.zeros((size + BLOCK - 1) // BLOCK, np.float64)
    if longest.size == 1:  # one block: waking the thread pool would cost more
        return float(_block(0, size, start, grid, *dags, *ops, nbytes, batches, pipelined,
                            split, inst_base, constraint, low, high, ints, floats, ok))  # fmt: skip
    args = (start, *grid, *dags, *ops, nbytes, batches, pipelined, split, inst_base,
            constraint, low, high, ints, floats, ok, longest, np.zeros(1, np.int64))  # fmt: skip
    if helper is None:
        _blocks(*args, get_num_threads())
    else:
        joined = _Join(args)
        helper(joined.work)
        # One thread fewer in the team, not only in the loop: a team member without a
        # block waits for the others at the region's end, and an OpenMP runtime's wait
        # spins on the core the helper needs (torch's libgomp, loaded before numba's,
        # spins long enough to slow a store sweep by half).
        threads = get_num_threads()
        fewer = max(threads - 1, 1)
        set_num_threads(fewer)
        try:
            _blocks(*args, fewer)
        finally:
            set_num_threads(threads)
        joined.wait()
    return float(longest.max(initial=0.0))


class _Join:
    """Blocks of one chunk claimed by a helper thread too, if it comes in time."""

    def __init__(self, args: tuple[Any, ...]) -> None:
        self._args: tuple[Any, ...] | None = args
        self._working = threading.Condition()
        self._busy = False

    def work(self) -> None:
        """Compute unclaimed blocks (none once `wait` has returned)."""
        with self._working:
            args, self._busy = self._args, self._args is not None
        if args is None:
            return
        _own_blocks(*args)
        with self._working:
            self._busy = False
            self._working.notify()

    def wait(self) -> None:
        """Return once the helper computes no block: it never started or it finished."""
        with self._working:
            self._args = None
            self._working.wait_for(lambda: not self._busy)

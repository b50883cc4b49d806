"""Scheduling a graph on an accelerator: per-op schedule and per-frame PPA.

Maps every op to a module and splits the graph into the phases of a frame
(`nerframe.graphs.phases`): frame-scoped ops before the batches (``pre``), the
batch-scoped ops (``batch``, run once per batch of B rays) and frame-scoped ops
after the batches (``post``, e.g. a training step's per-Gaussian update). Each
phase is list-scheduled with the numba kernel (`nerframe.kernels.schedule`) and
the phases run one after another:

    frame_cycles = pre + stream + post, where stream =
        makespan + (batches - 1) * interval   when batches stream through the
                                              modules (``pipelined``),
        batches * makespan                    otherwise;
    interval = max(busiest module's busy cycles per instance,
                   ceil(batch DRAM bytes / derated DRAM bytes per cycle));
    energy per frame = pre + batches * batch + post
                       + SRAM bytes per frame * SRAM pJ/byte + leakage W * frame time.

An op's energy is its module's power over its duration, its DRAM bytes times the
DRAM energy per byte and its SRAM bytes (every operand is read from or written to
an on-chip buffer, DRAM traffic included; on a systolic array, once per fold:
`array_traffic`) times the SRAM access energy per byte;
leakage (`nerframe.Accelerator.leakage_w`) is drawn for the whole frame.

``makespan`` and ``interval`` are those of one batch: a batch starts no more often
than the DRAM moves one batch's bytes, so a pipelined stream moves at most the
bandwidth (``bottleneck_module`` is ``"dram"`` where the DRAM sets the interval:
`DRAM_NAME`, a name no module may take). A graph with only batch
ops is exactly ``spec/hardware.md``'s frame model. For a training pipeline a
"frame" is one training iteration over ``frame_pixels`` rays, so fps reads as
iterations per second.

>>> import nerframe
>>> s = nerframe.schedule(nerframe.pipeline("neurex"), "neurex")
>>> s.summary["status"].item(), s.schedule.height
('ok', 5)
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass
from typing import NamedTuple, get_args

import numpy as np
import polars as pl

from nerframe import ppa
from nerframe._typing import Parallelism
from nerframe.accelerator_model import DATAFLOWS, Accelerator, Module, leakage_w
from nerframe.builtin_pipelines import pipeline
from nerframe.costing import costs, frame_total
from nerframe.errors import InvalidInputError, check_flag
from nerframe.gpu import kernel_bytes, sm_modules
from nerframe.graphs import Graph, dag_of, phases
from nerframe.hardware import accelerator
from nerframe.kernels.dag import Dag, dag
from nerframe.kernels.faults import KernelInputError
from nerframe.kernels.frames import DRAM, FLOAT_FIGURES, frames
from nerframe.kernels.hardware import DTYPES, Hardware
from nerframe.kernels.schedule import ConfigArrays, OpArrays, ScheduleResult, schedule_configs
from nerframe.kernels.systolic import mlp_gemms, op_traffic
from nerframe.mapping import gathered_bytes, l2_bytes, map_operators, table_read_bytes, work
from nerframe.schemas import BOUND, MODULE_BUSY, SCHEDULE, SUMMARY

PARALLELISM: tuple[Parallelism, ...] = get_args(Parallelism)
DRAM_NAME = "dram"
"""``bottleneck_module`` where the DRAM sets the batch interval; no module may take it."""


@dataclass(frozen=True)
class Schedule:
    """One graph on one accelerator: `schedule` (one row per op) and `summary` (one row).

    Its repr is one line: graph, accelerator, op count and fps.

    >>> s = schedule("neurex", "neurex")
    >>> s.schedule.select("op_type", "module").rows()[:2]
    [('UniformSampler', 'interpolation_compute_unit'), ('HashEncoding', 'index_generation_unit')]
    >>> s.summary["batches"].item()
    157
    """

    schedule: pl.DataFrame
    summary: pl.DataFrame

    def __repr__(self) -> str:
        row = self.summary.row(0, named=True)
        return (
            f"Schedule(graph={row['graph']!r}, accelerator={row['accelerator']!r}, "
            f"ops={self.schedule.height}, fps={_fps(row['fps'])})"
        )


# mypy sees nerframe.kernels (mapped from kernels/ by package-dir) as Any.
class Configurations(Hardware):  # type: ignore[misc]
    """C variants of one accelerator: the kernels' `Hardware` record (module arrays
    of shape (C, M) in the accelerator's module order, the others (C,)), with the
    figures derived from it. `Configurations.of(accel)` is the accelerator itself
    (C = 1). ``module_power_reference_mhz`` is NaN for a module whose power does
    not depend on the clock, else the clock its ``power_uw`` was measured at.

    >>> import nerframe
    >>> c = Configurations.of(nerframe.accelerator("icarus"))
    >>> c.frequency_mhz[0] = 200.0  # half the clock the ICARUS power was measured at
    >>> float(c.module_power_uw[0, 1]), float(c.power_uw[0, 1])
    (223886.6, 111943.3)
    """

    __slots__ = ()

    @classmethod
    def of(cls, accel: Accelerator) -> Configurations:
        """The accelerator as a batch of one configuration."""
        modules = accel.modules
        for m in modules:
            for field in ("count", "latency_cycles"):
                value = getattr(m, field)
                if not -(2**62) < value < 2**62:
                    raise InvalidInputError(
                        f"{accel.name}: module {m.name}: {field} {value} is out of range",
                        field,
                    )
        reference = [m.power_reference_mhz for m in modules]
        fields = dict(
            module_count=np.array([[m.count for m in modules]], np.int64),
            module_throughput=np.array([[m.throughput_ops_per_cycle for m in modules]]),
            module_latency=np.array([[m.latency_cycles for m in modules]], np.int64),
            module_power_uw=np.array([[m.power_uw for m in modules]]),
            module_area_um2=np.array([[m.area_um2 for m in modules]]),
            frequency_mhz=np.array([accel.frequency_mhz]),
            dram_bandwidth_gbps=np.array([accel.dram_bandwidth_gbps]),
            dram_pj_per_byte=np.array([accel.dram_pj_per_byte]),
            module_power_reference_mhz=np.array([[np.nan if r is None else r for r in reference]]),
            module_efficiency=np.array([[m.efficiency for m in modules]]),
            memory_efficiency=np.array([accel.memory_efficiency]),
            module_counts_flops=np.array([[m.unit == "flop" for m in modules]]),
            # 1 x 1 and code 0 where a module is not a systolic array
            module_array_rows=np.array([[m.array[0] if m.array else 1 for m in modules]]),
            module_array_cols=np.array([[m.array[1] if m.array else 1 for m in modules]]),
            module_dataflow=np.array([[_dataflow_code(m) for m in modules]], np.int64),
            sram_pj_per_byte=np.array([accel.sram_energy_pj_per_byte]),
            leakage_uw_per_mm2=np.array([accel.leakage_density_uw_per_mm2]),
            sram_area_um2=np.array([accel.sram_area_um2]),
        )
        # One dtype per field whatever the accelerator gives (an int clock, say).
        return cls(**{name: np.asarray(v, DTYPES[name]) for name, v in fields.items()})

    @property
    def bytes_per_cycle(self) -> np.ndarray:
        """Peak DRAM bytes deliverable per clock cycle, per configuration."""
        return np.asarray(ppa.bytes_per_cycle(self.dram_bandwidth_gbps, self.frequency_mhz))

    @property
    def peak_tflops(self) -> np.ndarray:
        """Peak FLOP rate of the modules rated in FLOPs, per configuration."""
        per_cycle = self.module_throughput * self.module_count * self.module_counts_flops
        return np.asarray(ppa.peak_tflops(per_cycle.sum(axis=1), self.frequency_mhz))

    @property
    def power_uw(self) -> np.ndarray:
        """Module power at each configuration's clock: dynamic power scales with it."""
        scale = self.frequency_mhz[:, None] / self.module_power_reference_mhz
        return np.asarray(self.module_power_uw * np.where(np.isnan(scale), 1.0, scale))

    @property
    def leakage_w(self) -> np.ndarray:
        """Leakage power of each configuration: the density times its module areas
        (where published) and SRAM area, summed as the sweep kernel sums them."""
        return np.array(
            [
                leakage_w(area, count, sram, density)
                for area, count, sram, density in zip(
                    self.module_area_um2.tolist(),
                    self.module_count.tolist(),
                    self.sram_area_um2.tolist(),
                    self.leakage_uw_per_mm2.tolist(),
                    strict=True,
                )
            ],
            np.float64,
        )

    @property
    def throughput(self) -> np.ndarray:
        """Module throughput that real work reaches: the peak times the module's efficiency."""
        return np.asarray(self.module_throughput * self.module_efficiency)

    @property
    def bandwidth_gbps(self) -> np.ndarray:
        """DRAM bandwidth that real work reaches: the peak times the memory efficiency."""
        return np.asarray(self.dram_bandwidth_gbps * self.memory_efficiency)


def reserved(accel: Accelerator) -> None:
    """Raise `InvalidInputError` when a module of `accel` is named `DRAM_NAME`, the
    ``bottleneck_module`` of a DRAM-bound batch stream (it would name two things).

    >>> import dataclasses, nerframe
    >>> a = nerframe.accelerator("neurex")
    >>> renamed = dataclasses.replace(a.modules[0], name="dram")
    >>> reserved(dataclasses.replace(a, modules=(renamed, *a.modules[1:])))
    Traceback (most recent call last):
    ...
    nerframe.errors.InvalidInputError: neurex: module name 'dram' is reserved for the DRAM ...
    """
    for m in accel.modules:
        if m.name == DRAM_NAME:
            raise InvalidInputError(
                f"{accel.name}: module name {DRAM_NAME!r} is reserved for the DRAM "
                "(bottleneck_module names it); rename the module",
                "modules",
            )


def bottleneck_names(modules: list[str], codes: np.ndarray) -> list[str]:
    """The ``bottleneck_module`` of each bottleneck code: a module index, or `DRAM`
    (the DRAM sets the batch interval) as `DRAM_NAME`.

    >>> bottleneck_names(["a", "b"], np.array([1, DRAM, 0]))
    ['b', 'dram', 'a']
    """
    return [DRAM_NAME if code == DRAM else modules[code] for code in codes.tolist()]


def _dataflow_code(module: Module) -> int:
    """The kernel's code of a module's dataflow (`nerframe.kernels.systolic`), 0 if none."""
    return 0 if module.dataflow is None else DATAFLOWS.index(module.dataflow) + 1


class _Part(NamedTuple):
    """The ops of one phase (indices into the graph) and their induced sub-DAG."""

    ops: np.ndarray
    dag: Dag


@dataclass(frozen=True)
class FrameRun:
    """Schedules of a frame's phases on C configurations: frame-scoped ops before
    the batches (`pre`), one batch (`batch`) and frame-scoped ops after them
    (`post`); a phase without ops is None. `bytes` holds each phase's DRAM bytes,
    `sram_bytes` its SRAM bytes."""

    pre: ScheduleResult | None
    batch: ScheduleResult | None
    post: ScheduleResult | None
    bytes: tuple[float, float, float]
    sram_bytes: tuple[float, float, float]

    @property
    def phases(self) -> tuple[ScheduleResult | None, ...]:
        """(pre, batch, post)."""
        return self.pre, self.batch, self.post


@dataclass(frozen=True)
class Mapped:
    """A graph mapped onto an accelerator's modules and split into its phases,
    ready for the kernel.

    ``work`` is each op's work in the unit of its module (FLOPs, samples,
    Gaussians…); ``dram_bytes`` its DRAM traffic: its bytes, or none on a module
    that keeps its data on chip, plus on a systolic array the re-reads and spills
    of operands beyond its buffers (`array_traffic`). ``gemm_ptr`` and ``gemms``
    list the GEMMs (M, K, N) of each MLP op on a systolic array (`mlp_gemm_lists`);
    other ops have none. ``sram_bytes`` is each op's SRAM traffic: all its bytes,
    on chip or off, except on a systolic array, whose buffers are read once per
    fold (`array_traffic`). ``l2_cycles`` is each op's floor on its memory cycles
    from a GPU's L2 read bandwidth: the bytes it requests through the L2
    (`nerframe.mapping.l2_bytes`) over ``l2_bytes_per_cycle``, rounded up; in
    core cycles, so the same on every configuration (the L2 runs at the core
    clock, as in Accel-Sim's tested GPU configurations); 0 without an L2 rate.
    """

    costs: pl.DataFrame
    module: np.ndarray
    parts: tuple[_Part | None, _Part | None, _Part | None]
    module_names: tuple[str, ...]
    work: np.ndarray
    dram_bytes: np.ndarray
    gemm_ptr: np.ndarray
    gemms: np.ndarray
    sram_bytes: np.ndarray
    gemm_tiles: np.ndarray
    l2_cycles: np.ndarray

    @classmethod
    def of(cls, graph: Graph, accel: Accelerator, table: pl.DataFrame | None = None) -> Mapped:
        """Costs, module and work of every op, and each phase's ops, data-edge CSR
        and topological order. Raises `nerframe.UnmappedError` when an op has no
        module (or its module's unit cannot count the op's work), `NerframeError`
        for a frame-scoped op between batch-scoped ones. `table` is ``costs(graph)``
        when the caller already has it (one graph on many accelerators).
        """
        reserved(accel)
        if table is None:
            table = costs(graph.ops)
        module = map_operators(table.get_column("op_type"), table.get_column("backward"), accel)
        on_chip = np.array([m.on_chip for m in accel.modules], dtype=bool)[module]
        # a GPU's kernels may move more of an op's bytes than the op has, or fewer
        # (a fused kernel keeps its stages' intermediates on chip)
        own = kernel_bytes(table, sm_modules(accel)[module])
        dram_bytes = np.where(on_chip, 0.0, own + gathered_bytes(table, accel))
        l2_cycles = np.zeros(table.height, np.int64)
        if accel.l2_bytes_per_cycle > 0:
            through_l2 = np.where(on_chip, 0.0, l2_bytes(table, accel, own))
            l2_cycles = np.ceil(through_l2 / accel.l2_bytes_per_cycle).astype(np.int64)
        phase = phases(graph)
        parts: list[_Part | None] = [None, None, None]
        if phase.size and (phase == phase[0]).all():
            # One phase holds every op: its sub-DAG is the graph's own.
            parts[phase[0]] = _Part(np.arange(phase.size), dag_of(graph))
        else:
            src, dst = graph.data_edges()
            for p in range(3):
                ops = np.flatnonzero(phase == p)
                if ops.size == 0:
                    continue
                position = np.full(phase.size, -1, np.int64)
                position[ops] = np.arange(ops.size)
                inside = (phase[src] == p) & (phase[dst] == p)
                s, d = position[src[inside]], position[dst[inside]]
                parts[p] = _Part(ops, dag(ops.size, s, d))
        if accel.kind == "gpu":
            parts = [None if part is None else _serial(part) for part in parts]
        names = tuple(m.name for m in accel.modules)
        on_array = np.array([m.array is not None for m in accel.modules], dtype=bool)[module]
        gemm_ptr, gemms = mlp_gemm_lists(table, on_array)
        respilled, sram_bytes, tiles = array_traffic(table, module, accel, gemm_ptr, gemms)
        sram_bytes += table_read_bytes(table)
        return cls(
            table,
            module,
            (parts[0], parts[1], parts[2]),
            names,
            work(table, module, accel, batches=graph.batches),
            dram_bytes + respilled,
            gemm_ptr,
            gemms,
            sram_bytes,
            tiles,
            l2_cycles,
        )

    def op_arrays(self, ops: np.ndarray) -> OpArrays:
        """The kernel's inputs of the ops `ops` (indices into the graph, in that order).

        >>> m = Mapped.of(pipeline("neurex"), accelerator("neurex"))
        >>> m.op_arrays(np.arange(2)).work.size
        2
        """
        begin, end = self.gemm_ptr[ops], self.gemm_ptr[ops + 1]
        sizes = end - begin
        ptr = np.zeros(ops.size + 1, np.int64)
        np.cumsum(sizes, out=ptr[1:])
        # Each op's run of GEMMs, gathered in the order of `ops`.
        rows = np.repeat(begin - ptr[:-1], sizes) + np.arange(ptr[-1])
        return OpArrays(
            self.module[ops],
            self.work[ops],
            self.dram_bytes[ops],
            ptr,
            self.gemms[rows],
            self.gemm_tiles[rows],
            self.l2_cycles[ops],
        )

    def run(self, configs: Configurations, parallelism: str, keep_ops: bool) -> FrameRun:
        """List-schedule each phase (one batch of the batch phase) on every configuration."""
        if parallelism not in PARALLELISM:
            raise InvalidInputError(
                f"unknown parallelism {parallelism!r}; choose split or instance"
            )
        count = configs.module_count
        config_arrays = ConfigArrays(
            count=count,
            instances=count if parallelism == "split" else np.ones_like(count),
            throughput=configs.throughput,
            latency=configs.module_latency,
            power_uw=configs.power_uw,
            frequency_mhz=configs.frequency_mhz,
            dram_bandwidth_gbps=configs.bandwidth_gbps,
            dram_pj_per_byte=configs.dram_pj_per_byte,
            array_rows=configs.module_array_rows,
            array_cols=configs.module_array_cols,
            dataflow=configs.module_dataflow,
        )
        results = [
            None
            if part is None
            else self._schedule(part, self.op_arrays(part.ops), config_arrays, keep_ops)
            for part in self.parts
        ]
        dram, sram = self.phase_bytes(self.dram_bytes), self.phase_bytes(self.sram_bytes)
        return FrameRun(results[0], results[1], results[2], dram, sram)

    def phase_bytes(self, per_op: np.ndarray) -> tuple[float, float, float]:
        """`per_op` bytes summed over each phase's ops (0 for a phase without ops)."""
        pre, batch, post = (
            0.0 if part is None else float(per_op[part.ops].sum()) for part in self.parts
        )
        return pre, batch, post

    def _schedule(
        self, part: _Part, ops: OpArrays, configs: ConfigArrays, keep_ops: bool
    ) -> ScheduleResult:
        try:
            return schedule_configs(part.dag, ops, configs, keep_ops=keep_ops)
        except KernelInputError as e:
            raise self._named(e, part, configs.count.shape[0]) from None

    def _named(self, e: KernelInputError, part: _Part, n_configs: int) -> InvalidInputError:
        # The kernel raises a plain error (kernels import nothing from the API layer)
        # naming ops (of one phase), modules and configurations by index; say which
        # op of the graph and which module, as nerframe's InvalidInputError.
        message = str(e)
        op = None if e.op is None else int(part.ops[e.op])
        if op is not None:
            op_type = self.costs["op_type"][op]
            message = message.replace(f"op {e.op} ", f"op {op} ({op_type}) ", 1)
        if e.module is not None:
            name = self.module_names[e.module]
            message = message.replace(f"module {e.module} ", f"module {name} ", 1)
        if n_configs == 1:
            message = message.replace(" of configuration 0", "", 1)
        return InvalidInputError(
            message, e.culprit, op=op, module=e.module, configuration=e.configuration
        )


def _serial(part: _Part) -> _Part:
    """`part` with each op after the one before it in its topological order: a GPU runs
    one kernel at a time (one CUDA stream), so no two of its ops overlap, and each
    draws at most the SMs' share of the board power."""
    d = part.dag
    n = d.topo.size
    src = np.repeat(np.arange(n, dtype=np.int64), np.diff(d.succ_ptr))
    chain_src, chain_dst = d.topo[:-1], d.topo[1:]
    return _Part(
        part.ops,
        dag(n, np.concatenate([src, chain_src]), np.concatenate([d.succ_idx, chain_dst])),
    )


def array_traffic(
    table: pl.DataFrame,
    module: np.ndarray,
    accel: Accelerator,
    gemm_ptr: np.ndarray,
    gemms: np.ndarray,
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per op of a costs table: DRAM bytes re-read or spilled beyond its buffers, and
    SRAM bytes; per GEMM its sample tile (0: M whole). An op with GEMMs (on a
    systolic array, `mlp_gemm_lists`) takes them from
    `nerframe.kernels.systolic.op_traffic` at its bit width; every other op moves no
    extra DRAM bytes and has its bytes as SRAM bytes (each crosses a buffer once).

    >>> import nerframe
    >>> from nerframe.mapping import map_operators
    >>> t = nerframe.costs(nerframe.pipeline("neurex").ops)
    >>> a = nerframe.accelerator("neurex")
    >>> on = map_operators(t["op_type"], t["backward"], a)
    >>> ptr, gemms = mlp_gemm_lists(t, np.array([a.modules[i].array is not None for i in on]))
    >>> extra, sram, tiles = array_traffic(t, on, a, ptr, gemms)
    >>> extra.tolist(), int(sram[2]), tiles.tolist()  # tiles of 1024 samples, no re-read
    ([0.0, 0.0, 0.0, 0.0, 0.0], 216662016, [1024, 1024, 1024, 1024])
    """
    extra = np.zeros(table.height)
    sram = table.get_column("bytes_total").to_numpy().astype(np.float64, copy=True)
    bits = table.get_column("bitwidth").to_numpy()
    tiles = np.zeros(gemms.shape[0], np.int64)
    for op in np.flatnonzero(np.diff(gemm_ptr)):
        m = accel.modules[module[op]]
        assert m.array is not None and m.dataflow is not None
        extra[op], sram[op], tiles[gemm_ptr[op] : gemm_ptr[op + 1]] = op_traffic(
            gemms[gemm_ptr[op] : gemm_ptr[op + 1]],
            m.array[0],
            m.array[1],
            DATAFLOWS.index(m.dataflow) + 1,
            bits[op] / 8,
            m.buffers,
        )
    return extra, sram, tiles


def mlp_gemm_lists(table: pl.DataFrame, on_array: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """GEMM lists (CSR: ``gemm_ptr`` int64[n + 1], ``gemms`` int64[L, 3] of M, K, N)
    of the MLP rows of a costs table where `on_array` (bool[n]) is set: one GEMM
    per layer over M = B·N rows, two for a backward row
    (`nerframe.kernels.systolic.mlp_gemms`); every other row has none.

    >>> import nerframe
    >>> t = nerframe.costs(nerframe.pipeline("instant3d").ops)
    >>> ptr, gemms = mlp_gemm_lists(t, np.ones(t.height, bool))
    >>> np.diff(ptr).tolist(), gemms[:3].tolist()
    ([0, 0, 0, 3, 0, 0, 6, 0], [[98304, 32, 64], [98304, 64, 64], [98304, 64, 4]])
    """
    ptr = np.zeros(table.height + 1, np.int64)
    rows = np.flatnonzero(on_array & (table.get_column("op_type") == "MLP").to_numpy())
    lists = []
    if rows.size:
        columns = ("B", "N", "in_dim", "num_layers", "layer_width", "out_dim")
        picked = table[rows].select(*columns, "skip_connections", "backward")
        for r in picked.iter_rows():
            b, n, in_dim, layers, width, out_dim, skips, backward = r
            lists.append(
                mlp_gemms(b * n, in_dim, layers, width, out_dim, skips or [], backward=backward)
            )
        np.cumsum(np.bincount(rows + 1, [len(g) for g in lists], table.height + 1), out=ptr)
    flat = [g for gemms in lists for g in gemms]
    return ptr, np.array(flat, np.int64).reshape(len(flat), 3)


def _fps(value: float | None) -> str:
    return "None" if value is None else f"{value:.3g}"


def frame_figures(
    run: FrameRun,
    configs: Configurations,
    batches: int,
    pipelined: bool,
) -> dict[str, np.ndarray]:
    """Per-configuration frame figures (summary columns) from a frame's phases;
    ``bottleneck`` is a module index: the busiest module of the phase that takes
    the most cycles of the frame (the batch stream on a tie), or `DRAM` where that
    is the batch stream and the DRAM sets its interval (`bottleneck_names`).

    ``dram_utilization`` is the highest of the phases' bytes over what DRAM
    delivers in the phase's makespan and of the stream's (all batches' bytes over
    what it delivers in the stream's cycles): at most 1, as the ops of a phase share
    the bandwidth (`nerframe.kernels.schedule`) and a batch starts no more often than
    the DRAM moves its bytes (`nerframe.kernels.frames`). Figures that need a
    non-zero frame time (fps, power) are NaN without one.
    """
    shape = configs.frequency_mhz.shape
    zero, nothing = np.zeros(shape, np.int64), np.zeros(shape)
    absent = ScheduleResult(zero, zero, zero, nothing, *([zero[:0]] * 8))
    phases = [absent if r is None else r for r in run.phases]
    ints, floats, longest = frames(
        np.stack([r.makespan for r in phases]),
        phases[1].interval,
        np.stack([r.energy_j for r in phases]),
        np.stack([r.bottleneck for r in phases]),
        np.array(run.bytes),
        batches,
        pipelined,
        configs.frequency_mhz,
        configs.dram_bandwidth_gbps,
        configs.bandwidth_gbps,
        np.array(run.sram_bytes),
        configs.sram_pj_per_byte,
        configs.leakage_w,
    )
    if longest >= 2**62:
        raise InvalidInputError(
            f"a frame of {batches} batches would take about {longest:.3g} cycles, "
            "beyond the int64 range; lower frame_pixels",
            "frame_pixels",
        )
    return {
        "batches": np.full(shape, batches, np.int64),
        "pre_cycles": ints[0],
        "makespan_cycles": ints[1],
        "interval_cycles": ints[2],
        "post_cycles": ints[3],
        "frame_cycles": ints[4],
        **dict(zip(FLOAT_FIGURES, floats, strict=True)),
        "bottleneck": ints[5],
    }


def overlaps(accel: Accelerator, pipelined: bool) -> bool:
    """Whether batches overlap on `accel`: as asked, except on a GPU, which runs one
    kernel at a time."""
    return check_flag("pipelined", pipelined) and accel.kind != "gpu"


def schedule(
    graph: Graph | str,
    accel: Accelerator | str | os.PathLike[str],
    *,
    parallelism: Parallelism = "split",
    pipelined: bool = True,
) -> Schedule:
    """List-schedule `graph`'s phases on `accel` and derive the frame figures.

    `parallelism` is ``"split"`` (an op takes every instance of its module) or
    ``"instance"`` (an op takes one; batches spread over the instances).
    The schedule table has one row per op, in frame time: ``pre`` ops from the
    frame's start, batch ops as the first batch (after the ``pre`` ops), ``post``
    ops after the last batch; ``energy_j`` is one run of the op (per batch for
    batch ops, per frame for frame ops). Raises `NerframeError` when an op cannot
    be mapped to a module. `graph` may be a built-in pipeline's name and `accel`
    a built-in accelerator's name or an accelerator file. A GPU (``kind`` ``gpu``)
    runs one kernel at a time, so its batches never overlap: ``pipelined`` is False
    there whatever is asked. The range of each headline figure over the accelerator's
    assumed figures is `nerframe.bands.bands`.

    >>> schedule("neurex", "neurex")
    Schedule(graph='neurex', accelerator='neurex', ops=5, fps=...)
    """
    if isinstance(graph, str):
        graph = pipeline(graph)
    elif not isinstance(graph, Graph):
        raise InvalidInputError(
            f"schedule: graph must be a pipeline name or a Graph, got {type(graph).__name__}",
            "graph",
        )
    if isinstance(accel, str | os.PathLike):
        accel = accelerator(accel)
    elif not isinstance(accel, Accelerator):
        raise InvalidInputError(
            "schedule: accel must be an accelerator name, a path or an Accelerator, "
            f"got {type(accel).__name__}",
            "accel",
        )
    return schedule_mapped(Mapped.of(graph, accel), graph, accel, parallelism, pipelined)


def schedule_mapped(
    mapped: Mapped, graph: Graph, accel: Accelerator, parallelism: str, pipelined: bool
) -> Schedule:
    """`schedule` of a graph already mapped on `accel` (`Mapped.of`), so that a caller
    scheduling one graph on many accelerators costs it once.

    >>> g, a = pipeline("neurex"), accelerator("neurex")
    >>> schedule_mapped(Mapped.of(g, a), g, a, "split", True).summary.equals(
    ...     schedule(g, a).summary)
    True
    """
    pipelined = overlaps(accel, pipelined)
    configs = Configurations.of(accel)
    run = mapped.run(configs, parallelism, keep_ops=True)
    figures = frame_figures(run, configs, graph.batches, pipelined)
    n = mapped.costs.height
    per_op = {
        name: np.zeros(n, np.float64 if name == "energy_op" else np.int64)
        for name in (
            "instances",
            "first_instance",
            "start",
            "end",
            "duration",
            "compute_cycles",
            "memory_cycles",
            "energy_op",
        )
    }
    pre, post = figures["pre_cycles"][0], figures["post_cycles"][0]
    offsets = (0, pre, figures["frame_cycles"][0] - post)
    for part, result, offset in zip(mapped.parts, run.phases, offsets, strict=True):
        if part is None or result is None:
            continue
        for name, values in per_op.items():
            shift = offset if name in ("start", "end") else 0
            values[part.ops] = getattr(result, name)[0] + shift
    table = mapped.costs
    names = pl.Series("module", [m.name for m in accel.modules], pl.String)
    memory_bound = per_op["compute_cycles"] < per_op["memory_cycles"]
    # Column by column, in the schema's order and dtypes: no expressions to plan,
    # no casts (a small graph's schedule costs far less than either).
    columns = {
        **{name: table.get_column(name) for name in SCHEDULE.names()[:6]},
        "accelerator": pl.Series([accel.name], dtype=pl.String).new_from_index(0, n),
        "module": names[mapped.module],
        "instances": per_op["instances"],
        "first_instance": per_op["first_instance"],
        "start_cycle": per_op["start"],
        "end_cycle": per_op["end"],
        "duration_cycles": per_op["duration"],
        "compute_cycles": per_op["compute_cycles"],
        "memory_cycles": per_op["memory_cycles"],
        "bound": _BOUNDS[memory_bound.astype(np.int64)],
        "flops": table.get_column("flops"),
        "bytes_total": table.get_column("bytes_total"),
        "energy_j": per_op["energy_op"] + mapped.sram_bytes * configs.sram_pj_per_byte[0] * 1e-12,
        "array_utilization": _array_utilization(mapped, accel, per_op),
    }
    ops = pl.DataFrame({name: columns[name] for name in SCHEDULE.names()})
    bottleneck = figures.pop("bottleneck")
    row = {
        **_pair(graph, accel, parallelism, pipelined),
        "status": "ok",
        **{name: values[0].item() for name, values in figures.items()},
        "bottleneck_module": bottleneck_names(names.to_list(), bottleneck)[0],
        "total_flops": float(table.get_column("flops").sum()),
        "total_bytes": float(table.get_column("bytes_total").sum()),
        "frame_flops": frame_total(table, "flops", graph.batches),
        "frame_bytes": frame_total(table, "bytes_total", graph.batches),
    }
    # NaN is a figure without a value (fps of a zero-time frame, an unpublished area).
    row = {k: None if isinstance(v, float) and math.isnan(v) else v for k, v in row.items()}
    return Schedule(ops, pl.DataFrame([row], schema=SUMMARY))


_BOUNDS = pl.Series("bound", ["compute", "memory"], BOUND)


def _array_utilization(
    mapped: Mapped, accel: Accelerator, per_op: dict[str, np.ndarray]
) -> pl.Series:
    """Share of its arrays' MAC slots an op on a systolic array fills over its compute
    cycles: FLOPs / (2·rows·cols · instances · compute cycles); null for other ops."""
    peak = np.array([2.0 * m.array[0] * m.array[1] if m.array else 0.0 for m in accel.modules])
    slots = peak[mapped.module] * per_op["instances"] * per_op["compute_cycles"]
    timed = (np.diff(mapped.gemm_ptr) > 0) & (slots > 0)
    flops = mapped.costs.get_column("flops").to_numpy()
    share = np.divide(flops, slots, out=np.zeros_like(slots), where=timed)
    return pl.Series("array_utilization", np.where(timed, share, np.nan), nan_to_null=True)


def module_busy(result: Schedule, accel: Accelerator) -> pl.DataFrame:
    """Busy cycles per instance of every module of `accel` in one batch (`MODULE_BUSY`).

    A batch-scoped op keeps ``instances`` of its module's ``count`` instances busy
    for its duration; a module's busy cycles per instance are ``ceil(sum(duration *
    instances) / count)`` over those ops, the figure whose maximum is the summary's
    interval unless the DRAM's (a batch's DRAM bytes over the derated bandwidth) is
    longer.

    >>> s = schedule("neurex", "neurex")
    >>> busy = module_busy(s, accelerator("neurex"))
    >>> busy["busy_cycles"].max() == s.summary["interval_cycles"].item()
    True
    """
    names = [m.name for m in accel.modules]
    counts = np.array([m.count for m in accel.modules], np.int64)
    ops = result.schedule
    index = {name: i for i, name in enumerate(names)}
    rows = ops.get_column("module").to_list()
    module = np.array([index.get(name, -1) for name in rows], np.int64)
    # The interval is that of the batch stream: frame-scoped ops run outside it.
    used = (ops.get_column("scope") == "batch").to_numpy() & (module >= 0)
    cycles = ops.get_column("duration_cycles").to_numpy() * ops.get_column("instances").to_numpy()
    instance_cycles = np.zeros(len(names), np.int64)  # exact integers, unlike bincount's
    np.add.at(instance_cycles, module[used], cycles[used])
    busy = (instance_cycles + counts - 1) // counts
    columns: dict[str, list[str] | np.ndarray] = {
        "graph": [result.summary.get_column("graph").item()] * len(names),
        "accelerator": [accel.name] * len(names),
        "module": names,
        "count": counts,
        "busy_cycles": busy,
    }
    return pl.DataFrame([pl.Series(k, v, MODULE_BUSY[k]) for k, v in columns.items()])


def unmapped_summary(
    graph: Graph, accel: Accelerator, message: str, parallelism: str, pipelined: bool
) -> pl.DataFrame:
    """The summary row of a pair that cannot run: status ``unmapped``, no numbers."""
    row = {**_pair(graph, accel, parallelism, pipelined), "status": "unmapped", "message": message}
    return pl.DataFrame([row], schema=SUMMARY)


def _pair(graph: Graph, accel: Accelerator, parallelism: str, pipelined: bool) -> dict[str, object]:
    return {
        "graph": graph.name,
        "accelerator": accel.name,
        "message": None,
        "parallelism": parallelism,
        "pipelined": pipelined,
        "rays": graph.rays,
        "frame_pixels": graph.frame_pixels,
        "area_mm2": accel.area_mm2,
    }

"""The fused sweep kernel against its independent scalar oracle (`kernels/reference_sweep.py`).

Random small grids over random accelerators and graphs: the kernel's rows (grid
expansion from any chunk start, per-configuration module counts, throughputs,
latencies, clock-scaled power, areas, clock, bandwidth and DRAM energy, the frame,
area, peak, energy and power figures, constraints) equal the oracle's, which
expands the grid with `itertools.product` and schedules each phase with the scalar
list scheduler. The Pareto kernel is checked against an all-pairs comparison.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from nerframe.kernels.dag import dag
from nerframe.kernels.hardware import DTYPES, Hardware
from nerframe.kernels.reference_schedule import Config, Graph, OneSchedule, schedule_one
from nerframe.kernels.reference_sweep import (
    DRAM,
    FIELDS,
    Axis,
    Base,
    feasible,
    pareto_front,
    sweep_rows,
)
from nerframe.kernels.schedule_inputs import OpArrays
from nerframe.kernels.sweep import pareto_mask
from nerframe.kernels.sweep_chunk import (
    CONSTRAINED,
    COUNT,
    FLOAT_ROWS,
    INT_ROWS,
    LATENCY,
    Grid,
    evaluate_chunk,
    result_matrices,
)
from nerframe.sweeps.evaluate import Matrices

INTEGER_FIELDS = {"count", "latency_cycles"}
ACCELERATOR_FIELDS = {"frequency_mhz", "dram_bandwidth_gbps", "dram_pj_per_byte"}
# Values an axis of each field takes (within what `nerframe.sweep_specs` accepts).
AXIS_VALUES = {
    "frequency_mhz": st.floats(50, 3000),
    "dram_bandwidth_gbps": st.floats(0.5, 2000),
    "dram_pj_per_byte": st.floats(0, 40),
    "count": st.integers(1, 5),
    "throughput_ops_per_cycle": st.floats(0.25, 512),
    "latency_cycles": st.integers(0, 50),
    "power_uw": st.floats(0, 1e6),
    "area_um2": st.floats(0, 1e6),
}


@st.composite
def _phase(draw: st.DrawFn, modules: int, least: int) -> tuple[int, list[tuple[int, int]], list]:
    n = draw(st.integers(least, 4))
    pairs = [(i, j) for i in range(n) for j in range(i + 1, n)]
    edges = [p for p in pairs if draw(st.booleans())]
    # (module, work, DRAM bytes, L2 floor in cycles)
    ops = [
        (
            draw(st.integers(0, modules - 1)),
            draw(st.floats(0, 1e5)),
            draw(st.floats(0, 1e5)),
            draw(st.sampled_from([0, 0, 1, 700, 40_000])),
        )
        for _ in range(n)
    ]
    return n, edges, ops


@st.composite
def _case(draw: st.DrawFn) -> dict:
    m = draw(st.integers(1, 3))

    def per_module(strategy: st.SearchStrategy) -> list:
        return [draw(strategy) for _ in range(m)]

    base = Base(
        counts=per_module(st.integers(1, 4)),
        throughput=per_module(st.floats(0.5, 64)),
        latency=per_module(st.integers(0, 5)),
        power_uw=per_module(st.floats(0, 1e5)),
        area_um2=per_module(st.one_of(st.just(math.nan), st.floats(0, 1e6))),
        power_reference_mhz=per_module(st.one_of(st.just(math.nan), st.floats(100, 2000))),
        efficiency=per_module(st.floats(0.25, 1)),
        counts_flops=per_module(st.booleans()),
        one_kernel=draw(st.booleans()),
        frequency_mhz=draw(st.floats(100, 2000)),
        dram_bandwidth_gbps=draw(st.floats(1, 500)),
        dram_pj_per_byte=draw(st.floats(0, 30)),
        memory_efficiency=draw(st.floats(0.25, 1)),
        sram_area_um2=draw(st.floats(0, 1e6)),
        sram_pj_per_byte=draw(st.floats(0, 2)),
        leakage_uw_per_mm2=draw(st.floats(0, 1e4)),
    )
    targets = [(f, 0) for f in sorted(ACCELERATOR_FIELDS)] + [
        (f, k) for f in FIELDS if f not in ACCELERATOR_FIELDS for k in range(m)
    ]
    chosen = draw(st.lists(st.sampled_from(targets), min_size=1, max_size=3, unique=True))
    axes = [
        Axis(name, module, draw(st.lists(AXIS_VALUES[name], min_size=1, max_size=3)))
        for name, module in chosen
    ]
    total = math.prod(len(a.values) for a in axes)
    start = draw(st.integers(0, total - 1))
    bounds = {
        CONSTRAINED[k]: (
            draw(st.floats(0, 1e3)),
            draw(st.one_of(st.just(math.inf), st.floats(1e3, 1e9))),
        )
        for k in sorted(draw(st.sets(st.integers(0, len(CONSTRAINED) - 1), max_size=2)))
    }
    return {
        "base": base,
        "axes": axes,
        "phases": (draw(_phase(m, 0)), draw(_phase(m, 1)), draw(_phase(m, 0))),
        "batches": draw(st.integers(1, 5)),
        "pipelined": draw(st.booleans()),
        "split": draw(st.booleans()),
        "sram_bytes": tuple(draw(st.floats(0, 1e6)) for _ in range(3)),
        "start": start,
        "size": draw(st.integers(1, total - start)),
        "bounds": bounds,
    }


def _kernel_inputs(case: dict) -> tuple:
    base, axes = case["base"], case["axes"]
    width = max(len(a.values) for a in axes)
    ints = np.zeros((len(axes), width), np.int64)
    floats = np.zeros((len(axes), width), np.float64)
    for a, axis in enumerate(axes):
        target = ints if axis.name in INTEGER_FIELDS else floats
        target[a, : len(axis.values)] = axis.values
    m = len(base.counts)
    row = {  # one configuration: module fields (1, M), the others (1,)
        "module_count": [base.counts],
        "module_throughput": [base.throughput],
        "module_latency": [base.latency],
        "module_power_uw": [base.power_uw],
        "module_area_um2": [base.area_um2],
        "frequency_mhz": [base.frequency_mhz],
        "dram_bandwidth_gbps": [base.dram_bandwidth_gbps],
        "dram_pj_per_byte": [base.dram_pj_per_byte],
        "module_power_reference_mhz": [base.power_reference_mhz],
        "module_efficiency": [base.efficiency],
        "memory_efficiency": [base.memory_efficiency],
        "module_counts_flops": [base.counts_flops],
        "module_array_rows": [[1] * m],
        "module_array_cols": [[1] * m],
        "module_dataflow": [[0] * m],
        "sram_pj_per_byte": [base.sram_pj_per_byte],
        "leakage_uw_per_mm2": [base.leakage_uw_per_mm2],
        "sram_area_um2": [base.sram_area_um2],
    }
    grid = Grid(
        hardware=Hardware(**{name: np.array(v, DTYPES[name]) for name, v in row.items()}),
        one_kernel=base.one_kernel,
        size=np.array([len(a.values) for a in axes], np.int64),
        field=np.array([FIELDS.index(a.name) for a in axes], np.int64),
        module=np.array([a.module for a in axes], np.int64),
        ints=ints,
        floats=floats,
    )
    dags, ops = [], []
    for n, edges, phase_ops in case["phases"]:
        dags.append(dag(n, [e[0] for e in edges], [e[1] for e in edges]))
        ops.append(
            OpArrays(
                np.array([o[0] for o in phase_ops], np.int64),
                np.array([o[1] for o in phase_ops], np.float64),
                np.array([o[2] for o in phase_ops], np.float64),
                np.zeros(n + 1, np.int64),
                np.zeros((0, 3), np.int64),
                np.zeros(0, np.int64),
                np.array([o[3] for o in phase_ops], np.int64),
            )
        )
    # instance offsets (instance mode) for the most instances any configuration has
    most = list(base.counts)
    for axis in axes:
        if axis.name == "count":
            most[axis.module] = max(most[axis.module], *axis.values)
    inst_base = np.concatenate([[0], np.cumsum(most)]).astype(np.int64)
    return grid, tuple(dags), tuple(ops), inst_base


def _oracle_graph(n: int, edges: list[tuple[int, int]], ops: list) -> Graph:
    preds: list[list[int]] = [[] for _ in range(n)]
    succs: list[list[int]] = [[] for _ in range(n)]
    for src, dst in edges:
        preds[dst].append(src)
        succs[src].append(dst)
    return Graph(
        preds=preds,
        succs=succs,
        topo=list(range(n)),  # edges go from lower to higher ids
        op_module=[o[0] for o in ops],
        work=[o[1] for o in ops],
        bytes_total=[o[2] for o in ops],
        l2_cycles=[o[3] for o in ops],
    )


def _same(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return a == pytest.approx(b, rel=1e-12, abs=1e-300)


def _phase_bytes(case: dict) -> tuple[float, float, float]:
    pre, batch, post = (sum(o[2] for o in phase[2]) for phase in case["phases"])
    return pre, batch, post


def _kernel_and_oracle(case: dict) -> tuple[Matrices, list[dict], list[tuple[float, ...]]]:
    """The kernel's result matrices for the case's rows, the oracle's rows and each
    row's axis values."""
    grid, dags, ops, inst_base = _kernel_inputs(case)
    phase_bytes = _phase_bytes(case)
    nbytes = np.array([phase_bytes, case["sram_bytes"]], np.float64)
    bounds = case["bounds"]
    constraint = np.array([CONSTRAINED.index(name) for name in bounds], np.int64)
    low = np.array([b[0] for b in bounds.values()], np.float64)
    high = np.array([b[1] for b in bounds.values()], np.float64)
    start, size = case["start"], case["size"]
    out = result_matrices(size, len(case["axes"]))
    evaluate_chunk(start, grid, dags, ops, nbytes, case["batches"], case["pipelined"],
                   case["split"], inst_base, constraint, low, high, out)  # fmt: skip

    expected = sweep_rows(
        case["base"],
        case["axes"],
        tuple(_oracle_graph(*phase) for phase in case["phases"]),
        batches=case["batches"],
        pipelined=case["pipelined"],
        split=case["split"],
        phase_bytes=phase_bytes,
        phase_sram_bytes=case["sram_bytes"],
    )[start : start + size]
    configurations = [
        values for i, values in enumerate(_product(case["axes"])) if start <= i < start + size
    ]
    return out, expected, configurations


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_case())
def test_the_sweep_kernel_equals_the_scalar_oracle(case: dict) -> None:
    (ints, floats, ok), expected, configurations = _kernel_and_oracle(case)
    bounds = case["bounds"]
    for c, (row, values) in enumerate(zip(expected, configurations, strict=True)):
        for r, name in enumerate(INT_ROWS):
            assert ints[r, c] == row[name], (name, c)
        for r, name in enumerate(FLOAT_ROWS):
            assert _same(float(floats[r, c]), row[name]), (name, c, floats[r, c], row[name])
        for a, (axis, value) in enumerate(zip(case["axes"], values, strict=True)):
            if axis.name in INTEGER_FIELDS:
                assert ints[len(INT_ROWS) + a, c] == value
            else:
                assert floats[len(FLOAT_ROWS) + a, c] == value
        assert bool(ok[c]) == feasible(row, bounds), (c, bounds, row)


def _product(axes: list[Axis]) -> list[tuple[float, ...]]:
    import itertools

    return list(itertools.product(*(a.values for a in axes)))


def _config(case: dict, values: tuple[float, ...]) -> Config:
    """The scheduler's configuration of one grid row: the base with the row's axis
    values (power and DRAM energy left out: no start time depends on them)."""
    base = case["base"]
    setting = {(a.name, a.module): v for a, v in zip(case["axes"], values, strict=True)}
    chip = {a.name: v for a, v in zip(case["axes"], values, strict=True)}
    modules = range(len(base.counts))

    def field(name: str, m: int, default: float) -> float:
        return setting.get((name, m), default)

    count = [int(field("count", m, base.counts[m])) for m in modules]
    return Config(
        count=count,
        instances=count if case["split"] else [1] * len(count),
        throughput=[
            field("throughput_ops_per_cycle", m, base.throughput[m]) * base.efficiency[m]
            for m in modules
        ],
        latency=[int(field("latency_cycles", m, base.latency[m])) for m in modules],
        power_uw=[0.0] * len(count),
        frequency_mhz=chip.get("frequency_mhz", base.frequency_mhz),
        dram_bandwidth_gbps=chip.get("dram_bandwidth_gbps", base.dram_bandwidth_gbps)
        * base.memory_efficiency,
        dram_pj_per_byte=0.0,
    )


def _most_bytes_in_an_interval(
    batch: OneSchedule, graph: Graph, batches: int, interval: int
) -> float:
    """The most DRAM bytes any window of `interval` cycles of the pipelined stream
    moves, measured from the batch's placements: batch k runs them `k * interval`
    cycles later, and each op moves its bytes evenly over its run. The bytes in a
    window [t, t + interval) are piecewise linear in t, bending where t or
    t + interval meets a run's start or end: the most is at one of those t."""
    runs = [
        (op.start + k * interval, op.end + k * interval, graph.bytes_total[i] / op.duration)
        for k in range(batches)
        for i, op in enumerate(batch.ops)
        if graph.bytes_total[i] > 0
    ]
    last = max(batch.makespan + (batches - 1) * interval - interval, 0)
    bends = {t for s, e, _ in runs for t in (s, e, s - interval, e - interval)}
    return max(
        sum(r * max(0, min(e, t + interval) - max(s, t)) for s, e, r in runs)
        for t in {0, last} | {t for t in bends if 0 <= t <= last}
    )


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=_case(), bandwidth=st.floats(0.5, 20), batches=st.integers(2, 6))
def test_a_pipelined_stream_moves_at_most_the_bandwidth(
    case: dict, bandwidth: float, batches: int
) -> None:
    # A slow DRAM (the base's; an axis may set another) and several pipelined
    # batches: the DRAM sets many rows' interval.
    base = dataclasses.replace(case["base"], dram_bandwidth_gbps=bandwidth)
    case = case | {"base": base, "pipelined": True, "batches": batches}
    (ints, floats, _), expected, configurations = _kernel_and_oracle(case)
    batch_graph = _oracle_graph(*case["phases"][1])
    pre_bytes, batch_bytes, post_bytes = _phase_bytes(case)
    at = {name: INT_ROWS.index(name) for name in INT_ROWS}
    utilization = FLOAT_ROWS.index("dram_utilization")
    for c, (row, values) in enumerate(zip(expected, configurations, strict=True)):
        # kernel and oracle agree bit for bit
        for name, r in at.items():
            assert ints[r, c] == row[name], (name, c)
        assert floats[utilization, c] == row["dram_utilization"]
        config = _config(case, values)
        one = schedule_one(batch_graph, config)
        assert ints[at["makespan_cycles"], c] == one.makespan
        derated = config.dram_bandwidth_gbps * 1e9 / (config.frequency_mhz * 1e6)
        dram = math.ceil(batch_bytes / derated)
        interval = int(ints[at["interval_cycles"], c])
        assert interval == max(one.interval, dram)
        event("the DRAM sets the interval" if dram > one.interval else "a module does")
        pre, post = ints[at["pre_cycles"], c], ints[at["post_cycles"], c]
        stream = one.makespan + (batches - 1) * interval
        assert ints[at["frame_cycles"], c] == pre + stream + post
        streaming = pre <= stream and post <= stream
        assert (ints[at["bottleneck"], c] == DRAM) == (dram > one.interval and streaming)
        # Physics: the stream moves at most the bandwidth over its cycles, and over
        # every window of one interval (exactly one batch's bytes once it is full).
        assert batches * batch_bytes <= stream * derated * (1 + 1e-12)
        if batch_bytes > 0:
            most = _most_bytes_in_an_interval(one, batch_graph, batches, interval)
            assert most <= interval * derated * (1 + 1e-9)
        # the utilisation, against the peak: each phase's and the stream's
        peak = derated / base.memory_efficiency
        shares = [
            moved / (cycles * peak)
            for moved, cycles in (
                (pre_bytes, pre),
                (batch_bytes, one.makespan),
                (batches * batch_bytes, stream),
                (post_bytes, post),
            )
            if cycles > 0
        ]
        assert row["dram_utilization"] == pytest.approx(max(shares, default=0.0), rel=1e-12)
        assert 0 <= row["dram_utilization"] <= 1 + 1e-12


def test_the_kernel_s_field_codes_are_the_oracle_s_fields() -> None:
    # the test hands the kernel FIELDS.index(name) as the field code
    assert (FIELDS.index("count"), FIELDS.index("latency_cycles")) == (COUNT, LATENCY)
    assert len(FIELDS) == 8


@settings(max_examples=200, deadline=None)
@given(
    rows=st.lists(
        st.lists(
            st.one_of(st.sampled_from([0.0, 1.0, 2.0, math.nan]), st.floats(-5, 5)),
            min_size=3,
            max_size=3,
        ),
        max_size=25,
    ),
    maximize=st.lists(st.booleans(), min_size=3, max_size=3),
)
def test_the_pareto_kernel_equals_all_pairs(rows: list[list[float]], maximize: list[bool]) -> None:
    values = np.array(rows, np.float64).reshape(len(rows), 3)
    assert pareto_mask(values, np.array(maximize)).tolist() == pareto_front(rows, maximize)


def test_a_tie_between_phases_names_the_batch_module() -> None:
    # by hand: the pre phase (module 0) and the batches (module 1) both take 10 cycles;
    # the spec names the batch phase's busiest module on a tie
    base = Base(counts=[1, 1], throughput=[10.0, 10.0], latency=[0, 0], power_uw=[0.0, 0.0],
                area_um2=[1.0, 1.0], power_reference_mhz=[math.nan] * 2, efficiency=[1.0] * 2,
                counts_flops=[True, True], one_kernel=False, frequency_mhz=1000.0,
                dram_bandwidth_gbps=10.0, dram_pj_per_byte=0.0, memory_efficiency=1.0,
                sram_area_um2=0.0)  # fmt: skip
    case = {
        "base": base,
        "axes": [Axis("latency_cycles", 0, [0, 1])],
        "phases": ((1, [], [(0, 100.0, 0.0, 0)]), (1, [], [(1, 100.0, 0.0, 0)]), (0, [], [])),
        "sram_bytes": (0.0, 0.0, 0.0),
    }
    grid, dags, ops, inst_base = _kernel_inputs(case)
    out = result_matrices(2, 1)
    none = np.zeros(0, np.int64)
    evaluate_chunk(0, grid, dags, ops, np.zeros((2, 3)), 1, True, True, inst_base, none,
                   np.zeros(0), np.zeros(0), out)  # fmt: skip
    oracle = sweep_rows(base, case["axes"],
                        tuple(_oracle_graph(*p) for p in case["phases"]),
                        batches=1, pipelined=True, split=True)  # fmt: skip
    bottleneck = out[0][INT_ROWS.index("bottleneck")].tolist()
    assert bottleneck == [r["bottleneck"] for r in oracle] == [1, 0]  # 10 = 10, then 11 > 10

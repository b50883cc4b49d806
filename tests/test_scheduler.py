"""The batched list-scheduling kernel against hand-computed schedules and its reference.

Hand-computed cases pin the rules of spec/hardware.md; property tests on random
DAGs check the schedule invariants and that the numba kernel equals the plain-Python
reference bit for bit, in both parallelism modes and with general instance counts.
"""

from __future__ import annotations

import numba
import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nerframe.kernels import reference_schedule as ref
from nerframe.kernels import schedule as schedule_kernel
from nerframe.kernels.dag import Dag, check_dag, csr, dag, topological_order
from nerframe.kernels.faults import CyclicEdgesError, KernelInputError
from nerframe.kernels.schedule import ConfigArrays, OpArrays, ScheduleResult, schedule_configs

PROPERTY = settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow])


# ------------------------------------------------------------------------ builders


def inputs(p: dict, split: bool | None = None) -> tuple[Dag, OpArrays, ConfigArrays]:
    """The kernel's three argument tuples from one flat dict of field -> array.

    With `split` given, ``instances`` is derived from ``count`` (split: every
    instance; else one); otherwise `p` must hold ``instances``.
    """
    if split is not None:
        p = p | {"instances": p["count"] if split else np.ones_like(p["count"])}
    return (
        Dag(*(p[f] for f in Dag._fields)),
        OpArrays(*(p.get(f) for f in OpArrays._fields)),
        ConfigArrays(*(p.get(f) for f in ConfigArrays._fields)),
    )


def run(p: dict, split: bool | None = None, keep_ops: bool = True) -> ScheduleResult:
    return schedule_configs(*inputs(p, split), keep_ops=keep_ops)


def run_ref(p: dict, split: bool | None = None, keep_ops: bool = True) -> ScheduleResult:
    return ref.schedule_configs(*inputs(p, split), keep_ops=keep_ops)


def graph_fields(n: int, edges: list[tuple[int, int]]) -> dict:
    src = np.array([e[0] for e in edges], np.int64)
    dst = np.array([e[1] for e in edges], np.int64)
    return dict(zip(Dag._fields, (*csr(n, src, dst), topological_order(n, src, dst)), strict=True))


def one_config(
    n: int,
    edges: list[tuple[int, int]],
    op_module: list[int],
    flops: list[float],
    count: list[int],
    *,
    bytes_total: list[float] | None = None,
    throughput: list[float] | None = None,
    latency: list[int] | None = None,
    power_uw: list[float] | None = None,
    split: bool = True,
    instances: list[int] | None = None,
) -> ScheduleResult:
    """Schedules one configuration at 1000 MHz and 1 GB/s (1 byte per cycle), 10 pJ/B.

    Throughput defaults to 1 FLOP per cycle and latency to 0, so with no bytes
    an op's duration is its FLOPs divided by its instances, rounded up.
    """
    m = len(count)
    p = graph_fields(n, edges) | {
        "module": np.array(op_module, np.int64),
        "work": np.array(flops, np.float64),
        "bytes_total": np.array(bytes_total if bytes_total is not None else [0.0] * n),
        "count": np.array([count], np.int64),
        "throughput": np.array([throughput if throughput is not None else [1.0] * m]),
        "latency": np.array([latency if latency is not None else [0] * m], np.int64),
        "power_uw": np.array([power_uw if power_uw is not None else [1e6] * m]),
        "frequency_mhz": np.array([1000.0]),
        "dram_bandwidth_gbps": np.array([1.0]),
        "dram_pj_per_byte": np.array([10.0]),
    }
    if instances is not None:
        p["instances"] = np.array([instances], np.int64)
        kernel, expected = run(p), run_ref(p)
    else:
        kernel, expected = run(p, split), run_ref(p, split)
    assert_same(kernel, expected)
    return kernel


def assert_same(a: ScheduleResult, b: ScheduleResult) -> None:
    """Every output equal, floats bit for bit, same dtypes and shapes."""
    for field in ScheduleResult._fields:
        x, y = getattr(a, field), getattr(b, field)
        assert x.dtype == y.dtype and x.shape == y.shape, field
        assert np.array_equal(x, y), f"{field}: {x} != {y}"


def row(result: ScheduleResult, field: str) -> list:
    return getattr(result, field)[0].tolist()


# ----------------------------------------------------------- hand-computed schedules


def test_memory_bound_ops_on_different_modules_take_turns_on_the_dram() -> None:
    # Each moves 100 bytes at 1 byte/cycle, all of the bandwidth, for 100 cycles: the
    # first (lower id on the rank tie) starts at 0, the second when it ends.
    r = one_config(2, [], op_module=[0, 1], flops=[0, 0], bytes_total=[100, 100], count=[1, 1])
    assert row(r, "duration") == [100, 100]
    assert row(r, "start") == [0, 100]
    assert r.makespan.tolist() == [200]


def test_an_l2_floor_longer_than_the_dram_time_sets_the_memory_cycles() -> None:
    # 100 bytes at 1 byte/cycle take 100 DRAM cycles; an L2 floor of 250 cycles (the
    # bytes the op requests through a GPU's L2 over its bytes per clock) is longer, so
    # the op takes 250 cycles and spreads its DRAM bytes over them (0.4 byte/cycle):
    # the second op's 50 bytes over 50 cycles (1 byte/cycle) do not fit beside it.
    p = graph_fields(2, []) | {
        "module": np.array([0, 1]),
        "work": np.zeros(2),
        "bytes_total": np.array([100.0, 50.0]),
        "l2_cycles": np.array([250, 0]),
        "count": np.array([[1, 1]]),
        "throughput": np.ones((1, 2)),
        "latency": np.zeros((1, 2), np.int64),
        "power_uw": np.ones((1, 2)),
        "frequency_mhz": np.array([1000.0]),
        "dram_bandwidth_gbps": np.array([1.0]),
        "dram_pj_per_byte": np.array([0.0]),
    }
    r = run(p, split=True)
    assert_same(r, run_ref(p, split=True))
    assert row(r, "memory_cycles") == [250, 50]
    assert row(r, "duration") == [250, 50]
    assert row(r, "start") == [0, 250]
    # without the floor, the DRAM's 100 cycles again
    assert row(run(p | {"l2_cycles": None}, split=True), "duration") == [100, 50]


def test_ops_share_the_dram_while_their_rates_fit() -> None:
    # 100-cycle compute-bound ops moving 40 and 60 bytes: 0.4 + 0.6 bytes/cycle fit in
    # the 1 byte/cycle together; 0.4 + 0.61 do not, and the second op waits for the
    # first to end (where a fluid share would finish both in 101 cycles: the rule's cost).
    fit = one_config(2, [], op_module=[0, 1], flops=[100, 100], bytes_total=[40, 60], count=[1, 1])
    assert (row(fit, "start"), fit.makespan.tolist()) == ([0, 0], [100])
    over = one_config(2, [], op_module=[0, 1], flops=[100, 100], bytes_total=[40, 61], count=[1, 1])
    assert (row(over, "start"), over.makespan.tolist()) == ([0, 100], [200])


def test_an_op_starts_when_an_earlier_end_makes_room() -> None:
    # Rates 0.5 each over 100, 40 and 10 cycles (placed in that rank order): the first
    # two fill the bandwidth over [0, 40); the third fits from 40, beside the first.
    r = one_config(
        3, [], op_module=[0, 1, 2], flops=[100, 40, 10], bytes_total=[50, 20, 5], count=[1] * 3
    )
    assert row(r, "start") == [0, 0, 40]
    assert r.makespan.tolist() == [100]


@PROPERTY
@given(
    flops=st.lists(st.integers(0, 500), min_size=1, max_size=30),
    data=st.data(),
    latency=st.integers(0, 5),
)
def test_a_chain_keeps_the_schedule_of_durations_end_to_end(
    flops: list[int], data: st.DataObject, latency: int
) -> None:
    # No two ops of a chain overlap, so sharing the DRAM changes nothing: each op starts
    # when the previous one ends, its duration latency + max(compute, memory) by hand.
    n = len(flops)
    nbytes = data.draw(st.lists(st.integers(0, 800), min_size=n, max_size=n))
    modules = data.draw(st.lists(st.integers(0, 2), min_size=n, max_size=n))
    r = one_config(
        n,
        [(i, i + 1) for i in range(n - 1)],
        op_module=modules,
        flops=[float(f) for f in flops],
        bytes_total=[float(b) for b in nbytes],
        count=[1, 2, 3],
        throughput=[1.0, 2.0, 4.0],
        latency=[latency] * 3,
    )
    # count 1, 2, 3 split: throughput * count = 1, 4, 12 FLOP/cycle; 1 byte per cycle.
    per_cycle = {0: 1, 1: 4, 2: 12}
    durations = [
        latency + max(-(-f // per_cycle[m]), b)
        for f, b, m in zip(flops, nbytes, modules, strict=True)
    ]
    starts = [sum(durations[:i]) for i in range(n)]
    assert row(r, "duration") == durations
    assert row(r, "start") == starts
    assert r.makespan.tolist() == [sum(durations)]


def test_chain_with_memory_bound_op() -> None:
    # Durations: 1 + ceil(100/10) = 11; 1 + max(ceil(50/10), 40 bytes at 1 B/cycle) = 41;
    # 1 + ceil(30/10) = 4. Each op waits for the previous one.
    r = one_config(
        3,
        [(0, 1), (1, 2)],
        op_module=[0, 1, 0],
        flops=[100, 50, 30],
        bytes_total=[0, 40, 0],
        count=[1, 1],
        throughput=[10, 10],
        latency=[1, 1],
        power_uw=[1e6, 2e6],
    )
    assert row(r, "compute_cycles") == [10, 5, 3]
    assert row(r, "memory_cycles") == [0, 40, 0]
    assert row(r, "duration") == [11, 41, 4]
    assert row(r, "start") == [0, 11, 52]
    assert row(r, "end") == [11, 52, 56]
    assert r.makespan.tolist() == [56]
    # Module 0 is busy 11 + 4 cycles, module 1 is busy 41.
    assert (r.interval.tolist(), r.bottleneck.tolist()) == ([41], [1])
    # 1 W for 11 ns; 2 W for 41 ns plus 40 B at 10 pJ/B; 1 W for 4 ns.
    expected = [11e-9, 82e-9 + 400e-12, 4e-9]
    assert row(r, "energy_op") == pytest.approx(expected, rel=1e-12)
    assert r.energy_j[0] == pytest.approx(sum(expected), rel=1e-12)


def test_diamond_on_separate_modules_runs_the_middle_in_parallel() -> None:
    r = one_config(
        4,
        [(0, 1), (0, 2), (1, 3), (2, 3)],
        op_module=[0, 1, 2, 0],
        flops=[5, 10, 3, 2],
        count=[1, 1, 1],
    )
    assert row(r, "start") == [0, 5, 5, 15]
    assert row(r, "end") == [5, 15, 8, 17]
    assert r.makespan.tolist() == [17]
    assert (r.interval.tolist(), r.bottleneck.tolist()) == ([10], [1])


def test_diamond_on_one_module_runs_the_longer_branch_first() -> None:
    # Op 2 has the lower id but op 1 the higher upward rank (10 + 2 > 3 + 2).
    r = one_config(
        4,
        [(0, 2), (0, 1), (2, 3), (1, 3)],
        op_module=[0, 1, 1, 0],
        flops=[5, 10, 3, 2],
        count=[1, 1],
    )
    assert row(r, "start") == [0, 5, 15, 18]
    assert row(r, "end") == [5, 15, 18, 20]
    assert (r.interval.tolist(), r.bottleneck.tolist()) == ([13], [1])


FAN_OUT = {
    "n": 5,
    "edges": [(0, 1), (0, 2), (0, 3), (0, 4)],
    "op_module": [0, 1, 1, 1, 1],
    "flops": [1, 12, 21, 21, 6],
}


@pytest.mark.parametrize("split", [True, False])
def test_fan_out_onto_one_instance(split: bool) -> None:
    # Ranks 12, 21, 21, 6: op 2 before op 3 (tie, lower id), then op 1, then op 4.
    r = one_config(**FAN_OUT, count=[1, 1], split=split)
    assert row(r, "start") == [0, 43, 1, 22, 55]
    assert row(r, "end") == [1, 55, 22, 43, 61]
    assert row(r, "instances") == [1] * 5
    assert row(r, "first_instance") == [0] * 5
    assert (r.makespan.tolist(), r.interval.tolist(), r.bottleneck.tolist()) == ([61], [60], [1])


def test_fan_out_split_over_three_instances() -> None:
    # Every op takes all three instances, so durations shrink to 4, 7, 7, 2 and the
    # ops still run one after another.
    r = one_config(**FAN_OUT, count=[1, 3], split=True)
    assert row(r, "duration") == [1, 4, 7, 7, 2]
    assert row(r, "start") == [0, 15, 1, 8, 19]
    assert row(r, "instances") == [1, 3, 3, 3, 3]
    assert row(r, "first_instance") == [0] * 5
    # Busy cycles per instance: (4 + 7 + 7 + 2) * 3 / 3 = 20.
    assert (r.makespan.tolist(), r.interval.tolist(), r.bottleneck.tolist()) == ([21], [20], [1])


def test_fan_out_one_instance_each_over_three_instances() -> None:
    # Ops 2, 3 and 1 start together on instances 0, 1, 2; op 4 waits for the first
    # instance to become free, which is instance 2 at cycle 13.
    r = one_config(**FAN_OUT, count=[1, 3], split=False)
    assert row(r, "duration") == [1, 12, 21, 21, 6]
    assert row(r, "start") == [0, 1, 1, 1, 13]
    assert row(r, "end") == [1, 13, 22, 22, 19]
    assert row(r, "first_instance") == [0, 2, 0, 1, 2]
    # Busy: (12 + 21 + 21 + 6) / 3 = 20 per instance.
    assert (r.makespan.tolist(), r.interval.tolist(), r.bottleneck.tolist()) == ([22], [20], [1])


def test_instance_parallelism_rounds_busy_cycles_up() -> None:
    # Busy 12 + 21 + 6 = 39 cycles over 2 instances: 19.5 per instance, reported as 20.
    r = one_config(3, [], op_module=[0, 0, 0], flops=[12, 21, 6], count=[2], split=False)
    assert r.interval.tolist() == [20]


def test_op_taking_k_instances_free_at_different_times() -> None:
    # Four instances, each op takes three. Op 0 takes 0, 1, 2 (all free at 0) for
    # 10 cycles. Op 1 takes the three free earliest: 3 (free at 0), then 0 and 1
    # (free at 10; ties go to lower indices), so it starts at 10, not 0.
    # Op 2 then takes 2 (free at 10), 0 and 1 (free at 15); op 3 takes 3 (15), 0, 1 (18).
    r = one_config(4, [], op_module=[0] * 4, flops=[30, 15, 9, 6], count=[4], instances=[3])
    assert row(r, "duration") == [10, 5, 3, 2]
    assert row(r, "start") == [0, 10, 15, 18]
    assert row(r, "end") == [10, 15, 18, 20]
    assert row(r, "instances") == [3] * 4
    assert row(r, "first_instance") == [0, 0, 0, 0]
    # Busy: (10 + 5 + 3 + 2) * 3 = 60 instance-cycles over 4 instances.
    assert r.interval.tolist() == [15]


def test_k_instances_wait_for_the_latest_chosen_one() -> None:
    # Three instances, each op takes two. Op 0 (rank 10) holds 0 and 1 until 10,
    # op 1 (rank 4) holds 2 and then 0 (free at 10) from 10 to 14; op 2 finds
    # 1 free at 10 and 0, 2 at 14, so it takes 1 and 0 and starts at 14.
    r = one_config(3, [], op_module=[0] * 3, flops=[20, 8, 2], count=[3], instances=[2])
    assert row(r, "start") == [0, 10, 14]
    assert row(r, "first_instance") == [0, 0, 0]
    # Four instances, two per op: op 2 (rank 5) takes 2 and 3, untouched and free
    # at 0; op 3 then takes 2 and 3 again, free at 5 before 0 and 1 (free at 10);
    # op 4 takes them once more but must wait for op 0 until cycle 20.
    r = one_config(
        5,
        [(0, 4)],
        op_module=[0, 1, 1, 1, 1],
        flops=[20, 20, 10, 4, 2],
        count=[1, 4],
        instances=[1, 2],
    )
    assert row(r, "duration") == [20, 10, 5, 2, 1]
    assert row(r, "start") == [0, 0, 0, 5, 20]
    assert row(r, "first_instance") == [0, 0, 2, 2, 2]


def test_zero_duration_op_still_waits_for_its_predecessors() -> None:
    # 2 -> 1 -> 0 where op 1 takes no time: ops 0 and 1 have equal ranks and op 0 the
    # lower id, but op 0 must not be placed before op 1.
    r = one_config(3, [(2, 1), (1, 0)], op_module=[0, 1, 0], flops=[3, 0, 5], count=[1, 1])
    assert row(r, "duration") == [3, 0, 5]
    assert row(r, "start") == [5, 5, 0]
    assert r.makespan.tolist() == [8]


def small_batch(n: int, edges: list[tuple[int, int]], configs: int) -> dict:
    return graph_fields(n, edges) | {
        "module": np.zeros(n, np.int64),
        "work": np.arange(5.0, 5.0 + n),
        "bytes_total": np.zeros(n),
        "count": np.arange(1, configs + 1).reshape(configs, 1),
        "throughput": np.ones((configs, 1)),
        "latency": np.zeros((configs, 1), np.int64),
        "power_uw": np.ones((configs, 1)),
        "frequency_mhz": np.full(configs, 100.0),
        "dram_bandwidth_gbps": np.full(configs, 1.0),
        "dram_pj_per_byte": np.full(configs, 1.0),
    }


def test_keep_ops_false_returns_empty_per_op_arrays() -> None:
    n = 3
    p = small_batch(n, [(0, 1), (1, 2)], configs=2)
    kept = run(p, split=True, keep_ops=True)
    lean = run(p, split=True, keep_ops=False)
    for field in ("makespan", "interval", "bottleneck", "energy_j"):
        assert np.array_equal(getattr(kept, field), getattr(lean, field))
    assert lean.start.shape == (0, n) and lean.energy_op.shape == (0, n)
    assert kept.makespan.tolist() == [18, 10]


def test_empty_graph_and_empty_batch() -> None:
    empty = run(small_batch(0, [], configs=2), split=True)
    assert empty.makespan.tolist() == [0, 0] and empty.energy_j.tolist() == [0.0, 0.0]
    assert empty.start.shape == (2, 0)
    none = run(small_batch(1, [], configs=0), split=False)
    assert none.makespan.shape == (0,) and none.start.shape == (0, 1)


def test_one_configuration_runs_on_the_calling_thread(monkeypatch: pytest.MonkeyPatch) -> None:
    # A chain of SERIAL_BELOW ops on one module: each op takes 1 + ceil(10 / 5) = 3
    # cycles, one after another. One configuration is far above the placement
    # threshold, yet the kernel parallel over configurations must not be entered.
    n = schedule_kernel.SERIAL_BELOW
    chain = np.arange(n - 1, dtype=np.int64)
    args = (
        dag(n, chain, chain + 1),
        OpArrays(np.zeros(n, np.int64), np.full(n, 10.0), np.zeros(n)),
    )
    configs = {
        "count": [[1]],
        "throughput": [[5.0]],
        "latency": [[1]],
        "power_uw": [[0.0]],
        "frequency_mhz": [1000.0],
        "dram_bandwidth_gbps": [1.0],
        "dram_pj_per_byte": [0.0],
    }
    entered: list[int] = []
    parallel = schedule_kernel._schedule_parallel
    monkeypatch.setattr(
        schedule_kernel,
        "_schedule_parallel",
        lambda *a: entered.append(a[5]) or parallel(*a),
    )
    one = schedule_configs(*args, ConfigArrays(**configs, instances=[[1]]))
    assert entered == []
    assert one.makespan.tolist() == [3 * n] and one.interval.tolist() == [3 * n]
    # Two configurations of the same size do take the parallel kernel, one chunk
    # per configuration, when there are threads to run it.
    two = {k: np.repeat(np.asarray(v), 2, axis=0) for k, v in configs.items()}
    both = schedule_configs(*args, ConfigArrays(**two, instances=[[1], [1]]))
    assert entered == ([2] if numba.get_num_threads() > 1 else [])
    assert both.makespan.tolist() == [3 * n, 3 * n]


# ------------------------------------------------------------------- graph helpers


def test_csr_lists_neighbours_in_id_order() -> None:
    pred_ptr, pred_idx, succ_ptr, succ_idx = csr(4, [2, 0, 1, 0], [3, 3, 3, 1])
    assert pred_ptr.tolist() == [0, 0, 1, 1, 4] and pred_idx.tolist() == [0, 0, 1, 2]
    assert succ_ptr.tolist() == [0, 2, 3, 4, 4] and succ_idx.tolist() == [1, 3, 3, 3]
    with pytest.raises(ValueError, match="dst names op 4"):
        csr(4, [0], [4])
    with pytest.raises(ValueError, match="2 edges"):
        csr(4, [0, 1], [2])


def test_csr_keeps_duplicate_edges_in_both_directions() -> None:
    # 1 -> 0 twice and 2 -> 0: op 0's predecessors [1, 1, 2]; op 1's successors [0, 0].
    pred_ptr, pred_idx, succ_ptr, succ_idx = csr(3, [1, 2, 1], [0, 0, 0])
    assert pred_ptr.tolist() == [0, 3, 3, 3] and pred_idx.tolist() == [1, 1, 2]
    assert succ_ptr.tolist() == [0, 0, 2, 3] and succ_idx.tolist() == [0, 0, 0]


def test_a_built_dag_is_read_only_and_a_changed_one_is_checked_again() -> None:
    built = dag(3, [0, 1], [1, 2])
    assert not any(a.flags.writeable for a in built)
    with pytest.raises(ValueError, match="read-only"):
        built.topo[0] = 2
    assert check_dag(built, 3) is built
    # Same arrays but a reversed order: not the Dag that was built, so checked.
    with pytest.raises(KernelInputError, match="not a topological order"):
        check_dag(built._replace(topo=built.topo[::-1].copy()), 3)
    with pytest.raises(KernelInputError, match=r"pred_ptr must have shape \(5,\)"):
        check_dag(built, 4)


def test_topological_order_takes_smallest_ready_id_first() -> None:
    assert topological_order(5, [4, 3, 1], [0, 0, 2]).tolist() == [1, 2, 3, 4, 0]
    assert topological_order(0, [], []).tolist() == []


def test_cycle_error_names_the_ops_on_the_cycle_only() -> None:
    # 0 -> 1 -> 2 -> 3 -> 1 with 3 -> 4 and 5 -> 2: ops 1, 2, 3 are on the cycle;
    # 4 hangs below it and also cannot be ordered, but is not on the cycle.
    src, dst = [0, 1, 2, 3, 3, 5], [1, 2, 3, 1, 4, 2]
    with pytest.raises(CyclicEdgesError) as err:
        topological_order(6, src, dst)
    assert err.value.cycle == [1, 2, 3]
    assert "1 -> 2 -> 3 -> 1" in str(err.value)
    assert isinstance(err.value, ValueError)
    with pytest.raises(CyclicEdgesError) as err:
        topological_order(3, [0, 2], [1, 2])  # a self-loop
    assert err.value.cycle == [2]


# ---------------------------------------------------------------------- validation


def valid_args() -> dict:
    return graph_fields(3, [(0, 1), (1, 2)]) | {
        "module": np.array([0, 1, 0]),
        "work": np.array([1.0, 2.0, 3.0]),
        "bytes_total": np.array([1.0, 2.0, 3.0]),
        "count": np.array([[1, 2]]),
        "instances": np.array([[1, 2]]),
        "throughput": np.array([[1.0, 2.0]]),
        "latency": np.array([[0, 1]]),
        "power_uw": np.array([[1.0, 2.0]]),
        "frequency_mhz": np.array([100.0]),
        "dram_bandwidth_gbps": np.array([1.0]),
        "dram_pj_per_byte": np.array([1.0]),
    }


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("count", np.array([[1, 0]]), "count of module 1 of configuration 0 must be >= 1, got 0"),
        ("count", np.array([1, 2]), "count must have shape"),
        (
            "count",
            np.array([[1, 2**40]]),
            "count of module 1 of configuration 0 must be <= 1048576",
        ),
        (
            "throughput",
            np.array([[1.0, 0.0]]),
            "throughput of module 1 of configuration 0 must be > 0",
        ),
        ("latency", np.array([[0, 1, 2]]), "latency must have shape"),
        ("latency", np.array([[0.0, 1.5]]), "latency must hold integers"),
        ("frequency_mhz", np.array([100.0, 200.0]), "frequency_mhz must have shape"),
        (
            "dram_bandwidth_gbps",
            np.array([np.nan]),
            "dram_bandwidth_gbps of configuration 0 must be finite",
        ),
        ("work", np.array([1.0, -2.0, 3.0]), "work must be >= 0"),
        ("l2_cycles", np.array([0, -1, 0]), "l2_cycles must be >= 0"),
        ("l2_cycles", np.array([0, 1]), "l2_cycles must have shape"),
        ("l2_cycles", np.array([0.0, 1.5, 0.0]), "l2_cycles must hold integers"),
        ("module", np.array([0, 2, 0]), "module names a module outside"),
        ("topo", np.array([2, 1, 0]), "not a topological order"),
        ("topo", np.array([0, 1, 1]), "permutation"),
        ("pred_idx", np.array([1, 0]), "describe different edges"),
        ("succ_ptr", np.array([0, 1, 1, 2]), "describe different edges"),
        ("pred_ptr", np.array([0, 1, 2]), "pred_ptr must have shape"),
        (
            "instances",
            np.array([[1, 3]]),
            r"instances of module 1 of configuration 0 must be <= count \(2\), got 3",
        ),
    ],
)
def test_bad_input_raises_kernel_input_error(field: str, value: np.ndarray, message: str) -> None:
    with pytest.raises(KernelInputError, match=message) as err:
        run(valid_args() | {field: value})
    # Disagreeing CSR arrays are reported against the predecessors.
    assert err.value.culprit == ("pred_idx" if "different edges" in message else field)


def test_an_l2_floor_beyond_the_exact_range_names_its_op() -> None:
    # 2**52 cycles for one of 3 ops is beyond 2**53 / 3
    with pytest.raises(KernelInputError, match="op 1 has l2_cycles 4503599627370496") as err:
        run(valid_args() | {"l2_cycles": np.array([0, 2**52, 0])})
    assert (err.value.culprit, err.value.op) == ("op 1", 1)


@pytest.mark.parametrize(
    ("field", "where", "value", "message"),
    [
        # Op 2 (3 units of work on module 0) at 1e-300 units per cycle.
        ("throughput", (0, 0), 1e-300, "op 2 on module 0 of configuration 0 may take up to 3e"),
        # Latency alone beyond 2**53 / 3 ops.
        ("latency", (0, 1), 2**52, "op 1 on module 1 of configuration 0 may take up to 4.5e"),
        # 3 bytes at 1e-20 GB/s and 100 MHz: op 2 is the largest on module 0.
        ("dram_bandwidth_gbps", 0, 1e-20, "op 2 on module 0 of configuration 0"),
    ],
)
def test_durations_beyond_exact_range_name_the_op_and_module(
    field: str, where: tuple | int, value: float, message: str
) -> None:
    p = valid_args()
    p[field] = p[field].astype(type(value))
    p[field][where] = value
    with pytest.raises(KernelInputError, match=message) as err:
        run(p)
    assert "beyond the exact range" in str(err.value)


PER_CONFIG = (
    "count",
    "instances",
    "throughput",
    "latency",
    "power_uw",
    "frequency_mhz",
    "dram_bandwidth_gbps",
    "dram_pj_per_byte",
)


@pytest.mark.parametrize(
    ("field", "where", "value", "message"),
    [
        ("latency", (2, 1), -1, "latency of module 1 of configuration 2 must be >= 0, got -1"),
        ("power_uw", (1, 0), np.inf, "power_uw of module 0 of configuration 1 must be finite"),
        ("frequency_mhz", 3, 0.0, "frequency_mhz of configuration 3 must be > 0, got 0.0"),
        ("dram_pj_per_byte", 1, -1.0, "dram_pj_per_byte of configuration 1 must be >= 0"),
    ],
)
@pytest.mark.parametrize("configs", [4, 40_000])
def test_bad_value_names_its_configuration(
    field: str, where: tuple | int, value: float, message: str, configs: int
) -> None:
    # 40,000 configurations take the parallel path, 4 the serial one.
    args = valid_args()
    for name in PER_CONFIG:
        args[name] = np.repeat(args[name], configs, axis=0)
    args[field][where] = value
    with pytest.raises(KernelInputError, match=message):
        run(args)


# ------------------------------------------------------------------ property tests


def random_dag(rng: np.random.Generator, n: int, max_preds: int) -> tuple[np.ndarray, np.ndarray]:
    """A random DAG whose topological order is a random permutation of the op ids."""
    perm = rng.permutation(n)
    src, dst = [], []
    for j in range(1, n):
        k = int(rng.integers(0, min(j, max_preds) + 1))
        for i in rng.choice(j, size=k, replace=False):
            src.append(perm[i])
            dst.append(perm[j])
    return np.array(src, np.int64), np.array(dst, np.int64)


def random_problem(seed: int, n: int, n_modules: int, n_configs: int, max_count: int) -> dict:
    rng = np.random.default_rng(seed)
    src, dst = random_dag(rng, n, max_preds=3)
    shape = (n_configs, n_modules)
    # Zeros in flops, bytes and latency produce zero-duration ops and rank ties.
    flops = rng.choice([0.0, 1.0, 7.0, 64.0, 1e3, 123456.0], size=n) * rng.integers(0, 4, n)
    bytes_total = rng.choice([0.0, 3.0, 100.0, 5e4], size=n)
    # A GPU's L2 floor on the memory cycles: mostly none, sometimes above the DRAM's.
    l2_cycles = rng.choice([0, 0, 0, 2, 90, 4000], size=n)
    return graph_fields(n, list(zip(src.tolist(), dst.tolist(), strict=True))) | {
        "src": src,
        "dst": dst,
        "module": rng.integers(0, n_modules, n),
        "work": flops,
        "bytes_total": bytes_total,
        "l2_cycles": l2_cycles,
        "count": rng.integers(1, max_count + 1, shape),
        "throughput": rng.uniform(0.5, 300.0, shape),
        "latency": rng.integers(0, 4, shape),
        "power_uw": rng.uniform(0.0, 5e4, shape),
        "frequency_mhz": rng.uniform(200.0, 2000.0, n_configs),
        "dram_bandwidth_gbps": rng.uniform(1.0, 1000.0, n_configs),
        "dram_pj_per_byte": rng.uniform(0.0, 30.0, n_configs),
    }


def check_invariants(p: dict, r: ScheduleResult) -> None:
    """Precedence, capacity and the derived figures of every configuration."""
    n = len(p["module"])
    modules = p["module"]
    for c in range(r.makespan.shape[0]):
        start, end, dur, k = r.start[c], r.end[c], r.duration[c], r.instances[c]
        count = p["count"][c]
        # Every op is placed exactly once: the kernel writes `duration` only when it
        # places an op (so an unplaced op fails the duration formula below), and the
        # interval, recomputed below from one duration per op, counts every placement.
        assert (start >= 0).all() and np.array_equal(end - start, dur)
        longer = np.maximum(r.compute_cycles[c], r.memory_cycles[c])
        assert np.array_equal(dur, p["latency"][c][modules] + longer)
        # No op starts before any of its predecessors ends.
        assert (start[p["dst"]] >= end[p["src"]]).all()
        assert r.makespan[c] == (end.max() if n else 0)
        # Sweep line: at no time does a module run more instances than it has.
        # Ends sort before starts at equal times (an instance is reused at once).
        for m in range(len(count)):
            on = (modules == m) & (dur > 0)
            times = np.concatenate([start[on], end[on]])
            deltas = np.concatenate([k[on], -k[on]])
            order = np.lexsort((deltas, times))
            assert (np.cumsum(deltas[order]) <= count[m]).all()
            assert ((k[modules == m] >= 1) & (k[modules == m] <= count[m])).all()
            first = r.first_instance[c][modules == m]
            assert ((first >= 0) & (first <= count[m] - k[modules == m])).all()
        # One instance each: the ops on one instance never overlap.
        single = (k == 1) & (dur > 0)
        for key in set(
            zip(modules[single].tolist(), r.first_instance[c][single].tolist(), strict=True)
        ):
            on = single & (modules == key[0]) & (r.first_instance[c] == key[1])
            order = np.argsort(start[on], kind="stable")
            assert (start[on][order][1:] >= end[on][order][:-1]).all()
        busy = np.bincount(modules, weights=dur * k, minlength=len(count))
        per_instance = -(-busy.astype(np.int64) // count)
        assert r.interval[c] == per_instance.max()
        assert r.bottleneck[c] == int(np.argmax(per_instance))
        assert r.energy_j[c] == pytest.approx(r.energy_op[c].sum(), rel=1e-9, abs=1e-300)
    assert_dram_bound(p, r)


def assert_dram_bound(p: dict, r: ScheduleResult) -> None:
    """Measured from the schedule table: between any two consecutive events (starts
    and ends), the ops running move at most the bandwidth, each at bytes / duration;
    and the whole batch moves at most makespan x bandwidth."""
    for c in range(r.makespan.shape[0]):
        per_cycle = p["dram_bandwidth_gbps"][c] * 1e9 / (p["frequency_mhz"][c] * 1e6)
        moves = p["bytes_total"] > 0
        assert (r.duration[c][moves] > 0).all()
        rate = p["bytes_total"][moves] / r.duration[c][moves]
        start, end = r.start[c][moves], r.end[c][moves]
        events = np.unique(np.concatenate([start, end]))
        # The load is constant on [events[i], events[i + 1]): measure it at each event.
        running = (start[None, :] <= events[:, None]) & (events[:, None] < end[None, :])
        assert (running.astype(np.float64) @ rate <= per_cycle * (1 + 1e-9)).all()
        total = p["bytes_total"].sum()
        assert total <= r.makespan[c] * per_cycle * (1 + 1e-9)


@PROPERTY
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    n_modules=st.integers(1, 4),
    n_configs=st.integers(1, 4),
    max_count=st.sampled_from([1, 2, 5]),
    split=st.booleans(),
)
def test_kernel_equals_reference_on_random_dags(
    seed: int, n: int, n_modules: int, n_configs: int, max_count: int, split: bool
) -> None:
    p = random_problem(seed, n, n_modules, n_configs, max_count)
    kernel = run(p, split)
    assert_same(kernel, run_ref(p, split))
    check_invariants(p, kernel)
    lean = run(p, split, keep_ops=False)
    for field in ("makespan", "interval", "bottleneck", "energy_j"):
        assert np.array_equal(getattr(lean, field), getattr(kernel, field))


@PROPERTY
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    n_modules=st.integers(1, 3),
    n_configs=st.integers(1, 3),
)
def test_kernel_equals_reference_with_k_of_count_instances(
    seed: int, n: int, n_modules: int, n_configs: int
) -> None:
    p = random_problem(seed, n, n_modules, n_configs, max_count=6)
    rng = np.random.default_rng(seed + 1)
    p["instances"] = (rng.uniform(size=p["count"].shape) * p["count"]).astype(np.int64) + 1
    kernel = run(p)
    assert_same(kernel, run_ref(p))
    check_invariants(p, kernel)


@settings(max_examples=4, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(500, 3000),
    split=st.booleans(),
)
def test_kernel_equals_reference_on_large_dags(seed: int, n: int, split: bool) -> None:
    p = random_problem(seed, n, n_modules=4, n_configs=2, max_count=8)
    kernel = run(p, split)
    assert_same(kernel, run_ref(p, split))
    check_invariants(p, kernel)


@settings(max_examples=10, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), split=st.booleans())
def test_same_input_gives_same_output(seed: int, split: bool) -> None:
    # Also across thread counts: configurations are chunked per thread.
    p = random_problem(seed, 40, n_modules=3, n_configs=50, max_count=4)
    first = run(p, split)
    assert_same(first, run(p, split))
    threads = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        assert_same(first, run(p, split))
    finally:
        numba.set_num_threads(threads)


@settings(max_examples=30, deadline=None)
@given(seed=st.integers(0, 2**32 - 1), n=st.integers(1, 80))
def test_cycle_detection_names_a_cycle_through_the_added_edge(seed: int, n: int) -> None:
    rng = np.random.default_rng(seed)
    src, dst = random_dag(rng, n, max_preds=3)
    order = topological_order(n, src, dst)
    position = np.empty(n, np.int64)
    position[order] = np.arange(n)
    assert (position[src] < position[dst]).all()
    # Walk forward along random successors, then close the walk with a back edge.
    _, _, succ_ptr, succ_idx = csr(n, src, dst)
    head = tail = int(rng.integers(n))
    for _ in range(int(rng.integers(0, 6))):
        if succ_ptr[tail] == succ_ptr[tail + 1]:
            break
        tail = int(succ_idx[rng.integers(succ_ptr[tail], succ_ptr[tail + 1])])
    with pytest.raises(CyclicEdgesError) as err:
        topological_order(n, np.append(src, tail), np.append(dst, head))
    cycle = err.value.cycle
    edges = set(zip(src.tolist(), dst.tolist(), strict=True)) | {(tail, head)}
    assert len(set(cycle)) == len(cycle) and cycle[0] == min(cycle)
    steps = list(zip(cycle, cycle[1:] + cycle[:1], strict=True))
    assert all(step in edges for step in steps)
    # The original graph is acyclic, so every cycle uses the added edge.
    assert (tail, head) in steps


@PROPERTY
@given(
    seed=st.integers(0, 2**32 - 1),
    n=st.integers(1, 60),
    n_modules=st.integers(1, 4),
    n_configs=st.integers(1, 3),
    split=st.booleans(),
)
def test_memory_bound_random_dags_share_the_dram_like_the_reference(
    seed: int, n: int, n_modules: int, n_configs: int, split: bool
) -> None:
    # A slow DRAM (0.01-2 GB/s) and every op moving bytes: most ops are memory-bound and
    # many would overlap, so the sharing rule decides most start times.
    p = random_problem(seed, n, n_modules, n_configs, max_count=3)
    rng = np.random.default_rng(seed + 2)
    p["bytes_total"] = rng.choice([1.0, 7.0, 100.0, 2e3], size=n)
    p["dram_bandwidth_gbps"] = rng.uniform(0.01, 2.0, n_configs)
    kernel = run(p, split)
    assert_same(kernel, run_ref(p, split))
    check_invariants(p, kernel)
    rng_k = np.random.default_rng(seed + 3)
    p["instances"] = (rng_k.uniform(size=p["count"].shape) * p["count"]).astype(np.int64) + 1
    kernel = run(p)
    assert_same(kernel, run_ref(p))
    check_invariants(p, kernel)


@settings(max_examples=3, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), split=st.booleans())
def test_large_memory_bound_dags_share_the_dram_like_the_reference(seed: int, split: bool) -> None:
    # 1,200 ops that all move bytes, each at a fraction of the DRAM's rate
    # (compute-bound), on many instances: the load profile grows to thousands of
    # steps, most windows meet several full steps, and most reservations land
    # between earlier ones, in both modes.
    n = 1200
    p = random_problem(seed, n, n_modules=4, n_configs=1, max_count=16)
    rng = np.random.default_rng(seed + 4)
    p["work"] = rng.uniform(1e4, 1e6, n)
    p["bytes_total"] = rng.choice([100.0, 2e3, 5e4], size=n)
    p["dram_bandwidth_gbps"] = rng.uniform(0.05, 1.0, 1)
    kernel = run(p, split)
    assert_same(kernel, run_ref(p, split))
    check_invariants(p, kernel)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.integers(0, 2**32 - 1), n_configs=st.integers(1, 3), k_of_count=st.booleans())
def test_contended_dram_with_ops_that_move_no_bytes_matches_the_reference(
    seed: int, n_configs: int, k_of_count: bool
) -> None:
    # Many instances asking for several times the bandwidth at once, so most ops wait
    # past full steps of the load; a third of the ops move no bytes (and some take no
    # time), so a start often comes from an end that reserved nothing and the kernel
    # finds its step from an earlier one; several configurations in one call, so
    # the load profile starts afresh for each.
    n = 400
    p = random_problem(seed, n, n_modules=3, n_configs=n_configs, max_count=12)
    rng = np.random.default_rng(seed + 5)
    p["work"] = rng.choice([0.0, 0.0, 1e3, 2e4, 3e5], size=n)
    p["bytes_total"] = np.where(rng.uniform(size=n) < 1 / 3, 0.0, rng.uniform(1.0, 4e3, n))
    p["dram_bandwidth_gbps"] = rng.uniform(0.5, 20.0, n_configs)
    if k_of_count:
        p["instances"] = (rng.uniform(size=p["count"].shape) * p["count"]).astype(np.int64) + 1
        kernel, expected = run(p), run_ref(p)
    else:
        kernel, expected = run(p, split=False), run_ref(p, split=False)
    assert_same(kernel, expected)
    check_invariants(p, kernel)

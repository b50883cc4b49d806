"""nerframe.schedule: mapping, hand-computed frames and PPA, every built-in pair."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

import nerframe
from nerframe import graphs, scheduling
from nerframe.builtin_pipelines import PIPELINES
from nerframe.hardware import BUILTIN, GPUS
from nerframe.kernels.dag import dag
from nerframe.mapping import map_operators
from nerframe.schemas import MODULE_BUSY, OP_TYPE, SCHEDULE, SUMMARY

NATIVE = [(p, a) for p, spec in PIPELINES.items() for a in spec.native]
ON_GPUS = [(p, gpu) for p in ("neurex", "gscore") for gpu in GPUS]


def tiny_accelerator(tmp_path: Path, **changes: object) -> Path:
    """Two modules at 100 MHz: 'alu' x2 (10 FLOP/cycle, latency 2), 'blend' x1."""
    spec = {
        "name": "tiny",
        "frequency_mhz": 100,
        "dram_bandwidth_gbps": 0.8,
        "dram_pj_per_byte": 10,
        "sram_um2_per_kb": 100,
        "modules": [
            {
                "name": "alu",
                "type": "SAMPLING",
                "count": 2,
                "throughput_ops_per_cycle": 10,
                "latency_cycles": 2,
                "area_um2": 1000,
                "power_uw": 5000,
                "memory_kb": 0,
            },
            {
                "name": "blend",
                "type": "BLENDING",
                "count": 1,
                "throughput_ops_per_cycle": 4,
                "latency_cycles": 0,
                "area_um2": 500,
                "power_uw": 1000,
                "memory_kb": 0,
            },
        ],
        "sram": [{"name": "buf", "size_kb": 10}],
        "operator_mapping": {"UniformSampler": "alu"},
    } | changes
    path = tmp_path / "tiny.json"
    path.write_text(json.dumps(spec))
    return path


def tiny_graph(frame_pixels: int = 100) -> nerframe.Graph:
    # UniformSampler B=10,N=4: 40 flops, 10+40 elems; RGBRenderer: 240 flops, 120+40+30 elems.
    ops = [
        {"op_type": "UniformSampler", "B": 10, "N": 4, "bitwidth": 8},
        {"op_type": "RGBRenderer", "B": 10, "N": 4, "bitwidth": 8},
    ]
    return nerframe.graph("tiny", ops, [(0, 1)], frame_pixels=frame_pixels)


def test_hand_computed_schedule_and_ppa(tmp_path: Path) -> None:
    result = nerframe.schedule(tiny_graph(), nerframe.accelerator(tiny_accelerator(tmp_path)))
    s = result.schedule.rows_by_key("op_id", named=True, unique=True)
    # 8 bytes/cycle. Sampler: compute ceil(40/20)=2, memory ceil(50/8)=7 -> 2+7 = 9.
    assert (s[0]["module"], s[0]["instances"], s[0]["compute_cycles"]) == ("alu", 2, 2)
    assert (s[0]["memory_cycles"], s[0]["bound"], s[0]["end_cycle"]) == (7, "memory", 9)
    # Renderer: compute ceil(240/4)=60, memory ceil(190/8)=24 -> 60, after the sampler.
    assert (s[1]["module"], s[1]["start_cycle"], s[1]["end_cycle"]) == ("blend", 9, 69)
    assert s[1]["bound"] == "compute"
    summary = result.summary.row(0, named=True)
    assert summary["makespan_cycles"] == 69
    assert summary["interval_cycles"] == 60  # blend is busiest
    assert summary["bottleneck_module"] == "blend"
    assert summary["batches"] == 10
    assert summary["frame_cycles"] == 69 + 9 * 60
    assert summary["frame_time_s"] == (69 + 9 * 60) / 100e6
    energy_batch = (5000 * 2 * 1e-6 * 9 / 100e6 + 50 * 10e-12) + (
        1000 * 1e-6 * 60 / 100e6 + 190 * 10e-12
    )
    assert summary["energy_per_frame_j"] == pytest.approx(10 * energy_batch, rel=1e-12)
    assert summary["avg_power_w"] == pytest.approx(summary["energy_per_frame_j"] * summary["fps"])
    assert summary["area_mm2"] == pytest.approx((2 * 1000 + 500 + 10 * 100) / 1e6)
    # the stream's: 10 batches x 240 bytes in 609 cycles of 8 bytes (one batch's
    # alone: 240 / (69 x 8) = 0.435); 30 DRAM cycles a batch, under the interval
    assert summary["dram_utilization"] == pytest.approx(10 * 240 / (609 * 8))
    assert summary["total_flops"] == 280
    assert result.schedule.schema == SCHEDULE and result.summary.schema == SUMMARY


def test_unpipelined_and_instance_parallelism(tmp_path: Path) -> None:
    accel = nerframe.accelerator(tiny_accelerator(tmp_path))
    serial = nerframe.schedule(tiny_graph(), accel, pipelined=False).summary.row(0, named=True)
    assert serial["frame_cycles"] == 10 * 69
    inst = nerframe.schedule(tiny_graph(), accel, parallelism="instance")
    first = inst.schedule.row(0, named=True)
    assert (first["instances"], first["compute_cycles"], first["end_cycle"]) == (1, 4, 9)


def test_a_dram_bound_stream_starts_a_batch_per_batch_of_bytes(tmp_path: Path) -> None:
    # By hand, at 0.25 GB/s and 100 MHz: 2.5 bytes/cycle. Sampler: 50 bytes, memory
    # ceil(50 / 2.5) = 20 > compute 2, + latency 2 = 22 cycles. Renderer: 190 bytes,
    # memory 76 > compute 60: 76 cycles, after the sampler. makespan 98; module
    # intervals: alu 22 x 2 instances / 2 = 22, blend 76. The batch's 240 bytes take
    # 240 / 2.5 = 96 cycles of DRAM, more than 76 x 2.5 = 190 bytes: started every 76
    # cycles, 10 batches would move 2,400 bytes in 98 + 9 x 76 = 782 cycles, 1.23 x
    # what the DRAM can. A batch starts every 96 cycles instead.
    accel = nerframe.accelerator(tiny_accelerator(tmp_path, dram_bandwidth_gbps=0.25))
    result = nerframe.schedule(tiny_graph(), accel)
    ends = result.schedule.sort("op_id")["end_cycle"].to_list()
    row = result.summary.row(0, named=True)
    assert ends == [22, 98]
    assert (row["makespan_cycles"], row["interval_cycles"]) == (98, 96)
    assert row["frame_cycles"] == 98 + 9 * 96 == 962
    assert row["fps"] == pytest.approx(100e6 / 962, rel=1e-12)
    assert row["bottleneck_module"] == "dram"
    # the stream moves 2,400 bytes in 962 cycles of 2.5 bytes (one batch alone:
    # 240 / (98 x 2.5) = 0.980)
    assert row["dram_utilization"] == pytest.approx(2400 / (962 * 2.5), rel=1e-12)
    busy = scheduling.module_busy(result, accel)
    assert busy["busy_cycles"].to_list() == [22, 76]  # the modules' own figures
    # Batches one after another never overlap: 10 x 98 cycles; the batch's interval
    # and what sets it are the same.
    serial = nerframe.schedule(tiny_graph(), accel, pipelined=False).summary.row(0, named=True)
    assert (serial["frame_cycles"], serial["interval_cycles"]) == (980, 96)
    assert serial["bottleneck_module"] == "dram"
    # The floor takes the derated bandwidth, as the ops' memory cycles do: half of
    # 0.5 GB/s is the same 2.5 bytes/cycle, the same frame; utilisation is measured
    # against the peak, 5 bytes/cycle.
    derated = tiny_accelerator(tmp_path, dram_bandwidth_gbps=0.5, memory_efficiency=0.5)
    half = nerframe.schedule(tiny_graph(), nerframe.accelerator(derated)).summary
    assert half.select("frame_cycles", "interval_cycles").row(0) == (962, 96)
    assert half["dram_utilization"].item() == pytest.approx(2400 / (962 * 5), rel=1e-12)


def test_a_module_may_not_take_the_dram_s_name(tmp_path: Path) -> None:
    path = tiny_accelerator(tmp_path, operator_mapping={"UniformSampler": "dram"})
    spec = json.loads(path.read_text())
    spec["modules"][0]["name"] = "dram"
    path.write_text(json.dumps(spec))
    with pytest.raises(nerframe.InvalidInputError, match="module name 'dram' is reserved"):
        nerframe.schedule(tiny_graph(), nerframe.accelerator(path))


def test_unmapped_names_every_op_type(tmp_path: Path) -> None:
    accel = nerframe.accelerator(tiny_accelerator(tmp_path))
    g = nerframe.pipeline("neurex")
    with pytest.raises(nerframe.UnmappedError, match=r"HashEncoding, MLP .*alu \(SAMPLING\)"):
        nerframe.schedule(g, accel)


def test_unknown_parallelism() -> None:
    with pytest.raises(nerframe.NerframeError, match="unknown parallelism 'both'"):
        nerframe.schedule(nerframe.pipeline("neurex"), "neurex", parallelism="both")


@pytest.mark.parametrize(("pipeline", "accel"), NATIVE + ON_GPUS)
@pytest.mark.parametrize("fine", [False, True])
def test_every_native_pair_runs(pipeline: str, accel: str, fine: bool) -> None:
    g = nerframe.pipeline(pipeline)
    result = nerframe.schedule(nerframe.expand(g) if fine else g, accel)
    summary = result.summary.row(0, named=True)
    assert summary["status"] == "ok"
    # a graph of frame-scoped ops only (3dgs, the GPU's rasteriser) has no batch phase
    batch = ("makespan_cycles", "interval_cycles") if summary["batches"] else ("pre_cycles",)
    for column in (
        *batch,
        "fps",
        "energy_per_frame_j",
        "avg_power_w",
        "total_flops",
    ):
        assert math.isfinite(summary[column]) and summary[column] > 0, column
    # area is known unless the file says it is not published (Jetson GPUs, GBU and
    # GauRast on them): then it is null, never a misleading 0
    sources = nerframe.accelerator(accel).sources
    if summary["area_mm2"] is None:
        assert any("not published" in s for s in sources)
    else:
        assert summary["area_mm2"] > 0
    # ICARUS keeps everything on chip: no DRAM traffic at all
    on_chip = all(m.on_chip for m in nerframe.accelerator(accel).modules)
    assert (summary["dram_utilization"] == 0) == on_chip
    # Batch ops show the first batch, after the frame ops that precede it; ops
    # after the batches end with the frame.
    ends = result.schedule.group_by("scope").agg(pl.col("end_cycle").max()).rows()
    expected = {"batch": summary["pre_cycles"] + summary["makespan_cycles"]}
    if not summary["batches"]:
        expected = {}
    if summary["post_cycles"]:
        expected["frame"] = summary["frame_cycles"]
    elif summary["pre_cycles"]:
        expected["frame"] = summary["pre_cycles"]
    assert dict(ends) == expected
    assert (result.schedule["duration_cycles"] > 0).all()


def test_the_matrix_covers_every_builtin() -> None:
    assert sorted({a for _, a in NATIVE + ON_GPUS}) == sorted(BUILTIN)


def test_same_input_same_schedule() -> None:
    g = nerframe.pipeline("srender")
    assert nerframe.schedule(g, "neurex").schedule.equals(nerframe.schedule(g, "neurex").schedule)


def test_map_operators_reads_an_enum_column_like_its_strings() -> None:
    neurex = nerframe.accelerator("neurex")
    # Two chunks, sliced: the Enum's codes are read at the slice's offset.
    column = pl.Series(["UniformSampler", "HashEncoding"], dtype=OP_TYPE).append(
        pl.Series(["MLP", "HashEncoding"], dtype=OP_TYPE)
    )[1:]
    flags = [False, True, False]
    expected = ["index_generation_unit", "systolic_array_32x32", "index_generation_unit"]
    for types in (column, column.cast(pl.String), column.to_list()):
        modules = map_operators(types, flags, neurex)
        assert [neurex.modules[i].name for i in modules] == expected
    for types, backward in ((pl.Series([None, "MLP"], dtype=OP_TYPE), [False, False]),
                            (["MLP", None], [False, False]), (["MLP"], [None])):  # fmt: skip
        with pytest.raises(nerframe.NerframeError, match="must not be null"):
            map_operators(types, backward, neurex)


def test_unmapped_op_types_are_named_in_the_order_rows_show_them(tmp_path: Path) -> None:
    # MLP comes after HashEncoding in the catalogue, but first in the rows.
    accel = nerframe.accelerator(tiny_accelerator(tmp_path))
    rows = ["UniformSampler", "MLP", "HashEncoding", "MLP"]
    for types in (rows, pl.Series(rows, dtype=OP_TYPE)):
        with pytest.raises(nerframe.UnmappedError, match=r"op types MLP, HashEncoding \("):
            map_operators(types, [False, True, False, False], accel)


def test_a_graph_computes_its_dag_and_phases_once(monkeypatch: pytest.MonkeyPatch) -> None:
    neurex, gbu = nerframe.pipeline("neurex"), nerframe.pipeline("gbu")
    built: list[int] = []

    def counting(n: int, src: object, dst: object) -> object:
        built.append(n)
        return dag(n, src, dst)

    monkeypatch.setattr(graphs, "dag", counting)
    monkeypatch.setattr(scheduling, "dag", counting)
    first = nerframe.schedule(neurex, "neurex")
    again = nerframe.schedule(neurex, "neurex")
    # Every neurex op is batch-scoped: its one phase is scheduled on the graph's own
    # DAG, built when the graph was.
    assert built == [] and graphs.dag_of(neurex) is graphs.dag_of(neurex)
    assert first.schedule.equals(again.schedule) and first.summary.equals(again.summary)
    # gbu: five frame-scoped ops, then three batch-scoped ops; each phase gets its
    # own sub-DAG per schedule, the graph's DAG is not rebuilt.
    nerframe.schedule(gbu, "gbu")
    assert sorted(built) == [3, 5]
    phase = graphs.phases(gbu)
    phase[:] = 7  # a copy: the graph's own stays as it was
    assert graphs.phases(gbu).tolist() == [0, 0, 0, 0, 0, 1, 1, 1]


@pytest.mark.parametrize(("parallelism", "alu"), [("split", 9), ("instance", 5)])
def test_module_busy_counts_batch_ops_per_instance(
    tmp_path: Path, parallelism: str, alu: int
) -> None:
    accel = nerframe.accelerator(tiny_accelerator(tmp_path))
    # tiny_graph's two batch ops and a frame-scoped renderer after the batches. The
    # sampler takes 2 + 7 = 9 cycles on 2 (split) or 1 (instance) of the 2 alu
    # instances: ceil(9 * 2 / 2) = 9 or ceil(9 * 1 / 2) = 5 per instance. The batch
    # renderer keeps the one blend instance busy 60 cycles; the frame one is outside
    # the batch stream.
    ops = [
        {"op_type": "UniformSampler", "B": 10, "N": 4, "bitwidth": 8},
        {"op_type": "RGBRenderer", "B": 10, "N": 4, "bitwidth": 8},
        {"op_type": "RGBRenderer", "B": 10, "N": 4, "bitwidth": 8, "scope": "frame"},
    ]
    g = nerframe.graph("tiny", ops, [(0, 1), (1, 2)], frame_pixels=100)
    busy = scheduling.module_busy(nerframe.schedule(g, accel, parallelism=parallelism), accel)
    assert busy.schema == MODULE_BUSY
    assert busy.rows() == [("tiny", "tiny", "alu", 2, alu), ("tiny", "tiny", "blend", 1, 60)]

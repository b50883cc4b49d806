"""SRender: its fine pass renders only the sensitive rays, and its processing elements
cost an MLP by its operand width (a 4-bit coarse MLP is cheaper than the 16-bit one)."""

from __future__ import annotations

import json
import math
from pathlib import Path

import polars as pl
import pytest

import nerframe
from nerframe.builtin_pipelines import SRENDER_SENSITIVE
from nerframe.errors import InvalidInputError
from nerframe.hardware import accelerator

FINE = ("PointArrange", "HashEncoding", "MLP", "RGBRenderer", "Recovery")


def test_the_fine_pass_takes_the_sensitive_rays_only() -> None:
    ops = nerframe.pipeline("srender", rays=4096).ops
    coarse, fine = ops.head(5), ops.tail(5)
    assert fine["op_type"].cast(str).to_list() == list(FINE)
    assert set(coarse["B"]) == {4096}
    assert set(fine["B"]) == {math.ceil(SRENDER_SENSITIVE * 4096)}
    assert set(fine["bitwidth"]) == {16} and set(coarse.head(4)["bitwidth"]) == {4}
    # the spec model keeps spec/pipelines.md's graph: every ray re-rendered
    assert set(nerframe.pipeline("srender", model="spec").ops["B"]) == {4096}


def test_a_4_bit_mlp_costs_a_sixteenth_of_a_16_bit_one_per_flop() -> None:
    # oracle: the processing elements count 4-bit FLOPs; a 16-bit product is (16/4)^2
    # = 16 4-bit ones, so cycles = FLOPs x 16 / throughput for the fine MLP and
    # FLOPs / throughput for the coarse one
    g = nerframe.pipeline("srender", rays=4096)
    srender = accelerator("srender")
    pe = srender.modules[srender.module_index("processing_elements")]
    assert pe.bitwidth == 4
    run = nerframe.schedule(g, srender).schedule
    mlps = run.filter(op_type="MLP")
    flops = nerframe.costs(g.ops).filter(op_type="MLP")["flops"].to_list()
    coarse, fine = mlps["compute_cycles"].to_list()
    assert coarse == math.ceil(flops[0] / pe.throughput_ops_per_cycle)
    assert fine == math.ceil(16 * flops[1] / pe.throughput_ops_per_cycle)
    # per FLOP the coarse pass is 16x cheaper
    assert (fine / flops[1]) / (coarse / flops[0]) == pytest.approx(16, rel=1e-3)


def test_the_sweep_engine_costs_the_width_as_the_scheduler_does() -> None:
    g = nerframe.pipeline("srender")
    rows = nerframe.sweep(g, "srender", {"processing_elements.count": [1]})
    assert isinstance(rows, pl.DataFrame)
    assert rows["fps"].item() == nerframe.schedule(g, "srender").summary["fps"].item()


def test_bitwidth_is_refused_on_a_systolic_array(tmp_path: Path) -> None:
    data = json.loads(
        Path(nerframe.__file__).with_name("accelerators").joinpath("neurex.json").read_text()
    )
    data["modules"][1]["bitwidth"] = 4
    path = tmp_path / "a.json"
    path.write_text(json.dumps(data), encoding="utf-8")
    with pytest.raises(InvalidInputError, match=r"modules\[1\].bitwidth"):
        accelerator(path)

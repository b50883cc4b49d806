"""An accelerator's area and power, part by part, at its own node and at 28 nm.

Area is Σ modules (count × area per instance) + Σ SRAM blocks (their own area, or
capacity × the node's density). Power has three terms: module dynamic power (count ×
power per busy instance at the accelerator's clock: every unit busy), SRAM access
energy (pJ per byte read or written; a power only once a schedule gives the
traffic, so the table gives the energy per byte) and leakage (the leakage density
× the part's area, drawn all the time). Figures move to 28 nm by the node table's
area and energy factors (`nerframe.technology`); a part whose area is not
published (a GPU's SMs) has none here either. A GPU's two modules each carry its
board power per SM (the GPU model of `nerframe.hardware`: whichever unit is busy
draws it), so their sum is twice the board power.

>>> import nerframe
>>> t = breakdown(nerframe.accelerator("neurex"))
>>> [round(v, 4) for v in t.filter(pl.col("part") == "total").select("area_mm2", "power_w").row(0)]
[3.14, 0.4157]
"""

from __future__ import annotations

import math
from typing import Any

import polars as pl

from nerframe import technology
from nerframe.accelerator_model import Accelerator

BREAKDOWN = pl.Schema(
    {
        "accelerator": pl.String,
        "part": pl.String,
        "name": pl.String,
        "count": pl.Int64,
        "size_kb": pl.Float64,
        "area_mm2": pl.Float64,
        "area_mm2_28nm": pl.Float64,
        "dynamic_power_w": pl.Float64,
        "leakage_w": pl.Float64,
        "power_w": pl.Float64,
        "power_w_28nm": pl.Float64,
        "sram_pj_per_byte": pl.Float64,
        "sram_pj_per_byte_28nm": pl.Float64,
    }
)
"""Columns of `breakdown`: one row per module, per SRAM block and a ``total`` row;
``power_w`` is dynamic plus leakage (SRAM access power needs a schedule's traffic)."""


def breakdown(accel: Accelerator) -> pl.DataFrame:
    """The area and power of `accel` per module, per SRAM block and in total.

    >>> import nerframe
    >>> t = breakdown(nerframe.accelerator("icarus"))  # a 40 nm design
    >>> row = t.filter(pl.col("part") == "total").row(0, named=True)
    >>> round(row["area_mm2"], 2), round(row["area_mm2_28nm"], 2)
    (9.98, 4.74)
    """
    node = accel.technology_nm
    scaled = technology.covers(node)
    area_k = technology.area_factor(node) if scaled else math.nan
    power_k = technology.energy_factor(node) if scaled else math.nan
    density = accel.leakage_density_uw_per_mm2
    pj = accel.sram_energy_pj_per_byte
    rows: list[dict[str, Any]] = []
    for m in accel.modules:
        area = m.area_um2 * m.count / 1e6
        reference = m.power_reference_mhz
        clock = 1.0 if reference is None else accel.frequency_mhz / reference
        dynamic = m.power_uw * m.count * clock * 1e-6
        rows.append(_row(accel, "module", m.name, m.count, None, area, dynamic, density, None))
    for s in accel.sram:
        um2 = s.area_um2 if s.area_um2 is not None else s.size_kb * accel.sram_um2_per_kb
        rows.append(_row(accel, "sram", s.name, 1, s.size_kb, um2 / 1e6, 0.0, density, pj))
    total = _row(
        accel,
        "total",
        accel.name,
        None,
        sum(s.size_kb for s in accel.sram),
        accel.area_mm2,
        sum(r["dynamic_power_w"] for r in rows),
        density,
        pj,
    )
    # the total's leakage counts the published areas only, as the schedule's does
    total["leakage_w"] = accel.leakage_w
    total["power_w"] = total["dynamic_power_w"] + total["leakage_w"]
    rows.append(total)
    for r in rows:
        r["area_mm2_28nm"] = r["area_mm2"] * area_k
        r["power_w_28nm"] = r["dynamic_power_w"] * power_k + r["leakage_w"] * area_k
        pj_here = r["sram_pj_per_byte"]
        r["sram_pj_per_byte_28nm"] = None if pj_here is None else pj_here * power_k
    table = pl.DataFrame(rows, schema=BREAKDOWN)
    return table.with_columns(pl.col(pl.Float64).fill_nan(None))


def _row(
    accel: Accelerator,
    part: str,
    name: str,
    count: int | None,
    size_kb: float | None,
    area_mm2: float,
    dynamic_w: float,
    density: float,
    pj: float | None,
) -> dict[str, Any]:
    leakage = 0.0 if math.isnan(area_mm2) else area_mm2 * density * 1e-6
    return {
        "accelerator": accel.name,
        "part": part,
        "name": name,
        "count": count,
        "size_kb": size_kb,
        "area_mm2": area_mm2,
        "dynamic_power_w": dynamic_w,
        "leakage_w": leakage,
        "power_w": dynamic_w + leakage,
        "sram_pj_per_byte": pj,
    }

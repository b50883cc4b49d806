"""Reading nerframe's own accelerator format (``spec/hardware.md``), strictly.

Unknown fields (except inside ``"notes"``), missing fields, wrong types and
out-of-range values are errors naming the file, the field and the value. The
fields a module may carry are those of `Module`, declared once there.

Fields of the area and power model (all optional): ``sram_um2_per_kb`` (SRAM
density for blocks without their own ``area_um2``; default the node table's at
``technology_nm``), ``sram_pj_per_byte`` (energy of one SRAM byte read or written;
default the node table's, 0 for a GPU) and ``leakage_uw_per_mm2`` (leakage per mm²
of module and SRAM area; default the node table's, 0 for a GPU). The node table is
`nerframe.technology`.

>>> from nerframe.hardware import accelerator
>>> accelerator("icarus").modules[0].unit
'sample'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import fields
from pathlib import Path
from typing import Any

from nerframe import technology as node_table
from nerframe.accelerator_model import (
    BUFFER_ROLES,
    DATAFLOWS,
    MAX_ARRAY_SIDE,
    Accelerator,
    Module,
    Sram,
    copied_area_warnings,
)
from nerframe.errors import InvalidInputError, NerframeError
from nerframe.json_reader import Reader, read_sram
from nerframe.mapping import HOST, op_key
from nerframe.taxonomy import PREFERENCES, WORK_UNITS

FREQUENCY_MHZ = (1e-3, 1e7)
"""Clocks an accelerator file may give, 1 kHz to 10 THz (assumption: far outside any
digital chip; a clock of 1e-300 MHz gave frame times of 6e301 s)."""

KINDS = ("accelerator", "gpu")
"""What an accelerator file describes: a dedicated accelerator or a GPU."""

_INTERNAL = {"warnings", "path", "source_format", "type_mapping"}
_TOP = {f.name for f in fields(Accelerator)} - _INTERNAL | {
    "notes",
    "extends",
    "compute_efficiency",
}
# a module's efficiency is its file's compute_efficiency, kept by modules it extends
_MODULE = {f.name for f in fields(Module)} - {"efficiency"}
_SRAM = {f.name for f in fields(Sram)}


def is_nerframe_format(data: Any) -> bool:
    """Whether parsed JSON looks like nerframe's format (it names a known top-level field)."""
    return isinstance(data, dict) and bool(_TOP & data.keys())


def from_nerframe(
    data: dict[str, Any], r: Reader, path: Path, load: Callable[[str], Accelerator]
) -> Accelerator:
    """The accelerator a parsed nerframe-format file describes.

    A file with ``"extends": NAME`` adds its modules, SRAM and mapping entries to
    the accelerator `load(NAME)` (a GPU that a plug-in sits beside, say); the figures
    it leaves out (clock, DRAM, node, SRAM density, memory efficiency) are the
    base's. ``compute_efficiency`` applies to the file's own modules only.
    """
    r.only(data, _TOP, "")
    base = _base(data, r, load)
    name = r.string(r.get(data, "name", ""), "name")
    description = data.get("description", "")
    if not isinstance(description, str):
        r.fail("description", "must be a string", description)

    def inherited(key: str) -> Any:
        return getattr(base, key) if base is not None and key not in data else r.get(data, key, "")

    frequency = r.number(inherited("frequency_mhz"), "frequency_mhz", positive=True)
    if not FREQUENCY_MHZ[0] <= frequency <= FREQUENCY_MHZ[1]:
        r.fail("frequency_mhz", "must lie in [0.001, 1e7] MHz", frequency)
    bandwidth = r.number(inherited("dram_bandwidth_gbps"), "dram_bandwidth_gbps", positive=True)
    dram_energy = r.number(inherited("dram_pj_per_byte"), "dram_pj_per_byte")
    technology = data.get("technology_nm", base.technology_nm if base else None)
    technology_nm = (
        math.nan
        if technology is None or technology != technology
        else r.number(technology, "technology_nm", positive=True)
    )
    efficiency = r.fraction(data.get("compute_efficiency", 1), "compute_efficiency")
    own = [
        _nerframe_module(raw, f"modules[{i}]", r, efficiency)
        for i, raw in enumerate(r.array(r.get(data, "modules", ""), "modules"))
    ]
    if not own:
        r.fail("modules", "must list at least one module", [])
    modules = [*(base.modules if base else ()), *own]
    _unique([m.name for m in modules], "modules", r)

    sram = list(base.sram) if base else []
    for i, raw in enumerate(r.array(data.get("sram", []), "sram")):
        where = f"sram[{i}]"
        r.only(r.object(raw, where), _SRAM, where)
        sram.append(read_sram(r, raw, where))
    _unique([s.name for s in sram], "sram", r)
    if "sram_um2_per_kb" in data:
        density = r.number(data["sram_um2_per_kb"], "sram_um2_per_kb")
    elif any(s.area_um2 is None for s in sram) and node_table.covers(technology_nm):
        # the node's SRAM density (nerframe.technology) for blocks without an area
        density = node_table.sram_um2_per_kb(technology_nm)
    elif base is not None and not math.isnan(base.sram_um2_per_kb):
        density = base.sram_um2_per_kb
    elif any(s.area_um2 is None for s in sram):
        raise NerframeError(
            f"{r.path}: missing field 'sram_um2_per_kb' (an SRAM block has no area_um2 "
            "and the file's technology_nm is not in the node table)"
        )
    else:
        density = math.nan

    mapping = r.object(data.get("operator_mapping", {}), "operator_mapping")
    names = [m.name for m in modules]
    for key, value in mapping.items():
        where = f"operator_mapping.{key}"
        if op_key(key) is None:
            r.fail(
                "operator_mapping",
                f"has key '{key}', which is not a catalogue op type "
                "(optionally followed by ' (B)' for backward rows)",
            )
        if r.string(value, where) not in names:
            r.fail(where, f"names no module of this file (modules: {', '.join(names)})", value)

    # A module no op can reach (its type in no preference list, no entry naming it)
    # is a mistyped type: "WARP_DRIVE" would otherwise load and never run anything.
    reachable = {HOST, *(t for types in PREFERENCES.values() for t in types)}
    named = {*mapping.values(), *(base.operator_mapping.values() if base else ())}
    for i, module in enumerate(own):
        if module.type.upper() not in reachable and module.name not in named:
            r.fail(
                f"modules[{i}].type",
                "is a type no op type prefers, and no operator_mapping entry names the "
                f"module (types: {', '.join(sorted(reachable))})",
                module.type,
            )

    sources = r.array(data.get("sources", []), "sources")
    for i, source in enumerate(sources):
        r.string(source, f"sources[{i}]")
    if base is not None:
        sources = [*sources, *(f"{base.name}: {source}" for source in base.sources)]
    return Accelerator(
        name=name,
        description=description,
        frequency_mhz=frequency,
        dram_bandwidth_gbps=bandwidth,
        dram_pj_per_byte=dram_energy,
        technology_nm=technology_nm,
        sram_um2_per_kb=density,
        modules=tuple(modules),
        sram=tuple(sram),
        operator_mapping={**(base.operator_mapping if base else {}), **mapping},
        sources=tuple(sources),
        warnings=tuple(copied_area_warnings(own)),
        path=str(path),
        source_format="nerframe",
        kind=r.choice(
            inherited("kind") if base else data.get("kind", "accelerator"), "kind", KINDS
        ),
        memory_efficiency=r.fraction(
            data.get("memory_efficiency", base.memory_efficiency if base else 1),
            "memory_efficiency",
        ),
        sram_pj_per_byte=_optional(data, "sram_pj_per_byte", r),
        leakage_uw_per_mm2=_optional(data, "leakage_uw_per_mm2", r),
        gather_sector_bytes=r.number(
            data.get("gather_sector_bytes", base.gather_sector_bytes if base else 0),
            "gather_sector_bytes",
        ),
    )


def _optional(data: dict[str, Any], key: str, r: Reader) -> float:
    """An optional non-negative figure; NaN (the node table's) when absent. A file
    that extends another does not inherit it: the plug-in's node decides."""
    return math.nan if key not in data else r.number(data[key], key)


def _base(
    data: dict[str, Any], r: Reader, load: Callable[[str], Accelerator]
) -> Accelerator | None:
    if "extends" not in data:
        return None
    name = r.string(data["extends"], "extends")
    try:
        return load(name)
    except NerframeError as e:
        if e.culprit == "extends":  # a cycle, already shown whole from the first file
            raise
        raise InvalidInputError(
            f"{r.path}: field 'extends' names no loadable accelerator ({e})"
        ) from None


def _nerframe_module(raw: Any, where: str, r: Reader, efficiency: float) -> Module:
    m = r.object(raw, where)
    r.only(m, _MODULE, where)
    reference = m.get("power_reference_mhz")
    array, dataflow = _array(m, where, r)
    return Module(
        name=r.string(r.get(m, "name", where), f"{where}.name"),
        type=r.string(r.get(m, "type", where), f"{where}.type"),
        count=r.integer(r.get(m, "count", where), f"{where}.count", positive=True),
        throughput_ops_per_cycle=_throughput(m, where, r, array),
        latency_cycles=r.integer(r.get(m, "latency_cycles", where), f"{where}.latency_cycles"),
        area_um2=_area(r.get(m, "area_um2", where), f"{where}.area_um2", r),
        power_uw=r.number(r.get(m, "power_uw", where), f"{where}.power_uw"),
        # capacity is descriptive only: no formula reads it, so it may be left out
        memory_kb=r.number(m.get("memory_kb", 0), f"{where}.memory_kb"),
        unit=r.choice(m.get("unit", "flop"), f"{where}.unit", WORK_UNITS),
        on_chip=r.boolean(m.get("on_chip", False), f"{where}.on_chip"),
        power_reference_mhz=None
        if reference is None
        else r.number(reference, f"{where}.power_reference_mhz", positive=True),
        efficiency=efficiency,
        array=array,
        dataflow=dataflow,
        buffers=_buffers(m, where, r, array),
    )


def _array(m: dict[str, Any], where: str, r: Reader) -> tuple[tuple[int, int] | None, str | None]:
    """A module's systolic ``array`` [rows, cols] and ``dataflow``: both or neither."""
    if "array" not in m and "dataflow" not in m:
        return None, None
    if "array" not in m or "dataflow" not in m:
        given, missing = ("array", "dataflow") if "array" in m else ("dataflow", "array")
        r.fail(f"{where}.{given}", f"needs '{missing}' too (a systolic array has both)")
    shape = r.array(m["array"], f"{where}.array")
    if len(shape) != 2:
        r.fail(f"{where}.array", "must be [rows, cols]", shape)
    rows, cols = (r.integer(v, f"{where}.array[{i}]", positive=True) for i, v in enumerate(shape))
    if max(rows, cols) > MAX_ARRAY_SIDE:
        r.fail(f"{where}.array", f"must have at most {MAX_ARRAY_SIDE} rows and columns", shape)
    if m.get("unit", "flop") != "flop":
        r.fail(f"{where}.unit", "must be 'flop' on a systolic array", m["unit"])
    return (rows, cols), r.choice(m["dataflow"], f"{where}.dataflow", DATAFLOWS)


def _buffers(
    m: dict[str, Any], where: str, r: Reader, array: tuple[int, int] | None
) -> tuple[float, float, float] | None:
    """A systolic array's ``buffers``: KB held resident per operand role, all three."""
    if "buffers" not in m:
        return None
    if array is None:
        r.fail(f"{where}.buffers", "needs 'array' and 'dataflow' (only a systolic array has them)")
    raw = r.object(m["buffers"], f"{where}.buffers")
    r.only(raw, set(BUFFER_ROLES), f"{where}.buffers")
    kb = [
        r.number(r.get(raw, role, f"{where}.buffers"), f"{where}.buffers.{role}", positive=True)
        for role in BUFFER_ROLES
    ]
    return kb[0], kb[1], kb[2]


def _throughput(m: dict[str, Any], where: str, r: Reader, array: tuple[int, int] | None) -> float:
    """``throughput_ops_per_cycle``; on a systolic array 2·rows·cols, which it may omit."""
    if array is None or "throughput_ops_per_cycle" in m:
        value = r.number(
            r.get(m, "throughput_ops_per_cycle", where),
            f"{where}.throughput_ops_per_cycle",
            positive=True,
        )
    else:
        value = 2.0 * array[0] * array[1]
    if array is not None and value != 2 * array[0] * array[1]:
        r.fail(
            f"{where}.throughput_ops_per_cycle",
            f"must be 2 * rows * cols = {2 * array[0] * array[1]} FLOP/cycle for its "
            f"array {list(array)} (or be left out)",
            value,
        )
    return value


def _area(value: Any, where: str, r: Reader) -> float:
    """A module's area; null (not published, e.g. a GPU's SMs) reads as NaN."""
    return math.nan if value is None else r.number(value, where)


def _unique(names: list[str], where: str, r: Reader) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            r.fail(f"{where}[{i}].name", "repeats the name of an earlier entry", name)
        seen.add(name)

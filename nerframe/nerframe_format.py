"""Reading nerframe's own accelerator format into an `Accelerator`.

The format is declared once, as `nerframe.formats.accelerator.AcceleratorFile`
(``nerframe schema accelerator``; ``docs/formats.md`` documents every field), and
read under the policy of every input file (`nerframe.formats`): unknown fields,
keys given twice, booleans as numbers, fractions as integers, wrong encodings and
out-of-range values are refused in one line naming the file, the field path and the
value. This module adds the checks a type cannot express (names unique, mapping
entries naming modules, a systolic array's shape and throughput, a reachable module
type) and what a file inherits from the one it ``extends``.

>>> from nerframe.hardware import accelerator
>>> accelerator("icarus").modules[0].unit
'sample'
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path
from typing import Any, NoReturn

import msgspec
from msgspec import UNSET

from nerframe import technology as node_table
from nerframe.accelerator_model import (
    Accelerator,
    Assumption,
    Module,
    Sram,
    check_assumption,
    copied_area_warnings,
)
from nerframe.errors import InvalidInputError, NerframeError
from nerframe.formats import _shown, convert
from nerframe.formats.accelerator import AcceleratorFile, ModuleRecord
from nerframe.taxonomy import HOST, PREFERENCES, op_key

_TOP = {info.encode_name for info in msgspec.structs.fields(AcceleratorFile)}


def is_nerframe_format(data: Any) -> bool:
    """Whether parsed JSON looks like nerframe's format (it names a known top-level field).

    >>> is_nerframe_format({"modules": []}), is_nerframe_format({"hardware_modules": {}})
    (True, False)
    """
    return isinstance(data, dict) and bool(_TOP & data.keys())


def from_nerframe(data: object, path: Path, load: Callable[[str], Accelerator]) -> Accelerator:
    """The accelerator a parsed nerframe-format file describes.

    A file with ``"extends": NAME`` adds its modules, SRAM and mapping entries to
    the accelerator `load(NAME)` (a GPU that a plug-in sits beside, say); the figures
    it leaves out (clock, DRAM, node, SRAM density, memory efficiency, kind, gather
    sector) are the base's. ``compute_efficiency`` applies to the file's own modules
    only.
    """
    shown = str(path)
    f = convert(data, AcceleratorFile, source=shown)
    base = _base(f, shown, load)

    def inherited(key: str, default: Any = UNSET) -> Any:
        value = getattr(f, key)
        if value is not UNSET:
            return value
        if base is not None:
            return getattr(base, key)
        if default is UNSET:
            raise InvalidInputError(
                f"{shown}: missing field '{key}' (required unless the file extends another)",
                key,
            )
        return default

    frequency = float(inherited("frequency_mhz"))
    bandwidth = float(inherited("dram_bandwidth_gbps"))
    dram_energy = float(inherited("dram_pj_per_byte"))
    technology = inherited("technology_nm", None)
    technology_nm = math.nan if technology is None else float(technology)
    own_figures = f.leakage_uw_per_mm2 is not UNSET and f.sram_pj_per_byte is not UNSET
    if inherited("kind", "accelerator") != "gpu" and not own_figures:
        node_table.check_node(technology_nm, shown)  # else silently no leakage, free SRAM
    own = [
        _module(m, f"modules[{i}]", shown, f.compute_efficiency) for i, m in enumerate(f.modules)
    ]
    modules = [*(base.modules if base else ()), *own]
    _unique([m.name for m in modules], "modules", shown)

    sram = [*(base.sram if base else ()), *(Sram(s.name, s.size_kb, s.area_um2) for s in f.sram)]
    _unique([s.name for s in sram], "sram", shown)
    if f.sram_um2_per_kb is not UNSET:
        density = f.sram_um2_per_kb
    elif base is not None and not math.isnan(base.sram_um2_per_kb):
        # the base's blocks keep the density they were sized with (its own or its node's)
        density = base.sram_um2_per_kb
    elif any(s.area_um2 is None for s in sram) and node_table.covers(technology_nm):
        # the node's SRAM density (nerframe.technology) for blocks without an area
        density = node_table.sram_um2_per_kb(technology_nm)
    elif any(s.area_um2 is None for s in sram):
        raise InvalidInputError(
            f"{shown}: missing field 'sram_um2_per_kb' (an SRAM block has no area_um2 "
            "and the file's technology_nm is not in the node table)",
            "sram_um2_per_kb",
        )
    else:
        density = math.nan

    names = [m.name for m in modules]
    for key, value in f.operator_mapping.items():
        if op_key(key) is None:
            _fail(
                shown,
                "operator_mapping",
                f"has key '{key}', which is not a catalogue op type "
                "(optionally followed by ' (B)' for backward rows)",
            )
        if value not in names:
            _fail(
                shown,
                f"operator_mapping.{key}",
                f"names no module of this file (modules: {', '.join(names)})",
                value,
            )

    # A module no op can reach (its type in no preference list, no entry naming it)
    # is a mistyped type: "WARP_DRIVE" would otherwise load and never run anything.
    reachable = {HOST, *(t for types in PREFERENCES.values() for t in types)}
    named = {*f.operator_mapping.values(), *(base.operator_mapping.values() if base else ())}
    for i, module in enumerate(own):
        if module.type.upper() not in reachable and module.name not in named:
            _fail(
                shown,
                f"modules[{i}].type",
                "is a type no op type prefers, and no operator_mapping entry names the "
                f"module (types: {', '.join(sorted(reachable))})",
                module.type,
            )

    sources = (
        [*f.sources, *(f"{base.name}: {source}" for source in base.sources)] if base else f.sources
    )
    result = Accelerator(
        name=f.name,
        description=f.description,
        frequency_mhz=frequency,
        dram_bandwidth_gbps=bandwidth,
        dram_pj_per_byte=dram_energy,
        technology_nm=technology_nm,
        sram_um2_per_kb=density,
        modules=tuple(modules),
        sram=tuple(sram),
        operator_mapping={**(base.operator_mapping if base else {}), **f.operator_mapping},
        sources=tuple(sources),
        warnings=tuple(copied_area_warnings(own)),
        path=shown,
        source_format="nerframe",
        kind=inherited("kind", "accelerator"),
        memory_efficiency=float(inherited("memory_efficiency", 1.0)),
        # not inherited: a plug-in's node decides (NaN: the node table's)
        sram_pj_per_byte=math.nan if f.sram_pj_per_byte is UNSET else f.sram_pj_per_byte,
        leakage_uw_per_mm2=math.nan if f.leakage_uw_per_mm2 is UNSET else f.leakage_uw_per_mm2,
        gather_sector_bytes=float(inherited("gather_sector_bytes", 0.0)),
        l2_cache_kb=float(inherited("l2_cache_kb", 0.0)),
        l2_bytes_per_cycle=float(inherited("l2_bytes_per_cycle", 0.0)),
    )
    return replace(result, assumptions=_assumptions(f, base, result, shown))


def _assumptions(
    f: AcceleratorFile, base: Accelerator | None, accel: Accelerator, shown: str
) -> tuple[Assumption, ...]:
    """The base's assumptions (those on a parameter this file assumes again replaced)
    and the file's own, each checked against `accel`."""
    own = [Assumption(a.parameter, float(a.low), float(a.high), a.reason) for a in f.assumptions]
    _unique([a.parameter for a in own], "assumptions", shown, "parameter")
    for i, assumption in enumerate(own):
        problem = check_assumption(accel, assumption)
        if problem is not None:
            _fail(shown, f"assumptions[{i}]", f"({assumption.parameter}): {problem}")
    mine = {a.parameter for a in own}
    kept = [a for a in (base.assumptions if base else ()) if a.parameter not in mine]
    for assumption in kept:  # the file may have changed the base's figure
        problem = check_assumption(accel, assumption)
        if problem is not None:
            _fail(
                shown,
                "assumptions",
                f"inherits {assumption.parameter} from '{f.extends}', but {problem}; "
                "assume it again with a range that holds the file's value",
            )
    return (*kept, *own)


def _fail(shown: str, where: str, problem: str, value: object = UNSET) -> NoReturn:
    got = "" if value is UNSET else f", got {_shown(value)}"
    raise InvalidInputError(f"{shown}: field '{where}' {problem}{got}", where)


def _base(f: AcceleratorFile, shown: str, load: Callable[[str], Accelerator]) -> Accelerator | None:
    if f.extends is UNSET:
        return None
    try:
        return load(f.extends)
    except NerframeError as e:
        if e.culprit == "extends":  # a cycle, already shown whole from the first file
            raise
        raise InvalidInputError(
            f"{shown}: field 'extends' names no loadable accelerator ({e})", "extends"
        ) from None


def _module(m: ModuleRecord, where: str, shown: str, efficiency: float) -> Module:
    array = None if m.array is UNSET else m.array
    dataflow = None if m.dataflow is UNSET else m.dataflow
    if (array is None) != (dataflow is None):
        given, missing = ("array", "dataflow") if array is not None else ("dataflow", "array")
        _fail(shown, f"{where}.{given}", f"needs '{missing}' too (a systolic array has both)")
    if m.bitwidth is not None and (m.unit != "flop" or array is not None):
        _fail(
            shown,
            f"{where}.bitwidth",
            "applies to a FLOP-rated module that is not a systolic array",
            m.bitwidth,
        )
    if array is not None and m.unit != "flop":
        _fail(shown, f"{where}.unit", "must be 'flop' on a systolic array", m.unit)
    if m.throughput_ops_per_cycle is not UNSET:
        throughput = m.throughput_ops_per_cycle
    elif array is not None:  # a systolic array's rows x cols MACs, 2 FLOPs each
        throughput = 2.0 * array[0] * array[1]
    else:
        raise InvalidInputError(
            f"{shown}: missing field '{where}.throughput_ops_per_cycle'",
            f"{where}.throughput_ops_per_cycle",
        )
    buffers = None
    if m.buffers is not UNSET:
        if array is None:
            _fail(
                shown,
                f"{where}.buffers",
                "needs 'array' and 'dataflow' (only a systolic array has them)",
            )
        buffers = (float(m.buffers.input), float(m.buffers.weight), float(m.buffers.output))
    if array is not None and throughput != 2 * array[0] * array[1]:
        _fail(
            shown,
            f"{where}.throughput_ops_per_cycle",
            f"must be 2 * rows * cols = {2 * array[0] * array[1]} FLOP/cycle for its "
            f"array {list(array)} (or be left out)",
            throughput,
        )
    return Module(
        name=m.name,
        type=m.type,
        count=m.count,
        throughput_ops_per_cycle=float(throughput),
        latency_cycles=m.latency_cycles,
        area_um2=math.nan if m.area_um2 is None else float(m.area_um2),
        power_uw=float(m.power_uw),
        memory_kb=float(m.memory_kb),
        unit=m.unit,
        on_chip=m.on_chip,
        power_reference_mhz=None if m.power_reference_mhz is None else float(m.power_reference_mhz),
        efficiency=efficiency,
        array=array,
        dataflow=dataflow,
        buffers=buffers,
        bitwidth=m.bitwidth,
    )


def _unique(names: list[str], where: str, shown: str, key: str = "name") -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            _fail(shown, f"{where}[{i}].{key}", f"repeats the {key} of an earlier entry", name)
        seen.add(name)

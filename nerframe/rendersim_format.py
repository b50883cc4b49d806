"""Reading the original framework's (RenderSim's) accelerator format, leniently.

The format is foreign and known to be defective, so its extra fields are tolerated
and its defects become load warnings (`Accelerator.warnings`), never silent fixes;
only what nerframe needs must be there. What it reads is declared in
`nerframe.formats.rendersim` and converted under the policy of every input file;
this module checks what the declaration cannot say and builds the `Accelerator`.
Its throughputs are read as FLOPs per cycle (with a warning: they may count MACs);
the format has no work units, on-chip marks, reference clocks or efficiencies, so
those take their defaults.

>>> is_rendersim_format({"hardware_modules": {}})
True
"""

from __future__ import annotations

import math
import re
import statistics
from collections.abc import Sequence
from pathlib import Path
from typing import Any, TypeVar

from msgspec import UNSET, UnsetType

from nerframe import technology as node_table
from nerframe.accelerator_model import Accelerator, Module, Sram, copied_area_warnings
from nerframe.errors import InvalidInputError
from nerframe.formats import convert
from nerframe.formats.rendersim import HardwareModule, RenderSimFile
from nerframe.taxonomy import op_key

T = TypeVar("T")

ASSUMED_DRAM_BANDWIDTH_GBPS = 51.2
"""Bandwidth given to an original-format file that states none (with a warning):
the DDR4 main memory that the original ICARUS and CICERO files describe."""

ASSUMED_DRAM_PJ_PER_BYTE = 20.0
"""DRAM energy given to an original-format file (the format has no such figure), with
a warning: 2.5 pJ/bit, an order-of-magnitude figure, the one every built-in assumes."""

ASSUMED_SRAM_UM2_PER_KB = 1758.0
"""SRAM density for original-format blocks without an area, with a warning: the
density of every SRAM block of the original ICARUS file (40 nm)."""


def is_rendersim_format(data: Any) -> bool:
    """Whether parsed JSON looks like the original framework's format."""
    return isinstance(data, dict) and ("hardware_modules" in data or "accelerator_name" in data)


def from_rendersim(data: dict[str, Any], path: Path) -> Accelerator:
    """The `Accelerator` of parsed original-format file `path`, with its load warnings."""
    shown = str(path)
    f = convert(data, RenderSimFile, source=shown)
    warnings: list[str] = []
    name = f.accelerator_name
    modules: list[Module] = []
    interfaces: dict[str, float] = {}  # memory-interface modules left out -> their bandwidth
    clocks: dict[str, float] = {}
    no_memory: list[str] = []
    suspect_macs: list[str] = []
    for key, m in f.hardware_modules.items():
        where = f"hardware_modules.{key}"
        perf, res = m.performance, m.resources
        if perf.throughput_ops_per_cycle is UNSET and perf.bandwidth_gbps is not UNSET:
            interfaces[key] = perf.bandwidth_gbps
            area, power = _as_given(res.area_um2), _as_given(res.power_uw)
            warnings.append(
                f"module '{key}' ({m.module_type}) gives a bandwidth, not a throughput: it is a "
                "memory interface, modelled by the DRAM bandwidth and left out of the modules "
                f"(its area_um2 {area} and power_uw {power} are not counted)"
            )
            continue
        if perf.max_frequency_mhz is not UNSET:
            clocks[key] = perf.max_frequency_mhz
        if res.memory_kb is UNSET:
            no_memory.append(key)
        module = Module(
            name=key,
            type=m.module_type,
            count=_required(m.count, shown, f"{where}.count"),
            throughput_ops_per_cycle=_required(
                perf.throughput_ops_per_cycle,
                shown,
                f"{where}.performance.throughput_ops_per_cycle",
            ),
            latency_cycles=_required(
                perf.latency_cycles, shown, f"{where}.performance.latency_cycles"
            ),
            area_um2=_required(res.area_um2, shown, f"{where}.resources.area_um2"),
            power_uw=_required(res.power_uw, shown, f"{where}.resources.power_uw"),
            memory_kb=0.0 if res.memory_kb is UNSET else res.memory_kb,
        )
        if _looks_like_macs(m, module):
            suspect_macs.append(f"{key} ({module.throughput_ops_per_cycle:g})")
        modules.append(module)
    if not modules:
        raise InvalidInputError(
            f"{shown}: field 'hardware_modules' has no module with a throughput_ops_per_cycle",
            "hardware_modules",
        )

    warnings.extend(_name_mismatch(name, path, modules))
    frequency = _rendersim_frequency(f, shown, clocks, warnings)
    bandwidth = _rendersim_bandwidth(f, interfaces, warnings)
    technology = f.system_specifications.technology_node_nm
    if technology is not None:  # the format gives no leakage or SRAM energy of its own
        node_table.check_node(technology, shown, "system_specifications.technology_node_nm")
    sram, density = _rendersim_sram(f, warnings)
    operator_mapping, type_mapping = _rendersim_mapping(f, modules, interfaces, warnings)

    macs = f" (likely MAC counts: {', '.join(suspect_macs)})" if suspect_macs else ""
    warnings.append(
        "throughput_ops_per_cycle is used as FLOP/cycle as given, but original-format files "
        f"may count MACs (2 FLOPs each){macs}"
    )
    warnings.append(
        f"the original format has no DRAM energy: dram_pj_per_byte assumed "
        f"{ASSUMED_DRAM_PJ_PER_BYTE:g}"
    )
    if no_memory:
        warnings.append(f"modules {', '.join(no_memory)} give no memory_kb: taken as 0")
    warnings.extend(copied_area_warnings(modules))
    description = f.accelerator_type
    return Accelerator(
        name=name,
        description=description if isinstance(description, str) else "",
        frequency_mhz=frequency,
        dram_bandwidth_gbps=bandwidth,
        dram_pj_per_byte=ASSUMED_DRAM_PJ_PER_BYTE,
        technology_nm=math.nan if technology is None else technology,
        sram_um2_per_kb=density,
        modules=tuple(modules),
        sram=tuple(sram),
        operator_mapping=operator_mapping,
        sources=(f"original-format accelerator file {path.name}",),
        warnings=tuple(warnings),
        path=shown,
        source_format="rendersim",
        type_mapping=type_mapping,
    )


def _required(value: T | UnsetType, shown: str, where: str) -> T:
    """`value`, which a compute module must give (a memory interface need not)."""
    if value is UNSET:
        raise InvalidInputError(f"{shown}: missing field {where!r}", where)
    return value


def _as_given(value: float | UnsetType) -> object:
    """A figure as the file wrote it (an integer without ``.0``; None when absent)."""
    if value is UNSET:
        return None
    return int(value) if value.is_integer() else value


def _looks_like_macs(raw: HardwareModule, module: Module) -> bool:
    # a systolic array of R x C processing elements does R*C MACs per cycle
    spec = raw.specifications
    size = spec.get("array_size") if isinstance(spec, dict) else None
    if isinstance(size, str) and (match := re.fullmatch(r"(\d+)\s*x\s*(\d+)", size)):
        return int(match[1]) * int(match[2]) == module.throughput_ops_per_cycle
    implementation = "" if raw.implementation is None else raw.implementation
    return "systolic" in str(implementation).lower()


def _name_mismatch(name: str, path: Path, modules: Sequence[Module]) -> list[str]:
    def norm(text: str) -> str:
        return re.sub(r"[^a-z0-9]", "", text.lower())

    stem = norm(re.sub(r"[_\-. ]?config$", "", path.stem, flags=re.IGNORECASE))
    said = norm(name)
    if not stem or not said or stem in said or said in stem:
        return []
    return [
        f"accelerator_name '{name}' does not match the file name '{path.name}': the file may "
        f"describe another accelerator (its modules: {', '.join(m.name for m in modules)}); "
        f"name kept as '{name}'"
    ]


def _rendersim_frequency(
    f: RenderSimFile, shown: str, clocks: dict[str, float], warnings: list[str]
) -> float:
    frequency = f.system_specifications.target_frequency_mhz
    if frequency is not UNSET:
        slow = [f"{k} ({v:g})" for k, v in clocks.items() if v < frequency]
        if slow:
            warnings.append(
                f"target_frequency_mhz {frequency:g} exceeds the max_frequency_mhz of "
                f"modules {', '.join(slow)}"
            )
        return frequency
    if not clocks:
        raise InvalidInputError(
            f"{shown}: missing field 'system_specifications.target_frequency_mhz' "
            "(and no module gives performance.max_frequency_mhz)",
            "system_specifications.target_frequency_mhz",
        )
    # one clock for the whole chip: the fastest that every module can run at
    frequency = min(clocks.values())
    spread = (
        "" if len(set(clocks.values())) == 1 else f" (modules range up to {max(clocks.values()):g})"
    )
    warnings.append(
        "system_specifications.target_frequency_mhz is missing: using the modules' lowest "
        f"max_frequency_mhz, {frequency:g}{spread}"
    )
    return frequency


def _rendersim_bandwidth(
    f: RenderSimFile, interfaces: dict[str, float], warnings: list[str]
) -> float:
    # the spec names the first two places; newer original files use the third
    memory = f.memory_hierarchy
    main = None if memory is None else memory.main_memory
    candidates = {
        "dram_bandwidth_gbps": f.dram_bandwidth_gbps,
        "memory_hierarchy.main_memory.bandwidth_gbps": None
        if main is None
        else main.bandwidth_gbps,
        "memory_hierarchy.dram_bandwidth_gbps": None
        if memory is None
        else memory.dram_bandwidth_gbps,
    }
    given = {k: v for k, v in candidates.items() if v is not None}
    if not given:
        warnings.append(
            "no DRAM bandwidth (dram_bandwidth_gbps or memory_hierarchy.main_memory."
            f"bandwidth_gbps): assumed {ASSUMED_DRAM_BANDWIDTH_GBPS:g} GB/s"
        )
        return ASSUMED_DRAM_BANDWIDTH_GBPS
    where, bandwidth = next(iter(given.items()))
    others = {k: v for k, v in given.items() if v != bandwidth}
    others.update({f"module {k}": v for k, v in interfaces.items() if v != bandwidth})
    if others:
        listed = ", ".join(f"{k} says {v:g}" for k, v in others.items())
        warnings.append(f"DRAM bandwidth {bandwidth:g} GB/s taken from {where}, but {listed}")
    return bandwidth


def _rendersim_sram(f: RenderSimFile, warnings: list[str]) -> tuple[list[Sram], float]:
    blocks = [Sram(name=b.name, size_kb=b.size_kb, area_um2=b.area_um2) for b in f.sram_blocks]
    sized = [b.area_um2 / b.size_kb for b in blocks if b.area_um2 is not None]
    if not blocks:
        return blocks, math.nan
    if not sized:
        warnings.append(
            f"SRAM blocks give no area_um2: assumed {ASSUMED_SRAM_UM2_PER_KB:g} um2 per KB"
        )
        return blocks, ASSUMED_SRAM_UM2_PER_KB
    density = statistics.median(sized)
    for block in blocks:
        area = block.area_um2
        ratio = math.nan if area is None else area / block.size_kb / density
        if not math.isnan(ratio) and not 0.5 <= ratio <= 2:
            warnings.append(
                f"SRAM block '{block.name}': area_um2 {area:.0f} for size_kb {block.size_kb:g} is "
                f"{ratio:.3g} times the file's typical {density:.0f} um2 per KB (a size in the "
                "wrong unit?); area used as given"
            )
    if len(sized) < len(blocks):
        warnings.append(
            f"some SRAM blocks give no area_um2: sized at the others' {density:g} um2 per KB"
        )
    return blocks, density


def _rendersim_mapping(
    f: RenderSimFile,
    modules: Sequence[Module],
    interfaces: dict[str, float],
    warnings: list[str],
) -> tuple[dict[str, str], dict[str, str]]:
    # Original keys are mostly module types or categories, not op types: they become
    # type preferences (mapping step 2); op-type keys keep their step-1 meaning.
    names = {m.name for m in modules}
    operator_mapping: dict[str, str] = {}
    type_mapping: dict[str, str] = {}
    for key, target in f.operator_mapping.items():
        if target not in names:
            why = "a memory interface left out" if target in interfaces else "not in the file"
            warnings.append(
                f"operator_mapping entry '{key}' names module '{target}' ({why}): ignored"
            )
        elif op_key(key) is not None:
            operator_mapping[key] = target
        else:
            type_mapping[key] = target
    return operator_mapping, type_mapping

"""Accelerator descriptions: loading, validation, tables and operator mapping.

An accelerator is a JSON file in nerframe's own format (``spec/hardware.md``) or in
the original framework's format; `accelerator` tells them apart by their keys. The
eight built-ins live in ``nerframe/accelerators/`` as nerframe-format files.

nerframe's format is read strictly: unknown fields (except inside ``"notes"``),
missing fields, wrong types and out-of-range values are errors naming the file, the
field and the value. The original format is foreign and known to be defective, so
its extra fields are tolerated and its defects become load warnings
(`Accelerator.warnings`), never silent fixes; only what nerframe needs must be there.

>>> from nerframe.hardware import accelerator, map_operators
>>> neurex = accelerator("neurex")
>>> neurex.frequency_mhz, neurex.modules[0].name
(1000.0, 'index_generation_unit')
>>> rows = map_operators(["HashEncoding", "MLP"], [False, False], neurex)
>>> [neurex.modules[i].name for i in rows]
['index_generation_unit', 'systolic_array_32x32']
"""

from __future__ import annotations

import json
import math
import re
import statistics
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, NoReturn

import numpy as np
import polars as pl

from nerframe import schemas
from nerframe.errors import NerframeError, UnmappedError, did_you_mean
from nerframe.taxonomy import OP_TYPES

BUILTIN: tuple[str, ...] = (
    "icarus",
    "neurex",
    "neurex_server",
    "cicero",
    "gscore",
    "gsarch",
    "gbu",
    "instant3d",
)
"""Names of the built-in accelerators (files ``nerframe/accelerators/<name>.json``)."""

_BUILTIN_DIR = Path(__file__).with_name("accelerators")

ASSUMED_DRAM_BANDWIDTH_GBPS = 51.2
"""Bandwidth given to an original-format file that states none (with a warning):
the DDR4 main memory that the original ICARUS and CICERO files describe."""

ASSUMED_DRAM_PJ_PER_BYTE = 20.0
"""DRAM energy given to an original-format file (the format has no such figure), with
a warning: 2.5 pJ/bit, an order-of-magnitude figure, the one every built-in assumes."""

ASSUMED_SRAM_UM2_PER_KB = 1758.0
"""SRAM density for original-format blocks without an area, with a warning: the
density of every SRAM block of the original ICARUS file (40 nm)."""

HOST = "HOST"
"""Module type that takes any operator no other rule maps."""

PREFERENCES: dict[str, tuple[str, ...]] = {
    "UniformSampler": ("SAMPLING", "VOLUME_RENDERING"),
    "PDFSampler": ("SAMPLING", "VOLUME_RENDERING"),
    "FrustumCulling": ("FRUSTUM_CULLING", "SAMPLING"),
    "Projection": ("PROJECTION", "SAMPLING"),
    "AABBIntersection": ("INTERSECTION", "SAMPLING"),
    "OBBIntersection": ("INTERSECTION", "SAMPLING"),
    "FrustumCullingProjection": ("FRUSTUM_CULLING", "PROJECTION", "SAMPLING"),
    "HashEncoding": ("HASH_ENCODE", "ENCODING"),
    "IndexGeneration": ("INDEX_GENERATION", "HASH_ENCODE", "ENCODING"),
    "HashLookup": ("HASH_LOOKUP", "HASH_ENCODE", "ENCODING"),
    "Interpolation": ("INTERPOLATION", "HASH_ENCODE", "ENCODING"),
    "PointArrange": ("POINT_ARRANGE", "ENCODING"),
    "RFFEncoding": ("POSITIONAL_ENCODE", "ENCODING"),
    "MLP": ("MLP", "FIELD_COMPUTATION"),
    "SphericalHarmonics": ("SPHERICAL_HARMONICS", "FEATURECOMPUTE", "FIELD_COMPUTATION"),
    "RGBRenderer": ("VOLUME_RENDERING", "BLENDING"),
    "DensityRenderer": ("VOLUME_RENDERING", "BLENDING"),
    "Sorting": ("SORTING", "VOLUME_RENDERING"),
    "GaussianAlphaBlend": ("VOLUME_RENDERING", "BLENDING"),
    "SubtileSkip": ("SUBTILE_SKIP", "OPTIMIZATION"),
    "SensitivityPrediction": ("SENSITIVITY_PREDICTION", "OPTIMIZATION"),
    "Recovery": ("RECOVERY", "OPTIMIZATION"),
    "TileMerging": ("TILEMERGING", "OPTIMIZATION"),
    "FeatureCompute": ("FEATURECOMPUTE", "OPTIMIZATION"),
    "GradientCompute": ("GRADIENTCOMPUTE", "OPTIMIZATION"),
    "GradientPruning": ("GRADIENTPRUNING", "OPTIMIZATION"),
    "Rearrangement": ("REARRANGEMENT", "OPTIMIZATION"),
    "RowProcessing": ("ROWPROCESSING", "OPTIMIZATION"),
    "RowGeneration": ("ROWGENERATION", "OPTIMIZATION"),
    "DecompBinning": ("DECOMPBINNING", "OPTIMIZATION"),
    "FRM": ("FRM", "OPTIMIZATION"),
    "BUM": ("BUM", "OPTIMIZATION"),
}
"""Default preference table: op type -> module types, best first (mapping step 2).

Module types are free-form strings compared case-insensitively. The names follow the
original framework's files (``ENCODING``, ``FIELD_COMPUTATION``, ``VOLUME_RENDERING``,
``SORTING``, ``TILEMERGING``, ``ROWPROCESSING``, ``FRM``, ``BUM``…); an op type's own
upper-case name comes first where a dedicated unit is plausible, and a catalogue
category (``SAMPLING``, ``ENCODING``, ``BLENDING``, ``OPTIMIZATION``) last, so a
module typed by category takes that category's operators.
"""

_BACKWARD = " (B)"


@dataclass(frozen=True)
class Module:
    """One kind of hardware unit; `count` identical instances of it."""

    name: str
    type: str
    count: int
    throughput_ops_per_cycle: float
    latency_cycles: int
    area_um2: float
    power_uw: float
    memory_kb: float


@dataclass(frozen=True)
class Sram:
    """An on-chip SRAM block; ``area_um2`` None means ``size_kb * sram_um2_per_kb``."""

    name: str
    size_kb: float
    area_um2: float | None = None


@dataclass(frozen=True)
class Accelerator:
    """A validated accelerator description.

    ``operator_mapping`` maps an op type (or ``"<op_type> (B)"`` for backward rows)
    to a module name. ``type_mapping`` maps a module type or category to a module
    name: it holds the original format's operator_mapping keys that are not op types
    (``HASH_ENCODE``, ``FIELD_COMPUTATION``, ``SAMPLING``…), which act as extra
    preferences in mapping step 2. ``technology_nm`` and ``sram_um2_per_kb`` are NaN
    when a file does not give them (neither affects a figure then).
    """

    name: str
    description: str
    frequency_mhz: float
    dram_bandwidth_gbps: float
    dram_pj_per_byte: float
    technology_nm: float
    sram_um2_per_kb: float
    modules: tuple[Module, ...]
    sram: tuple[Sram, ...]
    operator_mapping: dict[str, str]
    sources: tuple[str, ...] = ()
    warnings: tuple[str, ...] = ()
    path: str = ""
    source_format: str = "nerframe"
    type_mapping: dict[str, str] = field(default_factory=dict)

    @property
    def peak_tflops(self) -> float:
        """Σ throughput × count × frequency, in TFLOP/s."""
        per_cycle = sum(m.throughput_ops_per_cycle * m.count for m in self.modules)
        return per_cycle * self.frequency_mhz * 1e6 / 1e12

    @property
    def area_mm2(self) -> float:
        """Σ module area × count + Σ SRAM area, in mm²."""
        modules = sum(m.area_um2 * m.count for m in self.modules)
        return (modules + self.sram_area_um2) / 1e6

    @property
    def sram_area_um2(self) -> float:
        """Σ SRAM block area (its own ``area_um2``, else ``size_kb * sram_um2_per_kb``)."""
        return sum(
            s.area_um2 if s.area_um2 is not None else s.size_kb * self.sram_um2_per_kb
            for s in self.sram
        )

    @property
    def bytes_per_cycle(self) -> float:
        """DRAM bytes deliverable per clock cycle."""
        return self.dram_bandwidth_gbps * 1e9 / (self.frequency_mhz * 1e6)

    def module_index(self, name: str) -> int:
        """Position of module `name` in `modules`."""
        for i, module in enumerate(self.modules):
            if module.name == name:
                return i
        raise NerframeError(
            f"accelerator '{self.name}' has no module '{name}'; "
            f"its modules: {_list_modules(self.modules)}"
        )


def accelerator(name_or_path: str | Path) -> Accelerator:
    """Load a built-in accelerator by name, or a JSON file in either format.

    >>> accelerator("gscore").source_format
    'nerframe'
    """
    if isinstance(name_or_path, str) and name_or_path.lower() in BUILTIN:
        return _load(_BUILTIN_DIR / f"{name_or_path.lower()}.json")
    path = Path(name_or_path)
    if isinstance(name_or_path, str) and path.suffix.lower() != ".json" and not path.exists():
        raise NerframeError(
            f"unknown accelerator '{name_or_path}'{did_you_mean(name_or_path, BUILTIN)}; "
            f"built-in: {', '.join(BUILTIN)} "
            "(or give the path of a .json file)"
        )
    return _load(path)


def accelerators() -> pl.DataFrame:
    """One row per built-in accelerator (schema ``schemas.ACCELERATORS``).

    >>> accelerators().height
    8
    """
    return accelerator_table([accelerator(name) for name in BUILTIN])


def accelerator_table(accels: Sequence[Accelerator]) -> pl.DataFrame:
    """One row per accelerator (schema ``schemas.ACCELERATORS``); unknown figures are null."""
    rows = [
        {
            "accelerator": a.name,
            "description": a.description,
            "frequency_mhz": a.frequency_mhz,
            "dram_bandwidth_gbps": a.dram_bandwidth_gbps,
            "dram_pj_per_byte": a.dram_pj_per_byte,
            "technology_nm": _or_none(a.technology_nm),
            "sram_um2_per_kb": _or_none(a.sram_um2_per_kb),
            "modules": len(a.modules),
            "peak_tflops": a.peak_tflops,
            "area_mm2": a.area_mm2,
            "source_format": a.source_format,
            "path": a.path,
            "warnings": list(a.warnings),
        }
        for a in accels
    ]
    return pl.DataFrame(rows, schema=schemas.ACCELERATORS)


def module_table(accels: Sequence[Accelerator]) -> pl.DataFrame:
    """One row per module of each accelerator (schema ``schemas.MODULES``)."""
    rows = [
        {
            "accelerator": a.name,
            "module": m.name,
            "type": m.type,
            "count": m.count,
            "throughput_ops_per_cycle": m.throughput_ops_per_cycle,
            "latency_cycles": m.latency_cycles,
            "area_um2": m.area_um2,
            "power_uw": m.power_uw,
            "memory_kb": m.memory_kb,
        }
        for a in accels
        for m in a.modules
    ]
    return pl.DataFrame(rows, schema=schemas.MODULES)


def map_operators(
    op_types: Sequence[str] | pl.Series, backward: Sequence[bool] | pl.Series, accel: Accelerator
) -> np.ndarray:
    """Module index (int64) of each row, by the rules of ``spec/hardware.md``.

    Per row: (1) ``operator_mapping["<op_type> (B)"]`` for a backward row, else
    ``operator_mapping[op_type]``; (2) the preference table `PREFERENCES`: for each
    preferred type in order, the accelerator's ``type_mapping`` entry for it, else its
    first module of that type; (3) its first ``HOST`` module. Rows left over raise a
    `NerframeError` naming every unmapped op type and the accelerator's modules.

    >>> gbu = accelerator("gbu")
    >>> rows = map_operators(["GaussianAlphaBlend"] * 2, [False, True], gbu)
    >>> [gbu.modules[i].name for i in rows]
    ['row_processing_element', 'gradient_accumulator']
    """
    if len(op_types) != len(backward):
        raise NerframeError(
            f"map_operators: {len(op_types)} op types but {len(backward)} backward flags"
        )
    if len(op_types) == 0:
        return np.empty(0, dtype=np.int64)
    rows = pl.DataFrame(
        [
            pl.Series("op_type", op_types).cast(pl.String),
            pl.Series("backward", backward).cast(pl.Boolean),
        ]
    )
    if rows.null_count().sum_horizontal().item():
        raise NerframeError("map_operators: op types and backward flags must not be null")
    keys = rows.unique(maintain_order=True)
    pairs = list(keys.iter_rows())
    found = [_resolve(t, b, accel) for t, b in pairs]
    # a backward row only adds a "(B)" key to the rules, so naming the op type suffices
    unmapped = list(dict.fromkeys(t for (t, _), i in zip(pairs, found, strict=True) if i is None))
    if unmapped:
        raise UnmappedError(_unmapped_message(unmapped, accel), unmapped, accel.name)
    lookup = keys.with_columns(pl.Series("module", found, dtype=pl.Int64))
    mapped = rows.join(lookup, on=["op_type", "backward"], how="left", maintain_order="left")
    return mapped["module"].to_numpy()


def _resolve(op_type: str, backward: bool, accel: Accelerator) -> int | None:
    explicit = accel.operator_mapping
    if backward and op_type + _BACKWARD in explicit:
        return accel.module_index(explicit[op_type + _BACKWARD])
    if op_type in explicit:
        return accel.module_index(explicit[op_type])
    by_type = {k.upper(): v for k, v in accel.type_mapping.items()}
    for wanted in PREFERENCES.get(op_type, ()):
        if wanted in by_type:
            return accel.module_index(by_type[wanted])
        for i, module in enumerate(accel.modules):
            if module.type.upper() == wanted:
                return i
    for i, module in enumerate(accel.modules):
        if module.type.upper() == HOST:
            return i
    return None


def _unmapped_message(unmapped: list[str], accel: Accelerator) -> str:
    wanted = "; ".join(f"{t}: {', '.join(PREFERENCES.get(t, ())) or 'none'}" for t in unmapped)
    return (
        f"accelerator '{accel.name}' has no module for op types {', '.join(unmapped)} "
        f"(no operator_mapping entry, no module of a preferred type [{wanted}], "
        f"no {HOST} module); its modules: {_list_modules(accel.modules)}"
    )


def _list_modules(modules: Sequence[Module]) -> str:
    return ", ".join(f"{m.name} ({m.type})" for m in modules)


def _or_none(value: float) -> float | None:
    return None if math.isnan(value) else value


# ---------------------------------------------------------------------------
# Loading

_NERFRAME_TOP = {
    "name",
    "description",
    "frequency_mhz",
    "dram_bandwidth_gbps",
    "dram_pj_per_byte",
    "technology_nm",
    "sram_um2_per_kb",
    "modules",
    "sram",
    "operator_mapping",
    "sources",
    "notes",
}
_NERFRAME_MODULE = {
    "name",
    "type",
    "count",
    "throughput_ops_per_cycle",
    "latency_cycles",
    "area_um2",
    "power_uw",
    "memory_kb",
}
_NERFRAME_SRAM = {"name", "size_kb", "area_um2"}
_OP_KEY = re.compile(r"^(?P<op>.+?)(?P<bwd> \(B\))?$")
_UNSET = object()


class _Reader:
    """Typed access to parsed JSON whose errors name the file, the field and the value."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, problem: str, value: Any = _UNSET) -> NoReturn:
        shown = "" if value is _UNSET else f", got {json.dumps(value)}"
        raise NerframeError(f"{self.path}: field '{where}' {problem}{shown}")

    def get(self, obj: dict[str, Any], key: str, where: str) -> Any:
        if key not in obj:
            raise NerframeError(f"{self.path}: missing field '{_at(where, key)}'")
        return obj[key]

    def only(self, obj: dict[str, Any], allowed: set[str], where: str) -> None:
        for key in obj:
            if key not in allowed:
                raise NerframeError(
                    f"{self.path}: unknown field '{_at(where, key)}'"
                    f"{did_you_mean(key, allowed)} (allowed: {', '.join(sorted(allowed))})"
                )

    def object(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(where, "must be an object", value)
        return value

    def array(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            self.fail(where, "must be a list", value)
        return value

    def string(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            self.fail(where, "must be a non-empty string", value)
        return value

    def number(self, value: Any, where: str, *, positive: bool = False) -> float:
        # bool is an int subclass in Python; in an accelerator file it is a typo
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        number = float(value) if ok and abs(value) < 1e300 else math.nan
        if not math.isfinite(number) or number < 0 or (positive and number == 0):
            self.fail(
                where, f"must be a {'positive' if positive else 'non-negative'} number", value
            )
        return number

    def integer(self, value: Any, where: str, *, positive: bool = False) -> int:
        number = self.number(value, where, positive=positive)
        if not number.is_integer():
            self.fail(
                where, f"must be a {'positive' if positive else 'non-negative'} integer", value
            )
        return int(number)


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def _load(path: Path) -> Accelerator:
    shown = str(path)
    if not path.exists():
        raise NerframeError(f"accelerator file '{shown}' not found")
    if not path.is_file():
        raise NerframeError(f"accelerator file '{shown}' is not a file")
    try:
        text = path.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as exc:
        raise NerframeError(f"cannot read accelerator file '{shown}': {exc}") from exc
    try:
        data = json.loads(text, object_pairs_hook=_no_duplicates(shown))
    except json.JSONDecodeError as exc:
        raise NerframeError(
            f"{shown}: malformed JSON at line {exc.lineno}, column {exc.colno}: {exc.msg}"
        ) from exc
    reader = _Reader(shown)
    if isinstance(data, dict) and ("hardware_modules" in data or "accelerator_name" in data):
        return _from_rendersim(data, reader, path)
    if isinstance(data, dict) and _NERFRAME_TOP & data.keys():
        return _from_nerframe(data, reader, path)
    raise NerframeError(
        f"{shown}: not an accelerator description (expected an object with 'modules' in "
        "nerframe's format or 'hardware_modules' in the original format)"
    )


def _no_duplicates(shown: str) -> Callable[[list[tuple[str, Any]]], dict[str, Any]]:
    # json keeps the last of duplicate keys silently; a duplicated figure is a typo
    def hook(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
        obj: dict[str, Any] = {}
        for key, value in pairs:
            if key in obj:
                raise NerframeError(f"{shown}: duplicate field '{key}' in one object")
            obj[key] = value
        return obj

    return hook


def _from_nerframe(data: dict[str, Any], r: _Reader, path: Path) -> Accelerator:
    r.only(data, _NERFRAME_TOP, "")
    name = r.string(r.get(data, "name", ""), "name")
    description = data.get("description", "")
    if not isinstance(description, str):
        r.fail("description", "must be a string", description)
    frequency = r.number(r.get(data, "frequency_mhz", ""), "frequency_mhz", positive=True)
    bandwidth = r.number(
        r.get(data, "dram_bandwidth_gbps", ""), "dram_bandwidth_gbps", positive=True
    )
    dram_energy = r.number(r.get(data, "dram_pj_per_byte", ""), "dram_pj_per_byte")
    technology = data.get("technology_nm")
    technology_nm = (
        math.nan if technology is None else r.number(technology, "technology_nm", positive=True)
    )
    modules = [
        _nerframe_module(raw, f"modules[{i}]", r)
        for i, raw in enumerate(r.array(r.get(data, "modules", ""), "modules"))
    ]
    if not modules:
        r.fail("modules", "must list at least one module", [])
    _unique([m.name for m in modules], "modules", r)

    sram = []
    for i, raw in enumerate(r.array(data.get("sram", []), "sram")):
        where = f"sram[{i}]"
        s = r.object(raw, where)
        r.only(s, _NERFRAME_SRAM, where)
        area = s.get("area_um2")
        sram.append(
            Sram(
                name=r.string(r.get(s, "name", where), f"{where}.name"),
                size_kb=r.number(r.get(s, "size_kb", where), f"{where}.size_kb", positive=True),
                area_um2=None if area is None else r.number(area, f"{where}.area_um2"),
            )
        )
    _unique([s.name for s in sram], "sram", r)
    if "sram_um2_per_kb" in data:
        density = r.number(data["sram_um2_per_kb"], "sram_um2_per_kb")
    elif any(s.area_um2 is None for s in sram):
        raise NerframeError(
            f"{r.path}: missing field 'sram_um2_per_kb' (an SRAM block has no area_um2)"
        )
    else:
        density = math.nan

    mapping = r.object(data.get("operator_mapping", {}), "operator_mapping")
    names = [m.name for m in modules]
    for key, value in mapping.items():
        where = f"operator_mapping.{key}"
        if _op_key(key) is None:
            r.fail(
                "operator_mapping",
                f"has key '{key}', which is not a catalogue op type "
                "(optionally followed by ' (B)' for backward rows)",
            )
        if r.string(value, where) not in names:
            r.fail(where, f"names no module of this file (modules: {', '.join(names)})", value)

    sources = r.array(data.get("sources", []), "sources")
    for i, source in enumerate(sources):
        r.string(source, f"sources[{i}]")
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
        operator_mapping=dict(mapping),
        sources=tuple(sources),
        warnings=tuple(_area_is_power(modules)),
        path=str(path),
        source_format="nerframe",
    )


def _nerframe_module(raw: Any, where: str, r: _Reader) -> Module:
    m = r.object(raw, where)
    r.only(m, _NERFRAME_MODULE, where)
    return Module(
        name=r.string(r.get(m, "name", where), f"{where}.name"),
        type=r.string(r.get(m, "type", where), f"{where}.type"),
        count=r.integer(r.get(m, "count", where), f"{where}.count", positive=True),
        throughput_ops_per_cycle=r.number(
            r.get(m, "throughput_ops_per_cycle", where),
            f"{where}.throughput_ops_per_cycle",
            positive=True,
        ),
        latency_cycles=r.integer(r.get(m, "latency_cycles", where), f"{where}.latency_cycles"),
        area_um2=r.number(r.get(m, "area_um2", where), f"{where}.area_um2"),
        power_uw=r.number(r.get(m, "power_uw", where), f"{where}.power_uw"),
        # capacity is descriptive only: no formula reads it, so it may be left out
        memory_kb=r.number(m.get("memory_kb", 0), f"{where}.memory_kb"),
    )


def _unique(names: list[str], where: str, r: _Reader) -> None:
    seen: set[str] = set()
    for i, name in enumerate(names):
        if name in seen:
            r.fail(f"{where}[{i}].name", "repeats the name of an earlier entry", name)
        seen.add(name)


def _op_key(key: str) -> tuple[str, bool] | None:
    match = _OP_KEY.match(key)
    if match is None or match["op"] not in OP_TYPES:
        return None
    return match["op"], match["bwd"] is not None


def _area_is_power(modules: Sequence[Module]) -> list[str]:
    same = [m.name for m in modules if m.area_um2 == m.power_uw and m.area_um2 > 0]
    if not same:
        return []
    return [
        f"area_um2 equals power_uw for modules {', '.join(same)}: the area figures may be "
        "copies of the power figures (used as given)"
    ]


def _from_rendersim(data: dict[str, Any], r: _Reader, path: Path) -> Accelerator:
    warnings: list[str] = []
    name = r.string(r.get(data, "accelerator_name", ""), "accelerator_name")
    hardware = r.object(r.get(data, "hardware_modules", ""), "hardware_modules")
    if not hardware:
        r.fail("hardware_modules", "must hold at least one module", hardware)

    modules: list[Module] = []
    interfaces: dict[str, float] = {}  # memory-interface modules left out -> their bandwidth
    clocks: dict[str, float] = {}
    no_memory: list[str] = []
    suspect_macs: list[str] = []
    for key, raw in hardware.items():
        where = f"hardware_modules.{key}"
        m = r.object(raw, where)
        perf = r.object(r.get(m, "performance", where), f"{where}.performance")
        res = r.object(r.get(m, "resources", where), f"{where}.resources")
        kind = r.string(r.get(m, "module_type", where), f"{where}.module_type")
        if "throughput_ops_per_cycle" not in perf and "bandwidth_gbps" in perf:
            interfaces[key] = r.number(
                perf["bandwidth_gbps"], f"{where}.performance.bandwidth_gbps", positive=True
            )
            area, power = res.get("area_um2"), res.get("power_uw")
            warnings.append(
                f"module '{key}' ({kind}) gives a bandwidth, not a throughput: it is a memory "
                "interface, modelled by the DRAM bandwidth and left out of the modules "
                f"(its area_um2 {area} and power_uw {power} are not counted)"
            )
            continue
        if "max_frequency_mhz" in perf:
            clocks[key] = r.number(
                perf["max_frequency_mhz"], f"{where}.performance.max_frequency_mhz", positive=True
            )
        if "memory_kb" not in res:
            no_memory.append(key)
        module = Module(
            name=key,
            type=kind,
            count=r.integer(r.get(m, "count", where), f"{where}.count", positive=True),
            throughput_ops_per_cycle=r.number(
                r.get(perf, "throughput_ops_per_cycle", f"{where}.performance"),
                f"{where}.performance.throughput_ops_per_cycle",
                positive=True,
            ),
            latency_cycles=r.integer(
                r.get(perf, "latency_cycles", f"{where}.performance"),
                f"{where}.performance.latency_cycles",
            ),
            area_um2=r.number(
                r.get(res, "area_um2", f"{where}.resources"), f"{where}.resources.area_um2"
            ),
            power_uw=r.number(
                r.get(res, "power_uw", f"{where}.resources"), f"{where}.resources.power_uw"
            ),
            memory_kb=r.number(res.get("memory_kb", 0), f"{where}.resources.memory_kb"),
        )
        if _looks_like_macs(m, module):
            suspect_macs.append(f"{key} ({module.throughput_ops_per_cycle:g})")
        modules.append(module)
    if not modules:
        r.fail("hardware_modules", "has no module with a throughput_ops_per_cycle")

    warnings.extend(_name_mismatch(name, path, modules))
    frequency = _rendersim_frequency(data, r, clocks, warnings)
    bandwidth = _rendersim_bandwidth(data, r, interfaces, warnings)
    spec = r.object(data.get("system_specifications", {}), "system_specifications")
    technology = spec.get("technology_node_nm")
    sram, density = _rendersim_sram(data, r, warnings)
    operator_mapping, type_mapping = _rendersim_mapping(data, r, modules, interfaces, warnings)

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
    warnings.extend(_area_is_power(modules))
    description = data.get("accelerator_type")
    return Accelerator(
        name=name,
        description=description if isinstance(description, str) else "",
        frequency_mhz=frequency,
        dram_bandwidth_gbps=bandwidth,
        dram_pj_per_byte=ASSUMED_DRAM_PJ_PER_BYTE,
        technology_nm=math.nan
        if technology is None
        else r.number(technology, "system_specifications.technology_node_nm", positive=True),
        sram_um2_per_kb=density,
        modules=tuple(modules),
        sram=tuple(sram),
        operator_mapping=operator_mapping,
        sources=(f"original-format accelerator file {path.name}",),
        warnings=tuple(warnings),
        path=str(path),
        source_format="rendersim",
        type_mapping=type_mapping,
    )


def _looks_like_macs(raw: dict[str, Any], module: Module) -> bool:
    # a systolic array of R x C processing elements does R*C MACs per cycle
    spec = raw.get("specifications")
    size = spec.get("array_size") if isinstance(spec, dict) else None
    if isinstance(size, str) and (match := re.fullmatch(r"(\d+)\s*x\s*(\d+)", size)):
        return int(match[1]) * int(match[2]) == module.throughput_ops_per_cycle
    return "systolic" in str(raw.get("implementation", "")).lower()


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
    data: dict[str, Any], r: _Reader, clocks: dict[str, float], warnings: list[str]
) -> float:
    spec = r.object(data.get("system_specifications", {}), "system_specifications")
    if "target_frequency_mhz" in spec:
        frequency = r.number(
            spec["target_frequency_mhz"],
            "system_specifications.target_frequency_mhz",
            positive=True,
        )
        slow = [f"{k} ({v:g})" for k, v in clocks.items() if v < frequency]
        if slow:
            warnings.append(
                f"target_frequency_mhz {frequency:g} exceeds the max_frequency_mhz of "
                f"modules {', '.join(slow)}"
            )
        return frequency
    if not clocks:
        raise NerframeError(
            f"{r.path}: missing field 'system_specifications.target_frequency_mhz' "
            "(and no module gives performance.max_frequency_mhz)"
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
    data: dict[str, Any], r: _Reader, interfaces: dict[str, float], warnings: list[str]
) -> float:
    # the spec names the first two places; newer original files use the third
    memory = data.get("memory_hierarchy")
    main = memory.get("main_memory") if isinstance(memory, dict) else None
    candidates = {
        "dram_bandwidth_gbps": data.get("dram_bandwidth_gbps"),
        "memory_hierarchy.main_memory.bandwidth_gbps": main.get("bandwidth_gbps")
        if isinstance(main, dict)
        else None,
        "memory_hierarchy.dram_bandwidth_gbps": memory.get("dram_bandwidth_gbps")
        if isinstance(memory, dict)
        else None,
    }
    given = {k: r.number(v, k, positive=True) for k, v in candidates.items() if v is not None}
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


def _rendersim_sram(
    data: dict[str, Any], r: _Reader, warnings: list[str]
) -> tuple[list[Sram], float]:
    blocks: list[Sram] = []
    for i, raw in enumerate(r.array(data.get("sram_blocks", []), "sram_blocks")):
        where = f"sram_blocks[{i}]"
        b = r.object(raw, where)
        area = b.get("area_um2")
        blocks.append(
            Sram(
                name=r.string(r.get(b, "name", where), f"{where}.name"),
                size_kb=r.number(r.get(b, "size_kb", where), f"{where}.size_kb", positive=True),
                area_um2=None if area is None else r.number(area, f"{where}.area_um2"),
            )
        )
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
        ratio = math.nan if block.area_um2 is None else block.area_um2 / block.size_kb / density
        if not math.isnan(ratio) and not 0.5 <= ratio <= 2:
            warnings.append(
                f"SRAM block '{block.name}': area_um2 {block.area_um2:.0f} for size_kb "
                f"{block.size_kb:g} is "
                f"{ratio:.3g} times the file's typical {density:.0f} um2 per KB (a size in the "
                "wrong unit?); area used as given"
            )
    if len(sized) < len(blocks):
        warnings.append(
            f"some SRAM blocks give no area_um2: sized at the others' {density:g} um2 per KB"
        )
    return blocks, density


def _rendersim_mapping(
    data: dict[str, Any],
    r: _Reader,
    modules: Sequence[Module],
    interfaces: dict[str, float],
    warnings: list[str],
) -> tuple[dict[str, str], dict[str, str]]:
    # Original keys are mostly module types or categories, not op types: they become
    # type preferences (mapping step 2); op-type keys keep their step-1 meaning.
    raw = r.object(data.get("operator_mapping", {}), "operator_mapping")
    names = {m.name for m in modules}
    operator_mapping: dict[str, str] = {}
    type_mapping: dict[str, str] = {}
    for key, value in raw.items():
        target = r.string(value, f"operator_mapping.{key}")
        if target not in names:
            why = "a memory interface left out" if target in interfaces else "not in the file"
            warnings.append(
                f"operator_mapping entry '{key}' names module '{target}' ({why}): ignored"
            )
        elif _op_key(key) is not None:
            operator_mapping[key] = target
        else:
            type_mapping[key] = target
    return operator_mapping, type_mapping

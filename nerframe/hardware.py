"""The built-in accelerators and GPUs, loading any accelerator file, and their tables.

An accelerator is a JSON file in nerframe's own format (``spec/hardware.md``,
read by `nerframe.nerframe_format`) or in the original framework's format (read by
`nerframe.rendersim_format`); `accelerator` tells them apart by their keys. The
built-ins live in ``nerframe/accelerators/`` as nerframe-format files: the
accelerators of the papers and the baseline GPUs they are compared with.

>>> neurex = accelerator("neurex")
>>> neurex.frequency_mhz, neurex.modules[0].name
(1000.0, 'index_generation_unit')
>>> accelerator("xavier_nx").kind
'gpu'
"""

from __future__ import annotations

import math
import os
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import polars as pl

from nerframe import schemas
from nerframe.accelerator_model import Accelerator
from nerframe.errors import InvalidInputError, NerframeError, did_you_mean
from nerframe.nerframe_format import from_nerframe, is_nerframe_format
from nerframe.rendersim_format import from_rendersim, is_rendersim_format

ACCELERATORS: tuple[str, ...] = (
    "icarus",
    "neurex",
    "neurex_server",
    "cicero",
    "gscore",
    "gaurast",
    "gsarch",
    "gbu",
    "instant3d",
    "srender",
)
"""Names of the built-in accelerators of the papers."""

GPUS: tuple[str, ...] = (
    "xavier_nx",
    "orin_nx",
    "rtx3090",
    "a100",
    "h100",
    "h200",
    "rtx3070",
    "a6000",
    "titan_rtx",
)
"""Names of the built-in baseline GPUs."""

BUILTIN: tuple[str, ...] = ACCELERATORS + GPUS
"""Every built-in (files ``nerframe/accelerators/<name>.json``)."""

_BUILTIN_DIR = Path(__file__).with_name("accelerators")


def accelerator(name_or_path: str | os.PathLike[str]) -> Accelerator:
    """Load a built-in accelerator or GPU by name, or a JSON file in either format.

    >>> accelerator("gscore").source_format
    'nerframe'
    """
    if not isinstance(name_or_path, str | os.PathLike):
        raise InvalidInputError(
            f"accelerator: give an accelerator name or a path, got {type(name_or_path).__name__}",
            "name_or_path",
        )
    if isinstance(name_or_path, str) and name_or_path.lower() in BUILTIN:
        return _load(builtin_file(name_or_path))
    path = Path(name_or_path)
    if isinstance(name_or_path, str) and path.suffix.lower() != ".json" and not path.exists():
        raise InvalidInputError(
            f"unknown accelerator '{name_or_path}'{did_you_mean(name_or_path, BUILTIN)}; "
            f"built-in: {', '.join(BUILTIN)} "
            "(or give the path of a .json file)"
        )
    return _load(path)


def builtin_file(name: str) -> Path:
    """The file of the built-in accelerator or GPU `name` (case-insensitive).

    >>> builtin_file("H200").name
    'h200.json'
    """
    return _BUILTIN_DIR / f"{name.lower()}.json"


def accelerators() -> pl.DataFrame:
    """One row per built-in accelerator and GPU (schema ``schemas.ACCELERATORS``).

    >>> accelerators().height
    19
    """
    return accelerator_table([accelerator(name) for name in BUILTIN])


def accelerator_table(accels: Sequence[Accelerator]) -> pl.DataFrame:
    """One row per accelerator (schema ``schemas.ACCELERATORS``); unknown figures are null."""
    rows = [
        {
            "accelerator": a.name,
            "kind": a.kind,
            "description": a.description,
            "frequency_mhz": a.frequency_mhz,
            "dram_bandwidth_gbps": a.dram_bandwidth_gbps,
            "dram_pj_per_byte": a.dram_pj_per_byte,
            "technology_nm": _or_none(a.technology_nm),
            "sram_um2_per_kb": _or_none(a.sram_um2_per_kb),
            "modules": len(a.modules),
            # no module rated in FLOPs (only samples, Gaussians…): no FLOP peak, not 0
            "peak_tflops": a.peak_tflops or None,
            "area_mm2": _or_none(a.area_mm2),
            "memory_efficiency": a.memory_efficiency,
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
            "unit": m.unit,
            "latency_cycles": m.latency_cycles,
            "area_um2": _or_none(m.area_um2),
            "power_uw": m.power_uw,
            "power_reference_mhz": m.power_reference_mhz,
            "memory_kb": m.memory_kb,
            "on_chip": m.on_chip,
            "efficiency": m.efficiency,
        }
        for a in accels
        for m in a.modules
    ]
    return pl.DataFrame(rows, schema=schemas.MODULES)


def _or_none(value: float) -> float | None:
    return None if math.isnan(value) else value


def _load(path: Path, chain: tuple[Path, ...] = ()) -> Accelerator:
    try:
        return _read(path, chain)
    except InvalidInputError:
        raise
    except NerframeError as e:  # every fault of a file is bad input, naming the file
        message = str(e)
        shown = message if str(path) in message else f"{path}: {message}"
        raise InvalidInputError(shown, e.culprit or str(path)) from None


def _read(path: Path, chain: tuple[Path, ...]) -> Accelerator:
    data = _document(path)
    if is_rendersim_format(data):
        return from_rendersim(data, path)
    if is_nerframe_format(data):
        return from_nerframe(data, path, lambda name: _extended(name, path, chain))
    raise InvalidInputError(
        f"{path}: not an accelerator description (expected an object with 'modules' in "
        "nerframe's format or 'hardware_modules' in the original format)",
        str(path),
    )


def _document(path: Path) -> Any:
    """The parsed JSON of an accelerator file, under the policy of every input file."""
    shown = str(path)
    if not path.exists():
        raise InvalidInputError(f"accelerator file '{shown}' not found")
    if not path.is_file():
        raise InvalidInputError(f"accelerator file '{shown}' is not a file")
    from nerframe.formats import parse

    # the policy of every input file: UTF-8, standard JSON, no key twice, bounded nesting
    return parse(path, what="accelerator file")


def _extended(name: str, path: Path, chain: tuple[Path, ...]) -> Accelerator:
    """The accelerator that file `path` (reached through `chain`) ``extends``: a built-in,
    or a file found from `path`'s folder; a file that extends itself, directly or not,
    is an error showing the cycle."""
    from nerframe.formats import resolve

    if name.lower() in BUILTIN:
        target = _BUILTIN_DIR / f"{name.lower()}.json"
    else:
        target = Path(resolve(name, path))
        if target.suffix.lower() != ".json" and not target.exists():
            return accelerator(name)  # the "unknown accelerator" error, with suggestions
    visited = (*chain, path)
    if target.exists() and any(target.resolve() == p.resolve() for p in visited):
        start = next(i for i, p in enumerate(visited) if target.resolve() == p.resolve())
        shown = " -> ".join(str(p) for p in (*visited[start:], target))
        raise InvalidInputError(f"{visited[0]}: 'extends' forms a cycle: {shown}", "extends")
    return _load(target, visited)

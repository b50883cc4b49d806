"""Per-node figures of the area and power model, read from ``technology.json``.

Designs built at different process nodes are compared at one reference node
(`REFERENCE_NM`, 28 nm, the node NeRArch-Sim normalises to). An area moves from
node ``a`` to node ``b`` by the factor ``A(b) / A(a)`` and an energy (or the
power at one clock) by ``E(b) / E(a)``, where ``A`` and ``E`` are the published
per-node area factors and energy polynomials of Stillmaker and Baas (2017) at one
supply voltage, interpolated linearly in the node size between table nodes. The
same file gives the SRAM density (um²/KB) at 28 nm, the SRAM access energy
(pJ per byte) at 45 nm and the leakage per mm²; every figure's source is in the
file's ``sources``.

>>> round(area_factor(40, 28), 4), round(energy_factor(16, 28), 4)
(0.4754, 2.7047)
>>> round(sram_um2_per_kb(40), 1), round(sram_pj_per_byte(28), 4)
(3697.9, 1.2665)
"""

from __future__ import annotations

import json
from functools import cache
from pathlib import Path
from typing import Any

from nerframe.errors import InvalidInputError

_FILE = Path(__file__).with_name("technology.json")


@cache
def _table() -> dict[str, Any]:
    table: dict[str, Any] = json.loads(_FILE.read_text(encoding="utf-8"))
    return table


REFERENCE_NM: float = float(_table()["reference_nm"])
"""The common node every design is normalised to (28 nm)."""


def covers(node_nm: float) -> bool:
    """Whether the scaling table covers `node_nm` (7 to 130 nm; NaN is no node).

    >>> covers(28.0), covers(4.0), covers(float("nan"))
    (True, False, False)
    """
    nodes = _table()["nodes_nm"]
    return bool(nodes[-1] <= node_nm <= nodes[0])


def _interpolated(values: list[float], node_nm: float) -> float:
    """`values` (one per table node, largest node first) at `node_nm`."""
    nodes = _table()["nodes_nm"]
    if not covers(node_nm):
        raise InvalidInputError(
            f"technology node {node_nm:g} nm is outside the scaling table "
            f"({nodes[-1]}-{nodes[0]} nm)"
        )
    for i in range(len(nodes) - 1):
        big, small = nodes[i], nodes[i + 1]
        if small <= node_nm <= big:
            t = (big - node_nm) / (big - small)
            return float(values[i] + t * (values[i + 1] - values[i]))
    return values[-1]


def _area(node_nm: float) -> float:
    return _interpolated(_table()["area_vs_45nm"], node_nm)


def _energy(node_nm: float) -> float:
    v = _table()["supply_v"]
    per_node = [a * v * v + b * v + c for a, b, c in _table()["energy_polynomial"]]
    return _interpolated(per_node, node_nm)


def area_factor(from_nm: float, to_nm: float = REFERENCE_NM) -> float:
    """Factor that moves an area from node `from_nm` to `to_nm` (28 nm by default).

    >>> area_factor(28)
    1.0
    """
    return _area(to_nm) / _area(from_nm)


def energy_factor(from_nm: float, to_nm: float = REFERENCE_NM) -> float:
    """Factor that moves an energy per operation (or a power at one clock) between nodes.

    >>> energy_factor(28)
    1.0
    """
    return _energy(to_nm) / _energy(from_nm)


def sram_um2_per_kb(node_nm: float) -> float:
    """SRAM area per KB at `node_nm`: the 28 nm density scaled by the area factor.

    >>> sram_um2_per_kb(28)
    1758.0
    """
    return float(_table()["sram_um2_per_kb_28nm"]) * area_factor(REFERENCE_NM, node_nm)


def sram_pj_per_byte(node_nm: float) -> float:
    """Energy of one SRAM byte read or written at `node_nm` (the 45 nm figure scaled).

    >>> sram_pj_per_byte(45)
    2.5
    """
    return float(_table()["sram_pj_per_byte_45nm"]) * energy_factor(45, node_nm)


def leakage_uw_per_mm2(node_nm: float) -> float:
    """Leakage power per mm² of logic and SRAM (an assumption, the same at every node).

    >>> leakage_uw_per_mm2(28)
    5000.0
    """
    if not covers(node_nm):
        raise InvalidInputError(f"technology node {node_nm:g} nm is outside the node table")
    return float(_table()["leakage_uw_per_mm2"])


def sources() -> dict[str, str]:
    """Where each figure of the table comes from.

    >>> sorted(sources())[:2]
    ['area_vs_45nm', 'energy_polynomial']
    """
    return dict(_table()["sources"])

"""Per-node figures of the area and power model, read from ``technology.json``.

Designs built at different process nodes are compared at one reference node
(`REFERENCE_NM`, 28 nm, the node NeRArch-Sim normalises to). An area moves from
node ``a`` to node ``b`` by the factor ``A(b) / A(a)`` and an energy (or the
power at one clock) by ``E(b) / E(a)``, where ``A`` and ``E`` are the published
per-node area factors and energy polynomials of Stillmaker and Baas (2017) at one
supply voltage (180 to 7 nm), and below 7 nm TSMC's published steps from one node
to the next (5 and 3 nm: logic density, power at the same speed, SRAM cell area),
interpolated linearly in the node size between table nodes. The same file gives
the SRAM density (um²/KB) at 28 nm, the SRAM access energy (pJ per byte) at 45 nm
and the leakage per mm²; every figure's source is in the file's ``sources``. A node
outside 3-180 nm is refused (`check_node`), never given zero leakage or free SRAM.

>>> round(area_factor(40, 28), 4), round(energy_factor(16, 28), 4)
(0.4754, 2.7047)
>>> round(sram_um2_per_kb(40), 1), round(sram_pj_per_byte(28), 4)
(3697.9, 1.2665)
>>> round(area_factor(7, 5), 4), round(energy_factor(7, 5), 4)  # N5 against N7
(0.5556, 0.7)
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


@cache
def _columns() -> tuple[list[float], list[float], list[float], list[float]]:
    """Per table node, largest first: the node, logic area and SRAM cell area relative
    to 45 nm, and the energy of one operation (arbitrary units)."""
    t = _table()
    v = t["supply_v"]
    nodes = [float(n) for n in t["nodes_nm"]]
    area = [float(a) for a in t["area_vs_45nm"]]
    sram = list(area)  # SRAM scales like logic down to 7 nm (an assumption, see sources)
    energy = [a * v * v + b * v + c for a, b, c in t["energy_polynomial"]]
    for step in t["below_7nm"]:  # each a published step from the node above
        nodes.append(float(step["node_nm"]))
        area.append(area[-1] / step["logic_density_x"])
        sram.append(sram[-1] * step["sram_cell_area_x"])
        energy.append(energy[-1] * step["power_at_iso_speed_x"])
    return nodes, area, sram, energy


def covers(node_nm: float) -> bool:
    """Whether the scaling table covers `node_nm` (3 to 180 nm; NaN is no node).

    >>> covers(28.0), covers(3.0), covers(2.0), covers(float("nan"))
    (True, True, False, False)
    """
    nodes = _columns()[0]
    return bool(nodes[-1] <= node_nm <= nodes[0])


def check_node(node_nm: float, source: str, field: str = "technology_nm") -> None:
    """Refuse a node outside the table (`covers`) with one line naming `source` and
    `field`: its
    leakage, SRAM energy and 28 nm figures would have no value. NaN (no node) passes.

    >>> check_node(5, "a.json")
    >>> try:
    ...     check_node(2, "a.json")
    ... except InvalidInputError as e:
    ...     print(str(e).split(",")[0])
    a.json: field 'technology_nm': 2 nm is outside the node table (3-180 nm)
    """
    if node_nm != node_nm or covers(node_nm):
        return
    nodes = _columns()[0]
    raise InvalidInputError(
        f"{source}: field '{field}': {node_nm:g} nm is outside the node table "
        f"({nodes[-1]:g}-{nodes[0]:g} nm), which gives its leakage and SRAM energy; give a "
        "node in it (the nearest one), or the file's own 'leakage_uw_per_mm2' and "
        "'sram_pj_per_byte'",
        field,
    )


def _interpolated(values: list[float], node_nm: float) -> float:
    """`values` (one per table node, largest node first) at `node_nm`."""
    nodes = _columns()[0]
    if not covers(node_nm):
        raise InvalidInputError(
            f"technology node {node_nm:g} nm is outside the scaling table "
            f"({nodes[-1]:g}-{nodes[0]:g} nm)"
        )
    for i in range(len(nodes) - 1):
        big, small = nodes[i], nodes[i + 1]
        if small <= node_nm <= big:
            t = (big - node_nm) / (big - small)
            return float(values[i] + t * (values[i + 1] - values[i]))
    return values[-1]


def _area(node_nm: float) -> float:
    return _interpolated(_columns()[1], node_nm)


def _sram_area(node_nm: float) -> float:
    return _interpolated(_columns()[2], node_nm)


def _energy(node_nm: float) -> float:
    return _interpolated(_columns()[3], node_nm)


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
    """SRAM area per KB at `node_nm`: the 28 nm density scaled by the SRAM cell area
    (the logic area factor down to 7 nm).

    >>> sram_um2_per_kb(28)
    1758.0
    """
    scale = _sram_area(node_nm) / _sram_area(REFERENCE_NM)
    return float(_table()["sram_um2_per_kb_28nm"]) * scale


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

    >>> sorted(sources())[:3]
    ['area_vs_45nm', 'below_7nm', 'energy_polynomial']
    """
    return dict(_table()["sources"])

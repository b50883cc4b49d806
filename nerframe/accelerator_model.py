"""The accelerator model: modules, SRAM blocks and the accelerator that holds them.

A module is ``count`` identical units, each doing ``throughput_ops_per_cycle`` work
items of its ``unit`` per cycle: FLOPs (``flop``, the default) or the items its paper
counts (``sample``, ``ray``, ``pixel``, ``gaussian``, ``lookup``; see
`nerframe.taxonomy.WORK_UNITS`). A module ``on_chip`` keeps its operands and results in
on-chip SRAM, so its ops move no DRAM bytes. A module with ``power_reference_mhz``
gives dynamic power measured at that clock, which scales linearly with the clock;
without it, power is the same at any clock. ``efficiency`` in (0, 1] is the share of
the peak throughput that real kernels reach (it matters for GPUs). A module with
an ``array`` (rows, cols) and a ``dataflow`` is a systolic array: its MLP ops take
the cycles of their layers' GEMMs folded onto it (`nerframe.kernels.systolic`).

>>> m = Module("peu", "ENCODING", 1, 1.0, 130, 5200.0, 330.0, 16.0, unit="sample")
>>> m.unit, m.on_chip
('sample', False)
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

from nerframe import ppa
from nerframe.errors import NerframeError

DATAFLOWS = ("os", "ws", "is")
"""Systolic-array dataflows: output, weight and input stationary."""
MAX_ARRAY_SIDE = 2**20
"""Most rows or columns of a systolic array (the scheduler kernel's bound)."""


@dataclass(frozen=True)
class Module:
    """One kind of hardware unit; `count` identical instances of it.

    ``area_um2`` is NaN when the area is not published (null in the file).
    """

    name: str
    type: str
    count: int
    throughput_ops_per_cycle: float
    latency_cycles: int
    area_um2: float
    power_uw: float
    memory_kb: float
    unit: str = "flop"
    on_chip: bool = False
    power_reference_mhz: float | None = None
    efficiency: float = 1.0
    # A systolic array of rows x cols MACs (2·rows·cols FLOP/cycle) and its dataflow,
    # "os", "ws" or "is" (`nerframe.kernels.systolic`): it times its MLP ops layer
    # by layer, folded onto the array. None: the module is rated by its throughput.
    array: tuple[int, int] | None = None
    dataflow: str | None = None


@dataclass(frozen=True)
class Sram:
    """An on-chip SRAM block; ``area_um2`` None means ``size_kb * sram_um2_per_kb``."""

    name: str
    size_kb: float
    area_um2: float | None = None


@dataclass(frozen=True)
class Accelerator:
    """A validated accelerator (or GPU) description.

    ``operator_mapping`` maps an op type (or ``"<op_type> (B)"`` for backward rows)
    to a module name. ``type_mapping`` maps a module type or category to a module
    name: it holds the original format's operator_mapping keys that are not op types
    (``HASH_ENCODE``, ``FIELD_COMPUTATION``, ``SAMPLING``…), which act as extra
    preferences in mapping step 2. ``technology_nm`` and ``sram_um2_per_kb`` are NaN
    when a file does not give them (neither affects a figure then).
    ``memory_efficiency`` (in (0, 1]) derates the DRAM bandwidth: the share of the
    peak that real kernels reach, which matters for GPUs. ``kind`` is
    ``accelerator`` or ``gpu``.

    >>> import nerframe
    >>> a = nerframe.accelerator("neurex")
    >>> a.kind, [m.name for m in a.modules]
    ('accelerator', ['index_generation_unit', 'systolic_array_32x32', 'interpolation_compute_unit'])
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
    kind: str = "accelerator"
    memory_efficiency: float = 1.0

    def __repr__(self) -> str:
        """One line: name, kind, module count, clock and DRAM bandwidth.

        >>> import nerframe
        >>> nerframe.accelerator("neurex")
        Accelerator('neurex', accelerator, 3 modules, 1000 MHz, DRAM 512 GB/s)
        """
        return (
            f"Accelerator({self.name!r}, {self.kind}, {len(self.modules)} modules, "
            f"{self.frequency_mhz:g} MHz, DRAM {self.dram_bandwidth_gbps:g} GB/s)"
        )

    @property
    def peak_tflops(self) -> float:
        """Σ throughput × count × frequency over the modules counted in FLOPs, in TFLOP/s.

        Modules counted in other work items (samples, Gaussians…) have no FLOP rate.

        >>> import nerframe
        >>> nerframe.accelerator("neurex").peak_tflops  # 2048 FLOP/cycle at 1 GHz
        2.048
        """
        per_cycle = sum(
            m.throughput_ops_per_cycle * m.count for m in self.modules if m.unit == "flop"
        )
        return ppa.peak_tflops(per_cycle, self.frequency_mhz)

    @property
    def area_mm2(self) -> float:
        """Σ module area × count + Σ SRAM area, in mm²; NaN (not published) when a
        module's area is not published (``area_um2`` null in the file: the Jetson
        GPUs, and so the GPU plug-ins built on them).

        >>> import nerframe
        >>> round(nerframe.accelerator("neurex").area_mm2, 3)
        0.607
        """
        modules = sum(m.area_um2 * m.count for m in self.modules)
        return (modules + self.sram_area_um2) / 1e6

    @property
    def sram_area_um2(self) -> float:
        """Σ SRAM block area (its own ``area_um2``, else ``size_kb * sram_um2_per_kb``).

        >>> import nerframe
        >>> nerframe.accelerator("icarus").sram_area_um2
        3667188.0
        """
        return sum(
            s.area_um2 if s.area_um2 is not None else s.size_kb * self.sram_um2_per_kb
            for s in self.sram
        )

    @property
    def bytes_per_cycle(self) -> float:
        """DRAM bytes deliverable per clock cycle (at the peak bandwidth).

        >>> import nerframe
        >>> nerframe.accelerator("neurex").bytes_per_cycle  # 512 GB/s at 1000 MHz
        512.0
        """
        return ppa.bytes_per_cycle(self.dram_bandwidth_gbps, self.frequency_mhz)

    def module_index(self, name: str) -> int:
        """Position of module `name` in `modules`.

        >>> import nerframe
        >>> nerframe.accelerator("neurex").module_index("systolic_array_32x32")
        1
        """
        for i, module in enumerate(self.modules):
            if module.name == name:
                return i
        raise NerframeError(
            f"accelerator '{self.name}' has no module '{name}'; "
            f"its modules: {list_modules(self.modules)}"
        )


def list_modules(modules: Sequence[Module]) -> str:
    """``name (type)`` of each module, for messages."""
    return ", ".join(f"{m.name} ({m.type})" for m in modules)


def copied_area_warnings(modules: Sequence[Module]) -> list[str]:
    """A load warning when modules give an area equal to their power (a copied figure)."""
    same = [m.name for m in modules if m.area_um2 == m.power_uw and m.area_um2 > 0]
    if not same:
        return []
    return [
        f"area_um2 equals power_uw for modules {', '.join(same)}: the area figures may be "
        "copies of the power figures (used as given)"
    ]

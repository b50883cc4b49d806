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
the cycles of their layers' GEMMs folded onto it (`nerframe.kernels.systolic`), and
its ``buffers`` (KB per operand role) bound what stays on chip between folds.

>>> m = Module("peu", "ENCODING", 1, 1.0, 130, 5200.0, 330.0, 16.0, unit="sample")
>>> m.unit, m.on_chip
('sample', False)
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import get_args

from nerframe import ppa, technology
from nerframe._typing import Dataflow
from nerframe.errors import InvalidInputError

DATAFLOWS: tuple[Dataflow, ...] = get_args(Dataflow)
"""Systolic-array dataflows: output, weight and input stationary."""
BUFFER_ROLES = ("input", "weight", "output")
"""Operand roles of a systolic array's buffers (a module's ``buffers``), in order."""
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
    # KB a systolic array's buffers hold resident per operand role (BUFFER_ROLES:
    # input, weight, output); operands beyond them are re-read from DRAM
    # (`nerframe.kernels.systolic.dram_traffic`). None: unlimited.
    buffers: tuple[float, float, float] | None = None
    # The operand width in bits its throughput counts (a mixed-precision unit); an op
    # of wider operands costs more (`nerframe.mapping.precision_factor`). None: any.
    bitwidth: int | None = None


@dataclass(frozen=True)
class Sram:
    """An on-chip SRAM block; ``area_um2`` None means ``size_kb * sram_um2_per_kb``."""

    name: str
    size_kb: float
    area_um2: float | None = None


ACCELERATOR_PARAMETERS = ("frequency_mhz", "dram_bandwidth_gbps", "dram_pj_per_byte")
"""Accelerator fields an assumption (and a sweep's grid) may name."""
MODULE_PARAMETERS = ("count", "throughput_ops_per_cycle", "latency_cycles", "power_uw", "area_um2")
"""Module fields an assumption (and a sweep's grid) may name as ``MODULE.FIELD``."""
_INTEGER_PARAMETERS = ("count", "latency_cycles")


@dataclass(frozen=True)
class Assumption:
    """A figure a file assumes: the grid path of the parameter (``dram_bandwidth_gbps``,
    ``MODULE.FIELD``), the plausible range [low, high] around the file's own value,
    and why.

    >>> a = Assumption("dram_bandwidth_gbps", 256.0, 819.0, "HBM2 not itemised")
    >>> a.low < a.high
    True
    """

    parameter: str
    low: float
    high: float
    reason: str


def parameter_value(accel: Accelerator, path: str) -> float:
    """The value `accel` gives the parameter at grid path `path`: an accelerator field
    of `ACCELERATOR_PARAMETERS` or ``MODULE.FIELD`` with FIELD in `MODULE_PARAMETERS`.

    >>> import nerframe
    >>> neurex = nerframe.accelerator("neurex")
    >>> parameter_value(neurex, "systolic_array_32x32.throughput_ops_per_cycle")
    2048.0
    """
    if path in ACCELERATOR_PARAMETERS:
        return float(getattr(accel, path))
    module, _, field_name = path.rpartition(".")
    names = [m.name for m in accel.modules]
    if module not in names or field_name not in MODULE_PARAMETERS:
        choices = [*ACCELERATOR_PARAMETERS, *(f"{n}.{f}" for n in names for f in MODULE_PARAMETERS)]
        from nerframe.errors import did_you_mean

        raise InvalidInputError(
            f"{path!r} names no parameter of accelerator '{accel.name}'"
            f"{did_you_mean(path, choices)}; use one of {', '.join(ACCELERATOR_PARAMETERS)} "
            f"or MODULE.FIELD with FIELD in {', '.join(MODULE_PARAMETERS)}",
            path,
        )
    return float(getattr(accel.modules[names.index(module)], field_name))


def check_assumption(accel: Accelerator, assumption: Assumption) -> str | None:
    """What is wrong with `assumption` on `accel` (None: nothing): a path naming no
    parameter, low not below high, the nominal value outside [low, high], a
    fractional count or latency, a zero where the parameter must be positive.

    >>> import nerframe
    >>> neurex = nerframe.accelerator("neurex")  # 25.6 GB/s
    >>> check_assumption(neurex, Assumption("dram_bandwidth_gbps", 30.0, 40.0, "x"))
    'its value 25.6 lies outside [low, high] = [30, 40]'
    """
    try:
        nominal = parameter_value(accel, assumption.parameter)
    except InvalidInputError as e:
        return str(e)
    low, high = assumption.low, assumption.high
    if math.isnan(nominal):
        return "the parameter is not published (null), so it has no value to bound"
    if not low < high:
        return f"low ({low:g}) must be below high ({high:g})"
    if not low <= nominal <= high:
        return f"its value {nominal:g} lies outside [low, high] = [{low:g}, {high:g}]"
    field_name = assumption.parameter.rpartition(".")[2]
    if field_name in _INTEGER_PARAMETERS and (low != int(low) or high != int(high)):
        return f"{field_name} takes integers, got [{low:g}, {high:g}]"
    if low == 0 and field_name not in (
        "latency_cycles",
        "power_uw",
        "area_um2",
        "dram_pj_per_byte",
    ):
        return f"{field_name} must stay above 0, got low = 0"
    return None


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
    ``accelerator`` or ``gpu``. ``sram_pj_per_byte`` (energy of one SRAM byte read
    or written) and ``leakage_uw_per_mm2`` are NaN unless the file gives them: the
    model then takes them from the node table (`nerframe.technology`) for an
    accelerator (SRAM energy only where it lists SRAM blocks) and 0 for a GPU,
    whose board power already holds both. ``gather_sector_bytes`` is what one random DRAM
    access moves (a GPU's 32-byte L2 sector): hash-table reads, which the cost
    model does not count as bytes, then cost a sector per two lookups
    (`nerframe.mapping.gathered_bytes`); 0 (the default) charges none.
    ``l2_cache_kb`` is a GPU's last-level cache (data sheet): a hash level whose table
    fits in it moves its table at most once per batch instead of a sector per two
    lookups; 0 (the default) credits no cache. ``l2_bytes_per_cycle`` is that
    cache's read bandwidth per core clock: every byte an op requests from memory,
    its hash-table sectors included, passes an L2 slice, so its memory time is at
    least those bytes over this rate (`nerframe.mapping.l2_bytes`); 0 (the
    default) leaves the L2 unlimited. ``assumptions`` are the figures the file
    assumes, each with its plausible range (`Assumption`; `nerframe.bands`).

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
    sram_pj_per_byte: float = math.nan
    leakage_uw_per_mm2: float = math.nan
    gather_sector_bytes: float = 0.0
    l2_cache_kb: float = 0.0
    l2_bytes_per_cycle: float = 0.0
    assumptions: tuple[Assumption, ...] = ()

    def __repr__(self) -> str:
        """One line: name, kind, module count, clock and DRAM bandwidth.

        >>> import nerframe
        >>> nerframe.accelerator("neurex")
        Accelerator('neurex', accelerator, 3 modules, 1000 MHz, DRAM 25.6 GB/s)
        """
        return (
            f"Accelerator({self.name!r}, {self.kind}, {len(self.modules)} modules, "
            f"{self.frequency_mhz:g} MHz, DRAM {self.dram_bandwidth_gbps:g} GB/s)"
        )

    @property
    def peak_tflops(self) -> float:
        """Σ throughput × count × frequency over the modules counted in FLOPs, in TFLOP/s;
        for a GPU (which runs one kernel at a time, on its CUDA or its tensor cores) the
        largest module's alone. 0 when no module is counted in FLOPs.

        Modules counted in other work items (samples, Gaussians…) have no FLOP rate.

        >>> import nerframe
        >>> nerframe.accelerator("neurex").peak_tflops  # 2048 FLOP/cycle at 1 GHz
        2.048
        >>> round(nerframe.accelerator("a100").peak_tflops, 2)  # tensor cores only
        311.87
        """
        rates = [m.throughput_ops_per_cycle * m.count for m in self.modules if m.unit == "flop"]
        per_cycle = max(rates, default=0) if self.kind == "gpu" else sum(rates)
        return float(ppa.peak_tflops(per_cycle, self.frequency_mhz))

    @property
    def area_mm2(self) -> float:
        """Σ module area × count + Σ SRAM area, in mm²; NaN (not published) when a
        module's area is not published (``area_um2`` null in the file: the Jetson
        GPUs, and so the GPU plug-ins built on them).

        >>> import nerframe
        >>> round(nerframe.accelerator("neurex").area_mm2, 3)  # NeuRex's Table 4
        3.14
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
    def sram_energy_pj_per_byte(self) -> float:
        """SRAM access energy per byte used by the model: the file's, else the node
        table's for an accelerator with SRAM blocks (0 for a GPU, without blocks or
        without a node in the table).

        >>> import nerframe
        >>> round(nerframe.accelerator("neurex_server").sram_energy_pj_per_byte, 4)  # 28 nm
        1.2665
        >>> nerframe.accelerator("neurex").sram_energy_pj_per_byte  # the file's own
        2.411
        """
        if not math.isnan(self.sram_pj_per_byte):
            return self.sram_pj_per_byte
        if self.kind == "gpu" or not self.sram or not technology.covers(self.technology_nm):
            return 0.0
        return technology.sram_pj_per_byte(self.technology_nm)

    @property
    def leakage_density_uw_per_mm2(self) -> float:
        """Leakage per mm² used by the model: the file's, else the node table's for an
        accelerator (0 for a GPU or without a node).

        >>> import nerframe
        >>> nerframe.accelerator("neurex").leakage_density_uw_per_mm2
        5000.0
        """
        if not math.isnan(self.leakage_uw_per_mm2):
            return self.leakage_uw_per_mm2
        if self.kind == "gpu" or not technology.covers(self.technology_nm):
            return 0.0
        return technology.leakage_uw_per_mm2(self.technology_nm)

    @property
    def leakage_w(self) -> float:
        """Leakage power in W: the density times the area whose figure is published
        (a GPU's unpublished SMs leak inside its board power).

        >>> import nerframe
        >>> round(nerframe.accelerator("neurex").leakage_w, 4)  # 5 mW/mm2 x 3.14 mm2
        0.0157
        """
        return leakage_w(
            [m.area_um2 for m in self.modules],
            [m.count for m in self.modules],
            self.sram_area_um2,
            self.leakage_density_uw_per_mm2,
        )

    @property
    def area_mm2_28nm(self) -> float:
        """`area_mm2` moved to 28 nm by the node table's area factor (NaN for a node
        outside the table).

        >>> import nerframe
        >>> round(nerframe.accelerator("icarus").area_mm2_28nm, 3)  # 40 nm design
        4.745
        """
        if not technology.covers(self.technology_nm):
            return math.nan
        return self.area_mm2 * technology.area_factor(self.technology_nm)

    @property
    def bytes_per_cycle(self) -> float:
        """DRAM bytes deliverable per clock cycle (at the peak bandwidth).

        >>> import nerframe
        >>> nerframe.accelerator("neurex").bytes_per_cycle  # 25.6 GB/s at 1000 MHz
        25.6
        """
        return float(ppa.bytes_per_cycle(self.dram_bandwidth_gbps, self.frequency_mhz))

    def module_index(self, name: str) -> int:
        """Position of module `name` in `modules`.

        >>> import nerframe
        >>> nerframe.accelerator("neurex").module_index("systolic_array_32x32")
        1
        """
        for i, module in enumerate(self.modules):
            if module.name == name:
                return i
        raise InvalidInputError(
            f"accelerator '{self.name}' has no module '{name}'; "
            f"its modules: {list_modules(self.modules)}"
        )


def leakage_w(
    area_um2: Sequence[float], count: Sequence[int], sram_area_um2: float, density: float
) -> float:
    """Leakage in W of modules (``area_um2`` per instance, NaN where not published)
    and SRAM at `density` uW/mm², summed in module order as the sweep kernel does.

    >>> leakage_w([1e6, float("nan")], [2, 8], 1e6, 5000.0)  # 3 mm2 at 5 mW/mm2
    0.015
    """
    known = 0.0
    for area, n in zip(area_um2, count, strict=True):
        part = area * n
        if not math.isnan(part):
            known += part
    return (known + sram_area_um2) / 1e6 * density * 1e-6


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

"""The accelerator file (``*.json``, nerframe's own format): modules, SRAM, DRAM, clock.

What a type can say is declared here; what it cannot (a module named twice, an
``operator_mapping`` entry naming no module, ``array`` without ``dataflow``, a
file without a clock that extends none) `nerframe.nerframe_format` checks after
conversion. Fields a file that ``extends`` another may leave out (the base's
figure is kept) are `msgspec.UNSET` when absent; ``null`` is never "absent".

To add a field: declare it here (type, default, docstring), read it in
`nerframe.nerframe_format.from_nerframe`, document it in ``docs/formats.md``.

>>> from nerframe.formats import convert
>>> f = convert({"name": "x", "frequency_mhz": 500, "dram_bandwidth_gbps": 64,
...              "dram_pj_per_byte": 20, "modules": [{"name": "a", "type": "MLP",
...              "count": 2, "throughput_ops_per_cycle": 64, "latency_cycles": 1,
...              "area_um2": 1000, "power_uw": 100}]}, AcceleratorFile, source="x.json")
>>> f.frequency_mhz, f.modules[0].unit, f.extends
(500.0, 'flop', UNSET)
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

from nerframe._typing import AcceleratorKind, Dataflow, WorkUnit
from nerframe.accelerator_model import MAX_ARRAY_SIDE

FREQUENCY_MHZ = (1e-3, 1e7)
"""Clocks an accelerator file may give, 1 kHz to 10 THz (assumption: far outside any
digital chip; a clock of 1e-300 MHz gave frame times of 6e301 s)."""

# Upper bounds of fields a formula multiplies into energy, power or area, far outside
# any chip (assumptions), so that a typo (1e30) is refused rather than modelled.
DRAM_PJ_PER_BYTE_MAX = 1e4
"""DRAM energy per byte: published figures run from about 31 pJ/B (HBM2, 3.9 pJ/bit:
O'Connor et al., "Fine-Grained DRAM", MICRO 2017) to about 320 pJ/B (DDR3, 40 pJ/bit:
Horowitz, ISSCC 2014 keynote); 10 nJ per byte is 30 times the costliest."""
LEAKAGE_UW_PER_MM2_MAX = 1e6
"""Leakage of 1 W per mm² is more than the whole power density of a GPU die (H100 SXM:
700 W over 814 mm², 0.86 W/mm²); the node table's figure is 5,000 µW/mm²."""
AREA_UM2_MAX = 1e11
"""100,000 mm², more than a 300 mm wafer (70,686 mm²)."""
TECHNOLOGY_NM = (1.0, 10_000.0)
"""Process nodes from 1 nm (beyond the 2 nm class) to 10 µm (the 1970s)."""

BUFFER_KB_MAX = 2.0**30
"""A systolic array's buffer of 1 TiB, a thousand times the largest on-chip SRAM
(Cerebras WSE-3: 44 GB over a whole wafer), assumption; 1e308 KB overflowed the tiling."""

Text = Annotated[str, msgspec.Meta(pattern=r"\S", description="text, not blank")]
NonNegative = Annotated[float, msgspec.Meta(ge=0)]
Positive = Annotated[float, msgspec.Meta(gt=0)]
Fraction = Annotated[float, msgspec.Meta(gt=0, le=1)]
# Integers stay exact in a float64 column (2**53): a count of 2**64 overflowed polars.
Count = Annotated[int, msgspec.Meta(ge=1, le=2**53)]
Cycles = Annotated[int, msgspec.Meta(ge=0, le=2**53)]
Side = Annotated[int, msgspec.Meta(ge=1, le=MAX_ARRAY_SIDE)]
Bits = Annotated[int, msgspec.Meta(ge=1, le=64)]
Clock = Annotated[float, msgspec.Meta(ge=FREQUENCY_MHZ[0], le=FREQUENCY_MHZ[1])]
DramEnergy = Annotated[float, msgspec.Meta(ge=0, le=DRAM_PJ_PER_BYTE_MAX)]
Leakage = Annotated[float, msgspec.Meta(ge=0, le=LEAKAGE_UW_PER_MM2_MAX)]
Area = Annotated[float, msgspec.Meta(ge=0, le=AREA_UM2_MAX)]
Node = Annotated[float, msgspec.Meta(ge=TECHNOLOGY_NM[0], le=TECHNOLOGY_NM[1])]


BufferKB = Annotated[float, msgspec.Meta(gt=0, le=BUFFER_KB_MAX)]


class BuffersRecord(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """KB a systolic array's buffers hold resident per operand role (for a double buffer,
    one half: the other half is filling); all three are required."""

    input: BufferKB
    """The input (activation) buffer."""
    weight: BufferKB
    """The weight buffer."""
    output: BufferKB
    """The output (partial-sum) buffer."""


class ModuleRecord(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One kind of hardware unit, ``count`` identical instances of it."""

    name: Text
    """The module's name, unique in the accelerator (``operator_mapping`` names it)."""
    type: Text
    """Its type, matched case-insensitively against the op types' preference lists
    (``ENCODING``, ``FIELD_COMPUTATION``, ``HOST``…; `nerframe.taxonomy.PREFERENCES`)."""
    count: Count
    """Identical instances."""
    throughput_ops_per_cycle: Positive | UnsetType = UNSET
    """Work items of ``unit`` per cycle per instance; on a systolic array 2·rows·cols,
    which it may leave out."""
    latency_cycles: Cycles
    """Pipeline fill, in cycles, paid once per op."""
    area_um2: Area | None
    """Area per instance in µm²; null when not published (a GPU's SMs)."""
    power_uw: NonNegative
    """Dynamic power per instance in µW."""
    memory_kb: NonNegative = 0.0
    """Local memory, descriptive only (no formula reads it)."""
    unit: WorkUnit = "flop"
    """What the throughput counts."""
    on_chip: bool = False
    """Operands and results stay in on-chip SRAM: its ops move no DRAM bytes."""
    power_reference_mhz: Positive | None = None
    """The clock ``power_uw`` was measured at (power then scales with the clock); null:
    the same power at any clock."""
    array: tuple[Side, Side] | UnsetType = UNSET
    """A systolic array's [rows, cols] of MACs (with ``dataflow``)."""
    dataflow: Dataflow | UnsetType = UNSET
    """The systolic array's dataflow (with ``array``)."""
    buffers: BuffersRecord | UnsetType = UNSET
    """A systolic array's buffers (with ``array``): KB each operand role keeps resident
    between folds; without them, capacity is unlimited."""
    bitwidth: Bits | None = None
    """The operand width in bits ``throughput_ops_per_cycle`` counts (a mixed-precision
    unit, FLOP-rated, not a systolic array): an op of b-bit operands costs
    ``ceil(b / bitwidth)^2`` of its FLOPs; null: the rate holds at any width."""


class SramRecord(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """An on-chip SRAM block."""

    name: Text
    """The block's name, unique in the accelerator."""
    size_kb: Positive
    """Capacity in KB."""
    area_um2: Area | None = None
    """Its area in µm²; null or absent: ``size_kb * sram_um2_per_kb``."""


class AssumptionRecord(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A figure the file assumes (no source gives it), with the range it may take."""

    parameter: Text
    """What is assumed, as a sweep grid names it: ``frequency_mhz``,
    ``dram_bandwidth_gbps``, ``dram_pj_per_byte`` or ``MODULE.FIELD`` (FIELD one of
    ``count``, ``throughput_ops_per_cycle``, ``latency_cycles``, ``power_uw``,
    ``area_um2``)."""
    low: NonNegative
    """The lowest plausible value; the file's own (nominal) value lies in [low, high]."""
    high: NonNegative
    """The highest plausible value."""
    reason: Text
    """Why the figure is assumed and where its range comes from."""


class AcceleratorFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """An accelerator file."""

    name: Text
    """The accelerator's name."""
    description: str = ""
    """One line about it."""
    extends: Text | UnsetType = UNSET
    """A built-in, or an accelerator file (relative to this file's folder), whose
    modules, SRAM and mapping this file adds to."""
    kind: AcceleratorKind | UnsetType = UNSET
    """``accelerator`` or ``gpu`` (a GPU runs one op at a time); default ``accelerator``,
    or the base's."""
    frequency_mhz: Clock | UnsetType = UNSET
    """Clock in MHz; required unless the file extends another."""
    dram_bandwidth_gbps: Positive | UnsetType = UNSET
    """Peak DRAM bandwidth in GB/s; required unless the file extends another."""
    dram_pj_per_byte: DramEnergy | UnsetType = UNSET
    """DRAM energy per byte moved, in pJ; required unless the file extends another."""
    technology_nm: Node | UnsetType | None = UNSET
    """The process node in nm; null or absent: not given (the base's when extending)."""
    compute_efficiency: Fraction = 1.0
    """Share of the peak throughput real kernels reach, on this file's own modules."""
    memory_efficiency: Fraction | UnsetType = UNSET
    """Share of the peak DRAM bandwidth real kernels reach; default 1, or the base's."""
    sram_um2_per_kb: NonNegative | UnsetType = UNSET
    """SRAM density for blocks without their own area; default the base's (a file that
    extends another), else the node table's at ``technology_nm`` (`nerframe.technology`)."""
    sram_pj_per_byte: NonNegative | UnsetType = UNSET
    """Energy of one SRAM byte read or written; default the node table's (0 for a GPU).
    Not inherited: the plug-in's node decides."""
    leakage_uw_per_mm2: Leakage | UnsetType = UNSET
    """Leakage per mm² of module and SRAM area; default the node table's (0 for a GPU).
    Not inherited."""
    gather_sector_bytes: NonNegative | UnsetType = UNSET
    """Bytes one random DRAM access moves (a GPU's 32-byte sector); default 0, or the
    base's."""
    l2_cache_kb: NonNegative | UnsetType = UNSET
    """A GPU's last-level cache, KB (its architecture whitepaper): a hash-grid level whose
    table fits in it moves its table once per batch (`nerframe.mapping.gathered_bytes`);
    default 0 (no cache credited), or the base's."""
    l2_bytes_per_cycle: NonNegative | UnsetType = UNSET
    """A GPU's L2 read bandwidth in bytes per core clock (whitepaper or measured): an
    op's memory time is at least the bytes it requests (hash-table sectors included)
    over this rate (`nerframe.mapping.l2_bytes`); default 0 (unlimited), or the base's."""
    modules: Annotated[list[ModuleRecord], msgspec.Meta(min_length=1)]
    """The file's own modules (at least one)."""
    sram: list[SramRecord] = []
    """SRAM blocks."""
    operator_mapping: dict[str, Text] = {}
    """Op type (``"<op_type> (B)"`` for backward rows) -> module name; overrides the
    preference lists."""
    sources: list[Text] = []
    """Where each figure comes from."""
    notes: Any = None
    """Anything, kept out of the model."""
    assumptions: list[AssumptionRecord] = []
    """The assumed figures and their plausible ranges (``nerframe.bands`` moves them
    across those ranges); a file that extends another adds to, or replaces by
    parameter, the base's."""

"""The original framework's (RenderSim's) accelerator file: what nerframe reads of it.

The format is foreign, so the model declares only the fields nerframe reads, and
tolerates the others (``interconnect``, ``validation_metrics``, a module's
``specifications``…, and any a file adds): each record is a `msgspec.Struct` that
does not forbid unknown fields. What it declares is read under the policy of every
input file (`nerframe.formats`): a key given twice, a boolean or text where a
number belongs, a fraction where an integer belongs are refused, and every fault
names the file, the field path and the value. What a type cannot say (a memory
interface needs no throughput, a compute module does; a clock from the file or its
modules) `nerframe.rendersim_format` checks after conversion; its known defects
become load warnings there.

>>> from nerframe.formats import convert
>>> f = convert({"accelerator_name": "x", "interconnect": "bus", "hardware_modules":
...              {"a": {"module_type": "MLP", "count": 2, "implementation": "pe array",
...                     "performance": {"throughput_ops_per_cycle": 64, "latency_cycles": 1},
...                     "resources": {"area_um2": 10, "power_uw": 5}}}},
...             RenderSimFile, source="x.json")
>>> f.hardware_modules["a"].count, f.hardware_modules["a"].performance.throughput_ops_per_cycle
(2, 64.0)
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec
from msgspec import UNSET, UnsetType

Text = Annotated[str, msgspec.Meta(pattern=r"\S", description="text, not blank")]
# Numbers of 1e300 or more are refused, as the hand-written reader this model
# replaced did (assumption: no figure of a chip comes near them).
NonNegative = Annotated[float, msgspec.Meta(ge=0, lt=1e300)]
Positive = Annotated[float, msgspec.Meta(gt=0, lt=1e300)]
Count = Annotated[int, msgspec.Meta(ge=1)]
Cycles = Annotated[int, msgspec.Meta(ge=0)]


class Performance(msgspec.Struct, kw_only=True):
    """A module's speed: a compute module gives a throughput and a latency, a memory
    interface a bandwidth."""

    throughput_ops_per_cycle: Positive | UnsetType = UNSET
    """Operations per cycle per instance (read as FLOPs, with a warning)."""
    latency_cycles: Cycles | UnsetType = UNSET
    """Pipeline fill in cycles; required of a compute module."""
    max_frequency_mhz: Positive | UnsetType = UNSET
    """The module's highest clock; the chip's clock when the file gives none."""
    bandwidth_gbps: Positive | UnsetType = UNSET
    """A memory interface's bandwidth (a module without a throughput)."""


class Resources(msgspec.Struct, kw_only=True):
    """A module's cost per instance."""

    area_um2: NonNegative | UnsetType = UNSET
    """Area in µm²; required of a compute module."""
    power_uw: NonNegative | UnsetType = UNSET
    """Dynamic power in µW; required of a compute module."""
    memory_kb: NonNegative | UnsetType = UNSET
    """Local memory (taken as 0, with a warning, when absent)."""


class HardwareModule(msgspec.Struct, kw_only=True):
    """One entry of ``hardware_modules`` (its key is the module's name)."""

    module_type: Text
    """Its type, matched against the op types' preference lists."""
    count: Count | UnsetType = UNSET
    """Identical instances; required of a compute module."""
    performance: Performance
    """Its speed."""
    resources: Resources
    """Its area, power and memory."""
    implementation: Any = None
    """Free text (a systolic array's says so: its throughput may count MACs)."""
    specifications: Any = None
    """Free-form; an ``array_size`` of ``"R x C"`` marks a systolic array."""


class SystemSpecifications(msgspec.Struct, kw_only=True):
    """Chip-wide figures."""

    target_frequency_mhz: Positive | UnsetType = UNSET
    """The chip's clock; without it, the modules' lowest ``max_frequency_mhz``."""
    technology_node_nm: Positive | None = None
    """The process node in nm; null or absent: not given."""


class MainMemory(msgspec.Struct, kw_only=True):
    """The DRAM of ``memory_hierarchy``."""

    bandwidth_gbps: Positive | None = None
    """Its bandwidth in GB/s."""


class MemoryHierarchy(msgspec.Struct, kw_only=True):
    """Where newer original files give the DRAM bandwidth."""

    main_memory: MainMemory | None = None
    """The DRAM."""
    dram_bandwidth_gbps: Positive | None = None
    """The DRAM bandwidth in GB/s (a third spelling)."""


class SramBlock(msgspec.Struct, kw_only=True):
    """An on-chip SRAM block."""

    name: Text
    """The block's name."""
    size_kb: Positive
    """Capacity in KB."""
    area_um2: NonNegative | None = None
    """Its area in µm²; null or absent: sized at the file's typical density."""


class RenderSimFile(msgspec.Struct, kw_only=True):
    """An accelerator file in the original framework's format."""

    accelerator_name: Text
    """The accelerator's name (kept even where it names another file's chip)."""
    accelerator_type: Any = None
    """One line about it (the description, when it is text)."""
    hardware_modules: Annotated[dict[str, HardwareModule], msgspec.Meta(min_length=1)]
    """Module name -> module (at least one)."""
    system_specifications: SystemSpecifications = msgspec.field(
        default_factory=SystemSpecifications
    )
    """Clock and process node."""
    dram_bandwidth_gbps: Positive | None = None
    """The DRAM bandwidth in GB/s (the spec's first spelling)."""
    memory_hierarchy: MemoryHierarchy | None = None
    """The DRAM bandwidth (newer files)."""
    sram_blocks: list[SramBlock] = []
    """SRAM blocks."""
    operator_mapping: dict[str, Text] = {}
    """Op type, module type or category -> module name."""

"""The host probe result (``host-probe.json``): what `nerframe.probing.probe` measured.

A file without ``format`` is a version-1 result (``peak_tflops`` and
``bandwidth_gbps`` only): `nerframe.probing` reads it as the roofline system
``host`` and does not declare it here.

>>> from nerframe.formats import convert
>>> p = convert({"format": "nerframe-probe", "version": 2, "peak_tflops": 0.1,
...              "bandwidth_gbps": 10.0, "call_s": 1e-6, "view_s": 1e-7, "module_s": 2e-6,
...              "gemm": [{"m": 4096, "k": 4, "n": 4, "flops_per_s": 1e9}],
...              "fresh": [{"bytes": 8192, "bytes_per_s": 1e10}],
...              "reused": [{"bytes": 8192, "bytes_per_s": 2e10}],
...              "gather": [{"table_bytes": 8192, "rows_per_s": 1e8}], "load": [0, 0, 0],
...              "elements": [{"kind": "simple", "elements": 9, "elements_per_s": 1e9}]},
...             ProbeFile, source="p")
>>> p.gemm[0].dtype, p.cpus
('float32', 1)
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

Positive = Annotated[float, msgspec.Meta(gt=0)]
Seconds = Annotated[float, msgspec.Meta(ge=0)]
Count = Annotated[int, msgspec.Meta(ge=1)]


class GemmPoint(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One probed GEMM: ``M × K`` by ``K × N`` (``linear`` with bias)."""

    m: Count
    k: Count
    n: Count
    dtype: Annotated[str, msgspec.Meta(min_length=1)] = "float32"
    flops_per_s: Positive
    """``2·M·K·N`` over the time per call net of the fixed cost."""


class CopyPoint(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One probed copy: bytes read plus written, and the rate."""

    bytes: Positive
    bytes_per_s: Positive


class GatherPoint(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One probed gather: the table's bytes and the rows read per second (version 4: from
    16 such tables in turn, none cached; versions 2 and 3: from one, cached)."""

    table_bytes: Positive
    rows_per_s: Positive


class ElementPoint(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """One element-rate probe: its kind, elements (output elements; input elements for
    ``reduce``) and elements per second (``integer``, ``divide`` and ``reduce``: version
    4)."""

    kind: Literal["simple", "special", "broadcast", "integer", "divide", "reduce"]
    elements: Count
    elements_per_s: Positive


class ProbeFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A host probe result (version 4, 3 or 2)."""

    format: Literal["nerframe-probe"]
    """Always ``nerframe-probe`` (absent in version 1)."""
    version: Literal[2, 3, 4]
    """4 (written): gathers from 16 tables in turn, the integer, divide and reduce element
    rates; 3: a K × N grid per ``M``, gathers from one table; 2: one ``M``. Read as they
    are."""
    system: str = "host"
    """Always ``host``."""
    peak_tflops: Positive
    """The best GEMM rate (TFLOP/s): the roofline system ``host``'s peak."""
    bandwidth_gbps: Positive
    """The largest reused-memory copy's rate (GB/s): ``host``'s bandwidth."""
    call_s: Seconds
    """Fixed cost of one tiny element-wise call."""
    view_s: Seconds
    """Fixed cost of one tiny view."""
    module_s: Seconds
    """Fixed cost of one module call with the capture's timing hooks (0: not measured)."""
    cold_s: Seconds = 0.0
    """Fixed cost of one tiny op in a chain of different ones after a cache-evicting sweep:
    a kernel call inside a model (version 4; 0: not measured, ``call_s`` is used)."""
    gemm: Annotated[list[GemmPoint], msgspec.Meta(min_length=1)]
    """GEMM throughput on a full grid of K × N for each M (per dtype)."""
    fresh: Annotated[list[CopyPoint], msgspec.Meta(min_length=1)]
    """Bandwidth into fresh memory, by size."""
    reused: Annotated[list[CopyPoint], msgspec.Meta(min_length=1)]
    """Bandwidth into reused memory (``out=``), by size."""
    gather: Annotated[list[GatherPoint], msgspec.Meta(min_length=1)]
    """Gather rate, by table size."""
    elements: Annotated[list[ElementPoint], msgspec.Meta(min_length=1)]
    """Element rates: simple, special function, broadcast (and, version 4, integer,
    divide, reduce)."""
    load: Annotated[
        list[Annotated[float, msgspec.Meta(ge=0)]], msgspec.Meta(min_length=3, max_length=3)
    ]
    """``os.getloadavg()`` before the probe: 1-, 5- and 15-minute load."""
    load_after: list[float] = []
    """``os.getloadavg()`` after it."""
    cpus: Count = 1
    """``os.cpu_count()``."""
    busy: bool = False
    """Whether the 1-minute load exceeded the CPU count minus 0.5 before or after."""
    threads: Annotated[int, msgspec.Meta(ge=0)] = 0
    """torch's intra-op threads during the probe (0: not torch)."""
    backend: str = ""
    """What measured: ``torch X (N threads)`` or ``numpy X``."""
    measured: str = ""
    """When (UTC, ISO 8601)."""
    machine: str = ""
    processor: str = ""
    method: str = ""
    """The probe's method, in words."""

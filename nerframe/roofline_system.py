"""A roofline system: peak compute, DRAM bandwidth and their efficiencies (one value).

It lives apart from `nerframe.rooflines` (the roofline figures of operators) so that
`nerframe.probing`, which builds the measured ``host`` system, needs nothing else of
it.
"""

from __future__ import annotations

import math
from dataclasses import dataclass

from nerframe import ppa
from nerframe.errors import InvalidInputError


@dataclass(frozen=True)
class System:
    """A roofline: peak compute (TFLOP/s), DRAM bandwidth (GB/s) and their efficiencies.

    >>> s = System("npu", peak_tflops=4.0, bandwidth_gbps=100.0)
    >>> s.ridge  # FLOP/byte where the roofs meet
    40.0
    """

    name: str
    peak_tflops: float
    bandwidth_gbps: float
    compute_efficiency: float = 1.0
    memory_efficiency: float = 1.0
    source: str = ""

    def __post_init__(self) -> None:
        for field in ("peak_tflops", "bandwidth_gbps"):
            value = getattr(self, field)
            if not (isinstance(value, int | float) and math.isfinite(value) and value > 0):
                raise InvalidInputError(
                    f"roofline system {self.name!r}: {field} must be a positive number, "
                    f"got {value!r}"
                )
        for field in ("compute_efficiency", "memory_efficiency"):
            value = getattr(self, field)
            if not (isinstance(value, int | float) and 0 < value <= 1):
                raise InvalidInputError(
                    f"roofline system {self.name!r}: {field} must be in (0, 1], got {value!r}"
                )

    @property
    def ridge(self) -> float:
        """Arithmetic intensity (FLOP/byte) where the compute and memory roofs meet.

        >>> System("npu", peak_tflops=4.0, bandwidth_gbps=100.0).ridge  # 4e12 / 1e11
        40.0
        """
        return float(ppa.ridge(self.peak_tflops, self.bandwidth_gbps))

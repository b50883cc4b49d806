"""The one record that carries hardware configurations from the accelerator model
to the kernels.

`Hardware` holds C variants of one accelerator of M modules as arrays: module
fields have shape (C, M), in the accelerator's module order, the others shape
(C,). The API layer builds it by keyword (`nerframe.scheduling.Configurations`
adds the accelerator-model side: `Configurations.of(accel)` and the derived
figures); the sweep kernel reads a base configuration (C = 1) from it, and the
scheduler kernel's effective inputs (`nerframe.kernels.schedule_inputs.ConfigArrays`)
are derived from it. Each field has one dtype whatever the accelerator (numba
compiles once per combination of argument types).

>>> import numpy as np
>>> one = Hardware(**{name: np.zeros((1, 2) if name.startswith("module_") else 1, dtype)
...                   for name, dtype in DTYPES.items()})
>>> one.module_count.shape, one.frequency_mhz.dtype, one.module_counts_flops.dtype
((1, 2), dtype('float64'), dtype('bool'))
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np

__all__ = ["DTYPES", "Hardware"]


class Hardware(NamedTuple):
    """C variants of one accelerator of M modules (see the module docstring)."""

    module_count: np.ndarray  # int64 (C, M): instances of the module
    module_throughput: np.ndarray  # float64 (C, M): peak work units per cycle per instance
    module_latency: np.ndarray  # int64 (C, M): cycles added to every op
    module_power_uw: np.ndarray  # float64 (C, M): per busy instance, at the reference clock
    module_area_um2: np.ndarray  # float64 (C, M): per instance; NaN where not published
    frequency_mhz: np.ndarray  # float64 (C,)
    dram_bandwidth_gbps: np.ndarray  # float64 (C,): peak
    dram_pj_per_byte: np.ndarray  # float64 (C,)
    # float64 (C, M): the clock `module_power_uw` was measured at; NaN where power
    # does not depend on the clock
    module_power_reference_mhz: np.ndarray
    module_efficiency: np.ndarray  # float64 (C, M): share of the peak real work reaches
    memory_efficiency: np.ndarray  # float64 (C,): share of the DRAM peak real work reaches
    module_counts_flops: np.ndarray  # bool (C, M): rated in FLOPs (counts to peak FLOP/s)
    module_array_rows: np.ndarray  # int64 (C, M): systolic array shape, 1 where none
    module_array_cols: np.ndarray  # int64 (C, M)
    module_dataflow: np.ndarray  # int64 (C, M): `nerframe.kernels.systolic` code, 0 = none
    sram_pj_per_byte: np.ndarray  # float64 (C,): SRAM access energy
    leakage_uw_per_mm2: np.ndarray  # float64 (C,): leakage power density
    sram_area_um2: np.ndarray  # float64 (C,)


_INTEGER = ("module_count", "module_latency", "module_array_rows", "module_array_cols")
DTYPES: dict[str, type] = {
    name: np.int64
    if name in _INTEGER or name == "module_dataflow"
    else np.bool_
    if name == "module_counts_flops"
    else np.float64
    for name in Hardware._fields
}
"""The dtype of each `Hardware` field."""

"""The cost kernel's inputs from ops columns: the catalogue's tables and the ops
schema's dtypes, which `nerframe.kernels.costs` may not import, joined to plain
arrays; and `cost_columns`, which runs the kernel on them.

>>> import numpy as np
>>> from nerframe.cost_inputs import cost_columns
>>> out = cost_columns({"op_type": np.array([0], np.uint8), "B": np.array([4096]),
...                     "N": np.array([64])})
>>> float(out["flops"][0]), int(out["elems_in"][0]), float(out["bytes_out"][0])
(262144.0, 4096, 524288.0)
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import polars as pl

from nerframe.kernels.costs import CostInputs, CostOutputs, cost_kernel
from nerframe.schemas import OPS
from nerframe.taxonomy import OP_TYPES, PARAMETERS, op_types

__all__ = ["ARGUMENTS", "InvalidRowsError", "cost_columns", "kernel_inputs"]

ARGUMENTS = (
    "op_type",
    "op_id",
    "backward",
    "bitwidth",
    *(p.name for p in PARAMETERS),
)
"""The ops columns the kernel reads."""

_FLAGS = {"backward", "use_sin_cos", "use_bias"}
# The ops schema's dtypes, so that every column compiles the same specialisation.
_DTYPES = {
    name: pl.Series(dtype=dtype).to_numpy().dtype
    for name, dtype in OPS.items()
    if dtype.is_numeric()
}
_DTYPES["op_type"] = np.dtype(np.uint8)

# Per-sample multiples (flops, A, W, O) of the op types whose costs are all
# multiples of B*N, from the catalogue (see `CostInputs`), and which those are;
# one entry more, for codes outside the catalogue. Read-only: every call shares them.
_PIXELWISE = np.zeros((len(OP_TYPES) + 1, 4), np.float64)
for _t in op_types().values():
    if _t.per_element is not None:
        _PIXELWISE[_t.code] = _t.per_element
_PIXELWISE.setflags(write=False)
_IS_PIXELWISE = np.array([t.per_element is not None for t in op_types().values()] + [False])
_IS_PIXELWISE.setflags(write=False)


def kernel_inputs(
    columns: Mapping[str, Any], present: Mapping[str, np.ndarray] | None = None
) -> CostInputs:
    """The kernel's inputs from ops columns as arrays.

    `columns` maps ops column names to arrays (``op_type`` as catalogue codes); a
    missing column reads as zeros (``bitwidth`` as 16, ``backward`` as false,
    other flags as true). Flags may be bool arrays or ``(arrow_bitmap,
    bit_offset)`` pairs, and ``skip_connections`` an ``(offsets, values)`` pair.
    `present` maps a parameter with nulls to its validity bitmap (bit offset 0);
    the others are taken as present in every row.

    >>> kernel_inputs({"op_type": np.array([13], np.uint8)}).bitwidth.tolist()
    [16]
    """
    n = len(columns["op_type"])
    fields: dict[str, Any] = {}
    for name in ARGUMENTS:
        value = columns.get(name)
        key = "code" if name == "op_type" else name
        if name in _FLAGS:
            if value is None:
                value = np.full(n, name != "backward")
            bitmap, offset = value if isinstance(value, tuple) else _bitmap(value)
            fields[key], fields[f"{key}_offset"] = _frozen(bitmap, np.uint8), int(offset)
        elif name == "skip_connections":
            offsets, values = value or (np.zeros(n + 1, np.int64), np.zeros(0, np.int32))
            fields["skip_offsets"] = _frozen(offsets, np.int64)
            fields["skip_values"] = _frozen(values, np.int32)
        elif value is None:
            fields[key] = _frozen(np.full(n, 16 if name == "bitwidth" else 0), _DTYPES[name])
        else:
            fields[key] = _frozen(value, _DTYPES[name])
    width = (n + 7) // 8
    masks = np.full((len(PARAMETERS), width), 0xFF, np.uint8)
    for row, p in enumerate(PARAMETERS):
        if present and p.name in present:
            masks[row] = present[p.name][:width]
    return CostInputs(
        **fields,
        present=_frozen(masks, np.uint8),
        pixelwise=_PIXELWISE,
        is_pixelwise=_IS_PIXELWISE,
    )


def _frozen(values: Any, dtype: np.typing.DTypeLike) -> np.ndarray:
    """`values` as a read-only, C-contiguous array of `dtype` (a view where it already
    is one, never the caller's array itself).

    numba compiles one specialisation per (dtype, layout, read-only) combination of
    its arguments: Arrow views are read-only, fill arrays for absent columns are
    not, so without this every pattern of absent columns compiled its own copy of
    the kernel (seconds each).

    >>> a = np.arange(3)
    >>> f = _frozen(a, np.int32)
    >>> f.dtype, f.flags.writeable, f.flags.c_contiguous, a.flags.writeable
    (dtype('int32'), False, True, True)
    """
    array = np.ascontiguousarray(values, dtype).view()
    array.setflags(write=False)
    return array


class InvalidRowsError(ValueError):
    """Some row lacks a parameter its op type uses or holds a value out of range
    (the kernel does not say which: `nerframe.ops.validate` names it)."""


def cost_columns(
    columns: Mapping[str, Any], present: Mapping[str, np.ndarray] | None = None
) -> dict[str, np.ndarray]:
    """Run the kernel on plain arrays (see `kernel_inputs`) and return the nine cost
    columns. Invalid rows raise `InvalidRowsError`; rows with an element count at
    or above 2**53 raise `OverflowError`, with the first offending row index in its
    args.
    """
    inputs = kernel_inputs(columns, present)
    n = inputs.code.shape[0]
    out = CostOutputs(np.empty(n), np.empty((3, n), np.int64), np.empty((4, n)), np.empty(n))
    invalid, overflow = cost_kernel(inputs, out) if n else (0, 0)
    if invalid:
        raise InvalidRowsError("an ops row is invalid")
    if overflow:
        raise OverflowError("element count reaches 2**53", int(np.argmax(out.elems[0] < 0)))
    return {
        "flops": out.flops,
        "elems_in": out.elems[0],
        "elems_w": out.elems[1],
        "elems_out": out.elems[2],
        "bytes_in": out.nbytes[0],
        "bytes_w": out.nbytes[1],
        "bytes_out": out.nbytes[2],
        "bytes_total": out.nbytes[3],
        "intensity": out.intensity,
    }


def _bitmap(flags: np.ndarray) -> tuple[np.ndarray, int]:
    """A bool array as an Arrow-style little-endian bitmap and its bit offset."""
    return np.packbits(np.asarray(flags, bool), bitorder="little"), 0

"""The cost kernel's inputs and outputs, as NamedTuples of arrays.

Parameter columns are grouped by dtype (`Counts` int64, `Sizes` int32, `Ratios`
float64, `Flags` Arrow bitmaps) so the kernel can index a group by position
when it checks a row's parameters. `CHECKS` says, per op type, which
parameters to check and how: it is derived from the catalogue
(`nerframe.taxonomy`), so the kernel holds no list of who uses what.

>>> import numpy as np
>>> inputs = cost_inputs({"op_type": np.array([0], np.uint8), "B": np.array([4096]),
...                       "N": np.array([64])})
>>> inputs.counts.B[0], inputs.rows.bitwidth[0], inputs.sizes.degree.dtype
(np.int64(4096), np.int32(16), dtype('int32'))
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
import polars as pl

from nerframe.schemas import OPS
from nerframe.taxonomy import PARAMETER, PARAMETERS, op_types

__all__ = [
    "CHECKS",
    "CostInputs",
    "CostOutputs",
    "Counts",
    "Flags",
    "Ratios",
    "Rows",
    "Sizes",
    "cost_inputs",
    "cost_outputs",
]


class Flags(NamedTuple):
    """Boolean columns as Arrow bitmaps (uint8); their bit offsets are `CostInputs.flag_offsets`."""

    backward: np.ndarray
    use_sin_cos: np.ndarray
    use_bias: np.ndarray


class Counts(NamedTuple):
    """The int64 parameter columns."""

    B: np.ndarray
    N: np.ndarray
    G: np.ndarray


class Sizes(NamedTuple):
    """The int32 parameter columns."""

    input_dim: np.ndarray
    num_levels: np.ndarray
    features_per_level: np.ndarray
    log2_hashmap_size: np.ndarray
    num_features: np.ndarray
    in_dim: np.ndarray
    num_layers: np.ndarray
    layer_width: np.ndarray
    out_dim: np.ndarray
    degree: np.ndarray
    image_w: np.ndarray
    image_h: np.ndarray
    tile: np.ndarray
    tiles_per_gaussian: np.ndarray
    patch_size: np.ndarray
    channels: np.ndarray


class Ratios(NamedTuple):
    """The float64 parameter columns."""

    cull_ratio: np.ndarray
    tile_keep_ratio: np.ndarray
    coarse_prop: np.ndarray


class Rows(NamedTuple):
    """Per-row columns other than the parameter groups, and the groups' offsets."""

    code: np.ndarray  # op type codes (catalogue positions)
    op_id: np.ndarray  # int32, checked >= 0
    bitwidth: np.ndarray  # int32, checked in 1..64
    flag_offsets: np.ndarray  # int64[3]: bit offset of each `Flags` bitmap
    skip_offsets: np.ndarray  # int64[n + 1]: row i's skip connections are
    skip_values: np.ndarray  # int32: skip_values[skip_offsets[i]:skip_offsets[i + 1]]
    # Bit offset of each parameter's validity bitmap (in `PARAMETERS` order);
    # -1 means the column has no nulls.
    valid_offsets: np.ndarray


class CostInputs(NamedTuple):
    """Everything the cost kernel reads, for n rows."""

    rows: Rows
    flags: Flags
    counts: Counts
    sizes: Sizes
    ratios: Ratios
    valid: tuple[np.ndarray, ...]  # one validity bitmap per parameter


class CostOutputs(NamedTuple):
    """The kernel's outputs for n rows."""

    flops: np.ndarray  # float64[n]
    elems: np.ndarray  # int64[3, n]: in, w, out
    nbytes: np.ndarray  # float64[4, n]: in, w, out, total
    intensity: np.ndarray  # float64[n]


# Check kinds, one per parameter group.
COUNT, SIZE, RATIO, FLAG, INDICES = range(5)
_GROUPS = {
    **dict.fromkeys(Counts._fields, COUNT),
    **dict.fromkeys(Sizes._fields, SIZE),
    **dict.fromkeys(Ratios._fields, RATIO),
    **dict.fromkeys(Flags._fields, FLAG),
    "skip_connections": INDICES,
}
# A parameter's position within its group.
_INDEX = {f: i for group in (Counts, Sizes, Ratios, Flags) for i, f in enumerate(group._fields)}


def _checks() -> np.ndarray:
    """Per op code, rows (kind, index in its group, minimum, parameter position)
    for each parameter it uses, padded with kind -1."""
    position = {p.name: i for i, p in enumerate(PARAMETERS)}
    types = list(op_types().values())
    table = np.full((len(types), max(len(t.parameters) for t in types), 4), -1, np.int64)
    for t in types:
        for k, name in enumerate(t.parameters):
            row = (_GROUPS[name], _INDEX.get(name, 0), PARAMETER[name].minimum, position[name])
            table[t.code, k] = row
    return table


CHECKS = _checks()
"""int64[op types, parameters, 4]: the checks of each op type's parameters."""

# The ops schema's dtypes, so that filled-in columns compile the same specialisation.
_DTYPES = {
    name: pl.Series(dtype=dtype).to_numpy().dtype
    for name, dtype in OPS.items()
    if dtype.is_numeric()
}


def cost_inputs(
    columns: dict[str, object], validity: dict[str, tuple[np.ndarray, int]] | None = None
) -> CostInputs:
    """The kernel's inputs from ops columns as arrays.

    `columns` maps ops column names to arrays; a missing column reads as zeros
    (``bitwidth`` as 16, ``backward`` as false, other flags as true). Flags may be
    bool arrays or ``(arrow_bitmap, bit_offset)`` pairs, and ``skip_connections``
    an ``(offsets, values)`` pair. `validity` maps a parameter with nulls to its
    Arrow validity bitmap and bit offset.
    """
    n = len(columns["op_type"])  # type: ignore[arg-type]

    def array(name: str) -> np.ndarray:
        value = columns.get(name)
        if value is None:
            value = np.full(n, 16 if name == "bitwidth" else 0)
        return _read_only(np.asarray(value, _DTYPES.get(name)))

    bitmaps, offsets = [], []
    for name in Flags._fields:
        value = columns.get(name)
        if value is None:
            value = np.full(n, name != "backward")
        bitmap, offset = value if isinstance(value, tuple) else _bitmap(value)
        bitmaps.append(bitmap)
        offsets.append(offset)
    skips = columns.get("skip_connections") or (np.zeros(n + 1, np.int64), np.zeros(0, np.int32))
    validity = validity or {}
    no_nulls = _read_only(np.zeros(0, np.uint8))
    rows = Rows(
        code=array("op_type"),
        op_id=array("op_id"),
        bitwidth=array("bitwidth"),
        flag_offsets=np.array(offsets, np.int64),
        skip_offsets=skips[0],  # type: ignore[index]
        skip_values=skips[1],  # type: ignore[index]
        valid_offsets=np.array([validity.get(p.name, (no_nulls, -1))[1] for p in PARAMETERS]),
    )
    return CostInputs(
        rows=rows,
        flags=Flags(*bitmaps),
        counts=Counts(*(array(f) for f in Counts._fields)),
        sizes=Sizes(*(array(f) for f in Sizes._fields)),
        ratios=Ratios(*(array(f) for f in Ratios._fields)),
        valid=tuple(_read_only(validity.get(p.name, (no_nulls, -1))[0]) for p in PARAMETERS),
    )


def cost_outputs(n: int) -> CostOutputs:
    """Uninitialised outputs for n rows."""
    return CostOutputs(np.empty(n), np.empty((3, n), np.int64), np.empty((4, n)), np.empty(n))


def _read_only(values: np.ndarray) -> np.ndarray:
    """A read-only view: Arrow buffers are read-only, and a group of arrays must
    share one numba type for the kernel to index it by position."""
    view = values.view()
    view.flags.writeable = False
    return view


def _bitmap(flags: np.ndarray) -> tuple[np.ndarray, int]:
    """A bool array as an Arrow-style little-endian bitmap and its bit offset."""
    return np.packbits(np.asarray(flags, bool), bitorder="little"), 0

"""Per-operator costs: FLOPs, element counts, bytes and arithmetic intensity.

>>> import nerframe
>>> ops = nerframe.operators([{"op_type": "HashEncoding", "B": 4096, "N": 64}])
>>> nerframe.costs(ops).select("flops", "elems_in", "elems_out").row(0)
(369098752.0, 786432, 8388608)
"""

from __future__ import annotations

import numpy as np
import polars as pl
import pyarrow as pa

from nerframe.cost_inputs import ARGUMENTS, InvalidRowsError, cost_columns
from nerframe.errors import InvalidInputError
from nerframe.graphs import Graph
from nerframe.ops import validate
from nerframe.schemas import COST_COLUMNS, OPS
from nerframe.taxonomy import PARAMETER

# Columns that must never be null; polars knows their null counts without a scan.
_NOT_NULL = ("graph", "op_id", "op_type", "backward", "bitwidth", "scope")
# Compared as lists: a tenth of the time of comparing polars Schemas, which shows
# in calls on a handful of rows.
_NAMES = list(OPS)
_DTYPES = list(OPS.values())


def costs(ops: pl.DataFrame | Graph) -> pl.DataFrame:
    """The ops table (or a `Graph`'s ops) with the nine cost columns appended (schema ``costs``).

    >>> import nerframe
    >>> costs(nerframe.pipeline("neurex", model="spec"))["flops"].sum()
    7887388672.0

    The table is checked as `nerframe.ops.validate` with ``thorough=False`` does
    (the same `NerframeError` names the first bad row), but in the cost kernel's
    own pass over zero-copy views of its Arrow buffers. Element counts at or above
    2**53 (where float64 stops being exact) are refused with a `NerframeError`.
    """
    if isinstance(ops, Graph):
        ops = ops.ops
    if not isinstance(ops, pl.DataFrame):
        raise InvalidInputError(
            f"costs takes an ops table or a Graph, got {type(ops).__name__}", "ops"
        )
    ops = ops.rechunk()
    # The kernel checks each row's values; what it cannot see is left to validate:
    # the schema, nulls in the identity columns, and null skip indices (the kernel
    # does not look inside the lists).
    if (
        ops.columns != _NAMES
        or ops.dtypes != _DTYPES
        or any(ops.get_column(c).has_nulls() for c in _NOT_NULL)
        or ops.get_column("skip_connections").to_arrow().values.null_count
    ):
        validate(ops, thorough=False)
    try:
        out = cost_columns(*kernel_columns(ops))
    except InvalidRowsError:
        validate(ops, thorough=False)
        raise RuntimeError("the cost kernel refused a row that validate() accepts") from None
    except OverflowError as e:
        row = ops.row(e.args[1], named=True)
        raise InvalidInputError(
            f"ops row {e.args[1]} (op_id {row['op_id']}, {row['op_type']}): an element count "
            "reaches 2**53; reduce its dimensions"
        ) from None
    # hstack wraps the NumPy buffers without copying them
    return ops.hstack([pl.Series(name, out[name]) for name in COST_COLUMNS])


def kernel_columns(ops: pl.DataFrame) -> tuple[dict[str, object], dict[str, np.ndarray]]:
    """The arguments of `nerframe.cost_inputs.cost_columns` for a one-chunk ops table:
    zero-copy views of the columns the kernel reads, and the validity bitmaps of
    the parameters that have nulls.
    """
    columns: dict[str, object] = {}
    present = {}
    empty = np.zeros((ops.height + 7) // 8, np.uint8)
    for name in ARGUMENTS:
        series = ops.get_column(name)
        nulls = series.null_count()
        if nulls and nulls == ops.height and name in PARAMETER:
            # No row has it: its values are never read (polars knows this without a scan,
            # and skipping the Arrow view shows in calls on a handful of rows).
            present[name] = empty
            continue
        array = series.to_arrow()
        columns[name] = _view(array)
        if nulls and name in PARAMETER:
            present[name] = _validity(array)
    return columns, present


def _view(array: pa.Array) -> object:
    """The values of an Arrow column as NumPy, without copying and ignoring its null mask.

    Null slots hold arbitrary values; the kernel reads a parameter only where
    its validity bit says it is there. Booleans stay Arrow bitmaps ``(bytes, bit
    offset)``; lists become ``(offsets, values)``; enums their physical codes.
    """
    if pa.types.is_dictionary(array.type):
        array = array.indices
    if pa.types.is_boolean(array.type):
        return _buffer(array, np.uint8, whole=True), array.offset
    if pa.types.is_large_list(array.type):
        values = array.values
        return array.offsets.to_numpy(), _buffer(values, _numpy_type(values.type))
    return _buffer(array, _numpy_type(array.type))


def _numpy_type(kind: pa.DataType) -> np.dtype:
    """The NumPy type of a fixed-width numeric Arrow type. Not `to_pandas_dtype`, which
    needs pandas (not a dependency) in pyarrow before 26.

    >>> _numpy_type(pa.int64()), _numpy_type(pa.uint8()), _numpy_type(pa.float64())
    (dtype('int64'), dtype('uint8'), dtype('float64'))
    """
    if pa.types.is_integer(kind):
        sign = "u" if pa.types.is_unsigned_integer(kind) else "i"
        return np.dtype(f"{sign}{kind.bit_width // 8}")
    if pa.types.is_floating(kind):
        return np.dtype(f"f{kind.bit_width // 8}")
    raise TypeError(f"no NumPy view of Arrow type {kind}")


def _validity(array: pa.Array) -> np.ndarray:
    """An Arrow array's validity bitmap, shifted to start at bit 0."""
    bitmap = np.frombuffer(array.buffers()[0], np.uint8)
    start, n = array.offset, len(array)
    if start % 8 == 0:
        return bitmap[start // 8 : (start + n + 7) // 8]
    bits = np.unpackbits(bitmap, count=start + n, bitorder="little")[start:]
    return np.packbits(bits, bitorder="little")


def _buffer(array: pa.Array, dtype: np.typing.DTypeLike, whole: bool = False) -> np.ndarray:
    buffer = array.buffers()[1]
    if buffer is None:
        return np.zeros(0 if whole else len(array), dtype)
    values = np.frombuffer(buffer, dtype)
    return values if whole else values[array.offset : array.offset + len(array)]


def frame_total(costs: pl.DataFrame, column: str, batches: int) -> float:
    """A costs `column` over one frame: each frame-scope op once, each batch-scope op
    `batches` times. (A plain sum counts every op once: neither a batch, which has
    no frame ops, nor a frame.) FLOP/s = frame_total(flops) x fps.

    >>> costs = pl.DataFrame({"scope": ["frame", "batch"], "flops": [100.0, 7.0]})
    >>> frame_total(costs, "flops", batches=3)  # 100 + 3 x 7
    121.0
    """
    runs = pl.when(pl.col("scope") == "batch").then(batches).otherwise(1)
    return float(costs.select((pl.col(column) * runs).sum()).item())

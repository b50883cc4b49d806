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

from nerframe.errors import InvalidInputError, NerframeError
from nerframe.graphs import Graph
from nerframe.kernels.costs import COLUMNS, cost_columns
from nerframe.ops import validate
from nerframe.schemas import COST_COLUMNS, OPS
from nerframe.taxonomy import PARAMETER

# Columns that must never be null; the kernel checks the rest row by row.
_REQUIRED = ("graph", "op_id", "op_type", "backward", "bitwidth", "scope")


def costs(ops: pl.DataFrame | Graph) -> pl.DataFrame:
    """The ops table (or a `Graph`'s ops) with the nine cost columns appended (schema ``costs``).

    >>> import nerframe
    >>> costs(nerframe.pipeline("neurex", model="spec"))["flops"].sum()
    7887388672.0

    The kernel reads zero-copy views of the table's Arrow buffers and, in the
    same pass, checks every value a cost depends on: each parameter a row's op
    type uses (present and in range), its bitwidth and op id. An invalid table
    is then handed to `nerframe.ops.validate`, which names the first culprit
    (values in parameters an op type does not use are not checked here, as they
    cannot change a cost). Element counts at or above 2**53 (where float64
    stops being exact) are refused with a `NerframeError`.
    """
    if isinstance(ops, Graph):
        ops = ops.ops
    if not isinstance(ops, pl.DataFrame):
        raise InvalidInputError(
            f"costs takes an ops table or a Graph, got {type(ops).__name__}", "ops"
        )
    if ops.schema != OPS or any(ops.get_column(c).has_nulls() for c in _REQUIRED):
        validate(ops, thorough=False)
    ops = ops.rechunk()
    arrays = {name: _arrow(ops.get_column(name)) for name in COLUMNS}
    validity = {
        name: (np.frombuffer(array.buffers()[0], np.uint8), array.offset)
        for name, array in arrays.items()
        if name in PARAMETER and array.null_count
    }
    try:
        columns = cost_columns({name: _view(array) for name, array in arrays.items()}, validity)
    except ValueError:
        validate(ops, thorough=False)
        raise AssertionError("the cost kernel refused a table validate accepts") from None
    except OverflowError as e:
        row = ops.row(e.args[1], named=True)
        raise NerframeError(
            f"ops row {e.args[1]} (op_id {row['op_id']}, {row['op_type']}): an element count "
            "reaches 2**53; reduce its dimensions"
        ) from None
    return ops.with_columns(
        pl.Series(name, columns[name], dtype=dtype) for name, dtype in COST_COLUMNS.items()
    )


def _arrow(series: pl.Series) -> pa.Array:
    array = series.to_arrow()
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _view(array: pa.Array) -> object:
    """The values of a column as NumPy, without copying and ignoring its null mask.

    Null slots hold arbitrary values; the kernel reads a parameter only for the
    rows whose op type uses it, after checking that it is not null there.
    Booleans stay Arrow bitmaps ``(bytes, bit offset)``; lists become
    ``(offsets, values)``; enums their physical codes.
    """
    if pa.types.is_dictionary(array.type):
        array = array.indices
    if pa.types.is_boolean(array.type):
        return _buffer(array, np.uint8, whole=True), array.offset
    if pa.types.is_large_list(array.type):
        values = array.values
        return array.offsets.to_numpy(), _buffer(values, values.type.to_pandas_dtype())
    return _buffer(array, array.type.to_pandas_dtype())


def _buffer(array: pa.Array, dtype: np.typing.DTypeLike, whole: bool = False) -> np.ndarray:
    buffer = array.buffers()[1]
    if buffer is None:
        return np.zeros(0 if whole else len(array), dtype)
    values = np.frombuffer(buffer, dtype)
    return values if whole else values[array.offset : array.offset + len(array)]

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
from nerframe.kernels.costs import ARGUMENTS, cost_columns
from nerframe.ops import validate
from nerframe.schemas import COST_COLUMNS


def costs(ops: pl.DataFrame | Graph) -> pl.DataFrame:
    """The ops table (or a `Graph`'s ops) with the nine cost columns appended (schema ``costs``).

    >>> import nerframe
    >>> costs(nerframe.pipeline("neurex", model="spec"))["flops"].sum()
    7887388672.0

    The table is validated first (see `nerframe.ops.validate`); the kernel then
    reads zero-copy views of its Arrow buffers. Element counts at or above 2**53
    (where float64 stops being exact) are refused with a `NerframeError`.
    """
    if isinstance(ops, Graph):
        ops = ops.ops
    if not isinstance(ops, pl.DataFrame):
        raise InvalidInputError(
            f"costs takes an ops table or a Graph, got {type(ops).__name__}", "ops"
        )
    validate(ops, thorough=False)
    ops = ops.rechunk()
    try:
        columns = cost_columns({name: _view(ops.get_column(name)) for name in ARGUMENTS})
    except OverflowError as e:
        row = ops.row(e.args[1], named=True)
        raise NerframeError(
            f"ops row {e.args[1]} (op_id {row['op_id']}, {row['op_type']}): an element count "
            "reaches 2**53; reduce its dimensions"
        ) from None
    return ops.with_columns(
        pl.Series(name, columns[name], dtype=dtype) for name, dtype in COST_COLUMNS.items()
    )


def _view(series: pl.Series) -> object:
    """The values of a column as NumPy, without copying and ignoring its null mask.

    Null slots hold arbitrary values; the kernel never reads a parameter an op
    type does not use, and `validate` guarantees the used ones are not null.
    Booleans stay Arrow bitmaps ``(bytes, bit offset)``; lists become
    ``(offsets, values)``; enums their physical codes.
    """
    array = series.to_arrow()
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
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

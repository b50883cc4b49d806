"""Parquet files written by copying columns, not encoding them: a sweep's parts.

Writing its parts is all that store mode adds to a sweep. pyarrow's encoder took
27-47 ms of CPU for a 250,000-row neurex part on the development machine, about
five times the file write itself; this writer takes about 10 ms (in a store sweep,
the writer thread's CPU fell from 130-250 ms to 60-75 ms per 1 M rows). Sweep
columns need no encoder: fixed-width values go into their pages as they lie in
memory (Parquet's PLAIN encoding is little-endian values); a column with few runs
in a row group (labels, workload values, slow axes) is dictionary-encoded from its
runs, integers in steps (`config`) go as DELTA_BINARY_PACKED blocks of bit width
0, and validity goes as runs of definition levels. Nothing is compressed and
there are no statistics: result columns are unsorted within a part, so readers
could skip little. The Arrow schema is stored as pyarrow stores it, so pyarrow and
polars read enums back as enums. One data page per column and row group.

Parts hold about 77 bytes a row for neurex (pyarrow's held 72): a column of many
runs is copied even when it takes few values. Dictionary-encoding those too
(hashing and bit-packing in numba) made parts of 58 bytes a row but cost more CPU
than the bytes saved: store mode at 64-73 % of in-memory speed instead of 76-82 %.

Format: the Apache Parquet file format (parquet.apache.org/docs/file-format),
its headers and footer in the Thrift compact protocol.

>>> import io, pyarrow.parquet
>>> table = pa.table({"config": [0, 1, 2], "fps": [30.0, None, 30.0]})
>>> buffer = io.BytesIO()
>>> with PartFile(buffer, table.schema) as part:
...     part.write(table)
>>> pa.parquet.read_table(buffer).to_pydict()
{'config': [0, 1, 2], 'fps': [30.0, None, 30.0]}
"""

from __future__ import annotations

import base64
import struct
from collections.abc import Iterable
from types import TracebackType
from typing import IO, Any

import numba
import numpy as np
import pyarrow as pa

# Thrift compact protocol field types.
_I32, _I64, _BINARY, _LIST, _STRUCT = 5, 6, 8, 9, 12
# Parquet enums.
_BOOLEAN, _INT64, _DOUBLE, _BYTE_ARRAY = 0, 2, 5, 6
_REQUIRED, _OPTIONAL = 0, 1
_PLAIN, _RLE, _DELTA_BINARY_PACKED, _RLE_DICTIONARY = 0, 3, 5, 8
_DATA_PAGE, _DICTIONARY_PAGE = 0, 2
_UTF8 = 0
# A column is dictionary-encoded when a row group holds at most this share of runs.
_RUNS_PER_ROW = 1 / 16

# Page sizes are 32-bit signed integers in Parquet's page headers.
_PAGE_BYTES = 2**31 - 1
# Values a block of DELTA_BINARY_PACKED holds, in miniblocks of 32.
_DELTA_BLOCK = 128
# The runs of a column of one value.
_FIRST = np.zeros(1, np.int64)

_Field = tuple[int, int, Any]
"""A Thrift field: its id, its compact type, its value (None: left out)."""


# Most varints in headers are one byte: made once.
_BYTES = [bytes([n]) for n in range(0x80)]


def _varint(n: int) -> bytes:
    """`n` (not negative) as a ULEB128 varint."""
    if n < 0x80:
        return _BYTES[n]
    out = bytearray()
    while n >= 0x80:
        out.append(n & 0x7F | 0x80)
        n >>= 7
    out.append(n)
    return bytes(out)


def _zigzag(n: int) -> int:
    """`n` with its sign in the lowest bit, as Thrift and Parquet varints carry it."""
    return n << 1 if n >= 0 else (-n << 1) - 1


def _value(kind: int, value: Any) -> bytes:
    """A Thrift value of compact type `kind`."""
    if kind in (_I32, _I64):
        return _varint(_zigzag(value))
    if kind == _BINARY:
        data = value.encode() if isinstance(value, str) else value
        return _varint(len(data)) + data
    if kind == _LIST:
        element, items = value
        count = len(items)
        head = bytes([count << 4 | element]) if count < 15 else bytes([0xF0 | element])
        tail = _varint(count) if count >= 15 else b""
        return head + tail + b"".join(_value(element, item) for item in items)
    return bytes(value)  # a struct, encoded by `_struct`


def _struct(fields: Iterable[_Field]) -> bytes:
    """A Thrift struct in the compact protocol (field ids ascending, gaps under 16)."""
    out, last = bytearray(), 0
    for number, kind, value in fields:
        if value is not None:
            out.append((number - last) << 4 | kind)
            out += _value(kind, value)
            last = number
    out.append(0)
    return bytes(out)


@numba.njit(cache=True, nogil=True)
def _run_starts(keys: np.ndarray, limit: int) -> np.ndarray:  # pragma: no cover - numba
    """Where the runs of equal `keys` start; stops after `limit` + 1 runs."""
    starts = np.empty(min(keys.size, limit + 1), np.int64)
    runs = 0
    for i in range(keys.size):
        if i == 0 or keys[i] != keys[i - 1]:
            if runs > limit:
                break
            starts[runs] = i
            runs += 1
    return starts[:runs]


@numba.njit(cache=True, nogil=True)
def _step(keys: np.ndarray) -> tuple[bool, int]:  # pragma: no cover - numba
    """Whether `keys` (two or more) rise or fall by one step, and the step."""
    step = keys[1] - keys[0]
    for i in range(2, keys.size):
        if keys[i] - keys[i - 1] != step:
            return False, 0
    return True, step


def _sequence(first: int, step: int, size: int) -> bytes:
    """`size` integers from `first` by `step` in DELTA_BINARY_PACKED: a header, then
    per block the step as its least delta and four miniblocks of bit width 0."""
    blocks = -(-(size - 1) // _DELTA_BLOCK)
    header = b"".join(_varint(v) for v in (_DELTA_BLOCK, 4, size, _zigzag(first)))
    return header + (_varint(_zigzag(step)) + bytes(4)) * blocks


@numba.njit(cache=True, nogil=True)
def _hybrid(
    starts: np.ndarray, values: np.ndarray, size: int, width: int
) -> np.ndarray:  # pragma: no cover
    """`size` values in runs starting at `starts` with `values`, in Parquet's
    RLE/bit-packing hybrid encoding, as RLE runs, `width` bits a value."""
    nbytes = (width + 7) // 8
    out = np.empty(starts.size * (5 + nbytes), np.uint8)
    at = 0
    for r in range(starts.size):
        length = (starts[r + 1] if r + 1 < starts.size else size) - starts[r]
        header = length << 1
        while header >= 0x80:
            out[at] = (header & 0x7F) | 0x80
            header >>= 7
            at += 1
        out[at] = header
        at += 1
        for b in range(nbytes):
            out[at] = (values[r] >> (8 * b)) & 0xFF
            at += 1
    return out[:at]


def _indices(starts: np.ndarray, codes: np.ndarray, size: int, entries: int) -> bytes:
    """A dictionary-encoded data page's values: the bit width of indices into
    `entries` values, then the runs starting at `starts` with indices `codes`."""
    width = max(1, (entries - 1).bit_length())
    return bytes([width]) + _hybrid(starts, codes, size, width).tobytes()


def _levels(starts: np.ndarray, values: np.ndarray, size: int) -> bytes:
    """Definition levels: their runs, after their size in bytes."""
    runs = _hybrid(starts, values, size, 1)
    return struct.pack("<i", runs.size) + runs.tobytes()


def _physical(field: pa.Field) -> tuple[int, int | None]:
    """The Parquet type of `field` and its converted type."""
    kind = field.type
    strings = pa.types.is_string, pa.types.is_large_string
    if pa.types.is_dictionary(kind) and any(test(kind.value_type) for test in strings):
        return _BYTE_ARRAY, _UTF8
    for test, physical in ((pa.types.is_int64, _INT64), (pa.types.is_float64, _DOUBLE)):
        if test(kind):
            return physical, None
    if pa.types.is_boolean(kind):
        return _BOOLEAN, None
    raise TypeError(f"{field.name}: a part holds no {kind} column")


class _Chunk:
    """One column of one row group, ready to write: its data page's definition levels
    and values, and its dictionary page (entries, values) if it has one."""

    def __init__(self, field: pa.Field, physical: int, array: pa.Array) -> None:
        self.rows = len(array)
        self.physical = physical
        self.levels = b""
        if field.nullable and not array.null_count:
            self.levels = _levels(_FIRST, _FIRST + 1, self.rows)
        elif field.nullable:
            valid = np.asarray(array.is_valid()).view(np.uint8)
            starts = _run_starts(valid, valid.size)
            self.levels = _levels(starts, valid[starts], self.rows)
            array = array.drop_null()
        elif array.null_count:
            raise ValueError(f"{field.name}: a required column holds nulls")
        self.dictionary: tuple[int, Any] | None = None
        self.encoding = _PLAIN
        self.values = self._values(array)

    def _values(self, array: pa.Array) -> Any:
        """The data page's values; sets `dictionary` when they go through one."""
        if pa.types.is_dictionary(array.type):
            codes = array.indices.to_numpy()
            names = [e.encode() for e in array.dictionary.to_pylist()]
            self.dictionary = (len(names), b"".join(struct.pack("<i", len(e)) + e for e in names))
            self.encoding = _RLE_DICTIONARY
            starts = _run_starts(codes, codes.size)
            return _indices(starts, codes[starts], codes.size, len(names))
        if pa.types.is_boolean(array.type):
            return np.packbits(array.to_numpy(zero_copy_only=False), bitorder="little")
        values = array.to_numpy()
        values = values.astype(values.dtype.newbyteorder("<"), copy=False)
        keys = values.view(np.int64)  # float values are told apart by their bits
        limit = int(keys.size * _RUNS_PER_ROW)
        starts = _run_starts(keys, limit)
        if not 0 < starts.size <= limit:
            # Integers in steps (a sweep's `config`) take a few bytes per 128 values.
            if self.physical == _INT64 and keys.size > 1 and (steps := _step(keys))[0]:
                self.encoding = _DELTA_BINARY_PACKED
                return _sequence(int(keys[0]), int(steps[1]), keys.size)
            return values
        run_keys = keys[starts]
        entries = np.unique(run_keys)
        self.dictionary = (entries.size, entries)
        self.encoding = _RLE_DICTIONARY
        return _indices(starts, np.searchsorted(entries, run_keys), keys.size, entries.size)


class PartFile:
    """A Parquet file being written to `sink`: one row group per `write`, the footer
    on `close` (also on leaving a ``with`` block without an error). The same tables
    give the same bytes."""

    def __init__(self, sink: IO[bytes], schema: pa.Schema) -> None:
        self._sink = sink
        self._schema = schema
        self._types = [_physical(field) for field in schema]
        self._groups: list[bytes] = []
        self._rows = 0
        self._at = 0
        self._closed = False
        self._put([b"PAR1"])

    def _put(self, buffers: Iterable[Any]) -> None:
        """Write `buffers` (bytes or arrays) as they lie in memory."""
        for buffer in buffers:
            self._at += self._sink.write(memoryview(buffer).cast("B"))

    def write(self, table: pa.Table) -> None:
        """Append the rows of `table` (of this file's schema) as one row group."""
        if not table.schema.equals(self._schema):
            raise ValueError(f"rows of another schema than the file's:\n{table.schema}")
        start, columns = self._at, []
        for field, (physical, _), column in zip(
            self._schema, self._types, table.columns, strict=True
        ):
            array = column.chunk(0) if column.num_chunks == 1 else column.combine_chunks()
            chunk = _Chunk(field, physical, array)
            columns.append(self._chunk(field, chunk))
        self._groups.append(
            _struct(
                [
                    (1, _LIST, (_STRUCT, columns)),
                    (2, _I64, self._at - start),
                    (3, _I64, table.num_rows),
                    (5, _I64, start),
                    (6, _I64, self._at - start),
                ]
            )
        )
        self._rows += table.num_rows

    def _chunk(self, field: pa.Field, chunk: _Chunk) -> bytes:
        """Write the pages of `chunk`; its ColumnChunk struct."""
        start = dictionary_offset = self._at
        if chunk.dictionary is not None:
            entries, values = chunk.dictionary
            header = _struct([(1, _I32, entries), (2, _I32, _PLAIN)])
            self._page(_DICTIONARY_PAGE, (7, _STRUCT, header), [values])
        data_offset = self._at
        header = _struct([(1, _I32, chunk.rows), (2, _I32, chunk.encoding), (3, _I32, _RLE),
                          (4, _I32, _RLE)])  # fmt: skip
        self._page(_DATA_PAGE, (5, _STRUCT, header), [chunk.levels, chunk.values])
        total = self._at - start
        meta = _struct(
            [
                (1, _I32, chunk.physical),
                (2, _LIST, (_I32, sorted({_PLAIN, _RLE, chunk.encoding}))),
                (3, _LIST, (_BINARY, [field.name])),
                (4, _I32, 0),  # uncompressed
                (5, _I64, chunk.rows),
                (6, _I64, total),
                (7, _I64, total),
                (9, _I64, data_offset),
                (11, _I64, None if chunk.dictionary is None else dictionary_offset),
            ]
        )
        return _struct([(2, _I64, 0), (3, _STRUCT, meta)])

    def _page(self, kind: int, header: _Field, buffers: list[Any]) -> None:
        """Write a page of `kind` (its `header` a PageHeader field) holding `buffers`."""
        size = sum(memoryview(b).nbytes for b in buffers)
        if size > _PAGE_BYTES:
            raise ValueError(f"a page of {size:,} bytes: write fewer rows at a time")
        self._put([_struct([(1, _I32, kind), (2, _I32, size), (3, _I32, size), header])])
        self._put(buffers)

    def close(self) -> None:
        """Write the footer (once, however often it is called)."""
        if self._closed:
            return
        self._closed = True
        fields = [_struct([(4, _BINARY, "schema"), (5, _I32, len(self._schema))])]
        for field, (physical, converted) in zip(self._schema, self._types, strict=True):
            logical = None if converted is None else _struct([(1, _STRUCT, _struct([]))])
            fields.append(
                _struct(
                    [
                        (1, _I32, physical),
                        (3, _I32, _OPTIONAL if field.nullable else _REQUIRED),
                        (4, _BINARY, field.name),
                        (6, _I32, converted),
                        (10, _STRUCT, logical),
                    ]
                )
            )
        metadata = dict(self._schema.metadata or {})
        metadata[b"ARROW:schema"] = base64.b64encode(self._schema.serialize().to_pybytes())
        pairs = [_struct([(1, _BINARY, k), (2, _BINARY, v)]) for k, v in metadata.items()]
        footer = _struct(
            [
                (1, _I32, 2),
                (2, _LIST, (_STRUCT, fields)),
                (3, _I64, self._rows),
                (4, _LIST, (_STRUCT, self._groups)),
                (5, _LIST, (_STRUCT, pairs)),
                (6, _BINARY, "nerframe"),
            ]
        )
        self._put([footer, struct.pack("<i", len(footer)), b"PAR1"])

    def __enter__(self) -> PartFile:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        if error is None:
            self.close()

"""Sweep parts (pyarrow's ParquetWriter with per-column choices): every reader reads back
what was written, each column encoded as chosen, the same rows in the same bytes."""

from __future__ import annotations

import base64
import io

import duckdb
import numpy as np
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from nerframe._typing import Compression
from nerframe.sweeps.parts import _part_writer, _table, encode_part

ROWS = 30_000
GROUPS = [(0, 7), (7, 12_000), (12_000, ROWS)]


def _frame() -> pl.DataFrame:
    """Every kind of column a sweep writes, with runs long and short, values that
    need more than a byte of dictionary index, nulls in runs and scattered, and
    bit patterns that compare equal as floats."""
    i = np.arange(ROWS)
    labels = [f"module_{k}" for k in range(300)]
    fps = np.where(i % 7 == 3, np.nan, 1e9 / (i + 1.0))
    fps[20_000:25_000] = np.nan
    return pl.DataFrame(
        {
            "graph": pl.Series(["neurex"] * ROWS, dtype=pl.Enum(["neurex", "unused"])),
            "bottleneck_module": pl.Series(
                [labels[k // 100 % 300] for k in i], dtype=pl.Enum(labels)
            ),
            "rays": pl.Series([4096] * ROWS, dtype=pl.Int64),
            "frequency_mhz": (i // 10 % 300 * 1.5).astype(float),
            "batches": (i // 40 % 400).astype(np.int64),
            "count": (i // 1000 - 7).astype(np.int64),
            "config": i.astype(np.int64) * -3,
            "cycles": (i * 7919 % 10007).astype(np.int64),
            "single": np.where(i == ROWS - 1, 5, i).astype(np.int64),
            "zero": np.where(i < ROWS // 2, 0.0, -0.0),
            "fps": pl.Series(fps, nan_to_null=True),
            "area_mm2": pl.Series([None] * ROWS, dtype=pl.Float64),
            "peak_tflops": pl.Series(np.full(ROWS, 2.5)),
            "feasible": i % 3 != 0,
        }
    ).with_columns(pl.col("peak_tflops").fill_nan(None))


def _part(frame: pl.DataFrame, compression: Compression = "none") -> bytes:
    table = _table(frame)  # sweep parts: only their figures are nullable
    buffer = io.BytesIO()
    with _part_writer(buffer, table.schema, compression) as part:
        for start, stop in GROUPS:
            part.write_table(table.slice(start, stop - start), row_group_size=stop - start)
    return buffer.getvalue()


@pytest.mark.parametrize(
    ("compression", "codec"), [("none", "UNCOMPRESSED"), ("lz4", "LZ4_RAW"), ("zstd", "ZSTD")]
)
def test_pyarrow_polars_and_duckdb_read_back_what_was_written(
    tmp_path, compression: Compression, codec: str
) -> None:
    frame = _frame()
    path = tmp_path / "part.parquet"
    path.write_bytes(_part(frame, compression))
    pieces = pl.concat([frame[:20_000], frame[20_000:]], rechunk=False)  # the last group in two
    assert pieces.n_chunks() == 2 and _part(pieces, compression) == path.read_bytes()
    assert pl.read_parquet(path).equals(frame)
    assert pl.read_parquet(path).schema == frame.schema  # enums come back as enums
    assert pq.read_table(path).to_pylist() == frame.to_arrow().to_pylist()
    signs = pq.read_table(path, columns=["zero"]).column(0).to_numpy()
    assert np.signbit(signs).tolist() == np.signbit(frame["zero"].to_numpy()).tolist()
    # the connection held: DuckDB 1.3 closes a collected connection under its relation
    con = duckdb.connect()
    read = con.sql(f"SELECT * FROM read_parquet('{path}')").pl()
    strings = [pl.col("graph").cast(pl.String), pl.col("bottleneck_module").cast(pl.String)]
    assert read.equals(frame.with_columns(strings))
    meta = pq.read_metadata(path)
    assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [7, 11_993, 18_000]
    codecs = con.sql(f"SELECT DISTINCT compression FROM parquet_metadata('{path}')").fetchall()
    assert codecs == [(codec,)]  # as the file's footer names it (pyarrow calls LZ4_RAW LZ4)


def test_labels_and_axes_go_through_a_dictionary_config_as_deltas_results_plain(
    tmp_path,
) -> None:
    path = tmp_path / "part.parquet"
    path.write_bytes(_part(_frame()))
    group = pq.read_metadata(path).row_group(2)
    columns = {group.column(c).path_in_schema: group.column(c) for c in range(group.num_columns)}
    encoded = {
        name: "dictionary"
        if "RLE_DICTIONARY" in column.encodings or "PLAIN_DICTIONARY" in column.encodings
        else "delta"
        if "DELTA_BINARY_PACKED" in column.encodings
        else "plain"
        for name, column in columns.items()
    }
    # The result columns of a sweep (kernels.sweep_chunk's INT_ROWS and FLOAT_ROWS,
    # and feasible) are plain; of those, _frame has fps, area_mm2, peak_tflops.
    assert encoded == {
        "graph": "dictionary",
        "bottleneck_module": "dictionary",
        "rays": "dictionary",
        "frequency_mhz": "dictionary",
        "batches": "dictionary",
        "count": "dictionary",
        "config": "delta",
        "cycles": "dictionary",  # not a result column of a sweep: chosen by name
        "single": "dictionary",
        "zero": "dictionary",
        "fps": "plain",
        "area_mm2": "plain",
        "peak_tflops": "plain",
        "feasible": "plain",
    }
    assert {columns[c].compression for c in columns} == {"UNCOMPRESSED"}
    assert not any(columns[c].is_stats_set for c in columns)
    # config, 0, -3, -6, ...: a few bytes per block of deltas
    assert columns["config"].total_compressed_size < 18_000 // 4 + 64


def test_the_same_rows_give_the_same_bytes_and_pyarrows_arrow_schema() -> None:
    frame = _frame()
    data = _part(frame)
    assert _part(frame.clone()) == data
    stored = pq.read_metadata(io.BytesIO(data)).metadata[b"ARROW:schema"]
    assert pa.ipc.read_schema(pa.py_buffer(base64.b64decode(stored))).equals(
        _table(frame).schema, check_metadata=True
    )


def test_a_part_s_row_groups_follow_row_groups(monkeypatch: pytest.MonkeyPatch) -> None:
    from nerframe.sweeps import parts

    monkeypatch.setattr(parts, "ROW_GROUP", 10_000)
    buffer = io.BytesIO()
    encode_part(_frame(), buffer)
    meta = pq.read_metadata(io.BytesIO(buffer.getvalue()))
    assert [meta.row_group(g).num_rows for g in range(meta.num_row_groups)] == [10_000] * 3

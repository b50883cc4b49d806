"""Sweep parts: one Parquet file per chunk of a sweep, the same bytes whichever
backend writes it, whether its row groups come at once or one by one
(`encode_part`, `write_part`); `part_path` says where a chunk's part goes, and
`task_at`, `written` and `pending` plan a store's chunks in memory and time that do
not grow with the sweep (a campaign of 10^12 configurations has millions of chunks).
"""

from __future__ import annotations

import itertools
import os
import re
from collections.abc import Iterator
from pathlib import Path
from typing import IO

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from nerframe._typing import Compression
from nerframe.atomic import atomic_path
from nerframe.schemas import SWEEP_CYCLES, SWEEP_FIGURES
from nerframe.sweeps.evaluate import Task
from nerframe.sweeps.spec import SweepSpec

TABLE = "sweep"
# Rows of a row group at most (a part's groups are of near-equal sizes).
ROW_GROUP = 65_536


def part_path(store: Path, spec: SweepSpec, names: list[str], task: Task) -> Path:
    """Where the rows of `task` go."""
    folder = store / TABLE / f"graph={names[task.graph]}" / f"hardware={spec.hardware.name}"
    return folder / f"part-{task.number:06d}.parquet"


def task_at(spec: SweepSpec, number: int) -> Task:
    """Chunk `number` of the sweep (as `nerframe.sweeps.evaluate.tasks` orders them),
    computed from the number alone.

    >>> from nerframe.sweeps.spec import sweep_spec
    >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
    ...                    "workload": {"rays": [1024, 4096]},
    ...                    "grid": {"frequency_mhz": [500, 1000, 1500]}, "chunk_size": 2})
    >>> task_at(spec, 3)
    Task(number=3, graph=0, point=1, start=2, stop=3)
    """
    per_point = -(-spec.hardware_points // spec.chunk_size)
    point, chunk = divmod(number, per_point)
    graph, point = divmod(point, spec.workload_points)
    start = chunk * spec.chunk_size
    return Task(number, graph, point, start, min(start + spec.chunk_size, spec.hardware_points))


_PART = re.compile(r"part-(\d{6,})\.parquet")


def written(store: Path, spec: SweepSpec, names: list[str]) -> set[int]:
    """The numbers of the chunks whose parts are in `store`, found by listing the
    part folders (time and memory grow with the parts written, not the sweep's)."""
    done: set[int] = set()
    for name in dict.fromkeys(names):
        folder = part_path(store, spec, names, Task(0, names.index(name), 0, 0, 0)).parent
        try:
            entries = list(os.scandir(folder))
        except FileNotFoundError:
            continue
        for entry in entries:
            if (match := _PART.fullmatch(entry.name)) is None:
                continue
            number = int(match.group(1))
            # only a part where this sweep puts it: a chunk of the graph of this folder
            if number < spec.chunks and names[task_at(spec, number).graph] == name:
                done.add(number)
    return done


def pending(spec: SweepSpec, done: set[int]) -> Iterator[tuple[Task, bool]]:
    """The chunks not in `done`, in order, each with whether it is the last of them;
    made one at a time as they are asked for.

    >>> from nerframe.sweeps.spec import sweep_spec
    >>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
    ...                    "grid": {"frequency_mhz": [500, 1000, 1500]}, "chunk_size": 1})
    >>> [(t.number, last) for t, last in pending(spec, {2})]
    [(0, False), (1, True)]
    """
    # the last chunk not done: at most len(done) steps back from the end
    last = next((n for n in range(spec.chunks - 1, -1, -1) if n not in done), -1)
    for number in range(last + 1):
        if number not in done:
            yield task_at(spec, number), number == last


def row_groups(rows: int) -> list[tuple[int, int]]:
    """The (start, stop) row ranges of a part's row groups: as few as `ROW_GROUP`
    allows, of near-equal sizes (so that result memory computed a group at a time
    can be reused).

    >>> row_groups(250_000)[:2], row_groups(5)
    ([(0, 62500), (62500, 125000)], [(0, 5)])
    """
    groups = max(-(-rows // ROW_GROUP), 1)
    return list(itertools.pairwise([rows * g // groups for g in range(groups + 1)]))


def _table(frame: pl.DataFrame) -> pa.Table:
    """`frame` as Arrow, its columns that are never null (all but the figures of
    `schemas.SWEEP_FIGURES`) marked required: they need no definition levels."""
    table = frame.to_arrow()
    schema = pa.schema(
        [f.with_nullable(f.name in SWEEP_FIGURES) for f in table.schema], table.schema.metadata
    )
    return pa.Table.from_arrays(table.columns, schema=schema)


# Result columns take a new value in most rows; the others (labels, the workload and
# the grid's axes, batches) hold a few values each, and go through a dictionary.
_MANY_VALUED = {"config", *SWEEP_CYCLES, *SWEEP_FIGURES, "feasible"}


def _part_writer(
    sink: str | Path | IO[bytes], schema: pa.Schema, compression: Compression = "none"
) -> pq.ParquetWriter:
    """A Parquet writer of sweep parts into `sink`: dictionary-encoded columns only
    where values repeat, ``config`` (integers in steps of one) as
    DELTA_BINARY_PACKED, pages compressed with `compression` (Parquet's LZ4_RAW for
    ``lz4``, ZSTD level 1 for ``zstd``) and no statistics (result columns are
    unsorted within a part, so readers could skip little by them)."""
    return pq.ParquetWriter(
        sink,
        schema,
        use_dictionary=[name for name in schema.names if name not in _MANY_VALUED],
        column_encoding={"config": "DELTA_BINARY_PACKED"} if "config" in schema.names else None,
        compression=compression,
        compression_level=1 if compression == "zstd" else None,
        write_statistics=False,
    )


def encode_part(
    frame: pl.DataFrame, sink: str | Path | IO[bytes], compression: Compression = "none"
) -> None:
    """Write the rows of one chunk as a Parquet part into `sink` (see `_part_writer`),
    in `row_groups`.

    >>> import io
    >>> buffer = io.BytesIO()
    >>> encode_part(pl.DataFrame({"config": [0, 1], "fps": [30.0, None]}), buffer)
    >>> pl.read_parquet(buffer.getvalue()).rows()
    [(0, 30.0), (1, None)]
    """
    table = _table(frame)
    with _part_writer(sink, table.schema, compression) as part:
        _write_groups(part, table)


def _write_groups(part: pq.ParquetWriter, table: pa.Table) -> None:
    """`table` as row groups of `part`, one per range of `row_groups` (so that the
    same rows give the same groups, whether they come at once or a group at a time)."""
    for start, stop in row_groups(table.num_rows):
        part.write_table(table.slice(start, stop - start), row_group_size=stop - start)


def write_part(path: Path, frame: pl.DataFrame, compression: Compression = "none") -> None:
    """Write one chunk atomically (same rows, same bytes, whichever backend writes it,
    and whether its row groups come at once or one by one)."""
    with atomic_path(path) as tmp, _created(tmp) as sink:
        encode_part(frame, sink, compression)


def _created(tmp: Path) -> IO[bytes]:
    """The new, empty file `tmp` opened for writing. Not truncated: on ext4, closing a
    file truncated to nothing and written again starts writing it out (auto_da_alloc)."""
    return open(tmp, "r+b")

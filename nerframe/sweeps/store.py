"""Sweep result stores: one Parquet part per chunk, a manifest, nothing lost.

Layout::

    STORE/store.json                                         manifest
    STORE/sweep/graph=<graph>/hardware=<accel>/part-000000.parquet   chunk 0, ...

The manifest's ``run.sweep`` records everything that determines the rows
(graph content hashes, the accelerator's hash, workload, grid, constraints,
options, nerframe version); ``run.complete`` is false until every chunk is
written. A store is resumed only by an identical sweep: its missing chunks are
computed, the others kept. Every part is written under a temporary name and
renamed, so a sweep killed at any moment (even by SIGKILL) leaves whole parts
only, and resuming it gives the identical row set. Parts are written by a
writer thread while the next chunk is computed, and that thread computes with
the kernel once it is done; the last chunk is computed and written a row group
at a time (`row_groups`), so that only its last group is written with nothing
left to overlap.

>>> import nerframe, tempfile
>>> from nerframe.sweeps.spec import sweep_spec
>>> spec = sweep_spec({"graphs": ["neurex"], "hardware": "neurex",
...                    "grid": {"frequency_mhz": [500, 1000]}})
>>> rows = write_store(spec, tempfile.mkdtemp() + "/s").collect()
>>> rows.height, rows["config"].to_list()
(2, [0, 1])
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import queue
import shutil
import threading
import warnings
from collections.abc import Callable, Iterator
from pathlib import Path
from types import TracebackType
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from nerframe._typing import Compression
from nerframe.atomic import atomic_path
from nerframe.errors import NerframeError, NerframeWarning, StoreError
from nerframe.kernels.sweep_chunk import result_matrices
from nerframe.progress import Progress
from nerframe.store import (
    MANIFEST,
    damaged,
    folder_path,
    listing,
    locked,
    read_manifest,
    write_manifest,
)
from nerframe.sweeps.evaluate import Evaluator, Matrices, tasks
from nerframe.sweeps.parts import (
    TABLE,
    _created,
    _part_writer,
    _table,
    _write_groups,
    part_path,
    pending,
    row_groups,
    task_at,
    written,
)
from nerframe.sweeps.spec import SweepSpec, spec_identity


def graph_names(spec: SweepSpec) -> list[str]:
    """The name of each graph of `spec`."""
    first = next(spec.points())
    return [spec.graph_at(i, first).name for i in range(len(spec.graphs))]


def write_store(
    spec: SweepSpec,
    store: str | Path,
    backend: str = "local",
    scheduler: str | None = None,
    progress: Progress | None = None,
    evaluate: Evaluator | None = None,
) -> pl.LazyFrame:
    """Write (or resume) the sweep `spec` into `store`; a LazyFrame over its rows in order.
    `evaluate` reuses an evaluator of `spec` for the local backend. The store is locked
    while it is written: a second run into it meanwhile is refused (`StoreError`)."""
    identity = spec_identity(spec)
    store = folder_path(store)
    with locked(store), _kept_once_written(store):
        # Planned in constant memory and time: chunks are counted, the parts written
        # before (a resumed store) listed, and the others made one at a time.
        _open(store, identity, spec.chunks)
        names = graph_names(spec)
        # a part written before counts when it is whole (a damaged one is computed again)
        done = {
            n
            for n in written(store, spec, names)
            if _whole(part_path(store, spec, names, t := task_at(spec, n)), t.stop - t.start)
        }
        if progress is not None:
            progress.advance(sum(t.stop - t.start for t in (task_at(spec, n) for n in done)))
        todo = pending(spec, done)
        if backend == "dask":
            from nerframe.sweeps.dask import run_tasks

            token = hashlib.sha256(json.dumps(identity, sort_keys=True).encode()).hexdigest()
            work = ((t, part_path(store, spec, names, t)) for t, _ in todo)
            run_tasks(spec, token, work, scheduler, progress)
        else:
            evaluate = evaluate or Evaluator(spec)
            with _Writer(spec.compression) as writer:
                for task, last in todo:
                    size = task.stop - task.start
                    path = part_path(store, spec, names, task)
                    # The last task goes a row group at a time, so that all but its
                    # last group are written while the kernel computes the next.
                    pieces = row_groups(size) if last else [(0, size)]
                    for start, stop in pieces:
                        piece = task._replace(start=task.start + start, stop=task.start + stop)
                        # Result memory of written rows is computed into again: fresh
                        # memory costs a page fault per page.
                        out = writer.recycled(stop - start) or result_matrices(
                            stop - start, len(spec.grid)
                        )
                        frame = evaluate(piece, out, writer.help)
                        writer.put(path, frame, out, piece.stop == task.stop)
                        if progress is not None:
                            progress.advance(frame.height)
        # the rows of its own parts (a foreign file in the folder is not counted)
        run = {"sweep": identity, "complete": True, "chunks": spec.chunks}
        write_manifest(store, run, {TABLE: spec.configurations})
        paths = [part_path(store, spec, names, t) for t in tasks(spec)]
    return pl.scan_parquet(paths, hive_partitioning=False, glob=False)


def _whole(part: Path, rows: int) -> bool:
    """Whether the part at `part` was written whole, with its `rows`: a part that is
    missing is computed, and so is one damaged since (truncated, overwritten), with a
    warning naming it; the new part replaces it."""
    if not part.exists():
        return False
    try:
        found = pq.read_metadata(part).num_rows
    except (OSError, pa.ArrowException):
        why = damaged(part, whole=False) or "unreadable"
    else:
        if found == rows:
            return True
        why = f"holds {found} rows, not {rows}"
    warnings.warn(f"{part}: {why}; computing it again", NerframeWarning, stacklevel=3)
    return False


@contextlib.contextmanager
def _kept_once_written(store: Path) -> Iterator[None]:
    """A store this run starts is removed again if the run stops (an error, Ctrl-C)
    before it wrote a part: it would hold nothing but a manifest. An empty folder the
    user made is left, empty; a store resumed is never touched."""
    existed = store.exists()
    fresh = not existed or not any(store.iterdir())
    try:
        yield
    except BaseException:
        if fresh and not any((store / TABLE).rglob("*.parquet")):
            if existed:
                (store / MANIFEST).unlink(missing_ok=True)
                shutil.rmtree(store / TABLE, ignore_errors=True)
            else:
                shutil.rmtree(store, ignore_errors=True)
        raise


def _open(store: Path, identity: dict[str, Any], chunks: int) -> None:
    """Make `store` a store of this sweep: new, or the same sweep written (partly) before."""
    entries = [p for p in store.iterdir() if not p.name.startswith(".")] if store.exists() else []
    if not entries:
        store.mkdir(parents=True, exist_ok=True)
        write_manifest(store, {"sweep": identity, "complete": False, "chunks": chunks})
        return
    try:
        previous = read_manifest(store).get("run")
    except NerframeError:
        previous = None
    if not isinstance(previous, dict) or not isinstance(previous.get("sweep"), dict):
        raise StoreError(
            f"{store}: holds something other than this sweep (not a sweep store); "
            "choose an empty folder",
            str(store),
        )
    before, now = previous["sweep"], _json(identity)
    if before != now:
        keys = [k for k in sorted({*before, *now}) if before.get(k) != now.get(k)]
        key = keys[-1]  # the values of one of them are shown; the last is often the cause
        differ = f"{key} differs" if len(keys) == 1 else f"{', '.join(keys[:-1])} and {key} differ"
        raise StoreError(
            f"{store}: holds something other than this sweep: its {differ} "
            f"(store {key}: {_short(before.get(key))}; this sweep: {_short(now.get(key))}); "
            "a store is resumed only by the identical sweep, so choose another folder",
            str(store),
        )
    for stale in (store / TABLE).rglob(".*.tmp"):
        stale.unlink(missing_ok=True)  # a part whose writing was killed


_Item = tuple[Path, pl.DataFrame, Matrices, bool]
"""Rows for the writer: their part's path, the rows, their memory, whether they end the part."""


def _json(data: dict[str, Any]) -> dict[str, Any]:
    result: dict[str, Any] = json.loads(json.dumps(data))
    return result


def _short(value: Any) -> str:
    text = str(value)
    return text if len(text) <= 80 else text[:77] + "..."


def incomplete(store: str | Path) -> str | None:
    """Why `store` is an unfinished sweep (not marked complete, or parts missing since),
    or None (also for stores that are not sweeps)."""
    try:
        run = read_manifest(store).get("run")
    except NerframeError:
        return None
    if not isinstance(run, dict) or "sweep" not in run:
        return None
    parts = len(listing(Path(store), read_manifest(store))[0].get(TABLE, []))  # its own
    expected = run.get("chunks")
    if run.get("complete") and (not isinstance(expected, int) or parts >= expected):
        return None
    of = f" of {expected}" if isinstance(expected, int) else ""
    return (
        f"{store}: the sweep is incomplete ({parts}{of} chunks written); results miss rows "
        "until the same sweep is run again to resume it"
    )


class _Writer:
    """A thread writing parts, whole or a row group at a time, while the caller
    computes the next rows, and computing with the caller once it is done (`help`);
    at most two pieces wait. The memory behind written rows is handed back by
    `recycled`. A part is renamed into place once its last rows are written; one
    left unfinished (an error, the caller's included) is removed."""

    def __init__(self, compression: Compression = "none") -> None:
        self._compression = compression
        self._queue: queue.Queue[_Item | Callable[[], None] | None] = queue.Queue(maxsize=3)
        self._done: queue.Queue[Matrices] = queue.Queue()
        self._free: list[Matrices] = []
        self._error: BaseException | None = None
        self._part: tuple[contextlib.ExitStack, pq.ParquetWriter] | None = None
        self._thread = threading.Thread(target=self._work, daemon=True)
        self._thread.start()

    def _work(self) -> None:
        while (item := self._queue.get()) is not None:
            if callable(item):
                item()
                continue
            path, frame, out, last = item
            del item
            if self._error is None:
                try:
                    self._write(path, frame, last)
                except BaseException as e:  # re-raised in the caller's thread
                    self._error = e
                    self._abandon(e)
            del frame  # the last reference to the group's rows: `out` is free
            self._done.put(out)
        self._abandon(RuntimeError("the sweep stopped in the middle of this part"))

    def _write(self, path: Path, frame: pl.DataFrame, last: bool) -> None:
        table = _table(frame)
        if self._part is None:
            with contextlib.ExitStack() as stack:
                tmp = stack.enter_context(atomic_path(path))
                part = stack.enter_context(
                    _part_writer(
                        stack.enter_context(_created(tmp)), table.schema, self._compression
                    )
                )
                self._part = (stack.pop_all(), part)
        stack, part = self._part
        _write_groups(part, table)
        if last:
            self._part = None
            stack.close()  # closes the Parquet file, then renames it into place

    def _abandon(self, error: BaseException) -> None:
        """Remove the part being written, if any, as `error` stopped it."""
        if self._part is not None:
            stack = self._part[0]
            self._part = None
            with contextlib.suppress(Exception):  # `error` is what the caller must see
                stack.__exit__(type(error), error, error.__traceback__)

    def put(self, path: Path, frame: pl.DataFrame, out: Matrices, last: bool) -> None:
        """Queue the next rows of the part at `path` (all of them, or one of its
        `row_groups`), living in `out` (blocks while the queue is full); `last` ends
        the part. Raises a failed write's error."""
        if self._error is not None:
            raise self._error
        self._queue.put((path, frame, out, last))

    def help(self, work: Callable[[], None]) -> None:
        """Run `work` once the rows queued before it are written (the caller's chunk
        is computed meanwhile: the two threads share the cores without competing)."""
        self._queue.put(work)

    def recycled(self, size: int) -> Matrices | None:
        """Result matrices of `size` rows whose rows are written, if one is free."""
        while True:
            try:
                self._free.append(self._done.get_nowait())
            except queue.Empty:
                break
        for i, out in enumerate(self._free):
            if out[2].size == size:
                return self._free.pop(i)
        del self._free[:-4]  # sizes that stopped coming (a shorter last chunk)
        return None

    def __enter__(self) -> _Writer:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._queue.put(None)
        self._thread.join()
        if self._error is not None and error is None:
            raise self._error

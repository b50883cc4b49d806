"""Result stores: a folder of hive-partitioned Parquet tables plus ``store.json``.

Layout::

    STORE/store.json                                   what was run, row counts
    STORE/<table>/pipeline=<graph>/part-0.parquet      ops, edges, costs
    STORE/<table>/pipeline=<graph>/hardware=<accel>/part-0.parquet
                                                       schedule, summary, roofline

Every file is written under a temporary name and renamed into place. The
partition values are also columns of the rows (``graph``, ``accelerator``), so
a reader does not need hive partitioning to see them.

>>> import tempfile, polars as pl
>>> store = tempfile.mkdtemp()
>>> with TableWriter(store) as writer:
...     path = writer.write("edges", pl.DataFrame({"graph": ["g"]}), pipeline="g")
>>> path.relative_to(store).as_posix()
'edges/pipeline=g/part-0.parquet'
"""

from __future__ import annotations

import contextlib
import datetime
import glob
import json
import os
import re
import shutil
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType

import filelock
import polars as pl

from nerframe.atomic import atomic_path
from nerframe.errors import InvalidInputError, NerframeError, StoreError

MANIFEST = "store.json"


# Partition values become folder names: no separators, no "=" or "%" (hive syntax),
# no control characters, and no leading dot (".", "..", hidden and temporary names).
_SAFE_NAME = re.compile(r"[^./\\=%\x00-\x1f][^/\\=%\x00-\x1f]*")


def check_name(kind: str, name: str) -> str:
    """`name` if it can name a partition folder of a store, else InvalidInputError.

    >>> check_name("graph", "nerf-360")
    'nerf-360'
    >>> try:
    ...     check_name("graph", "../x")
    ... except InvalidInputError as e:
    ...     print(e.culprit)
    ../x
    """
    if not _SAFE_NAME.fullmatch(name):
        raise InvalidInputError(
            f"{kind} name {name!r} cannot name a store folder: use no '/', '\\', '=', '%' "
            "or control characters, and no leading '.'",
            name,
        )
    return name


def _part_path(store: str | Path, table: str, part: int, partition: dict[str, str]) -> Path:
    for key, value in partition.items():
        check_name(key, value)
    folder = Path(store, table, *(f"{key}={value}" for key, value in partition.items()))
    return folder / f"part-{part}.parquet"


def _write_part(target: Path, df: pl.DataFrame) -> None:
    with atomic_path(target) as tmp:
        df.write_parquet(tmp, statistics=True)


class TableWriter:
    """Writes the tables of one store on background threads while the caller goes on.

    `write` queues `df` as Parquet part number `part` of `table`, under hive folders
    ``key=value``, and returns at once; each file is written whole by one thread, under
    a temporary name renamed into place, so its bytes do not depend on the threads.
    A store of analyze is hundreds of small files, each costing more in fixed work
    (the Parquet writer's setup, creating and renaming the file) than in its rows;
    polars and the file system do that work outside the GIL, so it overlaps the
    caller's computing and the other files'. Leaving the block waits for every file
    and raises a failed write's error (so does the next `write` once one failed).
    When the block ends by an error, writes not started are dropped and the running
    ones finish before the error goes on: the caller's cleanup (removing the folder
    being built) never races a writer.

    >>> import tempfile
    >>> store = tempfile.mkdtemp()
    >>> with TableWriter(store) as writer:
    ...     writer.write("edges", pl.DataFrame({"graph": ["g"]}), pipeline="g").name
    'part-0.parquet'
    >>> [p.relative_to(store).as_posix() for p in Path(store).rglob("*.parquet")]
    ['edges/pipeline=g/part-0.parquet']
    """

    def __init__(self, store: str | Path) -> None:
        self.store = store
        # Two threads even on one core: part of a file's time is spent waiting on the
        # file system.
        self._pool = ThreadPoolExecutor(max(os.cpu_count() or 1, 2))
        self._error: BaseException | None = None
        self.rows: dict[str, int] = {}
        """Rows queued so far, by table (for `write_manifest`)."""

    def write(self, table: str, df: pl.DataFrame, part: int = 0, **partition: str) -> Path:
        """Queue `df` as part `part` of `table`; return its path. Partition values that
        could not name a folder safely raise `InvalidInputError` here, at once."""
        if self._error is not None:
            raise self._error
        target = _part_path(self.store, table, part, partition)
        self.rows[table] = self.rows.get(table, 0) + df.height
        self._pool.submit(_write_part, target, df).add_done_callback(self._failed)
        return target

    def _failed(self, future: Future[None]) -> None:
        # Runs on the writing thread; of several failed writes, one error is kept.
        if not future.cancelled() and self._error is None:
            self._error = future.exception()

    def __enter__(self) -> TableWriter:
        return self

    def __exit__(
        self,
        kind: type[BaseException] | None,
        error: BaseException | None,
        trace: TracebackType | None,
    ) -> None:
        self._pool.shutdown(wait=True, cancel_futures=error is not None)
        if error is None and self._error is not None:
            raise self._error


def write_manifest(
    store: str | Path, run: dict[str, object], rows: Mapping[str, int] | None = None
) -> Path:
    """Write ``store.json``: nerframe version, time, `run` and the row count of every table.

    `rows` gives the counts by table when the caller knows them (a `TableWriter`'s
    `rows`); else each table's files are counted.

    >>> import tempfile
    >>> store = tempfile.mkdtemp()
    >>> with TableWriter(store) as writer:
    ...     _ = writer.write("edges", pl.DataFrame({"graph": ["g", "g"]}), pipeline="g")
    >>> manifest = json.loads(write_manifest(store, {"what": "example"}).read_text())
    >>> manifest["run"], manifest["rows"]
    ({'what': 'example'}, {'edges': 2})
    """
    from nerframe import __version__

    store = Path(store)
    if rows is not None:
        counts = dict(sorted(rows.items()))
    else:  # one scan per table (the parts' columns need not agree to be counted)
        counts = {
            table.name: pl.scan_parquet(
                parts, extra_columns="ignore", missing_columns="insert", glob=False
            )
            .select(pl.len())
            .collect()
            .item()
            for table in sorted(store.iterdir())
            if table.is_dir() and (parts := sorted(table.rglob("*.parquet")))
        }
    manifest = {
        "nerframe_version": __version__,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "run": run,
        "rows": counts,
    }
    target = store / MANIFEST
    with atomic_path(target) as tmp:
        tmp.write_text(json.dumps(manifest, indent=2) + "\n")
    return target


def read_manifest(store: str | Path) -> dict[str, object]:
    """Read ``store.json``; a missing or unreadable store is a `StoreError`.

    >>> import tempfile
    >>> store = tempfile.mkdtemp()
    >>> _ = write_manifest(store, {"what": "example"})
    >>> read_manifest(store)["run"]
    {'what': 'example'}
    >>> try:
    ...     read_manifest(store + "/nowhere")
    ... except StoreError as e:
    ...     print(str(e).removeprefix(store))
    /nowhere: not a nerframe result store (no such folder)
    """
    if not isinstance(store, str | os.PathLike):
        raise InvalidInputError(
            f"a result store is a folder path, got {type(store).__name__}", "store"
        )
    path = Path(store, MANIFEST)
    if not Path(store).is_dir():
        what = "not a folder" if Path(store).exists() else "no such folder"
        raise StoreError(f"{store}: not a nerframe result store ({what})", str(store))
    if not path.exists():
        raise StoreError(f"{store}: not a nerframe result store (no {MANIFEST})", str(store))
    from nerframe.formats import convert, parse
    from nerframe.formats.manifest import Manifest

    # a malformed manifest is bad input (InvalidInputError), declared in formats.manifest
    manifest = parse(path, what="store manifest")
    convert(manifest, Manifest, source=str(path))
    assert isinstance(manifest, dict)  # the declared model is an object
    return manifest


def is_analysis(store: str | Path) -> bool:
    """Whether `store` holds the result of `nerframe.analyze` (not a sweep or anything else).

    >>> is_analysis("no-such-folder")
    False
    """
    try:
        run = read_manifest(store).get("run")
    except NerframeError:
        return False
    return isinstance(run, dict) and "pipelines" in run


# What a store of analyze holds besides its tables: the report (`nerframe.report`),
# and the temporary files of a write that was killed.
_REPORT_FILES = {MANIFEST, "report.html", "summary.md"}
_REPORT_IMAGES = {".png", ".svg"}
_TEMPORARY = re.compile(r"\..+\.[0-9a-f]{12}\.tmp")


def foreign_entries(store: str | Path) -> list[str]:
    """The entries of the store of analyze at `store` that nerframe did not write
    there (files a user put in it), by name; replacing the store would lose them.

    >>> import nerframe, tempfile
    >>> store = nerframe.analyze("neurex", "neurex", tempfile.mkdtemp() + "/s").store
    >>> _ = (store / "notes.txt").write_text("mine")
    >>> foreign_entries(store)
    ['notes.txt']
    """
    rows = read_manifest(store).get("rows")
    tables = set(rows) if isinstance(rows, dict) else set()
    foreign = []
    for entry in sorted(Path(store).iterdir()):
        if entry.is_dir():
            ours = entry.name in tables or (
                entry.name == "charts"
                and all(p.is_file() and p.suffix in _REPORT_IMAGES for p in entry.iterdir())
            )
        else:
            ours = entry.name in _REPORT_FILES or bool(_TEMPORARY.fullmatch(entry.name))
        if not ours:
            foreign.append(entry.name)
    return foreign


def enclosing_store(path: str | Path) -> Path | None:
    """The result store `path` lies inside (a folder above it holding ``store.json``),
    or None. Symbolic links are followed, so a link into a store is inside it.

    >>> import tempfile
    >>> store = Path(tempfile.mkdtemp())
    >>> _ = write_manifest(store, {})
    >>> enclosing_store(store / "summary" / "x.parquet") == store.resolve()
    True
    >>> enclosing_store(store) is None  # the store itself is not inside a store
    True
    """
    here = Path(os.path.realpath(path))
    for folder in here.parents:
        if (folder / MANIFEST).is_file():
            return folder
    return None


def folder_path(target: str | Path) -> Path:
    """`target` as a path that names the folder of a store: as given, or absolute
    where it has no name of its own (``.``, ``..``, an empty string), so that ``-o .``
    means "here". The file system's root cannot hold a store (its lock and
    temporary folders go beside it).

    >>> folder_path("runs/s").as_posix(), folder_path(".") == Path.cwd()
    ('runs/s', True)
    >>> try:
    ...     folder_path("/")
    ... except InvalidInputError as e:
    ...     print(e)
    /: the root folder cannot hold a store; name a folder below it
    """
    path = Path(target)
    if path.name in ("", ".."):
        path = Path(os.path.abspath(path))
    if not path.name:
        raise InvalidInputError(
            f"{target}: the root folder cannot hold a store; name a folder below it", str(target)
        )
    return path


@contextlib.contextmanager
def locked(target: str | Path) -> Iterator[None]:
    """Hold the lock of the store at `target` (a ``.NAME.lock`` file beside it).

    A second run into the same store while the lock is held is refused with a
    `StoreError`. The lock is the kernel's (`filelock`, ``flock``): it is released
    when the process ends however it ends, so a killed run never leaves a stale
    lock. Taking it also removes the temporary folders a killed run left beside
    the store. The empty lock file stays: removing it would let a run that opened
    it just before lock a file nobody else sees.

    >>> import tempfile
    >>> with locked(tempfile.mkdtemp() + "/store"):
    ...     pass
    """
    path = folder_path(target)
    path.parent.mkdir(parents=True, exist_ok=True)
    lock = filelock.FileLock(path.with_name(f".{path.name}.lock"), timeout=0)
    try:
        lock.acquire()
    except filelock.Timeout:
        raise StoreError(
            f"{path}: another nerframe run is writing this store "
            f"(lock .{path.name}.lock); wait for it to finish",
            str(path),
        ) from None
    try:
        # Left by a run that was killed: nobody else writes beside this store now.
        for leftover in path.parent.glob(f".{glob.escape(path.name)}.*.tmp"):
            if leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)
        yield
    finally:
        lock.release()


def tables(store: str | Path) -> dict[str, list[Path]]:
    """The Parquet files of every table in `store`, by table name.

    >>> import tempfile
    >>> store = tempfile.mkdtemp()
    >>> with TableWriter(store) as writer:
    ...     _ = writer.write("edges", pl.DataFrame({"graph": ["g"]}), pipeline="g")
    >>> _ = write_manifest(store, {})
    >>> {t: [p.relative_to(store).as_posix() for p in ps] for t, ps in tables(store).items()}
    {'edges': ['edges/pipeline=g/part-0.parquet']}
    """
    read_manifest(store)
    return {
        folder.name: parts
        for folder in sorted(Path(store).iterdir())
        if folder.is_dir() and (parts := sorted(folder.rglob("*.parquet")))
    }

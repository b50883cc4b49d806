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
import warnings
from collections.abc import Iterator, Mapping
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path
from types import TracebackType
from typing import NamedTuple

import filelock
import polars as pl

from nerframe.atomic import atomic_path
from nerframe.errors import (
    InvalidInputError,
    NerframeError,
    NerframeWarning,
    StoreError,
    check_output_path,
)
from nerframe.output import write_parquet

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
    write_parquet(df, target)  # a full disk is an OSError naming the part


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
    check_output_path(target)
    path = Path(target)
    if path.is_symlink():
        # A link to a folder (a store put on another disk): the store goes where it
        # points; replacing the folder under the link's name would replace the link.
        path = Path(os.path.realpath(path))
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


# --- checking a store against its manifest -------------------------------------------


class Problem(NamedTuple):
    """One fault of a store (`verify`): the file concerned, what is wrong, how to repair."""

    path: Path
    what: str
    repair: str


SWEEP_TABLE = "sweep"
"""The one table of a sweep store (`nerframe.sweeps.parts.TABLE`)."""

_SWEEP_PART = re.compile(r"graph=[^/]+/hardware=[^/]+/part-(\d{6,})\.parquet")
_ANALYSIS_PART = re.compile(r"(?:pipeline=[^/]+/(?:hardware=[^/]+/)?)?part-0\.parquet")


class SweepLayout(NamedTuple):
    """The parts a sweep store's manifest implies: chunk ``n`` of ``chunks`` holds the
    rows of graph ``graphs[n // per_graph]``, and ``rows(n)`` of them."""

    graphs: list[str]
    accelerator: str
    chunks: int
    per_graph: int  # chunks per graph: workload points x chunks per point
    per_point: int  # chunks per workload point
    hardware_points: int
    chunk_size: int

    def path(self, n: int) -> str:
        """Where chunk `n`'s part lies, relative to the store."""
        graph = self.graphs[n // self.per_graph]
        return f"{SWEEP_TABLE}/graph={graph}/hardware={self.accelerator}/part-{n:06d}.parquet"

    def rows(self, n: int) -> int:
        """The rows of chunk `n`'s part."""
        start = (n % self.per_point) * self.chunk_size
        return min(self.chunk_size, self.hardware_points - start)


def sweep_layout(run: object, *, grid_only: bool = False) -> SweepLayout | None:
    """The layout of the sweep store whose manifest's ``run`` is `run`, or None (not a
    sweep store, a manifest that does not say, or whose ``chunks`` disagree with its
    grid, unless `grid_only`: its parts are then not checked, and `verify` names the
    disagreement).

    >>> run = {"chunks": 4, "sweep": {"graphs": [{"name": "a"}, {"name": "b"}],
    ...        "accelerator": {"name": "x"}, "grid": {"frequency_mhz": [1, 2, 3]},
    ...        "workload": {}, "chunk_size": 2}}
    >>> layout = sweep_layout(run)
    >>> layout.path(2), [layout.rows(n) for n in range(4)]
    ('sweep/graph=b/hardware=x/part-000002.parquet', [2, 1, 2, 1])
    """
    if not isinstance(run, dict) or not isinstance(run.get("sweep"), dict):
        return None
    sweep = run["sweep"]
    try:
        graphs = [str(g["name"]) for g in sweep["graphs"]]
        hardware_points = 1
        for values in sweep["grid"].values():
            hardware_points *= len(values)
        workload_points = 1
        for values in sweep["workload"].values():
            workload_points *= len(values)
        size = int(sweep["chunk_size"])
        per_point = -(-hardware_points // size)
        layout = SweepLayout(
            graphs,
            str(sweep["accelerator"]["name"]),
            len(graphs) * workload_points * per_point,
            workload_points * per_point,
            per_point,
            hardware_points,
            size,
        )
    except (KeyError, TypeError, ValueError, ZeroDivisionError, AttributeError):
        return None
    return layout if grid_only or run.get("chunks") == layout.chunks else None


def _chunks_problem(store: Path, run: object) -> Problem | None:
    """A sweep manifest whose ``chunks`` disagree with the chunks its grid gives."""
    if not isinstance(run, dict) or sweep_layout(run) is not None:
        return None
    computed = sweep_layout(run, grid_only=True)
    if computed is None:
        return None  # a manifest that does not say: nothing to check against
    return Problem(
        store / MANIFEST,
        f"it lists {run.get('chunks')} chunks; its sweep's grid gives {computed.chunks}",
        _rerun({"run": run}),
    )


def listing(
    store: Path, manifest: Mapping[str, object]
) -> tuple[dict[str, list[Path]], list[Problem]]:
    """The Parquet parts of every table of `store` that are its own, by table, and a
    `Problem` for every other Parquet file in it (a copy, a foreign file): one listing of
    the folders, no file read."""
    run = manifest.get("run")
    layout = sweep_layout(run)
    rows = manifest.get("rows")
    known = set(rows) if isinstance(rows, dict) else None
    is_sweep = isinstance(run, dict) and "sweep" in run
    own: dict[str, list[Path]] = {}
    problems: list[Problem] = []
    for folder in sorted(store.iterdir()):
        if not folder.is_dir() or not (parts := sorted(folder.rglob("*.parquet"))):
            continue
        for part in parts:
            where = part.relative_to(folder).as_posix()
            if is_sweep:
                found = _SWEEP_PART.fullmatch(where)
                n = int(found[1]) if found else -1
                ours = folder.name == SWEEP_TABLE and (
                    layout is None
                    or (0 <= n < layout.chunks and layout.path(n) == f"{folder.name}/{where}")
                )
            else:
                ours = bool(_ANALYSIS_PART.fullmatch(where)) and (
                    known is None or folder.name in known
                )
            if ours:
                own.setdefault(folder.name, []).append(part)
                continue
            if layout is not None:
                what = (
                    f"not a part of this sweep (its {layout.chunks} chunks are "
                    f"{SWEEP_TABLE}/graph=…/hardware={layout.accelerator}/part-000000.parquet "
                    f"to part-{layout.chunks - 1:06d}.parquet)"
                )
            else:
                what = "not a part of this store (its manifest lists no such table or part)"
            problems.append(Problem(part, what, "remove it or move it out of the store"))
    return own, problems


def _version_problem(store: Path, manifest: Mapping[str, object]) -> Problem | None:
    """A manifest written by a newer nerframe than this one (its layout may differ)."""
    from nerframe import __version__

    def parts(text: object) -> tuple[int, ...] | None:
        found = re.match(r"(\d+)\.(\d+)\.(\d+)", text) if isinstance(text, str) else None
        return tuple(int(x) for x in found.groups()) if found else None

    written, running = manifest.get("nerframe_version"), parts(__version__)
    version = parts(written)
    if version is None:
        what = f"its nerframe_version {written!r} is not a version"
    elif running is not None and version > running:
        what = f"written by nerframe {written}, newer than this nerframe {__version__}"
    else:
        return None
    return Problem(
        store / MANIFEST, what, "read it with the nerframe that wrote it, or run the command again"
    )


def tables(store: str | Path) -> dict[str, list[Path]]:
    """The Parquet files of every table in `store`, by table name: only the store's own
    parts, as its manifest gives them (a copy or a foreign file in a table's folder is
    left out with a `NerframeWarning`, and so is a manifest of a newer nerframe).

    >>> import tempfile
    >>> store = tempfile.mkdtemp()
    >>> with TableWriter(store) as writer:
    ...     _ = writer.write("edges", pl.DataFrame({"graph": ["g"]}), pipeline="g")
    >>> _ = write_manifest(store, {})
    >>> {t: [p.relative_to(store).as_posix() for p in ps] for t, ps in tables(store).items()}
    {'edges': ['edges/pipeline=g/part-0.parquet']}
    """
    manifest = read_manifest(store)
    own, problems = listing(Path(store), manifest)
    if (newer := _version_problem(Path(store), manifest)) is not None:
        problems.insert(0, newer)
    for problem in problems:
        warnings.warn(
            f"{problem.path}: {problem.what}; not read ({problem.repair}; "
            f"'nerframe verify {store}' checks the whole store)",
            NerframeWarning,
            stacklevel=2,
        )
    return own


def damaged(part: Path, *, whole: bool = True) -> str | None:
    """Why the Parquet file `part` cannot be read (its footer, and with `whole` its
    data too), or None.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "part-0.parquet"
    >>> _ = path.write_bytes(b"PAR1 not really")
    >>> damaged(path)
    'not a whole Parquet file (truncated or overwritten)'
    """
    import pyarrow as pa
    import pyarrow.parquet as pq

    try:
        if whole:
            pq.read_table(part)
        else:
            pq.read_metadata(part)
    except (OSError, pa.ArrowException) as e:
        if "magic bytes" in str(e) or "size" in str(e).lower():
            return "not a whole Parquet file (truncated or overwritten)"
        return f"unreadable Parquet ({str(e).splitlines()[0][:120]})"
    return None


def _rerun(manifest: Mapping[str, object]) -> str:
    """How to repair a store's damaged or missing parts."""
    run = manifest.get("run")
    if isinstance(run, dict) and "sweep" in run:
        return "run the same sweep again with -o on this store: it computes the part again"
    return "run the same 'nerframe analyze' again: it rebuilds the store"


def damaged_error(store: str | Path, parts: list[Path]) -> StoreError | None:
    """A `StoreError` naming the first of `parts` of `store` whose footer cannot be read
    and how to repair it, or None (for a reader that failed on them).

    >>> import tempfile
    >>> store = Path(tempfile.mkdtemp())
    >>> _ = write_manifest(store, {"sweep": {}})
    >>> _ = (store / "part-000000.parquet").write_bytes(b"garbage")
    >>> error = damaged_error(store, [store / "part-000000.parquet"])
    >>> str(error).removeprefix(str(store)).split(";")[0]
    '/part-000000.parquet: not a whole Parquet file (truncated or overwritten)'
    """
    for part in parts:
        if (why := damaged(part, whole=False)) is not None:
            return StoreError(
                f"{part}: {why}; {_rerun(read_manifest(store))} ('nerframe verify {store}' "
                "lists every problem)",
                str(store),
            )
    return None


def verify(store: str | Path) -> list[Problem]:
    """Every fault of `store` against its manifest, each with how to repair it: parts
    that are not the store's (copies, foreign files), missing or damaged parts, parts
    whose rows or columns differ from what the manifest implies, row counts that differ
    from the manifest's, a manifest of a newer nerframe. Every part is read whole.

    >>> import nerframe, tempfile
    >>> store = nerframe.analyze("neurex", "neurex", tempfile.mkdtemp() + "/s", report=False).store
    >>> verify(store)
    []
    >>> import shutil
    >>> part = store / "summary" / "pipeline=neurex" / "hardware=neurex" / "part-0.parquet"
    >>> _ = shutil.copy(part, part.with_name("part-1.parquet"))
    >>> [(p.path.name, p.what.split(" (")[0]) for p in verify(store)]
    [('part-1.parquet', 'not a part of this store')]
    """
    import pyarrow.parquet as pq

    store = Path(store)
    manifest = read_manifest(store)
    own, problems = listing(store, manifest)
    if (newer := _version_problem(store, manifest)) is not None:
        problems.insert(0, newer)
    run = manifest.get("run")
    layout = sweep_layout(run)
    rerun = _rerun(manifest)
    counted: dict[str, int] = {}
    schemas: dict[str, dict[str, list[Path]]] = {}
    for table, parts in own.items():
        for part in parts:
            if (why := damaged(part)) is not None:
                problems.append(Problem(part, why, f"remove it, then {rerun}"))
                continue
            meta = pq.read_metadata(part)
            counted[table] = counted.get(table, 0) + meta.num_rows
            schema = meta.schema.to_arrow_schema().remove_metadata()
            schemas.setdefault(table, {}).setdefault(str(schema), []).append(part)
            if layout is not None:
                n = int(part.stem.removeprefix("part-"))
                if meta.num_rows != layout.rows(n):
                    what = (
                        f"holds {meta.num_rows} rows; chunk {n} of this sweep has {layout.rows(n)}"
                    )
                    problems.append(Problem(part, what, f"remove it, then {rerun}"))
            else:
                needed = [
                    column
                    for key, column in (("pipeline=", "graph"), ("hardware=", "accelerator"))
                    if key in part.relative_to(store).as_posix() and column not in schema.names
                ]
                if needed:
                    what = f"has no column {', '.join(needed)} (not a part nerframe wrote)"
                    problems.append(Problem(part, what, f"remove it, then {rerun}"))
    if layout is not None:
        # one schema for every part of a sweep: those in the fewest parts are the odd ones
        for by_schema in schemas.values():
            usual = max(by_schema.values(), key=len)
            for parts in by_schema.values():
                if parts is not usual:
                    problems += [
                        Problem(
                            p,
                            "has other columns than the sweep's other parts",
                            f"remove it, then {rerun}",
                        )
                        for p in parts
                    ]
        present = {p.relative_to(store).as_posix() for p in own.get(SWEEP_TABLE, [])}
        missing = [n for n in range(layout.chunks) if layout.path(n) not in present]
        for n in missing[:10]:
            problems.append(Problem(store / layout.path(n), f"chunk {n} is missing", rerun))
        if len(missing) > 10:
            what = f"{len(missing) - 10} more of the {layout.chunks} chunks are missing"
            problems.append(Problem(store / SWEEP_TABLE, what, rerun))
    elif (wrong := _chunks_problem(store, run)) is not None:
        problems.append(wrong)
    rows = manifest.get("rows")
    if isinstance(rows, dict) and not any(p.what.endswith("missing") for p in problems):
        for table in sorted({*rows, *counted}):
            listed, found = rows.get(table), counted.get(table, 0)
            if (
                table in own
                and listed != found
                and not any(p.path.is_relative_to(store / table) for p in problems)
            ):
                what = f"table {table} holds {found:,} rows; the manifest lists {listed}"
                problems.append(Problem(store / MANIFEST, what, rerun))
    return problems

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
>>> path = write_table(store, "edges", pl.DataFrame({"graph": ["g"]}), pipeline="g")
>>> path.relative_to(store).as_posix()
'edges/pipeline=g/part-0.parquet'
"""

from __future__ import annotations

import contextlib
import datetime
import json
import os
import re
import shutil
import time
from collections.abc import Iterator
from pathlib import Path

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


def write_table(
    store: str | Path, table: str, df: pl.DataFrame, part: int = 0, **partition: str
) -> Path:
    """Write `df` as Parquet part number `part` of `table`, under hive folders ``key=value``.

    Partition values that could not name a folder safely raise `InvalidInputError`.
    """
    for key, value in partition.items():
        check_name(key, value)
    folder = Path(store, table, *(f"{key}={value}" for key, value in partition.items()))
    target = folder / f"part-{part}.parquet"
    with atomic_path(target) as tmp:
        df.write_parquet(tmp, statistics=True)
    return target


def write_manifest(store: str | Path, run: dict[str, object]) -> Path:
    """Write ``store.json``: nerframe version, time, `run` and the row count of every table.

    >>> import tempfile
    >>> store = tempfile.mkdtemp()
    >>> _ = write_table(store, "edges", pl.DataFrame({"graph": ["g", "g"]}), pipeline="g")
    >>> manifest = json.loads(write_manifest(store, {"what": "example"}).read_text())
    >>> manifest["run"], manifest["rows"]
    ({'what': 'example'}, {'edges': 2})
    """
    from nerframe import __version__

    store = Path(store)
    # One scan per table (the parts' columns need not agree to be counted).
    counts = {
        table.name: pl.scan_parquet(parts, extra_columns="ignore", missing_columns="insert")
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


@contextlib.contextmanager
def locked(target: str | Path) -> Iterator[None]:
    """Hold the lock of the store at `target` (a ``.NAME.lock`` file beside it).

    A second run into the same store while the lock is held is refused with a
    `StoreError`. A lock left by a killed process (its pid no longer runs) is
    taken over, and the temporary folders that process left beside the store
    are removed.

    >>> import tempfile
    >>> with locked(tempfile.mkdtemp() + "/store"):
    ...     pass
    """
    target = Path(target)
    target.parent.mkdir(parents=True, exist_ok=True)
    lock = target.with_name(f".{target.name}.lock")
    for _ in range(2):
        try:
            fd = os.open(lock, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o666)
        except FileExistsError:
            if _holder_alive(lock):
                raise StoreError(
                    f"{target}: another nerframe run is writing this store "
                    f"(lock {lock.name}); wait for it to finish",
                    str(target),
                ) from None
            lock.unlink(missing_ok=True)
            continue
        break
    else:
        raise StoreError(f"{target}: could not take the lock {lock.name}", str(target))
    try:
        os.write(fd, str(os.getpid()).encode())
        os.close(fd)
        # Left by a run that was killed: nobody else writes beside this store now.
        for leftover in target.parent.glob(f".{glob_escape(target.name)}.*.tmp"):
            if leftover.is_dir():
                shutil.rmtree(leftover, ignore_errors=True)
            else:
                leftover.unlink(missing_ok=True)
        yield
    finally:
        lock.unlink(missing_ok=True)


def glob_escape(name: str) -> str:
    """`name` with glob wildcards escaped, for `Path.glob`.

    >>> glob_escape("a*b[1]")
    'a[*]b[[]1]'
    """
    return re.sub(r"([*?\[])", r"[\1]", name)


# A run writes its pid into the lock right after creating it; a lock still without
# a pid this much later was left by a run killed in between.
_UNWRITTEN_LOCK_S = 10.0


def _holder_alive(lock: Path) -> bool:
    try:
        text = lock.read_text().strip()
        age = time.time() - lock.stat().st_mtime
    except FileNotFoundError:
        return False
    except OSError:
        return True
    try:
        pid = int(text or "0")
    except ValueError:
        pid = 0
    if pid <= 0:
        return age < _UNWRITTEN_LOCK_S  # being written this instant: held
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def tables(store: str | Path) -> dict[str, list[Path]]:
    """The Parquet files of every table in `store`, by table name.

    >>> import tempfile
    >>> store = tempfile.mkdtemp()
    >>> _ = write_table(store, "edges", pl.DataFrame({"graph": ["g"]}), pipeline="g")
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

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

import datetime
import json
from pathlib import Path

import polars as pl

from nerframe.atomic import atomic_path
from nerframe.errors import NerframeError

MANIFEST = "store.json"


def write_table(
    store: str | Path, table: str, df: pl.DataFrame, part: int = 0, **partition: str
) -> Path:
    """Write `df` as Parquet part number `part` of `table`, under hive folders ``key=value``."""
    folder = Path(store, table, *(f"{key}={value}" for key, value in partition.items()))
    target = folder / f"part-{part}.parquet"
    with atomic_path(target) as tmp:
        df.write_parquet(tmp, statistics=True)
    return target


def write_manifest(store: str | Path, run: dict[str, object]) -> Path:
    """Write ``store.json``: nerframe version, time, `run` and the row count of every table."""
    from nerframe import __version__

    store = Path(store)
    counts = {
        table.name: sum(pl.scan_parquet(p).select(pl.len()).collect().item() for p in parts)
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
    """Read ``store.json``; a missing or unreadable store is a `NerframeError`."""
    path = Path(store, MANIFEST)
    try:
        return json.loads(path.read_text())
    except FileNotFoundError:
        raise NerframeError(f"{store}: not a nerframe result store (no {MANIFEST})") from None
    except (OSError, json.JSONDecodeError) as e:
        raise NerframeError(f"{path}: unreadable store manifest ({e})") from None


def tables(store: str | Path) -> dict[str, list[Path]]:
    """The Parquet files of every table in `store`, by table name."""
    read_manifest(store)
    return {
        folder.name: parts
        for folder in sorted(Path(store).iterdir())
        if folder.is_dir() and (parts := sorted(folder.rglob("*.parquet")))
    }

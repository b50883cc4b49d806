"""DuckDB SQL over a result store.

`connect` opens an in-memory DuckDB database with one view per table of a store
(``ops``, ``edges``, ``costs``, ``schedule``, ``summary``, ``roofline``, and
``accelerators``/``modules`` when present); the views read the store's Parquet
files in place. `query` runs raw SQL or a named query (``queries/NAME.sql``,
shipped as package data) and returns a polars DataFrame.

>>> sorted(named_queries())  # doctest: +NORMALIZE_WHITESPACE
['best_under_budget', 'bottlenecks', 'breakdown', 'matrix', 'pareto', 'roofline',
 'sensitivity', 'speedup', 'top_ops']
"""

from __future__ import annotations

import glob
import re
import warnings
from functools import cache
from importlib import resources
from pathlib import Path

import duckdb
import polars as pl

from nerframe.errors import InvalidInputError, NerframeWarning, did_you_mean
from nerframe.store import damaged_error, read_manifest, tables

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OVER_SWEEP = re.compile(r"\b(?:FROM|JOIN)\s+sweep\b", re.IGNORECASE)


def connect(store: str | Path) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with a view over the Parquet files of each table.

    A missing or unreadable store is a `NerframeError`.

    >>> import nerframe, tempfile
    >>> store = nerframe.analyze("neurex", "neurex", tempfile.mkdtemp() + "/s", report=False).store
    >>> con = connect(store)
    >>> con.sql("SELECT graph, accelerator, status FROM summary").fetchall()
    [('neurex', 'neurex', 'ok')]
    >>> con.close()
    """
    con = duckdb.connect(":memory:")
    # DuckDB's own progress bar writes to stdout, into the caller's table or pipe.
    con.execute("SET enable_progress_bar = false")
    for table, parts in tables(store).items():
        # graph and accelerator are real columns, so the hive folder names are not read.
        # DuckDB expands glob patterns even in a list of files: a store or graph named
        # 'st*' would read its siblings' parts too, so every name is escaped.
        try:
            relation = con.read_parquet(
                [glob.escape(str(p.absolute())) for p in parts],
                union_by_name=True,
                hive_partitioning=False,
            )
        except duckdb.Error:
            con.close()
            # a damaged part: one line naming it and the repair, not DuckDB's traceback
            if (error := damaged_error(store, parts)) is not None:
                raise error from None
            raise
        relation.create_view(table)
    return con


@cache
def named_queries() -> dict[str, str]:
    """Every named query: name -> SQL text, read from the installed package data.

    >>> "matrix" in named_queries() and "pareto" in named_queries()
    True
    """
    folder = resources.files("nerframe.queries")
    return {
        entry.name.removesuffix(".sql"): entry.read_text(encoding="utf-8")
        for entry in sorted(folder.iterdir(), key=lambda e: e.name)
        if entry.name.endswith(".sql")
    }


def _queries_of(store: str | Path, queries: dict[str, str]) -> str:
    """Which named queries suit `store`: those over table ``sweep`` for a sweep store,
    the others for a store of analyze."""
    sweep = "sweep" in tables(store)
    suitable = [n for n, sql in queries.items() if bool(_OVER_SWEEP.search(sql)) == sweep]
    kind = "a sweep store" if sweep else "a store of analyze"
    return f" ({kind}; its named queries: {', '.join(suitable)})"


def query(sql_or_name: str, store: str | Path) -> pl.DataFrame:
    """Run a named query (a name from `named_queries`) or raw SQL over `store`.

    Any failure (unknown name, bad SQL, missing table or store) is a `NerframeError`
    whose one-line message names the query and gives DuckDB's reason. A sweep
    store whose sweep did not finish gives a `NerframeWarning` (rows are missing), and
    so does a named query of feasible rows (``pareto``, ``best_under_budget``) that is
    empty because no row meets every constraint (naming the one most rows break).

    >>> import nerframe, tempfile
    >>> store = nerframe.analyze("neurex", "neurex", tempfile.mkdtemp() + "/s", report=False).store
    >>> query("SELECT graph, accelerator, status FROM summary", store).rows()
    [('neurex', 'neurex', 'ok')]
    """
    if not isinstance(sql_or_name, str):
        raise InvalidInputError(
            f"query takes a query name or SQL text, got {type(sql_or_name).__name__}", "query"
        )
    text = sql_or_name.strip()
    if not text:
        raise InvalidInputError("empty query: give a query name or SQL")
    queries = named_queries()
    if _NAME.fullmatch(text):
        if text not in queries:
            raise InvalidInputError(
                f"unknown query {text!r}{did_you_mean(text, queries)}; "
                f"named queries: {', '.join(queries)} (or give SQL)"
            )
        sql, label = queries[text], f"query {text!r}"
    else:
        sql, label = sql_or_name, "SQL query"
    con = connect(store)
    from nerframe.sweeps.store import incomplete

    if (problem := incomplete(store)) is not None:
        warnings.warn(problem, NerframeWarning, stacklevel=2)
    try:
        relation = con.sql(sql)
        # DuckDB before 2.0 gives no relation for a statement without a result.
        if relation is None:
            raise InvalidInputError(f"{label} returned no table (only SELECT-like SQL does)")
        result: pl.DataFrame = relation.pl()
        if result.is_empty() and label != "SQL query" and "WHERE feasible" in sql:
            # a named query of feasible rows (pareto, best_under_budget): say why it is empty
            from nerframe.sweeps.feasibility import warn_infeasible_store

            run = read_manifest(store).get("run") or {}
            limits = (run.get("sweep") or {}).get("constraints") if isinstance(run, dict) else None
            warn_infeasible_store(con, label, limits if isinstance(limits, dict) else None)
        return result
    except duckdb.Error as e:
        reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
        if label != "SQL query" and isinstance(e, duckdb.CatalogException):
            reason += _queries_of(store, queries)
        raise InvalidInputError(f"{label} failed on store {store}: {reason}") from None
    finally:
        con.close()

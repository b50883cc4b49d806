"""DuckDB SQL over a result store.

`connect` opens an in-memory DuckDB database with one view per table of a store
(``ops``, ``edges``, ``costs``, ``schedule``, ``summary``, ``roofline``, and
``accelerators``/``modules`` when present); the views read the store's Parquet
files in place. `query` runs raw SQL or a named query (``queries/NAME.sql``,
shipped as package data) and returns a polars DataFrame; `opened` gives the same
rows as a `Result` that reads only what is asked of it (the first rows, their count,
a file DuckDB writes as it reads, or batches), so a result of any size takes bounded
memory.

>>> sorted(named_queries())  # doctest: +NORMALIZE_WHITESPACE
['best_under_budget', 'bottlenecks', 'breakdown', 'matrix', 'pareto', 'roofline',
 'sensitivity', 'speedup', 'top_ops']
"""

from __future__ import annotations

import contextlib
import glob
import re
import warnings
from collections.abc import Iterator
from functools import cache
from importlib import resources
from pathlib import Path
from typing import cast

import duckdb
import polars as pl

from nerframe._typing import FileFormat
from nerframe.errors import InvalidInputError, NerframeWarning, did_you_mean, lone_surrogate
from nerframe.store import damaged_error, read_manifest, tables

_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_OVER_SWEEP = re.compile(r"\b(?:FROM|JOIN)\s+sweep\b", re.IGNORECASE)


def connect(store: str | Path, *, writes: tuple[str | Path, ...] = ()) -> duckdb.DuckDBPyConnection:
    """An in-memory DuckDB connection with a view over the Parquet files of each table,
    that reads no file but the store's (and writes only into the folders `writes`).

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
    # A query reads the store and nothing else: read_csv('/etc/passwd'), ATTACH, COPY
    # and INSTALL are refused by DuckDB itself; `writes` is where `Result.write` puts
    # its file (DuckDB allows no folder to be added once access is off).
    # (the store by name and as the views name it, its glob characters escaped)
    folders = [str(Path(w).absolute()) for w in (store, *writes)]
    folders.append(glob.escape(folders[0]))
    con.execute("SET allowed_directories = $1", [[f.rstrip("/") + "/" for f in folders]])
    con.execute("SET enable_external_access = false")
    return con


# What a query may be: one statement that reads (SELECT, with DESCRIBE, SHOW,
# SUMMARIZE, VALUES and FROM-first forms, or EXPLAIN of one).
_READ_ONLY = frozenset({"SELECT", "EXPLAIN"})
_PRAGMA = re.compile(r"\s*(?:--[^\n]*\n\s*|/\*.*?\*/\s*)*PRAGMA\b", re.IGNORECASE | re.DOTALL)


def _check_read_only(sql: str) -> None:
    """Refuse SQL that is not exactly one reading statement: ``select 1; select 2``
    would show only the last result, and COPY, ATTACH, CREATE, SET or INSTALL would
    change files or the session; a syntax error is left to DuckDB's own message.

    >>> try:
    ...     _check_read_only("SELECT 1; COPY summary TO 'x.csv'")
    ... except InvalidInputError as e:
    ...     print(e)
    SQL query: 2 statements; give one SELECT (a query reads a store and changes nothing)
    """
    try:
        statements = duckdb.extract_statements(sql)
    except duckdb.Error:
        return  # malformed: DuckDB's parser error is the clearer message
    kinds = [s.type.name for s in statements]
    if len(kinds) == 1 and _PRAGMA.match(sql):
        kinds = ["PRAGMA"]  # DuckDB 1.3 rewrites a PRAGMA into a SELECT of its function
    if not kinds:
        raise InvalidInputError("SQL query: no statement (only comments); give a SELECT", "query")
    if len(kinds) > 1:
        raise InvalidInputError(
            f"SQL query: {len(kinds)} statements; give one SELECT (a query reads a store "
            "and changes nothing)",
            "query",
        )
    if kinds[0] not in _READ_ONLY:
        raise InvalidInputError(
            f"SQL query: {kinds[0]} is not a reading statement; give one SELECT (a query "
            "reads a store and changes nothing; -o FILE writes its rows)",
            "query",
        )


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
    """Run a named query (a name from `named_queries`) or raw SQL over `store`: every
    row as a DataFrame (`opened` reads a large result a part at a time instead).

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
    with opened(sql_or_name, store, stacklevel=4) as result:
        return result.frame()


@contextlib.contextmanager
def opened(
    sql_or_name: str, store: str | Path, *, writes: tuple[str | Path, ...] = (), stacklevel: int = 3
) -> Iterator[Result]:
    """The rows of a named query or raw SQL over `store`, as a `Result` that reads
    them only as they are asked for: the first rows, their count, a file DuckDB
    writes, or batches; the connection closes with the block. Failures and warnings
    as for `query`.

    >>> import nerframe, tempfile
    >>> store = nerframe.analyze("neurex", "neurex", tempfile.mkdtemp() + "/s", report=False).store
    >>> with opened("SELECT op_id FROM ops", store) as rows:
    ...     rows.frame(limit=2).height, rows.count() > 2
    (2, True)
    """
    if not isinstance(sql_or_name, str):
        raise InvalidInputError(
            f"query takes a query name or SQL text, got {type(sql_or_name).__name__}", "query"
        )
    if lone_surrogate(sql_or_name):  # (non-UTF-8 bytes on the command line; DuckDB takes UTF-8)
        shown = sql_or_name.encode("utf-8", "surrogateescape").decode("utf-8", "backslashreplace")
        raise InvalidInputError(f"query '{shown}' is not UTF-8 text", "query")
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
        _check_read_only(sql)
    con = connect(store, writes=writes)
    try:
        from nerframe.sweeps.store import incomplete

        if (problem := incomplete(store)) is not None:
            warnings.warn(problem, NerframeWarning, stacklevel=stacklevel)
        result = Result(con, sql, label, store)
        with result.failures():
            relation = con.sql(sql)
            # DuckDB before 2.0 gives no relation for a statement without a result.
            if relation is None:
                raise InvalidInputError(f"{label} returned no table (only SELECT-like SQL does)")
            result.relation = relation
        yield result
    finally:
        con.close()


# Rows per batch that `Result.batches` reads (DuckDB's vector size times 32).
BATCH_ROWS = 65_536


class Result:
    """The rows of one query over a store (see `opened`): DuckDB computes them only as
    they are read, so no method holds more than the rows it returns."""

    relation: duckdb.DuckDBPyRelation

    def __init__(
        self, con: duckdb.DuckDBPyConnection, sql: str, label: str, store: str | Path
    ) -> None:
        self._con, self._sql, self.label, self._store = con, sql, label, store

    @contextlib.contextmanager
    def failures(self) -> Iterator[None]:
        """DuckDB's errors, while the rows are read, as one-line `InvalidInputError`s
        naming the query."""
        try:
            yield
        except duckdb.Error as e:
            reason = str(e).strip().splitlines()[0] if str(e).strip() else type(e).__name__
            if self.label != "SQL query" and isinstance(e, duckdb.CatalogException):
                reason += _queries_of(self._store, named_queries())
            raise InvalidInputError(
                f"{self.label} failed on store {self._store}: {reason}"
            ) from None

    def _rows(self, limit: int | None) -> duckdb.DuckDBPyRelation:
        return self.relation if limit is None else self.relation.limit(limit)

    def frame(self, limit: int | None = None) -> pl.DataFrame:
        """The first `limit` rows (all without one) as a DataFrame; an empty result
        of a named query of feasible rows says why it is empty (a warning)."""
        with self.failures():
            result: pl.DataFrame = self._rows(limit).pl()
            if result.is_empty():
                self._empty()
        return result

    def count(self) -> int:
        """How many rows the query gives, counted by DuckDB without reading its
        columns where it need not (a ``count(*)`` over the query).

        >>> import nerframe, tempfile
        >>> store = nerframe.analyze("neurex", "neurex", tempfile.mkdtemp() + "/s",
        ...                          report=False).store
        >>> with opened("SELECT * FROM summary", store) as rows:
        ...     rows.count()
        1
        """
        with self.failures():
            return int(self.relation.aggregate("count(*)").fetchall()[0][0])

    def batches(self, limit: int | None = None, size: int = BATCH_ROWS) -> Iterator[pl.DataFrame]:
        """The first `limit` rows (all without one) as DataFrames of at most `size`
        rows, each computed as it is asked for."""
        rows = self._rows(limit)
        with self.failures():
            self._streaming()
            # DuckDB 2 renamed the reader (the old name warns); 1.x has only the old one.
            reader = (
                rows.to_arrow_reader(size)
                if hasattr(rows, "to_arrow_reader")
                else rows.fetch_arrow_reader(size)
            )
            for batch in reader:
                yield cast(pl.DataFrame, pl.from_arrow(batch))

    def write(self, path: Path, fmt: FileFormat, limit: int | None = None) -> int:
        """Write the first `limit` rows (all without one) to the existing file `path`,
        DuckDB's own writer streaming them (memory stays bounded however many):
        CSV with a header (a list as its items joined by commas), a JSON array of
        row objects, or Parquet. Returns the row count."""
        rows = self._rows(limit)
        if fmt == "csv":  # lists as the terminal table and `to_text` show them
            rows = rows.project(
                ", ".join(
                    f"list_aggregate({_quoted(c)}, 'string_agg', ',') AS {_quoted(c)}"
                    if str(t).endswith("]")
                    else _quoted(c)
                    for c, t in zip(rows.columns, rows.types, strict=True)
                )
            )
        options = {"csv": "FORMAT csv, HEADER true", "json": "FORMAT json, ARRAY true"}
        with self.failures():
            self._streaming()
            rows.create_view("nerframe_export")
            # absolute, and no temporary file of DuckDB's own (`path` is already one):
            # DuckDB 1.3 refuses a relative path and its own ``tmp_`` name when file
            # access is limited to the allowed folders
            target = str(Path(path).absolute()).replace("'", "''")
            format_options = options.get(fmt, "FORMAT parquet")
            done = self._con.execute(
                f"COPY nerframe_export TO '{target}' ({format_options}, USE_TMP_FILE false)"
            ).fetchall()
        written = int(done[0][0]) if done and done[0] else 0
        if not written:
            self._empty()
        return written

    def _streaming(self) -> None:
        """Let DuckDB hand the rows on in order as they come: with several threads its
        order-preserving writers and readers buffer rows that come early, a share that
        grows with the result (measured with DuckDB 2.0: 1 M rows to CSV +220 MB and
        5 M rows +510 MB at two or more threads, and +50 MB for both at one)."""
        self._con.execute("SET threads = 1")

    def _empty(self) -> None:
        """Warn why a named query of feasible rows (``pareto``, ``best_under_budget``)
        gave no row."""
        if self.label == "SQL query" or "WHERE feasible" not in self._sql:
            return
        from nerframe.sweeps.feasibility import warn_infeasible_store

        run = read_manifest(self._store).get("run") or {}
        limits = (run.get("sweep") or {}).get("constraints") if isinstance(run, dict) else None
        with self.failures():
            warn_infeasible_store(
                self._con, self.label, limits if isinstance(limits, dict) else None
            )


def _quoted(name: str) -> str:
    """`name` as a quoted SQL identifier."""
    return '"' + name.replace('"', '""') + '"'

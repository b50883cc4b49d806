"""Writing tables for people and programs: aligned text, CSV, JSON or Parquet.

>>> import polars as pl
>>> print(render(pl.DataFrame({"op": ["a", "b"], "flops": [1.5e9, 2.0]}), totals=["flops"]))
op             flops
-----  -------------
a      1,500,000,000
b                  2
-----  -------------
total  1,500,000,002
"""

from __future__ import annotations

import json
import sys
from decimal import Decimal
from pathlib import Path

import polars as pl

from nerframe.atomic import atomic_path
from nerframe.errors import InvalidInputError, NerframeError

FORMATS = ("table", "csv", "json", "parquet")
_SUFFIXES = {".txt": "table", ".csv": "csv", ".json": "json", ".parquet": "parquet"}


def render(df: pl.DataFrame, totals: list[str] | None = None) -> str:
    """`df` as an aligned text table (numbers right-aligned), with a totals row
    summing the `totals` columns when given.

    >>> print(render(pl.DataFrame({"op": ["a", "b"], "flops": [1500, 20]}), totals=["flops"]))
    op     flops
    -----  -----
    a      1,500
    b         20
    -----  -----
    total  1,520
    """
    header = df.columns
    rows = [[format_value(v) for v in row] for row in df.iter_rows()]
    numeric = [df.schema[c].is_numeric() for c in header]
    footer = None
    if totals:
        sums = df.select(pl.col(c).sum() for c in totals if c in df.columns).row(0, named=True)
        footer = [
            "total" if i == 0 else format_value(sums[c]) if c in sums else ""
            for i, c in enumerate(header)
        ]
    body = [header, *rows, *([footer] if footer else [])]
    widths = [max(len(r[i]) for r in body) for i in range(len(header))]
    rule = ["-" * w for w in widths]

    def line(cells: list[str]) -> str:
        padded = (
            c.rjust(w) if num else c.ljust(w)
            for c, w, num in zip(cells, widths, numeric, strict=True)
        )
        return "  ".join(padded).rstrip()

    lines = [line(header), line(rule), *(line(r) for r in rows)]
    if footer:
        lines += [line(rule), line(footer)]
    return "\n".join(lines)


def format_value(value: object) -> str:
    """One value as a table shows it: thousands separators, 4 significant digits.

    >>> [format_value(v) for v in (1234567, 2.5e9, 0.123456, 3.0, None, True, [1, 2])]
    ['1,234,567', '2,500,000,000', '0.1235', '3', '', 'true', '1,2']
    """
    if value is None:
        return ""
    if isinstance(value, bool):
        return str(value).lower()
    if isinstance(value, float):
        if value.is_integer() and abs(value) < 1e15:
            return f"{int(value):,}"
        return f"{value:.4g}" if abs(value) >= 1e6 or abs(value) < 1e-3 else f"{value:,.4f}"
    if isinstance(value, int):
        return f"{value:,}"
    if isinstance(value, Decimal):  # DuckDB's SUM of integers
        return format_value(int(value) if value == value.to_integral_value() else float(value))
    if isinstance(value, list):
        return ",".join(map(str, value))
    return str(value)


def to_text(df: pl.DataFrame, fmt: str, totals: list[str] | None = None) -> str:
    """`df` in a text format: ``table``, ``csv`` or ``json`` (an array of row objects).

    >>> df = pl.DataFrame({"op": ["a"], "skips": [[1, 2]]})
    >>> print(to_text(df, "csv"), to_text(df, "json"), sep="", end="")
    op,skips
    a,"1,2"
    [{"op": "a", "skips": [1, 2]}]
    """
    if fmt == "table":
        return render(df, totals) + "\n"
    if fmt == "csv":
        flat = df.with_columns(
            pl.col(c).cast(pl.List(pl.String)).list.join(",")
            for c, t in df.schema.items()
            if isinstance(t, pl.List)
        )
        return flat.write_csv()
    if fmt == "json":
        return json.dumps(df.to_dicts(), default=str) + "\n"
    raise NerframeError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS[:3])}")


def emit(
    df: pl.DataFrame,
    fmt: str | None = None,
    path: str | Path | None = None,
    totals: list[str] | None = None,
) -> None:
    """Print `df` to stdout, or write it to `path` atomically (format from the suffix
    unless `fmt` is given; ``.parquet`` writes Parquet).

    >>> import tempfile
    >>> emit(pl.DataFrame({"x": [1]}), "csv")
    x
    1
    >>> path = Path(tempfile.mkdtemp()) / "t.json"
    >>> emit(pl.DataFrame({"x": [1]}), path=path)
    >>> print(path.read_text(), end="")
    [{"x": 1}]
    """
    if path is None:
        sys.stdout.write(to_text(df, fmt or "table", totals))
        return
    path = Path(path)
    if path.is_dir():
        raise InvalidInputError(
            f"{path}: is a folder; give a file name ending in {', '.join(_SUFFIXES)}", str(path)
        )
    if not fmt and not path.suffix:
        raise InvalidInputError(
            f"{path}: a table file's name ends in {', '.join(_SUFFIXES)} (or give --format)",
            str(path),
        )
    if not fmt and path.suffix.lower() not in _SUFFIXES:
        raise InvalidInputError(
            f"{path}: unknown table format {path.suffix!r}; use {', '.join(_SUFFIXES)} "
            "or give --format",
            str(path),
        )
    fmt = fmt if fmt and fmt != "table" else _SUFFIXES.get(path.suffix.lower(), fmt or "table")
    with atomic_path(path) as tmp:
        if fmt == "parquet":
            df.write_parquet(tmp)
        else:
            tmp.write_text(to_text(df, fmt, totals))

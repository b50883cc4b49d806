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

import contextlib
import contextvars
import io
import json
import math
import sys
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from decimal import Decimal
from pathlib import Path
from typing import cast

import polars as pl

from nerframe.atomic import atomic_path
from nerframe.errors import InvalidInputError

FORMATS = ("table", "csv", "json", "parquet")
_SUFFIXES = {".txt": "table", ".csv": "csv", ".json": "json", ".parquet": "parquet"}


# The widest text cell a terminal table shows; longer ones end in "…" (see `wide`).
MAX_CELL = 60

_WIDE: contextvars.ContextVar[bool] = contextvars.ContextVar("wide", default=False)


@contextlib.contextmanager
def wide(on: bool = True) -> Iterator[None]:
    """Within the block, tables show text cells whole instead of cut at `MAX_CELL`
    characters (the command line's ``--wide``).

    >>> df = pl.DataFrame({"source": ["x" * 70]})
    >>> len(render(df).splitlines()[-1]), len(render(df, wide=True).splitlines()[-1])
    (60, 70)
    >>> with wide():
    ...     len(render(df).splitlines()[-1])
    70
    """
    token = _WIDE.set(on)
    try:
        yield
    finally:
        _WIDE.reset(token)


def render(
    df: pl.DataFrame,
    totals: list[str] | None = None,
    *,
    ratios: Mapping[str, tuple[str, str]] | None = None,
    wide: bool | None = None,
) -> str:
    """`df` as an aligned text table (numbers right-aligned), with a totals row
    summing the `totals` columns when given; `ratios` fill a column of that row with
    the quotient of two totals (intensity = flops / bytes). A column shows all its
    numbers in one format (`column_formatter`). Text cells are printable (control
    characters escaped) and cut at `MAX_CELL` characters unless `wide` (default: as
    set by `wide()`).

    Why not polars' own printer: with ``pl.Config(tbl_formatting="NOTHING",
    thousands_separator=",", tbl_cell_numeric_alignment="RIGHT", float_precision=4)``
    (polars 1.x) it writes a cell's escape sequences raw to the
    terminal, splits a cell holding a newline over two rows, prints 0.000123456 as
    ``0.0001`` (fixed decimals, no significant digits) and has no totals row; its
    right-aligned, comma-grouped integers are the same as these.

    >>> print(render(pl.DataFrame({"op": ["a", "b"], "flops": [1500, 20]}), totals=["flops"]))
    op     flops
    -----  -----
    a      1,500
    b         20
    -----  -----
    total  1,520
    """
    header = [printable(c) for c in df.columns]
    limit = None if (_WIDE.get() if wide is None else wide) else MAX_CELL
    sums: dict[str, object] = {}
    if totals:
        sums = df.select(pl.col(c).sum() for c in totals if c in df.columns).row(0, named=True)
        for column, (top, bottom) in (ratios or {}).items():
            if column in df.columns and top in sums and bottom in sums:
                numerator, denominator = cast(float, sums[top]), cast(float, sums[bottom])
                sums[column] = numerator / denominator if denominator else None
    columns = []
    for name in df.columns:
        series = df.get_column(name)
        footer_value = [sums[name]] if name in sums else []
        show = column_formatter([*series.to_list(), *footer_value], series.dtype)
        cells = [_cut(show(v), limit) for v in series.to_list()]
        columns.append((cells, show(sums[name]) if name in sums else ""))
    rows = [list(cells) for cells in zip(*(c for c, _ in columns), strict=True)]
    numeric = [df.schema[c].is_numeric() for c in df.columns]
    footer = None
    if totals:
        footer = ["total" if i == 0 else total for i, (_, total) in enumerate(columns)]
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


def printable(text: str) -> str:
    r"""`text` with every non-printable character (ESC, other controls, DEL…) escaped,
    so that no input can move the cursor or recolour the terminal.

    >>> printable("\x1b[31mred\ttab")
    '\\x1b[31mred\\ttab'
    """
    if text.isprintable():
        return text
    return "".join(c if c.isprintable() else c.encode("unicode_escape").decode() for c in text)


def _cut(cell: str, limit: int | None) -> str:
    return cell if limit is None or len(cell) <= limit else cell[: limit - 1] + "…"


def column_formatter(values: Sequence[object], dtype: pl.DataType) -> Callable[[object], str]:
    """How one column shows its values: floats in the one format that fits them all
    (integers with separators; rounded to integers when every value is >= 1000; four
    decimals when all lie in [0.001, 1e6); else scientific), anything else as
    `format_value` does.

    >>> show = column_formatter([825444532224.0, 2.961e9], pl.Float64())
    >>> show(825444532224.0), show(2.961e9)
    ('825,444,532,224', '2,961,000,000')
    >>> show = column_formatter([1.0, 0.12], pl.Float64())
    >>> show(1.0), show(0.12)
    ('1.0000', '0.1200')
    >>> show = column_formatter([2.2e-16, 0.4], pl.Float64())
    >>> show(2.2e-16), show(0.4), show(0.0)
    ('2.200e-16', '4.000e-01', '0')
    """
    if not dtype.is_float():
        return format_value
    numbers = [abs(v) for v in values if isinstance(v, float) and math.isfinite(v) and v != 0.0]
    if all(v.is_integer() and v < 1e15 for v in numbers) or (
        numbers and min(numbers) >= 1e3 and max(numbers) < 1e15
    ):
        style = "{:,.0f}"
    elif all(1e-3 <= v < 1e6 for v in numbers):
        style = "{:,.4f}"
    else:
        style = "{:.3e}"

    def show(value: object) -> str:
        if not isinstance(value, float) or not math.isfinite(value):
            return format_value(value)
        return "0" if value == 0.0 and style != "{:,.4f}" else style.format(value)

    return show


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
        return printable(",".join(map(str, value)))
    return printable(str(value))


def to_text(
    df: pl.DataFrame,
    fmt: str,
    totals: list[str] | None = None,
    *,
    ratios: Mapping[str, tuple[str, str]] | None = None,
) -> str:
    """`df` in a text format: ``table``, ``csv`` or ``json`` (an array of row objects).

    >>> df = pl.DataFrame({"op": ["a"], "skips": [[1, 2]]})
    >>> print(to_text(df, "csv"), to_text(df, "json"), sep="", end="")
    op,skips
    a,"1,2"
    [{"op": "a", "skips": [1, 2]}]
    """
    if fmt == "table":
        return render(df, totals, ratios=ratios) + "\n"
    if fmt == "csv":
        flat = df.with_columns(
            pl.col(c).cast(pl.List(pl.String)).list.join(",")
            for c, t in df.schema.items()
            if isinstance(t, pl.List)
        )
        return flat.write_csv()
    if fmt == "json":
        return json.dumps(df.to_dicts(), default=str) + "\n"
    raise InvalidInputError(f"unknown format {fmt!r}; choose one of {', '.join(FORMATS[:3])}")


def emit(
    df: pl.DataFrame,
    fmt: str | None = None,
    path: str | Path | None = None,
    totals: list[str] | None = None,
    *,
    ratios: Mapping[str, tuple[str, str]] | None = None,
) -> None:
    """Print `df` to stdout, or write it to `path` atomically (format from the suffix
    unless `fmt` is given; ``.parquet`` writes Parquet). A table written to a file
    keeps its text cells whole.

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
        sys.stdout.write(to_text(df, fmt or "table", totals, ratios=ratios))
        return
    path, fmt = file_format(path, fmt)
    if fmt == "parquet":
        write_parquet(df, path)
        return
    with atomic_path(path) as tmp, wide():
        tmp.write_text(to_text(df, fmt, totals, ratios=ratios))


def file_format(path: str | Path, fmt: str | None = None) -> tuple[Path, str]:
    """The format a table written to `path` takes: `fmt` when given (other than
    ``table``), else the one its suffix names; a folder, or a name without a known
    suffix and no `fmt`, is an `InvalidInputError`.

    >>> file_format("rows.parquet"), file_format("rows.out", "csv")
    ((PosixPath('rows.parquet'), 'parquet'), (PosixPath('rows.out'), 'csv'))
    """
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
    named = _SUFFIXES.get(path.suffix.lower(), "table")
    if fmt and fmt != "table" and named not in ("table", fmt):
        # (-o rows.csv --format json wrote JSON under a CSV name)
        raise InvalidInputError(
            f"{path}: the name says {named} but --format says {fmt}; give one of them",
            str(path),
        )
    return path, fmt if fmt and fmt != "table" else _SUFFIXES.get(
        path.suffix.lower(), fmt or "table"
    )


def emit_batches(batches: Iterable[pl.DataFrame], fmt: str) -> int:
    """Print rows that come in batches to stdout as ``csv`` (one header) or ``json``
    (one array of row objects), each batch written as it comes, so that memory holds
    one batch however many rows there are; the same text `emit` prints for all the
    rows at once. Returns the row count.

    >>> emit_batches([pl.DataFrame({"x": [1, 2]}), pl.DataFrame({"x": [3]})], "json")
    [{"x": 1}, {"x": 2}, {"x": 3}]
    3
    """
    if fmt not in ("csv", "json"):
        raise InvalidInputError(f"unknown format {fmt!r}; choose csv or json")
    rows, header = 0, False
    for batch in batches:
        if fmt == "csv":
            text = to_text(batch, "csv")
            sys.stdout.write(text.partition("\n")[2] if header else text)
            header = True
        elif batch.height:
            body = json.dumps(batch.to_dicts(), default=str)[1:-1]
            sys.stdout.write(("[" if not rows else ", ") + body)
        rows += batch.height
    if fmt == "json":
        sys.stdout.write(("]" if rows else "[]") + "\n")
    return rows


def write_parquet(df: pl.DataFrame, path: str | Path) -> None:
    """`df` as the Parquet file `path`, written atomically (`atomic_path`); a write the
    system refuses (a full disk) is an `OSError` naming `path`.

    >>> import tempfile
    >>> path = Path(tempfile.mkdtemp()) / "t.parquet"
    >>> write_parquet(pl.DataFrame({"x": [1]}), path)
    >>> pl.read_parquet(path)["x"].to_list()
    [1]
    """
    with atomic_path(path) as tmp:
        try:
            df.write_parquet(tmp, statistics=True)
        except pl.exceptions.PolarsError:
            # polars can lose the system's error: a full disk reads "Invalid thrift:
            # transport error". The same bytes written by Python raise it (an OSError
            # that atomic_path names by `path`); if they go through, polars' error stands.
            buffer = io.BytesIO()
            df.write_parquet(buffer, statistics=True)
            tmp.write_bytes(buffer.getbuffer())
            raise

"""Building and validating ``ops`` tables.

`operators` turns records (dicts) or a DataFrame into a validated ops table:
unknown op types and parameters are refused with a suggestion, defaults are
filled from the catalogue, parameters an op type does not use are null, and
every value is checked (counts >= 1, ratios in (0, 1], flags boolean). Each
row's ``scope`` (``frame``: once per frame, ``batch``: once per batch of rays)
defaults to its op type's scope in the catalogue.

>>> import nerframe
>>> ops = nerframe.operators([{"op_type": "UniformSampler", "B": 4096, "N": 64},
...                           {"op_type": "MLP", "B": 4096, "N": 64, "in_dim": 32,
...                            "num_layers": 3, "layer_width": 64, "out_dim": 4}])
>>> ops.select("op_id", "op_type", "category", "scope", "use_bias").rows()
[(0, 'UniformSampler', 'SAMPLING', 'batch', None), (1, 'MLP', 'COMPUTATION', 'batch', True)]
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable, Mapping, Sequence
from numbers import Integral, Real

import numpy as np
import polars as pl

from nerframe.errors import InvalidInputError, did_you_mean
from nerframe.schemas import OPS
from nerframe.taxonomy import OP_TYPES, PARAMETER, PARAMETERS, SCOPES, op_types

_INT_RANGE = {pl.Int32(): (-(2**31), 2**31 - 1), pl.Int64(): (-(2**63), 2**63 - 1)}
_BASE = {"graph", "op_id", "op_type", "category", "backward", "bitwidth"}


def operators(
    records: Iterable[Mapping[str, object]] | pl.DataFrame, *, graph: str = ""
) -> pl.DataFrame:
    """A validated ops table from records (dicts) or a DataFrame with ops columns.

    Each record needs ``op_type`` and the op type's required parameters; it may
    give ``graph`` (default `graph`), ``op_id`` (default: its position),
    ``backward`` (false), ``bitwidth`` (16), ``scope`` (``frame`` or ``batch``;
    default: the op type's) and any parameter of its op type.
    Raises `InvalidInputError` naming the row and the culprit on any bad input.

    >>> operators([{"op_type": "Sorting", "B": 4, "N": 8}])["bitwidth"].item()
    16
    """
    if isinstance(records, pl.DataFrame):
        frame = _from_frame(records)
    else:
        frame = _from_records(list(records))
    return validate(_complete(frame, graph))


def validate(ops: pl.DataFrame, thorough: bool = True) -> pl.DataFrame:
    """Check an ops table's schema and values; return it unchanged if it is valid.

    Every parameter an op type uses must be present and in range. `thorough`
    also requires the parameters it does not use to be null and op ids to be
    unique within a graph (checks that cannot change a cost: `nerframe.costs`
    makes the others inside its kernel), and warns (`UserWarning`) about MLP skip
    connections at layers that have no effect. Vectorised; the first offending
    row is named in the `InvalidInputError`.

    >>> validate(operators([{"op_type": "Sorting", "B": 4, "N": 8}])).height
    1
    """
    if ops.schema != OPS:
        wrong = [
            f"{name} ({ops.schema.get(name)}, expected {dtype})"
            for name, dtype in OPS.items()
            if ops.schema.get(name) != dtype
        ]
        extra = [name for name in ops.columns if name not in OPS]
        raise InvalidInputError(f"not an ops table: wrong or missing columns {wrong + extra}")
    problems: dict[tuple[str, str], pl.Expr] = {}
    for p in PARAMETERS:
        used = pl.col("op_type").is_in(_users(p.name))
        value = pl.col(p.name)
        if ops.get_column(p.name).has_nulls():
            problems[p.name, "missing required parameter {c!r}"] = used & value.is_null()
        if thorough:
            problems[p.name, "{c!r} is not a parameter of this op type, got {v!r}"] = (
                ~used & value.is_not_null()
            )
        # Null slots compare as null, which any() skips. A parameter the op type
        # does not use cannot change a cost; `thorough` refuses it being there at all.
        problems[p.name, "{c} " + _rule(p.name) + ", got {v!r}"] = used & _out_of_range(
            p.name, value
        )
    problems["bitwidth", "{c} must be an integer in 1..64, got {v!r}"] = ~pl.col(
        "bitwidth"
    ).is_between(1, 64)
    problems["op_id", "{c} must be >= 0, got {v!r}"] = pl.col("op_id") < 0
    if thorough:
        problems["op_id", "{c} must be unique within its graph, got {v!r}"] = pl.struct(
            "graph", "op_id"
        ).is_duplicated()
    for column in ("graph", "op_id", "op_type", "backward", "bitwidth", "scope"):
        if ops.get_column(column).has_nulls():
            problems[column, "{c} must not be null"] = pl.col(column).is_null()
    found = ops.select(expr.any().alias(str(i)) for i, expr in enumerate(problems.values())).row(0)
    for ((column, text), expr), bad in zip(problems.items(), found, strict=True):
        if bad:
            row = ops.with_row_index("_row").filter(expr).row(0, named=True)
            message = text.format(c=column, v=row[column])
            raise InvalidInputError(f"{_where(row['_row'], row)}: {message}")
    if thorough:
        _warn_idle_skips(ops)
    return ops


def _warn_idle_skips(ops: pl.DataFrame) -> None:
    """Warn (`UserWarning`) about MLP skip connections that change nothing.

    Only hidden layers 1..num_layers-2 can re-read the input; the spec lets a
    skip index name any layer, and gives 0 and the later ones no effect. 0 is
    the input layer, which reads the input anyway; a later index is most likely
    a mistake, so the first row holding one is named.
    """
    idle = (pl.col("op_type") == "MLP") & (
        pl.col("skip_connections").list.max() >= pl.col("num_layers") - 1
    )
    rows = ops.with_row_index("_row").filter(idle)
    if rows.height:
        row = rows.row(0, named=True)
        layers = row["num_layers"]
        entries = [v for v in row["skip_connections"] if v >= layers - 1]
        reason = (
            f"a {layers}-layer MLP re-reads its input only at hidden layers 1..{layers - 2}"
            if layers > 2
            else f"a {layers}-layer MLP has no hidden layer to re-read its input at"
        )
        more = f" (and {rows.height - 1} more MLP rows)" if rows.height > 1 else ""
        warnings.warn(
            f"{_where(row['_row'], row)}: skip_connections entries {entries} have no "
            f"effect: {reason}{more}",
            UserWarning,
            stacklevel=3,
        )


def _users(parameter: str) -> list[str]:
    return [t.name for t in op_types().values() if parameter in t.parameters]


def _rule(name: str) -> str:
    p = PARAMETER[name]
    return {
        "count": f"must be an integer >= {p.minimum}",
        "ratio": "must be a number in (0, 1]",
        "flag": "must be true or false",
        "indices": "must be a list of integers >= 0",
    }[p.kind]


def _out_of_range(name: str, value: pl.Expr) -> pl.Expr:
    p = PARAMETER[name]
    if p.kind == "count":
        return value < p.minimum
    if p.kind == "ratio":
        return ~((value > 0) & (value <= 1))
    if p.kind == "indices":
        # a null entry: fewer entries once nulls are dropped (polars 1.31 cannot filter
        # on list.eval, which finds no column "")
        return (value.list.min() < 0) | (value.list.drop_nulls().list.len() < value.list.len())
    return pl.lit(False)


def _where(index: int, row: Mapping[str, object]) -> str:
    graph = f"graph {row['graph']!r}, " if row.get("graph") else ""
    return f"ops row {index} ({graph}op_id {row.get('op_id')}, {row.get('op_type')})"


def _from_records(records: list[Mapping[str, object]]) -> pl.DataFrame:
    columns: dict[str, list[object]] = {name: [None] * len(records) for name in OPS}
    for i, record in enumerate(records):
        if not isinstance(record, Mapping):
            raise InvalidInputError(f"ops row {i}: expected a mapping of column to value")
        op_type = _op_type(record.get("op_type"), f"ops row {i}")
        where = f"ops row {i} ({op_type})"
        for key, value in record.items():
            if key not in OPS:
                raise InvalidInputError(
                    f"{where}: unknown parameter {key!r}{did_you_mean(key, OPS)}"
                )
            if key in PARAMETER and key not in op_types()[op_type].parameters:
                takes = ", ".join(op_types()[op_type].parameters)
                raise InvalidInputError(
                    f"{where}: {op_type} does not take {key!r}; it takes {takes}"
                )
            columns[key][i] = _coerce(key, value, where)
    try:
        return pl.DataFrame(columns, schema=OPS)
    except (pl.exceptions.PolarsError, TypeError, ValueError, OverflowError) as e:
        raise InvalidInputError(f"ops records: {e}") from None


def _op_type(value: object, where: str) -> str:
    if not isinstance(value, str):
        raise InvalidInputError(f"{where}: missing op_type (a string naming a catalogue op type)")
    if value not in OP_TYPES:
        raise InvalidInputError(
            f"{where}: unknown op type {value!r}{did_you_mean(value, OP_TYPES)}; "
            f"valid op types: {', '.join(OP_TYPES)}"
        )
    return value


def _coerce(key: str, value: object, where: str) -> object:
    """One record value as the Python type of its column, or an `InvalidInputError`."""
    if value is None:
        return None
    dtype = OPS[key]
    bad = f"{where}: {key} "
    if dtype == pl.Boolean():
        if isinstance(value, bool | np.bool_):
            return bool(value)
        raise InvalidInputError(f"{bad}must be true or false, got {value!r}")
    if dtype in _INT_RANGE:
        number = _integer(value)
        if number is None:
            raise InvalidInputError(f"{bad}must be an integer, got {value!r}")
        low, high = _INT_RANGE[dtype]
        if not low <= number <= high:
            raise InvalidInputError(f"{bad}is out of range for {dtype}, got {value!r}")
        return number
    if dtype == pl.Float64():
        if isinstance(value, bool) or not isinstance(value, Real) or not math.isfinite(value):
            raise InvalidInputError(f"{bad}must be a finite number, got {value!r}")
        return float(value)
    if isinstance(dtype, pl.List):
        if isinstance(value, str) or not isinstance(value, Iterable):
            raise InvalidInputError(f"{bad}must be a list of integers, got {value!r}")
        items = [_integer(v) for v in value]
        if any(v is None or not 0 <= v < 2**31 for v in items):
            raise InvalidInputError(f"{bad}must be a list of integers >= 0, got {value!r}")
        return items
    if not isinstance(value, str):
        raise InvalidInputError(f"{bad}must be a string, got {value!r}")
    if key == "scope" and value not in SCOPES:
        raise InvalidInputError(f"{bad}must be 'frame' or 'batch', got {value!r}")
    return value


def _integer(value: object) -> int | None:
    if isinstance(value, bool | np.bool_):
        return None
    if isinstance(value, Integral):
        return int(value)
    if isinstance(value, Real) and math.isfinite(value) and float(value).is_integer():
        return int(float(value))
    return None


def _from_frame(frame: pl.DataFrame) -> pl.DataFrame:
    extra = [name for name in frame.columns if name not in OPS]
    if extra:
        raise InvalidInputError(
            f"ops table: unknown column {extra[0]!r}{did_you_mean(extra[0], OPS)}; "
            f"columns are {', '.join(OPS)}"
        )
    if "op_type" not in frame.columns:
        raise InvalidInputError("ops table: missing column 'op_type'")
    names = frame["op_type"].cast(pl.String)
    unknown = names.filter(~names.is_in(OP_TYPES) | names.is_null())
    if unknown.len():
        _op_type(unknown[0], "ops table")
    columns = []
    for name, dtype in OPS.items():
        if name not in frame.columns:
            columns.append(pl.lit(None, dtype).alias(name))
            continue
        try:
            columns.append(frame[name].cast(dtype, strict=True))
        except pl.exceptions.PolarsError:
            raise InvalidInputError(
                f"ops table: column {name!r} ({frame.schema[name]}) cannot be read as {dtype}"
            ) from None
    return frame.select(columns)


def _complete(frame: pl.DataFrame, graph: str) -> pl.DataFrame:
    """Fill what the catalogue decides: category, op ids, flags, bitwidth, scope, defaults."""
    category = {t.name: t.category for t in op_types().values()}
    scope = {t.name: t.scope for t in op_types().values()}
    filled = [
        pl.col("graph").fill_null(graph),
        pl.coalesce("op_id", pl.int_range(pl.len(), dtype=pl.Int32)).alias("op_id"),
        pl.col("op_type").replace_strict(category, return_dtype=OPS["category"]).alias("category"),
        pl.col("backward").fill_null(False),
        pl.col("bitwidth").fill_null(16),
        pl.col("scope").fill_null(
            pl.col("op_type").replace_strict(scope, return_dtype=OPS["scope"])
        ),
    ]
    given = frame.get_column("category")
    if given.null_count() < given.len():
        derived = frame.select(filled[2]).to_series()
        mismatch = given.is_not_null() & (given != derived)
        if mismatch.any():
            i = int(mismatch.arg_true()[0])
            raise InvalidInputError(
                f"{_where(i, frame.row(i, named=True))}: category {given[i]!r} "
                f"does not match the catalogue's {derived[i]!r}"
            )
    frame = frame.with_columns(filled)
    plain, copied = [], []
    for p in PARAMETERS:
        by_value: dict[str, tuple[object, list[str]]] = {}
        for t in op_types().values():
            if p.name in t.defaults:
                value = t.defaults[p.name]
                by_value.setdefault(repr(value), (value, []))[1].append(t.name)
        literal = [(v, names) for v, names in by_value.values() if not isinstance(v, str)]
        references = [(pl.col(v), names) for v, names in by_value.values() if isinstance(v, str)]
        if literal:
            plain.append(_fill(p.name, literal))
        if references:
            copied.append(_fill(p.name, references))
    # A default that names another parameter reads it after that one is filled.
    return frame.with_columns(plain).with_columns(copied)


def _fill(name: str, defaults: Sequence[tuple[object, list[str]]]) -> pl.Expr:
    """Column `name` with its nulls replaced by each op type's default."""
    missing = pl.col(name).is_null()
    filled = pl.col(name)
    # each op type has one default, so the conditions are disjoint and nesting order is free
    for value, names in defaults:
        fill = value if isinstance(value, pl.Expr) else pl.lit(value, OPS[name])
        filled = pl.when(missing & pl.col("op_type").is_in(names)).then(fill).otherwise(filled)
    return filled.cast(OPS[name]).alias(name)

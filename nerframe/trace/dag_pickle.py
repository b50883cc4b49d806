"""Safe import of the original framework's pickled execution DAGs (``execution_dag.pkl``).

Unpickling runs whatever callables a file names, so these files are read by a
restricted unpickler: the only global it resolves is networkx's ``DiGraph``, and
it resolves it to an inert stand-in (networkx is not needed, and no networkx
code runs). Any other global — a function, a class, ``os.system`` — is refused
before anything is called, with one error naming it.

The DAG's nodes carry the original schema: ``op_type`` (a category there),
``input_shape``, ``output_shape``, ``flops``, ``memory_bytes`` and
``arithmetic_intensity``. They are checked as strictly as nerframe's own inputs:
names and op types printable strings, shapes lists of integers >= 0, figures
finite numbers >= 0, and the edges acyclic.

>>> import pickle, io, tempfile, pathlib
>>> bad = pathlib.Path(tempfile.mkdtemp()) / "bad.pkl"
>>> _ = bad.write_bytes(b"cos\\nsystem\\n(S'echo hacked'\\ntR.")
>>> try:
...     read_dag_pickle(bad)
... except InvalidInputError as e:
...     print(str(e).split(": ", 1)[1])
refusing to load global 'os.system' (a DAG pickle may only hold networkx.classes.digraph.DiGraph)
"""

from __future__ import annotations

import math
import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from nerframe.errors import InvalidInputError

ALLOWED = ("networkx.classes.digraph", "DiGraph")
"""The one global a DAG pickle may name."""

NODE_FIELDS = (
    "op_type",
    "input_shape",
    "output_shape",
    "flops",
    "memory_bytes",
    "arithmetic_intensity",
)


class _DiGraphState:
    """Stands in for networkx's DiGraph: keeps the pickled state, does nothing else."""

    def __init__(self, *args: object, **kwargs: object) -> None:
        self.state: object = None

    def __setstate__(self, state: object) -> None:
        self.state = state


class _Restricted(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        if (module, name) == ALLOWED:
            return _DiGraphState
        raise _Refused(f"{module}.{name}")


class _Refused(Exception):
    pass


@dataclass(frozen=True)
class Dag:
    """An imported DAG: one row per node (``node`` and the schema's fields) and per edge."""

    nodes: pl.DataFrame
    edges: pl.DataFrame


def read_dag_pickle(path: str | Path) -> Dag:
    """The nodes and edges of a pickled networkx DiGraph in the original DAG schema,
    read without executing anything from the file."""
    path = Path(path)
    try:
        with path.open("rb") as f:
            loaded = _Restricted(f).load()
    except OSError as e:
        raise InvalidInputError(f"{path}: cannot read DAG pickle ({e.strerror})") from None
    except _Refused as e:
        raise InvalidInputError(
            f"{path}: refusing to load global '{e}' (a DAG pickle may only hold "
            f"{'.'.join(ALLOWED)})"
        ) from None
    except Exception as e:  # any malformed pickle; nothing from the file was called
        raise InvalidInputError(
            f"{path}: not a readable pickle ({type(e).__name__}: {e})"
        ) from None
    if not isinstance(loaded, _DiGraphState) or not isinstance(loaded.state, dict):
        raise InvalidInputError(f"{path}: the pickle does not hold a networkx DiGraph")
    nodes, succ = loaded.state.get("_node"), loaded.state.get("_succ", loaded.state.get("_adj"))
    if not isinstance(nodes, dict) or not isinstance(succ, dict):
        raise InvalidInputError(f"{path}: the DiGraph has no node or adjacency tables")
    return Dag(_nodes(nodes, path), _edges(succ, nodes, path))


def _nodes(nodes: dict[Any, Any], path: Path) -> pl.DataFrame:
    rows = []
    for node, attributes in nodes.items():
        if not isinstance(attributes, dict):
            raise InvalidInputError(f"{path}: node {node!r} has no attribute table")
        missing = [f for f in NODE_FIELDS if f not in attributes]
        if missing:
            raise InvalidInputError(f"{path}: node {node!r} lacks {', '.join(missing)}")
        _check_name(path, "node", node)
        _check_name(path, f"node {node!r}: op_type", attributes["op_type"])
        for field in ("input_shape", "output_shape"):
            shape = attributes[field]
            if not isinstance(shape, list | tuple) or not all(
                isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in shape
            ):
                raise InvalidInputError(
                    f"{path}: node {node!r}: {field} must be a list of integers >= 0, got {shape!r}"
                )
        for field in ("flops", "memory_bytes", "arithmetic_intensity"):
            value = attributes[field]
            if not (
                isinstance(value, int | float)
                and not isinstance(value, bool)
                and math.isfinite(value)
                and value >= 0
            ):
                raise InvalidInputError(
                    f"{path}: node {node!r}: {field} must be a finite number >= 0, got {value!r}"
                )
        rows.append({"node": str(node), **{f: attributes[f] for f in NODE_FIELDS}})
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "node": pl.String,
        "op_type": pl.String,
        "input_shape": pl.List(pl.Int64),
        "output_shape": pl.List(pl.Int64),
        "flops": pl.Float64,
        "memory_bytes": pl.Float64,
        "arithmetic_intensity": pl.Float64,
    }
    try:
        return pl.DataFrame(rows, schema=schema, orient="row")
    except (TypeError, ValueError, pl.exceptions.PolarsError) as e:
        raise InvalidInputError(f"{path}: node attributes of the wrong type ({e})") from None


def _check_name(path: Path, what: str, name: object) -> None:
    """A node name or op type: a non-empty string (or an integer node id) without
    control characters, which graph and accelerator names may not hold either."""
    if isinstance(name, int) and not isinstance(name, bool) and what == "node":
        return
    if not isinstance(name, str) or not name or not name.isprintable():
        raise InvalidInputError(
            f"{path}: {what} must be a non-empty printable string, got {name!r}"
        )


def _acyclic(pairs: list[tuple[str, str]], path: Path) -> None:
    """Refuses edges that form a cycle (an execution DAG has none), naming one."""
    succ: dict[str, list[str]] = {}
    for src, dst in pairs:
        succ.setdefault(src, []).append(dst)
    state: dict[str, int] = {}  # 1: on the current path, 2: done
    for root in succ:
        if root in state:
            continue
        stack = [(root, iter(succ.get(root, ())))]
        state[root] = 1
        trail = [root]
        while stack:  # iterative: a long chain must not hit Python's recursion limit
            node, children = stack[-1]
            child = next(children, None)
            if child is None:
                stack.pop()
                trail.pop()
                state[node] = 2
            elif state.get(child) == 1:
                cycle = [*trail[trail.index(child) :], child]
                raise InvalidInputError(
                    f"{path}: the edges form a cycle ({' -> '.join(map(repr, cycle))}); "
                    "an execution DAG has none"
                )
            elif child not in state:
                state[child] = 1
                trail.append(child)
                stack.append((child, iter(succ.get(child, ()))))


def _edges(succ: dict[Any, Any], nodes: dict[Any, Any], path: Path) -> pl.DataFrame:
    pairs = []
    for src, targets in succ.items():
        if src not in nodes or not isinstance(targets, dict):
            raise InvalidInputError(f"{path}: adjacency of unknown node {src!r}")
        for dst in targets:
            if dst not in nodes:
                raise InvalidInputError(f"{path}: edge {src!r} -> {dst!r} to an unknown node")
            pairs.append((str(src), str(dst)))
    _acyclic(pairs, path)
    return pl.DataFrame(pairs, schema={"src": pl.String, "dst": pl.String}, orient="row")

"""Safe import of the original framework's pickled execution DAGs (``execution_dag.pkl``).

Unpickling runs whatever callables a file names, so these files are read by a
restricted unpickler: the only global it resolves is networkx's ``DiGraph``, and
it resolves it to an inert stand-in (networkx is not needed, and no networkx
code runs). Any other global — a function, a class, ``os.system`` — is refused
before anything is called, with one error naming it.

The DAG's nodes carry the original schema: ``op_type`` (a category there),
``input_shape``, ``output_shape``, ``flops``, ``memory_bytes`` and
``arithmetic_intensity``.

>>> import pickle, io, tempfile, pathlib
>>> bad = pathlib.Path(tempfile.mkdtemp()) / "bad.pkl"
>>> _ = bad.write_bytes(b"cos\\nsystem\\n(S'echo hacked'\\ntR.")
>>> try:
...     read_dag_pickle(bad)
... except NerframeError as e:
...     print(str(e).split(": ", 1)[1])
refusing to load global 'os.system' (a DAG pickle may only hold networkx.classes.digraph.DiGraph)
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import polars as pl

from nerframe.errors import NerframeError

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
        raise NerframeError(f"{path}: cannot read DAG pickle ({e.strerror})") from None
    except _Refused as e:
        raise NerframeError(
            f"{path}: refusing to load global '{e}' (a DAG pickle may only hold "
            f"{'.'.join(ALLOWED)})"
        ) from None
    except Exception as e:  # any malformed pickle; nothing from the file was called
        raise NerframeError(f"{path}: not a readable pickle ({type(e).__name__}: {e})") from None
    if not isinstance(loaded, _DiGraphState) or not isinstance(loaded.state, dict):
        raise NerframeError(f"{path}: the pickle does not hold a networkx DiGraph")
    nodes, succ = loaded.state.get("_node"), loaded.state.get("_succ", loaded.state.get("_adj"))
    if not isinstance(nodes, dict) or not isinstance(succ, dict):
        raise NerframeError(f"{path}: the DiGraph has no node or adjacency tables")
    return Dag(_nodes(nodes, path), _edges(succ, nodes, path))


def _nodes(nodes: dict[Any, Any], path: Path) -> pl.DataFrame:
    rows = []
    for node, attributes in nodes.items():
        if not isinstance(attributes, dict):
            raise NerframeError(f"{path}: node {node!r} has no attribute table")
        missing = [f for f in NODE_FIELDS if f not in attributes]
        if missing:
            raise NerframeError(f"{path}: node {node!r} lacks {', '.join(missing)}")
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
        raise NerframeError(f"{path}: node attributes of the wrong type ({e})") from None


def _edges(succ: dict[Any, Any], nodes: dict[Any, Any], path: Path) -> pl.DataFrame:
    pairs = []
    for src, targets in succ.items():
        if src not in nodes or not isinstance(targets, dict):
            raise NerframeError(f"{path}: adjacency of unknown node {src!r}")
        for dst in targets:
            if dst not in nodes:
                raise NerframeError(f"{path}: edge {src!r} -> {dst!r} to an unknown node")
            pairs.append((str(src), str(dst)))
    return pl.DataFrame(pairs, schema={"src": pl.String, "dst": pl.String}, orient="row")

"""The graph file (``*.json``, ``*.yaml``): the ops and edges of an operator graph.

Op records stay open mappings here: which parameters an op takes depends on its
op type, and `nerframe.ops.operators` checks them against the catalogue.

>>> from nerframe.formats import convert
>>> g = convert({"ops": [{"op_type": "Sorting", "B": 8}], "edges": []}, GraphFile, source="g")
>>> g.frame_pixels, g.kind
(640000, 'inference')
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

from nerframe._typing import EdgeKind, GraphKind

Value = int | float | bool | str | list[int | float | bool | str] | None
"""What an op parameter may be: a number, a flag, a name, a list of them (skip
connections), or null (the catalogue's default)."""


class EdgeRecord(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """An edge written as an object."""

    src: int
    """The producing op's id (its position in ``ops``)."""
    dst: int
    """The consuming op's id."""
    kind: EdgeKind = "data"
    """``data`` or ``feedback``."""


Edge = Annotated[list[int | str], msgspec.Meta(min_length=2, max_length=3)] | EdgeRecord
"""``[src, dst]``, ``[src, dst, kind]`` or ``{src, dst, kind}`` (the list's item types
are checked by `edge_tuple`)."""


class GraphFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A graph file."""

    ops: list[dict[str, Value]]
    """The ops in id order: ``op_type``, its parameters, optional ``backward``,
    ``bitwidth``, ``scope``."""
    name: str | None = None
    """The graph's name (default: the file's stem)."""
    edges: list[Edge] = []
    """The edges between ops."""
    frame_pixels: int = 800 * 800
    """Pixels of one frame."""
    rendered_fraction: float = 1.0
    """Share of a frame's pixels the graph renders, in (0, 1]."""
    kind: GraphKind = "inference"
    """What one run of the graph is: a frame's inference or a training iteration."""
    notes: Any = None
    """Anything, kept out of the model (a traced graph puts its provenance here)."""


def edge_tuple(edge: Edge, where: str) -> tuple[int, int, str]:
    """(src, dst, kind) of a declared edge; a list's items must be two op ids and a kind.

    >>> edge_tuple([0, 1], "g.json: field 'edges[0]'")
    (0, 1, 'data')
    >>> edge_tuple(["0", 1], "g.json: field 'edges[0]'")
    Traceback (most recent call last):
    ...
    nerframe.errors.InvalidInputError: g.json: field 'edges[0][0]': expected an op id (int), got "0"
    """
    from nerframe.errors import InvalidInputError
    from nerframe.formats import _shown

    if isinstance(edge, EdgeRecord):
        return edge.src, edge.dst, edge.kind
    for position, item in enumerate(edge[:2]):
        if not isinstance(item, int):
            raise InvalidInputError(
                f"{where[:-1]}[{position}]': expected an op id (int), got {_shown(item)}", "edges"
            )
    kind = edge[2] if len(edge) == 3 else "data"
    if kind not in ("data", "feedback"):
        raise InvalidInputError(
            f"{where[:-1]}[2]': expected 'data' or 'feedback', got {_shown(kind)}", "edges"
        )
    return int(edge[0]), int(edge[1]), str(kind)

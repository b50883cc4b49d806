"""The class map (YAML): which op type each traced module class becomes.

>>> from nerframe.formats import convert
>>> m = convert({"classes": {"my.Grid": {"op_type": "HashEncoding"}}}, ClassMapFile, source="m")
>>> m.classes["my.Grid"].op_type
'HashEncoding'
"""

from __future__ import annotations

from typing import Annotated, Literal

import msgspec

Constant = int | float | bool | str | list[int | float | bool]
"""A parameter's value: an expression of the path language (text) or a constant."""


class MapEntry(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """What one class becomes."""

    op_type: str | None = None
    """The catalogue op type of the class's calls."""
    params: dict[str, Constant] | None = None
    """Parameter name -> expression (or constant)."""
    rule: Literal["linear_layers"] | None = None
    """A named parameter rule (`nerframe.trace.classify.RULES`)."""
    approximate: Annotated[str, msgspec.Meta(min_length=1)] | None = None
    """Why the op type is only close: flags the op's rows."""
    ignore: bool = False
    """Known and not modelled (no row, not reported as unknown); takes no other field."""


class ClassMapFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A class map file."""

    classes: dict[str, MapEntry]
    """Qualified (``pkg.mod.Class``) or bare (``Class``) class name -> entry."""
    description: str = ""
    """Free text."""

"""Reading accelerator JSON files: the file itself, and the original framework's format.

nerframe's own format is declared (`nerframe.formats.accelerator`); the original
framework's, foreign and lenient (`nerframe.rendersim_format`), is read through
`Reader`: every failure names the file, the field and the offending value, in one line.

>>> Reader("f.json").number(2, "count")
2.0
"""

from __future__ import annotations

import json
import math
from pathlib import Path
from typing import Any, NoReturn

from nerframe.accelerator_model import Sram
from nerframe.errors import InvalidInputError, did_you_mean

_UNSET = object()


class Reader:
    """Typed access to parsed JSON whose errors name the file, the field and the value."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, problem: str, value: Any = _UNSET) -> NoReturn:
        shown = "" if value is _UNSET else f", got {json.dumps(value)}"
        raise InvalidInputError(f"{self.path}: field {where!r} {problem}{shown}")

    def get(self, obj: dict[str, Any], key: str, where: str) -> Any:
        if key not in obj:
            raise InvalidInputError(f"{self.path}: missing field {_at(where, key)!r}")
        return obj[key]

    def only(self, obj: dict[str, Any], allowed: set[str], where: str) -> None:
        for key in obj:
            if key not in allowed:
                raise InvalidInputError(
                    f"{self.path}: unknown field {_at(where, key)!r}"
                    f"{did_you_mean(key, allowed)} (allowed: {', '.join(sorted(allowed))})"
                )

    def object(self, value: Any, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            self.fail(where, "must be an object", value)
        return value

    def array(self, value: Any, where: str) -> list[Any]:
        if not isinstance(value, list):
            self.fail(where, "must be a list", value)
        return value

    def string(self, value: Any, where: str) -> str:
        if not isinstance(value, str) or not value.strip():
            self.fail(where, "must be a non-empty string", value)
        return value

    def number(self, value: Any, where: str, *, positive: bool = False) -> float:
        # bool is an int subclass in Python; in an accelerator file it is a typo
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        number = float(value) if ok and abs(value) < 1e300 else math.nan
        if not math.isfinite(number) or number < 0 or (positive and number == 0):
            self.fail(
                where, f"must be a {'positive' if positive else 'non-negative'} number", value
            )
        return number

    def integer(self, value: Any, where: str, *, positive: bool = False) -> int:
        number = self.number(value, where, positive=positive)
        if not number.is_integer():
            self.fail(
                where, f"must be a {'positive' if positive else 'non-negative'} integer", value
            )
        return int(number)


def read_sram(r: Reader, raw: Any, where: str) -> Sram:
    """One SRAM block (``name``, ``size_kb``, optional ``area_um2``) of either format."""
    block = r.object(raw, where)
    area = block.get("area_um2")
    return Sram(
        name=r.string(r.get(block, "name", where), f"{where}.name"),
        size_kb=r.number(r.get(block, "size_kb", where), f"{where}.size_kb", positive=True),
        area_um2=None if area is None else r.number(area, f"{where}.area_um2"),
    )


def _at(where: str, key: str) -> str:
    return f"{where}.{key}" if where else key


def read_json(path: Path) -> Any:
    """The parsed JSON of an accelerator file; a duplicated key is an error."""
    shown = str(path)
    if not path.exists():
        raise InvalidInputError(f"accelerator file '{shown}' not found")
    if not path.is_file():
        raise InvalidInputError(f"accelerator file '{shown}' is not a file")
    from nerframe.formats import parse

    # the policy of every input file: UTF-8, standard JSON, no key twice, bounded nesting
    return parse(path, what="accelerator file")

"""Classification as data: class→op-type maps and their parameter rules.

A map is a YAML file::

    classes:
      torch.nn.modules.linear.Linear:      # a qualified class name, or a bare class name
        op_type: MLP                       #   (bare: matches that class in any module)
        rule: linear_layers                # a named rule (see RULES)
      mypkg.grid.HashGrid:
        op_type: HashEncoding
        params:                            # parameter: expression (or a constant)
          num_levels: attr.num_levels
          input_dim: in[0][-1]
        approximate: "why the op type is only close"   # flags the op's rows
      torch.nn.modules.activation.ReLU:
        ignore: true                       # known and not modelled: no row, not "unknown"

A call is matched along its classes (the class first, then its bases in method
resolution order); the first class with an entry wins, user maps (given ones, then
those listed in ``$NERFRAME_MAPS``) before the packaged ``nerfstudio`` map, before
the packaged ``core`` map.

Expressions are a small whitelisted path language, never evaluated as code:
``attr.NAME`` (a recorded attribute), ``param.NAME`` (a parameter's shape),
``in`` / ``out`` (the shapes of the call's input / output tensors), followed by
``.NAME`` or ``[INDEX]`` steps, the functions ``len``, ``prod``, ``rows``
(product of all but the last dimension), ``log2`` (exact, of a power of two)
and ``exists``, integer literals, ``true``/``false``, and ``*``, ``+``, ``-`` between terms.

>>> evaluate("in[0][-1] * attr.n", {"in": [[64, 3]], "attr": {"n": 10}})
30
>>> evaluate("rows(out[0])", {"out": [[4, 8, 3]]})
32
"""

from __future__ import annotations

import math
import os
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from functools import cache
from importlib import resources
from pathlib import Path
from typing import Any

from nerframe.errors import InvalidInputError, NerframeError, did_you_mean
from nerframe.formats.class_map import MapEntry
from nerframe.taxonomy import PARAMETER, op_types

PACKAGED: tuple[str, ...] = ("nerfstudio", "core")
"""The packaged maps, in priority order (nerframe/trace/maps/NAME.yaml)."""

RULES: dict[str, str] = {
    "linear_layers": "an MLP built from the Linear calls the module actually made: "
    "in_dim, layer_width, out_dim, num_layers, skip_connections and use_bias from their "
    "in/out features, and B·N from their input rows",
}
"""Named parameter rules a map entry may use (``rule: NAME``)."""

LINEAR = "torch.nn.modules.linear.Linear"


@dataclass(frozen=True)
class Entry:
    """One map entry: what a class becomes."""

    key: str
    source: str
    op_type: str | None = None
    params: dict[str, object] = field(default_factory=dict)
    rule: str | None = None
    approximate: str | None = None

    @property
    def ignored(self) -> bool:
        """Known and deliberately not modelled (no row, not reported as unknown)."""
        return self.op_type is None


@dataclass(frozen=True)
class ClassMap:
    """Maps in priority order (user maps first, then the packaged ones)."""

    maps: tuple[dict[str, Entry], ...]

    def match(self, classes: Sequence[str]) -> Entry | None:
        """The entry of the first of `classes` (a class and its bases) that has one, from
        the first map that has one; a qualified key before a bare one within a map.

        >>> m = class_map()
        >>> m.match(["my.Net", "torch.nn.modules.linear.Linear"]).op_type
        'MLP'
        """
        for name in classes:
            bare = name.rsplit(".", 1)[-1]
            for entries in self.maps:
                found = entries.get(name) or entries.get(bare)
                if found is not None:
                    return found
        return None


ENVIRONMENT = "NERFRAME_MAPS"
"""The environment variable listing user maps (``os.pathsep``-separated) for every trace
read as a graph file, after any given explicitly."""


def class_map(extra: Sequence[str | Path] = ()) -> ClassMap:
    """The user maps `extra` (highest priority first), then those of ``$NERFRAME_MAPS``,
    over the packaged maps.

    >>> class_map().match(["nerfstudio.model_components.renderers.RGBRenderer"]).op_type
    'RGBRenderer'
    """
    listed = [p for p in os.environ.get(ENVIRONMENT, "").split(os.pathsep) if p]
    return ClassMap(
        tuple(_read_map(Path(p)) for p in [*extra, *listed]) + tuple(_packaged(n) for n in PACKAGED)
    )


@cache
def _packaged(name: str) -> dict[str, Entry]:
    from nerframe.formats import parse

    path = resources.files("nerframe.trace").joinpath(f"maps/{name}.yaml")
    with resources.as_file(path) as file:
        return parse_map(parse(file, what="class map", syntax="yaml"), f"packaged map {name!r}")


def _read_map(path: Path) -> dict[str, Entry]:
    from nerframe.formats import parse

    return parse_map(parse(path, what="class map", syntax="yaml"), str(path))


def parse_map(document: object, source: str) -> dict[str, Entry]:
    """Check a parsed map document (`nerframe.formats.class_map.ClassMapFile`, then the
    catalogue and the path language); return its entries by class key.

    >>> parse_map({"classes": {"my.Grid": {"op_type": "HashEncoding"}}}, "mine")["my.Grid"].source
    'mine'
    """
    from nerframe.formats import convert
    from nerframe.formats.class_map import ClassMapFile

    if not isinstance(document, dict) or "classes" not in document:
        raise InvalidInputError(f"{source}: not a class map (expected a 'classes' mapping)", source)
    declared = convert(document, ClassMapFile, source=source)
    return {key: _entry(key, value, source) for key, value in declared.classes.items()}


def _entry(key: str, value: MapEntry, source: str) -> Entry:
    where = f"{source}: classes.{key}"
    if value.ignore:
        if value != MapEntry(ignore=True):
            raise InvalidInputError(f"{where}: an ignored class takes no other field", key)
        return Entry(key, source)
    op_type = value.op_type
    if op_type not in op_types():
        raise InvalidInputError(
            f"{where}: unknown op type {op_type!r}{did_you_mean(str(op_type), op_types())}", key
        )
    params = value.params or {}
    allowed = op_types()[op_type].parameters
    for name, expression in params.items():
        if name not in allowed:
            raise InvalidInputError(
                f"{where}: {op_type} has no parameter {name!r}{did_you_mean(str(name), allowed)}",
                key,
            )
        if isinstance(expression, str):
            try:
                _parse(expression)
            except NerframeError as e:
                raise InvalidInputError(f"{where}: {name}: {e}", key) from None
    return Entry(key, source, op_type, dict(params), value.rule, value.approximate)


# The path language: a recursive-descent parser over a few token kinds.
_TOKEN = re.compile(r"\s*(?:(?P<int>\d+)|(?P<name>[A-Za-z_]\w*)|(?P<op>[.\[\]()*+-]))")
_ROOTS = ("attr", "param", "in", "out")
_FUNCTIONS = ("len", "prod", "rows", "log2", "exists")


@cache
def _parse(text: str) -> tuple[Any, ...]:
    """The syntax tree of an expression: sums and products of calls, paths and constants."""
    tokens: list[tuple[str, str]] = []
    position = 0
    text = text.strip()
    while position < len(text):
        m = _TOKEN.match(text, position)
        if not m or m.end() == position:
            raise InvalidInputError(f"cannot read expression {text!r} at {text[position:]!r}")
        kind = m.lastgroup or ""
        tokens.append((kind, m.group(kind)))
        position = m.end()
    parser = _Parser(text, tokens)
    tree = parser.sum()
    if parser.index != len(tokens):
        raise InvalidInputError(f"unexpected {tokens[parser.index][1]!r} in expression {text!r}")
    return tree


@dataclass
class _Parser:
    text: str
    tokens: list[tuple[str, str]]
    index: int = 0

    def peek(self) -> tuple[str, str]:
        return self.tokens[self.index] if self.index < len(self.tokens) else ("end", "")

    def take(self, value: str) -> None:
        if self.peek()[1] != value:
            raise InvalidInputError(f"expected {value!r} in expression {self.text!r}")
        self.index += 1

    def sum(self) -> tuple[Any, ...]:
        terms = [(1, self.product())]
        while self.peek() in (("op", "+"), ("op", "-")):
            sign = 1 if self.peek()[1] == "+" else -1
            self.index += 1
            terms.append((sign, self.product()))
        return ("add", tuple(terms))

    def product(self) -> tuple[Any, ...]:
        terms = [self.term()]
        while self.peek() == ("op", "*"):
            self.index += 1
            terms.append(self.term())
        return ("mul", tuple(terms))

    def term(self) -> tuple[Any, ...]:
        kind, value = self.peek()
        self.index += 1
        if kind == "int":
            return ("const", int(value))
        if value in ("true", "false"):
            return ("const", value == "true")
        if value in _FUNCTIONS:
            self.take("(")
            argument = self.sum()
            self.take(")")
            return ("call", value, argument)
        if value in _ROOTS:
            steps: list[str | int] = []
            while self.peek() in (("op", "."), ("op", "[")):
                if self.peek()[1] == ".":
                    self.index += 1
                    kind, name = self.peek()
                    if kind != "name":
                        raise InvalidInputError(f"expected a name after '.' in {self.text!r}")
                    steps.append(name)
                    self.index += 1
                else:
                    self.index += 1
                    sign = 1
                    if self.peek() == ("op", "-"):
                        sign = -1
                        self.index += 1
                    kind, number = self.peek()
                    if kind != "int":
                        raise InvalidInputError(f"expected an integer index in {self.text!r}")
                    steps.append(sign * int(number))
                    self.index += 1
                    self.take("]")
            return ("path", value, tuple(steps))
        choices = (*_ROOTS, *_FUNCTIONS)
        raise InvalidInputError(
            f"unknown name {value!r} in expression {self.text!r}{did_you_mean(value, choices)}"
            if kind == "name"
            else f"unexpected {value!r} in expression {self.text!r}"
        )


class _Missing(Exception):
    """A path step that the recorded call does not have."""


def evaluate(expression: object, scope: Mapping[str, object]) -> object:
    """The value of an expression (or constant) over a call's recorded `scope`
    (``attr``, ``param``, ``in``, ``out``); `NerframeError` if a step is missing."""
    if not isinstance(expression, str):
        return expression
    try:
        return _value(_parse(expression), scope)
    except _Missing as e:
        raise InvalidInputError(f"{expression!r}: {e}") from None


def _value(tree: tuple[Any, ...], scope: Mapping[str, object]) -> object:
    kind = tree[0]
    if kind == "const":
        return tree[1]
    if kind == "add":
        signed = [(sign, _value(t, scope)) for sign, t in tree[1]]
        if len(signed) == 1:
            return signed[0][1]
        return sum(sign * _number(v) for sign, v in signed)
    if kind == "mul":
        factors = [_value(t, scope) for t in tree[1]]
        if len(factors) == 1:
            return factors[0]
        return math.prod(_number(v) for v in factors)
    if kind == "call":
        name, argument = tree[1], tree[2]
        if name == "exists":
            try:
                _value(argument, scope)
            except _Missing:
                return False
            return True
        value = _value(argument, scope)
        if name == "len":
            return len(_sequence(value))
        if name == "prod":
            return math.prod(_sequence(value))
        if name == "rows":
            return math.prod(_sequence(value)[:-1])
        number = _number(value)
        if number < 1 or number & (number - 1):
            raise _Missing(f"log2 of {number}, not a power of two")
        return number.bit_length() - 1
    current: Any = scope.get(tree[1], {})
    for step in tree[2]:
        try:
            current = current[step]
        except (KeyError, IndexError, TypeError):
            raise _Missing(f"no {step!r} in the recorded {tree[1]}") from None
    return current


def _number(value: object) -> int:
    if isinstance(value, bool) or not isinstance(value, int):
        raise _Missing(f"{value!r} is not an integer")
    return value


def _sequence(value: object) -> list[int]:
    if not isinstance(value, list):
        raise _Missing(f"{value!r} is not a list")
    return [_number(v) for v in value]


def check_parameter(name: str, value: object, where: str) -> object:
    """`value` if it suits parameter `name`'s kind, else a `NerframeError`."""
    kind = PARAMETER[name].kind
    ok = {
        "count": isinstance(value, int) and not isinstance(value, bool),
        "flag": isinstance(value, bool),
        "ratio": isinstance(value, int | float) and not isinstance(value, bool),
        "indices": isinstance(value, list),
    }[kind]
    if not ok:
        raise InvalidInputError(f"{where}: {name} evaluated to {value!r}, not a {kind}")
    return value

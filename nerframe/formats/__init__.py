"""One declared model per input file, read under one policy.

Every input document nerframe reads — an accelerator file (nerframe's format or the
original framework's), a graph file, a sweep spec, a trace file, a class map, a
store manifest — is declared once as a
`msgspec.Struct` (the modules of this package) and read through `load` or
`convert`, which apply the same rules to all of them:

- the bytes must be UTF-8 text (a UTF-8 byte-order mark is allowed), and so must the
  strings: a lone surrogate escape (``"\\udc80"``, valid JSON) is refused;
- JSON is standard JSON: ``NaN``/``Infinity`` and numbers beyond a float's range
  are refused; YAML is YAML's safe subset, and its dates, binary values, sets and
  non-finite floats are refused (they have no JSON equivalent); in both, numbers below
  a float's normal range (``1e-320``) are refused;
- a key given twice in one object or mapping is refused (both parsers would keep
  the last one silently);
- unknown fields, booleans where numbers belong, fractional numbers where integers
  belong and strings where numbers belong are refused (``strict`` conversion); the
  original framework's accelerator format alone, being foreign, tolerates fields
  it does not declare (`nerframe.formats.rendersim`);
- nesting deeper than the parser's limit is refused, not a crash, and so is a YAML
  document whose aliases expand to more than `YAML_EXPANDED_LIMIT` values (a
  "billion laughs" of 384 bytes would otherwise take hours to check);
- relative paths inside a document are resolved from the folder of the file that
  names them (`resolve`).

Every fault is one `InvalidInputError` line naming the file, the field path and the
value: ``g.json: field 'edges[0][1]': expected int | str, got 1.9``. The JSON
Schema of each format is `schema(kind)` (``nerframe schema KIND``); ``docs/formats.md``
describes every field.

Speed: on the 16,000-call trace of ``benchmarks/test_bench_trace.py`` (7.5 MB),
`nerframe.trace.read_trace` (this policy: UTF-8 check, parse with the duplicate-key
check, strict conversion into the declared model, cross-reference checks) takes
0.64-0.90 of the time of ``json.loads`` alone, because it pauses the cyclic garbage
collector (`collector_paused`); a hand-written ``json.loads`` + ``parse_trace``
reader took about 1.5 times ``json.loads``.
``nerframe costs neurex`` imports none of this package (``tests/test_startup.py``
checks it), so its start-up is unchanged.

>>> import tempfile, pathlib
>>> from nerframe.formats.graph import GraphFile
>>> path = pathlib.Path(tempfile.mkdtemp()) / "g.json"
>>> _ = path.write_text('{"ops": [{"op_type": "Sorting"}], "edges": [[0, true]]}')
>>> try:
...     load(path, GraphFile, what="graph file")
... except InvalidInputError as e:
...     print(str(e).removeprefix(str(path)))
: field 'edges[0][1]': expected int | str, got true
"""

from __future__ import annotations

import contextlib
import datetime
import gc
import json
import math
import os
import re
import sys
import types
import typing
from collections.abc import Iterator
from pathlib import Path
from typing import Annotated, Any, Literal, TypeVar, get_args, get_origin

import msgspec
import yaml

from nerframe.errors import InvalidInputError, did_you_mean, lone_surrogate

M = TypeVar("M")

Syntax = Literal["json", "yaml", "suffix"]
"""How a file is parsed: as JSON, as YAML, or by its suffix (``.yaml``/``.yml`` as YAML)."""

KINDS: dict[str, str] = {
    "accelerator": "nerframe.formats.accelerator:AcceleratorFile",
    "rendersim": "nerframe.formats.rendersim:RenderSimFile",
    "graph": "nerframe.formats.graph:GraphFile",
    "sweep-spec": "nerframe.formats.sweep_spec:SweepSpecFile",
    "trace": "nerframe.formats.trace:TraceFile",
    "class-map": "nerframe.formats.class_map:ClassMapFile",
    "manifest": "nerframe.formats.manifest:Manifest",
    "probe": "nerframe.formats.probe:ProbeFile",
}
"""The declared formats by the name ``nerframe schema`` takes, and their models."""


class _Duplicate(Exception):
    """A key given twice in one object (raised inside a parser, reported by `parse`)."""


def model(kind: str) -> type[msgspec.Struct]:
    """The declared model of format `kind` (one of `KINDS`).

    >>> model("graph").__name__
    'GraphFile'
    """
    if kind not in KINDS:
        raise InvalidInputError(
            f"unknown format {kind!r}{did_you_mean(kind, KINDS)}; formats: {', '.join(KINDS)}",
            kind,
        )
    import importlib

    module, _, name = KINDS[kind].partition(":")
    found: type[msgspec.Struct] = getattr(importlib.import_module(module), name)
    return found


def schema(kind: str) -> dict[str, Any]:
    """The JSON Schema of format `kind` (``msgspec.json.schema`` of its model).

    >>> schema("class-map")["$ref"]
    '#/$defs/ClassMapFile'
    """
    result: dict[str, Any] = msgspec.json.schema(model(kind))
    return result


def resolve(name: str, naming_file: str | Path | None) -> str:
    """A path named inside `naming_file`, resolved from that file's folder (an absolute
    path, or a name given outside any file, is kept as it is).

    >>> resolve("b.json", "sub/a.json"), resolve("/x/b.json", "sub/a.json"), resolve("b.json", None)
    ('sub/b.json', '/x/b.json', 'b.json')
    """
    if naming_file is None or os.path.isabs(name):
        return name
    return os.path.join(os.path.dirname(os.fspath(naming_file)), name)


def load(path: str | Path, model: type[M], *, what: str, syntax: Syntax = "json") -> M:
    """The document of file `path` as an instance of `model`, under the module's policy;
    `what` names the kind of file in messages ("graph file")."""
    return convert(parse(path, what=what, syntax=syntax), model, source=str(path))


def convert(document: object, model: type[M], *, source: str) -> M:
    """`document` (parsed data) as an instance of `model`, strictly; a fault is one
    `InvalidInputError` line starting with `source` (a file name, or a label).

    >>> from nerframe.formats.class_map import ClassMapFile
    >>> try:
    ...     convert({"classes": {}, "descriptoin": "x"}, ClassMapFile, source="m.yaml")
    ... except InvalidInputError as e:
    ...     print(str(e).split(" (allowed")[0])
    m.yaml: unknown field 'descriptoin' (did you mean 'description'?)
    """
    with collector_paused():
        try:
            return msgspec.convert(document, model, strict=True)
        except msgspec.ValidationError as e:
            raise _fault(str(e), document, model, source) from None


@contextlib.contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while documents are parsed and converted:
    they hold no reference cycles, and a collection pass over a large one's millions of
    objects only costs time (half of ``json.loads``' time on a 16,000-call trace).

    >>> with collector_paused():
    ...     gc.isenabled()
    False
    """
    enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if enabled:
            gc.enable()


def parse(path: str | Path, *, what: str, syntax: Syntax = "json") -> object:
    """The parsed content (plain data) of file `path` under the module's policy.

    >>> import tempfile, pathlib
    >>> path = pathlib.Path(tempfile.mkdtemp()) / "x.json"
    >>> _ = path.write_bytes(b'{"name": "caf\\xe9"}')
    >>> try:
    ...     parse(path, what="graph file")
    ... except InvalidInputError as e:
    ...     print(str(e).removeprefix(str(path)))
    : not UTF-8 text (byte 0xe9 at position 13)
    """
    shown = str(path)
    try:
        data = Path(path).read_bytes()
    except OSError as e:
        raise InvalidInputError(f"{shown}: cannot read {what} ({e.strerror or e})", shown) from None
    text = decode_text(data, shown)
    as_yaml = syntax == "yaml" or (
        syntax == "suffix" and Path(path).suffix.lower() in (".yaml", ".yml")
    )
    with collector_paused():
        return _yaml(text, shown) if as_yaml else _json(text, shown)


def decode_text(data: bytes, shown: str) -> str:
    """`data` as UTF-8 text (without a leading byte-order mark), or one line naming
    the first byte that is not UTF-8."""
    if data.startswith((b"\xff\xfe", b"\xfe\xff")):
        raise InvalidInputError(f"{shown}: not UTF-8 text (a UTF-16 byte-order mark)", shown)
    try:
        return data.decode("utf-8").removeprefix("\ufeff")
    except UnicodeDecodeError as e:
        raise InvalidInputError(
            f"{shown}: not UTF-8 text (byte 0x{data[e.start]:02x} at position {e.start})", shown
        ) from None


def _json(text: str, shown: str) -> object:
    odd: list[str] = []  # NaN, Infinity (not JSON), numbers beyond a float's range

    def constant(name: str) -> float:
        odd.append(name)
        return float(name)

    def number(text: str) -> float:
        value = float(text)
        if math.isinf(value) or _subnormal(value):
            odd.append(text)
        return value

    try:
        document = json.loads(
            text, object_pairs_hook=_unique_pairs, parse_constant=constant, parse_float=number
        )
    except json.JSONDecodeError as e:
        raise InvalidInputError(
            f"{shown}: malformed JSON at line {e.lineno} column {e.colno}: {e.msg}", shown
        ) from None
    except _Duplicate as e:
        raise InvalidInputError(
            f"{shown}: field {e.args[0]!r} is given twice in one object; keep one", str(e.args[0])
        ) from None
    except RecursionError:
        raise InvalidInputError(f"{shown}: nested too deeply to be an input file", shown) from None
    except ValueError as e:  # an integer past Python's 4,300-digit limit
        raise InvalidInputError(f"{shown}: malformed JSON: {e}".split(";")[0], shown) from None
    if odd or _SURROGATE.search(text):  # a walk names the field (only when there is one)
        _check_values(document, shown)
    return document


def _unique_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    obj = dict(pairs)
    if len(obj) != len(pairs):
        seen: set[str] = set()
        for key, _ in pairs:
            if key in seen:
                raise _Duplicate(key)
            seen.add(key)
    return obj


_Loader: type[yaml.SafeLoader] = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


class _UniqueKeyLoader(_Loader):  # type: ignore[misc]  # yaml ships no types
    """YAML's safe loader (libyaml's where installed: it limits nesting depth),
    refusing a key given twice in one mapping."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        seen: set[object] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":
                continue
            key = self.construct_object(key_node, deep=True)
            if not isinstance(key, str | int | float | bool):
                continue  # an unhashable key: the safe loader's own error names it
            if key in seen:
                raise _Duplicate(key, key_node.start_mark.line + 1)
            seen.add(key)
        result: dict[Any, Any] = super().construct_mapping(node, deep)
        return result


def _yaml(text: str, shown: str) -> object:
    try:
        document = yaml.load(text, Loader=_UniqueKeyLoader)  # a safe loader
    except _Duplicate as e:
        raise InvalidInputError(
            f"{shown}: key {e.args[0]!r} is given twice in one mapping (line {e.args[1]}); "
            "keep one",
            str(e.args[0]),
        ) from None
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        where = f" at line {mark.line + 1} column {mark.column + 1}" if mark else ""
        problem = getattr(e, "problem", None) or str(e).splitlines()[0]
        raise InvalidInputError(f"{shown}: malformed YAML{where}: {problem}", shown) from None
    except (RecursionError, TypeError, ValueError) as e:
        # The pure-Python loader recurses per level; a few constructors (dates,
        # base64) raise on bad scalars.
        reason = "nested too deeply" if isinstance(e, RecursionError) else str(e).split(";")[0]
        raise InvalidInputError(f"{shown}: malformed YAML: {reason}", shown) from None
    try:
        size = expanded_size(document)
    except ValueError as e:
        raise InvalidInputError(f"{shown}: malformed YAML: {e}", shown) from None
    if size > YAML_EXPANDED_LIMIT:
        raise InvalidInputError(
            f"{shown}: YAML aliases expand to {size:,} values, more than the "
            f"{YAML_EXPANDED_LIMIT:,} an input file may hold; write the values out or "
            "use fewer aliases",
            shown,
        )
    _check_values(document, shown)
    return document


YAML_EXPANDED_LIMIT = 10_000_000
"""The most values (mappings, lists and scalars, each alias counted as a copy of what
it names) a YAML input may expand to. Ten times the largest graph a user has fed in
(a 100,000-op graph is about 1 M values), and checked in about a second by the
walks that follow; the 384-byte 9-level "billion laughs" expands to 926 M."""


def expanded_size(document: object) -> int:
    """The values `document` holds with every shared list or mapping counted once per
    place it appears (what a YAML alias stands for), computed once per distinct object;
    a list or mapping that contains itself (a recursive alias) is a `ValueError`.

    >>> inner = [1, 2, 3]
    >>> expanded_size({"a": inner, "b": inner})  # 1 mapping, 2 keys, 2 lists of 3
    11
    """
    sizes: dict[int, int] = {}
    open_: set[int] = set()  # containers whose children are being sized
    stack: list[tuple[object, bool]] = [(document, False)]
    while stack:
        value, children_done = stack.pop()
        if id(value) in sizes:
            continue
        if isinstance(value, dict):
            children: list[object] = [*value.keys(), *value.values()]
        elif isinstance(value, list):
            children = value
        else:
            continue  # a scalar: counted as 1 by its container
        if not children_done:
            if id(value) in open_:
                raise ValueError("a value contains itself through an alias")
            open_.add(id(value))
            stack.append((value, True))
            stack.extend((c, False) for c in children if isinstance(c, dict | list))
            continue
        open_.discard(id(value))
        sizes[id(value)] = 1 + sum(sizes.get(id(c), 1) for c in children)
    return sizes.get(id(document), 1)


_NOT_JSON = (datetime.date, bytes, set)
# A JSON escape of a UTF-16 surrogate: a pair decodes to one character, a lone one
# stays a surrogate, which no file name, table or terminal can take.
_SURROGATE = re.compile(r"\\u[dD][89a-fA-F]")


def _subnormal(value: float) -> bool:
    """A number below the smallest normal float: no quantity of an input is that small,
    and a float holds it with few digits (1e-320 keeps 3 of them)."""
    return 0 < abs(value) < sys.float_info.min


def _check_values(document: object, shown: str) -> None:
    """Refuse non-finite and subnormal numbers, text holding a lone surrogate and the
    YAML values JSON has no equivalent of, naming the field (iteratively: no recursion
    limit)."""
    stack: list[tuple[str, object]] = [("", document)]
    while stack:
        where, value = stack.pop()
        if isinstance(value, dict):
            stack.extend((f"{where}.{k}" if where else str(k), v) for k, v in value.items())
            stack.extend((where, k) for k in value)
        elif isinstance(value, list):
            stack.extend((f"{where}[{i}]", v) for i, v in enumerate(value))
        elif isinstance(value, float) and not math.isfinite(value):
            at = f"field '{where}': " if where else ""
            raise InvalidInputError(
                f"{shown}: {at}expected a finite number, got {_shown(value)} (or a number beyond a "
                "float's range)",
                where or shown,
            )
        elif isinstance(value, float) and _subnormal(value):
            at = f"field '{where}': " if where else ""
            raise InvalidInputError(
                f"{shown}: {at}expected a number of normal size, got {value!r} (below "
                f"{sys.float_info.min:.1e}, where a float loses precision)",
                where or shown,
            )
        elif isinstance(value, str) and lone_surrogate(value):
            at = f"field '{where}': " if where else ""
            raise InvalidInputError(
                f"{shown}: {at}not UTF-8 text (a lone surrogate in {json.dumps(value)[:60]})",
                where or shown,
            )
        elif isinstance(value, _NOT_JSON):
            at = f"field '{where}': " if where else ""
            raise InvalidInputError(
                f"{shown}: {at}YAML value {str(value)[:40]!r} ({type(value).__name__}) has no "
                "JSON equivalent; quote it if it is text",
                where or shown,
            )


# --- one line per fault ------------------------------------------------------------


_AT = re.compile(r"^(?P<problem>.*?)(?: - at `(?P<where>.*)`)?$", re.S)
_TOKENS = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")


def _fault(message: str, document: object, model: object, source: str) -> InvalidInputError:
    """msgspec's message as nerframe's line: the file, the field path and the value."""
    match = _AT.match(message)
    assert match is not None  # the pattern matches any text
    problem, where = match["problem"], match["where"] or "$"
    key_fault = where.startswith("`key` in ")
    where = where.removeprefix("`key` in `").removesuffix("`") if key_fault else where
    names, value, tp = _walk(document, model, where)
    field = _printable(".".join(names).replace(".[", "["))
    unknown = re.fullmatch(r"Object contains unknown field `(.*)`", problem, re.S)
    missing = re.fullmatch(r"Object missing required field `(.*)`", problem, re.S)
    at = f"{field}." if field else ""
    if unknown:
        name = _printable(unknown[1])
        allowed = sorted(_field_names(tp))
        text = (
            f"unknown field '{at}{name}'{did_you_mean(name, allowed)}"
            f" (allowed: {', '.join(allowed)})"
        )
    elif missing:
        text = f"missing field '{at}{_printable(missing[1])}'"
    elif key_fault:
        keys = list(value) if isinstance(value, dict) else []
        bad = next((k for k in keys if not isinstance(k, str)), None)
        text = f"field '{field}': keys must be text, got {_shown(bad)}"
    elif problem.startswith("Invalid enum value"):
        choices = [a for m in _members(tp) if get_origin(m) is Literal for a in get_args(m)]
        prefix = f"field '{field}': " if field else ""
        text = f"{prefix}expected one of {', '.join(map(_shown, choices))}, got {_shown(value)}"
    else:
        problem = problem.replace("`", "")
        problem = problem[0].lower() + problem[1:]
        got = re.search(r", got \S+$", problem)
        problem = problem[: got.start()] if got else problem
        prefix = f"field '{field}': " if field else ""
        text = f"{prefix}{problem}, got {_shown(value)}"
    return InvalidInputError(f"{source}: {text}", field or source)


def _walk(document: object, model: object, where: str) -> tuple[list[str], object, object]:
    """The field names along msgspec's path `where`, the value there and its declared type;
    a ``[...]`` step (a mapping's key, which msgspec does not name) becomes the key whose
    value fails to convert."""
    names: list[str] = []
    value, tp = document, model
    for name, index in _TOKENS.findall(where.removeprefix("$")):
        if index == "...":
            tp = _child(tp, value, "...")
            key = _failing_key(value, tp)
            if key is None:
                break
            names.append(str(key))
            value = value[key]  # type: ignore[index]
        elif index:
            position = int(index)
            tp = _child(tp, value, position)
            if not isinstance(value, list | tuple) or position >= len(value):
                break
            names.append(f"[{position}]")
            value = value[position]
        else:
            tp = _child(tp, value, name)
            names.append(name)
            value = value.get(name) if isinstance(value, dict) else None
    return names, value, tp


def _members(tp: object) -> Iterator[object]:
    origin = get_origin(tp)
    if origin is Annotated:
        yield from _members(get_args(tp)[0])
    elif origin in (typing.Union, types.UnionType):
        for arg in get_args(tp):
            yield from _members(arg)
    else:
        yield tp


def _child(tp: object, value: object, step: str | int) -> object:
    """The declared type one `step` (a field name, an index or ``...``) below `tp`."""
    for member in _members(tp):
        origin = get_origin(member) or member
        args = get_args(member)
        if isinstance(step, str) and step != "..." and isinstance(member, type):
            if issubclass(member, msgspec.Struct):
                for info in msgspec.structs.fields(member):
                    if info.encode_name == step:
                        return info.type
        elif isinstance(step, int) and origin in (list, tuple) and args:
            if origin is tuple and args[-1] is not Ellipsis:
                return args[step] if step < len(args) else Any
            return args[0]
        elif step == "..." and origin is dict and len(args) == 2:
            return args[1]
    return Any


def _failing_key(value: object, tp: object) -> object:
    if not isinstance(value, dict):
        return None
    for key, item in value.items():
        try:
            msgspec.convert(item, tp, strict=True)
        except msgspec.ValidationError:
            return key
    return None


def _field_names(tp: object) -> set[str]:
    for member in _members(tp):
        if isinstance(member, type) and issubclass(member, msgspec.Struct):
            return {info.encode_name for info in msgspec.structs.fields(member)}
    return set()


def _printable(text: str) -> str:
    """`text` with control characters escaped, so that a message stays one line."""
    return "".join(c if c.isprintable() else repr(c)[1:-1] for c in text)


def _shown(value: object) -> str:
    """A value as it would read in the file, cut to a readable length."""
    try:
        text = json.dumps(value, ensure_ascii=False, default=str)
    except (ValueError, RecursionError):
        text = repr(value)
    return text if len(text) <= 60 else text[:57] + "..."

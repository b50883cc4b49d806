"""The trace file: what `nerframe.trace.capture` records, as one JSON document.

A trace file (``*.trace.json``) holds::

    {"format": "nerframe-trace", "version": 1,
     "model": "TinyNeRF", "torch": "2.13.0", "repeats": 5, "warmup": 1,
     "total_s": 0.0123,                     # median wall time of one whole forward
     "calls": [{
        "id": 0,                            # call order (pre-order: a parent before its children)
        "parent": null,                     # id of the enclosing module call, or null
        "path": "field.mlp",                # module path in the model ("" for the model itself)
        "classes": ["pkg.mod.Class", ...],  # the class, then its base classes (MRO, qualified)
        "attributes": {"in_features": 3},   # public scalar / small-list attributes of the module
        "params": {"weight": [8, 3]},       # shapes of the module's own parameters and buffers
        "inputs": [[64, 3]],                # shapes of every tensor in the arguments, in order
        "outputs": [[64, 8]],               # shapes of every tensor in the result, in order
        "sources": [[3, 0]],                # the outputs ([call, index]) the inputs derive from
        "output_sources": [[[5, 0], [6, 1]]],   # per output: what it derives from
        "time_s": 1.2e-05}, ...],           # median inclusive wall time of the call
     "extra": {...}}                        # optional: anything else, kept as is

A *port* ``[call, index]`` is the index-th output tensor of a call. ``sources``
are the data edges (tensor provenance, never caller→callee); ``output_sources``
lets an unclassified module be looked through, output by output: a consumer of
its k-th output really depends on the ports that output derives from (the outputs
of the calls inside it, or its own inputs). Tensors inside dataclasses, tuples,
lists and dicts count, depth first (dict keys sorted). Files are written
atomically with sorted keys, so the same trace always gives the same bytes.

>>> import tempfile, pathlib
>>> t = Trace("m", [Call(0, None, "", ["M"], {}, {}, [[2, 3]], [[2, 3]], [], [[]], 1e-3)])
>>> path = pathlib.Path(tempfile.mkdtemp()) / "m.trace.json"
>>> read_trace(write_trace(t, path)).calls[0].inputs
[[2, 3]]
"""

from __future__ import annotations

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, TypeVar

from nerframe.atomic import atomic_path
from nerframe.errors import NerframeError

FORMAT = "nerframe-trace"
VERSION = 1
SUFFIX = ".trace.json"

Scalar = int | float | bool | str
Port = tuple[int, int]
"""An output tensor of a call: (call id, position among its output tensors)."""
T = TypeVar("T")


@dataclass(frozen=True)
class Call:
    """One recorded module call (see the module docstring for the fields).

    >>> fc = Call(0, None, "fc", ["torch.nn.modules.linear.Linear", "torch.nn.Module"],
    ...           {"in_features": 3, "out_features": 8}, {"weight": [8, 3]}, [[64, 3]],
    ...           [[64, 8]], [], [[]], 1.2e-5)
    >>> fc.name, fc.outputs
    ('torch.nn.modules.linear.Linear', [[64, 8]])
    """

    id: int
    parent: int | None
    path: str
    classes: list[str]
    attributes: dict[str, Scalar | list[Scalar]]
    params: dict[str, list[int]]
    inputs: list[list[int]]
    outputs: list[list[int]]
    sources: list[Port]
    output_sources: list[list[Port]]
    time_s: float

    @property
    def name(self) -> str:
        """The qualified class name.

        >>> Call(0, None, "", ["pkg.Net", "torch.nn.Module"], {}, {}, [], [], [], [], 0.0).name
        'pkg.Net'
        """
        return self.classes[0]


@dataclass(frozen=True)
class Trace:
    """A recorded run: the model's name, its calls, and how it was timed.

    >>> t = Trace("m", [Call(0, None, "", ["M"], {}, {}, [[2, 3]], [[2, 3]], [], [[]], 1e-3)])
    >>> t.model, len(t.calls), t.repeats
    ('m', 1, 1)
    """

    model: str
    calls: list[Call]
    total_s: float = 0.0
    repeats: int = 1
    warmup: int = 0
    torch: str = ""
    extra: dict[str, object] = field(default_factory=dict)


def is_trace_file(path: str | Path) -> bool:
    """Whether `path` names a trace file (by its ``.trace.json`` suffix).

    >>> is_trace_file("run.trace.json"), is_trace_file("graph.json")
    (True, False)
    """
    return str(path).lower().endswith(SUFFIX)


def write_trace(trace: Trace, path: str | Path) -> Path:
    """Write `trace` to `path` atomically and return the path.

    >>> import tempfile
    >>> t = Trace("m", [Call(0, None, "", ["M"], {}, {}, [[2, 3]], [[2, 3]], [], [[]], 1e-3)])
    >>> path = write_trace(t, Path(tempfile.mkdtemp()) / "m.trace.json")
    >>> json.loads(path.read_text())["format"]
    'nerframe-trace'
    """
    document = {
        "format": FORMAT,
        "version": VERSION,
        "model": trace.model,
        "torch": trace.torch,
        "repeats": trace.repeats,
        "warmup": trace.warmup,
        "total_s": trace.total_s,
        "calls": [asdict(c) for c in trace.calls],
        **({"extra": trace.extra} if trace.extra else {}),
    }
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(document, sort_keys=True, indent=1) + "\n")
    return path


def read_trace(path: str | Path) -> Trace:
    """Read and check a trace file; a malformed one is a `NerframeError` naming the culprit.

    >>> import tempfile
    >>> t = Trace("m", [Call(0, None, "", ["M"], {}, {}, [[2, 3]], [[2, 3]], [], [[]], 1e-3)])
    >>> read_trace(write_trace(t, Path(tempfile.mkdtemp()) / "m.trace.json")) == t
    True
    >>> bad = Path(tempfile.mkdtemp()) / "bad.trace.json"
    >>> _ = bad.write_text('{"format": "other"}')
    >>> try:
    ...     read_trace(bad)
    ... except NerframeError as e:
    ...     print(str(e).removeprefix(str(bad)))
    : not a trace file (expected "format": "nerframe-trace")
    """
    path = Path(path)
    try:
        document = json.loads(path.read_text())
    except OSError as e:
        raise NerframeError(f"{path}: cannot read trace file ({e.strerror})") from None
    except json.JSONDecodeError as e:
        raise NerframeError(
            f"{path}: malformed JSON at line {e.lineno} column {e.colno}: {e.msg}"
        ) from None
    try:
        return parse_trace(document)
    except NerframeError as e:
        raise NerframeError(f"{path}: {e}") from None


def parse_trace(document: object) -> Trace:
    """A `Trace` from the parsed JSON document of a trace file."""
    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise NerframeError(f'not a trace file (expected "format": "{FORMAT}")')
    if document.get("version") != VERSION:
        raise NerframeError(f"trace format version {document.get('version')!r} is not {VERSION}")
    calls = document.get("calls")
    if not isinstance(calls, list):
        raise NerframeError("'calls' must be a list")
    parsed = [_call(c, i) for i, c in enumerate(calls)]
    for call in parsed:
        if call.parent is not None and not 0 <= call.parent < call.id:
            raise NerframeError(f"call {call.id}: parent {call.parent} is not an earlier call")
        if len(call.output_sources) != len(call.outputs):
            raise NerframeError(f"call {call.id}: output_sources must have one list per output")
        # A source is an earlier call's output; what feeds an output may be a child's.
        ports = [(p, "sources") for p in call.sources] + [
            (p, "output_sources") for ports in call.output_sources for p in ports
        ]
        for (ref, index), field_name in ports:
            if (
                not 0 <= ref < len(parsed)
                or ref == call.id
                or (field_name == "sources" and ref > call.id)
            ):
                raise NerframeError(f"call {call.id}: {field_name} refers to call {ref}")
            if not 0 <= index < len(parsed[ref].outputs):
                raise NerframeError(
                    f"call {call.id}: {field_name} refers to output {index} of call {ref}, "
                    f"which has {len(parsed[ref].outputs)}"
                )
    return Trace(
        model=_typed(document.get("model", ""), str, "model"),
        calls=parsed,
        total_s=_seconds(document.get("total_s", 0.0), "total_s"),
        repeats=_typed(document.get("repeats", 1), int, "repeats"),
        warmup=_typed(document.get("warmup", 0), int, "warmup"),
        torch=_typed(document.get("torch", ""), str, "torch"),
        extra=_typed(document.get("extra", {}), dict, "extra"),
    )


_CALL_FIELDS = {
    "id",
    "parent",
    "path",
    "classes",
    "attributes",
    "params",
    "inputs",
    "outputs",
    "sources",
    "output_sources",
    "time_s",
}


def _call(record: object, position: int) -> Call:
    where = f"call {position}"
    if not isinstance(record, dict):
        raise NerframeError(f"{where}: must be an object")
    unknown = set(record) - _CALL_FIELDS
    if unknown:
        raise NerframeError(f"{where}: unknown field {sorted(unknown)[0]!r}")
    if record.get("id") != position:
        raise NerframeError(f"{where}: id must be {position} (calls are numbered in order)")
    classes = _typed(record.get("classes"), list, f"{where}: classes")
    if not classes or not all(isinstance(c, str) and c for c in classes):
        raise NerframeError(f"{where}: classes must be a non-empty list of class names")
    parent = record.get("parent")
    if parent is not None:
        parent = _typed(parent, int, f"{where}: parent")
    attributes = _typed(record.get("attributes", {}), dict, f"{where}: attributes")
    params = _typed(record.get("params", {}), dict, f"{where}: params")
    for name, shape in params.items():
        _shape(shape, f"{where}: params.{name}")
    return Call(
        id=position,
        parent=parent,
        path=_typed(record.get("path", ""), str, f"{where}: path"),
        classes=classes,
        attributes=attributes,
        params=params,
        inputs=[_shape(s, f"{where}: inputs") for s in _list(record, "inputs", where)],
        outputs=[_shape(s, f"{where}: outputs") for s in _list(record, "outputs", where)],
        sources=[_port(p, f"{where}: sources") for p in _list(record, "sources", where)],
        output_sources=[
            [_port(p, f"{where}: output_sources") for p in _typed(ports, list, where)]
            for ports in _list(record, "output_sources", where)
        ],
        time_s=_seconds(record.get("time_s", 0.0), f"{where}: time_s"),
    )


def _list(record: dict[str, object], key: str, where: str) -> list[object]:
    return _typed(record.get(key, []), list, f"{where}: {key}")


def _typed(value: Any, kind: type[T], what: str) -> T:
    if not isinstance(value, kind) or (kind is int and isinstance(value, bool)):
        raise NerframeError(f"{what} must be {kind.__name__}, got {value!r}")
    return value


def _port(value: object, what: str) -> Port:
    if (
        not isinstance(value, list | tuple)
        or len(value) != 2
        or not all(isinstance(v, int) and not isinstance(v, bool) for v in value)
    ):
        raise NerframeError(f"{what}: a port must be [call, output index], got {value!r}")
    return (value[0], value[1])


def _shape(value: object, what: str) -> list[int]:
    if not isinstance(value, list) or not all(
        isinstance(d, int) and not isinstance(d, bool) and d >= 0 for d in value
    ):
        raise NerframeError(f"{what}: a shape must be a list of integers >= 0, got {value!r}")
    return value


def _seconds(value: object, what: str) -> float:
    if isinstance(value, bool) or not isinstance(value, int | float) or not math.isfinite(value):
        raise NerframeError(f"{what} must be a number of seconds, got {value!r}")
    if value < 0:
        raise NerframeError(f"{what} must be >= 0, got {value!r}")
    return float(value)

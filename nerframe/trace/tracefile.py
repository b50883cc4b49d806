"""The trace file: what `nerframe.trace.capture` records, as one JSON document.

A trace file (``*.trace.json``) holds::

    {"format": "nerframe-trace", "version": 3,
     "model": "TinyNeRF", "torch": "2.13.0", "repeats": 5, "warmup": 1,
     "device": "cpu", "threads": 2,         # where it ran, torch's intra-op threads (v3)
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
        "input_dtypes": ["float32"],        # torch dtype of each input tensor (version 2)
        "output_dtypes": ["float32"],       # torch dtype of each output tensor (version 2)
        "sources": [[3, 0]],                # the outputs ([call, index]) the inputs derive from
        "output_sources": [[[5, 0], [6, 1]]],   # per output: what it derives from
        "time_s": 1.2e-05,                  # median inclusive wall time of the call
        "kernels": [{"name": "linear",      # the torch functions it ran itself (version 3)
                     "inputs": [[64, 3], [8, 3], [8]], "input_dtypes": [...],
                     "outputs": [[64, 8]], "output_dtypes": ["float32"],
                     "memory": "fresh",     # fresh, reused (out=, in place) or view
                     "max_row_lookups": 6079}]}, ...],  # scatter-adds only
     "extra": {...}}                        # optional: anything else, kept as is

A scatter-add's ``max_row_lookups`` (written only when recorded) is the largest number of its
lookups that add into one destination row, counted from the index values at capture
(`nerframe.trace.recording.max_row_lookups`): a GPU adds one row's lookups one after
another, so its time grows with it, which shapes do not show.

A *port* ``[call, index]`` is the index-th output tensor of a call. ``sources``
are the data edges (tensor provenance, never caller→callee); ``output_sources``
lets an unclassified module be looked through, output by output: a consumer of
its k-th output really depends on the ports that output derives from (the outputs
of the calls inside it, or its own inputs). Tensors inside dataclasses, tuples,
lists and dicts count, depth first (dict keys sorted). Files are written
atomically with sorted keys, so the same trace always gives the same bytes.
Version 1 files (no dtypes) are still read; their rows are costed as 16-bit and
flagged approximate. Version 2 files (no kernels) are still read; the host model
(`nerframe.trace.host`) then predicts each row from its costs alone. The declared
model is `nerframe.formats.trace.TraceFile` (``nerframe schema trace``; every field
in ``docs/formats.md``).

>>> import tempfile, pathlib
>>> t = Trace("m", [Call(0, None, "", ["M"], {}, {}, [[2, 3]], [[2, 3]], [], [[]], 1e-3)])
>>> path = pathlib.Path(tempfile.mkdtemp()) / "m.trace.json"
>>> read_trace(write_trace(t, path)).calls[0].inputs
[[2, 3]]
"""

from __future__ import annotations

import json
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec

from nerframe.atomic import atomic_path
from nerframe.errors import InvalidInputError

if TYPE_CHECKING:
    from nerframe.formats.trace import KernelRecord

FORMAT = "nerframe-trace"
VERSION = 3
"""The version written: 3 records the torch functions each call ran (its kernels) and
the device; 2 recorded each tensor's dtype (version 1 did not)."""
READABLE = (1, 2, 3)
SUFFIX = ".trace.json"

Scalar = int | float | bool | str
Port = tuple[int, int]
"""An output tensor of a call: (call id, position among its output tensors)."""


@dataclass(frozen=True)
class Kernel:
    """One torch function a call ran itself (see the module docstring).

    >>> Kernel("linear", [[64, 3], [8, 3]], ["float32"] * 2, [[64, 8]], ["float32"]).memory
    'fresh'
    """

    name: str
    inputs: list[list[int]]
    input_dtypes: list[str]
    outputs: list[list[int]]
    output_dtypes: list[str]
    memory: str = "fresh"
    max_row_lookups: int = 0
    """Of a scatter-add: the most lookups that add into one destination row (0: not
    recorded, or not a scatter-add)."""


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
    input_dtypes: list[str] = field(default_factory=list)
    output_dtypes: list[str] = field(default_factory=list)
    kernels: list[Kernel] = field(default_factory=list)
    backward_s: float = 0.0
    backward_kernels: list[Kernel] = field(default_factory=list)

    @property
    def name(self) -> str:
        """The qualified class name.

        >>> Call(0, None, "", ["pkg.Net", "torch.nn.Module"], {}, {}, [], [], [], [], 0.0).name
        'pkg.Net'
        """
        return self.classes[0]


@dataclass(frozen=True)
class Training:
    """One training iteration's parts outside the module calls (``capture --train``):
    the loss and the optimizer, their times and kernels, and the whole iteration's time.

    >>> Training(iteration_s=0.01).optimizer
    'torch.optim.Adam'
    """

    loss: str = "output.square().mean()"
    optimizer: str = "torch.optim.Adam"
    parameters: int = 0
    loss_s: float = 0.0
    backward_s: float = 0.0
    optimizer_s: float = 0.0
    iteration_s: float = 0.0
    loss_kernels: list[Kernel] = field(default_factory=list)
    optimizer_kernels: list[Kernel] = field(default_factory=list)


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
    device: str = "cpu"
    threads: int = 0
    train: Training | None = None


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
        "device": trace.device,
        "threads": trace.threads,
        "calls": [_call_document(c, trace.train is not None) for c in trace.calls],
        **({"extra": trace.extra} if trace.extra else {}),
        **({"train": _train_document(trace.train)} if trace.train is not None else {}),
    }
    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(document, sort_keys=True, indent=1) + "\n")
    return path


def _call_document(call: Call, train: bool) -> dict[str, object]:
    """A call as written: a forward trace's calls have no backward fields."""
    document = asdict(call)
    document["kernels"] = [_kernel_document(k) for k in call.kernels]
    if train:
        document["backward_kernels"] = [_kernel_document(k) for k in call.backward_kernels]
    else:
        del document["backward_s"], document["backward_kernels"]
    return document


def _train_document(train: Training) -> dict[str, object]:
    document = asdict(train)
    for key in ("loss_kernels", "optimizer_kernels"):
        document[key] = [_kernel_document(k) for k in getattr(train, key)]
    return document


def _kernel_document(kernel: Kernel) -> dict[str, object]:
    """A kernel as written: ``max_row_lookups`` only where recorded (files of kernels without
    scatter-adds keep the bytes they had)."""
    document = asdict(kernel)
    if not kernel.max_row_lookups:
        del document["max_row_lookups"]
    return document


def read_trace(path: str | Path) -> Trace:
    """Read and check a trace file; a malformed one is an `InvalidInputError` naming the
    file, the field and the value (the format is `nerframe.formats.trace.TraceFile`).

    >>> import tempfile
    >>> t = Trace("m", [Call(0, None, "", ["M"], {}, {}, [[2, 3]], [[2, 3]], [], [[]], 1e-3)])
    >>> read_trace(write_trace(t, Path(tempfile.mkdtemp()) / "m.trace.json")) == t
    True
    >>> bad = Path(tempfile.mkdtemp()) / "bad.trace.json"
    >>> _ = bad.write_text('{"format": "other"}')
    >>> try:
    ...     read_trace(bad)
    ... except InvalidInputError as e:
    ...     print(str(e).removeprefix(str(bad)))
    : not a trace file (expected "format": "nerframe-trace")
    """
    from nerframe.formats import collector_paused, parse

    with collector_paused():
        return parse_trace(parse(path, what="trace file"), source=str(path))


def parse_trace(document: object, *, source: str = "trace") -> Trace:
    """A `Trace` from the parsed JSON document of a trace file; `source` starts messages."""
    from nerframe.formats import convert
    from nerframe.formats.trace import TraceFile

    if not isinstance(document, dict) or document.get("format") != FORMAT:
        raise InvalidInputError(
            f'{source}: not a trace file (expected "format": "{FORMAT}")', source
        )
    if document.get("version") not in READABLE:
        raise InvalidInputError(
            f"{source}: trace format version {document.get('version')!r} is not one of "
            f"{', '.join(map(str, READABLE))}",
            source,
        )
    declared = convert(document, TraceFile, source=source)
    calls = [
        Call(
            id=c.id,
            parent=c.parent,
            path=c.path,
            classes=c.classes,
            attributes=c.attributes,
            params=c.params,
            inputs=c.inputs,
            outputs=c.outputs,
            sources=c.sources,
            output_sources=c.output_sources,
            time_s=c.time_s,
            input_dtypes=c.input_dtypes,
            output_dtypes=c.output_dtypes,
            kernels=_kernels(c.kernels),
            backward_s=c.backward_s,
            backward_kernels=_kernels(c.backward_kernels),
        )
        for c in declared.calls
    ]
    for position, call in enumerate(calls):
        _check_call(call, position, calls, source)
    return Trace(
        model=declared.model,
        calls=calls,
        total_s=declared.total_s,
        repeats=declared.repeats,
        warmup=declared.warmup,
        torch=declared.torch,
        extra=declared.extra,
        device=declared.device,
        threads=declared.threads,
        train=None
        if declared.train is None
        else Training(
            loss=declared.train.loss,
            optimizer=declared.train.optimizer,
            parameters=declared.train.parameters,
            loss_s=declared.train.loss_s,
            backward_s=declared.train.backward_s,
            optimizer_s=declared.train.optimizer_s,
            iteration_s=declared.train.iteration_s,
            loss_kernels=_kernels(declared.train.loss_kernels),
            optimizer_kernels=_kernels(declared.train.optimizer_kernels),
        ),
    )


def _kernels(records: Sequence[KernelRecord]) -> list[Kernel]:
    return [Kernel(**msgspec.structs.asdict(k)) for k in records]


def _check_call(call: Call, position: int, calls: list[Call], source: str) -> None:
    """What a declared type cannot say: ids in order, references to earlier calls and
    to outputs that exist, one dtype per tensor."""
    where = f"{source}: call {position}"
    if call.id != position:
        raise InvalidInputError(f"{where}: id must be {position} (calls are numbered in order)")
    if call.parent is not None and not call.parent < call.id:
        raise InvalidInputError(f"{where}: parent {call.parent} is not an earlier call")
    if len(call.output_sources) != len(call.outputs):
        raise InvalidInputError(f"{where}: output_sources must have one list per output")
    for name, dtypes, tensors in (
        ("input_dtypes", call.input_dtypes, call.inputs),
        ("output_dtypes", call.output_dtypes, call.outputs),
    ):
        if dtypes and len(dtypes) != len(tensors):
            raise InvalidInputError(
                f"{where}: {name} has {len(dtypes)} entries for {len(tensors)} tensors"
            )
    for position, k in enumerate([*call.kernels, *call.backward_kernels]):
        for name, dtypes, tensors in (
            ("input_dtypes", k.input_dtypes, k.inputs),
            ("output_dtypes", k.output_dtypes, k.outputs),
        ):
            if len(dtypes) != len(tensors):
                raise InvalidInputError(
                    f"{where}: kernel {position} ({k.name}): {name} has {len(dtypes)} entries "
                    f"for {len(tensors)} tensors"
                )
    # A source is an earlier call's output; what feeds an output may be a child's.
    ports = [(p, "sources") for p in call.sources] + [
        (p, "output_sources") for ports in call.output_sources for p in ports
    ]
    for (ref, index), field_name in ports:
        if ref >= len(calls) or ref == call.id or (field_name == "sources" and ref > call.id):
            raise InvalidInputError(f"{where}: {field_name} refers to call {ref}")
        if index >= len(calls[ref].outputs):
            raise InvalidInputError(
                f"{where}: {field_name} refers to output {index} of call {ref}, "
                f"which has {len(calls[ref].outputs)}"
            )


def dtype_bits(dtype: str) -> int | None:
    """Bits per element of a torch dtype name (``bool`` is stored in a byte), None when unknown.

    >>> [dtype_bits(d) for d in ("float32", "bfloat16", "float8_e4m3fn", "bool", "qint")]
    [32, 16, 8, 8, None]
    """
    if dtype == "bool":
        return 8
    found = re.search(r"\d+", dtype)
    bits = int(found.group()) if found else None
    return bits if bits is not None and 1 <= bits <= 64 else None

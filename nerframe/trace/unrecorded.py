"""The backward's kernels as an unrecorded backward runs them (torch's profiler).

`trace capture --train` records the backward's aten functions with a dispatch mode
(`nerframe.trace.training`). While any dispatch mode is active, PyTorch treats every
tensor as a subclass (``at::isTensorSubclassLike``, ATen/TensorSubclassLikeUtils.h),
and the autograd formulas written to stay correct for subclasses take their slower
composite path: ``cumprod``'s backward (torch/csrc/autograd/FunctionsManual.cpp,
``cumprod_backward``) runs a mask-and-scan sequence of about 35 functions (torch 2.13)
or a loop of about six functions per position of the scanned dimension (torch 2.11),
where an unrecorded backward runs seven. The profiler changes no dispatch:
`profiled_nodes` reads the functions every node of an unrecorded backward ran, and the
capture puts them in place of the recorded ones where the two differ
(`nerframe.trace.training`), with each function's outputs from running it on meta
tensors. A node whose functions cannot be rebuilt that way (an argument the profiler
does not record, such as a list of index tensors) keeps its recorded kernels.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, NamedTuple

from nerframe.trace.recording import dtype_name
from nerframe.trace.tracefile import Kernel

NODE_EVENT = "autograd::engine::evaluate_function: "
"""The profiler's name prefix of the engine running one autograd node."""

_DTYPES = {
    "float": "float32",
    "double": "float64",
    "c10::Half": "float16",
    "c10::BFloat16": "bfloat16",
    "long int": "int64",
    "int": "int32",
    "short int": "int16",
    "signed char": "int8",
    "unsigned char": "uint8",
    "bool": "bool",
}
"""The profiler's tensor types (c10's C++ names) as torch dtypes."""

_SCALAR_TYPES = (
    *("uint8", "int8", "int16", "int32", "int64", "float16", "float32", "float64"),
    *("complex32", "complex64", "complex128", "bool", "qint8", "quint8", "qint32", "bfloat16"),
)
"""c10::ScalarType in its enum order: the profiler records a ``ScalarType`` argument as
its number."""


class ProfiledNode(NamedTuple):
    """The kernels of one autograd node an unrecorded backward ran: its own and the
    engine's checks of its outputs (`kernels`: a reduction to an input's shape, a cast),
    which run before the node's hooks end, and then the engine's sums of its outputs
    into the next nodes' buffered gradients (`engine`); None where a function could not
    be rebuilt."""

    name: str
    kernels: list[Kernel] | None
    engine: list[Kernel] | None


def profiled_nodes(torch: Any, backward: Callable[[], object]) -> list[ProfiledNode] | None:
    """Run `backward` under torch's profiler and return the nodes the engine ran, in
    order (None when this torch's profiler lacks the fields needed)."""
    try:
        with torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU], record_shapes=True
        ) as profile:
            backward()
    except RuntimeError:  # no profiler in this build: the recorded kernels stay
        return None
    events = list(profile.events())
    if events and not all(
        hasattr(events[0], field)
        for field in ("cpu_children", "concrete_inputs", "input_dtypes", "overload_name")
    ):
        return None
    try:
        return _nodes(torch, events)
    except (AttributeError, IndexError, RuntimeError, TypeError, ValueError):
        # a profile this reading does not foresee: the recorded kernels stay
        return None


def _nodes(torch: Any, events: list[Any]) -> list[ProfiledNode]:
    """The top-level nodes of a profiled backward, in the order they ran."""
    nodes = sorted(
        (e for e in events if e.name.startswith(NODE_EVENT) and not _inside_node(e)),
        key=lambda e: e.time_range.start,
    )
    found = []
    for event in nodes:
        name = event.name.removeprefix(NODE_EVENT)
        own = _kernels(torch, [c for c in event.cpu_children if c.name == name])
        rest = _kernels(torch, [c for c in event.cpu_children if c.name != name])
        if own is None or rest is None:
            found.append(ProfiledNode(name, None, None))
            continue
        checks = len(rest)
        while checks and rest[checks - 1].name in ("add", "add_"):
            checks -= 1
        found.append(ProfiledNode(name, own + rest[:checks], rest[checks:]))
    return found


def _inside_node(event: Any) -> bool:
    parent = event.cpu_parent
    while parent is not None:
        if parent.name.startswith(NODE_EVENT):
            return True
        parent = parent.cpu_parent
    return False


def _kernels(torch: Any, events: list[Any]) -> list[Kernel] | None:
    """The functions under `events` as the dispatch mode would record them: an aten
    function with a composite implicit kernel is its callees, any other one kernel."""
    found: list[Kernel] = []
    for event in events:
        ops = _overloads(torch, event)
        if not ops or ops[0].has_kernel_for_dispatch_key(
            torch._C.DispatchKey.CompositeImplicitAutograd
        ):
            inner = _kernels(torch, list(event.cpu_children))
            if inner is None:
                return None
            found += inner
            continue
        if not any(str(r.type).startswith("Tensor") for r in ops[0]._schema.returns):
            continue  # no tensor out (``item``): the dispatch mode records none either
        kernel = next((k for op in ops if (k := _rebuilt(torch, op, event)) is not None), None)
        if kernel is None:
            return None
        found.append(kernel)
    return found


def _overloads(torch: Any, event: Any) -> list[Any]:
    """The aten overloads an event may have run: the one it names, else every overload
    taking as many arguments as it recorded (none: not an aten function)."""
    if not event.name.startswith("aten::"):
        return []
    packet = getattr(torch.ops.aten, event.name.removeprefix("aten::"), None)
    if packet is None:
        return []
    names = [event.overload_name] if event.overload_name else packet.overloads()
    ops = [getattr(packet, name) for name in names]
    return [op for op in ops if len(op._schema.arguments) == len(event.input_shapes)]


def _rebuilt(torch: Any, op: Any, event: Any) -> Kernel | None:
    """The kernel record of one profiled function: its tensor arguments as the profiler
    recorded them, its outputs from running `op` on meta tensors of those shapes."""
    arguments = op._schema.arguments
    shapes, dtypes, values = event.input_shapes, event.input_dtypes, event.concrete_inputs
    recorded = list(zip(shapes, dtypes, values, strict=False))
    if len(recorded) != len(arguments):
        return None
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    tensors: list[Any] = []
    for argument, (shape, dtype, value) in zip(arguments, recorded, strict=True):
        kind = str(argument.type)
        if kind in ("Tensor", "Optional[Tensor]") and dtype in _DTYPES:
            value = torch.empty(shape, dtype=getattr(torch, _DTYPES[dtype]), device="meta")
            tensors.append(value)
        elif "Tensor" in kind and kind != "Optional[Tensor]":
            return None  # a list of tensors: the profiler keeps no shapes
        elif kind in ("Optional[Device]", "Device"):
            value = "meta"
        elif kind in ("Optional[ScalarType]", "ScalarType") and isinstance(value, int):
            if not 0 <= value < len(_SCALAR_TYPES):
                return None
            value = getattr(torch, _SCALAR_TYPES[value])
        elif kind.endswith(("Layout]", "MemoryFormat]")) or kind in ("Layout", "MemoryFormat"):
            value = None
        if argument.kwarg_only:
            kwargs[argument.name] = value
        else:
            args.append(value)
    try:
        result = op(*args, **kwargs)
    except (RuntimeError, TypeError, ValueError, NotImplementedError, IndexError):
        return None
    results = result if isinstance(result, (tuple, list)) else [result]
    outputs = [o for o in results if isinstance(o, torch.Tensor)]
    alias = op._schema.returns[0].alias_info if op._schema.returns else None
    memory = "fresh" if alias is None else ("reused" if alias.is_write else "view")
    return Kernel(
        event.name.removeprefix("aten::"),
        [list(t.shape) for t in tensors],
        [dtype_name(t) for t in tensors],
        [list(o.shape) for o in outputs],
        [dtype_name(o) for o in outputs],
        memory,
    )

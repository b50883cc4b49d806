"""Recording one training iteration (``nerframe trace capture --train``).

An iteration is the model's forward (autograd on), the loss
``output.square().mean()`` of its first floating-point output, ``loss.backward()``
and one ``torch.optim.Adam`` step (``zero_grad(set_to_none=True)`` before each
iteration). After `warmup` unrecorded iterations:

- the structure iteration records the forward as `nerframe.trace.capture` does (the
  calls, their shapes, provenance and kernels), then, during the backward, every
  aten function the autograd engine runs (a ``TorchDispatchMode``), each attributed
  to the module call that owns the autograd node running it; the optimizer step's
  functions are recorded the same way;
- each of the `repeats` timed iterations reads the clock around the forward's
  module calls (as a forward capture), the loss, the backward and the step, and
  around every autograd node of the backward (a node pre-hook and hook): a call's
  ``backward_s`` is the sum of its own nodes' times and its descendants'.

**Which call owns a node**: the nodes a call's outputs reach back to through
``grad_fn.next_functions`` without passing its inputs' nodes (the autograd graph it
built, and the gradient accumulators of the parameters it used), the innermost call
first. A node's kernels are those it ran at the top level (a node run inside another
node's run is part of the outer one), with the engine's checks of its outputs. Nodes
outside every call (the loss's) are the ``loss_kernels`` of the trace's `Training`,
and so is the engine's work between nodes: its sums of two gradients of one tensor.

**What the recording changes**: the dispatch mode makes PyTorch take other paths than
an unrecorded backward (`_dispatch`, `nerframe.trace.unrecorded`), so one more
backward of the same iteration runs under torch's profiler, and a node whose
functions differ there gets the functions the profiler saw.

Assumption: a call's backward time is its nodes' times only (the autograd engine's
own work between nodes is in ``Training.backward_s`` but no call's); on a GPU a node's
window measures its kernels when the engine is not waiting on the host.

The timed iterations keep the module hooks of the forward (the same cost as a
forward capture's) and the node hooks; the recording modes are off.
"""

from __future__ import annotations

import itertools
import statistics
from collections.abc import Callable, Mapping
from typing import Any, NamedTuple

from nerframe.errors import InvalidInputError
from nerframe.trace.tracefile import Call, Kernel, Trace, Training
from nerframe.trace.unrecorded import ProfiledNode, profiled_nodes


def _loss(torch: Any, recorder: Any, output: Any) -> Any:
    """``square().mean()`` of the first floating-point tensor of `output`."""
    for tensor in recorder.tensors(output):
        if tensor.is_floating_point() and tensor.requires_grad:
            return tensor.square().mean()
    raise InvalidInputError(
        "capture --train: the model's output has no floating-point tensor that requires "
        "grad (nothing to train)"
    )


class _Owners:
    """Each module call's input and output autograd nodes, in call order (the hooks'
    order, so call ids match the recorder's), and then which call owns each node."""

    def __init__(self, recorder: Any) -> None:
        self.recorder = recorder
        self.inputs: list[list[Any]] = []
        self.outputs: list[list[Any]] = []
        self.parents: list[int | None] = []
        self.stack: list[int] = []

    def enter(self, module: Any, args: Any, kwargs: Any) -> None:
        index = len(self.inputs)
        self.parents.append(self.stack[-1] if self.stack else None)
        self.inputs.append(self._nodes((args, kwargs)))
        self.outputs.append([])
        self.stack.append(index)

    def leave(self, module: Any, args: Any, kwargs: Any, output: Any) -> None:
        self.outputs[self.stack.pop()] = self._nodes(output)

    def _nodes(self, value: Any) -> list[Any]:
        return [t.grad_fn for t in self.recorder.tensors(value) if t.grad_fn is not None]

    def owners(self) -> dict[Any, int]:
        """node -> call: later calls (children come after parents) claim first."""
        owner: dict[Any, int] = {}
        for call in reversed(range(len(self.inputs))):
            stop = set(self.inputs[call])
            seen: set[Any] = set()
            todo = [n for n in self.outputs[call] if n not in stop]
            while todo:
                node = todo.pop()
                if node in seen:
                    continue
                seen.add(node)
                owner.setdefault(node, call)
                for following, _ in node.next_functions:
                    if following is not None and following not in stop and following not in seen:
                        todo.append(following)
        return owner


def _node_hooks(
    owner: Mapping[Any, Any], start: Callable[[Any], object], end: Callable[[Any], object]
) -> list[Any]:
    """A pre-hook calling `start(call)` and a hook calling `end(call)` on every node of
    `owner`, `call` its value there."""

    def before(call: Any) -> Callable[..., None]:
        def hook(grads: Any) -> None:
            start(call)

        return hook

    def after(call: Any) -> Callable[..., None]:
        def hook(grads_in: Any, grads_out: Any) -> None:
            end(call)

        return hook

    handles = []
    for node, call in owner.items():
        handles.append(node.register_prehook(before(call)))
        handles.append(node.register_hook(after(call)))
    return handles


class _Segment(NamedTuple):
    """The kernels a backward ran in one stretch: inside a node running at the top level
    (`node`), or, with `node` None, the engine's work before the first node or after one."""

    node: Any
    kernels: list[Kernel]


def _graph(tensor: Any) -> list[Any]:
    """Every autograd node the backward of `tensor` can run."""
    found: list[Any] = []
    todo = [tensor.grad_fn] if tensor.grad_fn is not None else []
    seen = set(todo)
    while todo:
        node = todo.pop()
        found.append(node)
        for following, _ in node.next_functions:
            if following is not None and following not in seen:
                seen.add(following)
                todo.append(following)
    return found


class _Segments:
    """The stretches of one backward (`_Segment`), opened by node hooks (`_node_hooks`,
    each node its own key): one when a node starts running at the top level (not inside
    another node's run), and one for the engine's work when it ends."""

    def __init__(self) -> None:
        self.depth = 0
        self.found = [_Segment(None, [])]

    def start(self, node: Any) -> None:
        if self.depth == 0:
            self.found.append(_Segment(node, []))
        self.depth += 1

    def end(self, node: Any) -> None:
        self.depth -= 1
        if self.depth == 0:
            self.found.append(_Segment(None, []))


def _repair(segments: list[_Segment], profiled: list[ProfiledNode] | None) -> None:
    """Put the kernels an unrecorded backward ran (`profiled`,
    `nerframe.trace.unrecorded`) in place of the recorded ones of each stretch whose
    functions differ; nothing when the two backwards did not run the same nodes in the
    same order."""
    nodes = [k for k, s in enumerate(segments) if s.node is not None]
    if profiled is None or [segments[k].node.name() for k in nodes] != [p.name for p in profiled]:
        return
    for k, run in zip(nodes, profiled, strict=True):
        _replace(segments[k].kernels, run.kernels)
        if k + 1 < len(segments) and segments[k + 1].node is None:
            _replace(segments[k + 1].kernels, run.engine)


def _replace(recorded: list[Kernel], run: list[Kernel] | None) -> None:
    if run is not None and [k.name for k in recorded] != [k.name for k in run]:
        recorded[:] = run


class _Both:
    """Module hooks that call two hook pairs: `first` entered first and left last."""

    def __init__(self, first: Any, second: Any) -> None:
        self.first, self.second = first, second

    def enter(self, module: Any, args: Any, kwargs: Any) -> None:
        self.first.enter(module, args, kwargs)
        self.second.enter(module, args, kwargs)

    def leave(self, module: Any, args: Any, kwargs: Any, output: Any) -> None:
        self.second.leave(module, args, kwargs, output)
        self.first.leave(module, args, kwargs, output)


class _Windows:
    """The clock marks around each call's autograd nodes in one backward."""

    def __init__(self, timer: Any, calls: int) -> None:
        self.timer = timer
        self.windows: list[list[tuple[Any, Any]]] = [[] for _ in range(calls)]
        self.opened: dict[int, list[Any]] = {}

    def start(self, call: int) -> None:
        self.opened.setdefault(call, []).append(self.timer.mark())

    def end(self, call: int) -> None:
        self.windows[call].append((self.opened[call].pop(), self.timer.mark()))

    def seconds(self) -> list[float]:
        return [sum(self.timer.seconds(a, b) for a, b in w) for w in self.windows]


def capture_train(
    torch: Any,
    model: Any,
    inputs: tuple[Any, ...],
    repeats: int,
    warmup: int,
    name: str | None,
    device: str,
    timer: Any,
) -> Trace:
    """One training iteration of `model` on `inputs` (see the module docstring)."""
    from nerframe.trace.recording import Clock, Recorder, run_environment

    params = [p for p in model.parameters() if p.requires_grad]
    if not params:
        raise InvalidInputError("capture --train: the model has no trainable parameters")
    optimizer = torch.optim.Adam(params)
    paths: dict[int, str] = {}
    for path, module in model.named_modules(remove_duplicate=False):
        paths.setdefault(id(module), path)
    recorder = Recorder(torch, paths)
    with torch.enable_grad():
        for _ in range(warmup):
            optimizer.zero_grad(set_to_none=True)
            _loss(torch, recorder, model(*inputs)).backward()
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        owners = _Owners(recorder)
        both = _Both(recorder, owners)
        with recorder.hooks(model, both.enter, both.leave), recorder.mode():
            output = model(*inputs)
        calls = len(recorder.calls)
        backward_kernels: list[list[Kernel]] = [[] for _ in range(calls)]
        loss_kernels: list[Kernel] = []
        with _dispatch(torch, recorder, lambda: loss_kernels):
            loss = _loss(torch, recorder, output)
        owner = owners.owners()
        stretches = _Segments()
        segments = stretches.found
        handles = _node_hooks({n: n for n in _graph(loss)}, stretches.start, stretches.end)
        try:
            with _dispatch(
                torch,
                recorder,
                lambda: segments[-1].kernels,
                between=lambda: segments[-1].node is None,
            ):
                loss.backward()
        finally:
            for handle in handles:
                handle.remove()
        optimizer_kernels: list[Kernel] = []
        with _dispatch(torch, recorder, lambda: optimizer_kernels):
            optimizer.step()
        optimizer.zero_grad(set_to_none=True)
        loss = _loss(torch, recorder, model(*inputs))
        _repair(segments, profiled_nodes(torch, loss.backward))
        for segment in segments:
            call = owner.get(segment.node)
            (loss_kernels if call is None else backward_kernels[call]).extend(segment.kernels)

        order = [c["module"] for c in recorder.calls]
        forward: list[list[float]] = [[] for _ in order]
        backward: list[list[float]] = [[] for _ in order]
        parts: dict[str, list[float]] = {
            k: [] for k in ("forward", "loss", "backward", "step", "all")
        }
        for _ in range(repeats):
            optimizer.zero_grad(set_to_none=True)
            clock, timed_owners = Clock(timer), _Owners(recorder)
            hooks = _Both(clock, timed_owners)
            with recorder.hooks(model, hooks.enter, hooks.leave):
                timer.synchronize()
                marks = [timer.mark()]
                output = model(*inputs)
            marks.append(timer.mark())
            loss = _loss(torch, recorder, output)
            marks.append(timer.mark())
            windows = _Windows(timer, len(order))
            handles = _node_hooks(timed_owners.owners(), windows.start, windows.end)
            try:
                loss.backward()
            finally:
                for handle in handles:
                    handle.remove()
            marks.append(timer.mark())
            optimizer.step()
            marks.append(timer.mark())
            timer.synchronize()
            if clock.order != order:
                raise InvalidInputError(
                    "capture --train: the model made different module calls in two runs with "
                    "the same inputs; a trace needs a deterministic forward pass"
                )
            for i, elapsed in enumerate(clock.seconds()):
                forward[i].append(elapsed)
            for i, seconds in enumerate(_inclusive(windows.seconds(), timed_owners.parents)):
                backward[i].append(seconds)
            for key, (a, b) in zip(
                ("forward", "loss", "backward", "step"), itertools.pairwise(marks), strict=True
            ):
                parts[key].append(timer.seconds(a, b))
            parts["all"].append(timer.seconds(marks[0], marks[-1]))
    recorded = [
        Call(
            time_s=statistics.median(forward[i]),
            backward_s=statistics.median(backward[i]),
            backward_kernels=backward_kernels[i],
            **{k: v for k, v in c.items() if k != "module"},
        )
        for i, c in enumerate(recorder.calls)
    ]
    median = {key: statistics.median(values) for key, values in parts.items()}
    return Trace(
        model=name or type(model).__name__,
        calls=recorded,
        total_s=median["forward"],
        repeats=repeats,
        warmup=warmup,
        **run_environment(torch, device),
        train=Training(
            parameters=sum(int(p.numel()) for p in params),
            loss_s=median["loss"],
            backward_s=median["backward"],
            optimizer_s=median["step"],
            iteration_s=median["all"],
            loss_kernels=loss_kernels,
            optimizer_kernels=optimizer_kernels,
        ),
    )


def _inclusive(own: list[float], parents: list[int | None]) -> list[float]:
    """Each call's own value plus its descendants' (children come after parents).

    >>> _inclusive([1.0, 2.0, 4.0], [None, 0, 1])
    [7.0, 6.0, 4.0]
    """
    total = list(own)
    for call in reversed(range(len(own))):
        parent = parents[call]
        if parent is not None:
            total[parent] += total[call]
    return total


def _dispatch(
    torch: Any,
    recorder: Any,
    target: Callable[[], list[Kernel]],
    *,
    between: Callable[[], bool] = lambda: False,
) -> Any:
    """A dispatch mode that records every aten function into `target()`'s list.

    `between()` tells the backward's engine work between nodes: there an ``add`` is
    the autograd engine summing two gradients of one input (``InputBuffer::accumulate``),
    and is recorded as the engine runs it without this mode. Unrecorded, the engine
    adds in place into the gradient it buffered first when that is a plain dense
    tensor whose last reference it holds; with any dispatch mode active, every tensor
    counts as a subclass (``at::isTensorSubclassLike``, ATen/TensorSubclassLikeUtils.h)
    and the engine allocates a new tensor instead (pytorch
    torch/csrc/autograd/input_buffer.cpp, ``accumulate`` and
    ``can_accumulate_inplace``). So such an add whose buffered gradient (its first
    operand) is dense, of the result's shape and dtype, is recorded as ``add_`` into
    it (memory reused). Assumption: the engine holds that gradient's last reference,
    true unless a hook or a node kept it. (`nerframe.trace.unrecorded` repairs what
    else the mode changes, where torch's profiler can say what ran instead.)
    """
    from torch.utils._python_dispatch import TorchDispatchMode

    class Record(TorchDispatchMode):  # type: ignore[no-untyped-call]
        def __torch_dispatch__(
            self, func: Any, types: Any, args: Any = (), kwargs: Any = None
        ) -> Any:
            kwargs = kwargs or {}
            result = func(*args, **kwargs)
            outputs = list(recorder.tensors(result))
            if outputs:
                name = str(getattr(func, "overloadpacket", func).__name__)
                if name == "add" and between():
                    name = _accumulated(args, outputs[0])
                target().append(recorder.describe(name, args, kwargs, outputs))
            return result

    return Record()  # type: ignore[no-untyped-call]


def _accumulated(args: Any, result: Any) -> str:
    """The name the engine's sum of two gradients runs under without a dispatch mode
    (`_dispatch`): ``add_`` when the gradient already buffered (the first operand) is
    a dense tensor of `result`'s shape and dtype, else ``add``."""
    held = args[0]
    in_place = (
        hasattr(held, "stride")
        and held.shape == result.shape
        and held.dtype == result.dtype
        and _dense(held.shape, held.stride())
    )
    return "add_" if in_place else "add"


def _dense(shape: Any, strides: Any) -> bool:
    """Whether a tensor of `shape` and `strides` covers one block of memory with no
    element twice (``is_non_overlapping_and_dense``): its dimensions, by stride, are
    contiguous in some order.

    >>> _dense((4, 3), (3, 1)), _dense((4, 3), (1, 4)), _dense((4, 3), (0, 1))
    (True, True, False)
    """
    expected = 1
    for stride, size in sorted((t, s) for s, t in zip(shape, strides, strict=True) if s != 1):
        if stride != expected:
            return False
        expected *= size
    return True

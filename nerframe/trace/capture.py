"""Recording a live PyTorch model: module calls, their attributes, shapes, times and
the data edges between them.

`capture` runs the model ``warmup`` times unrecorded, once for the structure and
``repeats`` times for the clock:

- the structure run puts forward pre- and post-hooks (``with_kwargs=True``) on
  every module and a ``TorchFunctionMode`` that tracks, for every tensor, the
  module outputs (ports) it derives from (its provenance). A call's ``sources``
  are the provenance of its arguments, so edges follow the data, never
  caller→callee; on return each new output tensor is re-labelled as that call's
  port (``output_sources`` keeps, per output, what it came from before;
  arguments handed back unchanged keep their provenance);
- the same mode records, for every call, the torch functions it ran itself (its
  *kernels*: name, input and output shapes and dtypes, and whether the first output
  is fresh memory, reused memory — ``out=``, in place — or a view of an input);
  the host model (`nerframe.trace.host`) predicts a call's time from them;
- the timed runs keep only light hooks that read the clock; a call's time is the
  median over the runs of its inclusive wall time. The tracking mode is off
  while timing, so its overhead is not measured.

On ``device="cuda"`` the model and its tensor inputs are moved to the GPU and the
clock is CUDA events: each hook records an event on the current stream, and after
each run the device is synchronised before the events' elapsed times are read
(a GPU runs kernels asynchronously, so host wall time between hooks would measure
launches, not work). Without CUDA, ``device="cuda"`` is one error line.

The model runs under ``torch.no_grad()`` (an inference pass) unless ``grad``.
torch is imported only here, when a capture is made; everything else in
`nerframe.trace` reads trace files without it.
"""

from __future__ import annotations

import dataclasses
import importlib
import importlib.util
import math
import statistics
import sys
import time
import weakref
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from nerframe.errors import InvalidInputError, UnavailableError
from nerframe.trace.tracefile import Call, Kernel, Port, Scalar, Trace

INSTALL_HINT = "pip install 'nerframe[trace]' (a CPU-only torch: pip install torch==2.13.0)"

_MAX_LIST = 64  # longer attribute lists are not "key attributes"
_MAX_DEPTH = 8  # nesting searched for tensors in arguments and results


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise UnavailableError(
            f"capturing a trace needs PyTorch: {INSTALL_HINT}", "torch"
        ) from None
    return torch


class Timer:
    """Host wall time: ``mark`` reads the clock, ``seconds`` is the time between two marks.

    The interface of every capture clock (`CudaTimer` records events instead); a test
    may pass its own to `capture`.

    >>> t = Timer(); a = t.mark(); t.synchronize(); t.seconds(a, t.mark()) >= 0
    True
    """

    def mark(self) -> Any:
        """A point in time (here: `time.perf_counter`)."""
        return time.perf_counter()

    def synchronize(self) -> None:
        """Wait until every mark made so far can be read (nothing to wait for on a CPU)."""

    def seconds(self, start: Any, end: Any) -> float:
        """Seconds from mark `start` to mark `end`."""
        return float(end - start)


class CudaTimer(Timer):
    """CUDA events: a mark is an event recorded on the current stream; `synchronize`
    waits for the device, after which ``elapsed_time`` (milliseconds) can be read."""

    def __init__(self, torch: Any) -> None:
        self.torch = torch

    def mark(self) -> Any:
        event = self.torch.cuda.Event(enable_timing=True)
        event.record()
        return event

    def synchronize(self) -> None:
        self.torch.cuda.synchronize()

    def seconds(self, start: Any, end: Any) -> float:
        return float(start.elapsed_time(end)) / 1e3


DEVICES = ("cpu", "cuda")
"""The devices `capture` runs a model on."""


def _on_device(torch: Any, device: str, model: Any, inputs: tuple[Any, ...]) -> tuple[Any, ...]:
    """`inputs` on `device` (the model is moved in place); a clear error without CUDA."""
    if device not in DEVICES:
        raise InvalidInputError(
            f"capture: device must be one of {', '.join(DEVICES)}, got {device!r}"
        )
    if device == "cuda" and not torch.cuda.is_available():
        built = getattr(torch.version, "cuda", None)
        why = "no CUDA device is visible" if built else "this torch is built without CUDA"
        raise UnavailableError(
            f"capture: --device cuda: CUDA is not available ({why}; torch {torch.__version__})",
            "cuda",
        )
    model.to(device)
    return tuple(x.to(device) if isinstance(x, torch.Tensor) else x for x in inputs)


def capture(
    model: Any,
    *inputs: Any,
    repeats: int = 5,
    warmup: int = 1,
    grad: bool = False,
    name: str | None = None,
    device: str = "cpu",
    timer: Timer | None = None,
    threads: int | None = None,
    train: bool = False,
) -> Trace:
    """Record `model(*inputs)`: every module call with its classes, module path, key
    attributes, parameter shapes, input and output shapes, provenance edges and
    median wall time over `repeats` timed runs (after `warmup` unrecorded ones), and
    the kernels each call ran. `device` is ``cpu`` or ``cuda`` (the model and its
    tensor inputs are moved there; CUDA calls are timed with `CudaTimer`); `timer`
    replaces the clock (tests inject one); `threads` sets torch's intra-op threads for
    the capture (default: as they are; the trace records the count). `train` records
    one training iteration instead (`nerframe.trace.training`: forward, loss, backward
    per module, Adam step).

    >>> import importlib.util
    >>> if importlib.util.find_spec("torch"):  # the example needs nerframe[trace]
    ...     import torch
    ...     call = capture(torch.nn.Linear(3, 4), torch.ones(8, 3), repeats=1).calls[0]
    ...     print(call.attributes["out_features"], call.outputs, call.time_s > 0)
    ... else:
    ...     print(4, [[8, 4]], True)
    4 [[8, 4]] True
    """
    torch = _torch()
    if not isinstance(model, torch.nn.Module):
        raise InvalidInputError(
            f"capture: model must be a torch.nn.Module, got {type(model).__name__}"
        )
    for what, value, least in (("repeats", repeats, 1), ("warmup", warmup, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise InvalidInputError(f"capture: {what} must be an integer >= {least}, got {value!r}")
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
    ):
        raise InvalidInputError(f"capture: threads must be an integer >= 1, got {threads!r}")
    inputs = _on_device(torch, device, model, inputs)
    restore = torch.get_num_threads()
    if threads is not None:
        torch.set_num_threads(threads)
    try:
        if train:
            from nerframe.trace.training import capture_train

            clock = timer or (CudaTimer(torch) if device == "cuda" else Timer())
            return capture_train(torch, model, inputs, repeats, warmup, name, device, clock)
        return _capture(torch, model, inputs, repeats, warmup, grad, name, device, timer)
    finally:
        torch.set_num_threads(restore)


def _capture(
    torch: Any,
    model: Any,
    inputs: tuple[Any, ...],
    repeats: int,
    warmup: int,
    grad: bool,
    name: str | None,
    device: str,
    timer: Timer | None,
) -> Trace:
    if timer is None:
        timer = CudaTimer(torch) if device == "cuda" else Timer()
    paths: dict[int, str] = {}
    for path, module in model.named_modules(remove_duplicate=False):
        paths.setdefault(id(module), path)
    recorder = _Recorder(torch, paths)
    context = torch.enable_grad if grad else torch.no_grad
    with context():
        for _ in range(warmup):
            model(*inputs)
        with recorder.hooks(model, recorder.enter, recorder.leave), recorder.mode():
            model(*inputs)
        order = [c["module"] for c in recorder.calls]
        times: list[list[float]] = [[] for _ in order]
        totals: list[float] = []
        for _ in range(repeats):
            clock = _Clock(timer)
            with recorder.hooks(model, clock.enter, clock.leave):
                timer.synchronize()  # nothing queued before the run is counted in it
                start = timer.mark()
                model(*inputs)
                end = timer.mark()
            timer.synchronize()
            totals.append(timer.seconds(start, end))
            if clock.order != order:
                raise InvalidInputError(
                    "capture: the model made different module calls in two runs with the same "
                    "inputs; a trace needs a deterministic forward pass"
                )
            for i, elapsed in enumerate(clock.seconds()):
                times[i].append(elapsed)
    calls = [
        Call(time_s=statistics.median(times[i]), **{k: v for k, v in c.items() if k != "module"})
        for i, c in enumerate(recorder.calls)
    ]
    return Trace(
        model=name or type(model).__name__,
        calls=calls,
        total_s=statistics.median(totals),
        repeats=repeats,
        warmup=warmup,
        torch=str(torch.__version__),
        device=device,
        threads=torch.get_num_threads(),
        # the GPU model runs float32 GEMMs on TF32 tensor cores only when this was on
        extra={"tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32)}
        if device == "cuda"
        else {},
    )


class _Clock:
    """Inclusive time of every call, in call order: a mark on entry and on exit, read
    (`seconds`) once the run is over and the timer synchronised."""

    def __init__(self, timer: Timer) -> None:
        self.timer = timer
        self.order: list[int] = []
        self.marks: list[list[Any]] = []
        self.open: list[int] = []

    def enter(self, module: Any, args: Any, kwargs: Any) -> None:
        self.open.append(len(self.order))
        self.order.append(id(module))
        self.marks.append([self.timer.mark(), None])

    def leave(self, module: Any, args: Any, kwargs: Any, output: Any) -> None:
        self.marks[self.open.pop()][1] = self.timer.mark()

    def seconds(self) -> list[float]:
        return [self.timer.seconds(start, end) for start, end in self.marks]


class _Recorder:
    """The structure run: calls, shapes and tensor provenance."""

    def __init__(self, torch: Any, paths: dict[int, str]) -> None:
        self.torch = torch
        self.paths = paths
        self.calls: list[dict[str, Any]] = []
        self.stack: list[int] = []
        self.passed: list[set[int]] = []  # ids of each open call's argument tensors
        # id(tensor) -> (weak reference, the calls it derives from); the reference
        # tells a live tensor from a new one that reuses a dead one's id.
        self.provenance: dict[int, tuple[weakref.ref[Any], frozenset[Port]]] = {}
        self.in_hook = False  # the hooks' own tensor reads are not the model's kernels

    def kernel(self, func: Any, args: Any, kwargs: Any, outputs: list[Any]) -> None:
        """Record torch function `func` as a kernel of the innermost open call."""
        name = str(getattr(func, "__name__", None) or type(func).__name__)
        self.calls[self.stack[-1]]["kernels"].append(self.describe(name, args, kwargs, outputs))

    def describe(self, name: str, args: Any, kwargs: Any, outputs: list[Any]) -> Kernel:
        """The kernel record of a call of function `name` that returned `outputs`."""
        inputs = list(self.tensors((args, kwargs)))
        first = outputs[0]
        if kwargs.get("out") is not None or kwargs.get("inplace") is True or _in_place(name):
            memory = "reused"
        elif any(_same_storage(first, t) for t in inputs):
            memory = "view"
        else:
            memory = "fresh"
        return Kernel(
            name,
            [list(t.shape) for t in inputs],
            [_dtype(t) for t in inputs],
            [list(t.shape) for t in outputs],
            [_dtype(t) for t in outputs],
            memory,
        )

    @staticmethod
    def hooks(model: Any, enter: Callable[..., None], leave: Callable[..., None]) -> Any:
        from contextlib import contextmanager

        @contextmanager
        def installed() -> Iterator[None]:
            handles = []
            try:
                for module in model.modules():
                    handles.append(module.register_forward_pre_hook(enter, with_kwargs=True))
                    handles.append(module.register_forward_hook(leave, with_kwargs=True))
                yield
            finally:
                for handle in handles:
                    handle.remove()

        return installed()

    def mode(self) -> Any:
        recorder = self

        class Provenance(self.torch.overrides.TorchFunctionMode):  # type: ignore[name-defined,misc]
            def __torch_function__(
                self, func: Any, types: Any, args: Any = (), kwargs: Any = None
            ) -> Any:
                kwargs = kwargs or {}
                result = func(*args, **kwargs)
                sources = recorder.sources((args, kwargs))
                outputs = list(recorder.tensors(result))
                for tensor in outputs:
                    recorder.label(tensor, sources)
                if outputs and recorder.stack and not recorder.in_hook:
                    recorder.kernel(func, args, kwargs, outputs)
                return result

        return Provenance()

    def tensors(self, value: Any, depth: int = 0) -> Iterator[Any]:
        """Tensors in `value`, depth first: tuples, lists, dicts (sorted keys), dataclasses."""
        if isinstance(value, self.torch.Tensor):
            yield value
        elif depth >= _MAX_DEPTH:
            return
        elif isinstance(value, list | tuple):
            for item in value:
                yield from self.tensors(item, depth + 1)
        elif isinstance(value, dict):
            for key in sorted(value, key=str):
                yield from self.tensors(value[key], depth + 1)
        elif dataclasses.is_dataclass(value) and not isinstance(value, type):
            for f in dataclasses.fields(value):
                yield from self.tensors(getattr(value, f.name, None), depth + 1)

    def sources(self, value: Any) -> frozenset[Port]:
        found: set[Port] = set()
        for tensor in self.tensors(value):
            entry = self.provenance.get(id(tensor))
            if entry is not None and entry[0]() is tensor:
                found |= entry[1]
        return frozenset(found)

    def label(self, tensor: Any, sources: frozenset[Port]) -> None:
        if sources:
            self.provenance[id(tensor)] = (weakref.ref(tensor), sources)
        else:
            self.provenance.pop(id(tensor), None)

    def enter(self, module: Any, args: Any, kwargs: Any) -> None:
        self.in_hook = True
        try:
            self._enter(module, args, kwargs)
        finally:
            self.in_hook = False

    def leave(self, module: Any, args: Any, kwargs: Any, output: Any) -> None:
        self.in_hook = True
        try:
            self._leave(module, args, kwargs, output)
        finally:
            self.in_hook = False

    def _enter(self, module: Any, args: Any, kwargs: Any) -> None:
        index = len(self.calls)
        self.calls.append(
            {
                "module": id(module),
                "id": index,
                "parent": self.stack[-1] if self.stack else None,
                "path": self.paths.get(id(module), f"<unregistered {type(module).__name__}>"),
                "classes": [
                    f"{k.__module__}.{k.__qualname__}"
                    for k in type(module).__mro__
                    if k is not object
                ],
                "attributes": self.attributes(module),
                "params": {
                    name: list(value.shape)
                    for table in (module._parameters, module._buffers)
                    for name, value in table.items()
                    if value is not None
                },
                "inputs": [list(t.shape) for t in self.tensors((args, kwargs))],
                "input_dtypes": [_dtype(t) for t in self.tensors((args, kwargs))],
                "sources": sorted(self.sources((args, kwargs))),
                "kernels": [],
            }
        )
        self.stack.append(index)
        self.passed.append({id(t) for t in self.tensors((args, kwargs))})

    def _leave(self, module: Any, args: Any, kwargs: Any, output: Any) -> None:
        index = self.stack.pop()
        passed = self.passed.pop()
        call = self.calls[index]
        outputs = list(self.tensors(output))
        call["outputs"] = [list(t.shape) for t in outputs]
        call["output_dtypes"] = [_dtype(t) for t in outputs]
        call["output_sources"] = [sorted(self.sources(t)) for t in outputs]
        for position, tensor in enumerate(outputs):
            # An argument handed back unchanged (a ray bundle's camera indices put into
            # the samples) still comes from where it came from.
            if id(tensor) not in passed:
                self.label(tensor, frozenset({(index, position)}))

    def attributes(self, module: Any) -> dict[str, Scalar | list[Scalar]]:
        """Public attributes: numbers, text, short lists or small tensors of numbers."""
        found: dict[str, Scalar | list[Scalar]] = {}
        for key, value in sorted(vars(module).items()):
            if key.startswith("_"):
                continue
            if isinstance(value, self.torch.Tensor):
                if value.numel() > _MAX_LIST:
                    continue
                value = value.detach().cpu().reshape(-1).tolist()
            elif (
                hasattr(value, "item")
                and hasattr(value, "dtype")
                and getattr(value, "ndim", 1) == 0
            ):
                value = value.item()  # a numpy scalar
            scalar = _scalar(value)
            if scalar is not None:
                found[key] = scalar
            elif isinstance(value, list | tuple) and len(value) <= _MAX_LIST:
                items = [_scalar(v) for v in value]
                if all(v is not None for v in items):
                    found[key] = [v for v in items if v is not None]
        return found


def _in_place(name: str) -> bool:
    """Whether torch function `name` writes into its first argument (``add_``, ``__iadd__``)."""
    return (name.endswith("_") and not name.startswith("_")) or name in _AUGMENTED


_AUGMENTED = frozenset(
    f"__i{op}__"
    for op in ("add", "sub", "mul", "matmul", "truediv", "floordiv", "mod", "pow", "and", "or")
)
"""Augmented assignments (``x += y``): they write into ``x``."""


def _same_storage(a: Any, b: Any) -> bool:
    """Whether tensors `a` and `b` share memory (a view and its base)."""
    try:
        pointer = a.untyped_storage().data_ptr()
        return bool(pointer != 0 and pointer == b.untyped_storage().data_ptr())
    except (RuntimeError, NotImplementedError):  # tensors without storage (meta, sparse)
        return False


def _dtype(tensor: Any) -> str:
    """A tensor's dtype as the trace file records it: ``float32`` for ``torch.float32``."""
    return str(tensor.dtype).removeprefix("torch.")


def _scalar(value: object) -> Scalar | None:
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None


def load_target(target: str) -> tuple[Any, tuple[Any, ...]]:
    """``(model, inputs)`` from ``MODULE:FUNC`` (a dotted module or a ``.py`` file);
    FUNC takes no arguments and returns the model and its input (or a tuple of inputs)."""
    module_name, _, function = target.rpartition(":")
    if not module_name or not function:
        raise InvalidInputError(f"expected MODULE:FUNC (e.g. mymodels.py:build), got {target!r}")
    _torch()
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise InvalidInputError(f"{path}: no such file")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None:
                raise InvalidInputError(f"{path}: cannot load it as a module")
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except ImportError as e:
        raise InvalidInputError(f"{target}: cannot import {module_name!r} ({e})") from None
    build = getattr(module, function, None)
    if not callable(build):
        raise InvalidInputError(f"{target}: {module_name!r} has no function {function!r}")
    built = build()
    if not (isinstance(built, tuple) and len(built) == 2):
        raise InvalidInputError(f"{target}: {function}() must return (model, inputs)")
    model, inputs = built
    return model, tuple(inputs) if isinstance(inputs, list | tuple) else (inputs,)

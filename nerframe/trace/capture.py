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
- the timed runs keep only light hooks that read the clock; a call's time is the
  median over the runs of its inclusive wall time. The tracking mode is off
  while timing, so its overhead is not measured.

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

from nerframe.errors import NerframeError
from nerframe.trace.tracefile import Call, Port, Scalar, Trace

INSTALL_HINT = "pip install 'nerframe[trace]' (a CPU-only torch: pip install torch==2.13.0)"

_MAX_LIST = 64  # longer attribute lists are not "key attributes"
_MAX_DEPTH = 8  # nesting searched for tensors in arguments and results


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise NerframeError(f"capturing a trace needs PyTorch: {INSTALL_HINT}") from None
    return torch


def capture(
    model: Any,
    *inputs: Any,
    repeats: int = 5,
    warmup: int = 1,
    grad: bool = False,
    name: str | None = None,
) -> Trace:
    """Record `model(*inputs)`: every module call with its classes, module path, key
    attributes, parameter shapes, input and output shapes, provenance edges and
    median wall time over `repeats` timed runs (after `warmup` unrecorded ones).

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
        raise NerframeError(f"capture: model must be a torch.nn.Module, got {type(model).__name__}")
    for what, value, least in (("repeats", repeats, 1), ("warmup", warmup, 0)):
        if isinstance(value, bool) or not isinstance(value, int) or value < least:
            raise NerframeError(f"capture: {what} must be an integer >= {least}, got {value!r}")
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
            clock = _Clock()
            with recorder.hooks(model, clock.enter, clock.leave):
                start = time.perf_counter()
                model(*inputs)
                totals.append(time.perf_counter() - start)
            if clock.order != order:
                raise NerframeError(
                    "capture: the model made different module calls in two runs with the same "
                    "inputs; a trace needs a deterministic forward pass"
                )
            for i, elapsed in enumerate(clock.elapsed):
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
    )


class _Clock:
    """Inclusive wall time of every call, in call order."""

    def __init__(self) -> None:
        self.order: list[int] = []
        self.elapsed: list[float] = []
        self.open: list[tuple[int, float]] = []

    def enter(self, module: Any, args: Any, kwargs: Any) -> None:
        self.open.append((len(self.order), time.perf_counter()))
        self.order.append(id(module))
        self.elapsed.append(0.0)

    def leave(self, module: Any, args: Any, kwargs: Any, output: Any) -> None:
        index, start = self.open.pop()
        self.elapsed[index] = time.perf_counter() - start


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
                for tensor in recorder.tensors(result):
                    recorder.label(tensor, sources)
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
            }
        )
        self.stack.append(index)
        self.passed.append({id(t) for t in self.tensors((args, kwargs))})

    def leave(self, module: Any, args: Any, kwargs: Any, output: Any) -> None:
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
        raise NerframeError(f"expected MODULE:FUNC (e.g. mymodels.py:build), got {target!r}")
    _torch()
    try:
        if module_name.endswith(".py"):
            path = Path(module_name)
            if not path.is_file():
                raise NerframeError(f"{path}: no such file")
            spec = importlib.util.spec_from_file_location(path.stem, path)
            if spec is None or spec.loader is None:
                raise NerframeError(f"{path}: cannot load it as a module")
            module = importlib.util.module_from_spec(spec)
            sys.modules[path.stem] = module
            spec.loader.exec_module(module)
        else:
            module = importlib.import_module(module_name)
    except ImportError as e:
        raise NerframeError(f"{target}: cannot import {module_name!r} ({e})") from None
    build = getattr(module, function, None)
    if not callable(build):
        raise NerframeError(f"{target}: {module_name!r} has no function {function!r}")
    built = build()
    if not (isinstance(built, tuple) and len(built) == 2):
        raise NerframeError(f"{target}: {function}() must return (model, inputs)")
    model, inputs = built
    return model, tuple(inputs) if isinstance(inputs, list | tuple) else (inputs,)

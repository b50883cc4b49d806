"""The recording machinery of `nerframe.trace.capture` and `nerframe.trace.training`:
clocks (host wall time or CUDA events) and the structure run's recorder of calls,
shapes, kernels and tensor provenance. torch is handed in by the caller; nothing here
imports it."""

from __future__ import annotations

import dataclasses
import math
import time
import weakref
from collections.abc import Callable, Iterator
from typing import Any

import numpy as np

from nerframe.trace.tracefile import Kernel, Port, Scalar

_MAX_LIST = 64  # longer attribute lists are not "key attributes"
_MAX_DEPTH = 8  # nesting searched for tensors in arguments and results


def run_environment(torch: Any, device: str) -> dict[str, Any]:
    """The fields of a `Trace` that describe where it ran: torch's version, the device,
    the thread count and, on CUDA, whether float32 GEMMs ran on TF32 tensor cores (the
    GPU model uses them only when this was on)."""
    return {
        "torch": str(torch.__version__),
        "device": device,
        "threads": torch.get_num_threads(),
        "extra": {"tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32)}
        if device == "cuda"
        else {},
    }


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


class Clock:
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


class Recorder:
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
            [dtype_name(t) for t in inputs],
            [list(t.shape) for t in outputs],
            [dtype_name(t) for t in outputs],
            memory,
            max_row_lookups(name, args, kwargs),
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
                "input_dtypes": [dtype_name(t) for t in self.tensors((args, kwargs))],
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
        call["output_dtypes"] = [dtype_name(t) for t in outputs]
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


_PUTS = frozenset({"index_put", "index_put_", "_index_put_impl_"})
_INDEX_ADDS = frozenset({"index_add", "index_add_"})
_SCATTER_ADDS = frozenset({"scatter_add", "scatter_add_"})


def max_row_lookups(name: str, args: Any, kwargs: Any) -> int:
    """The most lookups a scatter-add adds into one destination row (0: not a
    scatter-add, or one whose destinations this cannot tell).

    Counted from the index values of an ``index_put`` with ``accumulate`` (the
    backward of a gather ``table[idx]``: integer indices, broadcast together, name one
    row of the indexed dimensions), an ``index_add`` (a 1-D index along ``dim``), a
    ``scatter_add`` (an index per element: its "row" is one destination element) or an
    ``embedding_dense_backward`` (its ``padding_idx`` row is skipped, as torch skips
    it). On a GPU torch sorts the lookups by row and one thread adds a row's lookups
    one after another (pytorch aten/src/ATen/native/cuda/Indexing.cu,
    ``index_put_with_sort_kernel``), and an ``index_add``'s atomic adds to one row
    resolve one after another, so the longest run bounds the kernel's time. A
    boolean mask selects each row at most once and is not counted here. Tensors are
    read as arrays (on the host).

    >>> import numpy as np
    >>> table, idx = np.zeros((8, 2)), np.array([[3, 3], [5, 3]])
    >>> max_row_lookups("index_put", (table, [idx], np.ones((2, 2, 2)), True), {})
    3
    >>> max_row_lookups("index_put", (table, [idx], np.ones((2, 2, 2))), {})  # no accumulate
    0
    >>> index = np.array([[0, 0, 1], [1, 1, 1]])  # row 0 adds twice into column 0
    >>> max_row_lookups("scatter_add", (np.zeros((2, 4)), 1, index, np.ones((2, 3))), {})
    3
    """
    try:
        if name in _PUTS:
            accumulate = kwargs.get("accumulate", len(args) > 3 and args[3])
            rows = _put_rows(args[0].shape, args[1]) if accumulate else None
        elif name in _INDEX_ADDS:
            rows = _array(args[2]).reshape(-1) % args[0].shape[args[1]]
        elif name in _SCATTER_ADDS:
            rows = _scatter_rows(args[0].shape, args[1], args[2])
        elif name == "embedding_dense_backward":
            rows = _array(args[1]).reshape(-1)
            rows = rows[rows != args[3]] if len(args) > 3 and args[3] >= 0 else rows
        else:
            return 0
    except (IndexError, TypeError, ValueError, RuntimeError, AttributeError, NotImplementedError):
        return 0  # a call this reading does not foresee (a meta tensor, odd arguments)
    if rows is None or rows.size == 0:
        return 0
    # a table no larger than a few times the lookups is counted densely (no sort)
    if int(rows.max()) < 4 * rows.size:
        return int(np.bincount(rows).max())
    return int(np.unique(rows, return_counts=True)[1].max())


def _put_rows(shape: Any, indices: Any) -> np.ndarray | None:
    """Each lookup's destination row of an ``index_put`` into a table of `shape` at
    `indices`: its coordinates in the indexed dimensions, linearised (None when an index
    is a mask or none is given)."""
    index = [(d, _array(t)) for d, t in enumerate(indices) if t is not None]
    if not index or any(a.dtype.kind not in "iu" or a.dtype == np.uint8 for _, a in index):
        return None
    broadcast = np.broadcast_arrays(*(a.astype(np.int64) for _, a in index))
    rows = np.zeros(broadcast[0].shape, np.int64)
    for (d, _), b in zip(index, broadcast, strict=True):
        rows = rows * shape[d] + b % shape[d]
    return rows.reshape(-1)


def _scatter_rows(shape: Any, dim: int, index: Any) -> np.ndarray:
    """Each index element's destination of a ``scatter_add`` into a tensor of `shape`
    along `dim`: its own coordinates with the one along `dim` replaced by its value,
    linearised (elements that differ only along `dim` share every other coordinate)."""
    along = np.moveaxis(_array(index).astype(np.int64), dim, -1)
    groups = along.reshape(-1, along.shape[-1])
    size = int(shape[dim])
    first = np.arange(groups.shape[0], dtype=np.int64)[:, None] * size
    rows: np.ndarray = (first + groups % size).reshape(-1)
    return rows


def _array(tensor: Any) -> np.ndarray:
    """A tensor's values as a host array (an array stays as it is)."""
    if hasattr(tensor, "detach"):
        tensor = tensor.detach().cpu().numpy()
    return np.asarray(tensor)


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


def dtype_name(tensor: Any) -> str:
    """A tensor's dtype as the trace file records it: ``float32`` for ``torch.float32``."""
    return str(tensor.dtype).removeprefix("torch.")


def _scalar(value: object) -> Scalar | None:
    if isinstance(value, bool | int | str):
        return value
    if isinstance(value, float) and math.isfinite(value):
        return value
    return None

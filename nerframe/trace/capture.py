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

import importlib
import importlib.util
import statistics
import sys
from pathlib import Path
from typing import Any

from nerframe.errors import InvalidInputError, UnavailableError
from nerframe.trace.recording import Clock, CudaTimer, Recorder, Timer, run_environment
from nerframe.trace.tracefile import Call, Trace

INSTALL_HINT = "pip install 'nerframe[trace]' (a CPU-only torch: pip install torch==2.13.0)"


DEVICES = ("cpu", "cuda")
"""The devices `capture` runs a model on."""


def _torch() -> Any:
    try:
        import torch
    except ImportError:
        raise UnavailableError(
            f"capturing a trace needs PyTorch: {INSTALL_HINT}", "torch"
        ) from None
    return torch


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
    recorder = Recorder(torch, paths)
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
            clock = Clock(timer)
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
        **run_environment(torch, device),
    )


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

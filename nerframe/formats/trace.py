"""The trace file (``*.trace.json``): the module calls `nerframe.trace.capture` recorded.

Cross-references (parents and sources point to earlier calls, ports to existing
outputs) are checked by `nerframe.trace.tracefile.parse_trace` after this model.

>>> from nerframe.formats import convert
>>> t = convert({"format": "nerframe-trace", "version": 3, "calls": [{"id": 0, "classes": ["M"],
...              "inputs": [[2, 3]], "input_dtypes": ["float32"]}]}, TraceFile, source="t")
>>> t.calls[0].inputs, t.calls[0].input_dtypes, t.calls[0].time_s
([[2, 3]], ['float32'], 0.0)
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

import msgspec

Size = Annotated[int, msgspec.Meta(ge=0)]
Shape = list[Size]
"""A tensor's shape: its sizes, each >= 0."""
Port = tuple[Size, Size]
"""``[call, index]``: the index-th output tensor of a call."""
Seconds = Annotated[float, msgspec.Meta(ge=0)]
Scalar = int | float | bool | str
DType = Annotated[str, msgspec.Meta(min_length=1, max_length=64)]


class KernelRecord(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, gc=False):
    """One torch function a call ran itself (not inside a child module), in order."""

    name: Annotated[str, msgspec.Meta(min_length=1, max_length=128)]
    """The function's name (``linear``, ``__getitem__``, ``cat``…)."""
    inputs: list[Shape] = []
    """Shapes of its tensor arguments, in order."""
    input_dtypes: list[DType] = []
    """Their torch dtypes."""
    outputs: list[Shape] = []
    """Shapes of the tensors it returned."""
    output_dtypes: list[DType] = []
    """Their torch dtypes."""
    memory: Literal["fresh", "reused", "view"] = "fresh"
    """Where its first output lives: newly allocated memory, memory that existed before
    (``out=``, in place), or an input's storage (a view: no data moved)."""
    max_row_lookups: Size = 0
    """Of a scatter-add (``index_put`` with accumulate, ``index_add``, ``scatter_add``…):
    the most lookups that add into one destination row, counted at capture (0: not
    recorded)."""


class CallRecord(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, gc=False):
    """One recorded module call."""

    id: Size
    """Call order (pre-order: a parent before its children); must equal the position."""
    classes: Annotated[list[Annotated[str, msgspec.Meta(min_length=1)]], msgspec.Meta(min_length=1)]
    """The class, then its bases (method resolution order), qualified names."""
    parent: Size | None = None
    """Id of the enclosing module call, or null."""
    path: str = ""
    """Module path in the model (``""`` for the model itself)."""
    attributes: dict[str, Scalar | list[Scalar]] = {}
    """Public scalar or small-list attributes of the module."""
    params: dict[str, Shape] = {}
    """Shapes of the module's own parameters and buffers."""
    inputs: list[Shape] = []
    """Shapes of every tensor in the arguments, in order."""
    outputs: list[Shape] = []
    """Shapes of every tensor in the result, in order."""
    input_dtypes: list[DType] = []
    """torch dtype of each input tensor (``float32``…); empty in version-1 files."""
    output_dtypes: list[DType] = []
    """torch dtype of each output tensor; empty in version-1 files."""
    sources: list[Port] = []
    """The outputs the inputs derive from (the data edges)."""
    output_sources: list[list[Port]] = []
    """Per output: the ports it derives from."""
    time_s: Seconds = 0.0
    """Median inclusive wall time of the call."""
    kernels: list[KernelRecord] = []
    """The torch functions the call ran itself, in order; empty before version 3."""
    backward_s: Seconds = 0.0
    """A training trace: median inclusive time of the call's backward (its autograd
    nodes and its descendants')."""
    backward_kernels: list[KernelRecord] = []
    """A training trace: the aten functions its own autograd nodes ran in the backward."""


class TrainRecord(msgspec.Struct, forbid_unknown_fields=True, kw_only=True, gc=False):
    """One training iteration (``trace capture --train``): forward, loss, backward, step."""

    loss: str = "output.square().mean()"
    """The loss the backward starts from."""
    optimizer: str = "torch.optim.Adam"
    """The optimizer whose step ends the iteration."""
    parameters: Size = 0
    """Trainable parameters (elements) the optimizer updates."""
    loss_s: Seconds = 0.0
    """Median time of the loss's forward."""
    backward_s: Seconds = 0.0
    """Median time of the whole ``loss.backward()``."""
    optimizer_s: Seconds = 0.0
    """Median time of ``optimizer.step()``."""
    iteration_s: Seconds = 0.0
    """Median time of the whole iteration (forward, loss, backward, step)."""
    loss_kernels: list[KernelRecord] = []
    """The loss's forward kernels and the backward's kernels outside every module."""
    optimizer_kernels: list[KernelRecord] = []
    """The functions the optimizer step ran."""


class TraceFile(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A trace file."""

    format: Literal["nerframe-trace"]
    """Always ``nerframe-trace``."""
    version: Literal[1, 2, 3]
    """3 (2: written before kernels were recorded; 1: before dtypes were)."""
    calls: list[CallRecord]
    """The calls, in order."""
    model: str = ""
    """The model's class name."""
    torch: str = ""
    """The torch version that ran it."""
    repeats: Annotated[int, msgspec.Meta(ge=1)] = 1
    """Timed runs (times are their medians)."""
    warmup: Size = 0
    """Untimed runs before them."""
    total_s: Seconds = 0.0
    """Median wall time of one whole forward."""
    device: Annotated[str, msgspec.Meta(min_length=1, max_length=64)] = "cpu"
    """Where the model ran (``cpu``, ``cuda``); version 3."""
    threads: Size = 0
    """torch's intra-op threads during the capture (0: not recorded, before version 3)."""
    extra: dict[str, Any] = {}
    """Anything else, kept as is."""
    train: TrainRecord | None = None
    """A training trace (``trace capture --train``): the iteration's other parts."""

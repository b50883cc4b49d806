"""The kernels' own error: a plain `ValueError` naming the faulty input.

Kernels import nothing from the API layer, so they cannot raise nerframe's error
classes; they raise `KernelInputError` (or `CyclicEdgesError` for a cyclic graph)
with the message, culprit and indices the API layer needs, and
`nerframe.kernel_faults` turns it into `nerframe.InvalidInputError` (or
`nerframe.CycleError`) with the same message.

>>> e = KernelInputError("latency of module 1 must be >= 0", "latency", module=1)
>>> isinstance(e, ValueError), e.culprit, e.module, e.op
(True, 'latency', 1, None)
>>> str(CyclicEdgesError([1, 2]))
'data edges form a cycle: 1 -> 2 -> 1'
"""

from __future__ import annotations

__all__ = ["CyclicEdgesError", "KernelInputError"]


class KernelInputError(ValueError):
    """An input array out of shape, type or range; `culprit` names it, and `op`,
    `module` and `configuration` give the indices concerned (None where they do
    not apply)."""

    def __init__(
        self,
        message: str,
        culprit: str | None = None,
        *,
        op: int | None = None,
        module: int | None = None,
        configuration: int | None = None,
    ) -> None:
        super().__init__(message)
        self.culprit = culprit
        self.op = op
        self.module = module
        self.configuration = configuration


class CyclicEdgesError(KernelInputError):
    """The edges form a cycle; `cycle` lists the op ids on one, in edge order,
    starting from the smallest."""

    def __init__(self, cycle: list[int]) -> None:
        path = " -> ".join(str(op) for op in [*cycle, cycle[0]])
        super().__init__(f"data edges form a cycle: {path}", str(cycle[0]))
        self.cycle = cycle

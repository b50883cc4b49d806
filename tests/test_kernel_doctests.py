"""The examples in the kernels' docstrings run too.

pytest's --doctest-modules covers nerframe/ only (importing kernels/ by path would
key numba's cache to the wrong module name), so the installed modules are run here.
"""

from __future__ import annotations

import doctest
import importlib

import pytest


@pytest.mark.parametrize("name", ["dag", "schedule", "schedule_inputs", "reference_schedule"])
def test_kernel_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"nerframe.kernels.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0

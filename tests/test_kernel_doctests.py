"""The examples in the kernels' docstrings run too.

pytest's --doctest-modules covers nerframe/ only (importing kernels/ by path would
key numba's cache to the wrong module name), so the installed modules are run here:
every module of ``kernels/`` whose source holds an example, found by listing the
folder (a new kernel module's examples run without editing this file).
"""

from __future__ import annotations

import doctest
import importlib
from pathlib import Path

import pytest

import nerframe.kernels

KERNELS = Path(nerframe.kernels.__file__).parent
WITH_EXAMPLES = sorted(
    path.stem
    for path in KERNELS.glob("*.py")
    if ">>> " in path.read_text(encoding="utf-8") and path.stem != "__init__"
)


def test_every_kernel_module_with_examples_is_listed() -> None:
    # the listing must find the modules known to carry examples (a wrong folder or
    # pattern would make the parametrized test below vacuous)
    assert {"dag", "schedule", "sweep_chunk", "reference_sweep", "systolic"} <= set(WITH_EXAMPLES)


@pytest.mark.parametrize("name", WITH_EXAMPLES)
def test_kernel_docstring_examples(name: str) -> None:
    module = importlib.import_module(f"nerframe.kernels.{name}")
    result = doctest.testmod(module, optionflags=doctest.ELLIPSIS)
    assert result.attempted > 0 and result.failed == 0

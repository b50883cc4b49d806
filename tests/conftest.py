"""Shared fixtures: where the read-only reference inputs of ../shared live."""

from __future__ import annotations

import importlib.util
import json
from pathlib import Path

import pytest

# These helper modules build torch models at import time: without the trace extra
# (the lowest-versions CI run) their doctest collection would fail; the tests that
# use them skip without torch.
collect_ignore = (
    [] if importlib.util.find_spec("torch") else ["nerfstudio_models.py", "tiny_nerf.py"]
)

SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def shared() -> Path:
    """The project's sibling ``shared/`` folder (specs and reference data)."""
    if not (SHARED / "spec").is_dir():
        pytest.skip(f"optional: reference inputs not found at {SHARED} (sibling shared/ folder)")
    return SHARED


@pytest.fixture
def graph_file(tmp_path: Path) -> Path:
    """A one-op graph file (an MLP, so every built-in NeRF accelerator can run it)."""
    mlp = {"op_type": "MLP", "B": 64, "N": 8, "in_dim": 3, "num_layers": 2, "layer_width": 16}
    path = tmp_path / "mine.json"
    path.write_text(json.dumps({"ops": [mlp]}))
    return path

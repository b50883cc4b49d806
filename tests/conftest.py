"""Shared fixtures: where the read-only reference inputs of ../shared live."""

from __future__ import annotations

from pathlib import Path

import pytest

SHARED = Path(__file__).resolve().parents[2] / "shared"


@pytest.fixture(scope="session")
def shared() -> Path:
    """The project's sibling ``shared/`` folder (specs and reference data)."""
    if not (SHARED / "spec").is_dir():
        pytest.skip(f"reference inputs not found at {SHARED} (the sibling shared/ folder)")
    return SHARED

"""The store manifest (``STORE/store.json``): what was run, and the row count of each table.

``run`` is the record the writing command gave; its known keys are typed here, and
others are kept (`nerframe.store.write_manifest` takes any record).

>>> from nerframe.formats import convert
>>> m = convert({"nerframe_version": "0.1", "created": "2026-01-01T00:00:00+00:00",
...              "run": {"complete": True}, "rows": {"sweep": 4}}, Manifest, source="s")
>>> m.run.complete, m.rows
(True, {'sweep': 4})
"""

from __future__ import annotations

from typing import Annotated, Any

import msgspec

Count = Annotated[int, msgspec.Meta(ge=0)]


class Run(msgspec.Struct, kw_only=True):
    """What the command recorded: an analysis (``pipelines`` …) or a sweep (``sweep`` …)."""

    pipelines: list[str] | None = None
    """Analysis: the graphs analysed."""
    hardware: list[str] | None = None
    """Analysis: the accelerators."""
    parallelism: str | None = None
    """Analysis: split or instance."""
    pipelined: bool | None = None
    """Analysis: batches pipelined."""
    fine: bool | None = None
    """Analysis: graphs expanded."""
    rays: Count | None = None
    """Analysis: --rays given, else null."""
    samples: Count | None = None
    """Analysis: --samples given, else null."""
    gaussians: Count | None = None
    """Analysis: --gaussians given, else null."""
    model: str | None = None
    """Analysis: the workload model."""
    unknown_modules: dict[str, dict[str, Any]] | None = None
    """Analysis: per traced graph with unknown modules, their ``count``, ``classes`` and
    ``share`` of the measured time (absent when there are none)."""
    sweep: dict[str, Any] | None = None
    """Sweep: everything that determines the rows (`nerframe.sweeps.spec.spec_identity`)."""
    complete: bool | None = None
    """Sweep: every chunk written."""
    chunks: Count | None = None
    """Sweep: parts the finished sweep has."""


class Manifest(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """A store manifest."""

    nerframe_version: str
    """The version that wrote the store."""
    created: str
    """When (ISO 8601, UTC, seconds)."""
    run: Run
    """What was run."""
    rows: dict[str, Count]
    """Rows per table."""

"""The Dask backend: worker processes write the same bytes as the local backend, the
progress bar counts every row, and a bounded number of tasks is ever in flight."""

from __future__ import annotations

import io
from collections.abc import Iterator
from pathlib import Path

import pytest

import nerframe
from nerframe.progress import Progress
from nerframe.sweeps import dask as dask_backend
from nerframe.sweeps.evaluate import Task, tasks
from nerframe.sweeps.parts import part_path
from nerframe.sweeps.spec import sweep_spec

pytest.importorskip("distributed", reason="optional: the dask extra is not installed")

SPEC = {
    "graphs": ["neurex", "srender"],
    "hardware": "neurex_server",
    "workload": {"rays": [1024, 4096]},
    "grid": {"frequency_mhz": [500, 1000, 1500], "systolic_array.count": [1, 2, 4, 8]},
    "chunk_size": 5,
}


def _parts(store: Path) -> dict[Path, bytes]:
    return {p.relative_to(store): p.read_bytes() for p in sorted(store.rglob("*.parquet"))}


@pytest.mark.slow
@pytest.mark.parametrize("compression", ["none", "lz4"])
def test_worker_processes_write_the_local_backends_bytes(tmp_path: Path, compression: str) -> None:
    from distributed import LocalCluster

    spec = {**SPEC, "compression": compression}
    nerframe.sweep(spec, output=tmp_path / "local")
    bar = Progress(2 * 2 * 12, "sweep", "configs", stream=io.StringIO(), enabled=True)
    with LocalCluster(
        n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
    ) as cluster:
        rows = nerframe.sweep(
            spec,
            output=tmp_path / "dask",
            backend="dask",
            scheduler=cluster.scheduler_address,
            progress=bar,
        )
    local, remote = _parts(tmp_path / "local"), _parts(tmp_path / "dask")
    assert list(local) == list(remote) and len(local) == 2 * 2 * 3
    assert local == remote
    assert bar.done == 48 and rows.collect().height == 48


def test_tasks_in_flight_stay_bounded(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Each task is drawn from the work only once the one before the window's end is
    done: the scheduler never holds the whole campaign."""
    from distributed import LocalCluster

    monkeypatch.setattr(dask_backend, "_MIN_IN_FLIGHT", 3)
    monkeypatch.setattr(dask_backend, "_PER_THREAD", 1)
    spec = sweep_spec({**SPEC, "chunk_size": 1})  # 48 tasks
    names = ["neurex", "srender"]
    drawn: list[int] = []
    seen: list[int] = []

    def work() -> Iterator[tuple[Task, Path]]:
        for task in tasks(spec):
            drawn.append(task.number)
            yield task, part_path(tmp_path, spec, names, task)

    class Recorder(Progress):
        def advance(self, units: int) -> None:
            seen.append(len(drawn))  # drawn when this task's result came back
            super().advance(units)

    bar = Recorder(48, "sweep", "configs", stream=io.StringIO(), enabled=True)
    with LocalCluster(
        n_workers=1, threads_per_worker=2, processes=False, dashboard_address=None
    ) as cluster:
        dask_backend.run_tasks(spec, "token", work(), cluster.scheduler_address, bar)
    assert bar.done == 48 and sorted(drawn) == list(range(48))
    # when the k-th result comes back, at most 3 + (k - 1) tasks were drawn
    assert all(d <= 3 + k for k, d in enumerate(seen)), seen
    assert len(list(tmp_path.rglob("*.parquet"))) == 48

"""Planning a sweep costs the same whatever its size: chunks are counted and made one
at a time (not listed), the store's size is worked out from one sample, and a store
larger than the free disk is refused before any part is written."""

from __future__ import annotations

import shutil
import tracemalloc
from pathlib import Path
from typing import Any

import pytest

import nerframe
from nerframe.cli import main
from nerframe.errors import StoreError
from nerframe.sweeps import store as sweep_store
from nerframe.sweeps.evaluate import tasks
from nerframe.sweeps.parts import pending, task_at, written
from nerframe.sweeps.runner import bytes_at_most, run, store_bytes
from nerframe.sweeps.spec import sweep_spec

# A 10^12-configuration grid (four axes of 1000 values), as a campaign's.
TERA_GRID: dict[str, list[Any]] = {
    "frequency_mhz": list(range(100, 1100)),
    "index_generation_unit.count": list(range(1, 1001)),
    "interpolation_compute_unit.count": list(range(1, 1001)),
    "systolic_array_32x32.count": list(range(1, 1001)),
}


@pytest.mark.parametrize(
    ("graphs", "rays", "frequencies", "chunk"),
    [
        (["neurex"], [], 7, 3),
        (["neurex", "srender"], [1024, 4096], 6, 2),
        (["neurex"], [512], 5, 9),
    ],
)
def test_chunks_are_counted_and_found_as_the_list_has_them(
    graphs: list[str], rays: list[int], frequencies: int, chunk: int
) -> None:
    spec = sweep_spec(
        {
            "graphs": graphs,
            "hardware": "neurex_server",
            "workload": {"rays": rays} if rays else {},
            "grid": {"frequency_mhz": list(range(100, 100 + frequencies))},
            "chunk_size": chunk,
        }
    )
    every = list(tasks(spec))
    assert spec.chunks == len(every)
    assert [task_at(spec, n) for n in range(len(every))] == every
    done = {0, 2, len(every) - 1}
    left = [t for t in every if t.number not in done]
    assert [(t, last) for t, last in pending(spec, done)] == [(t, t is left[-1]) for t in left]


def test_written_lists_the_parts_of_a_store_not_others(tmp_path: Path) -> None:
    spec = sweep_spec(
        {
            "graphs": ["neurex", "srender"],
            "hardware": "neurex_server",
            "grid": {"frequency_mhz": [500, 1000, 1500]},
            "chunk_size": 2,
        }
    )
    store = tmp_path / "s"
    nerframe.sweep(spec, output=store)
    names = ["neurex", "srender"]
    assert written(store, spec, names) == set(range(4))
    parts = sorted(store.rglob("part-*.parquet"))
    parts[1].unlink()
    # a part of graph 0's numbers in graph 1's folder is none of this sweep's
    stray = parts[2].parent / "part-000000.parquet"
    shutil.copy(parts[0], stray)
    (parts[0].parent / "notes.txt").write_text("mine")
    assert written(store, spec, names) == {0, 2, 3}


class _FirstPart(Exception):
    """The first part's rows reached the writer: planning is over."""


def test_planning_a_tera_sweep_takes_constant_memory(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """10^12 configurations in chunks of 10,000: 10^8 chunks, which a list of tasks,
    paths and their checks (about 300 bytes each) would hold as 30 GB."""

    def first_part(*args: object) -> None:
        raise _FirstPart

    spec = sweep_spec(
        {"graphs": ["neurex"], "hardware": "neurex", "grid": TERA_GRID, "chunk_size": 10_000}
    )
    assert spec.chunks == 10**8
    nerframe.sweep("neurex", "neurex", {"frequency_mhz": [500]})  # kernels loaded
    monkeypatch.setattr(sweep_store._Writer, "put", first_part)
    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(1e18, 0, 1e18))  # type: ignore[attr-defined]
    tracemalloc.start()
    try:
        with pytest.raises(_FirstPart):
            run(spec, tmp_path / "s")
        peak = tracemalloc.get_traced_memory()[1]
    finally:
        tracemalloc.stop()
    assert peak < 10e6, f"{peak / 1e6:.0f} MB"


def test_a_store_larger_than_the_free_disk_is_refused(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    args = ["sweep", "neurex", "--hardware", "neurex", "--yes", "-o", str(tmp_path / "s")]
    args += [f"--vary={k}={','.join(map(str, v))}" for k, v in TERA_GRID.items()]
    assert main(args) != 0
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith(f"error: {tmp_path / 's'}: this sweep's store")
    # Each row holds at least its seven float64 figures, written plain: 56 TB at least.
    size, unit = err.split("would take about ")[1].split(" and")[0].split()
    assert unit == "TB" and float(size) >= 56
    free = shutil.disk_usage(tmp_path).free / 1e9
    shown = float(err.split("its disk has ")[1].split()[0])
    assert abs(shown - free) <= 0.01 * free + 0.01
    assert not (tmp_path / "s").exists()


def test_a_small_disk_refuses_a_small_store_and_a_full_one_is_resumed(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    spec = sweep_spec(
        {
            "graphs": ["neurex"],
            "hardware": "neurex",
            "grid": {"frequency_mhz": list(range(1, 2001))},
        }
    )
    store = tmp_path / "s"
    run(spec, store)
    size = sum(p.stat().st_size for p in store.rglob("*.parquet"))
    assert store_bytes(spec) == pytest.approx(size, rel=0.02)  # the oracle: the parts
    assert bytes_at_most(spec) >= size
    free = size / 2
    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(1e12, 0, free))  # type: ignore[attr-defined]
    run(spec, store)  # every part is there: nothing to write, nothing refused
    with pytest.raises(StoreError, match=r"would take about 0\.0"):
        run(spec, tmp_path / "t")
    assert not (tmp_path / "t").exists()


def test_a_compressed_store_fits_a_disk_the_plain_one_does_not(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """LZ4 parts hold the plain parts' rows in fewer bytes, their size
    is worked out from the sample, and the free-disk check counts them as compressed."""
    plain = {
        "graphs": ["neurex"],
        "hardware": "neurex",
        "chunk_size": 10_000,
        "grid": {
            "frequency_mhz": list(range(100, 600)),
            "systolic_array_32x32.count": list(range(1, 41)),
        },
    }
    lz4 = {**plain, "compression": "lz4"}
    rows = {}
    sizes = {}
    for name, spec in (("plain", plain), ("lz4", lz4)):
        store = tmp_path / name
        rows[name] = run(sweep_spec(spec), store).collect()
        sizes[name] = sum(p.stat().st_size for p in store.rglob("*.parquet"))
    assert rows["lz4"].equals(rows["plain"]) and rows["plain"].height == 20_000
    assert sizes["lz4"] < 0.7 * sizes["plain"]
    assert store_bytes(sweep_spec(lz4)) == pytest.approx(sizes["lz4"], rel=0.2)
    free = 0.85 * sizes["plain"]
    monkeypatch.setattr(shutil, "disk_usage", lambda path: shutil._ntuple_diskusage(1e12, 0, free))  # type: ignore[attr-defined]
    monkeypatch.setattr("nerframe.sweeps.runner.bytes_at_most", lambda spec: float("inf"))
    with pytest.raises(StoreError, match="would take about"):
        run(sweep_spec(plain), tmp_path / "plain2")
    run(sweep_spec(lz4), tmp_path / "lz4b")
    assert (tmp_path / "lz4b" / "store.json").exists()

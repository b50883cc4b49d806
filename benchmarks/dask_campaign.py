"""A campaign on a local Dask cluster of worker processes: a sweep of ``--points``
configurations (10^9 by default: three hardware axes of 1000 values) into a store,
with the progress bar, then each worker's peak memory.

Run it by hand (it takes a machine for a while, and tens of GB of disk for its
LZ4-compressed store, several times more with ``--compression none``; the sweep
refuses to start when the disk has less)::

    python benchmarks/dask_campaign.py --store /big/disk/campaign
    python benchmarks/dask_campaign.py --points 1e7 --workers 4   # a smaller one

It prints one JSON object: configurations, seconds, configurations per second,
the compression, store bytes (in all and per row) and each worker's peak resident
memory (MB), and exits 1 when a worker
peaked above ``--max-worker-mb``: memory per worker must not grow with the sweep.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import get_args


def _peak_mb() -> float:
    """This process's peak resident memory (Linux's high-water mark), in MB."""
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmHWM:")[1].split()[0]) / 1e3


def _grid(points: int) -> dict[str, list[float]]:
    """Three hardware axes whose product is `points` (rounded to a whole cube root)."""
    side = max(round(points ** (1 / 3)), 1)
    return {
        "frequency_mhz": [100 + i for i in range(side)],
        "index_generation_unit.count": list(range(1, side + 1)),
        "systolic_array_32x32.count": list(range(1, side + 1)),
    }


def main() -> int:
    from distributed import Client, LocalCluster

    import nerframe
    from nerframe._typing import Compression
    from nerframe.progress import Progress
    from nerframe.sweeps.spec import sweep_spec

    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--points", type=float, default=1e9)
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    parser.add_argument("--store", type=Path, help="[a temporary folder, removed after]")
    parser.add_argument("--max-worker-mb", type=float, default=2000.0)
    parser.add_argument("--compression", choices=get_args(Compression), default="lz4")
    args = parser.parse_args()
    spec = sweep_spec(
        {
            "graphs": ["neurex"],
            "hardware": "neurex",
            "grid": _grid(int(args.points)),
            "compression": args.compression,
        }
    )
    store = args.store or Path(tempfile.mkdtemp(prefix="campaign-")) / "store"
    with (
        LocalCluster(
            n_workers=args.workers,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            env={"NUMBA_NUM_THREADS": "1"},
        ) as cluster,
        Client(cluster) as client,
    ):
        start = time.perf_counter()
        with Progress(spec.configurations, "sweep", "configs") as bar:
            nerframe.sweep(
                spec,
                output=store,
                backend="dask",
                scheduler=cluster.scheduler_address,
                progress=bar,
            )
        seconds = time.perf_counter() - start
        peaks = client.run(_peak_mb)
    size = sum(p.stat().st_size for p in store.rglob("*.parquet"))
    if args.store is None:
        shutil.rmtree(store.parent)
    result = {
        "configurations": spec.configurations,
        "workers": args.workers,
        "seconds": round(seconds, 1),
        "configs_per_s": round(spec.configurations / seconds),
        "compression": args.compression,
        "store_bytes": size,
        "store_bytes_per_row": round(size / spec.configurations, 1),
        "worker_peak_mb": sorted(round(v) for v in peaks.values()),
    }
    print(json.dumps(result))
    return 0 if max(peaks.values()) <= args.max_worker_mb else 1


if __name__ == "__main__":
    sys.exit(main())

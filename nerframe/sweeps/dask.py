"""The Dask backend of sweeps: every chunk a task that writes its own Parquet part.

Needs the optional extra ``nerframe[dask]`` (``dask[distributed]``). Without a
scheduler address a `distributed.LocalCluster` on this machine runs the tasks
(one single-threaded worker process per core, numba threads 1 each); with one,
the tasks go to that cluster, whose workers must see the store's folder at the
same path (a shared file system) and have nerframe installed. Each task sets
numba's thread count to its worker's share of the cores, so workers running
several tasks do not oversubscribe the machine. The parts are byte-identical to
the local backend's: the same code computes and writes them.
"""

from __future__ import annotations

import itertools
import os
import threading
from collections.abc import Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from nerframe.errors import UnavailableError
from nerframe.progress import Progress
from nerframe.sweeps.evaluate import Evaluator, Task
from nerframe.sweeps.spec import SweepSpec

if TYPE_CHECKING:
    from distributed import Future

# One evaluator per spec per worker thread (an evaluator reuses buffers, so threads
# never share one), so consecutive tasks of one workload point reuse its mapped graph.
_LOCAL = threading.local()
# numba's workqueue threading layer (its fallback where neither TBB nor OpenMP loads)
# must not run parallel kernels from two threads at once: tasks of one worker
# process compute one at a time, whichever layer it has, and write their parts
# concurrently.
_COMPUTING = threading.Lock()


def _numba_threads() -> int:
    """Numba threads for one task: the worker's cores divided among its task threads."""
    try:
        from distributed import get_worker

        slots = max(get_worker().state.nthreads, 1)
    except (ImportError, ValueError):
        slots = 1
    return max((os.cpu_count() or 1) // slots, 1)


def write_task(spec: SweepSpec, token: str, task: Task, path: str) -> int:
    """Compute one chunk and write its part (on a worker); returns its row count.

    `token` identifies the spec (its manifest hash), so a worker process that
    outlives one sweep never reuses its evaluator for another.
    """
    import numba

    from nerframe.sweeps.parts import write_part

    numba.set_num_threads(min(_numba_threads(), numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    if getattr(_LOCAL, "token", None) != token:
        _LOCAL.token, _LOCAL.evaluate = token, Evaluator(spec)
    evaluate: Evaluator = _LOCAL.evaluate
    with _COMPUTING:
        frame = evaluate(task)
    write_part(Path(path), frame, spec.compression)
    return frame.height


# Tasks waiting on the cluster at most, per worker thread (and at least
# `_MIN_IN_FLIGHT`): enough that no thread waits for the next, few enough that the
# scheduler and this process hold a bounded share of a campaign of millions of chunks.
_PER_THREAD = 4
_MIN_IN_FLIGHT = 64


def run_tasks(
    spec: SweepSpec,
    token: str,
    work: Iterable[tuple[Task, Path]],
    scheduler: str | None,
    progress: Progress | None,
) -> None:
    """Run the tasks of `work` (a task and its part's path each, drawn as they are
    needed) on a Dask cluster, keeping a bounded number of them in flight."""
    try:
        from distributed import Client, LocalCluster, as_completed
    except ImportError:
        raise UnavailableError(
            "the dask backend needs the optional extra: pip install 'nerframe[dask]'",
            "distributed",
        ) from None
    items = iter(work)
    first = next(items, None)
    if first is None:
        return
    items = itertools.chain([first], items)
    cores = os.cpu_count() or 1
    cluster = None
    try:
        if scheduler is None:
            cluster = LocalCluster(
                n_workers=min(cores, spec.chunks),
                threads_per_worker=1,
                processes=True,
                dashboard_address=None,
                env={"NUMBA_NUM_THREADS": "1"},
            )
            client = Client(cluster)
        else:
            client = Client(scheduler, timeout="30s")
    except OSError as e:
        raise UnavailableError(
            f"dask scheduler {scheduler or 'LocalCluster'}: {e}", scheduler or "LocalCluster"
        ) from None
    try:
        shared = client.scatter(spec, broadcast=True)

        def submit(item: tuple[Task, Path]) -> Future[int]:
            task, path = item
            return client.submit(write_task, shared, token, task, str(path), pure=False)

        def in_flight() -> int:  # a cluster that scales up takes more
            return max(_PER_THREAD * sum(client.nthreads().values()), _MIN_IN_FLIGHT)

        limit = in_flight()
        running = as_completed([submit(item) for item in itertools.islice(items, limit)])
        for done, future in enumerate(running, start=1):
            rows = future.result()
            del future  # the cluster forgets a task once no future holds it
            if progress is not None:
                progress.advance(rows)
            if done % _MIN_IN_FLIGHT == 0:
                limit = in_flight()
            # one task in for each out, and more while the limit grew
            for item in itertools.islice(items, max(limit - running.count(), 0)):
                running.add(submit(item))
    finally:
        client.close()
        if cluster is not None:
            cluster.close()

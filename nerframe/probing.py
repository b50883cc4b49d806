"""The ``host`` system: this machine measured by micro-benchmarks (``nerframe probe``).

`probe` measures, with torch when it is installed (the library traced models run
on), else with NumPy, and never with a traced model:

- **fixed costs**: ``call_s``, one call of a tiny element-wise op (``add`` of two
  one-element tensors) timed over many calls; ``view_s``, one tiny ``view``;
  ``module_s``, one call of a module that does nothing, with the timing hooks
  `nerframe.trace.capture` puts on every module (torch only; 0 with NumPy);
  ``cold_s``, one call of a tiny op in a chain of 12 different tiny ops
  (element-wise, special, reduction, scan, ``cat``, ``where``, factory) timed right
  after a sweep of 64 MiB of memory (`SWEEP_BYTES`, more than a CPU's last-level
  cache), the median of 50 runs: a kernel inside a model runs once per forward
  pass, after everything else the model ran has evicted its code, its data and the
  allocator's state from the caches, where a loop of one op keeps them cached
  (``call_s``);
- **GEMM throughput**: ``linear`` (with bias, as ``nn.Linear``) on a grid of ``K × N``
  shapes, narrow to wide (1…1024), float32, for each of ``M`` = 256, 4,096 and
  16,384 rows (the rate depends on ``M`` too: ``linear`` with K, N <= 64 measured
  about half the rate at M = 8,192 as at 4,096, ``docs/model.md``);
- **bandwidth** by size, into fresh memory (``add(a, 1)``: a new output) and into
  reused memory (``add(a, 1, out=b)``), counted as the bytes read plus written;
- **element rates**: elements per second of a contiguous ``add``, of a special
  function (``sin``), of a broadcast ``mul`` (``(R, 1, 3) × (1, 64, 1)``, how a
  sampler makes its points), of an int64 ``add`` (integers: index arithmetic), of an
  int64 ``remainder`` (a division per element: a hash modulo the table size) and of
  a ``sum`` over the middle dimension of ``(P, 8, 3)`` (a reduction over a short
  dimension, as an interpolation sums a cell's 8 corners and a renderer a ray's
  samples; counted per input element): kernels that are not limited by memory
  traffic are limited by these;
- **gather rate** by table size: rows per second read at random indices from a
  table of two float32 per row (a hash grid's rows), up to Instant-NGP's 2^19 rows,
  from 16 such tables in turn (a hash grid's 16 levels: 64 MiB at 2^19 rows, more
  than a CPU's last-level cache), so that a table is not cached when its gather
  starts, as in a forward pass, where a level's table is read once and the other
  levels' tables and the rest of the model run before it is read again.

Each figure is the median over batches (the trace records medians too), and every
rate is net of ``call_s`` (a batch's time per call minus the fixed cost), so the
host model (`nerframe.trace.host`) adds the two. The record also keeps the
roofline figures (``peak_tflops``: the best GEMM rate; ``bandwidth_gbps``: the
largest reused-memory copy) that the roofline system ``host`` reads.

**Load**: a busy machine measures low. `probe` reads ``os.getloadavg()`` first and
refuses when the 1-minute load exceeds the CPU count minus 0.5 (another process
holds at least half a core on average, so a multi-threaded GEMM competes for every
core), unless ``force``; the record keeps the load before and after, the CPU count
and ``busy``.

**Format** (``nerframe schema probe``, `nerframe.formats.probe.ProbeFile`): version 4,
``"format": "nerframe-probe"``; version 4 adds ``cold_s`` and the ``integer``,
``divide`` and ``reduce`` element rates and gathers from 16 tables in turn; version 3
holds a GEMM grid per ``M``. Versions 3 and 2 are read as they are: a kernel's fixed
cost is ``call_s``, their gather rate is from one table (cached between calls), a
kernel is limited by the element rates they have, and a version-2 file's GEMM rate
(one ``M``) does not depend on ``M``. A file
without ``format`` is a version-1 result
(peak and bandwidth only, written before the host model): it is still read as the
roofline system ``host`` (`host_system`), and `host_predictor` predicts with that
roofline as before; `host_model` refuses it with a message to probe again.

The result is stored (atomically) at the path given, else at ``$NERFRAME_PROBE``,
else at ``$XDG_CACHE_HOME/nerframe/host-probe.json`` (``~/.cache`` when unset).
"""

from __future__ import annotations

import datetime
import importlib.util
import itertools
import json
import os
import platform
import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np

from nerframe.atomic import atomic_path
from nerframe.errors import InvalidInputError, NerframeError, UnavailableError
from nerframe.roofline_system import System
from nerframe.trace.host import HostModel

ENVIRONMENT = "NERFRAME_PROBE"
"""The environment variable that names the probe result's path."""

FORMAT = "nerframe-probe"
VERSION = 4
"""The version written: 4 has ``cold_s``, gathers from 16 tables in turn and has the
integer, divide and reduce element rates; 3 holds a GEMM grid per ``M``; 2 had one ``M`` (4,096); 1
peak and bandwidth only."""

GEMM_SIZES = (1, 4, 16, 64, 256, 1024)
"""The K and N of the probed GEMMs (every pair)."""
GEMM_ROWS = (256, 4096, 16384)
"""The M of the probed GEMMs (a full K × N grid for each)."""
COPY_BYTES = tuple(2**e for e in range(12, 28, 3))
"""Array sizes of the bandwidth probes (4 KiB … 128 MiB)."""
TABLE_ROWS = (2**10, 2**14, 2**19)
"""Table sizes of the gather probes (rows of two float32)."""
GATHERED = 2**18
"""Rows gathered per gather probe."""
SWEEP_BYTES = 2**26
"""Bytes the ``cold_s`` probe writes (and as many it reads) before each chain of tiny ops."""
GATHER_TABLES = 16
"""Tables the gather probe reads in turn (a hash grid's levels): each call reads the next."""
ELEMENTS = 3 * 2**16
"""Output elements of the element-rate probes (a sample batch's positions: 65,536 × 3)."""
ELEMENT_KINDS = ("simple", "special", "broadcast", "integer", "divide", "reduce")
"""Element-rate probes: ``add`` (contiguous), ``sin`` (a special function), a broadcast
``mul`` of ``(R, 1, 3)`` by ``(1, S, 1)`` (rays × samples points), an int64 ``add``,
an int64 ``remainder`` and a ``sum`` over the middle dimension of ``(P, 8, 3)`` (rates
per input element for it: a reduction reads more than it writes)."""


@dataclass(frozen=True)
class _Sizes:
    gemm: tuple[int, ...] = GEMM_SIZES
    rows: tuple[int, ...] = GEMM_ROWS
    copy: tuple[int, ...] = COPY_BYTES
    table: tuple[int, ...] = TABLE_ROWS
    gathered: int = GATHERED
    elements: int = ELEMENTS
    sweep: int = SWEEP_BYTES


QUICK = _Sizes((4, 64), (64, 256), (2**12, 2**18), (2**10,), 2**12, 3 * 2**10, 2**20)
"""The small probe of ``quick=True`` (tests, examples): the same code on small sizes."""

BUSY_MARGIN = 0.5
"""A machine is busy when its 1-minute load exceeds the CPU count minus this."""


def probe_path() -> Path:
    """Where the probe result is stored by default (see the module docstring).

    >>> import os
    >>> os.environ["NERFRAME_PROBE"] = "/tmp/p.json"; str(probe_path())
    '/tmp/p.json'
    >>> del os.environ["NERFRAME_PROBE"]
    """
    if os.environ.get(ENVIRONMENT):
        return Path(os.environ[ENVIRONMENT])
    cache = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(cache) / "nerframe" / "host-probe.json"


def busy(load1: float, cpus: int) -> bool:
    """Whether a 1-minute load of `load1` on `cpus` CPUs is too busy to probe.

    >>> busy(1.4, 2), busy(1.6, 2), busy(0.6, 1)
    (False, True, True)
    """
    return load1 > cpus - BUSY_MARGIN


def probe(
    output: str | Path | None = None,
    *,
    force: bool = False,
    quick: bool = False,
    backend: str | None = None,
    load: Callable[[], tuple[float, float, float]] | None = None,
    cpus: int | None = None,
    threads: int | None = None,
) -> dict[str, Any]:
    """Measure this machine (see the module docstring), store the record at `output`
    (default `probe_path()`) and return it. A busy machine (`busy`) is refused
    unless `force`; `quick` probes small sizes only; `backend` is ``torch`` or
    ``numpy`` (default: torch when installed); `threads` sets torch's intra-op
    threads for the probe (default: as they are; a trace is predicted with a probe of
    its own thread count); `load` and `cpus` replace ``os.getloadavg`` and
    ``os.cpu_count()`` (tests inject them).

    >>> import tempfile
    >>> path = tempfile.mkdtemp() + "/host.json"
    >>> record = probe(path, quick=True, load=lambda: (9.0, 9.0, 9.0), cpus=2, force=True)
    >>> record["busy"], host_system(path).peak_tflops == record["peak_tflops"] > 0
    (True, True)
    >>> import textwrap
    >>> try:
    ...     probe(path, quick=True, load=lambda: (9.0, 9.0, 9.0), cpus=2)
    ... except NerframeError as e:
    ...     print(textwrap.fill(str(e), 92))
    the machine is busy: 1-minute load 9 on 2 CPUs (more than 1.5); probe an idle machine, or
    pass --force to measure anyway (the figures will be low)
    """
    cpu_count = cpus if cpus is not None else (os.cpu_count() or 1)
    load = load or os.getloadavg
    before = tuple(float(x) for x in load())
    is_busy = busy(before[0], cpu_count)
    if is_busy and not force:
        raise UnavailableError(
            f"the machine is busy: 1-minute load {before[0]:.3g} on {cpu_count} CPUs (more "
            f"than {cpu_count - BUSY_MARGIN:.3g}); probe an idle machine, or pass --force to "
            "measure anyway (the figures will be low)"
        )
    if backend is None:
        backend = "torch" if importlib.util.find_spec("torch") else "numpy"
    if backend not in ("torch", "numpy"):
        raise InvalidInputError(f"probe: backend must be torch or numpy, got {backend!r}")
    if threads is not None and (
        isinstance(threads, bool) or not isinstance(threads, int) or threads < 1
    ):
        raise InvalidInputError(f"probe: threads must be an integer >= 1, got {threads!r}")
    bench = _TorchBench(threads) if backend == "torch" else _NumpyBench()
    try:
        record = _measure(bench, QUICK if quick else _Sizes())
    finally:
        bench.close()
    after = tuple(float(x) for x in load())
    record.update(
        load=list(before),
        load_after=list(after),
        cpus=cpu_count,
        busy=is_busy or busy(after[0], cpu_count),
    )
    target_path = Path(output) if output is not None else probe_path()
    with atomic_path(target_path) as tmp:
        tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return record


def _measure(bench: _TorchBench | _NumpyBench, sizes: _Sizes) -> dict[str, Any]:
    """Every micro-benchmark of `probe` on `bench`: the record without the load."""
    call_s = _per_call(bench.tiny())
    view_s = _per_call(bench.view())
    module_s = _per_call(bench.module()) if isinstance(bench, _TorchBench) else 0.0
    cold_s = _cold_call(*bench.chain(sizes.sweep))
    gemm: list[dict[str, Any]] = []
    for rows in sizes.rows:
        for k in sizes.gemm:
            for n in sizes.gemm:
                seconds = _net(_per_call(bench.gemm(rows, k, n)), call_s)
                gemm.append(
                    {
                        "m": rows,
                        "k": k,
                        "n": n,
                        "dtype": "float32",
                        "flops_per_s": 2 * rows * k * n / seconds,
                    }
                )
    fresh: list[dict[str, float]] = []
    reused: list[dict[str, float]] = []
    for nbytes in sizes.copy:
        for target, reuse in ((fresh, False), (reused, True)):
            seconds = _net(_per_call(bench.copy(nbytes, reuse=reuse)), call_s)
            target.append({"bytes": 2 * nbytes, "bytes_per_s": 2 * nbytes / seconds})
    elements: list[dict[str, Any]] = []
    for kind in ELEMENT_KINDS:
        seconds = _net(_per_call(bench.elementwise(kind, sizes.elements)), call_s)
        elements.append(
            {"kind": kind, "elements": sizes.elements, "elements_per_s": sizes.elements / seconds}
        )
    gathered = sizes.gathered
    gather: list[dict[str, float]] = []
    for table in sizes.table:
        seconds = _net(_per_call(bench.gather(table, gathered, GATHER_TABLES)), call_s)
        gather.append({"table_bytes": table * 8, "rows_per_s": gathered / seconds})
    return {
        "format": FORMAT,
        "version": VERSION,
        "system": "host",
        "backend": bench.name,
        "peak_tflops": max(float(g["flops_per_s"]) for g in gemm) / 1e12,
        "bandwidth_gbps": reused[-1]["bytes_per_s"] / 1e9,
        "call_s": call_s,
        "view_s": view_s,
        "module_s": module_s,
        "cold_s": cold_s,
        "gemm": gemm,
        "fresh": fresh,
        "reused": reused,
        "gather": gather,
        "elements": elements,
        "threads": bench.threads,
        "measured": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "method": (
            f"{bench.name}; medians of 5 batches; fixed costs: add of 1-element tensors, "
            f"view, a no-op module with capture's hooks, a chain of different tiny ops after a "
            f"{sizes.sweep >> 20} MiB sweep; GEMM: linear with bias, K x N grid "
            f"for M in {list(sizes.rows)}; bandwidth: add(a, 1) fresh and out=, bytes read "
            f"+ written; "
            f"element rates: add, sin, broadcast mul, int64 add, int64 remainder of "
            f"{sizes.elements} elements, sum over the 8 of ({sizes.elements // 24}, 8, 3); "
            f"gather: {gathered} random rows of 2 float32 from {GATHER_TABLES} tables in "
            "turn; rates net of the call cost"
        ),
    }


def _net(seconds: float, call_s: float) -> float:
    """A batch's time per call net of the fixed cost; at least a tenth of it, so that a
    call measured barely above the fixed cost does not give an infinite rate."""
    return max(seconds - call_s, 0.1 * seconds, 1e-12)


def _cold_call(
    sweep: Callable[[], object], chain: list[Callable[[], object]], *, runs: int = 50
) -> float:
    """Median over `runs` runs of `chain` of its seconds per op, each run timed alone right
    after `sweep` (which is not timed). The median of single runs, not of batches: a run
    lasts about 0.1 ms and a sweep milliseconds, so on a shared machine a batch's mean is
    often that of a run that waited for the CPU."""
    for op in chain:  # warm-up: every op's first call (lazy initialisation) is not timed
        op()
    times = []
    for _ in range(runs):
        sweep()
        start = time.perf_counter()
        for op in chain:
            op()
        times.append((time.perf_counter() - start) / len(chain))
    return statistics.median(times)


def _per_call(work: Callable[[], object], *, batches: int = 5, least_s: float = 2e-3) -> float:
    """Median over `batches` of the seconds per call of `work`, each batch repeating it
    enough times to last about `least_s` (one call after a warm-up sizes the batch)."""
    work()  # warm-up: threads started, pages mapped, caches of the allocator filled
    start = time.perf_counter()
    work()
    once = max(time.perf_counter() - start, 1e-9)
    calls = max(1, min(10_000, int(least_s / once)))
    times = []
    for _ in range(batches):
        start = time.perf_counter()
        for _ in range(calls):
            work()
        times.append((time.perf_counter() - start) / calls)
    return statistics.median(times)


class _TorchBench:
    """The micro-benchmarks in torch (what traced models run on)."""

    def __init__(self, threads: int | None) -> None:
        import torch

        self.torch = torch
        self.restore = torch.get_num_threads()
        if threads is not None:
            torch.set_num_threads(threads)
        self.threads = torch.get_num_threads()
        self.name = f"torch {torch.__version__} ({self.threads} threads)"
        torch.manual_seed(0)

    def close(self) -> None:
        """Give torch back its thread count."""
        self.torch.set_num_threads(self.restore)

    def tiny(self) -> Callable[[], object]:
        x = self.torch.ones(1)
        return lambda: self.torch.add(x, x)

    def view(self) -> Callable[[], object]:
        x = self.torch.ones(4, 4)
        return lambda: x.view(16)

    def chain(self, sweep: int) -> tuple[Callable[[], object], list[Callable[[], object]]]:
        torch = self.torch
        # the swept input is set: uninitialised memory may hold NaNs or subnormals,
        # which warn (NumPy) or run slower than the sweep they stand for
        a, b = torch.ones(sweep // 8), torch.empty(sweep // 8)
        x, y = torch.ones(1), torch.ones(1, 1)
        chain: list[Callable[[], object]] = [
            *(lambda: torch.add(x, x), lambda: torch.mul(x, x), lambda: torch.sub(x, x)),
            *(lambda: torch.neg(x), lambda: torch.exp(x), lambda: torch.sigmoid(x)),
            *(lambda: torch.clamp(x, 0), lambda: torch.sum(y, 1), lambda: torch.cumprod(y, 1)),
            *(lambda: torch.cat([x, x]), lambda: torch.where(x > 0, x, x)),
            lambda: torch.ones_like(x),
        ]
        return (lambda: torch.add(a, 1.0, out=b)), chain

    def module(self) -> Callable[[], object]:
        from nerframe.trace.recording import Clock, Recorder, Timer

        torch = self.torch

        class _Nop(torch.nn.Module):  # type: ignore[name-defined,misc]
            def forward(self, x: Any) -> Any:
                return x

        nop, x = _Nop(), torch.ones(1)
        clock = Clock(Timer())
        hooks = Recorder.hooks(nop, clock.enter, clock.leave)
        hooks.__enter__()  # installed for the probe's lifetime; the module is private

        def call() -> object:
            clock.open.clear()
            clock.order.clear()
            clock.marks.clear()
            return nop(x)

        return call

    def gemm(self, m: int, k: int, n: int) -> Callable[[], object]:
        torch = self.torch
        x, w, b = torch.rand(m, k), torch.rand(n, k), torch.rand(n)
        return lambda: torch.nn.functional.linear(x, w, b)

    def copy(self, nbytes: int, *, reuse: bool) -> Callable[[], object]:
        torch = self.torch
        a = torch.ones(nbytes // 4)
        if not reuse:
            return lambda: torch.add(a, 1.0)
        b = torch.empty_like(a)
        return lambda: torch.add(a, 1.0, out=b)

    def elementwise(self, kind: str, elements: int) -> Callable[[], object]:
        torch = self.torch
        if kind == "broadcast":
            rays = torch.rand(elements // (3 * 64), 1, 3)
            steps = torch.rand(1, 64, 1)
            return lambda: rays * steps
        if kind == "reduce":
            corners = torch.rand(elements // 24, 8, 3)
            return lambda: corners.sum(1)
        if kind in ("integer", "divide"):
            # hash-sized values: a product of coordinates and large primes, as a hash
            keys = torch.randint(0, 2**40, (elements,))
            if kind == "divide":
                return lambda: torch.remainder(keys, 2**19)
            return lambda: torch.add(keys, keys)
        a = torch.rand(elements)
        return (lambda: torch.sin(a)) if kind == "special" else (lambda: torch.add(a, a))

    def gather(self, rows: int, count: int, tables: int) -> Callable[[], object]:
        torch = self.torch
        levels = itertools.cycle([torch.rand(rows, 2) for _ in range(tables)])
        index = torch.randint(0, rows, (count,))
        return lambda: next(levels)[index]


class _NumpyBench:
    """The same micro-benchmarks in NumPy (no torch installed)."""

    threads = 0
    """Not set: NumPy's BLAS threads are its own (``OMP_NUM_THREADS``)."""

    def __init__(self) -> None:
        self.name = f"numpy {np.__version__}"
        self.rng = np.random.default_rng(0)

    def close(self) -> None:
        """Nothing to give back."""

    def tiny(self) -> Callable[[], object]:
        x = np.ones(1, dtype=np.float32)
        return lambda: np.add(x, x)

    def view(self) -> Callable[[], object]:
        x = np.ones((4, 4), dtype=np.float32)
        return lambda: x.reshape(16)

    def chain(self, sweep: int) -> tuple[Callable[[], object], list[Callable[[], object]]]:
        a, b = np.ones(sweep // 8, np.float32), np.empty(sweep // 8, np.float32)
        x, y = np.ones(1, np.float32), np.ones((1, 1), np.float32)
        chain: list[Callable[[], object]] = [
            *(lambda: np.add(x, x), lambda: np.multiply(x, x), lambda: np.subtract(x, x)),
            *(lambda: np.negative(x), lambda: np.exp(x), lambda: np.tanh(x)),
            *(lambda: np.clip(x, 0, None), lambda: np.sum(y, 1), lambda: np.cumprod(y, 1)),
            *(lambda: np.concatenate([x, x]), lambda: np.where(x > 0, x, x)),
            lambda: np.ones_like(x),
        ]
        return (lambda: np.add(a, 1.0, out=b)), chain

    def gemm(self, m: int, k: int, n: int) -> Callable[[], object]:
        x = self.rng.random((m, k), dtype=np.float32)
        w = self.rng.random((n, k), dtype=np.float32)
        b = self.rng.random(n, dtype=np.float32)
        return lambda: np.add(x @ w.T, b)

    def copy(self, nbytes: int, *, reuse: bool) -> Callable[[], object]:
        a = np.ones(nbytes // 4, dtype=np.float32)
        if not reuse:
            return lambda: np.add(a, 1.0)
        b = np.empty_like(a)
        return lambda: np.add(a, 1.0, out=b)

    def elementwise(self, kind: str, elements: int) -> Callable[[], object]:
        if kind == "broadcast":
            rays = self.rng.random((elements // (3 * 64), 1, 3), dtype=np.float32)
            steps = self.rng.random((1, 64, 1), dtype=np.float32)
            return lambda: rays * steps
        if kind == "reduce":
            corners = self.rng.random((elements // 24, 8, 3), dtype=np.float32)
            return lambda: corners.sum(1)
        if kind in ("integer", "divide"):
            keys = self.rng.integers(0, 2**40, elements)
            if kind == "divide":
                return lambda: np.remainder(keys, 2**19)
            return lambda: np.add(keys, keys)
        a = self.rng.random(elements, dtype=np.float32)
        return (lambda: np.sin(a)) if kind == "special" else (lambda: np.add(a, a))

    def gather(self, rows: int, count: int, tables: int) -> Callable[[], object]:
        levels = itertools.cycle(
            [self.rng.random((rows, 2), dtype=np.float32) for _ in range(tables)]
        )
        index = self.rng.integers(0, rows, count)
        return lambda: next(levels)[index]


def _read(path: str | Path | None) -> tuple[Path, dict[str, Any]]:
    path = Path(path) if path is not None else probe_path()
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        raise InvalidInputError(
            f"no host probe result at {path}: run 'nerframe probe' first"
        ) from None
    except (OSError, ValueError, RecursionError) as e:
        # (malformed JSON, not UTF-8, nested too deeply, an integer of 4,300+ digits)
        reason = "nested too deeply" if isinstance(e, RecursionError) else str(e).split(";")[0]
        raise InvalidInputError(f"{path}: unreadable host probe result ({reason})") from None
    if not isinstance(record, dict):
        raise InvalidInputError(f"{path}: not a host probe result")
    return path, record


def host_system(path: str | Path | None = None) -> System:
    """The ``host`` roofline system from a stored probe result (default `probe_path()`),
    of either version.

    >>> try:
    ...     host_system("/no/such/probe.json")
    ... except NerframeError as e:
    ...     print(e)
    no host probe result at /no/such/probe.json: run 'nerframe probe' first
    """
    path, record = _read(path)
    return System(
        "host",
        record.get("peak_tflops"),  # type: ignore[arg-type]
        record.get("bandwidth_gbps"),  # type: ignore[arg-type]
        source=f"measured by nerframe probe on {record.get('measured')}: {record.get('method')}",
    )


def host_model(path: str | Path | None = None) -> HostModel:
    """The host model (`nerframe.trace.host`) of a stored probe result (version 2 or 3); a
    version-1 result is refused with what to run.

    >>> import tempfile
    >>> old = Path(tempfile.mkdtemp()) / "old.json"
    >>> _ = old.write_text('{"peak_tflops": 0.1, "bandwidth_gbps": 10}')
    >>> try:
    ...     host_model(old)
    ... except NerframeError as e:
    ...     print(str(e).removeprefix(str(old)).split(": run")[0])
    : a version-1 host probe result (peak and bandwidth only)
    """
    from nerframe.formats import convert
    from nerframe.formats.probe import ProbeFile

    path, record = _read(path)
    if "format" not in record:
        raise InvalidInputError(
            f"{path}: a version-1 host probe result (peak and bandwidth only): run "
            "'nerframe probe' again for the host model"
        )
    declared = convert(record, ProbeFile, source=str(path))
    try:
        return HostModel(
            declared.call_s,
            declared.view_s,
            declared.module_s,
            tuple((g.m, g.k, g.n, g.dtype, g.flops_per_s) for g in declared.gemm),
            tuple((p.bytes, p.bytes_per_s) for p in declared.fresh),
            tuple((p.bytes, p.bytes_per_s) for p in declared.reused),
            tuple((p.table_bytes, p.rows_per_s) for p in declared.gather),
            tuple((p.kind, p.elements_per_s) for p in declared.elements),
            source=f"nerframe probe on {declared.measured} (load {declared.load[0]:.3g} on "
            f"{declared.cpus} CPUs): {declared.method}",
            threads=declared.threads,
            cold_s=declared.cold_s,
        )
    except NerframeError as e:
        raise InvalidInputError(f"{path}: {e}") from None


def host_predictor(path: str | Path | None = None) -> HostModel | System:
    """What predicts traced ops on this machine: the host model of a version-2 or -3 probe
    result, the roofline system ``host`` of a version-1 one (read as before).

    >>> import tempfile
    >>> old = Path(tempfile.mkdtemp()) / "old.json"
    >>> _ = old.write_text('{"peak_tflops": 0.1, "bandwidth_gbps": 10}')
    >>> type(host_predictor(old)).__name__
    'System'
    """
    _, record = _read(path)
    return host_model(path) if "format" in record else host_system(path)


def summary(record: dict[str, Any]) -> list[str]:
    """Lines that summarise a probe record for people.

    >>> import tempfile
    >>> record = probe(tempfile.mkdtemp() + "/h.json", quick=True, force=True)
    >>> summary(record)[0].startswith("host: fixed cost per call ")
    True
    """
    rates = [float(g["flops_per_s"]) for g in record["gemm"]]
    fresh, reused, gather = record["fresh"][-1], record["reused"][-1], record["gather"][-1]
    return [
        f"host: fixed cost per call {record['call_s'] * 1e6:.3g} us, "
        f"{record.get('cold_s', 0.0) * 1e6:.3g} us on cold caches (view "
        f"{record['view_s'] * 1e6:.3g} us, module {record['module_s'] * 1e6:.3g} us)",
        f"GEMM {min(rates) / 1e9:.3g} to {max(rates) / 1e9:.3g} GFLOP/s (narrow to wide): "
        f"peak {record['peak_tflops']:.4g} TFLOP/s",
        f"bandwidth {fresh['bytes_per_s'] / 1e9:.3g} GB/s fresh, "
        f"{reused['bytes_per_s'] / 1e9:.3g} GB/s reused (largest size); gather "
        f"{gather['rows_per_s'] / 1e6:.3g} M rows/s (largest table)",
    ]

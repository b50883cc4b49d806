"""The ``host`` roofline system: this machine's peak FLOP/s and memory bandwidth, measured.

`probe` runs two small micro-benchmarks with NumPy and stores the result as JSON:

- **peak compute**: a float32 matrix product of two ``n × n`` matrices
  (``2 n³`` FLOPs), the best of several runs;
- **memory bandwidth**: copying a float32 array much larger than the caches
  (counted as the bytes read plus the bytes written), the best of several runs.

The result is stored (atomically) at the path given, else at ``$NERFRAME_PROBE``,
else at ``$XDG_CACHE_HOME/nerframe/host-probe.json`` (``~/.cache`` when unset);
the roofline system ``host`` (`nerframe.rooflines.system`) reads it from there.
A probe is a measurement: two probes differ a little, and a busy machine measures
low. Traced ops measured on the same machine are then compared with their
roofline time on ``host`` (`nerframe.trace.compare`).
"""

from __future__ import annotations

import datetime
import json
import os
import platform
import time
from pathlib import Path

import numpy as np

from nerframe.atomic import atomic_path
from nerframe.errors import InvalidInputError
from nerframe.rooflines import System

ENVIRONMENT = "NERFRAME_PROBE"
"""The environment variable that names the probe result's path."""


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


def probe(
    output: str | Path | None = None, *, matrix: int = 1024, copy_mib: int = 256, runs: int = 5
) -> dict[str, object]:
    """Measure this machine's peak FLOP/s and memory bandwidth, store them at `output`
    (default `probe_path()`) and return the stored record.

    >>> import tempfile
    >>> path = tempfile.mkdtemp() + "/host.json"
    >>> record = probe(path, matrix=64, copy_mib=1, runs=1)
    >>> host_system(path).peak_tflops == record["peak_tflops"] > 0
    True
    """
    for what, value in (("matrix", matrix), ("copy_mib", copy_mib), ("runs", runs)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise InvalidInputError(f"probe: {what} must be an integer >= 1, got {value!r}")
    rng = np.random.default_rng(0)
    a = rng.random((matrix, matrix), dtype=np.float32)
    b = rng.random((matrix, matrix), dtype=np.float32)
    a @ b  # warm-up: the BLAS threads start
    flops = 2.0 * matrix**3 / _best(lambda: a @ b, runs)
    source = np.ones(copy_mib * 2**20 // 4, dtype=np.float32)
    target = np.empty_like(source)
    np.copyto(target, source)  # warm-up: the pages are mapped
    bandwidth = 2.0 * source.nbytes / _best(lambda: np.copyto(target, source), runs)
    record: dict[str, object] = {
        "system": "host",
        "peak_tflops": flops / 1e12,
        "bandwidth_gbps": bandwidth / 1e9,
        "measured": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "machine": platform.machine(),
        "processor": platform.processor() or platform.machine(),
        "cpus": os.cpu_count(),
        "numpy": np.__version__,
        "method": (
            f"best of {runs}: float32 {matrix}x{matrix} matmul (2n^3 FLOPs); "
            f"copy of {copy_mib} MiB float32 (bytes read + written)"
        ),
    }
    target_path = Path(output) if output is not None else probe_path()
    with atomic_path(target_path) as tmp:
        tmp.write_text(json.dumps(record, indent=2, sort_keys=True) + "\n")
    return record


def _best(work: object, runs: int) -> float:
    best = float("inf")
    for _ in range(runs):
        start = time.perf_counter()
        work()  # type: ignore[operator]
        best = min(best, time.perf_counter() - start)
    return max(best, 1e-9)


def host_system(path: str | Path | None = None) -> System:
    """The ``host`` roofline system from a stored probe result (default `probe_path()`).

    >>> try:
    ...     host_system("/no/such/probe.json")
    ... except InvalidInputError as e:
    ...     print(e)
    no host probe result at /no/such/probe.json: run 'nerframe probe' first
    """
    path = Path(path) if path is not None else probe_path()
    try:
        record = json.loads(path.read_text())
    except FileNotFoundError:
        raise InvalidInputError(
            f"no host probe result at {path}: run 'nerframe probe' first"
        ) from None
    except (OSError, json.JSONDecodeError) as e:
        raise InvalidInputError(f"{path}: unreadable host probe result ({e})") from None
    if not isinstance(record, dict):
        raise InvalidInputError(f"{path}: not a host probe result")
    return System(
        "host",
        record.get("peak_tflops"),  # type: ignore[arg-type]
        record.get("bandwidth_gbps"),  # type: ignore[arg-type]
        source=f"measured by nerframe probe on {record.get('measured')}: {record.get('method')}",
    )

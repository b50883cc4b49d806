"""``nerframe probe --device cuda``: the micro-benchmarks the GPU kernel model is fitted on.

Never a traced model: each benchmark is one torch call on made-up tensors, timed
with CUDA events (the median of `REPEATS` after `WARMUP` untimed calls):

- ``launch``: a one-element ``add`` timed alone (``single_add_1elem_event_s``), and
  the time per call of `CHAIN` such adds launched back to back
  (``back_to_back_add_1elem_s``);
- ``elementwise``: ``add``, ``mul`` by a scalar, ``sin``, ``exp``, ``relu``,
  ``sigmoid``, ``softplus``, ``clone``, ``cat`` of two, ``cat`` along the last
  dimension of rows of 3, 30 and 30 floats (``cat_last_narrow``: a positional
  encoding's; `SIZES` / 64 rows), and ``cumprod`` / ``cumsum`` / ``sum`` along a
  64-wide last dimension, at `SIZES` float32 elements (the bytes are the compulsory
  traffic: inputs read once, the output written once);
- ``gemm``: ``nn.functional.linear`` with bias, ``M × K → N`` for `SHAPES` and `ROWS`,
  in float32, float16 and bfloat16, and float32 with TF32 on (``dtype: "tf32"``);
- ``gather``: ``table[idx]`` of two float32 features per row from tables of
  `TABLES` rows, `LOOKUPS` random lookups;
- ``sort``: ``torch.sort`` of `SORTS` random float32 keys;
- ``scatter``: ``table.index_put_((idx,), values, accumulate=True)`` of two float32
  features per row into tables of `TABLES` rows, `SCATTERS` random lookups: a gather's
  backward, whose repeated indices (many in a small table) torch sorts first;
- ``scatter_runs``: the same scatter-add of `RUN_LOOKUPS` lookups into a table of
  `RUN_TABLE` rows, every row it touches taking `RUNS` lookups (fewer rows, longer
  runs; the shortest, 8, fills the table): torch adds one row's lookups in one
  thread, one after another, so the time grows with the run once the runs outlast
  the rest of the kernel (the slope is the time one more lookup of a row adds; a hash
  grid's coarse levels run thousands);
- ``atomic`` and ``atomic_runs``: the same two with ``table.index_add_(0, idx,
  values)``, which torch runs with atomic adds and no sort (same-row atomics resolve
  one after another: the slope of the runs is what one more adds).

The file has the layout of the H200 reference measurements
(``../shared/data/gpu/h200/micro.json``) plus ``"format": "nerframe-probe"``,
``"device_kind": "cuda"``, the device's name, torch, CUDA, SM count and clock, so
that `nerframe.gpu.fit` reads either. Without CUDA, `probe_cuda` raises one
`InvalidInputError`.
"""

from __future__ import annotations

import statistics
from collections.abc import Callable
from functools import partial
from pathlib import Path
from typing import Any

from nerframe.errors import InvalidInputError

WARMUP, REPEATS, CHAIN = 3, 20, 200
SIZES = (2**10, 2**14, 2**18, 2**22, 2**26)
ROWS = (1024, 16384, 262144, 4194304)
SHAPES = (
    (3, 16),
    (16, 64),
    (64, 64),
    (64, 3),
    (63, 256),
    (256, 256),
    (256, 1),
    (27, 128),
    (128, 128),
)
TABLES = (2**14, 2**19, 2**22, 2**24)
LOOKUPS = (2**14, 2**18, 2**22, 2**24)
SORTS = (2**14, 2**18, 2**22, 2**24)
"""Sort sizes: the fit takes the slope between the two largest, so the largest reach a
3DGS frame's 10^7 Gaussian-tile pairs (at 2^22 an H200's element-wise kernels still run
at a third of their bandwidth: micro.json's clone, 1.4 TB/s against 4.2 at 2^28)."""
SCATTERS = (2**18, 2**22)
RUN_LOOKUPS, RUN_TABLE = 2**22, 2**19
RUNS = (8, 64, 1024, 16384)


def _timer(torch: Any) -> Callable[[Callable[[], object]], float]:
    def median_seconds(work: Callable[[], object]) -> float:
        for _ in range(WARMUP):
            work()
        torch.cuda.synchronize()
        times = []
        for _ in range(REPEATS):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            work()
            end.record()
            end.synchronize()
            times.append(float(start.elapsed_time(end)) / 1e3)
        return statistics.median(times)

    return median_seconds


def probe_cuda() -> dict[str, Any]:
    """Run the CUDA micro-benchmarks (see the module docstring) and return the record.

    Needs torch with CUDA; otherwise an `InvalidInputError` naming why.
    """
    try:
        import torch
    except ImportError:
        raise InvalidInputError("probe --device cuda: torch is not installed") from None
    if not torch.cuda.is_available():
        why = "no CUDA device is visible" if torch.version.cuda else "torch is built without CUDA"
        raise InvalidInputError(f"probe --device cuda: CUDA is not available ({why})")
    timed = _timer(torch)
    device = torch.device("cuda")
    props = torch.cuda.get_device_properties(device)
    record: dict[str, Any] = {
        "format": "nerframe-probe",
        "device_kind": "cuda",
        "device": torch.cuda.get_device_name(device),
        "torch": str(torch.__version__),
        "cuda": str(torch.version.cuda),
        "sms": int(props.multi_processor_count),
        "clock_mhz": int(getattr(props, "clock_rate", 0) or 0) // 1000 or None,
        "memory_bytes": int(props.total_memory),
        "tf32_matmul": bool(torch.backends.cuda.matmul.allow_tf32),
    }
    with torch.no_grad():
        record["launch"] = _launch(torch, timed, "cuda")
        record["elementwise"] = _elementwise(torch, timed, "cuda")
        record["gemm"] = _gemm(torch, timed, "cuda")
        record["gather"] = _gather(torch, timed, "cuda")
        record["sort"] = _sort(torch, timed, "cuda")
        record["scatter"] = _scatter(torch, timed, "cuda", _put)
        record["scatter_runs"] = _scatter_runs(torch, timed, "cuda", _put)
        record["atomic"] = _scatter(torch, timed, "cuda", _index_add)
        record["atomic_runs"] = _scatter_runs(torch, timed, "cuda", _index_add)
    return record


def _launch(
    torch: Any, timed: Callable[[Callable[[], object]], float], dev: str
) -> dict[str, float]:
    one = torch.ones(1, device=dev)

    def chain() -> None:
        for _ in range(CHAIN):
            torch.add(one, one)

    return {
        "single_add_1elem_event_s": timed(lambda: torch.add(one, one)),
        "back_to_back_add_1elem_s": timed(chain) / CHAIN,
    }


def _elementwise(
    torch: Any, timed: Callable[[Callable[[], object]], float], dev: str
) -> list[dict[str, Any]]:
    rows = []
    for n in SIZES:
        a = torch.rand(n, device=dev)
        b = torch.rand(n, device=dev)
        wide = a.view(-1, 64) if n >= 64 else a.view(1, -1)
        pieces = max(n // 64, 1)  # a positional encoding's cat: 3 + 30 + 30 floats per row
        narrow = [torch.rand(pieces, w, device=dev) for w in (3, 30, 30)]
        ops: dict[str, tuple[Callable[[], object], float]] = {
            "add": (partial(torch.add, a, b), 3),
            "mul_scalar": (partial(torch.mul, a, 2.0), 2),
            "sin": (partial(torch.sin, a), 2),
            "exp": (partial(torch.exp, a), 2),
            "relu": (partial(torch.relu, a), 2),
            "sigmoid": (partial(torch.sigmoid, a), 2),
            "softplus": (partial(torch.nn.functional.softplus, a), 2),
            "clone": (a.clone, 2),
            "cat_two": (partial(torch.cat, [a, b]), 4),
            "cat_last_narrow": (partial(torch.cat, narrow, -1), 2 * 63 * pieces / n),
            "cumprod_last64": (partial(torch.cumprod, wide, -1), 2),
            "cumsum_last64": (partial(torch.cumsum, wide, -1), 2),
            "sum_last64": (partial(wide.sum, -1), 1 + 1 / 64),
        }
        for op, (work, words) in ops.items():
            seconds = timed(work)
            rows.append(
                {
                    "op": op,
                    "elements": n,
                    "seconds": seconds,
                    "bytes": 4 * n * words,
                    "gbps": 4 * n * words / seconds / 1e9,
                }
            )
    return rows


def _gemm(
    torch: Any, timed: Callable[[Callable[[], object]], float], dev: str
) -> list[dict[str, Any]]:
    rows = []
    kinds = (
        ("float32", torch.float32, False),
        ("tf32", torch.float32, True),
        ("float16", torch.float16, False),
        ("bfloat16", torch.bfloat16, False),
    )
    restore = torch.backends.cuda.matmul.allow_tf32
    try:
        for name, dtype, tf32 in kinds:
            torch.backends.cuda.matmul.allow_tf32 = tf32
            size = torch.tensor([], dtype=dtype).element_size()
            for m in ROWS:
                for k, n in SHAPES:
                    x = torch.rand(m, k, device=dev, dtype=dtype)
                    w = torch.rand(n, k, device=dev, dtype=dtype)
                    bias = torch.rand(n, device=dev, dtype=dtype)
                    seconds = timed(partial(torch.nn.functional.linear, x, w, bias))
                    flops = 2 * m * k * n
                    rows.append(
                        {
                            "dtype": name,
                            "M": m,
                            "K": k,
                            "N": n,
                            "seconds": seconds,
                            "flops": flops,
                            "tflops": flops / seconds / 1e12,
                            "bytes": size * (m * k + k * n + m * n + n),
                        }
                    )
    finally:
        torch.backends.cuda.matmul.allow_tf32 = restore
    return rows


def _gather(
    torch: Any, timed: Callable[[Callable[[], object]], float], dev: str
) -> list[dict[str, Any]]:
    return _indexed(torch, timed, dev, LOOKUPS, lambda table, idx: partial(table.__getitem__, idx))


def _indexed(
    torch: Any,
    timed: Callable[[Callable[[], object]], float],
    dev: str,
    counts: tuple[int, ...],
    call: Callable[[Any, Any], Callable[[], object]],
) -> list[dict[str, Any]]:
    """`call(table, idx)` timed for each table of `TABLES` rows (two float32 features)
    and `counts` random row indices: one row per pair."""
    rows = []
    generator = torch.Generator(device=dev).manual_seed(0)
    for table_rows in TABLES:
        table = torch.rand(table_rows, 2, device=dev)
        for lookups in counts:
            idx = torch.randint(0, table_rows, (lookups,), device=dev, generator=generator)
            seconds = timed(call(table, idx))
            rows.append(
                {
                    "table_rows": table_rows,
                    "features": 2,
                    "lookups": lookups,
                    "seconds": seconds,
                    "lookups_per_s": lookups / seconds,
                }
            )
    return rows


def _sort(
    torch: Any, timed: Callable[[Callable[[], object]], float], dev: str
) -> list[dict[str, Any]]:
    rows = []
    for keys in SORTS:
        values = torch.rand(keys, device=dev)
        seconds = timed(partial(torch.sort, values))
        rows.append({"keys": keys, "seconds": seconds, "keys_per_s": keys / seconds})
    return rows


def _put(table: Any, idx: Any, values: Any) -> Callable[[], object]:
    """A scatter-add torch sorts first (``index_put_`` accumulating)."""
    return partial(table.index_put_, (idx,), values, accumulate=True)


def _index_add(table: Any, idx: Any, values: Any) -> Callable[[], object]:
    """A scatter-add torch runs with atomic adds (``index_add_``)."""
    return partial(table.index_add_, 0, idx, values)


def _scatter(
    torch: Any,
    timed: Callable[[Callable[[], object]], float],
    dev: str,
    add: Callable[[Any, Any, Any], Callable[[], object]],
) -> list[dict[str, Any]]:
    """`SCATTERS` random lookups added by `add` (`_put`, `_index_add`) into each table."""

    def call(table: Any, idx: Any) -> Callable[[], object]:
        return add(table, idx, torch.rand(idx.shape[0], 2, device=dev))

    return _indexed(torch, timed, dev, SCATTERS, call)


def _scatter_runs(
    torch: Any,
    timed: Callable[[Callable[[], object]], float],
    dev: str,
    add: Callable[[Any, Any, Any], Callable[[], object]],
) -> list[dict[str, Any]]:
    """`RUN_LOOKUPS` lookups added by `add` into ``RUN_LOOKUPS / row_lookups`` rows
    spread over the table, each row `row_lookups` times, for each of `RUNS`."""
    rows = []
    values = torch.rand(RUN_LOOKUPS, 2, device=dev)
    for row_lookups in RUNS:
        touched = RUN_LOOKUPS // row_lookups
        spread = max(RUN_TABLE // touched, 1)
        idx = (torch.arange(RUN_LOOKUPS, device=dev) % touched) * spread % RUN_TABLE
        table = torch.zeros(RUN_TABLE, 2, device=dev)
        seconds = timed(add(table, idx, values))
        rows.append(
            {
                "table_rows": RUN_TABLE,
                "features": 2,
                "lookups": RUN_LOOKUPS,
                "row_lookups": row_lookups,
                "seconds": seconds,
            }
        )
    return rows


def write_probe(record: dict[str, Any], path: str | Path) -> Path:
    """Write a CUDA probe record atomically (sorted keys) and return the path."""
    import json

    from nerframe.atomic import atomic_path

    path = Path(path)
    with atomic_path(path) as tmp:
        tmp.write_text(json.dumps(record, sort_keys=True, indent=1) + "\n")
    return path

"""Operator mapping: which module runs each op row, and how much work that is.

A row maps by the rules of ``spec/hardware.md``: (1) the accelerator's
``operator_mapping``, (2) the catalogue's preference table
(`nerframe.taxonomy.PREFERENCES`), (3) a ``HOST`` module. Its work is then counted
in the unit of that module (`nerframe.taxonomy.WORK_ITEMS`): FLOPs for FLOP-rated
units, samples, Gaussians, pixels… for units their papers rate per item.

>>> import nerframe
>>> from nerframe.mapping import map_operators
>>> neurex = nerframe.accelerator("neurex")
>>> rows = map_operators(["HashEncoding", "MLP"], [False, False], neurex)
>>> [neurex.modules[i].name for i in rows]
['index_generation_unit', 'systolic_array_32x32']
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import polars as pl

from nerframe.accelerator_model import Accelerator, list_modules
from nerframe.errors import InvalidInputError, UnmappedError
from nerframe.gpu import op_seconds, reference, sm_modules
from nerframe.taxonomy import BACKWARD_SUFFIX, HOST, PREFERENCES, WORK_ITEMS

_NULLS = "map_operators: op types and backward flags must not be null"


def map_operators(
    op_types: Sequence[str] | pl.Series, backward: Sequence[bool] | pl.Series, accel: Accelerator
) -> np.ndarray:
    """Module index (int64) of each row, by the rules of ``spec/hardware.md``.

    Per row: (1) ``operator_mapping["<op_type> (B)"]`` for a backward row, else
    ``operator_mapping[op_type]``; (2) the preference table `PREFERENCES`: for each
    preferred type in order, the accelerator's ``type_mapping`` entry for it, else its
    first module of that type; (3) its first ``HOST`` module. Rows left over raise a
    `NerframeError` naming every unmapped op type and the accelerator's modules.

    >>> import nerframe
    >>> gbu = nerframe.accelerator("gbu")
    >>> rows = map_operators(["GaussianAlphaBlend"] * 2, [False, True], gbu)
    >>> [gbu.modules[i].name for i in rows]
    ['row_processing_element', 'gradient_accumulator']
    """
    if len(op_types) != len(backward):
        raise InvalidInputError(
            f"map_operators: {len(op_types)} op types but {len(backward)} backward flags"
        )
    if len(op_types) == 0:
        return np.empty(0, dtype=np.int64)
    codes, names = _codes(op_types)
    flags = pl.Series("backward", backward).cast(pl.Boolean)
    if flags.has_nulls():
        raise InvalidInputError(_NULLS)
    # Each row's (op type, backward) pair as one integer: the rules run once per
    # distinct pair and a table lookup spreads the result over the rows.
    key = codes * 2 + flags.to_numpy()
    present = np.flatnonzero(np.bincount(key, minlength=2 * len(names)))
    found = {k: _resolve(names[k >> 1], bool(k & 1), accel) for k in present.tolist()}
    missing = [k for k, i in found.items() if i is None]
    if missing:
        # a backward row only adds a "(B)" key to the rules, so naming the op type
        # suffices; in the order the rows first show them
        first = sorted(missing, key=lambda k: int(np.argmax(key == k)))
        unmapped = list(dict.fromkeys(names[k >> 1] for k in first))
        raise UnmappedError(_unmapped_message(unmapped, accel), unmapped, accel.name)
    lookup = np.zeros(2 * len(names), np.int64)
    lookup[present] = np.fromiter(found.values(), np.int64, present.size)
    modules: np.ndarray = lookup[key]
    return modules


def _codes(op_types: Sequence[str] | pl.Series) -> tuple[np.ndarray, list[str]]:
    """Each row's op type as an index (int64) into the returned list of names."""
    if isinstance(op_types, pl.Series) and isinstance(op_types.dtype, pl.Enum):
        if op_types.has_nulls():
            raise InvalidInputError(_NULLS)
        # An Enum column (an ops table's) already holds codes: no per-row Python.
        arrow = op_types.to_arrow()
        return arrow.indices.to_numpy().astype(np.int64), arrow.dictionary.to_pylist()
    values = (
        op_types.cast(pl.String).to_list() if isinstance(op_types, pl.Series) else list(op_types)
    )
    if any(v is None for v in values):
        raise InvalidInputError(_NULLS)
    number = {name: i for i, name in enumerate(dict.fromkeys(map(str, values)))}
    codes = np.fromiter(map(number.__getitem__, map(str, values)), np.int64, len(values))
    return codes, list(number)


def work(
    costs: pl.DataFrame, module: np.ndarray, accel: Accelerator, *, batches: int = 1
) -> np.ndarray:
    """Work of each row (float64) in the unit of the module it maps to; on a FLOP-rated
    module with a ``bitwidth``, FLOPs of wider operands cost more (`precision_factor`).
    On a GPU's SMs (`nerframe.gpu.sm_modules`) a row's work is its kernels' time
    (`nerframe.gpu.op_seconds`: launches, syncs, class rates) in FLOPs at the module's
    rate and clock as its file gives them.

    `costs` is a costs table (its ``flops`` column is the work of FLOP-rated
    modules); `module` the rows' module indices (`map_operators`); `batches` the
    frame's batches (a GPU runs a batch op over the whole frame, each batch carrying
    its share: `nerframe.gpu.op_seconds`). A row mapped to a
    module whose unit its op type does not count raises `nerframe.UnmappedError` naming both.

    >>> import nerframe
    >>> g = nerframe.pipeline("icarus", rays=2, samples=3)
    >>> c = nerframe.costs(g.ops)
    >>> icarus = nerframe.accelerator("icarus")
    >>> work(c, map_operators(c["op_type"], c["backward"], icarus), icarus).tolist()[:2]
    [6.0, 6.0]
    """
    units = np.array([m.unit for m in accel.modules])[module]
    result = costs.get_column("flops").to_numpy().astype(np.float64, copy=True)
    on_gpu = sm_modules(accel)[module] if module.size else np.zeros(0, bool)
    if on_gpu.any():
        # A GPU runs an op as kernels (nerframe.gpu.op_seconds: launches, syncs, its
        # class's rate, at its file's data sheet); its work is that time in FLOPs at
        # the file's module rate and clock, so that the scheduler's work / (throughput
        # x efficiency x count) is that time over the GPU's efficiency, and a variant
        # (another clock, count or rate) scales it as it scales any op
        sheet = reference(accel)
        rates = {m.name: m.count * m.throughput_ops_per_cycle for m in sheet.modules}
        rate = np.array(
            [rates.get(m.name, m.count * m.throughput_ops_per_cycle) for m in accel.modules]
        )
        seconds = op_seconds(costs, module, accel, gathered_bytes(costs, accel), batches=batches)
        result[on_gpu] = seconds[on_gpu] * rate[module[on_gpu]] * sheet.frequency_mhz * 1e6
    op_types = np.array(costs.get_column("op_type").to_list())
    for op_type, unit in sorted(set(zip(op_types.tolist(), units.tolist(), strict=True))):
        if unit == "flop":
            continue
        factors = WORK_ITEMS[op_type].get(unit)
        rows = (op_types == op_type) & (units == unit) & ~on_gpu
        if factors is None:
            names = sorted({accel.modules[i].name for i in module[rows]})
            counted = ", ".join(["flop", *WORK_ITEMS[op_type]])
            raise UnmappedError(
                f"accelerator '{accel.name}': op type {op_type} maps to module "
                f"{', '.join(names)} rated in {unit}s, a unit {op_type} does not count "
                f"(it counts: {counted})",
                [op_type],
                accel.name,
            )
        result[rows] = _product(costs, rows, factors)
    widths = np.array([m.bitwidth or 0 for m in accel.modules])[module]
    if widths.any():
        factor = precision_factor(costs.get_column("bitwidth").to_numpy(), widths)
        result *= np.where(on_gpu, 1.0, factor)
    return result


def precision_factor(op_bits: np.ndarray, module_bits: np.ndarray) -> np.ndarray:
    """FLOPs of a module's own width that one FLOP of `op_bits`-bit operands costs on a
    module whose throughput counts `module_bits`-bit operations (0: any width, factor 1):
    ``ceil(op_bits / module_bits)^2``, as a b-bit multiply is composed of
    ``(b / w)^2`` w-bit ones (Bit Fusion: Sharma et al., ISCA 2018, fuses 2-bit
    BitBricks spatially, 16 of them per 8-bit x 8-bit product); narrower operands gain
    nothing over the module's width.

    >>> precision_factor(np.array([4, 16, 2, 6]), np.array([4, 4, 4, 0])).tolist()
    [1.0, 16.0, 1.0, 1.0]
    """
    module_bits = np.asarray(module_bits)
    ratio = np.ceil(np.asarray(op_bits) / np.where(module_bits > 0, module_bits, 1))
    return np.where(module_bits > 0, np.maximum(ratio, 1.0) ** 2, 1.0)


GATHERS: tuple[str, ...] = ("HashEncoding", "HashLookup")
"""Op types that read hash-table entries at random addresses: one read per ``lookup``
work item, which the cost model counts in no byte column."""


def gathered_bytes(costs: pl.DataFrame, accel: Accelerator) -> np.ndarray:
    """DRAM bytes (float64) of each row's random hash-table reads on `accel`: zero unless
    the accelerator has a ``gather_sector_bytes``; then a `GATHERS` row requests one
    sector per two of its lookups (`sector_requests`). Where the accelerator names an
    ``l2_cache_kb`` that holds one level's table (``2^log2_hashmap_size *
    features_per_level`` entries of ``bitwidth`` bits), a level costs at most its
    table: tiny-cuda-nn evaluates the levels one after another over the whole batch so
    that one level's table resides in the cache at a time (Mueller et al., Instant
    Neural Graphics Primitives, ACM TOG 41(4) 2022, Sec. 4, "Performance
    considerations"), so each level's table crosses DRAM at most once per batch and
    the rest are L2 hits (their bandwidth is `l2_bytes`). Dense coarse levels smaller
    than the table are counted at the full table size, an upper bound.

    >>> import nerframe
    >>> g = nerframe.pipeline("neurex", rays=1, samples=1)
    >>> c = nerframe.costs(g.ops)
    >>> gathered_bytes(c, nerframe.accelerator("xavier_nx")).tolist()  # 16 levels x 8 / 2 x 32
    [0.0, 2048.0, 0.0, 0.0, 0.0]
    >>> bool(gathered_bytes(c, nerframe.accelerator("neurex")).any())
    False
    >>> big = nerframe.costs(nerframe.pipeline("neurex", rays=4096, samples=24).ops)
    >>> float(gathered_bytes(big, nerframe.accelerator("titan_rtx"))[1]) / 2**20  # 16 x 2 MiB
    32.0
    """
    moved = sector_requests(costs, accel)
    if accel.l2_cache_kb > 0:
        op_types = costs.get_column("op_type").cast(pl.String).to_numpy()
        for op_type in GATHERS:
            rows = op_types == op_type
            if rows.any():
                levels = _product(costs, rows, ["num_levels"])
                factors = ["2^log2_hashmap_size", "features_per_level", "bitwidth"]
                table = _product(costs, rows, factors) / 8
                cached = table <= accel.l2_cache_kb * 1024
                moved[rows] = np.where(cached, np.minimum(moved[rows], levels * table), moved[rows])
    return moved


def sector_requests(costs: pl.DataFrame, accel: Accelerator) -> np.ndarray:
    """Bytes (float64) each row's random hash-table reads request from the memory system
    on `accel`, whether the L2 then hits or misses: zero unless the accelerator has a
    ``gather_sector_bytes``; then a `GATHERS` row requests one sector per two of its
    lookups (``B*N*num_levels*2^input_dim``), since Instant-NGP's spatial hash keeps a
    voxel's two x-neighbour corners in adjacent entries ("pi_1 = 1 ... for better cache
    coherence", Mueller et al. 2022, Sec. 3) and a 4-byte entry (two FP16 features) is
    an eighth of a 32-byte sector.

    >>> import nerframe
    >>> c = nerframe.costs(nerframe.pipeline("neurex", rays=1, samples=1).ops)
    >>> sector_requests(c, nerframe.accelerator("rtx3070")).tolist()  # 16 x 8 / 2 x 32
    [0.0, 2048.0, 0.0, 0.0, 0.0]
    """
    result = np.zeros(costs.height)
    if accel.gather_sector_bytes == 0:
        return result
    op_types = costs.get_column("op_type").cast(pl.String).to_numpy()
    for op_type in GATHERS:
        rows = op_types == op_type
        if rows.any():
            lookups = _product(costs, rows, WORK_ITEMS[op_type]["lookup"])
            result[rows] = lookups / 2 * accel.gather_sector_bytes
    return result


def l2_bytes(costs: pl.DataFrame, accel: Accelerator, own: np.ndarray | None = None) -> np.ndarray:
    """Bytes (float64) each row moves through a GPU's L2 cache: zero unless the
    accelerator has an ``l2_bytes_per_cycle``; then the row's own bytes (`own`, as
    its kernels move them, `nerframe.gpu.kernel_bytes`; default ``bytes_total``) plus
    its hash-table sector requests (`sector_requests`). An
    NVIDIA GPU's L2 slices sit in front of its memory controllers (GA102
    whitepaper: 512 KB of L2 paired with each 32-bit controller), so every
    global-memory access, hit or miss, passes a slice, and the L2's read bandwidth
    bounds an op's memory time beside the DRAM's (`Mapped.of` turns these bytes into
    cycles).

    >>> import nerframe
    >>> c = nerframe.costs(nerframe.pipeline("neurex", rays=1, samples=1).ops)
    >>> float(l2_bytes(c, nerframe.accelerator("rtx3070"))[1] - c["bytes_total"][1])
    2048.0
    >>> bool(l2_bytes(c, nerframe.accelerator("xavier_nx")).any())  # no L2 rate given
    False
    """
    if accel.l2_bytes_per_cycle == 0:
        return np.zeros(costs.height)
    if own is None:
        own = costs.get_column("bytes_total").to_numpy().astype(np.float64)
    total: np.ndarray = own + sector_requests(costs, accel)
    return total


def table_read_bytes(costs: pl.DataFrame) -> np.ndarray:
    """On-chip bytes (float64) of each row's hash-table reads: a ``HashEncoding`` row
    reads ``features_per_level`` features of ``bitwidth`` bits at each of its
    ``B*N*num_levels*2^input_dim`` corner lookups, which the cost model counts in no
    byte column (its fine stage ``HashLookup`` counts them as its output, so the
    fine graph needs nothing added). An accelerator serves them from its grid
    buffers (NeuRex's grid cache and subgrid buffer, NRX-PDF p.7-8), so they are
    SRAM traffic; a GPU's, whose SRAM has no access energy here, go to DRAM
    (`gathered_bytes`).

    >>> import nerframe
    >>> c = nerframe.costs(nerframe.pipeline("neurex", rays=1, samples=1).ops)
    >>> table_read_bytes(c).tolist()  # 16 levels x 8 corners x 2 features x 2 bytes
    [0.0, 512.0, 0.0, 0.0, 0.0]
    """
    result = np.zeros(costs.height)
    rows = (costs.get_column("op_type").cast(pl.String) == "HashEncoding").to_numpy()
    if rows.any():
        factors = [*WORK_ITEMS["HashEncoding"]["lookup"], "features_per_level", "bitwidth"]
        result[rows] = _product(costs, rows, factors) / 8
    return result


def _product(costs: pl.DataFrame, rows: np.ndarray, factors: Sequence[str]) -> np.ndarray:
    """The product of `factors` (numbers, parameter names, ``2^<name>``) over the rows."""
    total = np.ones(np.count_nonzero(rows))
    for factor in factors:
        if factor.isdigit():
            total *= float(factor)
            continue
        name = factor.removeprefix("2^")
        values = costs.get_column(name).to_numpy()[rows].astype(np.float64)
        total *= 2.0**values if factor.startswith("2^") else values
    return total


def _resolve(op_type: str, backward: bool, accel: Accelerator) -> int | None:
    explicit = accel.operator_mapping
    if backward and op_type + BACKWARD_SUFFIX in explicit:
        return accel.module_index(explicit[op_type + BACKWARD_SUFFIX])
    if op_type in explicit:
        return accel.module_index(explicit[op_type])
    by_type = {k.upper(): v for k, v in accel.type_mapping.items()}
    for wanted in PREFERENCES.get(op_type, ()):
        if wanted in by_type:
            return accel.module_index(by_type[wanted])
        for i, module in enumerate(accel.modules):
            if module.type.upper() == wanted:
                return i
    for i, module in enumerate(accel.modules):
        if module.type.upper() == HOST:
            return i
    return None


def _unmapped_message(unmapped: list[str], accel: Accelerator) -> str:
    wanted = "; ".join(f"{t}: {', '.join(PREFERENCES.get(t, ())) or 'none'}" for t in unmapped)
    return (
        f"accelerator '{accel.name}' has no module for op types {', '.join(unmapped)} "
        f"(no operator_mapping entry, no module of a preferred type [{wanted}], "
        f"no {HOST} module); its modules: {list_modules(accel.modules)}"
    )

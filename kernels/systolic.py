"""Cycles of a GEMM folded onto a systolic array, per dataflow.

A rows x cols array of multiply-accumulate PEs computes a GEMM of M rows, K
inner and N output columns (an MLP layer: M = B·N samples, K = fan-in, N =
fan-out) in folds. Each dataflow keeps one operand in place and maps two of the
GEMM's dimensions onto the array (spatial) and streams the third (temporal),
following the taxonomy of Samajdar et al., "A Systematic Methodology for
Characterizing Scalability of DNN Accelerators using SCALE-Sim", ISPASS 2020,
section III (the spatial/temporal mapping of each dataflow):

==========  ==================  ==================  =========  ========
dataflow    array rows hold     array cols hold     streamed   preload
==========  ==================  ==================  =========  ========
os          M (output rows)     N (outputs)         K          0
ws          K (weights)         N (weights)         M          rows
is          K (inputs)          M (inputs)          N          rows
==========  ==================  ==================  =========  ========

A GEMM whose spatial dimensions are (S_R, S_C) runs in
``ceil(S_R / rows) * ceil(S_C / cols)`` folds, one after another, each taking
(derived from the dataflow definitions; docs/model.md, "Systolic arrays"):

    fold cycles = preload + (rows - 1) + (cols - 1) + T

``preload``: a stationary operand (weights in ws, inputs in is) shifts into the
array one row per cycle, ``rows`` cycles, before the fold streams; os keeps its
outputs in place and starts streaming at once. ``(rows - 1) + (cols - 1)``: the
streamed operands enter skewed by one cycle per row and per column, so the far
corner PE starts that much after the first (fill); in ws and is the partial
sums of the last streamed element leave the bottom edge exactly then (drain).
``T``: the streamed dimension, one element per cycle. os drains its
accumulators while the next fold streams (double-buffered outputs: an
assumption, the one SCALE-Sim 3.0.0 times). A partial fold (a dimension not a
multiple of the array's) still takes the full array's skew: the controller's
schedule has a fixed shape (assumption, as SCALE-Sim does).

An op that takes ``k`` identical arrays splits the GEMM's M rows evenly
(``ceil(M / k)`` each; the weights are replicated): the batch dimension is the
only one every layer has plenty of (assumption).

>>> import numpy as np
>>> gemms = np.array([[4096, 64, 64]])
>>> int(op_cycles(gemms, 0, 1, 32, 32, WS, 1))  # 2*2 folds of 32+31+31+4096
16760
"""

from __future__ import annotations

from typing import NamedTuple

import numpy as np
from numba import njit

__all__ = [
    "IS",
    "NONE",
    "OS",
    "WS",
    "Traffic",
    "dram_traffic",
    "fold_order_traffic",
    "gemm_cycles",
    "mlp_gemms",
    "op_cycles",
    "sample_tile",
    "sram_accesses",
    "tiled_gemm_cycles",
    "tiled_traffic",
]

NONE, OS, WS, IS = 0, 1, 2, 3
"""Dataflow codes: the position in `nerframe.accelerator_model.DATAFLOWS` (``os``,
``ws``, ``is``) plus 1, which the API layer passes; NONE marks a module that is
not a systolic array."""


@njit(cache=True, inline="always")
def gemm_cycles(m: int, k: int, n: int, rows: int, cols: int, dataflow: int) -> int:
    """Cycles of one M x K x N GEMM on one rows x cols array (formula above).

    >>> gemm_cycles(4096, 64, 4, 32, 32, OS)  # 128 folds of 31+31+64
    16128
    """
    if dataflow == OS:
        spatial_r, spatial_c, temporal, preload = m, n, k, 0
    elif dataflow == WS:
        spatial_r, spatial_c, temporal, preload = k, n, m, rows
    else:
        spatial_r, spatial_c, temporal, preload = k, m, n, rows
    folds = ((spatial_r + rows - 1) // rows) * ((spatial_c + cols - 1) // cols)
    return folds * (preload + rows - 1 + cols - 1 + temporal)


@njit(cache=True, inline="always")
def tiled_gemm_cycles(
    m: int, k: int, n: int, tile: int, rows: int, cols: int, dataflow: int, arrays: int
) -> int:
    """Cycles of one M x K x N GEMM split over `arrays` arrays by its M rows, run as
    tiles of `tile` samples one after another (the arrays sharing each tile);
    `tile` <= 0: M whole. Scalars only, so that the scheduler kernel's loop over
    an op's GEMMs passes no array to a call (see `op_cycles`).

    >>> tiled_gemm_cycles(10, 8, 8, 4, 8, 8, WS, 1)  # (22 + 4) * 2 + 22 + 2
    76
    """
    tile = m if tile <= 0 else min(tile, m)
    full = m // tile
    rest = m - full * tile
    total = full * gemm_cycles((tile + arrays - 1) // arrays, k, n, rows, cols, dataflow)
    if rest:
        total += gemm_cycles((rest + arrays - 1) // arrays, k, n, rows, cols, dataflow)
    return total


@njit(cache=True)
def op_cycles(
    gemms: np.ndarray,
    lo: int,
    hi: int,
    rows: int,
    cols: int,
    dataflow: int,
    k: int,
    tiles: np.ndarray | None = None,
) -> int:
    """Cycles of the GEMMs ``gemms[lo:hi]`` (rows M, K, N) run one after another,
    each split over `k` arrays by its M rows. ``tiles[g]`` > 0 runs GEMM g as
    tiles of that many samples, one after another (`dram_traffic`'s tiled order),
    the k arrays sharing each tile; None or 0: M whole.

    >>> op_cycles(np.array([[10, 8, 8], [10, 8, 8]]), 0, 2, 8, 8, OS, 2)  # M 5 each
    44
    >>> op_cycles(np.array([[10, 8, 8]]), 0, 1, 8, 8, WS, 1, np.array([4]))  # (22 + 4) * 2 + 22 + 2
    76
    """
    total = 0
    for g in range(lo, hi):
        tile = 0 if tiles is None else tiles[g]
        m, inner, outer = gemms[g, 0], gemms[g, 1], gemms[g, 2]
        total += tiled_gemm_cycles(m, inner, outer, tile, rows, cols, dataflow, k)
    return total


def mlp_gemms(
    rows: int,
    in_dim: int,
    num_layers: int,
    layer_width: int,
    out_dim: int,
    skip_connections: list[int],
    *,
    backward: bool = False,
) -> list[tuple[int, int, int]]:
    """The GEMMs (M, K, N) of one MLP row over `rows` = B·N samples, layer by layer.

    The layers are spec/operators.md's "MLP layer list" (fan_in, fan_out); a
    forward layer is one GEMM (rows, fan_in, fan_out). A backward row runs, per
    layer, the input gradient (rows, fan_out, fan_in: dY·Wᵀ) and the weight
    gradient (fan_in, rows, fan_out: Xᵀ·dY), twice the forward MACs as the cost
    model's backward FLOPs count. The bias add is not a GEMM (the cost model
    counts no FLOPs for it either).

    >>> mlp_gemms(4096 * 64, 32, 3, 64, 4, [])
    [(262144, 32, 64), (262144, 64, 64), (262144, 64, 4)]
    >>> mlp_gemms(8, 3, 1, 0, 2, [], backward=True)
    [(8, 2, 3), (3, 8, 2)]
    """
    if num_layers == 1:
        layers = [(in_dim, out_dim)]
    else:
        layers = [(in_dim, layer_width)]
        skips = set(skip_connections)
        for i in range(1, num_layers - 1):
            layers.append((layer_width + (in_dim if i in skips else 0), layer_width))
        layers.append((layer_width, out_dim))
    if not backward:
        return [(rows, fan_in, fan_out) for fan_in, fan_out in layers]
    gemms: list[tuple[int, int, int]] = []
    for fan_in, fan_out in layers:
        gemms += [(rows, fan_out, fan_in), (fan_in, rows, fan_out)]
    return gemms


# --- Buffer traffic of a GEMM (docs/model.md, "SRAM traffic and capacity") ---------
#
# The cycle formula above fixes the fold order SCALE-Sim 3.0.0 also runs: column
# folds outermost, row folds inside (for fc: for fr), each fold streaming the
# whole temporal dimension. What each fold touches, per dataflow:
#
#   ws  (S_R, S_C, T) = (K, N, M): the weight tile W[fr, fc] (once each), the input
#       column slice I[:, fr] (M x rows), the partial sums O[:, fc] (M x cols);
#   os  (M, N, K): the input row slice I[fr, :] (rows x K), the weight column slice
#       W[:, fc] (K x cols), the output tile O[fr, fc] (written once);
#   is  (K, M, N): the input tile I[fc, fr] (once each), the weight row slice
#       W[fr, :] (rows x N), the partial sums O[fc, :] (cols x N).
#
# Summed over the folds these are the array's buffer reads and writes
# (`sram_accesses`). An operand that is needed again in a later fold is re-read
# from DRAM unless what must stay resident between its uses fits its buffer
# (`dram_traffic`, which also considers tiling the sample dimension M).


class Traffic(NamedTuple):
    """Elements moved of one GEMM's operands: inputs read, weights read, outputs
    (or partial sums) written and partial sums read back."""

    input: int
    weight: int
    output_write: int
    output_read: int

    @property
    def total(self) -> int:
        """All four, summed."""
        return self.input + self.weight + self.output_write + self.output_read


def _folds(m: int, k: int, n: int, rows: int, cols: int, dataflow: int) -> tuple[int, int]:
    """Row and column folds (F_R, F_C) of the GEMM."""
    spatial_r, spatial_c = {OS: (m, n), WS: (k, n), IS: (k, m)}[dataflow]
    return -(-spatial_r // rows), -(-spatial_c // cols)


def sram_accesses(
    m: int, k: int, n: int, rows: int, cols: int, dataflow: int, *, m_tile: int = 0
) -> Traffic:
    """Buffer reads and writes (elements) of one M x K x N GEMM by a rows x cols array.

    Each fold reads its slices of the operands from the buffers into the array
    (the table above), so an operand that a fold streams is read once per fold of
    the other spatial dimension: ws reads the inputs once per column fold and
    writes the partial sums once per row fold (reading back all but the first);
    os reads the inputs once per column fold and the weights once per row fold;
    is reads the weights once per column fold and writes the partial sums once
    per row fold. ``m_tile`` (0: M whole) is the sample tile of `dram_traffic`'s
    tiled order, which runs the folds over each tile of samples in turn.

    >>> sram_accesses(256, 64, 64, 16, 16, WS)  # inputs x4, partial sums x4 written
    Traffic(input=65536, weight=4096, output_write=65536, output_read=49152)
    >>> sram_accesses(256, 64, 64, 16, 16, OS)
    Traffic(input=65536, weight=65536, output_write=16384, output_read=0)
    >>> sram_accesses(256, 64, 64, 16, 16, IS)
    Traffic(input=16384, weight=65536, output_write=65536, output_read=49152)
    """
    if 0 < m_tile < m:
        full, rest = divmod(m, m_tile)
        one = sram_accesses(m_tile, k, n, rows, cols, dataflow)
        last = sram_accesses(rest, k, n, rows, cols, dataflow) if rest else Traffic(0, 0, 0, 0)
        return Traffic(*(full * a + b for a, b in zip(one, last, strict=True)))
    f_r, f_c = _folds(m, k, n, rows, cols, dataflow)
    if dataflow == OS:
        return Traffic(m * k * f_c, k * n * f_r, m * n, 0)
    if dataflow == WS:
        return Traffic(m * k * f_c, k * n, m * n * f_r, m * n * (f_r - 1))
    return Traffic(m * k, k * n * f_c, m * n * f_r, m * n * (f_r - 1))


def _column_folds(spatial_c: int, cols: int) -> list[tuple[int, int]]:
    """(width, how many) of the column folds over `spatial_c`: full ones, then the rest."""
    full, rest = divmod(spatial_c, cols)
    return [(cols, full)] + ([(rest, 1)] if rest else [])


def _fold_order_weights(
    m: int, k: int, n: int, rows: int, cols: int, dataflow: int, weight_cap: int
) -> int:
    """DRAM weight reads of the fold order over M samples (`fold_order_traffic`)."""
    f_r, f_c = _folds(m, k, n, rows, cols, dataflow)
    if dataflow == OS:  # W[:, fc] is reused by the row folds of its column fold
        return sum(
            k * w * count * (1 if k * w <= weight_cap else f_r)
            for w, count in _column_folds(n, cols)
        )
    if dataflow == IS:  # all of W is streamed again by every column fold
        return k * n if k * n <= weight_cap else k * n * f_c
    return k * n  # ws: every weight tile is used by one fold


def fold_order_traffic(
    m: int, k: int, n: int, rows: int, cols: int, dataflow: int, capacity: tuple[int, int, int]
) -> Traffic:
    """DRAM traffic (elements) of the GEMM in the cycle model's fold order, with
    buffers of ``capacity`` = (input, weight, output) elements.

    Between its uses an operand must stay resident: ws and os reuse the whole
    input matrix in every column fold (M·K must fit, else it is read once per
    column fold); os reuses the weight slice W[:, fc] over the row folds
    (K·width must fit, else once per row fold); is reuses the whole weight matrix
    in every column fold (K·N, else once per column fold). In ws and is the
    partial sums of one column fold (M·width in ws, width·N in is) accumulate
    over its row folds: if they do not fit, every row fold writes them out and
    every later one reads them back. Everything else crosses DRAM once. (A
    column fold's width is the array's cols, or what is left for the last.)

    >>> fold_order_traffic(256, 64, 64, 16, 16, WS, (8192, 8192, 2048))
    Traffic(input=65536, weight=4096, output_write=65536, output_read=49152)
    >>> fold_order_traffic(256, 64, 64, 16, 16, WS, (16384, 4096, 4096))  # inputs fit
    Traffic(input=16384, weight=4096, output_write=16384, output_read=0)
    """
    in_cap, w_cap, out_cap = capacity
    f_r, f_c = _folds(m, k, n, rows, cols, dataflow)
    inputs = m * k
    if dataflow in (WS, OS) and m * k > in_cap:
        inputs *= f_c
    writes, reads = m * n, 0
    if dataflow != OS:  # the partial sums of one column fold: M x width, width x N
        other = m if dataflow == WS else n
        for w, count in _column_folds(n if dataflow == WS else m, cols):
            if w * other > out_cap:
                writes += w * other * count * (f_r - 1)
                reads += w * other * count * (f_r - 1)
    return Traffic(inputs, _fold_order_weights(m, k, n, rows, cols, dataflow, w_cap), writes, reads)


def sample_tile(
    m: int, k: int, n: int, rows: int, cols: int, dataflow: int, capacity: tuple[int, int, int]
) -> int:
    """Samples per tile of the tiled order: the most rows of I and O whose inputs
    (m_t·K) and outputs (m_t·N) fit their buffers together, at most M; in os and
    is (where M is spatial) rounded down to whole folds of the array side holding
    M when it is at least one; 0 when one sample does not fit.

    >>> sample_tile(98304, 64, 64, 32, 32, WS, (65536, 10240, 65536))  # 128 KB of 16 bit
    1024
    >>> sample_tile(1000, 64, 64, 32, 32, OS, (40000, 10240, 65536))  # 625 -> 19 folds
    608
    """
    in_cap, _, out_cap = capacity
    tile = min(m, in_cap // k, out_cap // n)
    side = {OS: rows, IS: cols}.get(dataflow, 1)
    if tile < m and tile >= side:
        tile -= tile % side
    return tile


def tiled_traffic(
    m: int, k: int, n: int, rows: int, cols: int, dataflow: int, capacity: tuple[int, int, int]
) -> Traffic | None:
    """DRAM traffic (elements) when the samples are tiled (`sample_tile`), the tile
    loop outermost: each tile's inputs are read once and its outputs accumulate in
    the output buffer, so I and O cross DRAM once; the weights stay resident over
    the tiles if all K·N fit, else each tile reads them as the fold order does
    over its samples. None when one sample's inputs or outputs do not fit.

    >>> tiled_traffic(256, 64, 64, 16, 16, WS, (8192, 2048, 8192))  # 2 tiles of 128
    Traffic(input=16384, weight=8192, output_write=16384, output_read=0)
    """
    tile = sample_tile(m, k, n, rows, cols, dataflow, capacity)
    if tile == 0:
        return None
    w_cap = capacity[1]
    if k * n <= w_cap:
        weights = k * n
    else:
        full, rest = divmod(m, tile)
        weights = full * _fold_order_weights(tile, k, n, rows, cols, dataflow, w_cap)
        if rest:
            weights += _fold_order_weights(rest, k, n, rows, cols, dataflow, w_cap)
    return Traffic(m * k, weights, m * n, 0)


def dram_traffic(
    m: int, k: int, n: int, rows: int, cols: int, dataflow: int, capacity: tuple[int, int, int]
) -> tuple[Traffic, int]:
    """DRAM traffic (elements) of the GEMM under the cheaper of the fold order and
    the tiled order (the fold order on a tie), and the sample tile of the order
    taken (0: the fold order, M whole).

    >>> dram_traffic(256, 64, 64, 16, 16, WS, (8192, 8192, 8192))  # tiles of 128
    (Traffic(input=16384, weight=4096, output_write=16384, output_read=0), 128)
    """
    folded = fold_order_traffic(m, k, n, rows, cols, dataflow, capacity)
    tiled = tiled_traffic(m, k, n, rows, cols, dataflow, capacity)
    if tiled is None or tiled.total >= folded.total:
        return folded, 0
    return tiled, sample_tile(m, k, n, rows, cols, dataflow, capacity)


def op_traffic(
    gemms: list[tuple[int, int, int]] | np.ndarray,
    rows: int,
    cols: int,
    dataflow: int,
    element_bytes: float,
    buffers_kb: tuple[float, float, float] | None,
) -> tuple[float, float, list[int]]:
    """Bytes of one op's GEMMs on a rows x cols array: (DRAM bytes beyond one pass of
    every operand, SRAM bytes, each GEMM's sample tile: 0 for M whole).

    ``buffers_kb`` holds the (input, weight, output) buffers in KB (None: unlimited);
    each GEMM takes `dram_traffic`'s order, whose DRAM elements beyond M·K + K·N +
    M·N are re-reads and spills. The SRAM bytes are the array's buffer accesses in
    that order (`sram_accesses`) plus those re-reads and spills, each of which
    fills or drains a buffer once. The k instances of a module share its buffers
    and work on one tile in lockstep, the weights broadcast to them all
    (assumption), so neither figure depends on k.

    >>> op_traffic([(256, 64, 64)], 16, 16, WS, 2.0, None)  # 4 input passes
    (0.0, 368640.0, [0])
    >>> op_traffic([(256, 64, 64)], 16, 16, WS, 1.0, (16.0, 1.0, 1.0))  # 16 tiles
    (61440.0, 307200.0, [16])
    """
    unlimited = 2**62
    cap = (unlimited, unlimited, unlimited)
    if buffers_kb is not None:
        words = [int(kb * 1024 // element_bytes) for kb in buffers_kb]
        cap = (words[0], words[1], words[2])
    extra = accesses = 0
    tiles = []
    for m, k, n in gemms:
        m, k, n = int(m), int(k), int(n)
        traffic, tile = dram_traffic(m, k, n, rows, cols, dataflow, cap)
        extra += traffic.total - (m * k + k * n + m * n)
        accesses += sram_accesses(m, k, n, rows, cols, dataflow, m_tile=tile).total
        tiles.append(tile if tile < m else 0)
    return extra * element_bytes, (accesses + extra) * element_bytes, tiles

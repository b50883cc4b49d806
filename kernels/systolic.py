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

import numpy as np
from numba import njit

from nerframe.accelerator_model import DATAFLOWS

__all__ = ["DATAFLOWS", "IS", "NONE", "OS", "WS", "gemm_cycles", "mlp_gemms", "op_cycles"]

NONE, OS, WS, IS = 0, 1, 2, 3
"""Dataflow codes: the index in `DATAFLOWS` plus 1; NONE marks a module that is
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


@njit(cache=True)
def op_cycles(
    gemms: np.ndarray, lo: int, hi: int, rows: int, cols: int, dataflow: int, k: int
) -> int:
    """Cycles of the GEMMs ``gemms[lo:hi]`` (rows M, K, N) run one after another,
    each split over `k` arrays by its M rows.

    >>> op_cycles(np.array([[10, 8, 8], [10, 8, 8]]), 0, 2, 8, 8, OS, 2)  # M 5 each
    44
    """
    total = 0
    for g in range(lo, hi):
        m = (gemms[g, 0] + k - 1) // k
        total += gemm_cycles(m, gemms[g, 1], gemms[g, 2], rows, cols, dataflow)
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
